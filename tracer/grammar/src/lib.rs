//! Compressed time-independent traces (Pilgrim, `000_*` §2): each rank's actions become
//! terminals of a call signature table (CST) and a Sequitur grammar with repetition exponents;
//! the per-rank tables and grammars are merged across ranks; compute volumes travel in a
//! separate zstd-compressed stream. A replay walks each rank's grammar with a small stack and
//! never expands it. Builds without MPI.

pub mod error;
pub mod grammar;
pub mod sequitur;

pub use error::GrammarError;
pub use grammar::{Grammar, Symbol, Walker};
pub use sequitur::Sequitur;
