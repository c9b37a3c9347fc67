//! Online event flow graphs (`002_*`; `timeless trace --flowgraph`, `TIMELESS_FLOWGRAPH=<file>`):
//! each rank builds its graph while the program runs, and rank 0 writes the file at
//! `MPI_Finalize`, so a graph can be had without a trace.
//!
//! The rank's [`crate::writer::Writer`] hands every record line to the [`GraphCapture`] once the
//! line's place is final (as it does for online compression: a wildcard `irecv` is fed when its
//! hole is filled), so the graph is the text trace's by construction. A line is decoded by
//! `timeless-trace` and split into its call signature (`timeless_grammar::signature`), which
//! selects the node; a line seen before whose action takes no volume goes straight to its node
//! (a hash lookup of the text, as IPM's signature hash table). With `TIMELESS_FLOWGRAPH_ONLY=1`
//! (`--flowgraph` alone) no text file is written.
//!
//! At `MPI_Finalize` every rank, traced or not, sends its graph (the graph file format of one
//! rank) to rank 0 (`PMPI_Gather` of the sizes, `PMPI_Gatherv` of the bytes); rank 0 groups
//! equal graphs and writes the file under a temporary name, then renames it. A rank whose
//! tracing failed sends nothing and rank 0 writes no file, with one message.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, OnceLock};

use rustc_hash::FxHashMap;
use timeless_flowgraph::{format, FlowGraphs, GraphBuilder, NodeId};
use timeless_trace::{parse_line_in, Action};

static CONFIG: OnceLock<Config> = OnceLock::new();
static CLOSED: Mutex<Option<Vec<u8>>> = Mutex::new(None);

/// Where the graph goes.
#[derive(Debug, Clone)]
pub struct Config {
    /// The file rank 0 writes.
    pub file: PathBuf,
    /// No text trace is written.
    pub only: bool,
}

/// Reads `TIMELESS_FLOWGRAPH` / `TIMELESS_FLOWGRAPH_ONLY`.
pub fn configure_from_env() -> Option<&'static Config> {
    let file = std::env::var_os("TIMELESS_FLOWGRAPH").filter(|v| !v.is_empty())?;
    let only = std::env::var("TIMELESS_FLOWGRAPH_ONLY").is_ok_and(|v| !v.is_empty() && v != "0");
    Some(CONFIG.get_or_init(|| Config {
        file: file.into(),
        only,
    }))
}

/// One rank's graph while the program runs.
#[derive(Debug)]
pub struct GraphCapture {
    rank: u32,
    nranks: u32,
    builder: GraphBuilder,
    comm_sizes: HashMap<u32, u32>,
    /// Lines seen before whose action takes no volume, and their node.
    known: FxHashMap<Box<str>, NodeId>,
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
            known: FxHashMap::default(),
            error: None,
        }
    }

    /// Feeds whole record lines (`\n`-terminated).
    pub fn feed(&mut self, text: &str) {
        if self.error.is_some() {
            return;
        }
        for line in text.split_terminator('\n') {
            if let Some(&id) = self.known.get(line) {
                self.builder.visit(id, None);
                continue;
            }
            let sizes = &self.comm_sizes;
            let rec = match parse_line_in(line, self.nranks, &|c| sizes.get(&c).copied()) {
                Ok(None) => continue,
                Ok(Some(rec)) => rec,
                Err(e) => {
                    self.error = Some(format!("cannot decode the record '{line}': {e}"));
                    return;
                }
            };
            if let Action::CommDef { id, world_ranks } = &rec.action {
                self.comm_sizes.insert(*id, world_ranks.len() as u32);
            }
            let sp =
                timeless_grammar::signature::split(&rec.action, self.rank, rec.comm, rec.callsite);
            let id = self.builder.node(&sp.signature);
            self.builder.visit(id, sp.volume);
            if sp.volume.is_none() && !matches!(rec.action, Action::CommDef { .. }) {
                self.known.insert(line.into(), id);
            }
        }
    }

    /// The rank's graph in the file format (one rank), or why there is none.
    pub fn finish(self) -> Result<Vec<u8>, String> {
        if let Some(e) = self.error {
            return Err(e);
        }
        let g = FlowGraphs::group(vec![self.builder.finish()]);
        Ok(format::encode(&g))
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
