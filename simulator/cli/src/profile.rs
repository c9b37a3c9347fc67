//! `timeless profile`: mpisee-through for timeless profiles (tables, picture, balance check)
//! and `timeless profile diff A B`. Logic lives in `timeless-profile`; this parses and prints.

use std::path::PathBuf;

use anyhow::Context;
use clap::{Args, Subcommand, ValueEnum};
use timeless_profile::view::{self, Format};
use timeless_profile::{check, diff, store};

use crate::Failure;

/// Arguments of `timeless profile`.
#[derive(Debug, Args)]
#[command(args_conflicts_with_subcommands = true)]
pub struct ProfileArgs {
    #[command(subcommand)]
    pub command: Option<ProfileCommand>,
    /// Profile databases (`timeless trace --profile`, `timeless simulate --profile`).
    pub dbs: Vec<PathBuf>,
    /// Tables to show (default: communicators, by communicator, by operation).
    #[arg(long, value_enum, value_delimiter = ',')]
    pub view: Vec<View>,
    /// Output format.
    #[arg(long, value_enum, default_value_t = OutFormat::Text)]
    pub format: OutFormat,
    /// Bar chart of time per communicator and operation (`.svg` or `.png`; one database).
    #[arg(long)]
    pub plot: Option<PathBuf>,
}

/// `timeless profile diff`.
#[derive(Debug, Subcommand)]
pub enum ProfileCommand {
    /// Where time moved from A to B, per communicator and operation.
    Diff {
        /// Profile A (e.g. measured).
        a: PathBuf,
        /// Profile B (e.g. simulated).
        b: PathBuf,
        /// Output format.
        #[arg(long, value_enum, default_value_t = OutFormat::Text)]
        format: OutFormat,
    },
}

/// A table of `timeless profile`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum View {
    /// Communicators: name, parent, size, members.
    Comms,
    /// Per communicator.
    Comm,
    /// Per communicator and operation.
    Op,
    /// Per rank and communicator.
    Rank,
    /// Per communicator, operation and size bucket.
    Bucket,
}

/// Output formats.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum OutFormat {
    /// Aligned tables.
    Text,
    /// CSV.
    Csv,
    /// JSON.
    Json,
}

impl From<OutFormat> for Format {
    fn from(f: OutFormat) -> Format {
        match f {
            OutFormat::Text => Format::Text,
            OutFormat::Csv => Format::Csv,
            OutFormat::Json => Format::Json,
        }
    }
}

fn load(path: &std::path::Path) -> Result<timeless_profile::Profile, Failure> {
    store::read(path).map_err(|e| Failure::Input(e.into()))
}

fn print(s: &str) -> Result<(), Failure> {
    use std::io::Write;
    std::io::stdout()
        .lock()
        .write_all(s.as_bytes())
        .map_err(|e| Failure::Other(e.into()))
}

/// Runs `timeless profile`.
pub fn run(args: ProfileArgs) -> Result<(), Failure> {
    if let Some(ProfileCommand::Diff { a, b, format }) = args.command {
        let (pa, pb) = (load(&a)?, load(&b)?);
        let changes = diff::changes(&pa, &pb);
        if format == OutFormat::Text {
            print(&format!(
                "A: {} ({}, {})\nB: {} ({}, {})\n\n",
                a.display(),
                pa.meta.source.as_str(),
                pa.meta.program,
                b.display(),
                pb.meta.source.as_str(),
                pb.meta.program
            ))?;
        }
        return print(&view::render(&[diff::table(&changes)], format.into()));
    }
    if args.dbs.is_empty() {
        return Err(Failure::Input(anyhow::anyhow!(
            "name at least one profile database (timeless profile DB...)"
        )));
    }
    if args.plot.is_some() && args.dbs.len() != 1 {
        return Err(Failure::Input(anyhow::anyhow!(
            "--plot draws one profile; {} were given",
            args.dbs.len()
        )));
    }
    let views = if args.view.is_empty() {
        vec![View::Comms, View::Comm, View::Op]
    } else {
        args.view.clone()
    };
    for db in &args.dbs {
        let p = load(db)?;
        let mut tables = Vec::new();
        for v in &views {
            let mut t = match v {
                View::Comms => view::communicators(&p),
                View::Comm => view::by_communicator(&p),
                View::Op => view::by_operation(&p),
                View::Rank => view::by_rank(&p),
                View::Bucket => view::by_bucket(&p),
            };
            if args.dbs.len() > 1 {
                t.title = format!("{}: {}", db.display(), t.title);
            }
            tables.push(t);
        }
        if args.format == OutFormat::Text {
            print(&format!(
                "{} ({} profile of {}, {} ranks, {}, {})\n\n",
                db.display(),
                p.meta.source.as_str(),
                p.meta.program,
                p.meta.ranks,
                p.meta.mpi_library,
                p.meta.date
            ))?;
        }
        print(&view::render(&tables, args.format.into()))?;
        for v in check::p2p_balance(&p) {
            eprintln!(
                "timeless: warning: {}: sends and receives differ (001_* §II check): {v}",
                db.display()
            );
        }
        if let Some(out) = &args.plot {
            crate::calibrate::plot::font().map_err(|e| Failure::Other(anyhow::anyhow!(e)))?;
            timeless_profile::plot::bars(&p, out)
                .with_context(|| "drawing the profile")
                .map_err(Failure::Other)?;
        }
    }
    Ok(())
}

/// After `timeless trace --profile`: one line on the profile written by rank 0.
pub fn report_written(db: &std::path::Path) -> Result<(), Failure> {
    let p = store::read(db)
        .with_context(|| "the traced run wrote no usable profile (see the tracer's messages)")
        .map_err(Failure::Other)?;
    let calls: u64 = p.rows.iter().map(|r| r.stats.calls).sum();
    println!(
        "profile: {} ({} communicators, {} calls; `timeless profile {}`)",
        db.display(),
        p.comms.len(),
        calls,
        db.display()
    );
    for v in check::p2p_balance(&p) {
        eprintln!("timeless: warning: sends and receives differ (001_* §II check): {v}");
    }
    Ok(())
}
