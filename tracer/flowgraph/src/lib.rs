//! MPI event flow graphs (`002_*`, IPM): each rank's trace as a graph whose nodes are event
//! signatures and whose edges are the transitions between them, with sequence numbers on the
//! exits so that the exact event order comes back, and ranks with the same graph grouped.
//!
//! * [`graph`]: one rank's multidigraph ([`RankGraph`]): nodes, runs of exits, volumes; the walk
//!   that gives the events back.
//! * [`pattern`]: §2.2's compression of exit runs into repeated patterns.
//! * [`mod@format`]: the checked binary file.
//! * [`dot`]: Graphviz pictures.
//!
//! # Worked example
//!
//! Two ranks running `init; 3 x (compute; send to the next rank; recv from the previous);
//! finalize`: both ranks have the same five nodes (`init`, `compute`, `send +1`, `recv -1`,
//! `finalize`; peers are relative) and the same exits (`recv -1` leaves to `compute` twice, then
//! to `finalize` once: two runs), so [`FlowGraphs`] holds one graph for both ranks and, per rank,
//! the three `compute` volumes. Walking the graph from `init` rebuilds each rank's 11 actions
//! exactly (`reconstruct`).

pub mod dot;
pub mod error;
pub mod format;
pub mod graph;
pub mod pattern;

use std::path::Path;

use timeless_grammar::signature::{rebuild, split};
use timeless_grammar::text::RankTextWriter;
use timeless_trace::{Event, TraceSet};

pub use error::FlowGraphError;
pub use graph::{GraphBuilder, NodeId, RankGraph, Run};

/// A rank: which graph it follows and its own volumes (per node, in visit order).
#[derive(Debug, Clone, PartialEq)]
pub struct RankEntry {
    /// Index in [`FlowGraphs::graphs`].
    pub graph: usize,
    /// Per node of that graph, the compute/sleep volumes of its visits.
    pub volumes: Vec<Vec<f64>>,
    /// Per node, the durations of its visits (from a timed trace); empty when the trace has no
    /// times.
    pub durations: Vec<Option<Durations>>,
}

/// Time spent in a node's visits (wall seconds of a timed trace: exit - enter).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Durations {
    /// Shortest visit, s.
    pub min_secs: f64,
    /// Longest visit, s.
    pub max_secs: f64,
    /// All visits, s.
    pub total_secs: f64,
}

impl Durations {
    fn add(this: &mut Option<Durations>, secs: f64) {
        match this {
            None => {
                *this = Some(Durations {
                    min_secs: secs,
                    max_secs: secs,
                    total_secs: secs,
                })
            }
            Some(d) => {
                d.min_secs = d.min_secs.min(secs);
                d.max_secs = d.max_secs.max(secs);
                d.total_secs += secs;
            }
        }
    }
}

/// The flow graphs of a run: the distinct graphs, and each rank's.
#[derive(Debug, Clone, PartialEq)]
pub struct FlowGraphs {
    /// Distinct graphs (volumes not included: they are per rank).
    pub graphs: Vec<RankGraph>,
    /// One entry per world rank.
    pub ranks: Vec<RankEntry>,
    /// Labels of the call sites the nodes name (`@cs=<id>`), from the trace's call-site table
    /// (`timeless_trace::callsites`); not stored in the graph file, empty when unknown.
    pub callsites: std::collections::BTreeMap<u32, String>,
}

impl FlowGraphs {
    /// Builds the graphs of every rank of `traces` (`nranks` ranks).
    ///
    /// # Errors
    /// The trace's own errors (file:line).
    pub fn from_traces(traces: &dyn TraceSet, nranks: u32) -> Result<FlowGraphs, FlowGraphError> {
        let mut rank_graphs = Vec::with_capacity(nranks as usize);
        for r in 0..nranks {
            let mut s = traces.open_stream(r, nranks)?;
            let mut events: Vec<(Vec<u8>, Option<f64>)> = Vec::new();
            while let Some(Event {
                action,
                comm,
                callsite,
                ..
            }) = s.next_event()?
            {
                let sp = split(&action, r, comm, callsite);
                events.push((sp.signature, sp.volume));
            }
            rank_graphs.push(RankGraph::build(
                events.iter().map(|(s, v)| (s.as_slice(), *v)),
            ));
        }
        Ok(FlowGraphs::group(rank_graphs))
    }

    /// Groups per-rank graphs: ranks whose graphs are equal but for their volumes share one.
    pub fn group(rank_graphs: Vec<RankGraph>) -> FlowGraphs {
        let mut graphs: Vec<RankGraph> = Vec::new();
        let mut index: std::collections::HashMap<Vec<u8>, usize> = Default::default();
        let mut ranks = Vec::with_capacity(rank_graphs.len());
        for mut g in rank_graphs {
            let volumes = std::mem::take(&mut g.volumes);
            g.volumes = vec![Vec::new(); g.signatures.len()];
            let key = format::encode(&FlowGraphs {
                callsites: Default::default(),
                graphs: vec![g.clone()],
                ranks: Vec::new(),
            });
            let gi = *index.entry(key).or_insert_with(|| {
                graphs.push(g);
                graphs.len() - 1
            });
            ranks.push(RankEntry {
                graph: gi,
                volumes,
                durations: Vec::new(),
            });
        }
        FlowGraphs {
            graphs,
            ranks,
            callsites: Default::default(),
        }
    }

