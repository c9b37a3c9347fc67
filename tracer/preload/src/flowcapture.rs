//! Online event flow graphs (`002_*`; `timeless trace --flowgraph`, `TIMELESS_FLOWGRAPH=<file>`):
//! each rank builds its graph while the program runs, and rank 0 writes the file at
//! `MPI_Finalize`, so a graph can be had without a trace.
//!
//! # The hot path: typed records
//!
//! The rank's [`crate::writer::Writer`] hands every record to the [`GraphCapture`] as it is
//! made, with its [`RecordKey`] when the hook described it as a typed [`crate::record::Record`]
//! (point-to-point, completions, the common collectives, `compute`). The capture's signature
//! table is two-level, as IPM's hash table of event signatures:
//!
//! 1. `by_key`: typed key → *slot* (a distinct call signature). A key seen before costs one
//!    FxHash lookup of a fixed-size value and one visit of the graph builder: the line's text
//!    is neither formatted nor read. Before hashing, the key is compared with the one that
//!    followed the previous record's slot last time (a loop repeats its sequence: one
//!    comparison instead of a hash and a probe). This is all `--flowgraph-only` does per call,
//!    besides the tracer's own bookkeeping (communicators, requests, the compute clock).
//! 2. On a miss (first sight of a key, or an untyped line: `comm_def`, v-collectives,
//!    comments), the line's text is formatted (into a reused buffer, if the trace did not
//!    format it already), decoded by `timeless-trace` and split into its call signature
//!    (`timeless_grammar::signature`), which selects the slot. So a node's signature is by
//!    construction the one `timeless flowgraph` computes from the text trace, and the graph
//!    file is byte for byte the offline graph of the same run.
//!
//! A key determines its line (the record's `Display` reads only the key), so a key cannot
//! map to two signatures; several keys may map to one slot. `compute` keys leave the flops out:
//! they come with the record as the visit's volume, as a text line's volume would.
//!
//! Compute bursts are measured exactly as when tracing (`clock`: the thread CPU clock is read
//! only across intervals over 20 µs, chained from `CLOCK_MONOTONIC` otherwise; `burst`'s
//! carry and hysteresis), so the graph's compute nodes and volumes are the trace's.
//!
//! # Order
//!
//! Nodes are numbered in order of first visit, and visits are in trace order. A wildcard
//! `irecv` is a *hole* until it completes (as in the writer): events after an open hole wait
//! in the capture's queue as (slot, volume) and are visited when every hole before them is
//! filled; a slot gets its node at its first visit, so the numbering is the text's. Holes
//! never filled are dropped, as the trace writes them as comments.
//!
//! With `TIMELESS_FLOWGRAPH_ONLY=1` (`--flowgraph-only`) no text file is written and the writer
//! keeps no text. With `TIMELESS_FLOWGRAPH_CHECK=<dir>` each rank also feeds every line's text
//! to a second capture and compares the two graphs' bytes at the end, and a `--flowgraph-only`
//! rank writes the text trace it would have written to `<dir>/rank-<r>.txt`, so that a test
//! can build the same run's graph offline with `timeless flowgraph` and compare
//! (`simulator/cli/tests/flowgraph_mpi.rs`).
//!
//! At `MPI_Finalize` every rank, traced or not, sends its graph (the graph file format of one
//! rank) to rank 0 (`PMPI_Gather` of the sizes, `PMPI_Gatherv` of the bytes); rank 0 groups
//! equal graphs and writes the file under a temporary name, then renames it. A rank whose
//! tracing failed sends nothing and rank 0 writes no file, with one message.

use std::collections::{HashMap, VecDeque};
use std::fmt;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use rustc_hash::FxHashMap;
use timeless_flowgraph::{format, FlowGraphs, GraphBuilder, NodeId};
use timeless_trace::{parse_line_in, Action};

use crate::record::{KeyMap, RecordKey};
use crate::writer::HoleId;

static CONFIG: OnceLock<Config> = OnceLock::new();
static CLOSED: Mutex<Option<Vec<u8>>> = Mutex::new(None);

