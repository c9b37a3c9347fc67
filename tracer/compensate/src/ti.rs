//! Compensation of time-independent traces: each `compute` burst loses the tracer overhead
//! charged to it.
//!
//! The tracer measures a burst as the CPU time between two traced MPI calls and records it as
//! flops (CPU seconds × the rank's reference speed, `trace-meta.json`). Every traced MPI event
//! costs the tracer `O` seconds (`004_*` §3: "the per-event measurement overhead (O) is
//! constant"), and that cost lands in the burst measured around it. A burst that follows `k`
//! MPI events since the previous burst (more than one when short bursts were carried over, or
//! when calls follow each other without computation in between) spans those `k` events and is
//! charged `k × O` seconds, so compensation removes `k × O × speed` flops from it, never going
//! below zero flops (the eq. 1 rule, `max(0, gap - O)`, applied to volumes).
//!
//! Events are the actions that stand for a traced MPI call: everything but `compute`, `sleep`,
//! `location` and `comm_def` (a declaration written next to the call that created the
//! communicator). MPI calls the tracer writes only as comments (probes) are not in the action
//! stream and are not counted, which errs on the side of removing too little.
//!
//! [`CompensatedTrace`] applies this to a whole trace as a [`TraceSet`] adapter: the replay
//! opens each rank through it and reads compensated actions, streamed; the amounts removed are
//! read back per rank after the run.

use std::path::Path;
use std::sync::{Arc, Mutex};

use timeless_trace::{Action, ActionStream, Event, Rank, TraceError, TraceSet};

use crate::meta::TraceMeta;

/// Whether `a` stands for a traced MPI call.
pub fn is_mpi_event(a: &Action) -> bool {
    !matches!(
        a,
        Action::Compute { .. } | Action::Sleep { .. } | Action::Location | Action::CommDef { .. }
    )
}

/// What the compensation removed from one rank's bursts.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct BurstAccount {
    /// Compute bursts seen.
    pub bursts: u64,
    /// MPI events seen.
    pub events: u64,
    /// Flops removed in all.
    pub removed_flops: f64,
    /// The same in seconds at the rank's reference speed.
    pub removed_secs: f64,
    /// Bursts that would have gone below zero and were set to zero flops.
    pub clamped_bursts: u64,
}

/// Per-rank burst compensation, applied action by action in trace order.
#[derive(Debug, Clone)]
pub struct BurstCompensator {
    overhead_secs: f64,
    speed_flops_per_sec: f64,
    events_since_burst: u64,
    account: BurstAccount,
}

impl BurstCompensator {
    /// A compensator for a rank whose tracer overhead is `overhead_secs` per event and whose
    /// compute volumes were recorded at `speed_flops_per_sec`.
    pub fn new(overhead_secs: f64, speed_flops_per_sec: f64) -> Self {
        BurstCompensator {
            overhead_secs: overhead_secs.max(0.0),
            speed_flops_per_sec: speed_flops_per_sec.max(0.0),
            events_since_burst: 0,
            account: BurstAccount::default(),
        }
    }

    /// Compensates `action` in place: a `compute` loses `k × O × speed` flops, `k` being the
    /// MPI events since the previous `compute`; other actions are counted and left unchanged.
    pub fn apply(&mut self, action: &mut Action) {
        match action {
            Action::Compute { flops } => {
                let charge =
                    self.events_since_burst as f64 * self.overhead_secs * self.speed_flops_per_sec;
                let removed = charge.min(flops.max(0.0));
                if charge > *flops {
                    self.account.clamped_bursts += 1;
                }
                *flops = (*flops - removed).max(0.0);
                self.account.bursts += 1;
                self.account.removed_flops += removed;
                if self.speed_flops_per_sec > 0.0 {
                    self.account.removed_secs += removed / self.speed_flops_per_sec;
                }
                self.events_since_burst = 0;
            }
            a if is_mpi_event(a) => {
                self.events_since_burst += 1;
                self.account.events += 1;
            }
            _ => {}
        }
    }

    /// What was removed so far.
    pub fn account(&self) -> BurstAccount {
        self.account
    }
}

/// A rank's action stream with every burst compensated; publishes its account after each action.
pub struct CompensatedStream {
    inner: Box<dyn ActionStream>,
    comp: BurstCompensator,
    account: Arc<Mutex<BurstAccount>>,
}

