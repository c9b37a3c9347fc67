//! Writes actions back as SimGrid 3.32 TI text lines (`timeless decompress`).
//!
//! The line written for an action re-parses ([`timeless_trace::parse_line`]) to the same
//! action. Volumes are written so that they parse back to the same f64: integers below 1e15 in
//! decimal, anything else in Rust's shortest round-trip exponent form (`2.5e6`). Actions that
//! only the seed's format can express (`recv` without a count, `wait` without a key) are written
//! in that dialect (`p3 recv p1`), which the parser accepts line by line.

use std::fmt::Write;

use timeless_trace::{Action, CommId, Datatype, Rank, RecvCount, RequestKey, WORLD};

use crate::error::GrammarError;

fn num(out: &mut String, v: f64) {
    if v.fract() == 0.0 && v.abs() < 1e15 {
        let _ = write!(out, " {}", v as i64);
    } else {
        let _ = write!(out, " {v:e}");
    }
}

fn dt(out: &mut String, d: Option<Datatype>) {
    if let Some(d) = d {
        let _ = write!(out, " {}", d.0);
    }
}

fn two_dts(out: &mut String, a: Option<Datatype>, b: Option<Datatype>) -> Result<(), GrammarError> {
    if a.is_none() && b.is_some() {
        return Err(GrammarError::Unrepresentable(
            "a receive datatype without a send datatype".into(),
        ));
    }
    dt(out, a);
    dt(out, b);
    Ok(())
}

fn counts(out: &mut String, v: &[u64], nranks: u32, what: &str) -> Result<(), GrammarError> {
    if v.len() != nranks as usize {
        return Err(GrammarError::Unrepresentable(format!(
            "{what} has {} entries, the world has {nranks} ranks",
            v.len()
        )));
    }
    for c in v {
        let _ = write!(out, " {c}");
    }
    Ok(())
}

/// Writes one rank's actions as TI lines, remembering the size of each communicator the rank
/// defines (per-peer count vectors of an action on a communicator have its size).
#[derive(Debug, Clone)]
pub struct RankTextWriter {
    rank: Rank,
    nranks: u32,
    comm_sizes: rustc_hash::FxHashMap<CommId, u32>,
}

impl RankTextWriter {
    /// A writer for world rank `rank` of `nranks`.
    pub fn new(rank: Rank, nranks: u32) -> Self {
        RankTextWriter {
            rank,
            nranks,
            comm_sizes: Default::default(),
        }
    }

    /// Appends the line (with its newline) of `action` on communicator `comm` (0 = world,
    /// written without a `comm=` field) at call site `callsite` (a trailing `@cs=<id>`).
    ///
    /// # Errors
    /// [`GrammarError::Unrepresentable`] for an action no TI line parses to (a count vector
    /// whose length is not the communicator's size, an undefined communicator...).
    pub fn write(
        &mut self,
        out: &mut String,
        action: &Action,
        comm: CommId,
        callsite: Option<u32>,
    ) -> Result<(), GrammarError> {
        let len = if comm == WORLD {
            self.nranks
        } else {
            *self.comm_sizes.get(&comm).ok_or_else(|| {
                GrammarError::Unrepresentable(format!(
                    "communicator {comm} used before its comm_def"
                ))
            })?
        };
        if let Action::CommDef { id, world_ranks } = action {
            self.comm_sizes.insert(*id, world_ranks.len() as u32);
        }
        write_action(out, self.rank, action, len)?;
        if comm != WORLD {
            out.pop();
            let _ = writeln!(out, " comm={comm}");
        }
        if let Some(cs) = callsite {
            out.pop();
            let _ = writeln!(out, " {}{cs}", timeless_trace::parse::CALLSITE_FIELD);
        }
        Ok(())
    }
}