/// Where the graph goes.
#[derive(Debug, Clone)]
pub struct Config {
    /// The file rank 0 writes.
    pub file: PathBuf,
    /// No text trace is written.
    pub only: bool,
    /// `TIMELESS_FLOWGRAPH_CHECK=<dir>` (for tests): each rank also builds its graph from the
    /// text of every line and compares (see [`GraphCapture::with_text_check`]), and with
    /// `only`, writes the text trace it did not write to `<dir>/rank-<r>.txt`, for an offline
    /// build of the same run's graph.
    pub check: Option<PathBuf>,
}

impl Config {
    /// A rank's capture as configured.
    pub fn capture(&self, rank: u32, nranks: u32) -> GraphCapture {
        let c = GraphCapture::new(rank, nranks);
        if self.check.is_some() {
            c.with_text_check()
        } else {
            c
        }
    }
}

/// Whether the flow graph is all that is written (`--flowgraph-only`: no text trace).
pub fn only() -> bool {
    CONFIG.get().is_some_and(|c| c.only)
}

/// Reads `TIMELESS_FLOWGRAPH` / `TIMELESS_FLOWGRAPH_ONLY` / `TIMELESS_FLOWGRAPH_CHECK`.
pub fn configure_from_env() -> Option<&'static Config> {
    let file = std::env::var_os("TIMELESS_FLOWGRAPH").filter(|v| !v.is_empty())?;
    let flag = |name: &str| std::env::var(name).is_ok_and(|v| !v.is_empty() && v != "0");
    Some(CONFIG.get_or_init(|| {
        Config {
            file: file.into(),
            only: flag("TIMELESS_FLOWGRAPH_ONLY"),
            check: flag("TIMELESS_FLOWGRAPH_CHECK")
                .then(|| std::env::var_os("TIMELESS_FLOWGRAPH_CHECK").map(PathBuf::from))
                .flatten(),
        }
    }))
}

