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
//! Events are the actions that stand for a traced MPI call: everything but `compute`, `sleep`
//! and `location`. MPI calls the tracer writes only as comments (probes) are not in the action
//! stream and are not counted, which errs on the side of removing too little.

use timeless_trace::Action;

/// Whether `a` stands for a traced MPI call.
pub fn is_mpi_event(a: &Action) -> bool {
    !matches!(
        a,
        Action::Compute { .. } | Action::Sleep { .. } | Action::Location
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

/// An action stream (`(action, line)` items, as `timeless_trace::RankReader` yields them) with
/// every burst compensated.
#[derive(Debug)]
pub struct Compensated<I> {
    inner: I,
    comp: BurstCompensator,
}

impl<I> Compensated<I> {
    /// Wraps `inner`.
    pub fn new(inner: I, comp: BurstCompensator) -> Self {
        Compensated { inner, comp }
    }

    /// What was removed so far.
    pub fn account(&self) -> BurstAccount {
        self.comp.account()
    }
}

impl<I, E> Iterator for Compensated<I>
where
    I: Iterator<Item = Result<(Action, u64), E>>,
{
    type Item = Result<(Action, u64), E>;

    fn next(&mut self) -> Option<Self::Item> {
        let mut item = self.inner.next()?;
        if let Ok((a, _)) = &mut item {
            self.comp.apply(a);
        }
        Some(item)
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

    #[test]
    fn the_iterator_adapter_compensates_and_passes_errors_through() {
        let items: Vec<Result<(Action, u64), String>> = vec![
            Ok((send(), 1)),
            Ok((compute(3_000.0), 2)),
            Err("bad line".into()),
        ];
        let mut it = Compensated::new(items.into_iter(), BurstCompensator::new(1e-6, 1e9));
        assert_eq!(it.next(), Some(Ok((send(), 1))));
        assert_eq!(it.next(), Some(Ok((compute(2_000.0), 2))));
        assert_eq!(it.next(), Some(Err("bad line".into())));
        assert_eq!(it.next(), None);
        assert!((it.account().removed_flops - 1_000.0).abs() < 1e-9);
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
