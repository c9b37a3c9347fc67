//! Neighbourhood collectives (`MPI_Neighbor_allgather`, `MPI_Neighbor_alltoall`), written as
//! the point-to-point actions they perform: SimGrid 3.32 has no action for them, and as
//! messages the simulator replays them exactly.
//!
//! A rank posts an `irecv` from each in-neighbour of the communicator's topology, an `isend`
//! to each out-neighbour (the whole send block for `allgather`, block i for `alltoall`; the
//! counts are the same), then a `wait` for each, all on the communicator (`comm=<id>`):
//!
//! ```text
//! 0 irecv 2 -1001 2 1 comm=1     (from the -1 neighbour of dimension 0: travels up)
//! 0 irecv 2 -1000 2 1 comm=1     (from the +1 neighbour: travels down)
//! 0 isend 2 -1000 2 1 comm=1     (to the -1 neighbour: down)
//! 0 isend 2 -1001 2 1 comm=1     (to the +1 neighbour: up)
//! 0 wait 2 0 -1001 comm=1 ...
//! ```
//!
//! Neighbours follow the MPI standard's order: for a Cartesian communicator, per dimension the
//! neighbour at displacement -1 then +1 (`MPI_Cart_shift`), `MPI_PROC_NULL` ones skipped; for a
//! graph, `MPI_Graph_neighbors`; for a distributed graph, `MPI_Dist_graph_neighbors`. Program
//! tags are never negative, so the tags these records use cannot match the program's own
//! messages. On a Cartesian communicator the tag names the dimension `d` and the direction the
//! message travels ([`tag_down`], [`tag_up`]): in a periodic dimension of two ranks both
//! neighbours are the same rank, and the tag keeps the two messages apart as MPI's neighbour
//! semantics do. On graphs every message uses [`NEIGHBOR_TAG`], matched in posting order.
//! A call on a communicator without topology fails in MPI, so it is never recorded.

use super::*;

/// Tag of neighbourhood messages on graph topologies; Cartesian tags count down from it.
pub const NEIGHBOR_TAG: i32 = -1000;

/// Tag of a message travelling towards lower coordinates in dimension `d`.
pub fn tag_down(d: u32) -> i32 {
    NEIGHBOR_TAG - 2 * d as i32
}

/// Tag of a message travelling towards higher coordinates in dimension `d`.
pub fn tag_up(d: u32) -> i32 {
    NEIGHBOR_TAG - 2 * d as i32 - 1
}

/// One neighbour: its rank in the communicator (`MPI_PROC_NULL` possible) and the message tag.
type Link = (c_int, i32);

/// In-neighbours (receive side) and out-neighbours (send side) of this rank in `comm`'s
/// topology, in the order of the MPI standard.
fn neighbours(comm: MPI_Comm) -> Result<(Vec<Link>, Vec<Link>), Fail> {
    let fail = |what: &str| Fail::new(format!("neighbourhood collective: {what} failed"));
    let mut kind: c_int = 0;
    // SAFETY: a valid communicator of a successful call; locals.
    if unsafe { mpi_sys::PMPI_Topo_test(comm, &mut kind) } != mpi::SUCCESS {
        return Err(fail("MPI_Topo_test"));
    }
    // SAFETY: constants of the shim of mpi-sys.
    let (cart, graph, dist) = unsafe {
        (
            mpi_sys::RSMPI_CART,
            mpi_sys::RSMPI_GRAPH,
            mpi_sys::RSMPI_DIST_GRAPH,
        )
    };
    let (mut ins, mut outs) = (Vec::new(), Vec::new());
    if kind == cart {
        let mut ndims: c_int = 0;
        // SAFETY: as above.
        if unsafe { mpi_sys::PMPI_Cartdim_get(comm, &mut ndims) } != mpi::SUCCESS {
            return Err(fail("MPI_Cartdim_get"));
        }
        for d in 0..ndims.max(0) {
            let (mut lower, mut upper) = (0, 0);
            // SAFETY: as above.
            if unsafe { mpi_sys::PMPI_Cart_shift(comm, d, 1, &mut lower, &mut upper) }
                != mpi::SUCCESS
            {
                return Err(fail("MPI_Cart_shift"));
            }
            let d = d as u32;
            // From the lower neighbour a message travels up, from the upper one down.
            ins.push((lower, tag_up(d)));
            ins.push((upper, tag_down(d)));
            outs.push((lower, tag_down(d)));
            outs.push((upper, tag_up(d)));
        }
    } else if kind == graph {
        let (rank, _) = mpi::rank_size(comm).ok_or_else(|| fail("MPI_Comm_rank"))?;
        let mut n: c_int = 0;
        // SAFETY: as above.
        if unsafe { mpi_sys::PMPI_Graph_neighbors_count(comm, rank, &mut n) } != mpi::SUCCESS {
            return Err(fail("MPI_Graph_neighbors_count"));
        }
        let mut v = vec![0 as c_int; n.max(0) as usize];
        // SAFETY: an array of `n` ints.
        if unsafe { mpi_sys::PMPI_Graph_neighbors(comm, rank, n, v.as_mut_ptr()) } != mpi::SUCCESS {
            return Err(fail("MPI_Graph_neighbors"));
        }
        ins = v.iter().map(|&r| (r, NEIGHBOR_TAG)).collect();
        outs = ins.clone();
    } else if kind == dist {
        let (mut indeg, mut outdeg, mut weighted) = (0, 0, 0);
        // SAFETY: as above.
        if unsafe {
            mpi_sys::PMPI_Dist_graph_neighbors_count(comm, &mut indeg, &mut outdeg, &mut weighted)
        } != mpi::SUCCESS
        {
            return Err(fail("MPI_Dist_graph_neighbors_count"));
        }
        let (ni, no) = (indeg.max(0) as usize, outdeg.max(0) as usize);
        let (mut src, mut dst) = (vec![0 as c_int; ni], vec![0 as c_int; no]);
        let (mut sw, mut dw) = (vec![0 as c_int; ni.max(1)], vec![0 as c_int; no.max(1)]);
        // SAFETY: arrays of the sizes the library gave.
        let rc = unsafe {
            mpi_sys::PMPI_Dist_graph_neighbors(
                comm,
                indeg,
                src.as_mut_ptr(),
                sw.as_mut_ptr(),
                outdeg,
                dst.as_mut_ptr(),
                dw.as_mut_ptr(),
            )
        };
        if rc != mpi::SUCCESS {
            return Err(fail("MPI_Dist_graph_neighbors"));
        }
        ins = src.iter().map(|&r| (r, NEIGHBOR_TAG)).collect();
        outs = dst.iter().map(|&r| (r, NEIGHBOR_TAG)).collect();
    } else {
        return Err(fail("a topology (the communicator has none)"));
    }
    Ok((ins, outs))
}

