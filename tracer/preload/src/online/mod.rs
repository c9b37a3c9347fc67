//! Online compression (Pilgrim, `000_*` §2.3-2.5): each rank compresses its own records while
//! the program runs, and the ranks merge their compressed traces over MPI at `MPI_Finalize`;
//! rank 0 writes one compressed trace, [`COMPRESSED_FILE`], in the format of
//! `timeless compress` (`timeless_grammar::format`).
//!
//! # Per rank, at each record
//! The rank's [`crate::writer::Writer`] hands every line to an [`OnlineEncoder`] as soon as the
//! line's place in the trace is final: at once in the common case, and for the lines behind a
//! wildcard `irecv` (a *hole*, see `writer`) when the hole is filled. The encoder decodes the
//! line with `timeless-trace` (the tracer formats records as text; decoding the line back keeps
//! one source of truth for the record layout, and makes the compressed trace the text trace by
//! construction) and pushes the action into a `timeless_grammar::RankEncoder`: call signature
//! table + Sequitur with repetition exponents, amortised O(1) per record, memory growing with
//! the grammar (a loop costs O(1) symbols) plus the zstd-compressed compute volumes (blocks of
//! 4096 at the fast `ONLINE_ZSTD_LEVEL`: the file then differs from `timeless compress`'s only
//! in the bytes of its volume blocks, which decode to the same values).
//! Pilgrim draws request ids from a pool per signature so that loops give identical symbols
//! (§2.4); a TI record names no request id (a `wait` names its request by `src dst tag`,
//! stored relative to the rank), so no pool is needed here.
//!
//! # At `MPI_Finalize`
//! See [`merge`]: ⌈log2 P⌉ pairwise rounds on a private duplicate of `MPI_COMM_WORLD`, run by
//! the tracer's `MPI_Finalize` wrapper before the `--gather` (so `trace.tlg` is gathered too),
//! or failing that from an attribute delete callback on `MPI_COMM_SELF`, which MPI calls first
//! thing in `MPI_Finalize` (MPI-3.1 §8.7.1); either way on every rank, including a rank whose
//! tracing was disabled: that rank still takes part (and the compression is abandoned), so no
//! rank ever waits for one that will not come.
//!
//! # Failure policy
//! Compression never changes what the program does: a failure (a record the encoder cannot
//! decode, a rank whose tracing stopped, an MPI error in the exchange) abandons the compressed
//! file with one message on stderr; the text trace, when written, is not affected.
//!
//! # Environment
//! `TIMELESS_COMPRESS=1` turns compression on (`timeless trace --compress`);
//! `TIMELESS_COMPRESS_PRECISION` is the relative error bound of compute volumes (0 =
//! lossless; default `timeless_grammar::DEFAULT_PRECISION`); `TIMELESS_TEXT=0` (with
//! compression only) writes no per-rank text files; `TIMELESS_COMPRESS_VERBOSE=1` makes rank 0
//! print the merge's statistics and time.

pub mod merge;

use std::collections::HashMap;

use rustc_hash::FxHashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use timeless_grammar::volume::ONLINE_ZSTD_LEVEL;
use timeless_grammar::{Precision, RankEncoder, RankTrace, DEFAULT_PRECISION};
use timeless_trace::{parse_line_in, Action};

use crate::writer::Writer;

/// Name of the compressed trace rank 0 writes in the trace directory.
pub const COMPRESSED_FILE: &str = "trace.tlg";

/// Online compression settings, read once at start-up.
#[derive(Debug, Clone)]
pub struct Config {
    /// World rank of this process.
    pub rank: u32,
    /// Size of `MPI_COMM_WORLD`.
    pub size: u32,
    /// Trace directory.
    pub dir: PathBuf,
    /// How compute volumes are stored.
    pub precision: Precision,
    /// Whether the per-rank text files are written too.
    pub text: bool,
    /// Rank 0 prints the merge's statistics.
    pub verbose: bool,
}

static CONFIG: OnceLock<Config> = OnceLock::new();
/// The encoder of this rank once its trace is closed, waiting for the merge.
static CLOSED: Mutex<Option<OnlineEncoder>> = Mutex::new(None);

fn env_flag(name: &str) -> Option<bool> {
    std::env::var(name)
        .ok()
        .map(|v| !v.trim().is_empty() && v.trim() != "0")
}

/// Whether `TIMELESS_COMPRESS` asks for online compression.
pub fn enabled() -> bool {
    env_flag("TIMELESS_COMPRESS").unwrap_or(false)
}

/// Whether the per-rank text files are written: unless online compression started (see
/// [`start`]) with `TIMELESS_TEXT=0`.
pub fn text_enabled() -> bool {
    !matches!(CONFIG.get(), Some(c) if !c.text)
}

