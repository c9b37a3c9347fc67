//! Replay configuration: SimGrid 3.32's `--cfg` keys that change a replay's timing.
//!
//! Every key keeps SimGrid's name and default (reference §9). Keys SimGrid has but that cannot
//! change a replay (e.g. `smpi/host-speed`, `smpi/wtime`, tracing keys) are accepted and ignored,
//! and reported back so the user knows.

use timeless_kernel::{NetworkConfig, PiecewiseFactor};

use crate::collective::CollectiveConfig;

/// Everything that shapes a replay besides the platform and the traces.
#[derive(Debug, Clone)]
pub struct ReplayConfig {
    /// Network model parameters (`smpi/bw-factor`, `smpi/lat-factor`, `network/weight-S`,
    /// `network/TCP-gamma`, `network/crosstraffic`).
    pub net: NetworkConfig,
    /// `network/loopback-bw` in B/s (10e9): the `__loopback__` link of Full/Floyd/Dijkstra zones.
    pub loopback_bandwidth_bytes_per_sec: f64,
    /// `network/loopback-lat` in s (0).
    pub loopback_latency_secs: f64,
    /// `smpi/send-is-detached-thresh` in bytes (65536): smaller sends return at once.
    pub detached_thresh_bytes: u64,
    /// `smpi/async-small-thresh` in bytes (0): smaller sends start moving before the receive is
    /// posted.
    pub async_small_thresh_bytes: u64,
    /// `smpi/os`: software cost (s) of a blocking detached send, by size.
    pub os: PiecewiseFactor,
    /// `smpi/or`: software cost (s) of receiving a detached message, by size.
    pub or: PiecewiseFactor,
    /// `smpi/ois`: software cost (s) of an `isend`, by size.
    pub ois: PiecewiseFactor,
    /// `smpi/test` in s (1e-4): back-off sleep before a `test`.
    pub test_secs: f64,
    /// `smpi/iprobe` in s (1e-4): back-off before each probe of a negative-count `recv`.
    pub iprobe_secs: f64,
    /// `smpi/iprobe-cpu-usage` (1): share of the CPU the probe back-off keeps busy.
    pub iprobe_cpu_usage: f64,
    /// `smpi/grow-injected-times` (yes): the test/iprobe back-off grows after each failure.
    pub grow_injected_times: bool,
    /// `smpi/simulate-computation` (yes): when off, `compute` actions take no time.
    pub simulate_computation: bool,
    /// `timeless/poll-cpu-share` (0; a timeless extension, not a SimGrid key): a rank blocked
    /// waiting for requests keeps this share of a core busy on its host, relative to a
    /// computing rank (`Engine::start_poll`), as an MPI library's progress loop does on a
    /// folded run. 0: waiting is free for the cores, as in SimGrid.
    pub poll_cpu_share: f64,
    /// `timeless/poll-spin-secs` (infinite; a timeless extension): with a poll share, the CPU
    /// time in seconds a blocked rank's poll burns before it yields its core for the rest of
    /// the wait (an MPI library that spins a while, then blocks or yields); each time the rank
    /// blocks again, it spins again. Infinite: it polls for the whole wait.
    pub poll_spin_secs: f64,
    /// `timeless/poll-cpu-from-trace` (no; a timeless extension, not a SimGrid key): each rank
    /// spends, on its core, CPU time it spent inside MPI calls in the traced run: every
    /// call adds [`ReplayConfig::poll_cpu_secs_per_call`] to the rank's budget, and a blocked
    /// rank polls (as a computing rank's equal, `Engine::start_poll` of share 1) until its
    /// budget is spent or its wait ends (the rest is kept for its next wait). The front end
    /// reads the budget from the trace's `in-call-times.csv` (`timeless_trace::incall`). In a
    /// run folded several ranks per core the cores are busy for the compute plus this time
    /// (`validation/external/README.md`, session 39), which the ranks' calls take from the
    /// computing core-mates; on a core of its own a poll delays nobody. Values: `no`, `yes`
    /// (all of the in-call CPU time, [`PollFromTrace::InCall`]) or `taken` (the part that took
    /// a core from a computing rank, [`PollFromTrace::Taken`]).
    pub poll_cpu_from_trace: PollFromTrace,
    /// Per rank, CPU seconds each of its MPI calls adds to its poll budget (its in-call CPU
    /// time over its calls in the traced run). Empty: no budget. Set by front ends (not a
    /// key), used when `timeless/poll-cpu-share` is 0.
    pub poll_cpu_secs_per_call: Vec<f64>,
    /// `timeless/pin-ranks` (no; a timeless extension, not a SimGrid key): each rank's
    /// executions (and polls) run on one core of its host instead of on the host's cores in
    /// common: the k-th rank placed on a host with C cores (ranks in order) gets core k mod C,
    /// a CPU of one core at the host's speed, which it shares with the other ranks on that core
    /// only (max-min, as a host's CPU). This is a run pinned as Open MPI's `--map-by core
    /// --bind-to core:overload-allowed` pins a folded run (rank r on core r mod C): a core
    /// whose ranks all wait stays idle while another core has two computing ranks, which the
    /// host-wide sharing of SimGrid's model (every computing rank gets min(1, C/n) of a core)
    /// does not see. Messages still go through the host's routes.
    pub pin_ranks: bool,
    /// `timeless/fold-slice-secs` (0: off; a timeless extension, not a SimGrid key): the
    /// scheduler slice in seconds of a rank computing on a core it shares with waiting ranks
    /// (a CPU of one core holding several ranks: `timeless/pin-ranks` or one-core hosts). A
    /// rank whose wait ends while a core-mate computes resumes only when that computation's
    /// slice ends or the computation does (`sim::slices`): Open MPI's waiting ranks poll and
    /// yield, so the computing one keeps the core for a whole slice and a message is seen at
    /// the poller's next turn. Measured by `validation/external/foldlab/coremate.c` (a round
    /// trip whose sender's core-mate computes: 1.9 ms on kernel 6.18 on an Intel Xeon VM,
    /// 2.3 ms on an AMD EPYC one).
    pub fold_slice_secs: f64,
    /// `timeless/cold-call-secs` (0: off; a timeless extension, not a SimGrid key): the CPU
    /// seconds the first MPI call after a long compute burst costs its rank's core on top of
    /// the network model (which calls: `timeless/cold-call-before`). After a
    /// burst that streamed through more memory than the caches hold, the MPI library's shared
    /// state must come back to the core: on the 2-core AMD EPYC VM a 2-rank `MPI_Allreduce` of
    /// one double took 9.75 µs (median, the last arriver) after 8 MB of compute against
    /// 0.2-0.5 µs after 0.8 MB or less, and the external applications' allreduces 15-20 µs
    /// after their bursts (`validation/external/README.md`, session 40).
    pub cold_call_secs: f64,
    /// `timeless/cold-call-after-secs` (1e-4): the shortest burst, in seconds at its host's
    /// speed, after which a call is cold (`timeless/cold-call-secs`).
    pub cold_call_after_secs: f64,
    /// `timeless/cold-call-before` (`collective`): `collective` charges the cold call only to a
    /// collective that follows the long burst directly (as an execution before it, accounted
    /// as compute), `any` to whatever call follows (the burst lasts longer). On the external
    /// set and the corpus (`validation/external/README.md`, session 40) `any` overshoots the
    /// pipelines (wavefront, SNAP), whose sends follow bursts on data that stays in the caches;
    /// the collectives after long bursts are where the applications' cold calls show.
    pub cold_call_collective_only: bool,
    /// `timeless/rendezvous-late-wait` (0 at every size; a timeless extension, not a SimGrid
    /// key), by size as `smpi/ois` (`THRESH:SECS:SECS_PER_BYTE;...`): a rendezvous send
    /// (S >= `smpi/send-is-detached-thresh`) whose receive is posted after it completes this
    /// much after its transfer ends. In a run folded several ranks per core, the late receiver
    /// finds the request-to-send waiting, copies the data and acknowledges; the sender, which
    /// yielded its core while it waited, sees the acknowledgement only once it gets a core
    /// again. An early receiver (a ping-pong's) is unaffected. 0: SimGrid's rendezvous, the
    /// sender done when the transfer is. `timeless calibrate network --fold K` fits it on the
    /// folded exchange (README "Folded runs").
    pub rendezvous_late_wait: PiecewiseFactor,
    /// `smpi/<coll>` algorithm choices.
    pub colls: CollectiveConfig,
}