impl CompensatedStream {
    /// Wraps `inner`; `account` receives what was removed so far.
    pub fn new(
        inner: Box<dyn ActionStream>,
        comp: BurstCompensator,
        account: Arc<Mutex<BurstAccount>>,
    ) -> Self {
        CompensatedStream {
            inner,
            comp,
            account,
        }
    }
}

impl ActionStream for CompensatedStream {
    fn next_event(&mut self) -> Result<Option<Event>, TraceError> {
        let mut ev = self.inner.next_event()?;
        if let Some(e) = &mut ev {
            self.comp.apply(&mut e.action);
            *self.account.lock().unwrap_or_else(|e| e.into_inner()) = self.comp.account();
        }
        Ok(ev)
    }

    fn origin(&self) -> &Path {
        self.inner.origin()
    }

    fn foreign_lines(&self) -> u64 {
        self.inner.foreign_lines()
    }
}

/// A trace whose ranks are read through [`CompensatedStream`]s, with the overhead and reference
/// speed of each rank (from `trace-meta.json`). Ranks beyond the metadata are left unchanged.
pub struct CompensatedTrace<'t> {
    inner: &'t dyn TraceSet,
    per_rank: Vec<(f64, f64)>,
    accounts: Vec<Arc<Mutex<BurstAccount>>>,
}

impl<'t> CompensatedTrace<'t> {
    /// `inner` compensated with `meta`'s per-rank overhead and reference speed.
    pub fn new(inner: &'t dyn TraceSet, meta: &TraceMeta) -> Self {
        let per_rank: Vec<(f64, f64)> = meta
            .overhead_secs
            .iter()
            .zip(&meta.speed_flops_per_sec)
            .map(|(&o, &s)| (o, s))
            .collect();
        CompensatedTrace {
            inner,
            accounts: per_rank.iter().map(|_| Arc::default()).collect(),
            per_rank,
        }
    }

    /// What was removed from each rank's bursts (one entry per rank of the metadata).
    pub fn accounts(&self) -> Vec<BurstAccount> {
        self.accounts
            .iter()
            .map(|a| *a.lock().unwrap_or_else(|e| e.into_inner()))
            .collect()
    }
}

