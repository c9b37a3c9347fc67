//! Communicator-centric profile capture (mpisee, `001_*`; `TIMELESS_PROFILE=<db>`).
//!
//! Every traced call is timed (wall seconds, `CLOCK_MONOTONIC`, from the wrapper's entry to the
//! library's return) and attributed, under its MPI name (`MPI_Isend`), to a communicator, a size
//! bucket and this rank, in a [`RankPart`]. What the call moved comes from the records it
//! writes: each TI record is parsed back and read by `timeless_profile::action` (the same rule
//! the replay's simulated profiles use), so bytes are counted once, the way the trace states
//! them, except that a receive counts the bytes that arrived (`MPI_Get_count` of its status),
//! where the trace states the posted count (an `MPI_Irecv` row keeps the bucket of the posted
//! size); the communicator is the first record's `comm=` (wait/test records carry their
//! request's), for `waitall` the communicator of the first of its requests the tracer tracks
//! (mpisee's rule), else the world. A call that writes no record (a probe, a persistent
//! request's set-up, a nonblocking collective's completion) still counts, on the world, with 0
//! bytes.
//!
//! Communicators are logged as [`Event`]s: a creation call (the creation hooks say which kind
//! and on which parent), or a communicator first seen in use. No name is computed while the
//! program runs: at `MPI_Finalize` every rank sends its part to rank 0 (`PMPI_Gather` of the
//! sizes, `PMPI_Gatherv` of the text of [`RankPart::encode`]), which names the communicators
//! ([`timeless_profile::naming`]) and writes the database atomically. With
//! `TIMELESS_PROFILE_ONLY=1` no trace file is written at all.
//!
//! Example: `MPI_Waitall` of an `irecv` and an `isend` on a Cartesian communicator (local id 1)
//! taking 40 µs adds 1 call and 40e-6 s to the cell (1, `MPI_Waitall`, bucket 0); the
//! `MPI_Irecv` before it added its bytes received to (1, `MPI_Irecv`, bucket of the size).

use std::collections::HashMap;
use std::ffi::c_int;
use std::fmt::{self, Write as _};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::OnceLock;

use timeless_profile::accumulate::RankPart;
use timeless_profile::naming::{Child, Event, Kind};
use timeless_trace::{Action, Datatype};

/// Whether calls are profiled (set once at `MPI_Init`).
static ACTIVE: AtomicBool = AtomicBool::new(false);
/// Whether the profile is all that is recorded (no trace: no compute bursts, no file).
static ONLY: AtomicBool = AtomicBool::new(false);
static CONFIG: OnceLock<Config> = OnceLock::new();

/// Where the profile goes and what the run was.
#[derive(Debug, Clone)]
pub struct Config {
    /// The database rank 0 writes.
    pub db: std::path::PathBuf,
    /// No trace files, the profile only.
    pub only: bool,
}

/// Reads `TIMELESS_PROFILE` and `TIMELESS_PROFILE_ONLY`; returns the configuration when
/// profiling is on.
pub fn configure_from_env() -> Option<&'static Config> {
    let db = std::env::var_os("TIMELESS_PROFILE").filter(|v| !v.is_empty())?;
    let only = std::env::var("TIMELESS_PROFILE_ONLY").is_ok_and(|v| !v.is_empty() && v != "0");
    let cfg = CONFIG.get_or_init(|| Config {
        db: db.into(),
        only,
    });
    ONLY.store(cfg.only, Ordering::Release);
    ACTIVE.store(true, Ordering::Release);
    Some(cfg)
}

/// Whether the profile is all that is recorded (`TIMELESS_PROFILE_ONLY`): the wrappers then
/// skip the compute-burst clock and the trace writer.
#[inline]
pub fn only() -> bool {
    ONLY.load(Ordering::Relaxed)
}

/// Whether calls are profiled.
#[inline]
pub fn active() -> bool {
    ACTIVE.load(Ordering::Relaxed)
}

/// The configuration, when profiling.
pub fn config() -> Option<&'static Config> {
    CONFIG.get()
}

