//! `timeless/poll-cpu-from-trace`: the CPU seconds per MPI call each rank's poll budget grows
//! by, from the trace's in-call times (`timeless_trace::incall`).

use std::path::Path;

use timeless_replay::ReplayConfig;

use crate::{Frontend, SimulateConfig, SimulateError};

/// With `timeless/poll-cpu-from-trace` (else nothing): each rank's in-call CPU seconds per call
/// (`ReplayConfig::poll_cpu_secs_per_call`) from the in-call times next to the trace (`timeless_trace::incall`, in the directory of the list file, of
/// `config.trace` if it is a directory, or of the first rank file). Without the file, a notice, and
/// waiting stays free.
///
/// # Errors
/// [`SimulateError::Trace`] if the file exists but does not parse.
pub(crate) fn set_trace_polls(
    cfg: &mut ReplayConfig,
    config: &SimulateConfig,
    first_file: Option<&Path>,
    frontend: &mut dyn Frontend,
) -> Result<(), SimulateError> {
    if !cfg.poll_cpu_from_trace {
        return Ok(());
    }
    let dir = match config.trace.as_deref() {
        Some(t) if t.is_dir() => Some(t.to_path_buf()),
        Some(t) => t.parent().map(Path::to_path_buf),
        None => first_file.and_then(Path::parent).map(Path::to_path_buf),
    };
    let dir = dir.unwrap_or_default();
    match timeless_trace::incall::read_cpu_secs_per_call(&dir)? {
        Some(per_call) => cfg.poll_cpu_secs_per_call = per_call,
        None => frontend.notice(&format!(
            "timeless/poll-cpu-from-trace: no {} in '{}' (traced before the tracer wrote it?): waiting ranks take no core time",
            timeless_trace::incall::FILE,
            dir.display()
        )),
    }
    Ok(())
}