/// Starts online compression on this rank if `TIMELESS_COMPRESS` asks for it: registers the
/// merge at `MPI_Finalize` and returns the rank's encoder. Must run on every rank (the merge is
/// collective), before any step of the start-up that may fail. `None` when compression is
/// off, or (with one message on stderr) when the precision is invalid or the finalize callback
/// cannot be registered; the latter two fail alike on every rank.
pub fn start(rank: u32, size: u32, dir: &Path) -> Option<OnlineEncoder> {
    if !enabled() {
        return None;
    }
    let precision = match std::env::var("TIMELESS_COMPRESS_PRECISION") {
        Err(_) => DEFAULT_PRECISION,
        Ok(v) => match v.trim().parse().ok().and_then(Precision::from_f64) {
            Some(p) => p,
            None => {
                if rank == 0 {
                    disabled_message(
                        rank,
                        &format!(
                            "TIMELESS_COMPRESS_PRECISION={v}: expected 0 (lossless) or a relative \
                             error in [{}, {}]",
                            Precision::MIN_RELATIVE,
                            Precision::MAX_RELATIVE
                        ),
                    );
                }
                return None;
            }
        },
    };
    let config = Config {
        rank,
        size,
        dir: dir.to_path_buf(),
        precision,
        text: env_flag("TIMELESS_TEXT").unwrap_or(true),
        verbose: env_flag("TIMELESS_COMPRESS_VERBOSE").unwrap_or(false),
    };
    // A sessions program has no MPI_COMM_SELF to hang the fallback on: its end of the run
    // (`session`) always runs the merge itself.
    if !crate::mpi::has_session_base() {
        if let Err(e) = merge::register_at_finalize() {
            disabled_message(rank, &e);
            return None;
        }
    }
    let _ = CONFIG.set(config);
    let enc = OnlineEncoder::new(rank, size, precision);
    Some(match CONFIG.get() {
        Some(c) if c.verbose => enc.timed(),
        _ => enc,
    })
}

/// The rank's trace writer: a text file at `path` (unless `TIMELESS_TEXT=0` with compression)
/// feeding `online` if compression is on.
///
/// # Errors
/// The text file cannot be created.
pub fn writer(
    path: &Path,
    limit_bytes: usize,
    online: Option<OnlineEncoder>,
) -> std::io::Result<Writer> {
    let mut w = if online.is_some() && !text_enabled() {
        Writer::discard(limit_bytes)
    } else {
        Writer::create(path, limit_bytes)?
    };
    if let Some(o) = online {
        w.set_online(o);
    }
    Ok(w)
}

/// The writer closed the trace: the encoder waits for the merge at `MPI_Finalize`.
pub fn closed(encoder: OnlineEncoder) {
    let mut slot = CLOSED.lock().unwrap_or_else(|p| p.into_inner());
    *slot = Some(encoder);
}

fn take_closed() -> Option<OnlineEncoder> {
    CLOSED.lock().unwrap_or_else(|p| p.into_inner()).take()
}

fn disabled_message(rank: u32, reason: &str) {
    eprintln!(
        "timeless-preload: rank {rank}: online compression disabled ({reason}); no {COMPRESSED_FILE} \
         is written, the program and its text trace are not affected"
    );
}

/// One rank's online encoder: decodes the tracer's record lines and feeds the actions to a
/// [`RankEncoder`].
#[derive(Debug)]
pub struct OnlineEncoder {
    rank: u32,
    nranks: u32,
    encoder: RankEncoder,
    /// Size of each communicator this rank defined with `comm_def` (count vectors of
    /// collectives on it have that many entries).
    comm_sizes: HashMap<u32, u32>,
    /// The last action fed was `finalize`.
    finalized: bool,
    /// The first line that could not be used; nothing is fed after it.
    error: Option<String>,
    /// Wall seconds spent in [`OnlineEncoder::feed`], when timed.
    feed_secs: Option<f64>,
    /// Actions fed.
    actions: u64,
    /// Terminal of each record line met before whose action takes no volume (not `compute`,
    /// `sleep`, nor the one-off `init`, `finalize`, `comm_def`): a repeated line skips its
    /// decoding and signature. The text determines the action (a communicator id is defined
    /// once per rank), so one entry per terminal at most: the table is as small as the CST.
    known: FxHashMap<Box<str>, u32>,
}

impl OnlineEncoder {
    /// An encoder for world rank `rank` of `nranks`, storing volumes at `precision`.
    pub fn new(rank: u32, nranks: u32, precision: Precision) -> OnlineEncoder {
        OnlineEncoder {
            rank,
            nranks,
            encoder: RankEncoder::with_zstd_level(rank, precision, ONLINE_ZSTD_LEVEL),
            comm_sizes: HashMap::new(),
            finalized: false,
            error: None,
            feed_secs: None,
            actions: 0,
            known: FxHashMap::default(),
        }
    }

