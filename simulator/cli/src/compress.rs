//! `timeless compress`, `decompress` and `stats`: the compressed trace format of
//! `timeless-grammar` (Pilgrim-style CST + Sequitur grammars merged across ranks).

use std::io::Write as _;
use std::path::PathBuf;

use anyhow::Context;
use clap::Args;
use timeless_grammar::format::{self, PartSizes};
use timeless_grammar::{offline, CompressedTrace, Precision, DEFAULT_PRECISION};

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

/// The exit-code class of a compress/decompress error.
fn failure(e: offline::FileError) -> Failure {
    if e.is_input() {
        Failure::Input(e.into())
    } else {
        Failure::Other(e.into())
    }
}

/// Runs `timeless compress`.
pub fn run_compress(args: CompressArgs) -> Result<(), Failure> {
    let precision = input(Precision::from_flag(args.precision))?;
    let (trace, meta) = offline::compress_file(&args.trace, args.np, precision).map_err(failure)?;
    if let Some(path) = meta {
        eprintln!("timeless: embedding the tracer metadata {}", path.display());
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
    offline::decompress_to(trace, &args.output).map_err(failure)
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
