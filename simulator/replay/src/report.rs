//! What a replay produces: the simulated time and per-rank accounts, plus an observer interface
//! for timelines and progress.

/// One rank's account of a replay. All times in simulated seconds.
#[derive(Debug, Clone, PartialEq)]
pub struct RankReport {
    /// Rank in `MPI_COMM_WORLD`.
    pub rank: u32,
    /// Name of the host it ran on.
    pub host: String,
    /// Date at which its trace (and its leftover requests) completed.
    pub finish_secs: f64,
    /// Date of its `init` action (0 for a trace starting with `init`).
    pub init_secs: f64,
    /// Time spent executing flops (`compute` and the flops of reductions).
    pub compute_secs: f64,
    /// Time blocked in communication while the awaited transfers were moving.
    pub comm_secs: f64,
    /// Time blocked in communication before the awaited transfers could start (late sender or
    /// late receiver), plus test/probe back-off.
    pub wait_secs: f64,
    /// Time in `sleep` actions and software overheads (`smpi/os`, `or`, `ois`).
    pub sleep_secs: f64,
    /// Actions replayed.
    pub actions: u64,
}

/// The outcome of a replay.
#[derive(Debug, Clone, PartialEq)]
pub struct Report {
    /// SimGrid's "Simulation time": the finish date of the last rank to finish, minus that rank's
    /// `init` date, in seconds.
    pub simulated_time_secs: f64,
    /// One entry per rank, in rank order.
    pub ranks: Vec<RankReport>,
    /// Actions replayed over all ranks.
    pub actions: u64,
    /// Non-fatal notices (lines of other ranks skipped in a per-rank file, ...).
    pub warnings: Vec<String>,
}

/// Receives events while a replay runs. Every method has a no-op default.
pub trait Observer {
    /// Rank `rank` ran action `keyword` (trace line `line`) from `start_secs` to `end_secs`.
    fn action(
        &mut self,
        rank: u32,
        keyword: &'static str,
        line: u64,
        start_secs: f64,
        end_secs: f64,
    ) {
        let _ = (rank, keyword, line, start_secs, end_secs);
    }

    /// Called now and then with the number of actions replayed so far and the simulated clock.
    fn progress(&mut self, actions: u64, now_secs: f64) {
        let _ = (actions, now_secs);
    }
}

/// An observer that ignores everything.
#[derive(Debug, Default, Clone, Copy)]
pub struct NoObserver;

impl Observer for NoObserver {}