impl Default for ReplayConfig {
    fn default() -> Self {
        let zero =
            PiecewiseFactor::parse(PiecewiseFactor::DEFAULT_OVERHEAD, 2).expect("valid default");
        ReplayConfig {
            net: NetworkConfig::default(),
            loopback_bandwidth_bytes_per_sec: 10e9,
            loopback_latency_secs: 0.0,
            detached_thresh_bytes: 65536,
            async_small_thresh_bytes: 0,
            os: zero.clone(),
            or: zero.clone(),
            ois: zero,
            test_secs: 1e-4,
            iprobe_secs: 1e-4,
            iprobe_cpu_usage: 1.0,
            grow_injected_times: true,
            simulate_computation: true,
            poll_cpu_share: 0.0,
            poll_spin_secs: f64::INFINITY,
            poll_cpu_from_trace: PollFromTrace::No,
            poll_cpu_secs_per_call: Vec::new(),
            pin_ranks: false,
            fold_slice_secs: 0.0,
            cold_call_secs: 0.0,
            cold_call_after_secs: 1e-4,
            cold_call_collective_only: true,
            rendezvous_late_wait: PiecewiseFactor::parse(PiecewiseFactor::DEFAULT_OVERHEAD, 2)
                .expect("valid default"),
            colls: CollectiveConfig::default(),
        }
    }
}

