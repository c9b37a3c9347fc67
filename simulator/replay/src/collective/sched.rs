//! The schedule builder every algorithm writes through, plus small shared helpers.

use super::{CollectiveError, Op};

/// Appends one rank's ops, mirroring SimGrid's `Request` calls one for one.
pub(crate) struct Sched<'a> {
    /// The calling rank.
    pub rank: u32,
    /// Communicator size (≥ 1).
    pub size: u32,
    out: &'a mut Vec<Op>,
    /// Requests posted since the last `WaitAll`.
    pending: usize,
}

impl<'a> Sched<'a> {
    pub fn new(rank: u32, size: u32, out: &'a mut Vec<Op>) -> Self {
        Self {
            rank,
            size,
            out,
            pending: 0,
        }
    }

    /// `Request::send`.
    pub fn send(&mut self, peer: u32, bytes: u64, tag: i32) {
        debug_assert!(peer < self.size);
        self.out.push(Op::Send { peer, bytes, tag });
    }

    /// `Request::recv`.
    pub fn recv(&mut self, peer: u32, bytes: u64, tag: i32) {
        debug_assert!(peer < self.size);
        self.out.push(Op::Recv { peer, bytes, tag });
    }

    /// `Request::isend` (or `isend_init` + `start`).
    pub fn isend(&mut self, peer: u32, bytes: u64, tag: i32) {
        debug_assert!(peer < self.size);
        self.pending += 1;
        self.out.push(Op::Isend { peer, bytes, tag });
    }

    /// `Request::irecv` (or `irecv_init` + `start`).
    pub fn irecv(&mut self, peer: u32, bytes: u64, tag: i32) {
        debug_assert!(peer < self.size);
        self.pending += 1;
        self.out.push(Op::Irecv { peer, bytes, tag });
    }

    /// `Request::waitall` on everything posted since the last one; nothing if nothing is pending.
    pub fn waitall(&mut self) {
        if self.pending > 0 {
            self.pending = 0;
            self.out.push(Op::WaitAll);
        }
    }

    /// `Request::wait` on each request posted since the last wait, in posting order; nothing if
    /// nothing is pending.
    pub fn wait_each(&mut self) {
        if self.pending > 0 {
            self.pending = 0;
            self.out.push(Op::WaitEach);
        }
    }

    /// `Request::sendrecv(dst, src)` with one tag: a local copy when both peers are this rank,
    /// else `isend_init` + `irecv_init`, `startall`, `waitall`.
    pub fn sendrecv(&mut self, dst: u32, send_bytes: u64, src: u32, recv_bytes: u64, tag: i32) {
        self.sendrecv_tags(dst, send_bytes, tag, src, recv_bytes, tag);
    }

    /// `Request::sendrecv` with distinct send and receive tags.
    pub fn sendrecv_tags(
        &mut self,
        dst: u32,
        send_bytes: u64,
        send_tag: i32,
        src: u32,
        recv_bytes: u64,
        recv_tag: i32,
    ) {
        if dst == self.rank && src == self.rank {
            return;
        }
        self.isend(dst, send_bytes, send_tag);
        self.irecv(src, recv_bytes, recv_tag);
        self.waitall();
    }

    /// Whether every requested posted so far has been waited on.
    pub fn is_settled(&self) -> bool {
        self.pending == 0
    }

    /// Every rank but this one, in increasing order.
    pub fn others(&self) -> impl Iterator<Item = u32> {
        let me = self.rank;
        (0..self.size).filter(move |&i| i != me)
    }

    /// `(rank + d) mod size`.
    pub fn plus(&self, d: u64) -> u32 {
        ((self.rank as u64 + d) % self.size as u64) as u32
    }

    /// `(rank - d) mod size`.
    pub fn minus(&self, d: u64) -> u32 {
        let n = self.size as u64;
        ((self.rank as u64 + n - d % n) % n) as u32
    }
}

/// Checks the rank (and optionally root) against the size; shared by every dispatcher.
pub(crate) fn check_comm(rank: u32, size: u32, root: Option<u32>) -> Result<(), CollectiveError> {
    if size == 0 {
        return Err(CollectiveError::EmptyCommunicator);
    }
    if rank >= size {
        return Err(CollectiveError::InvalidRank { rank, size });
    }
    if let Some(root) = root {
        if root >= size {
            return Err(CollectiveError::InvalidRoot { root, size });
        }
    }
    Ok(())
}

/// Checks that a per-rank array has `size` entries.
pub(crate) fn check_len(what: &'static str, got: usize, size: u32) -> Result<(), CollectiveError> {
    if got != size as usize {
        return Err(CollectiveError::WrongLength { what, got, size });
    }
    Ok(())
}

/// Whether `n` is a power of two (SimGrid's `(n & (n - 1)) == 0` test; true for 0 and 1 there,
/// `n` is never 0 here).
pub(crate) fn is_pow2(n: u32) -> bool {
    n & n.wrapping_sub(1) == 0
}

/// Largest power of two ≤ `n` (`n` ≥ 1); SimGrid's `pof2 = 1; while (pof2 <= n) pof2 <<= 1;
/// pof2 >>= 1`.
pub(crate) fn pof2_floor(n: u32) -> u32 {
    debug_assert!(n >= 1);
    1 << (31 - n.leading_zeros())
}

/// Smallest power of two ≥ `n` (`n` ≥ 1).
pub(crate) fn pof2_ceil(n: u32) -> u32 {
    n.next_power_of_two()
}

/// `Status::get_count`: received bytes in units of a datatype (a 0-byte datatype would divide
/// by zero in SimGrid; it counts as 0 here).
pub(crate) fn units(bytes: u64, dt_size: u64) -> u64 {
    bytes.checked_div(dt_size).unwrap_or(0)
}

/// Implements `from_name`, `name` and `ALL` for an algorithm enum from one table of
/// (variant, SimGrid name) pairs.
macro_rules! algo_names {
    ($ty:ident { $($variant:ident => $name:literal),+ $(,)? }) => {
        impl $ty {
            /// Every algorithm timeless implements, in SimGrid's table order.
            pub const ALL: &'static [$ty] = &[$($ty::$variant),+];

            /// Parses SimGrid's `--cfg=smpi/<coll>:<name>` value (case-sensitive, as SimGrid).
            pub fn from_name(name: &str) -> Option<Self> {
                match name {
                    $($name => Some($ty::$variant),)+
                    _ => None,
                }
            }

            /// SimGrid's name of the algorithm.
            pub fn name(self) -> &'static str {
                match self {
                    $($ty::$variant => $name,)+
                }
            }
        }

        impl std::fmt::Display for $ty {
            fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str(self.name())
            }
        }
    };
}
pub(crate) use algo_names;
