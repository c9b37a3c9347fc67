//! `timeless compress`, `decompress` and `stats`: the compressed trace format of
//! `timeless-grammar` (Pilgrim-style CST + Sequitur grammars merged across ranks).

use std::fmt::Write as _;
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context;
use clap::Args;
use timeless_compensate::meta::META_FILE;
use timeless_grammar::format::{self, PartSizes};
use timeless_grammar::text::RankTextWriter;
use timeless_grammar::{offline, CompressedTrace, Precision, DEFAULT_PRECISION};
use timeless_trace::TraceSource;

use crate::Failure;

/// Arguments of `timeless compress`.
#[derive(Debug, Args)]
pub struct CompressArgs {
    /// TI trace: a list file of per-rank traces, or one file shared by all ranks (as `simulate`).
    pub trace: PathBuf,
    /// Output file.
    #[arg(short = 'o', long = "output")]
    pub output: PathBuf,
    /// Maximum relative error of each compute/sleep volume; 0 keeps them exactly (lossless).
    #[arg(long, default_value_t = DEFAULT_PRECISION.as_f64())]
    pub precision: f64,
    /// Number of ranks of a shared trace file (default: largest rank field + 1).
    #[arg(short = 'n', long = "np")]
    pub np: Option<u32>,
}

/// Arguments of `timeless decompress`.
#[derive(Debug, Args)]
pub struct DecompressArgs {
    /// Compressed trace file.
    pub file: PathBuf,
    /// Output directory: `rank<r>.txt` per rank and the list file `traces.txt`.
    #[arg(short = 'o', long = "output")]
    pub output: PathBuf,
}

/// Arguments of `timeless stats`.
#[derive(Debug, Args)]
pub struct StatsArgs {
    /// Compressed trace file.
    pub file: PathBuf,
}

fn input<T>(r: Result<T, impl Into<anyhow::Error>>) -> Result<T, Failure> {
    r.map_err(|e| Failure::Input(e.into()))
}

/// Reads and validates a compressed trace file.
pub fn load(path: &std::path::Path) -> Result<(CompressedTrace, PartSizes), Failure> {
    format::load(path).map_err(|e| Failure::Input(e.into()))
}

/// Runs `timeless compress`.
pub fn run_compress(args: CompressArgs) -> Result<(), Failure> {
    let precision = input(Precision::from_flag(args.precision))?;
    let source = input(TraceSource::open(&args.trace))?;
    let nranks = match args.np {
        Some(n) => n,
        None => input(offline::rank_count(&source))?,
    };
    let mut trace = input(offline::compress(&source, nranks, precision))?;
    if let Some((path, bytes)) = tracer_meta_file(&args.trace, &source)? {
        eprintln!("timeless: embedding the tracer metadata {}", path.display());
        trace.tracer_meta = Some(bytes);
    }
    let (bytes, sizes) = format::write(&trace);
    std::fs::write(&args.output, &bytes)
        .with_context(|| format!("cannot write {}", args.output.display()))
        .map_err(Failure::Other)?;
    let s = trace.stats();
    eprintln!(
        "timeless: {} ranks, {} actions -> {} bytes ({} terminals, {} unique grammars)",
        s.ranks,
        s.actions,
        sizes.total(),
        s.terminals,
        s.unique_grammars
    );
    Ok(())
}

/// Runs `timeless decompress`.
pub fn run_decompress(args: DecompressArgs) -> Result<(), Failure> {
    let (trace, _) = load(&args.file)?;
    let trace = Arc::new(trace);
    let other = |e: std::io::Error, what: &std::path::Path| {
        Failure::Other(anyhow::Error::new(e).context(format!("cannot write {}", what.display())))
    };
    std::fs::create_dir_all(&args.output).map_err(|e| other(e, &args.output))?;
    let mut list = String::new();
    let mut line = String::new();
    for r in 0..trace.nranks {
        let name = format!("rank{r}.txt");
        let path = args.output.join(&name);
        let f = std::fs::File::create(&path).map_err(|e| other(e, &path))?;
        let mut w = std::io::BufWriter::new(f);
        let mut stream = input(trace.rank_stream(r))?;
        let mut text = RankTextWriter::new(r, trace.nranks);
        while let Some((action, comm, _)) = input(stream.next_action())? {
            line.clear();
            input(text.write(&mut line, &action, comm))?;
            w.write_all(line.as_bytes()).map_err(|e| other(e, &path))?;
        }
        w.flush().map_err(|e| other(e, &path))?;
        let _ = writeln!(list, "{name}");
    }
    if let Some(m) = &trace.tracer_meta {
        let mp = args.output.join(META_FILE);
        std::fs::write(&mp, m).map_err(|e| other(e, &mp))?;
    }
    let lp = args.output.join("traces.txt");
    std::fs::write(&lp, list).map_err(|e| other(e, &lp))?;
    Ok(())
}

/// The tracer's `trace-meta.json` next to the trace argument, or else next to the first rank
/// file (where `simulate` looks for it), with its bytes.
fn tracer_meta_file(
    trace: &Path,
    source: &TraceSource,
) -> Result<Option<(PathBuf, Vec<u8>)>, Failure> {
    let first = match source {
        TraceSource::PerRank(v) => v.first().cloned(),
        TraceSource::Shared(p) => Some(p.clone()),
    };
    let dirs = [trace.parent(), first.as_deref().and_then(Path::parent)];
    for dir in dirs.into_iter().flatten() {
        let p = dir.join(META_FILE);
        if p.is_file() {
            let bytes =
                input(std::fs::read(&p).with_context(|| format!("cannot read {}", p.display())))?;
            return Ok(Some((p, bytes)));
        }
    }
    Ok(None)
}

/// Runs `timeless stats`.
pub fn run_stats(args: StatsArgs) -> Result<(), Failure> {
    let (trace, sizes) = load(&args.file)?;
    let s = trace.stats();
    let precision = match trace.precision {
        Precision::Lossless => "lossless".to_string(),
        Precision::Relative(e) => format!("relative {e}"),
    };
    let out = format!(
        "ranks: {}\nactions: {}\nterminals: {}\nrules: {}\nsymbols: {}\nunique_grammars: {}\n\
         final_pass_rules: {}\nfinal_pass_symbols: {}\nunique_volume_streams: {}\nvolumes: {}\n\
         computes: {}\nprecision: {precision}\nbytes_header: {}\nbytes_meta: {}\nbytes_cst: {}\n\
         bytes_grammar: {}\nbytes_ranks: {}\nbytes_volumes: {}\nbytes_placement: {}\n\
         bytes_tracer_meta: {}\nbytes_total: {}\n",
        s.ranks,
        s.actions,
        s.terminals,
        s.rules,
        s.symbols,
        s.unique_grammars,
        s.meta_rules,
        s.meta_symbols,
        s.unique_volume_streams,
        s.volumes,
        s.computes,
        sizes.header,
        sizes.meta,
        sizes.cst,
        sizes.grammar,
        sizes.ranks,
        sizes.volumes,
        sizes.placement,
        sizes.tracer_meta,
        sizes.total()
    );
    std::io::stdout()
        .lock()
        .write_all(out.as_bytes())
        .map_err(|e| Failure::Other(e.into()))
}
