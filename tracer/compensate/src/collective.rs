//! Approximated exits of collective operations (`004_*` §3.3).
//!
//! * n-to-n: with `j` the member with the latest measured enter and `k` the one with the latest
//!   approximated enter, eq. 13 gives each member `exit_a^i = enter_a^k + (exit_m^i - enter_m^j)`
//!   and eq. 12 one common `exit_a = enter_a^k + (exit_m^l - enter_m^j)`, `l` being the member
//!   with the earliest measured exit. The measured synchronisation time is clamped at zero (it
//!   can only be negative with skewed clocks), so every exit follows the last approximated enter.
//! * 1-to-n: each (root, receiver) pair is a point-to-point message with `send := enter.send`
//!   (the root's operation start: its enter plus its enter overhead) and `recv := exit.recv` (the receiver's exit), approximated with the
//!   upper bound (eq. 10 and its minimum, eq. 8), as §3.3 says. The root does not wait: its exit
//!   is an independent event.
//! * n-to-1 (our extension, the mirror of 1-to-n): each (member, root) pair is a message from the
//!   member's enter to the root's exit; the root leaves when the last of them has arrived.
//!   Non-root members do not wait.

use crate::cost::NToNRule;
use crate::engine::Pair;
use crate::model::Rank;
use crate::p2p::{approx_collective_recv, MeasuredMessage};

/// One member's part in a collective instance.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Member {
    /// World rank.
    pub rank: Rank,
    /// Measured enter and exit, seconds.
    pub enter_m: f64,
    pub exit_m: f64,
    /// Measured start of the operation: `enter_m` plus the member's enter overhead `O`
    /// (see the engine's "Where an event's overhead lies"), seconds.
    pub start_m: f64,
    /// Approximated enter per bound, seconds.
    pub enter_a: Pair,
    /// Per-peer payload with the root, bytes.
    pub bytes: u64,
}

/// Exits of an n-to-n collective.
#[derive(Debug, Clone, PartialEq)]
pub struct NToNExits {
    /// `enter_a^k` per bound: the latest approximated enter.
    pub latest_enter_a: Pair,
    /// Each member's approximated exit, in the order given.
    pub exits: Vec<Pair>,
}

/// Eq. 12 or 13 over `members` (all of them, non-empty).
pub fn n_to_n(members: &[Member], rule: NToNRule) -> NToNExits {
    // enter_m^j, taken where the operation starts (after the member's enter overhead).
    let latest_enter_m = members.iter().map(|m| m.start_m).fold(f64::MIN, f64::max);
    let mut latest_enter_a = [f64::MIN; 2]; // enter_a^k
    for m in members {
        for (k, e) in latest_enter_a.iter_mut().zip(m.enter_a) {
            *k = k.max(e);
        }
    }
    let earliest_exit_m = members.iter().map(|m| m.exit_m).fold(f64::MAX, f64::min); // exit_m^l
    let exits = members
        .iter()
        .map(|m| {
            let sync = match rule {
                NToNRule::PerRank => m.exit_m - latest_enter_m, // eq. 13
                NToNRule::Common => earliest_exit_m - latest_enter_m, // eq. 12
            }
            .max(0.0);
            // Never later than measured (eq. 12 with an early l can not exceed it either).
            [
                (latest_enter_a[0] + sync).min(m.exit_m.max(latest_enter_a[0])),
                (latest_enter_a[1] + sync).min(m.exit_m.max(latest_enter_a[1])),
            ]
        })
        .collect();
    NToNExits {
        latest_enter_a,
        exits,
    }
}

/// Exit of a 1-to-n receiver `m` given the root's part; `copy_secs` is `C(size) × size` of the
/// receiver's payload.
pub fn one_to_n_receiver(root: &Member, m: &Member, copy_secs: f64) -> Pair {
    let msg = MeasuredMessage {
        send_secs: root.start_m,
        exit_send_secs: root.exit_m,
        enter_recv_secs: m.enter_m,
        recv_secs: m.exit_m,
    };
    [
        approx_collective_recv(&msg, root.enter_a[0], m.enter_a[0], copy_secs),
        approx_collective_recv(&msg, root.enter_a[1], m.enter_a[1], copy_secs),
    ]
}

/// Exit of an n-to-1 root: the latest arrival over the other members' messages. `copy_secs`
/// maps a payload in bytes to `C(size) × size`. A root alone in its communicator keeps eq. 1's
/// exit, which the caller computes; here it gets its enter.
pub fn n_to_one_root(root: &Member, members: &[Member], copy_secs: impl Fn(u64) -> f64) -> Pair {
    let mut exit = root.enter_a;
    for m in members.iter().filter(|m| m.rank != root.rank) {
        let msg = MeasuredMessage {
            send_secs: m.start_m,
            exit_send_secs: m.exit_m,
            enter_recv_secs: root.enter_m,
            recv_secs: root.exit_m,
        };
        let c = copy_secs(m.bytes);
        for (i, e) in exit.iter_mut().enumerate() {
            *e = e.max(approx_collective_recv(
                &msg,
                m.enter_a[i],
                root.enter_a[i],
                c,
            ));
        }
    }
    exit
}
