//! Collectives, blocking and nonblocking.

use super::*;

/// Declares a collective kind whose record is written by `$write` from the blocking form's
/// arguments (the communicator, named in brackets, last); the nonblocking form (same arguments plus a request)
/// also tracks its request. A collective on an intercommunicator is noted, not recorded.
macro_rules! collective {
    ($(#[$doc:meta])* $kind:ident => $write:ident [$comm:ident] ( $($a:ident : $t:ty),* )) => {
        $(#[$doc])*
        pub struct $kind;
        impl Hook<($($t,)* MPI_Comm,)> for $kind {
            type Stash = ();
            fn post(t: &mut Tracer, &($($a,)* $comm,): &($($t,)* MPI_Comm,), _: ()) -> Result<(), Fail> {
                if inter(t, $comm, stringify!($write))? {
                    return Ok(());
                }
                $write(t, $($a,)* $comm)
            }
        }
        impl Hook<($($t,)* MPI_Comm, Req,)> for $kind {
            type Stash = ();
            fn post(t: &mut Tracer, &($($a,)* $comm, req,): &($($t,)* MPI_Comm, Req,), _: ()) -> Result<(), Fail> {
                if inter(t, $comm, stringify!($write))? {
                    return Ok(());
                }
                $write(t, $($a,)* $comm)?;
                // SAFETY: the request output of a successful call.
                t.track(unsafe { *req }, Pending::Collective);
                Ok(())
            }
        }
    };
}

/// Collective on an intercommunicator: not recorded yet, noted.
fn inter(t: &mut Tracer, comm: MPI_Comm, what: &str) -> Result<bool, Fail> {
    let info = t.comm(comm)?;
    if info.is_inter {
        t.note(format_args!(
            "comm {}: {what} on an intercommunicator, not recorded",
            info.id
        ))?;
        return Ok(true);
    }
    Ok(false)
}

collective!(
    /// `barrier`, `ibarrier`.
    Barrier => barrier[comm]()
);
fn barrier(t: &mut Tracer, comm: MPI_Comm) -> Result<(), Fail> {
    t.on_record(comm, Record::Barrier)
}

collective!(
    /// `bcast`, `ibcast`.
    Bcast => bcast[comm](b: RB, count: c_int, dt: Dt, root: c_int)
);
fn bcast(
    t: &mut Tracer,
    _: RB,
    count: c_int,
    dt: Dt,
    root: c_int,
    comm: MPI_Comm,
) -> Result<(), Fail> {
    let (n, id) = t.volume(count, dt)?;
    let r = t.root(comm, root)?;
    t.on_record(
        comm,
        Record::Bcast {
            count: n,
            root: r,
            dt: id,
        },
    )
}

collective!(
    /// `reduce`, `ireduce`.
    Reduce => reduce[comm](s: SB, r: RB, count: c_int, dt: Dt, op: MPI_Op, root: c_int)
);
#[allow(clippy::too_many_arguments)]
fn reduce(
    t: &mut Tracer,
    _: SB,
    _: RB,
    count: c_int,
    dt: Dt,
    _: MPI_Op,
    root: c_int,
    comm: MPI_Comm,
) -> Result<(), Fail> {
    let (n, id) = t.volume(count, dt)?;
    let r = t.root(comm, root)?;
    t.on_record(
        comm,
        Record::Reduce {
            count: n,
            root: r,
            dt: id,
        },
    )
}

/// Writes `<keyword> count 0 dt` (allreduce, scan, exscan).
fn reduction(
    t: &mut Tracer,
    op: Reduction,
    count: c_int,
    dt: Dt,
    comm: MPI_Comm,
) -> Result<(), Fail> {
    let (n, id) = t.volume(count, dt)?;
    t.on_record(
        comm,
        Record::Reduction {
            op,
            count: n,
            dt: id,
        },
    )
}

collective!(
    /// `allreduce`, `iallreduce`.
    AllReduce => allreduce[comm](s: SB, r: RB, count: c_int, dt: Dt, op: MPI_Op)
);
fn allreduce(
    t: &mut Tracer,
    _: SB,
    _: RB,
    count: c_int,
    dt: Dt,
    _: MPI_Op,
    comm: MPI_Comm,
) -> Result<(), Fail> {
    reduction(t, Reduction::AllReduce, count, dt, comm)
}

collective!(
    /// `scan`, `iscan`.
    Scan => scan[comm](s: SB, r: RB, count: c_int, dt: Dt, op: MPI_Op)
);
fn scan(
    t: &mut Tracer,
    _: SB,
    _: RB,
    count: c_int,
    dt: Dt,
    _: MPI_Op,
    comm: MPI_Comm,
) -> Result<(), Fail> {
    reduction(t, Reduction::Scan, count, dt, comm)
}

collective!(
    /// `exscan`, `iexscan`.
    ExScan => exscan[comm](s: SB, r: RB, count: c_int, dt: Dt, op: MPI_Op)
);
fn exscan(
    t: &mut Tracer,
    _: SB,
    _: RB,
    count: c_int,
    dt: Dt,
    _: MPI_Op,
    comm: MPI_Comm,
) -> Result<(), Fail> {
    reduction(t, Reduction::ExScan, count, dt, comm)
}

collective!(
    /// `reduce_scatter_block`, `ireduce_scatter_block`: equal counts.
    ReduceScatterBlock => reduce_scatter_block[comm](s: SB, r: RB, count: c_int, dt: Dt, op: MPI_Op)
);
fn reduce_scatter_block(
    t: &mut Tracer,
    _: SB,
    _: RB,
    count: c_int,
    dt: Dt,
    _: MPI_Op,
    comm: MPI_Comm,
) -> Result<(), Fail> {
    let (n, id) = t.volume(count, dt)?;
    let counts = vec![n; t.comm_size(comm)?];
    t.on(
        comm,
        format_args!("reducescatter {} 0 {id}", Counts(&counts)),
    )
}

collective!(
    /// `reduce_scatter`, `ireduce_scatter`.
    ReduceScatter => reduce_scatter[comm](s: SB, r: RB, counts: Ints, dt: Dt, op: MPI_Op)
);
fn reduce_scatter(
    t: &mut Tracer,
    _: SB,
    _: RB,
    counts: Ints,
    dt: Dt,
    _: MPI_Op,
    comm: MPI_Comm,
) -> Result<(), Fail> {
    let n = t.comm_size(comm)?;
    let (c, id) = t.volumes(ints(counts, n), n, dt)?;
    t.on(comm, format_args!("reducescatter {} 0 {id}", Counts(&c)))
}

collective!(
    /// `gather`, `igather`.
    Gather => gather[comm](sbuf: SB, sc: c_int, sdt: Dt, rbuf: RB, rc: c_int, rdt: Dt, root: c_int)
);
/// Receive arguments count at the root only (elsewhere the send ones are written twice);
/// `MPI_IN_PLACE` at the root sends the root's block of the receive buffer.
#[allow(clippy::too_many_arguments)]
fn gather(
    t: &mut Tracer,
    sbuf: SB,
    sc: c_int,
    sdt: Dt,
    _: RB,
    rc: c_int,
    rdt: Dt,
    root: c_int,
    comm: MPI_Comm,
) -> Result<(), Fail> {
    let is_root = t.local_rank(comm)? == root;
    let (s, sid) = if is_root && in_place(sbuf) {
        t.volume(rc, rdt)?
    } else {
        t.volume(sc, sdt)?
    };
    let (r, rid) = if is_root {
        t.volume(rc, rdt)?
    } else {
        (s, sid)
    };
    let w = t.root(comm, root)?;
    t.on_record(
        comm,
        Record::Rooted {
            scatter: false,
            send_count: s,
            recv_count: r,
            root: w,
            send_dt: sid,
            recv_dt: rid,
        },
    )
}

collective!(
    /// `gatherv`, `igatherv`.
    GatherV => gatherv[comm](sbuf: SB, sc: c_int, sdt: Dt, rbuf: RB, rcs: Ints, displs: Ints, rdt: Dt, root: c_int)
);
/// The counts are the root's (zeros elsewhere).
#[allow(clippy::too_many_arguments)]
fn gatherv(
    t: &mut Tracer,
    sbuf: SB,
    sc: c_int,
    sdt: Dt,
    _: RB,
    rcs: Ints,
    _: Ints,
    rdt: Dt,
    root: c_int,
    comm: MPI_Comm,
) -> Result<(), Fail> {
    let me = t.local_rank(comm)?;
    let n = t.comm_size(comm)?;
    let (s, sid, r, rid) = if me == root {
        let (r, rid) = t.volumes(ints(rcs, n), n, rdt)?;
        let (s, sid) = if in_place(sbuf) {
            (r[me as usize], rid)
        } else {
            t.volume(sc, sdt)?
        };
        (s, sid, r, rid)
    } else {
        let (s, sid) = t.volume(sc, sdt)?;
        (s, sid, vec![0; n], sid)
    };
    let w = t.root(comm, root)?;
    t.on(
        comm,
        format_args!("gatherv {s} {} {w} {sid} {rid}", Counts(&r)),
    )
}

collective!(
    /// `scatter`, `iscatter`.
    Scatter => scatter[comm](sbuf: SB, sc: c_int, sdt: Dt, rbuf: RB, rc: c_int, rdt: Dt, root: c_int)
);
/// Send arguments count at the root only (elsewhere the receive ones are written twice);
/// `MPI_IN_PLACE` at the root keeps the root's block in the send buffer.
#[allow(clippy::too_many_arguments)]
fn scatter(
    t: &mut Tracer,
    _: SB,
    sc: c_int,
    sdt: Dt,
    rbuf: RB,
    rc: c_int,
    rdt: Dt,
    root: c_int,
    comm: MPI_Comm,
) -> Result<(), Fail> {
    let is_root = t.local_rank(comm)? == root;
    let (r, rid) = if is_root && in_place(rbuf) {
        t.volume(sc, sdt)?
    } else {
        t.volume(rc, rdt)?
    };
    let (s, sid) = if is_root {
        t.volume(sc, sdt)?
    } else {
        (r, rid)
    };
    let w = t.root(comm, root)?;
    t.on_record(
        comm,
        Record::Rooted {
            scatter: true,
            send_count: s,
            recv_count: r,
            root: w,
            send_dt: sid,
            recv_dt: rid,
        },
    )
}

collective!(
    /// `scatterv`, `iscatterv`.
    ScatterV => scatterv[comm](sbuf: SB, scs: Ints, displs: Ints, sdt: Dt, rbuf: RB, rc: c_int, rdt: Dt, root: c_int)
);
/// The counts are the root's (zeros elsewhere).
#[allow(clippy::too_many_arguments)]
fn scatterv(
    t: &mut Tracer,
    _: SB,
    scs: Ints,
    _: Ints,
    sdt: Dt,
    rbuf: RB,
    rc: c_int,
    rdt: Dt,
    root: c_int,
    comm: MPI_Comm,
) -> Result<(), Fail> {
    let me = t.local_rank(comm)?;
    let n = t.comm_size(comm)?;
    let (s, sid, r, rid) = if me == root {
        let (s, sid) = t.volumes(ints(scs, n), n, sdt)?;
        let (r, rid) = if in_place(rbuf) {
            (s[me as usize], sid)
        } else {
            t.volume(rc, rdt)?
        };
        (s, sid, r, rid)
    } else {
        let (r, rid) = t.volume(rc, rdt)?;
        (vec![0; n], rid, r, rid)
    };
    let w = t.root(comm, root)?;
    t.on(
        comm,
        format_args!("scatterv {} {r} {w} {sid} {rid}", Counts(&s)),
    )
}

collective!(
    /// `allgather`, `iallgather`.
    AllGather => allgather[comm](sbuf: SB, sc: c_int, sdt: Dt, rbuf: RB, rc: c_int, rdt: Dt)
);
#[allow(clippy::too_many_arguments)]
fn allgather(
    t: &mut Tracer,
    sbuf: SB,
    sc: c_int,
    sdt: Dt,
    _: RB,
    rc: c_int,
    rdt: Dt,
    comm: MPI_Comm,
) -> Result<(), Fail> {
    let (r, rid) = t.volume(rc, rdt)?;
    let (s, sid) = if in_place(sbuf) {
        (r, rid)
    } else {
        t.volume(sc, sdt)?
    };
    t.on_record(
        comm,
        Record::AllTo {
            alltoall: false,
            send_count: s,
            recv_count: r,
            send_dt: sid,
            recv_dt: rid,
        },
    )
}

collective!(
    /// `allgatherv`, `iallgatherv`.
    AllGatherV => allgatherv[comm](sbuf: SB, sc: c_int, sdt: Dt, rbuf: RB, rcs: Ints, displs: Ints, rdt: Dt)
);
/// Displacements are not written: they do not affect timing.
#[allow(clippy::too_many_arguments)]
fn allgatherv(
    t: &mut Tracer,
    sbuf: SB,
    sc: c_int,
    sdt: Dt,
    _: RB,
    rcs: Ints,
    _: Ints,
    rdt: Dt,
    comm: MPI_Comm,
) -> Result<(), Fail> {
    let me = t.local_rank(comm)? as usize;
    let n = t.comm_size(comm)?;
    let (r, rid) = t.volumes(ints(rcs, n), n, rdt)?;
    let (s, sid) = if in_place(sbuf) {
        (r[me], rid)
    } else {
        t.volume(sc, sdt)?
    };
    t.on(
        comm,
        format_args!("allgatherv {s} {} {sid} {rid}", Counts(&r)),
    )
}

collective!(
    /// `alltoall`, `ialltoall`.
    AllToAll => alltoall[comm](sbuf: SB, sc: c_int, sdt: Dt, rbuf: RB, rc: c_int, rdt: Dt)
);
#[allow(clippy::too_many_arguments)]
fn alltoall(
    t: &mut Tracer,
    sbuf: SB,
    sc: c_int,
    sdt: Dt,
    _: RB,
    rc: c_int,
    rdt: Dt,
    comm: MPI_Comm,
) -> Result<(), Fail> {
    let (r, rid) = t.volume(rc, rdt)?;
    let (s, sid) = if in_place(sbuf) {
        (r, rid)
    } else {
        t.volume(sc, sdt)?
    };
    t.on_record(
        comm,
        Record::AllTo {
            alltoall: true,
            send_count: s,
            recv_count: r,
            send_dt: sid,
            recv_dt: rid,
        },
    )
}

collective!(
    /// `alltoallv`, `ialltoallv`.
    AllToAllV => alltoallv[comm](sbuf: SB, scs: Ints, sd: Ints, sdt: Dt, rbuf: RB, rcs: Ints, rd: Ints, rdt: Dt)
);
/// Buffer sizes are the sums of the counts.
#[allow(clippy::too_many_arguments)]
fn alltoallv(
    t: &mut Tracer,
    sbuf: SB,
    scs: Ints,
    _: Ints,
    sdt: Dt,
    _: RB,
    rcs: Ints,
    _: Ints,
    rdt: Dt,
    comm: MPI_Comm,
) -> Result<(), Fail> {
    let n = t.comm_size(comm)?;
    let (r, rid) = t.volumes(ints(rcs, n), n, rdt)?;
    let (s, sid) = if in_place(sbuf) {
        (r.clone(), rid)
    } else {
        t.volumes(ints(scs, n), n, sdt)?
    };
    let (ss, rs): (u64, u64) = (s.iter().sum(), r.iter().sum());
    t.on(
        comm,
        format_args!(
            "alltoallv {ss} {} {rs} {} {sid} {rid}",
            Counts(&s),
            Counts(&r)
        ),
    )
}

collective!(
    /// `alltoallw`, `ialltoallw`: written as `alltoallv` in bytes (datatype id 6), each peer's
    /// count times the size of that peer's datatype.
    AllToAllW => alltoallw[comm](sbuf: SB, scs: Ints, sd: Ints, sts: *const Dt, rbuf: RB, rcs: Ints, rd: Ints, rts: *const Dt)
);
#[allow(clippy::too_many_arguments)]
fn alltoallw(
    t: &mut Tracer,
    sbuf: SB,
    scs: Ints,
    _: Ints,
    sts: *const Dt,
    _: RB,
    rcs: Ints,
    _: Ints,
    rts: *const Dt,
    comm: MPI_Comm,
) -> Result<(), Fail> {
    let n = t.comm_size(comm)?;
    let r = bytes_per_peer(rcs, rts, n)?;
    let s = if in_place(sbuf) {
        r.clone()
    } else {
        bytes_per_peer(scs, sts, n)?
    };
    let (ss, rs): (u64, u64) = (s.iter().sum(), r.iter().sum());
    t.on(
        comm,
        format_args!(
            "alltoallv {ss} {} {rs} {} {BYTE_ID} {BYTE_ID}",
            Counts(&s),
            Counts(&r)
        ),
    )
}

/// Bytes for each of `n` peers: `counts[i]` elements of `types[i]` (a zero count needs no
/// valid datatype).
fn bytes_per_peer(counts: Ints, types: *const Dt, n: usize) -> Result<Vec<u64>, Fail> {
    let (Some(counts), false) = (ints(counts, n), types.is_null()) else {
        return Ok(vec![0; n]);
    };
    // SAFETY: a significant datatype array of a successful call has one entry per peer.
    let types = unsafe { std::slice::from_raw_parts(types, n) };
    counts
        .iter()
        .zip(types)
        .map(|(&c, &dt)| {
            if c <= 0 {
                return Ok(0);
            }
            mpi::type_size(dt)
                .map(|size| c as u64 * size)
                .ok_or_else(|| Fail::new("MPI_Type_size failed"))
        })
        .collect()
}
