//! Compressed time-independent traces (Pilgrim, `000_*` §2): each rank's actions become
//! terminals of a call signature table (CST) and a Sequitur grammar with repetition exponents;
//! the per-rank tables and grammars are merged across ranks; `compute` actions are timings, not
//! calls: they stay out of the grammar, placed by a gap stream ([`placement`]), their flops in
//! a separate zstd-compressed volume stream. A replay walks each rank's grammar with a small
//! stack and never expands it. Builds without MPI.
//!
//! Pipeline: [`RankEncoder`] per rank → [`MergedRanks`] → [`merge_rounds`] →
//! [`CompressedTrace::from_merged`] → [`format::write`]; back: [`format::read`] →
//! [`CompressedTrace::rank_stream`]; [`CompressedTraceSet`] serves those streams to the replay as
//! a `timeless_trace::TraceSet`. File layout: [`mod@format`] and the README's "Compressed traces".

pub mod blocks;
pub mod cst;
pub mod encoder;
pub mod error;
pub mod format;
pub mod grammar;
pub mod histogram;
pub mod merge;
pub mod offline;
pub mod placement;
pub mod rans;
pub mod sequitur;
pub mod signature;
pub mod stream;
pub mod text;
pub mod trace;
pub mod varint;
pub mod volume;

pub use cst::CallSignatureTable;
pub use encoder::{RankEncoder, RankTrace};
pub use error::GrammarError;
pub use grammar::{Cursor, Grammar, Symbol, Walker};
pub use merge::{merge_pair, merge_rounds, MergedRanks, RankEntry};
pub use sequitur::Sequitur;
pub use stream::CompressedTraceSet;
pub use trace::{CompressedTrace, RankStream, Stats};
pub use volume::{Precision, PrecisionError, DEFAULT_PRECISION};
