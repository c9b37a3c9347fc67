//! A host's CPU: its max-min constraint, and the executions that run on it without one.
//!
//! # Uncontended executions skip the max-min system
//! SimGrid's Cas01 model (`src/surf/cpu_cas01.cpp`) gives an execution a variable of penalty 1
//! and bound `speed` on its host's constraint of capacity `cores × speed`. With n executions and
//! nothing else on the host, bottleneck filling offers `m = cores·speed / n`; while n < cores
//! every bound binds first (`b·p = speed < m`) and each execution gets exactly `speed`; at
//! n = cores each gets `m/p = cores·speed/cores`, which is exactly `speed` when `cores` is a
//! power of two (1 included). So such an execution's rate is `speed`, bit for bit, whatever the
//! solve does, and it needs no variable: the engine schedules its end at `now + flops/speed`,
//! the date the solve would give it, and never touches the max-min system for it (a replay's
//! compute bursts are a third of its actions: each saved two registrations and two solves).
//! When another execution starts or ends on the CPU, the others' remaining flops and dates are
//! brought up to date as the solve would have touched their variables (`remaining −= speed ×
//! elapsed`, date `now + remaining/speed`): the same rounding, so the same dates bit for bit
//! (tested against executions with variables on 1 to 5 cores). Only the order among events at
//! exactly the same date may differ: a fast execution's date enters the event heap when it
//! starts, a variable's after the next solve.
//!
//! The moment something else wants the CPU (one execution more than that, or a poll), the fast
//! executions become variables again, in start order, with their remaining flops brought up to
//! date as a re-solve would (`remaining −= speed × elapsed`), and the solve that follows shares
//! the cores among all of them. New executions go through the system until no variable is left
//! on the CPU.
//!
//! Example: a 1-core 1 Gf host runs a 1e9-flop execution from t = 0 (fast: ends at 1 s). At
//! t = 0.5 a second one starts: the first becomes a variable with 5e8 flops left, both get
//! 5e8 flop/s, the first ends at 1.5 s, the second at 2 s, as in SimGrid.

use crate::lmm::CnstId;

/// One CPU (all its cores).
#[derive(Debug, Clone)]
pub(super) struct Cpu {
    /// Its constraint, of capacity `cores × speed` flop/s.
    pub(super) cnst: CnstId,
    /// Speed of one core, flop/s.
    pub(super) speed: f64,
    cores: u32,
    /// Executions running without a variable, in start order.
    pub(super) fast: Vec<u32>,
    /// Variables (executions and polls) on the constraint.
    pub(super) vars: u32,
}

impl Cpu {
    pub(super) fn new(cnst: CnstId, speed: f64, cores: u32) -> Self {
        Cpu {
            cnst,
            speed,
            cores,
            fast: Vec::new(),
            vars: 0,
        }
    }

    /// True if one more execution would get exactly `speed` from a solve: nothing but fast
    /// executions on the CPU, and n + 1 of them fit as the module doc derives.
    pub(super) fn admits_fast(&self) -> bool {
        let n = self.fast.len() as u32 + 1;
        self.vars == 0
            && self.speed > 0.0
            && self.speed.is_finite()
            && (n < self.cores || (n == self.cores && self.cores.is_power_of_two()))
    }
}