/// Appends the TI line (with its trailing newline) of `action` executed by `rank` on the world
/// communicator, or on a communicator of `nranks` members (the length of count vectors).
///
/// # Errors
/// [`GrammarError::Unrepresentable`] for an action no TI line parses to (e.g. a per-rank count
/// vector whose length is not `nranks`).
pub fn write_action(
    out: &mut String,
    rank: Rank,
    action: &Action,
    nranks: u32,
) -> Result<(), GrammarError> {
    let kw = action.keyword();
    match action {
        Action::Recv {
            src,
            tag: 0,
            count: RecvCount::FromSender,
            dt: Some(Datatype::BYTE),
            blocking,
        } => {
            let name = if *blocking { "recv" } else { "Irecv" };
            let _ = writeln!(out, "p{rank} {name} p{src}");
            return Ok(());
        }
        Action::Recv {
            count: RecvCount::FromSender,
            ..
        } => {
            return Err(GrammarError::Unrepresentable(
                "a count-less receive with a tag or a datatype other than MPI_BYTE".into(),
            ))
        }
        Action::Wait(RequestKey::Oldest) => {
            let _ = writeln!(out, "p{rank} wait");
            return Ok(());
        }
        Action::Test(RequestKey::Oldest) => {
            return Err(GrammarError::Unrepresentable(
                "a test without a request key".into(),
            ))
        }
        _ => {}
    }
    let _ = write!(out, "{rank} {kw}");
    match action {
        Action::Init { double_default } => {
            if *double_default {
                out.push_str(" 0");
            }
        }
        Action::Finalize | Action::CommNoop | Action::WaitAll | Action::Barrier => {}
        Action::Location => out.push_str(" unknown 0"),
        Action::CommDef { id, world_ranks } => {
            let _ = write!(out, " {id} {}", world_ranks.len());
            for w in world_ranks.iter() {
                let _ = write!(out, " {w}");
            }
        }
        Action::Compute { flops } => num(out, *flops),
        Action::Sleep { secs } => num(out, *secs),
        Action::Send {
            dst,
            tag,
            count,
            dt: d,
            ..
        } => {
            let _ = write!(out, " {dst} {tag} {count}");
            dt(out, *d);
        }
        Action::Recv {
            src,
            tag,
            count,
            dt: d,
            ..
        } => {
            let c = match count {
                RecvCount::Count(c) => c.to_string(),
                _ => "-1".to_string(),
            };
            let _ = write!(out, " {src} {tag} {c}");
            dt(out, *d);
        }
        Action::Wait(k) | Action::Test(k) => {
            if let RequestKey::Key { src, dst, tag } = k {
                let _ = write!(out, " {src} {dst} {tag}");
            }
        }
        Action::SendRecv {
            send_count,
            dst,
            recv_count,
            src,
            send_dt,
            recv_dt,
        } => {
            let (Some(a), Some(b)) = (send_dt, recv_dt) else {
                return Err(GrammarError::Unrepresentable(
                    "sendRecv without both datatypes".into(),
                ));
            };
            let _ = write!(
                out,
                " {send_count} {dst} {recv_count} {src} {} {}",
                a.0, b.0
            );
        }
        Action::Bcast { count, root, dt: d } => {
            let _ = write!(out, " {count} {root}");
            dt(out, *d);
        }
        Action::Reduce {
            count,
            flops,
            root,
            dt: d,
        } => {
            let _ = write!(out, " {count}");
            num(out, *flops);
            let _ = write!(out, " {root}");
            dt(out, *d);
        }
        Action::AllReduce {
            count,
            flops,
            dt: d,
        }
        | Action::Scan {
            count,
            flops,
            dt: d,
        }
        | Action::ExScan {
            count,
            flops,
            dt: d,
        } => {
            let _ = write!(out, " {count}");
            num(out, *flops);
            dt(out, *d);
        }
        Action::AllToAll {
            send_count,
            recv_count,
            send_dt,
            recv_dt,
        }
        | Action::AllGather {
            send_count,
            recv_count,
            send_dt,
            recv_dt,
        } => {
            let _ = write!(out, " {send_count} {recv_count}");
            two_dts(out, *send_dt, *recv_dt)?;
        }
        Action::AllToAllV {
            send_counts,
            recv_counts,
            send_dt,
            recv_dt,
        } => {
            let _ = write!(out, " {}", send_counts.iter().sum::<u64>());
            counts(out, send_counts, nranks, "sendcounts")?;
            let _ = write!(out, " {}", recv_counts.iter().sum::<u64>());
            counts(out, recv_counts, nranks, "recvcounts")?;
            two_dts(out, *send_dt, *recv_dt)?;
        }
        Action::Gather {
            send_count,
            recv_count,
            root,
            send_dt,
            recv_dt,
        }
        | Action::Scatter {
            send_count,
            recv_count,
            root,
            send_dt,
            recv_dt,
        } => {
            let _ = write!(out, " {send_count} {recv_count} {root}");
            two_dts(out, *send_dt, *recv_dt)?;
        }
        Action::GatherV {
            send_count,
            recv_counts,
            root,
            send_dt,
            recv_dt,
        } => {
            let _ = write!(out, " {send_count}");
            counts(out, recv_counts, nranks, "recvcounts")?;
            let _ = write!(out, " {root}");
            two_dts(out, *send_dt, *recv_dt)?;
        }
        Action::AllGatherV {
            send_count,
            recv_counts,
            send_dt,
            recv_dt,
            disps,
        } => {
            let _ = write!(out, " {send_count}");
            counts(out, recv_counts, nranks, "recvcounts")?;
            match (send_dt, recv_dt, disps.is_empty()) {
                (_, _, true) => two_dts(out, *send_dt, *recv_dt)?,
                (Some(a), Some(b), false) => {
                    let _ = write!(out, " {} {}", a.0, b.0);
                    counts(out, disps, nranks, "disps")?;
                }
                (None, None, false) if nranks > 2 => counts(out, disps, nranks, "disps")?,
                _ => {
                    return Err(GrammarError::Unrepresentable(
                        "allgatherv displacements with one datatype, or without datatypes in a world of 2 or fewer ranks".into(),
                    ))
                }
            }
        }
        Action::ScatterV {
            send_counts,
            recv_count,
            root,
            send_dt,
            recv_dt,
        } => {
            counts(out, send_counts, nranks, "sendcounts")?;
            let _ = write!(out, " {recv_count} {root}");
            two_dts(out, *send_dt, *recv_dt)?;
        }
        Action::ReduceScatter {
            recv_counts,
            flops,
            dt: d,
        } => {
            counts(out, recv_counts, nranks, "recvcounts")?;
            num(out, *flops);
            dt(out, *d);
        }
    }
    out.push('\n');
    Ok(())
}
