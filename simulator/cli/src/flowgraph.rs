//! `timeless flowgraph`: event flow graphs (002_*) of a trace, and traces rebuilt from them.
//! Logic lives in `timeless-flowgraph`; this parses, calls and prints.

use std::path::{Path, PathBuf};

use anyhow::{anyhow, Context};
use clap::{Args, ValueEnum};
use timeless_flowgraph::{dot, format, FlowGraphs};

use crate::Failure;

/// Arguments of `timeless flowgraph`.
#[derive(Debug, Args)]
pub struct FlowgraphArgs {
    /// A trace (list file, shared file or compressed `.tlg`); with --reconstruct, a graph file.
    pub input: PathBuf,
    /// Output: the graph file (or picture); with --reconstruct, the directory of the rebuilt
    /// trace.
    #[arg(short = 'o', long)]
    pub out: PathBuf,
    /// What to write: the binary graph (`bin`, read back by --reconstruct), Graphviz `dot`,
    /// `svg` (Graphviz's `dot -Tsvg`, which must be installed) or `json`.
    #[arg(long, value_enum, default_value_t = GraphFormat::Bin)]
    pub format: GraphFormat,
    /// Rebuild every rank's TI trace from a graph file.
    #[arg(long)]
    pub reconstruct: bool,
    /// The input is a timed trace (`timed-list.txt` of `timeless trace --timestamps`): nodes
    /// get the durations of their visits (min, max, total).
    #[arg(long, conflicts_with = "reconstruct")]
    pub timed: bool,
    /// Ranks (default: as many as the trace list names).
    #[arg(short = 'n', long = "np")]
    pub np: Option<u32>,
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum GraphFormat {
    /// The binary graph file.
    Bin,
    /// Graphviz DOT text.
    Dot,
    /// JSON for other tools (nodes, visits, exit runs per distinct graph).
    Json,
    /// SVG drawn by Graphviz.
    Svg,
}

/// Runs `timeless flowgraph`.
pub fn run(args: FlowgraphArgs) -> Result<(), Failure> {
    let input = |e: anyhow::Error| Failure::Input(e);
    if args.reconstruct {
        let bytes = std::fs::read(&args.input)
            .with_context(|| format!("cannot read {}", args.input.display()))
            .map_err(input)?;
        let g = format::decode(&bytes, &args.input).map_err(|e| input(e.into()))?;
        g.reconstruct(&args.out, &args.input)
            .map_err(|e| Failure::Other(e.into()))?;
        println!(
            "Rebuilt {} ranks into {} (trace-list.txt)",
            g.ranks.len(),
            args.out.display()
        );
        return Ok(());
    }
    let mut g = if args.timed {
        FlowGraphs::from_timed(&args.input).map_err(|e| input(e.into()))?
    } else {
        let opened = timeless_run::open_trace(&args.input).map_err(crate::simulate::failure)?;
        let n = opened
            .rank_count(args.np, &args.input)
            .map_err(crate::simulate::failure)?;
        FlowGraphs::from_traces(&*opened.set, n).map_err(|e| input(e.into()))?
    };
    // Node labels name the call sites of the trace's call-site table, when it has one.
    let dir = if args.input.is_dir() {
        args.input.as_path()
    } else {
        args.input.parent().unwrap_or(Path::new("."))
    };
    g.callsites = timeless_launch::callsites::labels(dir).map_err(|e| input(e.into()))?;
    let n = g.ranks.len() as u32;
    let write = |bytes: &[u8]| {
        std::fs::write(&args.out, bytes)
            .with_context(|| format!("cannot write {}", args.out.display()))
            .map_err(Failure::Other)
    };
    match args.format {
        GraphFormat::Bin => write(&format::encode(&g))?,
        GraphFormat::Dot => write(dot::to_dot(&g).as_bytes())?,
        GraphFormat::Json => write(dot::to_json(&g).as_bytes())?,
        GraphFormat::Svg => {
            let svg = graphviz(&dot::to_dot(&g)).map_err(Failure::Other)?;
            write(&svg)?;
        }
    }
    let nodes: usize = g.graphs.iter().map(|x| x.signatures.len()).sum();
    let events: u64 = (0..n)
        .filter_map(|r| g.rank_graph(r))
        .map(|x| x.events())
        .sum();
    println!(
        "{} ranks, {} distinct graphs, {nodes} nodes, {events} events -> {}",
        n,
        g.graphs.len(),
        args.out.display()
    );
    Ok(())
}

/// SVG of a DOT text through Graphviz (`dot -Tsvg`); one SVG per graph, concatenated.
fn graphviz(dot_text: &str) -> anyhow::Result<Vec<u8>> {
    use std::io::Write;
    let mut child = std::process::Command::new("dot")
        .arg("-Tsvg")
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .context("--format svg needs Graphviz's `dot` (Debian: apt-get install graphviz)")?;
    // A `dot` that dies early must not take timeless with it (SIGPIPE has its default action,
    // main.rs): ignored while writing to it, so the write fails and `dot`'s status is told.
    #[cfg(unix)]
    // SAFETY: changing a signal's disposition; restored right after the write.
    let previous = unsafe { libc::signal(libc::SIGPIPE, libc::SIG_IGN) };
    let written = child
        .stdin
        .take()
        .ok_or_else(|| anyhow!("no stdin for dot"))
        .and_then(|mut stdin| Ok(stdin.write_all(dot_text.as_bytes())?));
    #[cfg(unix)]
    // SAFETY: as above.
    unsafe {
        libc::signal(libc::SIGPIPE, previous);
    }
    let out = child.wait_with_output()?;
    if let Err(e) = written {
        if out.status.success() {
            return Err(e);
        }
    }
    if !out.status.success() {
        return Err(anyhow!(
            "dot failed: {}",
            String::from_utf8_lossy(&out.stderr)
        ));
    }
    Ok(out.stdout)
}
