//! Message tags of SimGrid 3.32's collectives (`src/smpi/include/private.hpp`, `COLL_TAG_*`).
//!
//! They are negative so that they never match a user point-to-point message (whose tags are
//! non-negative). A few algorithms derive per-step tags from them (`tag + i`), exactly as
//! SimGrid does; with very long pipelines those can become non-negative, as in SimGrid.

/// `COLL_TAG_REDUCE`.
pub const REDUCE: i32 = -112;
/// `COLL_TAG_SCATTER`.
pub const SCATTER: i32 = -223;
/// `COLL_TAG_SCATTERV`.
pub const SCATTERV: i32 = -334;
/// `COLL_TAG_GATHER`.
pub const GATHER: i32 = -445;
/// `COLL_TAG_ALLGATHER`.
pub const ALLGATHER: i32 = -556;
/// `COLL_TAG_ALLGATHERV`.
pub const ALLGATHERV: i32 = -667;
/// `COLL_TAG_BARRIER` (the finalisation barrier would use `BARRIER - 1`; replay never does).
pub const BARRIER: i32 = -778;
/// `COLL_TAG_REDUCE_SCATTER`.
pub const REDUCE_SCATTER: i32 = -889;
/// `COLL_TAG_ALLTOALLV`.
pub const ALLTOALLV: i32 = -1000;
/// `COLL_TAG_ALLTOALL`.
pub const ALLTOALL: i32 = -1112;
/// `COLL_TAG_GATHERV`.
pub const GATHERV: i32 = -2223;
/// `COLL_TAG_BCAST`.
pub const BCAST: i32 = -3334;
/// `COLL_TAG_ALLREDUCE`.
pub const ALLREDUCE: i32 = -4445;
/// The literal `system_tag = -888` of `colls::scan` and `colls::exscan` (`smpi_coll.cpp`).
pub const SCAN: i32 = -888;
/// The literal tag 666 of `allreduce__ompi_ring_segmented` (not implemented; listed for
/// completeness because it is the one positive collective tag).
pub const OMPI_RING_SEGMENTED: i32 = 666;