impl TraceSet for CompensatedTrace<'_> {
    fn open_stream(&self, rank: Rank, nranks: u32) -> Result<Box<dyn ActionStream>, TraceError> {
        let inner = self.inner.open_stream(rank, nranks)?;
        match self.per_rank.get(rank as usize) {
            Some(&(o, s)) => {
                let account = Arc::clone(&self.accounts[rank as usize]);
                *account.lock().unwrap_or_else(|e| e.into_inner()) = BurstAccount::default();
                Ok(Box::new(CompensatedStream::new(
                    inner,
                    BurstCompensator::new(o, s),
                    account,
                )))
            }
            None => Ok(inner),
        }
    }

    fn ranks(&self) -> Option<usize> {
        self.inner.ranks()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use timeless_trace::RecvCount;

    fn compute(flops: f64) -> Action {
        Action::Compute { flops }
    }

    fn send() -> Action {
        Action::Send {
            dst: 1,
            tag: 0,
            count: 8,
            dt: None,
            blocking: true,
        }
    }

    fn recv() -> Action {
        Action::Recv {
            src: 1,
            tag: 0,
            count: RecvCount::Count(8),
            dt: None,
            blocking: true,
        }
    }

    #[test]
    fn each_burst_loses_the_events_it_spans() {
        // O = 2 µs, speed = 1e9 flop/s: 2000 flops per event.
        // init, compute 10000 (1 event: init)          -> 8000, removed 2000
        // send, recv, compute 5000 (2 events)          -> 1000, removed 4000
        // location, sleep, compute 1000 (0 events)     -> 1000, removed 0
        // send, compute 1500 (1 event: 2000 > 1500)    -> 0, removed 1500, clamped
        // finalize (after the last burst: charged to nothing)
        let mut c = BurstCompensator::new(2e-6, 1e9);
        let mut trace = vec![
            Action::Init {
                double_default: false,
            },
            compute(10_000.0),
            send(),
            recv(),
            compute(5_000.0),
            Action::Location,
            Action::Sleep { secs: 1.0 },
            compute(1_000.0),
            send(),
            compute(1_500.0),
            Action::Finalize,
        ];
        for a in &mut trace {
            c.apply(a);
        }
        let flops: Vec<f64> = trace
            .iter()
            .filter_map(|a| match a {
                Action::Compute { flops } => Some(*flops),
                _ => None,
            })
            .collect();
        assert_eq!(flops, vec![8_000.0, 1_000.0, 1_000.0, 0.0]);
        let acc = c.account();
        assert_eq!(acc.bursts, 4);
        assert_eq!(acc.events, 5);
        assert_eq!(acc.clamped_bursts, 1);
        assert!((acc.removed_flops - 7_500.0).abs() < 1e-9);
        assert!((acc.removed_secs - 7.5e-6).abs() < 1e-18);
        // Everything else is untouched.
        assert_eq!(trace[2], send());
        assert_eq!(trace[6], Action::Sleep { secs: 1.0 });
    }

    struct Memory(std::vec::IntoIter<Action>, u64);

    impl ActionStream for Memory {
        fn next_event(&mut self) -> Result<Option<Event>, TraceError> {
            self.1 += 1;
            Ok(self.0.next().map(|action| Event {
                action,
                comm: 0,
                callsite: None,
                location: self.1,
            }))
        }
        fn origin(&self) -> &Path {
            Path::new("mem")
        }
    }

    struct MemoryTrace(Vec<Vec<Action>>);

    impl TraceSet for MemoryTrace {
        fn open_stream(&self, rank: Rank, _: u32) -> Result<Box<dyn ActionStream>, TraceError> {
            Ok(Box::new(Memory(
                self.0[rank as usize].clone().into_iter(),
                0,
            )))
        }
        fn ranks(&self) -> Option<usize> {
            Some(self.0.len())
        }
    }

    #[test]
    fn the_trace_adapter_compensates_each_rank_with_its_own_constants() {
        // Rank 0: O = 1 µs at 1e9 flop/s -> 1000 flops per event; send, compute 3000 -> 2000.
        // Rank 1: O = 1 µs at 2e9 flop/s -> 2000 flops per event; recv, recv, compute 3000 ->
        //   3000 - 4000 < 0 -> 0 (clamped, 3000 removed).
        // Rank 2 is not in the metadata: unchanged.
        let trace = MemoryTrace(vec![
            vec![send(), compute(3_000.0)],
            vec![recv(), recv(), compute(3_000.0)],
            vec![send(), compute(3_000.0)],
        ]);
        let meta = TraceMeta {
            path: "trace-meta.json".into(),
            ranks: 2,
            overhead_secs: vec![1e-6, 1e-6],
            event_overhead_secs: vec![1e-6, 1e-6],
            speed_flops_per_sec: vec![1e9, 2e9],
            copy_secs_per_byte: None,
        };
        let ct = CompensatedTrace::new(&trace, &meta);
        let mut last = Vec::new();
        for r in 0..3 {
            let mut s = ct.open_stream(r, 3).unwrap();
            let mut flops = None;
            while let Some(e) = s.next_event().unwrap() {
                if let Action::Compute { flops: f } = e.action {
                    flops = Some(f);
                }
            }
            last.push(flops.unwrap());
        }
        assert_eq!(last, vec![2_000.0, 0.0, 3_000.0]);
        let acc = ct.accounts();
        assert_eq!(acc.len(), 2);
        assert!((acc[0].removed_flops - 1_000.0).abs() < 1e-9);
        assert!((acc[1].removed_flops - 3_000.0).abs() < 1e-9);
        assert!((acc[1].removed_secs - 1.5e-6).abs() < 1e-18);
        assert_eq!(acc[1].clamped_bursts, 1);
    }

    #[test]
    fn zero_overhead_changes_nothing() {
        let mut c = BurstCompensator::new(0.0, 1e9);
        let mut a = compute(42.0);
        c.apply(&mut send());
        c.apply(&mut a);
        assert_eq!(a, compute(42.0));
        assert_eq!(c.account().removed_flops, 0.0);
    }
}

/// Whether and how a time-independent replay removed the tracer's overhead from its compute
/// bursts (what `timeless simulate` reports under "Overhead compensation").
#[derive(Debug, Clone)]
pub enum BurstStatus {
    /// Not asked for (`--no-compensation`).
    Off,
    /// No `trace-meta.json` in these directories (an empty path is the current directory):
    /// nothing to compensate.
    NoMetadata(Vec<std::path::PathBuf>),
    /// Applied with this metadata; `accounts[r]` is what was removed from rank r.
    Applied {
        /// The metadata used (per-rank overhead and reference speed).
        meta: TraceMeta,
        /// Amounts removed, per rank.
        accounts: Vec<BurstAccount>,
    },
}
