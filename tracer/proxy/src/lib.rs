//! Proxy applications generated from time-independent traces (Pilgrim `000_*` §5): a standalone
//! C MPI program that performs every rank's MPI calls of the trace, in order, with the trace's
//! peers, tags, sizes, roots and communicators, and computes for as long as the traced program
//! did between them. It needs only `mpicc`; generating it needs no MPI.
//!
//! # Design
//!
//! [`model::build`] turns the trace into call terminals (one per distinct call signature), one
//! Sequitur grammar per distinct rank call sequence, and per grammar site the mean computation
//! before it. [`generate`] writes:
//!
//! * one C function per terminal (`t3()`: `MPI_Isend(sbuf, 5000, MPI_DOUBLE, me + 1, 0, ...)`,
//!   [`call`]), peers relative to the executing rank so SPMD ranks share code;
//! * one function per grammar rule and rank group, exponents as `for` loops, each call preceded
//!   by its site's computation in seconds at the rank's reference speed (`compute(2.5e-3)`);
//! * `proxy_run(rank)`, dispatching each rank to its group's start rule;
//! * the shared runtime (`runtime.c`): the request store that pairs TI `wait`s with requests by
//!   `(src, dst, tag)`, communicator creation by members (`MPI_Comm_create_group`), received
//!   size checks, the compute kernel calibrated at start-up, and the final report.
//!
//! # Worked example
//!
//! A 4-rank ring traced for 1,000 iterations (rank r: `compute 2e6`, `isend r+1 0 8000`,
//! `irecv r-1 0 8000`, `waitall`, ranks modulo 4) has 7 terminals: `init`, `finalize`,
//! `waitall`, `isend` at displacement +1 (ranks 0-2) and -3 (rank 3), `irecv` at -1 (ranks 1-3)
//! and +3 (rank 0). Its rank grammars are `R0 → init R1^1000 finalize`, `R1 → isend irecv
//! waitall` with those terminals: three distinct grammars (rank 0, ranks 1-2, rank 3), so three
//! groups. The proxy keeps the loop, so its size does not depend on the iteration count:
//!
//! ```text
//! static void g1_r1(void) { compute(2e-3); t3(); t4(); t5(); }
//! static void g1_r0(void) { t0(); for (long i = 0; i < 1000; i++) { g1_r1(); } t6(); }
//! ```
//!
//! (2e6 flops recorded at a 1 Gflop/s reference speed are 2 ms.) Compute bursts become
//! `flops / reference speed × --scale-compute` seconds of busy work
//! (`--compute busy`: a kernel whose iteration rate is measured at start-up, so the work is
//! fixed and slows down when cores are shared, as real computation does), a sleep
//! (`--compute sleep`) or nothing (`--compute none`).
//!
//! The kernel's rate is measured at start-up in thread CPU time, for about 1 % of the rank's
//! computation (0.3-6 ms; `proxy_compute_secs`, the group's total from its grammar), and not at
//! all by a rank that does not compute. `timeless proxy` hands [`generate`] the trace with the
//! tracer's per-event cost removed from its bursts, as `timeless simulate` replays it
//! (`timeless_compensate`), so that a program making millions of calls does not get the
//! tracer's time as busy work.
//!
//! Requests the trace never completes (no `wait`, `test` or `waitall` takes them: the program
//! freed them) are freed by the proxy right after posting, so that the proxy leaves no request
//! pending that the original did not.
//!
//! A `test` is a poll whose outcome depends on timing: the one that found its request
//! complete (the tracer writes it right before the request's `wait`) completes the request at
//! the same point in the proxy; the tests that failed are not repeated.
//!
//! Limits: the SimGrid no-ops `comm_size`, `comm_split` and `comm_dup` carry no members, so the
//! proxy creates each communicator at its `comm_def`, by its members alone; a traced proxy
//! therefore lacks those no-op records. Collectives' reduction flops are done by MPI itself.
//! Concurrent requests share one send and one receive buffer (contents are not meaningful).

pub mod call;
pub mod error;
pub mod model;

use std::fmt::Write;
use std::path::Path;

use timeless_grammar::Symbol;
use timeless_trace::TraceSet;

pub use error::ProxyError;
pub use model::Model;

