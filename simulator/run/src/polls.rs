//! `timeless/poll-cpu-from-trace`: the CPU seconds per MPI call each rank's poll budget grows
//! by, from the trace's in-call times (`timeless_trace::incall`) and, with `taken`, its
//! timestamps (`timeless_calibrate::compute::taken_shares`).

use std::path::Path;

use timeless_replay::ReplayConfig;

use crate::{Frontend, SimulateConfig, SimulateError};

/// With `timeless/poll-cpu-from-trace` (else nothing): each rank's poll budget per call
/// (`ReplayConfig::poll_cpu_secs_per_call`) from the in-call times next to the trace
/// (`timeless_calibrate::compute::poll_secs_per_call`: in the directory of the list file, of
/// `config.trace` if it is a directory, or of the first rank file), with `taken` scaled by
/// the timestamps' shares. Without the in-call file, a notice, and waiting stays free.
///
/// # Errors
/// [`SimulateError::PollBudget`] if the in-call file exists but does not parse, or with
/// `taken` the timestamps are missing or malformed.
pub(crate) fn set_trace_polls(
    cfg: &mut ReplayConfig,
    config: &SimulateConfig,
    first_file: Option<&Path>,
    frontend: &mut dyn Frontend,
) -> Result<(), SimulateError> {
    if !cfg.poll_cpu_from_trace.is_on() {
        return Ok(());
    }
    let dir = match config.trace.as_deref() {
        Some(t) if t.is_dir() => Some(t.to_path_buf()),
        Some(t) => t.parent().map(Path::to_path_buf),
        None => first_file.and_then(Path::parent).map(Path::to_path_buf),
    };
    let dir = dir.unwrap_or_default();
    let per_call = timeless_calibrate::compute::poll_secs_per_call(&dir, cfg.poll_cpu_from_trace)
        .map_err(|e| SimulateError::PollBudget(Box::new(e)))?;
    match per_call {
        Some(per_call) => cfg.poll_cpu_secs_per_call = per_call,
        None => frontend.notice(&format!(
            "timeless/poll-cpu-from-trace: no {} in '{}' (traced before the tracer wrote it?): waiting ranks take no core time",
            timeless_trace::incall::FILE,
            dir.display()
        )),
    }
    Ok(())
}