/// What the call being traced moved so far.
#[derive(Debug, Default, Clone, Copy)]
struct CallAcc {
    comm: Option<u32>,
    sent: u64,
    recv: u64,
}

/// One rank's profile while the program runs.
pub struct Capture {
    rank: u32,
    ranks: u32,
    part: RankPart,
    call: CallAcc,
    /// A call is being profiled (`begin_call` ran: not a bookkeeping call while paused).
    in_call: bool,
    /// The call's hook stated what it moved ([`Capture::direct`]): its records are not parsed.
    stated: bool,
    /// Members (world ranks, comm rank order) of each local communicator id this rank knows.
    members: HashMap<u32, Vec<u32>>,
    /// The creation call being traced: kind, parent's local id, and for an intercommunicator
    /// the local group (which the new communicator's description lacks).
    creation: Option<(Kind, u32, Option<Vec<u32>>)>,
    default_dt: Datatype,
    scratch: String,
}

impl Capture {
    /// Rank `rank` of `ranks`.
    pub fn new(rank: u32, ranks: u32) -> Capture {
        Capture {
            rank,
            ranks,
            part: RankPart::default(),
            call: CallAcc::default(),
            in_call: false,
            stated: false,
            members: HashMap::from([(0, (0..ranks).collect())]),
            creation: None,
            default_dt: Datatype::BYTE,
            scratch: String::new(),
        }
    }

    /// A traced call starts.
    pub fn begin_call(&mut self) {
        self.call = CallAcc::default();
        self.in_call = true;
        self.stated = false;
        self.creation = None;
    }

    /// The call's communicator is `comm` unless a record names one first (`waitall`).
    pub fn hint_comm(&mut self, comm: u32) {
        self.call.comm.get_or_insert(comm);
    }

    /// A wildcard receive's record is written later: its bytes count now.
    pub fn recv_bytes(&mut self, bytes: u64, comm: Option<u32>) {
        self.call.recv += bytes;
        self.call.comm.get_or_insert(comm.unwrap_or(0));
    }

    /// A nonblocking receive on local communicator `comm`, posted for `posted` bytes (counted
    /// then, in the bucket of that size), got `got`: its `MPI_Irecv` cell keeps the bytes that
    /// arrived.
    pub fn irecv_arrived(&mut self, comm: u32, posted: u64, got: u64) {
        if posted == got {
            return;
        }
        let key = timeless_profile::accumulate::Key {
            comm,
            op: std::borrow::Cow::Borrowed("MPI_Irecv"),
            bucket: timeless_profile::bucket::of(posted),
        };
        if let Some(s) = self.part.cells.get_mut(&key) {
            s.bytes_recv = s.bytes_recv.saturating_sub(posted).saturating_add(got);
        }
    }

    /// The hook of the call states what it moves, before writing its record (the common
    /// point-to-point calls: parsing their records back would cost more than the rest of the
    /// profile): `sent`/`recv` bytes on local communicator `comm`. Its records are then not
    /// parsed; they state the same (tests compare the two paths).
    pub fn direct(&mut self, comm: u32, sent: u64, recv: u64) {
        self.stated = true;
        self.call.comm.get_or_insert(comm);
        self.call.sent += sent;
        self.call.recv += recv;
    }