    /// Also accounts the wall time spent feeding (two clock reads per call), for
    /// `TIMELESS_COMPRESS_VERBOSE`.
    pub fn timed(mut self) -> OnlineEncoder {
        self.feed_secs = Some(0.0);
        self
    }

    /// Wall seconds spent feeding so far, if timed.
    pub fn feed_secs(&self) -> Option<f64> {
        self.feed_secs
    }

    /// Actions fed so far.
    pub fn actions(&self) -> u64 {
        self.actions
    }

    /// Feeds whole record lines (`\n`-terminated; comments and blank lines carry no action).
    /// O(length of `text`) plus amortised O(1) per action.
    pub fn feed(&mut self, text: &str) {
        if self.error.is_some() {
            return;
        }
        match self.feed_secs {
            None => self.feed_lines(text),
            Some(s) => {
                let t0 = std::time::Instant::now();
                self.feed_lines(text);
                self.feed_secs = Some(s + t0.elapsed().as_secs_f64());
            }
        }
    }

    fn feed_lines(&mut self, text: &str) {
        for line in text.split_terminator('\n') {
            if let Some(&t) = self.known.get(line) {
                self.encoder.push_terminal(t);
                self.finalized = false;
                self.actions += 1;
                continue;
            }
            let sizes = &self.comm_sizes;
            let rec = match parse_line_in(line, self.nranks, &|c| sizes.get(&c).copied()) {
                Ok(None) => continue,
                Ok(Some(rec)) if rec.rank == self.rank => rec,
                Ok(Some(rec)) => {
                    self.error = Some(format!(
                        "record '{line}' names rank {}, this is rank {}",
                        rec.rank, self.rank
                    ));
                    return;
                }
                Err(e) => {
                    self.error = Some(format!("cannot decode the record '{line}': {e}"));
                    return;
                }
            };
            if let Action::CommDef { id, world_ranks } = &rec.action {
                self.comm_sizes.insert(*id, world_ranks.len() as u32);
            }
            self.finalized = matches!(rec.action, Action::Finalize);
            let t = self.encoder.push(&rec.action, rec.comm, rec.callsite);
            self.actions += 1;
            let one_off = matches!(
                rec.action,
                Action::Sleep { .. }
                    | Action::Init { .. }
                    | Action::Finalize
                    | Action::CommDef { .. }
            );
            // `None`: a compute, which is not a terminal.
            if let (Some(t), false) = (t, one_off) {
                self.known.insert(line.into(), t);
            }
        }
    }

