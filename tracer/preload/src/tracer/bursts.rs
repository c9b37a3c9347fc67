//! Compute bursts: the CPU time (or, with `TIMELESS_COUNTERS`, the instructions) between the
//! end of one traced call and the start of the next, carried over or written as a `compute`
//! record of flops before the next action record (the rule is `burst`'s).

use std::any::TypeId;

use super::{Fail, Tracer};
use crate::clock::thread_cpu_chained_secs;
use crate::record::{Record, RecordKey};

/// Bursts measured with the instruction counter (`counters`): what is pending besides
/// `pending`, which still decides when a burst is written (CPU time, see `burst`).
#[derive(Debug, Clone)]
pub(super) struct Counted {
    /// Reference flops per instruction (the kernel's).
    flops_per_instruction: f64,
    /// Counter reading when the tracer last handed control back to the program.
    last_exit: Option<crate::counters::Reading>,
    /// Instructions of compute not written yet.
    pending_instructions: u64,
    /// CPU seconds of compute not written yet whose interval had no counter reading (a thread
    /// without counter, or an interval across threads): converted with the reference speed.
    pending_uncounted_cpu: f64,
    /// Intervals measured in instructions, and with CPU time instead.
    counted_intervals: u64,
    uncounted_intervals: u64,
}

impl Tracer {
    /// Measures the bursts from now on in instructions, converted with `flops_per_instruction`
    /// (the reference kernel's, see `counters`); the counters must be active.
    pub fn count_instructions(&mut self, flops_per_instruction: f64) {
        self.counted = Some(Counted {
            flops_per_instruction,
            last_exit: crate::counters::thread_instructions(),
            pending_instructions: 0,
            pending_uncounted_cpu: 0.0,
            counted_intervals: 0,
            uncounted_intervals: 0,
        });
    }

    /// Accounts the CPU time since the tracer last returned to the program as compute (and
    /// the instructions, `ins_in` being the counter at entry, when counters are used). It is
    /// written before the next action record, so calls that record nothing (a failed
    /// `MPI_Iprobe` in a polling loop) do not split a burst.
    pub fn burst(
        &mut self,
        t_in: f64,
        ins_in: Option<crate::counters::Reading>,
        call: TypeId,
    ) -> Result<(), Fail> {
        self.current_call = call;
        // `t_in` is the clock's latest point: the call's enter.
        self.in_call
            .enter(crate::clock::last_point_wall_secs(), t_in);
        let cpu = (t_in - self.last_exit).max(0.0);
        self.pending.add(cpu);
        if let Some(c) = &mut self.counted {
            match c
                .last_exit
                .zip(ins_in)
                .and_then(|(a, b)| crate::counters::delta(a, b))
            {
                Some(n) => {
                    c.pending_instructions += n;
                    c.counted_intervals += 1;
                }
                None => {
                    c.pending_uncounted_cpu += cpu;
                    c.uncounted_intervals += 1;
                }
            }
        }
        Ok(())
    }

    /// Writes the pending compute if the burst since the last record is long enough, or the
    /// carried compute reaches its cap (in CPU seconds, with or without counters; see
    /// `burst`); otherwise it carries over.
    pub(super) fn flush_compute(&mut self) -> Result<(), Fail> {
        let site = (self.last_record_call, self.current_call);
        self.last_record_call = self.current_call;
        let state = self.sites.entry(site).or_default();
        if let Some(cpu_secs) = self.pending.take_at(&self.settings.burst_rule, state) {
            let flops = match &mut self.counted {
                None => (cpu_secs * self.speed).round(),
                Some(c) => {
                    let f = crate::counters::burst_flops(
                        c.pending_instructions,
                        c.flops_per_instruction,
                    ) + c.pending_uncounted_cpu * self.speed;
                    c.pending_instructions = 0;
                    c.pending_uncounted_cpu = 0.0;
                    f.round()
                }
            };
            if flops >= 1.0 {
                let flops = flops as u64;
                let key = RecordKey {
                    record: Record::Compute,
                    comm: None,
                    site: None,
                };
                self.untimed_action(
                    format_args!("compute {flops}"),
                    None,
                    Some(&key),
                    Some(flops as f64),
                )?;
            }
        }
        Ok(())
    }

    /// Recording resumes after a pause: the compute since the pause is dropped.
    pub fn resume(&mut self) {
        self.last_exit = thread_cpu_chained_secs();
        self.mark_counter();
    }

    /// Reads the instruction counter where a burst starts, when counters are used.
    pub(super) fn mark_counter(&mut self) {
        if let Some(c) = &mut self.counted {
            c.last_exit = crate::counters::thread_instructions();
        }
    }

    /// Writes, once, how often the CPU clock was read and estimated (see `clock`), as a comment
    /// before the last record.
    pub fn clock_note(&mut self) -> Result<(), Fail> {
        if self.clock_noted {
            return Ok(());
        }
        self.clock_noted = true;
        let (exact, estimated) = crate::clock::chained_reads();
        self.note(format_args!(
            "thread CPU clock: {exact} real reads, {estimated} estimated from the wall clock \
             (intervals up to {:e} s)",
            crate::clock::exact_above_secs()
        ))?;
        if let Some(c) = &self.counted {
            let (n, u) = (c.counted_intervals, c.uncounted_intervals);
            self.note(format_args!(
                "instruction counter: {n} intervals counted, {u} measured with the CPU clock \
                 instead (no counter on their thread, or across threads)"
            ))?;
        }
        Ok(())
    }
}
