//! Approximated receive time of one message (`004_*` §3.2, eqs. 2-11).
//!
//! Inputs are the measured times of the send (`send_m`, `exit.send_m`) and of the receive
//! (`enter.recv_m`, `recv_m`), and the already approximated `send_a` and `enter.recv_a`. Two
//! measured cases:
//!
//! * m.1, `enter.recv_m <= exit.send_m`: the calls overlapped, the communication time
//!   `Comm_m = recv_m - send_m` (eq. 2) was measured. Then a.1, `send_a + Comm_m > enter.recv_a`:
//!   the receiver waits, `recv_a = send_a + Comm_m` (eq. 3); or a.2: the message is already
//!   there, `recv_a = enter.recv_a + C(size) × size` (eq. 4).
//! * m.2, `enter.recv_m > exit.send_m`: the communication time was not measured. With
//!   `Comm_min = (enter.recv_a - send_a) + C × size` (eq. 8), the lower bound uses
//!   `max(2 C × size, Comm_min)` (eqs. 6, 9) and the upper bound `max(recv_m - send_m, Comm_min)`
//!   (eqs. 5, 10), so that `send_a + Comm^lower <= recv_a <= send_a + Comm^upper` (eq. 11).
//!
//! Two guards the paper leaves implicit: an approximated time is never later than the measured
//! one (removing overhead cannot slow the run down; this can only bind when `C` exceeds what
//! was measured), and never earlier than `send_a` or `enter.recv_a` (happened-before; this
//! can only bind when the measured trace itself has `recv_m < send_m`, i.e. skewed clocks).

/// Which approximation (`004_*` §3.2, m.2; §5 computes one trace with each).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bound {
    /// Lower-bound approximation: network transfer time taken as zero (eq. 9).
    Lower = 0,
    /// Upper-bound approximation: the measured transfer time kept (eq. 10).
    Upper = 1,
}

impl Bound {
    /// Both bounds, in index order.
    pub const ALL: [Bound; 2] = [Bound::Lower, Bound::Upper];
}

/// Which case of `004_*` §3.2 a message fell into.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Case {
    /// m.1 and a.1: the receiver waits for the message (eq. 3).
    M1A1,
    /// m.1 and a.2: the message is already there (eq. 4).
    M1A2,
    /// m.2: bounds from eqs. 9 and 10.
    M2,
}

/// Measured times of one message, seconds.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MeasuredMessage {
    /// `send_m` (= `enter.send_m`).
    pub send_secs: f64,
    /// `exit.send_m`.
    pub exit_send_secs: f64,
    /// `enter.recv_m`.
    pub enter_recv_secs: f64,
    /// `recv_m` (= `exit.recv_m`).
    pub recv_secs: f64,
}

impl MeasuredMessage {
    /// The measured case: m.1 if the receive was entered before the send was left.
    pub fn overlapped(&self) -> bool {
        self.enter_recv_secs <= self.exit_send_secs
    }
}

/// `recv_a` of a point-to-point message under `bound`, and the case used.
///
/// `copy_secs` is `C(size(msg)) × size(msg)`. Shapes: all times in seconds.
pub fn approx_recv(
    m: &MeasuredMessage,
    send_a: f64,
    enter_recv_a: f64,
    copy_secs: f64,
    bound: Bound,
) -> (f64, Case) {
    let (raw, case) = if m.overlapped() {
        let comm_m = m.recv_secs - m.send_secs; // eq. 2
        if send_a + comm_m > enter_recv_a {
            (send_a + comm_m, Case::M1A1) // eq. 3
        } else {
            (enter_recv_a + copy_secs, Case::M1A2) // eq. 4
        }
    } else {
        let comm_min = (enter_recv_a - send_a) + copy_secs; // eq. 8
        let comm = match bound {
            Bound::Lower => (2.0 * copy_secs).max(comm_min), // eq. 9
            Bound::Upper => (m.recv_secs - m.send_secs).max(comm_min), // eq. 10
        };
        (send_a + comm, Case::M2)
    };
    (guard(raw, m.recv_secs, send_a, enter_recv_a), case)
}

/// `recv_a` of one root/member pair of a rooted collective (`004_*` §3.3, 1-to-n): "the actual
/// communication time cannot be measured ... we essentially give an upper-bound
/// approximation", eq. 10 with its minimum (eq. 8), whatever the bound.
pub fn approx_collective_recv(
    m: &MeasuredMessage,
    send_a: f64,
    enter_recv_a: f64,
    copy_secs: f64,
) -> f64 {
    let comm_min = (enter_recv_a - send_a) + copy_secs; // eq. 8
    let comm = (m.recv_secs - m.send_secs).max(comm_min); // eq. 10
    guard(send_a + comm, m.recv_secs, send_a, enter_recv_a)
}

fn guard(raw: f64, recv_m: f64, send_a: f64, enter_recv_a: f64) -> f64 {
    raw.min(recv_m).max(send_a).max(enter_recv_a)
}