    /// A TI record of the call (`args` without the rank prefix).
    pub fn record(&mut self, args: fmt::Arguments<'_>) {
        if self.stated {
            return;
        }
        self.scratch.clear();
        let _ = write!(self.scratch, "{} {args}", self.rank);
        let members = &self.members;
        let sizes = |id: u32| members.get(&id).map(|m| m.len() as u32);
        let Ok(Some(rec)) = timeless_trace::parse::parse_line_in(&self.scratch, self.ranks, &sizes)
        else {
            return;
        };
        if let Action::Init { double_default } = rec.action {
            self.default_dt = if double_default {
                Datatype::DOUBLE
            } else {
                Datatype::BYTE
            };
            return;
        }
        let m = self.members.get(&rec.comm);
        let me = m
            .and_then(|m| m.iter().position(|&w| w == self.rank))
            .unwrap_or(0) as u32;
        let size = m.map_or(1, |m| m.len() as u32);
        let root = match rec.action {
            Action::Bcast { root, .. }
            | Action::Reduce { root, .. }
            | Action::Gather { root, .. }
            | Action::GatherV { root, .. }
            | Action::Scatter { root, .. }
            | Action::ScatterV { root, .. } => Some(root),
            _ => None,
        };
        let Some(d) = timeless_profile::action::describe(
            &rec.action,
            self.default_dt,
            me,
            size,
            root == Some(self.rank),
        ) else {
            return;
        };
        if rec.action.takes_comm() {
            self.call.comm.get_or_insert(rec.comm);
        }
        self.call.sent += d.bytes_sent;
        self.call.recv += d.bytes_recv;
    }

    /// The call `op` returned after `secs` wall seconds.
    pub fn end_call(&mut self, op: &'static str, secs: f64) {
        let c = std::mem::take(&mut self.call);
        if !std::mem::replace(&mut self.in_call, false) {
            return;
        }
        self.part
            .record(c.comm.unwrap_or(0), op, c.sent, c.recv, secs.max(0.0));
    }

    /// The creation call being traced is of `kind` on the parent with local id `parent`;
    /// `local_group` is an intercommunicator's local group (world ranks).
    pub fn creating(&mut self, kind: Kind, parent: u32, local_group: Option<Vec<u32>>) {
        self.creation = Some((kind, parent, local_group));
    }

    /// The creation call gave `MPI_COMM_NULL`.
    pub fn created_null(&mut self) {
        if let Some((kind, parent, _)) = self.creation.take() {
            self.part.log.events.push(Event::Created {
                kind,
                parent,
                child: None,
            });
        }
    }

    /// The communicator with local id `local` and members `peers` (the remote group of an
    /// intercommunicator) became known: created by the call being traced, or seen in use.
    pub fn defined(&mut self, local: u32, peers: &[u32]) {
        let (event, members) = match self.creation.take() {
            Some((kind, parent, local_group)) => {
                let mut members = local_group.unwrap_or_default();
                members.extend_from_slice(peers);
                (
                    Event::Created {
                        kind,
                        parent,
                        child: Some(Child {
                            local,
                            members: members.clone(),
                        }),
                    },
                    members,
                )
            }
            None => (
                Event::Seen(Child {
                    local,
                    members: peers.to_vec(),
                }),
                peers.to_vec(),
            ),
        };
        self.part.log.events.push(event);
        self.members.insert(local, members);
    }

    /// The part to send to rank 0.
    pub fn encode(&self) -> Vec<u8> {
        self.part.encode()
    }
}

static STASH: std::sync::Mutex<Option<Vec<u8>>> = std::sync::Mutex::new(None);

/// Keeps this rank's encoded part when its trace closes at `MPI_Finalize`.
pub fn stash(part: Vec<u8>) {
    *STASH.lock().unwrap_or_else(|p| p.into_inner()) = Some(part);
}

/// At `MPI_Finalize`, on every rank: sends the stashed part (none if this rank's tracer
/// failed) to rank 0, which writes the database.
pub fn at_finalize() {
    if config().is_none() {
        return;
    }
    let part = STASH.lock().unwrap_or_else(|p| p.into_inner()).take();
    gather_and_write(part, || {
        let ranks = crate::mpi::rank_size(crate::mpi::base_comm()).map_or(0, |(_, s)| s as u32);
        timeless_profile::RunMeta {
            source: timeless_profile::Source::Measured,
            program: command_line(),
            ranks,
            mpi_library: library_version(),
            date: timeless_profile::model::now_utc(),
            notes: String::new(),
        }
    });
}

