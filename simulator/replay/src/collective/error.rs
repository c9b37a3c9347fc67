//! Errors of the collective dispatchers.

/// Why a collective could not be decomposed. All of these are caused by the input (trace or
/// configuration), never by an internal bug; the replay should report them with the trace
/// location and stop.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum CollectiveError {
    /// The communicator has no rank.
    #[error("collective on an empty communicator")]
    EmptyCommunicator,
    /// The calling rank is not in the communicator.
    #[error("rank {rank} is outside the communicator of {size} ranks")]
    InvalidRank { rank: u32, size: u32 },
    /// The root is not in the communicator.
    #[error("root {root} is outside the communicator of {size} ranks")]
    InvalidRoot { root: u32, size: u32 },
    /// A per-rank array (counts, displacements) does not have one entry per rank.
    #[error("{what} has {got} entries but the communicator has {size} ranks")]
    WrongLength {
        what: &'static str,
        got: usize,
        size: u32,
    },
    /// The configured algorithm cannot run on this input. SimGrid itself would crash or hang
    /// here (e.g. `barrier` `ompi_two_procs` on a communicator that does not have 2 ranks).
    #[error("{collective} algorithm '{algo}' cannot run here: {reason}")]
    Unsupported {
        collective: &'static str,
        algo: &'static str,
        reason: String,
    },
}