    /// The rank's compressed trace, or why it cannot be merged: a record could not be
    /// decoded, or the trace does not end with `finalize` (tracing stopped early).
    pub fn finish(self) -> Result<RankTrace, String> {
        if let Some(e) = self.error {
            return Err(e);
        }
        if !self.finalized {
            return Err("its trace does not end with finalize".into());
        }
        Ok(self.encoder.finish())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use timeless_grammar::{CompressedTrace, MergedRanks};

    fn stream(rank: u32, text: &str) -> Vec<(Action, u32)> {
        let mut e = OnlineEncoder::new(rank, 4, Precision::Lossless);
        e.feed(text);
        let t = e.finish().unwrap();
        let merged = MergedRanks::from(t);
        let mut merged = merged;
        // A one-rank trace of world size 4 needs all ranks: give the others empty grammars.
        for r in 0..4 {
            if r != rank {
                let mut o = OnlineEncoder::new(r, 4, Precision::Lossless);
                o.feed(&format!("{r} finalize\n"));
                merged = timeless_grammar::merge_pair(merged, o.finish().unwrap().into());
            }
        }
        let t = std::sync::Arc::new(
            CompressedTrace::from_merged(merged, 4, Precision::Lossless).unwrap(),
        );
        let mut s = t.rank_stream(rank).unwrap();
        let mut out = Vec::new();
        while let Some((a, c, _, _)) = s.next_action().unwrap() {
            out.push((a, c));
        }
        out
    }

    #[test]
    fn records_come_back_as_the_same_actions_with_their_communicators() {
        let text = "# comment\n1 init\n1 compute 12345\n1 comm_def 1 2 1 3\n\
                    1 isend 3 7 10 6 comm=1\n1 gatherv 3 1 1 3 0 6 comm=1\n\
                    1 wait 1 3 7 comm=1\n1 send 0 0 8 6\n1 finalize\n";
        let got = stream(1, text);
        let want: Vec<(Action, u32)> = text
            .lines()
            .scan(HashMap::new(), |sizes: &mut HashMap<u32, u32>, l| {
                let r = parse_line_in(l, 4, &|c| sizes.get(&c).copied()).unwrap();
                if let Some(timeless_trace::Record {
                    action: Action::CommDef { id, world_ranks },
                    ..
                }) = &r
                {
                    sizes.insert(*id, world_ranks.len() as u32);
                }
                Some(r)
            })
            .flatten()
            .map(|r| (r.action, r.comm))
            .collect();
        assert_eq!(want.len(), 8);
        assert_eq!(got, want);
    }

    /// The writer feeds lines in trace order: the lines behind a wildcard `irecv` wait for
    /// its hole to be filled; buffer flushes (limit 1 byte) do not lose the feed position.
    #[test]
    fn the_writer_feeds_lines_in_trace_order_around_holes() {
        let mut w = Writer::discard(1);
        w.set_online(OnlineEncoder::new(0, 3, Precision::Lossless));
        w.line(format_args!("0 init")).unwrap();
        let h1 = w.hole();
        w.line(format_args!("0 send 1 0 8 6")).unwrap();
        let h2 = w.hole();
        w.line(format_args!("0 recv 2 0 8 6")).unwrap();
        w.fill(h2, format_args!("0 irecv 2 5 8 6")).unwrap();
        w.line(format_args!("# a comment")).unwrap();
        w.fill(h1, format_args!("0 irecv 1 4 8 6")).unwrap();
        w.line(format_args!("0 wait 1 0 4")).unwrap();
        w.line(format_args!("0 finalize")).unwrap();
        w.finish(&|_| String::new()).unwrap();
        let t = take_closed()
            .expect("handed over at finish")
            .finish()
            .unwrap();
        let merged = timeless_grammar::merge_rounds(
            std::iter::once(MergedRanks::from(t))
                .chain((1..3).map(|r| {
                    let mut o = OnlineEncoder::new(r, 3, Precision::Lossless);
                    o.feed(&format!("{r} finalize\n"));
                    MergedRanks::from(o.finish().unwrap())
                }))
                .collect(),
        )
        .unwrap()
        .0;
        let t = std::sync::Arc::new(
            CompressedTrace::from_merged(merged, 3, Precision::Lossless).unwrap(),
        );
        let mut s = t.rank_stream(0).unwrap();
        let mut got = Vec::new();
        while let Some((a, _, _, _)) = s.next_action().unwrap() {
            got.push(a);
        }
        let want: Vec<Action> = [
            "0 init",
            "0 irecv 1 4 8 6",
            "0 send 1 0 8 6",
            "0 irecv 2 5 8 6",
            "0 recv 2 0 8 6",
            "0 wait 1 0 4",
            "0 finalize",
        ]
        .iter()
        .map(|l| timeless_trace::parse_line(l, 3).unwrap().unwrap().action)
        .collect();
        assert_eq!(got, want);
    }

    #[test]
    fn a_bad_record_or_a_missing_finalize_refuses_the_merge() {
        let mut e = OnlineEncoder::new(0, 2, DEFAULT_PRECISION);
        e.feed("0 init\n0 frobnicate 3\n0 finalize\n");
        let err = e.finish().unwrap_err();
        assert!(err.contains("0 frobnicate 3"), "{err}");
        let mut e = OnlineEncoder::new(0, 2, DEFAULT_PRECISION);
        e.feed("0 init\n1 send 0 0 8 6\n");
        assert!(e.finish().unwrap_err().contains("names rank 1"));
        let mut e = OnlineEncoder::new(0, 2, DEFAULT_PRECISION);
        e.feed("0 init\n0 send 1 0 8 6\n# tracing stopped here: x\n");
        assert!(e.finish().unwrap_err().contains("finalize"));
    }

    #[test]
    fn a_loop_keeps_the_grammar_small() {
        let mut e = OnlineEncoder::new(0, 2, DEFAULT_PRECISION);
        e.feed("0 init\n");
        for i in 0..20_000 {
            e.feed(&format!(
                "0 compute {}\n0 send 1 0 8 6\n0 recv 1 0 8 6\n",
                1000 + i % 7
            ));
        }
        e.feed("0 finalize\n");
        let t = e.finish().unwrap();
        assert_eq!(t.actions, 60_002);
        assert_eq!(
            t.cst.len(),
            4,
            "init, send, recv, finalize: compute is not a terminal"
        );
        assert_eq!(t.volumes.count, 20_000);
        assert_eq!(t.volumes.placement.count, 20_000);
        assert!(
            t.grammar.symbol_count() <= 8,
            "{}",
            t.grammar.symbol_count()
        );
    }
}
