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
    /// One entry per job, in replay rank order (a single unnamed job for an ordinary replay).
    pub jobs: Vec<crate::jobs::JobReport>,
    /// What the kernel did: solves, general-path components, memo hits, filling rounds, rate
    /// updates (`timeless simulate --kernel-stats`).
    pub kernel: timeless_kernel::KernelStats,
}

/// One MPI call of a replay, for profiles (given to observers whose
/// [`Observer::wants_calls`] is true).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct CallInfo {
    /// World rank.
    pub rank: u32,
    /// MPI name of the operation (`MPI_Allreduce`).
    pub op: &'static str,
    /// The rank's own id of the communicator (its trace's `comm=<id>`; 0 is the world). For
    /// `waitall`, the communicator of the oldest request it completes (mpisee's rule).
    pub comm: u32,
    /// Bytes sent, or the rank's share of a collective's volume (`001_*` Appendix A).
    pub bytes_sent: u64,
    /// Bytes received (point-to-point).
    pub bytes_recv: u64,
    /// Simulated date the call started, s.
    pub start_secs: f64,
    /// Simulated date it returned, s.
    pub end_secs: f64,
}

/// Receives events while a replay runs. Every method has a no-op default.
pub trait Observer {
    /// Whether [`Observer::call`] and [`Observer::comm_defined`] should be called (describing
    /// calls costs a little, so replays skip it for observers that do not ask).
    fn wants_calls(&self) -> bool {
        false
    }

    /// An MPI call completed.
    fn call(&mut self, info: &CallInfo) {
        let _ = info;
    }

    /// Rank `rank` defined its communicator `local` with these members (world ranks, comm-rank
    /// order).
    fn comm_defined(&mut self, rank: u32, local: u32, members: &[u32]) {
        let _ = (rank, local, members);
    }

    /// Whether [`Observer::action`] should be called (asked once, when the replay starts; an
    /// observer that ignores actions spares the replay a call per action).
    fn wants_actions(&self) -> bool {
        true
    }

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

impl Observer for NoObserver {
    fn wants_actions(&self) -> bool {
        false
    }
}

/// Two observers fed the same events (e.g. a progress bar and a profile).
pub struct Tee<'a>(pub &'a mut dyn Observer, pub &'a mut dyn Observer);

impl Observer for Tee<'_> {
    fn wants_calls(&self) -> bool {
        self.0.wants_calls() || self.1.wants_calls()
    }

    fn wants_actions(&self) -> bool {
        self.0.wants_actions() || self.1.wants_actions()
    }

    fn call(&mut self, info: &CallInfo) {
        self.0.call(info);
        self.1.call(info);
    }

    fn comm_defined(&mut self, rank: u32, local: u32, members: &[u32]) {
        self.0.comm_defined(rank, local, members);
        self.1.comm_defined(rank, local, members);
    }

    fn action(
        &mut self,
        rank: u32,
        keyword: &'static str,
        line: u64,
        start_secs: f64,
        end_secs: f64,
    ) {
        self.0.action(rank, keyword, line, start_secs, end_secs);
        self.1.action(rank, keyword, line, start_secs, end_secs);
    }

    fn progress(&mut self, actions: u64, now_secs: f64) {
        self.0.progress(actions, now_secs);
        self.1.progress(actions, now_secs);
    }
}
