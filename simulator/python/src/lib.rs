//! The `timeless` Python package (pyo3, built with maturin): [`simulate`](simulate::simulate)
//! and [`sweep`](sweep::sweep) call the same library functions as the `timeless` binary
//! (`timeless_run::simulate`, `timeless_sweep::run`), so a Python result is the CLI's to the
//! bit.
//!
//! ```python
//! import timeless
//! r = timeless.simulate("traces/ring4/ring.txt", platform="platforms/mycluster.xml",
//!                       deployment="deployments/mycluster-ring4.xml")
//! r.simulated_time          # 0.22372670703708541 (seconds; SimGrid 3.32's number)
//! r.ranks[0].compute_time   # seconds rank 0 spent computing
//! s = timeless.sweep("study.toml", "results", jobs=2)   # results/results.csv, results.db
//! ```
//!
//! Errors are typed exceptions carrying the library's message: [`InputError`] (bad trace,
//! platform, configuration or study file: the CLI's exit code 2), [`DeadlockError`] (exit 3),
//! [`OutputError`] (a file that cannot be written, exit 1), all subclasses of
//! [`TimelessError`]. The replay runs without the GIL.
//!
//! Built as an extension module (`extension-module`: it does not link libpython), so it has no
//! Rust test executable; `tests/test_timeless.py` (pytest) tests it, run by
//! `validation/run-tests.sh`.

pub mod simulate;
pub mod sweep;

use pyo3::create_exception;
use pyo3::exceptions::PyException;
use pyo3::prelude::*;

create_exception!(
    timeless,
    TimelessError,
    PyException,
    "Base class of the errors of timeless."
);
create_exception!(
    timeless,
    InputError,
    TimelessError,
    "Bad input: a trace, platform, deployment, hostfile, configuration or study file that \
     cannot be read or is invalid (the message names the file, line and what was expected)."
);
create_exception!(
    timeless,
    DeadlockError,
    TimelessError,
    "The replay deadlocked: the message lists each blocked rank, its action and trace line."
);
create_exception!(
    timeless,
    OutputError,
    TimelessError,
    "An output file (sweep results) cannot be written."
);

/// An error and its sources, `: `-separated (a source whose text is already in the message
/// is not repeated).
pub(crate) fn message(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(x) = src {
        let t = x.to_string();
        if !s.contains(&t) {
            s.push_str(": ");
            s.push_str(&t);
        }
        src = x.source();
    }
    s
}

/// Predict MPI run times by replaying time-independent traces on simulated platforms
/// (SimGrid 3.32's formats and numbers). `simulate` replays one trace, `sweep` runs a study
/// file; times are in seconds.
#[pymodule]
#[pyo3(name = "timeless")]
fn timeless_module(m: &Bound<'_, PyModule>) -> PyResult<()> {
    let py = m.py();
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    m.add("TimelessError", py.get_type::<TimelessError>())?;
    m.add("InputError", py.get_type::<InputError>())?;
    m.add("DeadlockError", py.get_type::<DeadlockError>())?;
    m.add("OutputError", py.get_type::<OutputError>())?;
    m.add_function(wrap_pyfunction!(simulate::simulate, m)?)?;
    m.add_function(wrap_pyfunction!(sweep::sweep, m)?)?;
    m.add_class::<simulate::Simulation>()?;
    m.add_class::<simulate::RankResult>()?;
    m.add_class::<sweep::SweepSummary>()?;
    m.add_class::<sweep::PointResult>()?;
    Ok(())
}
