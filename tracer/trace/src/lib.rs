//! Time-independent trace model.
