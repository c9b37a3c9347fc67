//! Trace files: TI text (through the whole simulate pipeline and the compressor), compressed
//! `.tlg`, timed traces and their metadata, call-site tables.

use std::path::Path;
use std::sync::Arc;

use timeless_replay::{NoObserver, Observer};
use timeless_run::{simulate, Frontend, FrontendError, SimulateConfig};

use super::{msg, scratch, P1};
use crate::Outcome;

/// Keywords of the TI format.
pub(crate) const WORDS: &[&str] = &[
    "0 ",
    "1 ",
    "init",
    "finalize",
    "send",
    "recv",
    "isend",
    "irecv",
    "Isend",
    "Irecv",
    "wait",
    "waitall",
    "test",
    "compute",
    "sleep",
    "bcast",
    "reduce",
    "allreduce",
    "alltoall",
    "alltoallv",
    "gather",
    "gatherv",
    "allgather",
    "allgatherv",
    "scatter",
    "scatterv",
    "reducescatter",
    "scan",
    "exscan",
    "barrier",
    "comm_size",
    "comm_split",
    "comm_dup",
    "comm_def",
    " comm=",
    " @cs=",
    "ssend",
    "issend",
    "probe",
    "iprobe",
    "sendrecv",
    "\n",
];

/// Keywords of the timed format.
pub(crate) const TIMED_WORDS: &[&str] = &[
    "0 ",
    "1 ",
    "init",
    "finalize",
    "send",
    "recv",
    "compute",
    "wait",
    "bcast",
    "barrier",
    "{\"ranks\":",
    "\"overhead\"",
    "\"per_event_secs\"",
    "\"timer_resolution_secs\"",
    "null",
];

struct Quiet(NoObserver);

impl Frontend for Quiet {
    fn notice(&mut self, _: &str) {}
    fn observer(&mut self) -> Result<&mut dyn Observer, FrontendError> {
        Ok(&mut self.0)
    }
}

/// A TI text trace: written as `trace.txt` (a shared file, or a list naming rank files next to
/// it), replayed with 2 ranks on P1, then compressed.
pub(crate) fn text(data: &[u8]) -> Outcome {
    // A list naming a device or /proc file would read forever: not the parser's business.
    if data
        .windows(4)
        .any(|w| w == b"/dev" || w == b"/pro" || w == b"/sys")
    {
        return Ok(());
    }
    let dir = scratch();
    let trace = dir.join("trace.txt");
    std::fs::write(dir.join("platform.xml"), P1).map_err(msg)?;
    std::fs::write(dir.join("hostfile"), "h0\nh1\n").map_err(msg)?;
    std::fs::write(&trace, data).map_err(msg)?;
    let mut config = SimulateConfig::new(dir.join("platform.xml"));
    config.trace = Some(trace.clone());
    config.hostfile = Some(dir.join("hostfile"));
    config.np = Some(2);
    config.decode_ahead = false;
    config.compensation = false;
    let replayed = simulate(&config, &mut Quiet(NoObserver))
        .map(|_| ())
        .map_err(msg);
    let compressed = timeless_grammar::offline::compress_file(
        &trace,
        Some(2),
        timeless_grammar::DEFAULT_PRECISION,
    );
    if let Ok((t, _)) = compressed {
        let (bytes, _) = timeless_grammar::format::write(&t);
        timeless_grammar::format::read(&bytes)
            .map_err(|e| format!("a compressed trace does not read back: {e}"))
            .expect("a written .tlg reads back");
    }
    replayed
}

/// A compressed trace: decoded; an accepted one is written back, read back equal, and every
/// rank (16 at most) streamed for at most 100,000 actions.
pub(crate) fn tlg(data: &[u8]) -> Outcome {
    let (trace, _) = timeless_grammar::format::read(data).map_err(msg)?;
    let (again, _) = timeless_grammar::format::write(&trace);
    let (back, _) = timeless_grammar::format::read(&again).expect("a written file reads back");
    assert_eq!(
        back.grammars, trace.grammars,
        "a written file reads back the same"
    );
    let trace = Arc::new(trace);
    for r in 0..trace.nranks.min(16) {
        let mut s = trace.rank_stream(r).map_err(msg)?;
        for _ in 0..100_000 {
            match s.next_action() {
                Ok(Some(_)) => {}
                Ok(None) => break,
                Err(e) => return Err(msg(e)),
            }
        }
    }
    Ok(())
}

/// Timed trace lines (4 ranks) and, the same bytes, as `trace-meta.json`.
pub(crate) fn timed(data: &[u8]) -> Outcome {
    let text = String::from_utf8_lossy(data);
    let meta = timeless_compensate::meta::TraceMeta::parse(Path::new("trace-meta.json"), &text)
        .map(|_| ())
        .map_err(msg);
    for line in text.lines() {
        timeless_compensate::format::parse_line(line, 4).map_err(msg)?;
    }
    meta
}

/// A call-site table.
pub(crate) fn callsites(data: &[u8]) -> Outcome {
    let text = String::from_utf8_lossy(data);
    timeless_trace::callsites::parse_table(&text, Path::new("callsites.txt"))
        .map(|_| ())
        .map_err(msg)
}
