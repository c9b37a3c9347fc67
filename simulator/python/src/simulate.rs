//! `timeless.simulate`: one replay, `timeless_run::simulate` as `timeless simulate` calls it.

use std::collections::BTreeMap;
use std::path::PathBuf;

use pyo3::prelude::*;
use pyo3::types::{PyDict, PyList};
use timeless_replay::{NoObserver, Observer};
use timeless_run::{ErrorKind, Frontend, FrontendError, SimulateConfig, SimulateError};

use crate::{message, DeadlockError, InputError, OutputError};

/// One rank of a replay. Times are simulated seconds.
#[pyclass(frozen, get_all, module = "timeless")]
#[derive(Debug, Clone)]
pub struct RankResult {
    /// Rank in MPI_COMM_WORLD.
    pub rank: u32,
    /// Host it ran on.
    pub host: String,
    /// Date its trace completed, s.
    pub finish_time: f64,
    /// Date of its `init` action, s.
    pub init_time: f64,
    /// Time computing (flops), s.
    pub compute_time: f64,
    /// Time blocked while its transfers moved, s.
    pub comm_time: f64,
    /// Time blocked before its transfers could start (late sender or receiver), s.
    pub wait_time: f64,
    /// Time in `sleep` actions and software overheads, s.
    pub sleep_time: f64,
    /// Actions replayed.
    pub actions: u64,
}

#[pymethods]
impl RankResult {
    /// The fields as a dict (`rank`, `host`, `finish_time`, ... as the CLI's JSON `ranks[]`).
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("rank", self.rank)?;
        d.set_item("host", &self.host)?;
        d.set_item("finish_time", self.finish_time)?;
        d.set_item("init_time", self.init_time)?;
        d.set_item("compute_time", self.compute_time)?;
        d.set_item("comm_time", self.comm_time)?;
        d.set_item("wait_time", self.wait_time)?;
        d.set_item("sleep_time", self.sleep_time)?;
        d.set_item("actions", self.actions)?;
        Ok(d)
    }

    fn __repr__(&self) -> String {
        format!(
            "RankResult(rank={}, host={:?}, finish_time={:?})",
            self.rank, self.host, self.finish_time
        )
    }
}

/// The outcome of `simulate`.
#[pyclass(frozen, get_all, module = "timeless")]
#[derive(Debug)]
pub struct Simulation {
    /// Predicted run time, s: SimGrid's "Simulation time" (last rank's finish minus its init).
    pub simulated_time: f64,
    /// Actions replayed over all ranks.
    pub actions: u64,
    /// One entry per rank, in rank order (list of RankResult).
    pub ranks: Vec<RankResult>,
    /// The what-if changes applied, one line each (empty: none).
    pub what_if: Vec<String>,
    /// Non-fatal notices of the replay and of the inputs.
    pub warnings: Vec<String>,
    /// What the kernel did, by name (the counts of `timeless simulate --kernel-stats`): solves,
    /// rest_hits, general_solves, general_constraints, memo_hits, fillings, filling_rounds,
    /// live_scanned, region_solves, region_vars, region_gave_up, registrations, wakes,
    /// grouped, rate_updates, unchanged_rates.
    pub kernel: BTreeMap<String, u64>,
}

#[pymethods]
impl Simulation {
    /// The result as a dict: `simulated_time` (s), `actions`, `ranks` (list of dicts),
    /// `what_if`, `warnings`, `kernel`; the shape of `timeless simulate --format json
    /// --kernel-stats`.
    fn to_dict<'py>(&self, py: Python<'py>) -> PyResult<Bound<'py, PyDict>> {
        let d = PyDict::new(py);
        d.set_item("simulated_time", self.simulated_time)?;
        d.set_item("actions", self.actions)?;
        let ranks = PyList::empty(py);
        for r in &self.ranks {
            ranks.append(r.to_dict(py)?)?;
        }
        d.set_item("ranks", ranks)?;
        d.set_item("what_if", self.what_if.clone())?;
        d.set_item("warnings", self.warnings.clone())?;
        d.set_item("kernel", self.kernel.clone())?;
        Ok(d)
    }

    fn __repr__(&self) -> String {
        format!(
            "Simulation(simulated_time={:?}, ranks={}, actions={})",
            self.simulated_time,
            self.ranks.len(),
            self.actions
        )
    }
}

/// Collects the notices instead of printing them.
struct Collect(NoObserver, Vec<String>);
impl Frontend for Collect {
    fn notice(&mut self, text: &str) {
        self.1.push(text.to_string());
    }
    fn observer(&mut self) -> Result<&mut dyn Observer, FrontendError> {
        Ok(&mut self.0)
    }
}

/// The Python exception of a simulate error, with its message.
pub(crate) fn to_py(e: &SimulateError) -> PyErr {
    let m = message(e);
    match e.kind() {
        ErrorKind::Deadlock => DeadlockError::new_err(m),
        ErrorKind::Output => OutputError::new_err(m),
        _ => InputError::new_err(m),
    }
}