/// What the generated program does for compute bursts.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ComputeMode {
    /// Busy work of the burst's duration on the reference machine.
    Busy,
    /// Sleep for that duration.
    Sleep,
    /// Nothing: communication only.
    None,
}

/// Options of [`generate`].
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct ProxyOptions {
    /// Compute bursts as busy work, sleeps or nothing.
    pub compute: ComputeMode,
    /// Multiplies every compute duration (what-if: faster or slower nodes), > 0.
    pub scale_compute: f64,
    /// Multiplies every message and collective count (rounded, at least 1 element), > 0.
    pub scale_bytes: f64,
    /// Relative difference under which two ranks' computations before a call count as equal
    /// (ranks that differ more get their own code), > 0.
    pub precision: f64,
}

impl Default for ProxyOptions {
    fn default() -> Self {
        ProxyOptions {
            compute: ComputeMode::Busy,
            scale_compute: 1.0,
            scale_bytes: 1.0,
            precision: 0.05,
        }
    }
}

/// A generated proxy: its C source and Makefile, and what it was built from.
#[derive(Debug, Clone)]
pub struct Proxy {
    /// `proxy.c`.
    pub source: String,
    /// `Makefile` (`make` builds `proxy` with `mpicc`).
    pub makefile: String,
    /// The trace's model.
    pub model: Model,
}

const RUNTIME: &str = include_str!("runtime.c");

/// Generates the proxy of `traces` (`nranks` ranks) whose flops were recorded at
/// `speeds_flops_per_sec` (one value for all ranks or one per rank: the tracer's reference
/// speeds, `trace-meta.json`).
///
/// # Errors
/// A trace error (file:line), or a call a proxy cannot reproduce (a count beyond an MPI `int`
/// after scaling, a communicator used before its `comm_def`).
pub fn generate(
    traces: &dyn TraceSet,
    nranks: u32,
    speeds_flops_per_sec: &[f64],
    opts: &ProxyOptions,
) -> Result<Proxy, ProxyError> {
    let model = model::build(traces, nranks, speeds_flops_per_sec, opts.precision)?;
    let mut s = String::new();
    let w = &mut s;
    let mode = match opts.compute {
        ComputeMode::Busy => 1,
        ComputeMode::Sleep => 2,
        ComputeMode::None => 0,
    };
    writeln!(
        w,
        "/* Proxy application generated by `timeless proxy` (Pilgrim 000_* §5).\n   {} ranks, {} calls, {} distinct calls, {} rank grammars, {} rank groups. */",
        model.nranks,
        model.calls,
        model.terminals.len(),
        model.grammars.len(),
        model.groups.len()
    )
    .expect("write to String");
    let buf = (model.buffer_bytes as f64 * opts.scale_bytes.max(1.0)).ceil() as u64;
    writeln!(w, "#define PROXY_RANKS {}", model.nranks).expect("write");
    writeln!(w, "#define PROXY_COMMS {}", model.max_comm + 1).expect("write");
    writeln!(w, "#define PROXY_BUF_BYTES {buf}UL").expect("write");
    writeln!(w, "#define PROXY_SCALE_COMPUTE {:e}", opts.scale_compute).expect("write");
    writeln!(
        w,
        "#define PROXY_COMPUTE {mode} /* 0 none, 1 busy, 2 sleep */"
    )
    .expect("write");
    w.push_str(RUNTIME);
    w.push_str("\n/* ---- calls ---- */\n");
    for (i, t) in model.terminals.iter().enumerate() {
        w.push_str(&call::function(i, t, opts.scale_bytes)?);
    }
    w.push_str("\n/* ---- rank groups: their grammars, computation before each call ---- */\n");
    for (gi, group) in model.groups.iter().enumerate() {
        let g = &model.grammars[group.grammar as usize];
        writeln!(w, "/* group {gi}: ranks {} */", ranges(&group.ranks)).expect("write");
        for r in 1..g.rule_count() {
            writeln!(w, "static void g{gi}_r{r}(void);").expect("write");
        }
        let mut site = 0;
        for r in 0..g.rule_count() as u32 {
            writeln!(w, "static void g{gi}_r{r}(void)\n{{").expect("write");
            for &(sym, exp) in g.body(r) {
                let mut stmt = String::new();
                let secs = group.site_secs[site];
                match sym {
                    Symbol::Terminal(t) => {
                        if secs > 0.0 {
                            write!(stmt, "compute({secs:e}); ").expect("write");
                        }
                        write!(stmt, "t{t}();").expect("write");
                    }
                    Symbol::Rule(q) => write!(stmt, "g{gi}_r{q}();").expect("write"),
                }
                if exp > 1 {
                    writeln!(w, "    for (long i = 0; i < {exp}; i++) {{ {stmt} }}")
                        .expect("write");
                } else {
                    writeln!(w, "    {stmt}").expect("write");
                }
                site += 1;
            }
            if r == 0 && group.tail_secs > 0.0 {
                writeln!(w, "    compute({:e});", group.tail_secs).expect("write");
            }
            w.push_str("}\n");
        }
    }
    w.push_str("\nstatic void proxy_run(int rank)\n{\n");
    for (gi, group) in model.groups.iter().enumerate() {
        writeln!(
            w,
            "    if ({}) {{ g{gi}_r0(); return; }}",
            rank_test(&group.ranks)
        )
        .expect("write");
    }
    w.push_str("}\n");
    w.push_str("\nPROXY_HELPER double proxy_compute_secs(int rank)\n{\n");
    for group in &model.groups {
        let secs = group.total_secs(&model.grammars[group.grammar as usize]);
        writeln!(w, "    if ({}) return {secs:e};", rank_test(&group.ranks)).expect("write");
    }
    w.push_str("    return 0;\n}\n");
    let makefile = "# Generated by `timeless proxy`: only an MPI C compiler is needed.\n\
                    MPICC ?= mpicc\nCFLAGS ?= -O2 -Wall -Wextra\n\n\
                    proxy: proxy.c\n\t$(MPICC) $(CFLAGS) -o $@ proxy.c\n\n\
                    clean:\n\trm -f proxy\n\n.PHONY: clean\n"
        .to_string();
    Ok(Proxy {
        source: s,
        makefile,
        model,
    })
}

