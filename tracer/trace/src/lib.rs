//! timeless trace model: time-independent MPI actions and their text formats.
//!
//! A time-independent trace (`003_*` §3) lists, per rank, the actions of an MPI run with their
//! volumes (flops, element counts) and no timestamps. This crate decodes SimGrid 3.32's TI text
//! format and the seed's original format into typed [`Action`]s, streaming each rank's file line
//! by line. It knows nothing of MPI or of the simulator.

pub mod action;
pub mod ahead;
pub mod callsites;
pub mod datatype;
pub mod error;
pub mod incall;
pub mod line_memo;
pub mod lines;
pub mod listed;
pub mod parse;
pub mod reader;
pub mod stream;

pub use action::{Action, CommId, Rank, RecvCount, RequestKey, WORLD};
pub use ahead::DecodeAhead;
pub use datatype::Datatype;
pub use error::{TraceError, TraceErrorKind};
pub use parse::{parse_line, parse_line_in, Dialect, Record};
pub use reader::{RankReader, TraceSource};
pub use stream::{ActionStream, Event, TraceSet};
