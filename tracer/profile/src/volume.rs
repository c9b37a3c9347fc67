//! Collective communication volumes: each rank's contribution to mpisee's lower bound
//! (`001_*` Appendix A), so that the sum over a communicator's ranks is the bound.
//!
//! `m` is the rank's block in bytes as the call states it, `p` the communicator size, `n_i`
//! the rank's neighbour count. The bounds and how a rank's share is taken:
//!
//! | operation | bound (Appendix A) | rank i records |
//! |---|---|---|
//! | Bcast | (p-1) m | m, the root 0 |
//! | Gather, Scatter, Allgather, Reduce, Allreduce, Reduce_scatter_block | p m | m |
//! | Gatherv, Scatterv, Allgatherv, Reduce_scatter | Σ m_i | m_i (its own block) |
//! | Alltoall | p p m | p m |
//! | Alltoallv, Alltoallw | Σ_i Σ_j m_i^j | Σ_j m_i^j (what it sends) |
//! | Scan, Exscan | (p-1) m | m, rank 0 records 0 |
//! | Neighbor_allgather, Neighbor_alltoall | Σ n_i m | n_i m |
//! | Neighbor_alltoallv/w | Σ_i Σ_j (n_i - 1) m_i^j as printed | Σ_j m_i^j (what it sends) |
//! | Barrier | 0 | 0 |
//!
//! The printed bound for `Neighbor_alltoallv` multiplies each block by n_i - 1, which counts a
//! rank's blocks several times over; timeless records what the rank sends, as for
//! `Alltoallv`, of which it is the neighbourhood analogue.
//!
//! Example: `MPI_Bcast` of 100 bytes on 4 ranks: the root records 0, the others 100 each;
//! the communicator's volume is 300 = (4 - 1) x 100.

/// A collective call as one rank sees it (bytes per block).
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Collective<'a> {
    /// Barrier.
    Barrier,
    /// Bcast of `m` bytes; `root` is whether this rank is the root.
    Bcast { m: u64, root: bool },
    /// Gather, Scatter, Allgather, Reduce, Allreduce, Reduce_scatter_block: block `m`.
    Block { m: u64 },
    /// Gatherv, Scatterv, Allgatherv, Reduce_scatter: this rank's own block `m_i`.
    OwnBlock { m_i: u64 },
    /// Alltoall of `m` bytes to each of `p` ranks.
    AllToAll { m: u64, p: u32 },
    /// Alltoallv/w, Neighbor_alltoallv/w: bytes sent to each peer.
    PerPeer { sends: &'a [u64] },
    /// Scan, Exscan of `m` bytes by comm rank `rank`.
    Scan { m: u64, rank: u32 },
    /// Neighbor_allgather, Neighbor_alltoall: `m` bytes to each of `neighbors`.
    Neighbor { m: u64, neighbors: u32 },
}

/// The rank's contribution to the communicator's volume lower bound, bytes (saturating).
pub fn contribution(c: Collective<'_>) -> u64 {
    match c {
        Collective::Barrier => 0,
        Collective::Bcast { m, root } => {
            if root {
                0
            } else {
                m
            }
        }
        Collective::Block { m } => m,
        Collective::OwnBlock { m_i } => m_i,
        Collective::AllToAll { m, p } => m.saturating_mul(u64::from(p)),
        Collective::PerPeer { sends } => sends.iter().fold(0u64, |a, &b| a.saturating_add(b)),
        Collective::Scan { m, rank } => {
            if rank == 0 {
                0
            } else {
                m
            }
        }
        Collective::Neighbor { m, neighbors } => m.saturating_mul(u64::from(neighbors)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Sum over the ranks of a communicator equals Appendix A's bound (p = 4).
    #[test]
    fn sums_are_the_bounds() {
        let p = 4u32;
        let m = 100u64;
        // Bcast: (p-1) m = 300.
        let bcast: u64 = (0..p)
            .map(|r| contribution(Collective::Bcast { m, root: r == 2 }))
            .sum();
        assert_eq!(bcast, 300);
        // Gather: p m = 400.
        let gather: u64 = (0..p).map(|_| contribution(Collective::Block { m })).sum();
        assert_eq!(gather, 400);
        // Alltoall: p p m = 1600.
        let a2a: u64 = (0..p)
            .map(|_| contribution(Collective::AllToAll { m, p }))
            .sum();
        assert_eq!(a2a, 1600);
        // Scan: (p-1) m = 300.
        let scan: u64 = (0..p)
            .map(|rank| contribution(Collective::Scan { m, rank }))
            .sum();
        assert_eq!(scan, 300);
        // Alltoallv with rank i sending (i+1)*10 to each of 4 peers: 10*4*(1+2+3+4) = 400.
        let v: u64 = (0..p as u64)
            .map(|i| {
                let s = [(i + 1) * 10; 4];
                contribution(Collective::PerPeer { sends: &s })
            })
            .sum();
        assert_eq!(v, 400);
        // Neighbor_allgather on a ring (2 neighbours each): Σ n_i m = 4 * 2 * 100 = 800.
        let nb: u64 = (0..p)
            .map(|_| contribution(Collective::Neighbor { m, neighbors: 2 }))
            .sum();
        assert_eq!(nb, 800);
        assert_eq!(contribution(Collective::Barrier), 0);
        assert_eq!(contribution(Collective::OwnBlock { m_i: 7 }), 7);
    }
}
