//! End of the run: `MPI_Finalize`, `MPI_Abort`.

use super::*;

/// `finalize`: the last record; the trace is closed before the library shuts down.
pub struct Finalize;
impl Hook<()> for Finalize {
    type Stash = ();
    const WHILE_PAUSED: bool = true;
    fn pre(t: &mut Tracer, _: &()) -> Result<(), Fail> {
        t.clock_note()?;
        t.rec(format_args!("finalize"))?;
        if let Some(p) = t.profile.take() {
            crate::profile::stash(p.encode());
        }
        t.close("")
    }
    fn post(_: &mut Tracer, _: &(), _: ()) -> Result<(), Fail> {
        Ok(())
    }
}

/// `abort`: everything recorded is written before the library kills the job.
pub struct Abort;
impl Hook<(MPI_Comm, c_int)> for Abort {
    type Stash = ();
    const WHILE_PAUSED: bool = true;
    fn pre(t: &mut Tracer, &(_, code): &(MPI_Comm, c_int)) -> Result<(), Fail> {
        t.close(&format!("# MPI_Abort with error code {code}"))
    }
    fn post(_: &mut Tracer, _: &(MPI_Comm, c_int), _: ()) -> Result<(), Fail> {
        Ok(())
    }
}