/// A line handed to the capture: formatted only if the capture needs its text.
#[derive(Clone, Copy)]
pub enum Text<'a> {
    /// Not formatted yet (`--flowgraph-only`: no trace is written).
    Args(fmt::Arguments<'a>),
    /// Already formatted (the trace's line, without its newline).
    Str(&'a str),
}

/// A distinct signature seen by the capture, and its graph node once visited.
#[derive(Debug)]
struct Slot {
    signature: Vec<u8>,
    /// Nodes are numbered in order of first visit, as an offline build numbers them.
    node: Option<NodeId>,
    /// The typed record that followed this slot's last keyed record, and its slot: the
    /// prediction checked before hashing (a loop repeats its sequence).
    next: Option<(RecordKey, SlotId)>,
}

type SlotId = u32;

/// An event waiting behind a wildcard `irecv` whose source is not known yet.
#[derive(Debug, Clone, Copy)]
enum Queued {
    Visit(SlotId, Option<f64>),
    Hole(HoleId),
}

/// One rank's graph while the program runs.
#[derive(Debug)]
pub struct GraphCapture {
    rank: u32,
    nranks: u32,
    builder: GraphBuilder,
    comm_sizes: HashMap<u32, u32>,
    slots: Vec<Slot>,
    by_signature: FxHashMap<Vec<u8>, SlotId>,
    /// Typed records seen before, and their slot (the hot path).
    by_key: KeyMap<SlotId>,
    /// The slot of the last typed record (see [`Slot::next`]).
    last: Option<SlotId>,
    /// Untyped lines seen before whose action takes no volume, and their slot.
    by_text: FxHashMap<Box<str>, SlotId>,
    /// Events after the first open hole, in trace order; empty when no hole is open.
    queue: VecDeque<Queued>,
    /// Formatting buffer for lines not seen before.
    scratch: String,
    /// A capture fed with every line's text only, compared at the end
    /// (`TIMELESS_FLOWGRAPH_CHECK`).
    shadow: Option<Box<GraphCapture>>,
    /// Events visited.
    events: u64,
    /// The first line that could not be decoded: the graph is abandoned.
    error: Option<String>,
}

impl GraphCapture {
    /// A capture for world rank `rank` of `nranks`.
    pub fn new(rank: u32, nranks: u32) -> GraphCapture {
        GraphCapture {
            rank,
            nranks,
            builder: GraphBuilder::default(),
            comm_sizes: HashMap::new(),
            slots: Vec::new(),
            by_signature: FxHashMap::default(),
            by_key: KeyMap::default(),
            last: None,
            by_text: FxHashMap::default(),
            queue: VecDeque::new(),
            scratch: String::new(),
            shadow: None,
            events: 0,
            error: None,
        }
    }

    /// Also feeds every line's text to a second capture and compares both graphs at the end
    /// (a differential check of the typed path, for tests).
    pub fn with_text_check(mut self) -> GraphCapture {
        self.shadow = Some(Box::new(GraphCapture::new(self.rank, self.nranks)));
        self
    }

    /// The next line of the trace (or, after [`GraphCapture::hole`], of the events waiting for
    /// it): a typed record `key` (`volume`: a `compute` record's flops) or an untyped line.
    /// Cost of a key seen before: one hash lookup and one visit, the text is not read.
    pub fn record(&mut self, key: Option<&RecordKey>, volume: Option<f64>, text: Text<'_>) {
        if let Some(s) = self.shadow.as_deref_mut() {
            with_text(&mut self.scratch, text, |t| {
                s.record(None, None, Text::Str(t));
            });
        }
        if self.error.is_some() {
            return;
        }
        if let Some(k) = key {
            if let Some(slot) = self.find(k) {
                return self.place(Queued::Visit(slot, volume));
            }
        }
        for (slot, vol) in self.decode(key, text) {
            self.place(Queued::Visit(slot, vol));
        }
    }

    /// The slot of a typed record seen before: the last one's successor if the key is the
    /// same (one comparison), else a hash lookup, remembered as the new successor.
    #[inline]
    fn find(&mut self, key: &RecordKey) -> Option<SlotId> {
        let last = self.last.map(|l| l as usize);
        if let Some(l) = last {
            if let Some((k, s)) = &self.slots[l].next {
                if k == key {
                    self.last = Some(*s);
                    return Some(*s);
                }
            }
        }
        let slot = *self.by_key.get(key)?;
        self.follow(key, slot);
        Some(slot)
    }

    /// Records that the typed record `key` (slot `slot`) came after the last one.
    fn follow(&mut self, key: &RecordKey, slot: SlotId) {
        if let Some(l) = self.last {
            self.slots[l as usize].next = Some((*key, slot));
        }
        self.last = Some(slot);
    }

    /// The place of a wildcard `irecv` record (`id`, in creation order), filled later.
    pub fn hole(&mut self, id: HoleId) {
        if let Some(s) = self.shadow.as_deref_mut() {
            s.hole(id);
        }
        self.queue.push_back(Queued::Hole(id));
    }

    /// Fills hole `id` with its record (a comment line fills it with nothing); unknown ids
    /// are ignored. Events behind it are visited if no hole is left before them.
    pub fn fill(&mut self, id: HoleId, key: Option<&RecordKey>, text: Text<'_>) {
        if let Some(s) = self.shadow.as_deref_mut() {
            with_text(&mut self.scratch, text, |t| s.fill(id, None, Text::Str(t)));
        }
        let Some(at) = self
            .queue
            .iter()
            .position(|q| matches!(q, Queued::Hole(h) if *h == id))
        else {
            return;
        };
        self.queue.remove(at);
        if self.error.is_none() {
            let found = key.and_then(|k| self.by_key.get(k)).copied();
            let visits = match found {
                Some(slot) => vec![(slot, None)],
                None => self.decode(key, text),
            };
            for (i, (slot, vol)) in visits.into_iter().enumerate() {
                self.queue.insert(at + i, Queued::Visit(slot, vol));
            }
        }
        self.drain();
    }

    /// Visits `q` now if no hole is open, else queues it.
    #[inline]
    fn place(&mut self, q: Queued) {
        match q {
            Queued::Visit(slot, vol) if self.queue.is_empty() => self.visit(slot, vol),
            q => self.queue.push_back(q),
        }
    }

    /// Visits the queued events up to the first open hole.
    fn drain(&mut self) {
        while let Some(&Queued::Visit(slot, vol)) = self.queue.front() {
            self.queue.pop_front();
            self.visit(slot, vol);
        }
    }

    fn visit(&mut self, slot: SlotId, volume: Option<f64>) {
        let s = &mut self.slots[slot as usize];
        let node = match s.node {
            Some(n) => n,
            None => {
                let n = self.builder.node(&s.signature);
                s.node = Some(n);
                n
            }
        };
        self.builder.visit(node, volume);
        self.events += 1;
    }

    /// Decodes a line not found by key: its slots and volumes (none for a comment, several
    /// for several lines). Remembers the key, or the text of a line without volume.
    fn decode(&mut self, key: Option<&RecordKey>, text: Text<'_>) -> Vec<(SlotId, Option<f64>)> {
        let mut scratch = std::mem::take(&mut self.scratch);
        let mut out = Vec::with_capacity(1);
        with_text(&mut scratch, text, |t| {
            for line in t.split_terminator('\n') {
                if let Some(&slot) = self.by_text.get(line) {
                    out.push((slot, None));
                    continue;
                }
                let sizes = &self.comm_sizes;
                let rec = match parse_line_in(line, self.nranks, &|c| sizes.get(&c).copied()) {
                    Ok(None) => continue,
                    Ok(Some(rec)) => rec,
                    Err(e) => {
                        self.error = Some(format!("cannot decode the record '{line}': {e}"));
                        out.clear();
                        return;
                    }
                };
                if let Action::CommDef { id, world_ranks } = &rec.action {
                    self.comm_sizes.insert(*id, world_ranks.len() as u32);
                }
                let sp = timeless_grammar::signature::split(
                    &rec.action,
                    self.rank,
                    rec.comm,
                    rec.callsite,
                );
                let slot = match self.by_signature.get(&sp.signature) {
                    Some(&s) => s,
                    None => {
                        let s = self.slots.len() as SlotId;
                        self.by_signature.insert(sp.signature.clone(), s);
                        self.slots.push(Slot {
                            signature: sp.signature,
                            node: None,
                            next: None,
                        });
                        s
                    }
                };
                let is_def = matches!(rec.action, Action::CommDef { .. });
                match key {
                    Some(k) if !is_def => {
                        self.by_key.insert(*k, slot);
                        self.follow(k, slot);
                    }
                    None if sp.volume.is_none() && !is_def => {
                        self.by_text.insert(line.into(), slot);
                    }
                    _ => {}
                }
                out.push((slot, sp.volume));
            }
        });
        self.scratch = scratch;
        out
    }

    /// The rank's graph in the file format (one rank), or why there is none. Holes still open
    /// are dropped (the trace writes them as comments).
    pub fn finish(mut self) -> Result<Vec<u8>, String> {
        self.queue.retain(|q| matches!(q, Queued::Visit(..)));
        self.drain();
        if let Some(e) = self.error {
            return Err(e);
        }
        let g = FlowGraphs::group(vec![self.builder.finish()]);
        let bytes = format::encode(&g);
        if let Some(s) = self.shadow {
            let events = s.events;
            let text = s.finish()?;
            if text != bytes {
                return Err(format!(
                    "check failed: the typed capture differs from the text capture \
                     ({} and {} events)",
                    self.events, events
                ));
            }
            // One write, so that the ranks' lines do not interleave.
            let line = format!(
                "timeless-preload: rank {}: flow graph checked against the text capture: \
                 identical ({events} events)\n",
                self.rank
            );
            let _ = std::io::Write::write_all(&mut std::io::stderr(), line.as_bytes());
        }
        Ok(bytes)
    }
}

/// Runs `f` on the text of `text`, formatting it into `scratch` if needed.
fn with_text<R>(scratch: &mut String, text: Text<'_>, f: impl FnOnce(&str) -> R) -> R {
    match text {
        Text::Str(s) => f(s),
        Text::Args(a) => {
            scratch.clear();
            let _ = fmt::Write::write_fmt(scratch, a);
            f(scratch)
        }
    }
}

/// The writer closed the trace: keep this rank's graph for `MPI_Finalize`.
pub fn closed(capture: GraphCapture) {
    let rank = capture.rank;
    match capture.finish() {
        Ok(bytes) => *CLOSED.lock().unwrap_or_else(|p| p.into_inner()) = Some(bytes),
        Err(e) => eprintln!("timeless-preload: rank {rank}: no flow graph ({e})"),
    }
}

/// At `MPI_Finalize`, on every rank: gathers the graphs on rank 0, which writes the file.
pub fn at_finalize() {
    let Some(cfg) = CONFIG.get() else { return };
    let part = CLOSED.lock().unwrap_or_else(|p| p.into_inner()).take();
    let Some(all) = crate::parts::gather(part) else {
        return;
    };
    let fail = |why: String| {
        eprintln!(
            "timeless-preload: no flow graph written to {}: {why}",
            cfg.file.display()
        )
    };
    let parts = match all {
        Ok(parts) => parts,
        Err(why) => return fail(why),
    };
    let mut graphs = Vec::with_capacity(parts.len());
    for (r, bytes) in parts.iter().enumerate() {
        match format::decode(bytes, Path::new("(rank part)")) {
            Ok(g) => match g.rank_graph(0) {
                Some(mut rg) => {
                    rg.volumes = g.ranks[0].volumes.clone();
                    graphs.push(rg)
                }
                None => return fail(format!("rank {r} sent no graph")),
            },
            Err(e) => return fail(format!("rank {r}'s graph: {e}")),
        }
    }
    let g = FlowGraphs::group(graphs);
    let tmp = cfg.file.with_extension("tfg.tmp");
    let written =
        std::fs::write(&tmp, format::encode(&g)).and_then(|_| std::fs::rename(&tmp, &cfg.file));
    if let Err(e) = written {
        let _ = std::fs::remove_file(&tmp);
        fail(e.to_string());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::record::Record;
    use timeless_flowgraph::Run;

    fn key(record: Record) -> RecordKey {
        RecordKey {
            record,
            comm: None,
            site: None,
        }
    }

    /// Rank 0 of 2 records `init`, a wildcard `irecv` (hole 0), `send 1 0 8 6` (typed),
    /// `compute 500` (typed), the same send again (a key hit, queued behind the hole), then
    /// the hole is filled with `irecv 1 3 8 6`, then `finalize`; a second hole is never filled.
    /// Trace order: init, irecv, send, compute, send, finalize. By hand, nodes in order of
    /// first visit: init 0, irecv 1, send 2, compute 3, finalize 4 (the irecv before the send
    /// although the send was recorded first); visits 1, 1, 2, 1, 1; exits init -> irecv,
    /// irecv -> send, send -> compute then -> finalize (two runs), compute -> send; compute's
    /// volume 500. A capture of the same lines' text, in trace order, gives the same bytes.
    #[test]
    fn typed_records_behind_a_hole_keep_the_texts_numbering() {
        let send = Record::Send {
            nonblocking: false,
            dst: 1,
            tag: 0,
            count: 8,
            dt: 6,
        };
        let irecv = Record::Recv {
            nonblocking: true,
            src: 1,
            tag: 3,
            count: 8,
            dt: 6,
        };
        let mut c = GraphCapture::new(0, 2);
        c.record(None, None, Text::Str("0 init"));
        c.hole(0);
        c.record(Some(&key(send)), None, Text::Args(format_args!("0 {send}")));
        c.record(
            Some(&key(Record::Compute)),
            Some(500.0),
            Text::Str("0 compute 500"),
        );
        c.record(Some(&key(send)), None, Text::Args(format_args!("0 {send}")));
        c.fill(0, Some(&key(irecv)), Text::Args(format_args!("0 {irecv}")));
        c.hole(1);
        c.record(None, None, Text::Str("0 finalize"));
        let bytes = c.finish().unwrap();
        let g = format::decode(&bytes, Path::new("x"))
            .unwrap()
            .rank_graph(0)
            .unwrap();
        let run = |to, count| Run { to, count };
        assert_eq!(g.visits, [1, 1, 2, 1, 1]);
        assert_eq!(
            g.exits,
            [
                vec![run(1, 1)],
                vec![run(2, 1)],
                vec![run(3, 1), run(4, 1)],
                vec![run(2, 1)],
                vec![],
            ]
        );
        assert_eq!(g.volumes[3], [500.0]);
        let mut t = GraphCapture::new(0, 2);
        for l in [
            "0 init",
            "0 irecv 1 3 8 6",
            "0 send 1 0 8 6",
            "0 compute 500",
            "0 send 1 0 8 6",
            "0 finalize",
        ] {
            t.record(None, None, Text::Str(l));
        }
        assert_eq!(t.finish().unwrap(), bytes);
    }

    /// A line that does not decode abandons the graph with the line in the message.
    #[test]
    fn an_undecodable_line_abandons_the_graph() {
        let mut c = GraphCapture::new(0, 2);
        c.record(None, None, Text::Str("0 init"));
        c.record(None, None, Text::Str("0 frobnicate 3"));
        let e = c.finish().unwrap_err();
        assert!(
            e.contains("cannot decode the record '0 frobnicate 3'"),
            "{e}"
        );
    }
}
