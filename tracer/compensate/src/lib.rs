//! timeless overhead compensation: removing the tracer's own intrusion from a measured run
//! before it is analysed or replayed.
//!
//! Two inputs, two methods:
//!
//! * **Timed traces** ([`format`](mod@format): per rank, the enter and exit timestamps of every MPI call
//!   and region, with message and collective identities). [`engine`] implements the trace-based
//!   compensation of Wolf, Malony, Shende and Morris (`004_*` §3, the algorithms of KOJAK's
//!   compensation filter): the per-event overhead `O` is subtracted from independent events
//!   (eq. 1), receives are re-timed from their matching sends ([`p2p`], eqs. 2-11, one timeline
//!   with the lower-bound and one with the upper-bound approximation), and collectives from
//!   their members ([`collective`], eqs. 12-13 and the 1-to-n rule), processing the events in an
//!   order that respects happened-before, in a bounded window.
//! * **Time-independent traces** ([`ti`]): each `compute` burst loses the overhead the tracer
//!   charged to it (events spanned × `O`, converted to flops with the trace's reference speed
//!   read from the tracer's `trace-meta.json`, [`meta`]), before the replay consumes it.
//!
//! The crate knows nothing of MPI or of the simulator; [`cost`] holds the platform constants
//! (`O`, and the copy cost `C(size)`), which are inputs.

pub mod collective;
pub mod cost;
pub mod engine;
pub mod error;
pub mod format;
pub mod meta;
pub mod model;
pub mod p2p;
pub mod setup;
pub mod stamped;
pub mod ti;

pub use cost::{CopyCost, NToNRule, Params};
pub use engine::{
    compensate, CollectSink, CollectedRecord, Compensated, Engine, NoSink, Pair, RankAccount, Sink,
    Summary,
};
pub use error::{Error, ErrorKind};
pub use format::{parse_line, TimedReader, TimedSource, TimedStream, VecStream, TIMED_LIST_FILE};
pub use meta::{TraceMeta, META_FILE};
pub use model::{CollectiveOp, CollectiveShape, CommId, Rank, RecordKind, TimedItem, TimedRecord};
pub use p2p::{Bound, Case, MeasuredMessage};
pub use ti::{BurstAccount, BurstCompensator, BurstStatus, CompensatedStream, CompensatedTrace};
