//! The cross-rank merge at `MPI_Finalize` (Pilgrim `000_*` §2.5), over MPI.
//!
//! Run once per process ([`at_finalize_once`]) by the tracer's `MPI_Finalize` wrapper
//! (`crate::finalize`, which every rank reaches, traced or not), after the rank's `finalize`
//! record and *before* the `--gather` (so rank 0's `trace.tlg` is among the files gathered onto
//! the output directory); or, if the wrapper did not run (a program calling `PMPI_Finalize`
//! itself), by a delete callback of an attribute set on `MPI_COMM_SELF` at start-up: MPI
//! deletes `MPI_COMM_SELF`'s attributes first thing in `MPI_Finalize`, with the library still
//! fully usable (MPI-3.1 §8.7.1), on every rank that finalizes, whether its tracing is still on
//! or not. All communication happens on a private duplicate of `MPI_COMM_WORLD` with
//! `MPI_ERRORS_RETURN`, so the program's messages can never match ours.
//!
//! 1. **Agreement**: one `MPI_Allreduce(MIN)` of the lowest rank that cannot contribute (a
//!    record it could not decode, tracing stopped early). If there is one, that rank prints
//!    why and every rank skips the merge.
//! 2. **Rounds** ([`schedule`]): in round k (stride s = 2^k), rank r with r mod 2s = 0
//!    receives the group of rank r + s (if it exists) and merges it into its own
//!    (`timeless_grammar::merge_pair`); rank r with r mod 2s = s sends its group to r − s and
//!    is done. ⌈log2 P⌉ rounds; the same pairs in the same order as
//!    `timeless_grammar::merge_rounds`, so the file is the one `timeless compress` makes
//!    from the text trace, but for the zstd level of the volume blocks. A group travels as its length (one
//!    `u64`, tag 1; `u64::MAX` = "a rank below failed") then its
//!    `MergedRanks::to_bytes` (tag 2).
//! 3. **File**: rank 0 runs the final Sequitur pass (`CompressedTrace::from_merged`), embeds
//!    the `trace-meta.json` it wrote at start-up, and writes [`super::COMPRESSED_FILE`]
//!    (through a temporary name, renamed when complete).

use std::ffi::{c_int, c_void};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::Instant;

use timeless_grammar::{format, merge_pair, CompressedTrace, MergedRanks};

use super::{disabled_message, take_closed, Config, COMPRESSED_FILE, CONFIG};
use crate::meta::META_FILE;
use crate::mpi::{self, MPI_Comm};

/// One step of a rank's part in the merge.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Step {
    /// Receive the group of this rank and merge it into ours.
    Receive(u32),
    /// Send our group to this rank; our part ends.
    Send(u32),
}

/// Rank `rank`'s steps in the merge of `size` ranks, round by round (see the module docs).
pub fn schedule(rank: u32, size: u32) -> Vec<Step> {
    let mut steps = Vec::new();
    let mut stride: u32 = 1;
    while stride < size {
        if rank % (2 * stride) == 0 {
            if let Some(peer) = rank.checked_add(stride).filter(|&p| p < size) {
                steps.push(Step::Receive(peer));
            }
        } else {
            steps.push(Step::Send(rank - stride));
            break;
        }
        stride = stride.saturating_mul(2);
    }
    steps
}

/// Length sent in place of a group when the merge failed below.
const FAILED: u64 = u64::MAX;
const TAG_LEN: c_int = 1;
const TAG_BYTES: c_int = 2;

/// Registers the merge as the delete callback of an attribute on `MPI_COMM_SELF`.
///
/// # Errors
/// `MPI_Comm_create_keyval` or `MPI_Comm_set_attr` failed.
pub fn register_at_finalize() -> Result<(), String> {
    let mut keyval: c_int = 0;
    // SAFETY: plain `extern "C"` callbacks; out-parameter is a local; the attribute value is
    // never dereferenced.
    unsafe {
        if mpi_sys::PMPI_Comm_create_keyval(
            Some(no_copy),
            Some(at_finalize),
            &mut keyval,
            std::ptr::null_mut(),
        ) != mpi::SUCCESS
        {
            return Err("MPI_Comm_create_keyval failed".into());
        }
        if mpi_sys::PMPI_Comm_set_attr(mpi_sys::RSMPI_COMM_SELF, keyval, std::ptr::null_mut())
            != mpi::SUCCESS
        {
            return Err("MPI_Comm_set_attr on MPI_COMM_SELF failed".into());
        }
    }
    Ok(())
}