/// Which of a rank's traced in-call CPU time its poll budget holds
/// (`timeless/poll-cpu-from-trace`; the front ends fill [`ReplayConfig::poll_cpu_secs_per_call`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PollFromTrace {
    /// `no`: no budget; waiting is free for the cores, as in SimGrid.
    No,
    /// `yes`: all of it (`in-call-times.csv`'s CPU seconds over calls).
    InCall,
    /// `taken`: the share of it during which a computing core-mate wanted the core, from the
    /// trace's timestamps (`timeless_calibrate::compute::taken_shares`): a spin while every
    /// rank of the core waits delays nobody.
    Taken,
}

impl PollFromTrace {
    /// Whether a budget is read at all.
    pub fn is_on(self) -> bool {
        self != PollFromTrace::No
    }
}

/// What [`ReplayConfig::set`] did with a key.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum KeyEffect {
    /// The key changes the replay.
    Applied,
    /// SimGrid knows the key but it cannot change a replay.
    Ignored,
}

/// Keys SimGrid 3.32 accepts that have no effect on a time-independent replay.
const NO_EFFECT_KEYS: &[&str] = &[
    "surf/precision",
    "maxmin/precision",
    "network/model",
    "network/optim",
    "cpu/model",
    "cpu/optim",
    "host/model",
    "smpi/host-speed",
    "smpi/cpu-threshold",
    "smpi/wtime",
    "smpi/display-timing",
    "smpi/init",
    "smpi/finalization-barrier",
    "smpi/privatization",
    "smpi/keep-temps",
    "smpi/comp-adjustment-file",
    "smpi/IB-penalty-factors",
    "smpi/shared-malloc",
    "tracing",
    "tracing/filename",
    "tracing/smpi",
    "precision/timing",
    "precision/work-amount",
];

fn parse_f64(key: &str, v: &str) -> Result<f64, String> {
    let x: f64 = v
        .trim()
        .parse()
        .map_err(|_| format!("{key}: '{v}' is not a number"))?;
    if !x.is_finite() || x < 0.0 {
        return Err(format!("{key}: '{v}' must be a finite number >= 0"));
    }
    Ok(x)
}