/// `cfg` as `KEY:VALUE` items: a list of strings, or a dict (values converted with `str`).
fn cfg_items(cfg: Option<&Bound<'_, PyAny>>) -> PyResult<Vec<String>> {
    let Some(cfg) = cfg else {
        return Ok(Vec::new());
    };
    if let Ok(d) = cfg.cast::<PyDict>() {
        let mut out = Vec::new();
        for (k, v) in d.iter() {
            out.push(format!("{}:{}", k.str()?, v.str()?));
        }
        return Ok(out);
    }
    cfg.extract::<Vec<String>>()
        .map_err(|_| InputError::new_err("cfg: expected a list of \"KEY:VALUE\" strings or a dict"))
}

/// Replay a time-independent trace on a simulated platform and predict its run time.
///
/// Arguments (paths are str or os.PathLike):
///   trace: a trace list file (one trace path per rank), one file with every rank's lines, or
///     a compressed trace (.tlg); None: the files named by the deployment's `<argument>`s.
///   platform: SimGrid platform XML (required).
///   deployment: SimGrid deployment XML placing each rank on a host.
///   hostfile: SimGrid hostfile (`name` or `name:k` per line), ranks placed round-robin.
///   np: number of ranks (default: from the deployment, hostfile or trace list).
///   cfg: SimGrid configuration, a list of "KEY:VALUE" strings or a dict
///     ({"smpi/bcast": "flattree"}), applied after cfg_file.
///   cfg_file: a file of KEY:VALUE lines (what `timeless calibrate` writes).
///   compensation: remove the tracer's overhead from compute bursts (trace-meta.json).
///   scale_compute, scale_bandwidth, scale_latency: what-if factors (positive, finite) on host
///     speeds, link bandwidths (bytes/s) and link latencies (s); 2.0 doubles.
///   ideal_network: zero latency and unlimited bandwidth; ideal_compute: infinitely fast hosts.
///   full_filling: fill each changed max-min component whole, in SimGrid's order (the CLI's
///     --full-filling), instead of the region a change reaches (equal to about 1e-15 relative).
///
/// Returns a Simulation: simulated_time (s), actions, ranks (RankResult: finish_time,
/// compute_time, comm_time, wait_time, sleep_time in s), what_if, warnings, kernel (counts).
///
/// Raises InputError (bad input, the message names file:line and what was expected),
/// DeadlockError (the replay deadlocked), OutputError.
#[pyfunction]
#[pyo3(signature = (trace=None, *, platform, deployment=None, hostfile=None, np=None, cfg=None,
    cfg_file=None, compensation=true, scale_compute=1.0, scale_bandwidth=1.0, scale_latency=1.0,
    ideal_network=false, ideal_compute=false, full_filling=false))]
#[allow(clippy::too_many_arguments)]
pub fn simulate(
    py: Python<'_>,
    trace: Option<PathBuf>,
    platform: PathBuf,
    deployment: Option<PathBuf>,
    hostfile: Option<PathBuf>,
    np: Option<usize>,
    cfg: Option<&Bound<'_, PyAny>>,
    cfg_file: Option<PathBuf>,
    compensation: bool,
    scale_compute: f64,
    scale_bandwidth: f64,
    scale_latency: f64,
    ideal_network: bool,
    ideal_compute: bool,
    full_filling: bool,
) -> PyResult<Simulation> {
    let mut c = SimulateConfig::new(platform);
    c.trace = trace;
    c.deployment = deployment;
    c.hostfile = hostfile;
    c.np = np;
    c.cfg = cfg_items(cfg)?;
    c.cfg_file = cfg_file;
    c.compensation = compensation;
    c.what_if.compute = scale_compute;
    c.what_if.bandwidth = scale_bandwidth;
    c.what_if.latency = scale_latency;
    c.what_if.ideal_network = ideal_network;
    c.what_if.ideal_compute = ideal_compute;
    c.region_filling = !full_filling;
    let (outcome, notices) = py.detach(|| {
        let mut fe = Collect(NoObserver, Vec::new());
        let r = timeless_run::simulate(&c, &mut fe);
        (r, fe.1)
    });
    let o = outcome.map_err(|e| to_py(&e))?;
    let mut warnings = notices;
    warnings.extend(o.report.warnings.iter().cloned());
    Ok(Simulation {
        simulated_time: o.report.simulated_time_secs,
        actions: o.report.actions,
        ranks: o
            .report
            .ranks
            .iter()
            .map(|r| RankResult {
                rank: r.rank,
                host: r.host.clone(),
                finish_time: r.finish_secs,
                init_time: r.init_secs,
                compute_time: r.compute_secs,
                comm_time: r.comm_secs,
                wait_time: r.wait_secs,
                sleep_time: r.sleep_secs,
                actions: r.actions,
            })
            .collect(),
        what_if: o.what_if,
        warnings,
        kernel: kernel_counts(&o.report),
    })
}

/// The kernel's counts by their `--kernel-stats --format json` names
/// (`timeless_kernel::KernelStats::named`).
fn kernel_counts(report: &timeless_replay::Report) -> BTreeMap<String, u64> {
    report
        .kernel
        .named()
        .into_iter()
        .map(|(name, n)| (name.to_string(), n))
        .collect()
}