/// Copy callback: a duplicate of `MPI_COMM_SELF` does not carry the attribute.
unsafe extern "C" fn no_copy(
    _: MPI_Comm,
    _: c_int,
    _: *mut c_void,
    _: *mut c_void,
    _: *mut c_void,
    flag: *mut c_int,
) -> c_int {
    if !flag.is_null() {
        *flag = 0;
    }
    mpi::SUCCESS
}

/// The merge has started in this process.
static STARTED: AtomicBool = AtomicBool::new(false);

/// Runs the merge (collective over `MPI_COMM_WORLD`) unless it already started in this
/// process; nothing when compression is off. Call on every rank, before `PMPI_Finalize`.
pub fn at_finalize_once() {
    if !STARTED.swap(true, Ordering::SeqCst) {
        run();
    }
}

/// Delete callback: the merge, if the `MPI_Finalize` wrapper did not run it. Never unwinds
/// into MPI; always reports success, so `MPI_Finalize` proceeds as it would without the
/// tracer.
unsafe extern "C" fn at_finalize(_: MPI_Comm, _: c_int, _: *mut c_void, _: *mut c_void) -> c_int {
    let rank = CONFIG.get().map_or(0, |c| c.rank);
    if let Err(p) = catch_unwind(AssertUnwindSafe(at_finalize_once)) {
        let msg = p
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| p.downcast_ref::<String>().cloned())
            .unwrap_or_else(|| "unknown panic".into());
        disabled_message(rank, &format!("internal panic in the merge: {msg}"));
    }
    mpi::SUCCESS
}

/// A private duplicate of `MPI_COMM_WORLD` returning errors, freed on drop.
struct PrivateComm(MPI_Comm);

impl PrivateComm {
    fn new() -> Result<PrivateComm, String> {
        // SAFETY: zeroed handle filled by MPI_Comm_dup; world is valid until MPI_Finalize ends.
        unsafe {
            let mut c = std::mem::zeroed::<MPI_Comm>();
            if mpi_sys::PMPI_Comm_dup(mpi::base_comm(), &mut c) != mpi::SUCCESS {
                return Err("MPI_Comm_dup of the world communicator failed".into());
            }
            mpi_sys::PMPI_Comm_set_errhandler(c, mpi_sys::RSMPI_ERRORS_RETURN);
            Ok(PrivateComm(c))
        }
    }

    fn min(&self, v: u32) -> Result<u32, String> {
        let (send, mut recv) = (v as i32, 0i32);
        // SAFETY: one int each way on a valid communicator.
        let rc = unsafe {
            mpi_sys::PMPI_Allreduce(
                &send as *const i32 as *const c_void,
                &mut recv as *mut i32 as *mut c_void,
                1,
                mpi_sys::RSMPI_INT32_T,
                mpi_sys::RSMPI_MIN,
                self.0,
            )
        };
        if rc != mpi::SUCCESS {
            return Err("MPI_Allreduce failed".into());
        }
        Ok(recv as u32)
    }

    fn send(&self, to: u32, group: Option<&[u8]>) -> Result<(), String> {
        let len: u64 = group.map_or(FAILED, |g| g.len() as u64);
        // SAFETY: buffers of the given lengths; valid communicator and peer.
        unsafe {
            if mpi_sys::PMPI_Send(
                &len as *const u64 as *const c_void,
                1,
                mpi_sys::RSMPI_UINT64_T,
                to as c_int,
                TAG_LEN,
                self.0,
            ) != mpi::SUCCESS
            {
                return Err(format!("MPI_Send of a group length to rank {to} failed"));
            }
            if let Some(g) = group {
                if mpi_sys::PMPI_Send(
                    g.as_ptr() as *const c_void,
                    g.len() as c_int,
                    mpi_sys::RSMPI_UINT8_T,
                    to as c_int,
                    TAG_BYTES,
                    self.0,
                ) != mpi::SUCCESS
                {
                    return Err(format!("MPI_Send of a group to rank {to} failed"));
                }
            }
        }
        Ok(())
    }