/// Writes the point-to-point expression of a neighbourhood collective that sends `scount`
/// elements of `sdt` to each out-neighbour and receives `rcount` of `rdt` from each
/// in-neighbour.
fn neighbourhood(
    t: &mut Tracer,
    scount: c_int,
    sdt: Dt,
    rcount: c_int,
    rdt: Dt,
    comm: MPI_Comm,
) -> Result<(), Fail> {
    let (ins, outs) = neighbours(comm)?;
    let (s, sid) = t.volume(scount, sdt)?;
    let (r, rid) = t.volume(rcount, rdt)?;
    let me = t.rank();
    let mut waits = Vec::new();
    for (peer, tag) in ins {
        if let Some(src) = t.peer(comm, peer)? {
            t.on_record(
                comm,
                Record::Recv {
                    nonblocking: true,
                    src,
                    tag,
                    count: r,
                    dt: rid,
                },
            )?;
            waits.push((src, me, tag));
        }
    }
    for (peer, tag) in outs {
        if let Some(dst) = t.peer(comm, peer)? {
            t.on_record(
                comm,
                Record::Send {
                    nonblocking: true,
                    dst,
                    tag,
                    count: s,
                    dt: sid,
                },
            )?;
            waits.push((me, dst, tag));
        }
    }
    for (src, dst, tag) in waits {
        t.on_record(comm, Record::Wait { src, dst, tag })?;
    }
    Ok(())
}

/// `neighbor_allgather`: the send block to every out-neighbour.
pub struct NeighborAllGather;
impl Hook<(SB, c_int, Dt, RB, c_int, Dt, MPI_Comm)> for NeighborAllGather {
    type Stash = ();
    fn post(
        t: &mut Tracer,
        &(_, sc, sdt, _, rc, rdt, comm): &(SB, c_int, Dt, RB, c_int, Dt, MPI_Comm),
        _: (),
    ) -> Result<(), Fail> {
        neighbourhood(t, sc, sdt, rc, rdt, comm)
    }
}

/// `neighbor_alltoall`: block i to out-neighbour i (all blocks have the same count).
pub struct NeighborAllToAll;
impl Hook<(SB, c_int, Dt, RB, c_int, Dt, MPI_Comm)> for NeighborAllToAll {
    type Stash = ();
    fn post(
        t: &mut Tracer,
        &(_, sc, sdt, _, rc, rdt, comm): &(SB, c_int, Dt, RB, c_int, Dt, MPI_Comm),
        _: (),
    ) -> Result<(), Fail> {
        neighbourhood(t, sc, sdt, rc, rdt, comm)
    }
}
