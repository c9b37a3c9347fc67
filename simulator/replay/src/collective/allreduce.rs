//! `MPI_Allreduce` (`src/smpi/colls/allreduce/*.cpp`, `smpi_default_selector.cpp`). Tag
//! [`tags::ALLREDUCE`](super::tags::ALLREDUCE) unless the algorithm delegates to other
//! collectives (which then use their own tags).
//!
//! Default (`allreduce__default`, basic datatypes): `reduce__default` to root 0 then
//! `bcast__default` (binomial tree) from 0. These two are the *defaults*, whatever
//! `smpi/reduce` and `smpi/bcast` say; `redbcast` uses the configured ones.
//!
//! The `flops` of the trace action are left to the caller.

use super::sched::{algo_names, check_comm, is_pow2, pof2_floor, Sched};
use super::tags::ALLREDUCE as TAG;
use super::{allgather, alltoall, bcast, reduce, CollectiveConfig, CollectiveError, Op, Payload};

/// `smpi/allreduce` algorithms implemented by timeless.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AllreduceAlgo {
    /// `allreduce__default`: default reduce to 0, then binomial bcast from 0.
    #[default]
    Default,
    /// Ring reduce-scatter then ring allgather on `count / n`-element blocks (count ≥ n).
    Lr,
    /// Recursive-halving reduce-scatter + recursive-doubling allgather (Rabenseifner, all n).
    RabRdb,
    /// Rabenseifner for power-of-two n (falls back to [`AllreduceAlgo::RabRdb`] otherwise).
    Rab1,
    /// Alltoall then allgather with the configured algorithms.
    Rab2,
    /// Recursive doubling on whole buffers, with a pre/post step for the extra ranks.
    Rdb,
    /// The configured reduce to 0, then the configured bcast from 0.
    Redbcast,
}

algo_names!(AllreduceAlgo {
    Default => "default",
    Lr => "lr",
    Rab1 => "rab1",
    Rab2 => "rab2",
    RabRdb => "rab_rdb",
    Rdb => "rdb",
    Redbcast => "redbcast",
});

/// Appends rank `rank`'s schedule for an allreduce of `data` (without the `flops`).
pub fn allreduce(
    cfg: &CollectiveConfig,
    rank: u32,
    size: u32,
    data: Payload,
    out: &mut Vec<Op>,
) -> Result<(), CollectiveError> {
    check_comm(rank, size, None)?;
    let mut s = Sched::new(rank, size, out);
    run(cfg, &mut s, data)?;
    debug_assert!(s.is_settled());
    Ok(())
}

/// `colls::allreduce` as called from inside other algorithms.
pub(crate) fn run(
    cfg: &CollectiveConfig,
    s: &mut Sched,
    data: Payload,
) -> Result<(), CollectiveError> {
    match cfg.allreduce {
        AllreduceAlgo::Default => {
            reduce::default(s, 0, data.bytes());
            bcast::binomial_tree(s, 0, data.bytes());
        }
        AllreduceAlgo::Redbcast => redbcast(cfg, s, data),
        AllreduceAlgo::Lr => lr(cfg, s, data)?,
        AllreduceAlgo::Rdb => rdb(s, data.bytes()),
        AllreduceAlgo::RabRdb => rab_rdb(s, data),
        AllreduceAlgo::Rab1 => {
            if is_pow2(s.size) {
                rab1(cfg, s, data)?;
            } else {
                // SimGrid throws "can't be used with non power of two number of processes".
                rab_rdb(s, data);
            }
        }
        AllreduceAlgo::Rab2 => rab2(cfg, s, data)?,
    }
    Ok(())
}

/// `allreduce__redbcast`: `colls::reduce` to 0 then `colls::bcast` from 0 (configured ones).
fn redbcast(cfg: &CollectiveConfig, s: &mut Sched, data: Payload) {
    reduce::run(cfg.reduce, s, 0, data);
    bcast::run(cfg.bcast, s, 0, data);
}

/// `allreduce__lr`: with fewer elements than ranks, `redbcast`. Else blocks of `count / n`
/// elements go n-1 steps around the ring (to rank+1, from rank-1, tag `ALLREDUCE + i` at step
/// i) for the reduce-scatter, then n-1 more for the allgather; the `count % n` leftover
/// elements go through `colls::allreduce` (the configured algorithm, i.e. `lr` again, which then
/// takes its `redbcast` branch).
fn lr(cfg: &CollectiveConfig, s: &mut Sched, data: Payload) -> Result<(), CollectiveError> {
    let n = u64::from(s.size);
    if data.count < n {
        redbcast(cfg, s, data);
        return Ok(());
    }
    let block = data.count / n * data.dt_size;
    let to = s.plus(1);
    let from = s.minus(1);
    for _phase in 0..2 {
        for i in 0..s.size - 1 {
            let tag = TAG + i as i32;
            s.sendrecv_tags(to, block, tag, from, block, tag);
        }
    }
    let remainder = data.count % n;
    if remainder != 0 {
        run(cfg, s, Payload::new(remainder, data.dt_size))?;
    }
    Ok(())
}

/// Rank of the peer of `newrank ^ mask` in the folded communicator of the MPICH algorithms
/// (the first `2 rem` ranks pair up, the odd one of each pair stays).
fn unfold(newdst: u32, rem: u32) -> u32 {
    if newdst < rem {
        newdst * 2 + 1
    } else {
        newdst + rem
    }
}