    /// The group sent by `from`; `Ok(None)` if the sender reports a failure below it.
    fn recv(&self, from: u32) -> Result<Option<Vec<u8>>, String> {
        let mut len: u64 = 0;
        // SAFETY: buffers of the given lengths; valid communicator and peer.
        unsafe {
            if mpi_sys::PMPI_Recv(
                &mut len as *mut u64 as *mut c_void,
                1,
                mpi_sys::RSMPI_UINT64_T,
                from as c_int,
                TAG_LEN,
                self.0,
                mpi_sys::RSMPI_STATUS_IGNORE,
            ) != mpi::SUCCESS
            {
                return Err(format!(
                    "MPI_Recv of a group length from rank {from} failed"
                ));
            }
            if len == FAILED {
                return Ok(None);
            }
            let mut buf = vec![0u8; len as usize];
            if mpi_sys::PMPI_Recv(
                buf.as_mut_ptr() as *mut c_void,
                len as c_int,
                mpi_sys::RSMPI_UINT8_T,
                from as c_int,
                TAG_BYTES,
                self.0,
                mpi_sys::RSMPI_STATUS_IGNORE,
            ) != mpi::SUCCESS
            {
                return Err(format!("MPI_Recv of a group from rank {from} failed"));
            }
            Ok(Some(buf))
        }
    }
}

impl Drop for PrivateComm {
    fn drop(&mut self) {
        // SAFETY: frees the duplicate this value owns.
        unsafe { mpi_sys::PMPI_Comm_free(&mut self.0) };
    }
}

/// This rank's group, or why it has none.
fn own_group(cfg: &Config) -> Result<MergedRanks, String> {
    let enc = take_closed().ok_or("its tracing did not run to MPI_Finalize")?;
    if crate::runtime::is_disabled() {
        return Err("its tracing was disabled".into());
    }
    if let (true, Some(secs)) = (cfg.verbose, enc.feed_secs()) {
        let n = enc.actions();
        eprintln!(
            "timeless-preload: rank {}: online encoder: {n} actions in {secs:.6} s ({:.0} ns per action)",
            cfg.rank,
            secs / n.max(1) as f64 * 1e9
        );
    }
    enc.finish().map(MergedRanks::from)
}

fn run() {
    let Some(cfg) = CONFIG.get() else {
        return;
    };
    let t0 = Instant::now();
    let group = own_group(cfg);
    let comm = match PrivateComm::new() {
        Ok(c) => c,
        Err(e) => {
            // Every rank's dup fails alike (it is collective): nothing else is waited for.
            disabled_message(cfg.rank, &e);
            return;
        }
    };
    match comm.min(if group.is_ok() { cfg.size } else { cfg.rank }) {
        Ok(first) if first < cfg.size => {
            if let (true, Err(why)) = (first == cfg.rank, &group) {
                disabled_message(
                    cfg.rank,
                    &format!("rank {} cannot be merged: {why}", cfg.rank),
                );
            }
            return;
        }
        Ok(_) => {}
        Err(e) => {
            disabled_message(cfg.rank, &e);
            return;
        }
    }
    let agreed = Instant::now();
    let mut rounds = 0u32;
    // `Err(None)`: failed below, already reported.
    let mut state: Result<MergedRanks, Option<String>> = group.map_err(Some);
    for step in schedule(cfg.rank, cfg.size) {
        rounds += 1;
        match step {
            Step::Receive(from) => {
                let got = comm.recv(from);
                state = match (state, got) {
                    (Ok(mine), Ok(Some(bytes))) => match MergedRanks::from_bytes(&bytes) {
                        Ok(theirs) => Ok(merge_pair(mine, theirs)),
                        Err(e) => Err(Some(format!("the group of rank {from} is corrupt: {e}"))),
                    },
                    (Ok(_), Ok(None)) => Err(None),
                    (Ok(_), Err(e)) => Err(Some(e)),
                    (Err(e), _) => Err(e),
                };
            }
            Step::Send(to) => {
                let bytes = state.as_ref().ok().map(MergedRanks::to_bytes);
                let bytes = bytes.filter(|b| b.len() <= c_int::MAX as usize);
                if let Err(e) = comm.send(to, bytes.as_deref()) {
                    state = Err(Some(e));
                } else if bytes.is_none() && state.is_ok() {
                    state = Err(Some("the merged group exceeds 2 GiB".into()));
                }
            }
        }
        if let Err(Some(e)) = &state {
            disabled_message(cfg.rank, e);
            state = Err(None);
        }
    }
    drop(comm);
    if cfg.rank != 0 {
        return;
    }
    if let Ok(merged) = state {
        if let Err(e) = write(cfg, merged, rounds, (t0, agreed)) {
            disabled_message(cfg.rank, &e);
        }
    }
}