    /// Builds the graphs of a timed trace (`timeless trace --timestamps`: `timed-list.txt`, lines
    /// `<rank> <enter> <exit> <action...>`), with each node's visit durations. Timed traces
    /// carry no compute lines: the graph has no compute nodes.
    ///
    /// # Errors
    /// [`FlowGraphError::Line`] naming file:line for a line that is not a timed TI line;
    /// I/O errors.
    pub fn from_timed(list: &Path) -> Result<FlowGraphs, FlowGraphError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| FlowGraphError::Io { path, source }
        };
        let dir = list.parent().unwrap_or(Path::new("."));
        let files: Vec<std::path::PathBuf> = std::fs::read_to_string(list)
            .map_err(io(list))?
            .lines()
            .map(str::trim)
            .filter(|l| !l.is_empty())
            .map(|l| dir.join(l))
            .collect();
        let n = files.len() as u32;
        let mut graphs = Vec::with_capacity(files.len());
        let mut all_durations = Vec::with_capacity(files.len());
        for (r, f) in files.iter().enumerate() {
            let text = std::fs::read_to_string(f).map_err(io(f))?;
            let mut sizes: std::collections::HashMap<u32, u32> = Default::default();
            let mut events: Vec<(Vec<u8>, Option<f64>, f64)> = Vec::new();
            for (i, line) in text.lines().enumerate() {
                let bad = |what: String| FlowGraphError::Line {
                    path: f.clone(),
                    line: i + 1,
                    what,
                };
                let t = line.trim();
                if t.is_empty() || t.starts_with('#') {
                    continue;
                }
                let fields: Vec<&str> = t.split_ascii_whitespace().collect();
                // `<rank> <enter> <exit> action...`, or an untimed `<rank> comm_def ...`.
                let (secs, rest) = match (
                    fields.get(1).and_then(|x| x.parse::<f64>().ok()),
                    fields.get(2).and_then(|x| x.parse::<f64>().ok()),
                ) {
                    (Some(a), Some(b)) => (b - a, fields[3..].join(" ")),
                    _ => (0.0, fields[1..].join(" ")),
                };
                let plain = format!("{} {rest}", fields[0]);
                let rec = timeless_trace::parse_line_in(&plain, n, &|c| sizes.get(&c).copied())
                    .map_err(|e| bad(e.to_string()))?;
                let Some(rec) = rec else { continue };
                if let timeless_trace::Action::CommDef { id, world_ranks } = &rec.action {
                    sizes.insert(*id, world_ranks.len() as u32);
                }
                let sp = split(&rec.action, r as u32, rec.comm, rec.callsite);
                events.push((sp.signature, sp.volume, secs));
            }
            let g = RankGraph::build(events.iter().map(|(s, v, _)| (s.as_slice(), *v)));
            // Durations per node, in the order the build numbered the nodes.
            let index: std::collections::HashMap<&[u8], usize> = g
                .signatures
                .iter()
                .enumerate()
                .map(|(i, s)| (s.as_slice(), i))
                .collect();
            let mut d: Vec<Option<Durations>> = vec![None; g.signatures.len()];
            for (s, _, secs) in &events {
                Durations::add(&mut d[index[s.as_slice()]], *secs);
            }
            graphs.push(g);
            all_durations.push(d);
        }
        let mut out = FlowGraphs::group(graphs);
        for (e, d) in out.ranks.iter_mut().zip(all_durations) {
            e.durations = d;
        }
        Ok(out)
    }

    /// Rank `rank`'s graph with its volumes.
    pub fn rank_graph(&self, rank: u32) -> Option<RankGraph> {
        let e = self.ranks.get(rank as usize)?;
        let mut g = self.graphs.get(e.graph)?.clone();
        g.volumes = e.volumes.clone();
        Some(g)
    }

    /// Rebuilds every rank's TI trace into `dir` (`rank-<r>.txt`, `trace-list.txt`);
    /// `origin` names the graph file in errors.
    ///
    /// # Errors
    /// [`FlowGraphError::Signature`] for a node that is not a valid signature or a compute node
    /// without its volume; [`FlowGraphError::Io`] on write failures.
    pub fn reconstruct(&self, dir: &Path, origin: &Path) -> Result<(), FlowGraphError> {
        let io = |path: &Path| {
            let path = path.to_path_buf();
            move |source| FlowGraphError::Io { path, source }
        };
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let n = self.ranks.len() as u32;
        let mut list = String::new();
        for r in 0..n {
            let text = self.rank_text(r, origin)?;
            let file = format!("rank-{r}.txt");
            std::fs::write(dir.join(&file), text).map_err(io(&dir.join(&file)))?;
            list.push_str(&file);
            list.push('\n');
        }
        let lp = dir.join("trace-list.txt");
        std::fs::write(&lp, list).map_err(io(&lp))
    }

    /// Rank `rank`'s TI text, rebuilt from its graph.
    ///
    /// # Errors
    /// As [`FlowGraphs::reconstruct`].
    pub fn rank_text(&self, rank: u32, origin: &Path) -> Result<String, FlowGraphError> {
        let n = self.ranks.len() as u32;
        let g = self
            .rank_graph(rank)
            .ok_or_else(|| FlowGraphError::Corrupt {
                path: origin.to_path_buf(),
                offset: 0,
                what: format!("no graph for rank {rank}"),
            })?;
        let sig_err = |source| FlowGraphError::Signature {
            path: origin.to_path_buf(),
            rank,
            source,
        };
        let mut w = RankTextWriter::new(rank, n);
        let mut out = String::new();
        for (node, vol) in g.walk() {
            let (action, comm, callsite) =
                rebuild(&g.signatures[node as usize], 0, rank, n, vol).map_err(sig_err)?;
            w.write(&mut out, &action, comm, callsite)
                .map_err(sig_err)?;
        }
        Ok(out)
    }
}