impl Proxy {
    /// Writes `proxy.c` and `Makefile` into `dir` (created if missing).
    ///
    /// # Errors
    /// [`ProxyError::Io`] naming the path.
    pub fn write_to(&self, dir: &Path) -> Result<(), ProxyError> {
        let io = |p: &Path| {
            let path = p.display().to_string();
            move |source| ProxyError::Io { path, source }
        };
        std::fs::create_dir_all(dir).map_err(io(dir))?;
        let c = dir.join("proxy.c");
        std::fs::write(&c, &self.source).map_err(io(&c))?;
        let m = dir.join("Makefile");
        std::fs::write(&m, &self.makefile).map_err(io(&m))?;
        Ok(())
    }
}

/// The C condition on `rank` that holds for exactly `ranks` (increasing):
/// `rank == 0 || (rank >= 2 && rank <= 5)`.
fn rank_test(ranks: &[u32]) -> String {
    runs(ranks)
        .into_iter()
        .map(|(a, b)| {
            if a == b {
                format!("rank == {a}")
            } else {
                format!("(rank >= {a} && rank <= {b})")
            }
        })
        .collect::<Vec<_>>()
        .join(" || ")
}

/// Increasing ranks as inclusive runs: [0, 1, 2, 5] → [(0, 2), (5, 5)].
fn runs(ranks: &[u32]) -> Vec<(u32, u32)> {
    let mut out: Vec<(u32, u32)> = Vec::new();
    for &r in ranks {
        match out.last_mut() {
            Some((_, b)) if *b + 1 == r => *b = r,
            _ => out.push((r, r)),
        }
    }
    out
}

fn ranges(ranks: &[u32]) -> String {
    runs(ranks)
        .iter()
        .map(|&(a, b)| {
            if a == b {
                a.to_string()
            } else {
                format!("{a}-{b}")
            }
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn runs_of_ranks() {
        assert_eq!(runs(&[0, 1, 2, 5, 7, 8]), [(0, 2), (5, 5), (7, 8)]);
        assert_eq!(ranges(&[0, 1, 2, 5]), "0-2, 5");
    }
}