/// The MPICH fold: among the first `2 rem` ranks the even ones send their whole buffer to the
/// odd ones and drop out. Returns the rank in the folded power-of-two communicator.
fn fold(s: &mut Sched, rem: u32, bytes: u64) -> Option<u32> {
    let rank = s.rank;
    if rank < 2 * rem {
        if rank & 1 == 0 {
            s.send(rank + 1, bytes, TAG);
            None
        } else {
            s.recv(rank - 1, bytes, TAG);
            Some(rank / 2)
        }
    } else {
        Some(rank - rem)
    }
}

/// The unfold at the end: odd ranks send the result back to their even partner.
fn unfold_result(s: &mut Sched, rem: u32, bytes: u64) {
    let rank = s.rank;
    if rank < 2 * rem {
        if rank & 1 == 1 {
            s.send(rank - 1, bytes, TAG);
        } else {
            s.recv(rank + 1, bytes, TAG);
        }
    }
}

/// `allreduce__rdb`: fold to a power of two, `sendrecv` whole buffers with `newrank ^ mask`,
/// unfold. (Its local copies through self-`sendrecv`s cost nothing.)
fn rdb(s: &mut Sched, bytes: u64) {
    let pof2 = pof2_floor(s.size);
    let rem = s.size - pof2;
    if let Some(newrank) = fold(s, rem, bytes) {
        let mut mask = 1;
        while mask < pof2 {
            let dst = unfold(newrank ^ mask, rem);
            s.sendrecv(dst, bytes, dst, bytes, TAG);
            mask <<= 1;
        }
    }
    unfold_result(s, rem, bytes);
}

/// `allreduce__rab_rdb`: fold, recursive-halving reduce-scatter over `pof2` blocks (the last one
/// takes the rest of the division), recursive-doubling allgather, unfold.
fn rab_rdb(s: &mut Sched, data: Payload) {
    let pof2 = pof2_floor(s.size);
    let rem = s.size - pof2;
    let dt = data.dt_size;
    if let Some(newrank) = fold(s, rem, data.bytes()) {
        let p = pof2 as usize;
        let mut cnts = vec![data.count / u64::from(pof2); p];
        cnts[p - 1] = data.count - (data.count / u64::from(pof2)) * (u64::from(pof2) - 1);
        let sum = |a: u32, b: u32| -> u64 { cnts[a as usize..b as usize].iter().sum() };
        let (mut send_idx, mut recv_idx, mut last_idx) = (0u32, 0u32, pof2);
        let mut mask = 1u32;
        while mask < pof2 {
            let newdst = newrank ^ mask;
            let dst = unfold(newdst, rem);
            let (send_cnt, recv_cnt);
            if newrank < newdst {
                send_idx = recv_idx + pof2 / (mask * 2);
                send_cnt = sum(send_idx, last_idx);
                recv_cnt = sum(recv_idx, send_idx);
            } else {
                recv_idx = send_idx + pof2 / (mask * 2);
                send_cnt = sum(send_idx, recv_idx);
                recv_cnt = sum(recv_idx, last_idx);
            }
            s.sendrecv(dst, send_cnt * dt, dst, recv_cnt * dt, TAG);
            send_idx = recv_idx;
            mask <<= 1;
            if mask < pof2 {
                last_idx = recv_idx + pof2 / mask;
            }
        }
        mask >>= 1;
        while mask > 0 {
            let newdst = newrank ^ mask;
            let dst = unfold(newdst, rem);
            let (send_cnt, recv_cnt);
            if newrank < newdst {
                if mask != pof2 / 2 {
                    last_idx += pof2 / (mask * 2);
                }
                recv_idx = send_idx + pof2 / (mask * 2);
                send_cnt = sum(send_idx, recv_idx);
                recv_cnt = sum(recv_idx, last_idx);
            } else {
                recv_idx = send_idx - pof2 / (mask * 2);
                send_cnt = sum(send_idx, last_idx);
                recv_cnt = sum(recv_idx, send_idx);
            }
            s.sendrecv(dst, send_cnt * dt, dst, recv_cnt * dt, TAG);
            if newrank > newdst {
                send_idx = recv_idx;
            }
            mask >>= 1;
        }
    }
    unfold_result(s, rem, data.bytes());
}

/// `allreduce__rab1` (power-of-two n): recursive halving with `rank ^ mask`, mask = n/2 … 1,
/// exchanging `c / (n / mask)` elements where c is the count rounded up to a multiple of n
/// (`(count + n) / n × n` when it is not one), then `colls::allgather` of the last block.
fn rab1(cfg: &CollectiveConfig, s: &mut Sched, data: Payload) -> Result<(), CollectiveError> {
    let n = u64::from(s.size);
    let pof2 = s.size; // a power of two here
    let leftover = data.count % n;
    let total = if leftover > 0 {
        (data.count + n) / n * n
    } else {
        data.count
    };
    let mut block = total;
    let mut mask = pof2 / 2;
    while mask > 0 {
        let dst = s.rank ^ mask;
        block = total / u64::from(pof2 / mask);
        s.sendrecv(dst, block * data.dt_size, dst, block * data.dt_size, TAG);
        mask >>= 1;
    }
    let part = Payload::new(block, data.dt_size);
    allgather::run(cfg, s, part, part)
}

/// `allreduce__rab2`: `colls::alltoall` of `count / n` elements per peer (when n does not divide
/// the count: `(count + n) / n`, or n when count < n), then `colls::allgather` of the same block.
fn rab2(cfg: &CollectiveConfig, s: &mut Sched, data: Payload) -> Result<(), CollectiveError> {
    let n = u64::from(s.size);
    let leftover = data.count % n;
    let send_size = if leftover > 0 {
        if data.count < n {
            n
        } else {
            (data.count + n) / n
        }
    } else {
        data.count / n
    };
    let part = Payload::new(send_size, data.dt_size);
    alltoall::run(cfg, s, part, part)?;
    allgather::run(cfg, s, part, part)
}