/// This process's command line, arguments separated by spaces.
fn command_line() -> String {
    std::fs::read("/proc/self/cmdline")
        .map(|b| {
            b.split(|&c| c == 0)
                .filter(|a| !a.is_empty())
                .map(|a| String::from_utf8_lossy(a).into_owned())
                .collect::<Vec<_>>()
                .join(" ")
        })
        .unwrap_or_default()
}

/// `MPI_Get_library_version`'s first line.
fn library_version() -> String {
    let mut buf = vec![0 as std::ffi::c_char; mpi_sys::MPI_MAX_LIBRARY_VERSION_STRING as usize + 1];
    let mut len: c_int = 0;
    // SAFETY: a buffer of MPI_MAX_LIBRARY_VERSION_STRING + 1 chars.
    let rc = unsafe { mpi_sys::PMPI_Get_library_version(buf.as_mut_ptr(), &mut len) };
    if rc != crate::mpi::SUCCESS {
        return "unknown".into();
    }
    let bytes: Vec<u8> = buf[..len.max(0) as usize]
        .iter()
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes)
        .lines()
        .next()
        .unwrap_or("")
        .trim()
        .to_string()
}

/// At `MPI_Finalize` (every rank, traced or not): gathers the parts on rank 0 over
/// `MPI_COMM_WORLD` ([`crate::parts::gather`]), which names the communicators and writes the
/// database. `part` is `None` on a rank whose tracer failed: rank 0 then writes nothing and
/// says why.
pub fn gather_and_write(part: Option<Vec<u8>>, meta: impl FnOnce() -> timeless_profile::RunMeta) {
    let Some(cfg) = config() else { return };
    let Some(all) = crate::parts::gather(part) else {
        return;
    };
    let fail = |why: String| {
        eprintln!(
            "timeless-preload: no profile written to {}: {why}",
            cfg.db.display()
        )
    };
    let all = match all {
        Ok(all) => all,
        Err(why) => return fail(why),
    };
    let size = all.len() as u32;
    let mut parts = Vec::with_capacity(all.len());
    for (r, bytes) in all.iter().enumerate() {
        match RankPart::decode(bytes, size) {
            Ok(p) => parts.push(p),
            Err(e) => return fail(format!("rank {r}'s part: {e}")),
        }
    }
    let profile = match timeless_profile::accumulate::assemble(meta(), &parts) {
        Ok(p) => p,
        Err(e) => return fail(e.to_string()),
    };
    if let Err(e) = timeless_profile::store::write(&cfg.db, &profile) {
        fail(e.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A hook's stated bytes and its record read back give the same cell: 100 bytes sent by
    /// `isend` (`6` is SimGrid's MPI_BYTE), 80 received by `irecv` of 10 `MPI_DOUBLE`s (`0`), on
    /// communicator 2 of members {1, 0}.
    #[test]
    fn stated_and_parsed_bytes_agree() {
        let run = |state: bool| {
            let mut c = Capture::new(0, 4);
            c.defined(2, &[1, 0]);
            for (rec, sent, recv, op) in [
                ("isend 1 0 100 6 comm=2", 100, 0, "MPI_Isend"),
                ("irecv 1 0 10 0 comm=2", 0, 80, "MPI_Irecv"),
            ] {
                c.begin_call();
                if state {
                    c.direct(2, sent, recv);
                }
                c.record(format_args!("{rec}"));
                c.end_call(op, 1e-6);
            }
            let mut cells: Vec<_> = c.part.cells.into_iter().collect();
            cells.sort_by(|a, b| a.0.cmp(&b.0));
            cells
        };
        let parsed = run(false);
        assert_eq!(parsed, run(true));
        assert_eq!(parsed.len(), 2);
        // (comm 2, MPI_Irecv, bucket 7 = [64, 128)): 80 bytes received.
        assert_eq!(
            (parsed[0].0.comm, &*parsed[0].0.op, parsed[0].0.bucket),
            (2, "MPI_Irecv", 7)
        );
        assert_eq!(parsed[0].1.bytes_recv, 80);
        assert_eq!(
            (&*parsed[1].0.op, parsed[1].1.bytes_sent),
            ("MPI_Isend", 100)
        );
    }
}