fn parse_bool(key: &str, v: &str) -> Result<bool, String> {
    match v.trim().to_ascii_lowercase().as_str() {
        "yes" | "on" | "true" | "1" => Ok(true),
        "no" | "off" | "false" | "0" => Ok(false),
        _ => Err(format!(
            "{key}: '{v}' is not a boolean (expected yes/no, on/off, true/false, 1/0)"
        )),
    }
}

fn parse_bytes(key: &str, v: &str) -> Result<u64, String> {
    let x = parse_f64(key, v)?;
    Ok(x as u64)
}

impl ReplayConfig {
    /// The replay side of an ideal network (`timeless_platform::WhatIf::ideal_network`): no
    /// per-message software overhead (`smpi/os`, `smpi/or`, `smpi/ois` become 0); the platform
    /// side makes transfers instantaneous.
    pub fn ideal_network(&mut self) {
        let zero =
            PiecewiseFactor::parse(PiecewiseFactor::DEFAULT_OVERHEAD, 2).expect("valid default");
        self.os = zero.clone();
        self.or = zero.clone();
        self.ois = zero;
    }

    /// Applies one `--cfg KEY:VALUE` setting (`item` is `KEY:VALUE`; the value may itself contain
    /// colons, as `smpi/os:0:1e-6:1e-9`).
    ///
    /// # Errors
    /// An unknown key, or a value that does not parse, with what was expected.
    pub fn set(&mut self, item: &str) -> Result<KeyEffect, String> {
        let (key, value) = item
            .split_once(':')
            .ok_or_else(|| format!("'{item}' is not KEY:VALUE (e.g. network/crosstraffic:0)"))?;
        let (key, value) = (key.trim(), value.trim());
        let factor = |n| PiecewiseFactor::parse(value, n).map_err(|e| format!("{key}: {e}"));
        match key {
            "smpi/bw-factor" => self.net.bw_factor = factor(1)?,
            "smpi/lat-factor" => self.net.lat_factor = factor(1)?,
            "smpi/os" => self.os = factor(1)?,
            "smpi/or" => self.or = factor(1)?,
            "smpi/ois" => self.ois = factor(1)?,
            "network/weight-S" => self.net.weight_s_bytes = parse_f64(key, value)?,
            "network/TCP-gamma" | "network/TCP_gamma" => {
                self.net.tcp_gamma_bytes = parse_f64(key, value)?
            }
            "network/crosstraffic" => self.net.crosstraffic = parse_bool(key, value)?,
            "network/loopback-bw" => self.loopback_bandwidth_bytes_per_sec = parse_f64(key, value)?,
            "network/loopback-lat" => self.loopback_latency_secs = parse_f64(key, value)?,
            "smpi/send-is-detached-thresh" => self.detached_thresh_bytes = parse_bytes(key, value)?,
            "smpi/async-small-thresh" => self.async_small_thresh_bytes = parse_bytes(key, value)?,
            "smpi/test" => self.test_secs = parse_f64(key, value)?,
            "smpi/iprobe" => self.iprobe_secs = parse_f64(key, value)?,
            "smpi/iprobe-cpu-usage" => self.iprobe_cpu_usage = parse_f64(key, value)?,
            "smpi/grow-injected-times" => self.grow_injected_times = parse_bool(key, value)?,
            "smpi/simulate-computation" => self.simulate_computation = parse_bool(key, value)?,
            "timeless/poll-cpu-share" => self.poll_cpu_share = parse_f64(key, value)?,
            "timeless/poll-spin-secs" => self.poll_spin_secs = parse_f64(key, value)?,
            "timeless/rendezvous-late-wait" => self.rendezvous_late_wait = factor(1)?,
            "timeless/pin-ranks" => self.pin_ranks = parse_bool(key, value)?,
            "timeless/poll-cpu-from-trace" => {
                self.poll_cpu_from_trace = match value.trim().to_ascii_lowercase().as_str() {
                    "taken" => PollFromTrace::Taken,
                    _ => match parse_bool(key, value) {
                        Ok(true) => PollFromTrace::InCall,
                        Ok(false) => PollFromTrace::No,
                        Err(_) => {
                            return Err(format!("{key}: '{value}' is not one of no, yes, taken"))
                        }
                    },
                }
            }
            "timeless/fold-slice-secs" => self.fold_slice_secs = parse_f64(key, value)?,
            "timeless/cold-call-secs" => self.cold_call_secs = parse_f64(key, value)?,
            "timeless/cold-call-after-secs" => self.cold_call_after_secs = parse_f64(key, value)?,
            "timeless/cold-call-before" => {
                self.cold_call_collective_only = match value.trim() {
                    "any" => false,
                    "collective" => true,
                    _ => return Err(format!("{key}: '{value}' is not one of any, collective")),
                }
            }
            k if NO_EFFECT_KEYS.contains(&k) => return Ok(KeyEffect::Ignored),
            _ => {
                return match self.colls.set(key, value) {
                    Ok(true) => Ok(KeyEffect::Applied),
                    Ok(false) => Err(format!("unknown configuration key '{key}'")),
                    Err(e) => Err(format!("{key}: {e}")),
                }
            }
        }
        if self.async_small_thresh_bytes > self.detached_thresh_bytes {
            return Err(format!(
                "smpi/async-small-thresh ({}) must be <= smpi/send-is-detached-thresh ({})",
                self.async_small_thresh_bytes, self.detached_thresh_bytes
            ));
        }
        Ok(KeyEffect::Applied)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn keys_apply_and_reject() {
        let mut c = ReplayConfig::default();
        assert_eq!(c.set("network/crosstraffic:0"), Ok(KeyEffect::Applied));
        assert!(!c.net.crosstraffic);
        assert_eq!(c.set("smpi/os:0:1e-3:1e-6"), Ok(KeyEffect::Applied));
        assert!((c.os.overhead_secs(1000.0) - 2e-3).abs() < 1e-15);
        assert_eq!(c.set("smpi/host-speed:1Gf"), Ok(KeyEffect::Ignored));
        assert!(c
            .set("smpi/bogus:1")
            .unwrap_err()
            .contains("unknown configuration key 'smpi/bogus'"));
        assert!(c
            .set("network/crosstraffic:maybe")
            .unwrap_err()
            .contains("not a boolean"));
        assert!(c
            .set("smpi/bw-factor:1")
            .unwrap_err()
            .contains("needs 1 value"));
        assert!(c.set("nocolon").unwrap_err().contains("not KEY:VALUE"));
        assert!(c.rendezvous_late_wait.is_zero(), "off by default");
        assert_eq!(
            c.set("timeless/rendezvous-late-wait:4095:3e-6:0;0:1e-7:0"),
            Ok(KeyEffect::Applied)
        );
        assert!((c.rendezvous_late_wait.overhead_secs(8192.0) - 3e-6).abs() < 1e-18);
        assert!((c.rendezvous_late_wait.overhead_secs(1000.0) - 1e-7).abs() < 1e-18);
        assert_eq!(c.fold_slice_secs, 0.0, "off by default");
        assert_eq!(
            c.set("timeless/fold-slice-secs:2.3e-3"),
            Ok(KeyEffect::Applied)
        );
        assert_eq!(c.fold_slice_secs, 2.3e-3);
        assert_eq!((c.cold_call_secs, c.cold_call_after_secs), (0.0, 1e-4));
        assert_eq!(
            c.set("timeless/cold-call-secs:1e-5"),
            Ok(KeyEffect::Applied)
        );
        assert_eq!(
            c.set("timeless/cold-call-after-secs:2e-4"),
            Ok(KeyEffect::Applied)
        );
        assert_eq!((c.cold_call_secs, c.cold_call_after_secs), (1e-5, 2e-4));
        assert!(c.cold_call_collective_only, "collective by default");
        assert_eq!(
            c.set("timeless/cold-call-before:any"),
            Ok(KeyEffect::Applied)
        );
        assert!(!c.cold_call_collective_only);
        assert!(c
            .set("timeless/cold-call-before:all")
            .unwrap_err()
            .contains("not one of any, collective"));
        assert!(c
            .set("timeless/fold-slice-secs:-1")
            .unwrap_err()
            .contains("must be a finite number >= 0"));
    }
}