/// Rank 0: final pass, embedded metadata, the file.
/// `times`: entry into the callback, end of the agreement.
fn write(
    cfg: &Config,
    merged: MergedRanks,
    rounds: u32,
    times: (Instant, Instant),
) -> Result<(), String> {
    let mut trace = CompressedTrace::from_merged(merged, cfg.size, cfg.precision)
        .map_err(|e| format!("final pass: {e}"))?;
    trace.tracer_meta = std::fs::read(cfg.dir.join(META_FILE)).ok();
    // Written by the call sites' gather, which runs before the merge.
    trace.callsites = std::fs::read(cfg.dir.join(timeless_trace::callsites::FILE)).ok();
    let (bytes, _) = format::write(&trace);
    let path = cfg.dir.join(COMPRESSED_FILE);
    let tmp = cfg.dir.join(format!("{COMPRESSED_FILE}.part"));
    std::fs::write(&tmp, &bytes)
        .and_then(|_| std::fs::rename(&tmp, &path))
        .map_err(|e| format!("cannot write {}: {e}", path.display()))?;
    if cfg.verbose {
        let s = trace.stats();
        eprintln!(
            "timeless-preload: {}: {} ranks, {} actions, {} terminals, {} unique grammars, \
             {} bytes; agreement {:.6} s (waits for the last rank to finalize), then \
             {rounds} merge rounds and the file in {:.6} s",
            path.display(),
            s.ranks,
            s.actions,
            s.terminals,
            s.unique_grammars,
            bytes.len(),
            (times.1 - times.0).as_secs_f64(),
            times.1.elapsed().as_secs_f64()
        );
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use timeless_grammar::{merge_rounds, Precision};

    use crate::online::OnlineEncoder;

    #[test]
    fn schedules_pair_ranks_as_merge_rounds_does() {
        assert_eq!(schedule(0, 1), []);
        assert_eq!(
            schedule(0, 8),
            [Step::Receive(1), Step::Receive(2), Step::Receive(4)]
        );
        assert_eq!(schedule(6, 8), [Step::Receive(7), Step::Send(4)]);
        assert_eq!(schedule(1, 3), [Step::Send(0)]);
        // Rank 2 of 3 has no partner in round 0 and sends in round 1.
        assert_eq!(schedule(2, 3), [Step::Send(0)]);
        assert_eq!(schedule(0, 3), [Step::Receive(1), Step::Receive(2)]);
        assert_eq!(schedule(4, 5), [Step::Send(0)]);
    }

    /// Runs the schedule of every rank in memory, in round order, through the wire encoding,
    /// and checks the result is the bytes of `merge_rounds` (what `timeless compress` does).
    #[test]
    fn the_scheduled_exchange_gives_the_offline_merge_s_file() {
        for size in 1..=13u32 {
            let rank_trace = |r: u32| {
                let mut e = OnlineEncoder::new(r, size, Precision::Lossless);
                e.feed(&format!("{r} init\n{r} compute {}\n", 100 + r % 3));
                for _ in 0..(r % 4) {
                    e.feed(&format!("{r} send {} 0 8 6\n", (r + 1) % size));
                }
                e.feed(&format!("{r} finalize\n"));
                MergedRanks::from(e.finish().unwrap())
            };
            let offline = merge_rounds((0..size).map(rank_trace).collect()).unwrap();
            let mut groups: Vec<Option<MergedRanks>> =
                (0..size).map(|r| Some(rank_trace(r))).collect();
            let plans: Vec<Vec<Step>> = (0..size).map(|r| schedule(r, size)).collect();
            let rounds = plans.iter().map(Vec::len).max().unwrap_or(0);
            assert_eq!(rounds as u32, offline.1, "size {size}");
            for k in 0..rounds {
                for r in 0..size {
                    if let Some(Step::Receive(from)) = plans[r as usize].get(k) {
                        assert_eq!(
                            plans[*from as usize].last(),
                            Some(&Step::Send(r)),
                            "size {size}: rank {from} sends to {r}"
                        );
                        let bytes = groups[*from as usize].take().unwrap().to_bytes();
                        let theirs = MergedRanks::from_bytes(&bytes).unwrap();
                        let mine = groups[r as usize].take().unwrap();
                        groups[r as usize] = Some(merge_pair(mine, theirs));
                    }
                }
            }
            let online = groups[0].take().unwrap();
            assert!(groups.iter().all(Option::is_none), "size {size}");
            let file = |m| {
                format::write(&CompressedTrace::from_merged(m, size, Precision::Lossless).unwrap())
                    .0
            };
            assert_eq!(file(online), file(offline.0), "size {size}");
        }
    }
}
