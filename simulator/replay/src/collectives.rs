//! From a collective trace action to the rank's point-to-point schedule.
//!
//! Counts become [`Payload`]s with the datatype sizes resolved against the rank's default
//! datatype; the flops of reductions are returned so the caller executes them after the
//! collective, on every rank (SimGrid 3.32 `smpi_replay.cpp`, `ReduceAction` & co).

use timeless_trace::Action;

use crate::collective::{self as coll, CollectiveConfig, CollectiveError, Op, Payload, VarPayload};
use crate::rank::RankState;

/// Appends `rank`'s schedule for `action` to `out` and returns the flops to execute afterwards.
///
/// # Errors
/// Invalid collective arguments (root outside the world, wrong number of counts).
pub fn schedule(
    cfg: &CollectiveConfig,
    st: &RankState,
    rank: u32,
    size: u32,
    action: &Action,
    out: &mut Vec<Op>,
) -> Result<f64, CollectiveError> {
    let p = |count: u64, dt| Payload::new(count, st.dt_size(dt));
    let flops = match *action {
        Action::Barrier => {
            coll::barrier(cfg, rank, size, out)?;
            0.0
        }
        Action::Bcast { count, root, dt } => {
            coll::bcast(cfg, rank, size, root, p(count, dt), out)?;
            0.0
        }
        Action::Reduce {
            count,
            flops,
            root,
            dt,
        } => {
            coll::reduce(cfg, rank, size, root, p(count, dt), out)?;
            flops
        }
        Action::AllReduce { count, flops, dt } => {
            coll::allreduce(cfg, rank, size, p(count, dt), out)?;
            flops
        }
        Action::AllToAll {
            send_count,
            recv_count,
            send_dt,
            recv_dt,
        } => {
            coll::alltoall(
                cfg,
                rank,
                size,
                p(send_count, send_dt),
                p(recv_count, recv_dt),
                out,
            )?;
            0.0
        }
        Action::AllToAllV {
            ref send_counts,
            ref recv_counts,
            send_dt,
            recv_dt,
        } => {
            let s = VarPayload::new(send_counts, st.dt_size(send_dt));
            let r = VarPayload::new(recv_counts, st.dt_size(recv_dt));
            coll::alltoallv(cfg, rank, size, s, r, out)?;
            0.0
        }
        Action::Gather {
            send_count,
            recv_count,
            root,
            send_dt,
            recv_dt,
        } => {
            coll::gather(
                cfg,
                rank,
                size,
                root,
                p(send_count, send_dt),
                p(recv_count, recv_dt),
                out,
            )?;
            0.0
        }
        Action::GatherV {
            send_count,
            ref recv_counts,
            root,
            send_dt,
            recv_dt,
        } => {
            let r = VarPayload::new(recv_counts, st.dt_size(recv_dt));
            coll::gatherv(cfg, rank, size, root, p(send_count, send_dt), r, out)?;
            0.0
        }
        Action::AllGather {
            send_count,
            recv_count,
            send_dt,
            recv_dt,
        } => {
            coll::allgather(
                cfg,
                rank,
                size,
                p(send_count, send_dt),
                p(recv_count, recv_dt),
                out,
            )?;
            0.0
        }
        Action::AllGatherV {
            send_count,
            ref recv_counts,
            send_dt,
            recv_dt,
            ref disps,
        } => {
            let r = VarPayload::new(recv_counts, st.dt_size(recv_dt));
            coll::allgatherv(cfg, rank, size, p(send_count, send_dt), r, disps, out)?;
            0.0
        }
        Action::Scatter {
            send_count,
            recv_count,
            root,
            send_dt,
            recv_dt,
        } => {
            coll::scatter(
                cfg,
                rank,
                size,
                root,
                p(send_count, send_dt),
                p(recv_count, recv_dt),
                out,
            )?;
            0.0
        }
        Action::ScatterV {
            ref send_counts,
            recv_count,
            root,
            send_dt,
            recv_dt,
        } => {
            let s = VarPayload::new(send_counts, st.dt_size(send_dt));
            coll::scatterv(cfg, rank, size, root, s, p(recv_count, recv_dt), out)?;
            0.0
        }
        Action::ReduceScatter {
            ref recv_counts,
            flops,
            dt,
        } => {
            coll::reduce_scatter(
                cfg,
                rank,
                size,
                VarPayload::new(recv_counts, st.dt_size(dt)),
                out,
            )?;
            flops
        }
        Action::Scan { count, flops, dt } => {
            coll::scan(cfg, rank, size, p(count, dt), out)?;
            flops
        }
        Action::ExScan { count, flops, dt } => {
            coll::exscan(cfg, rank, size, p(count, dt), out)?;
            flops
        }
        _ => unreachable!("point-to-point and local actions are expanded by the interpreter"),
    };
    Ok(flops)
}
