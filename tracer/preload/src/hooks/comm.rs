//! Communicator creation and release.

use super::*;

/// Describes a new communicator in a comment (and SimGrid's no-op action where it has one).
fn new_comm(
    t: &mut Tracer,
    action: Option<&str>,
    how: std::fmt::Arguments<'_>,
    newcomm: MPI_Comm,
) -> Result<(), Fail> {
    if let Some(a) = action {
        t.rec(format_args!("{a}"))?;
    }
    if newcomm == mpi::comm_null() {
        return t.note(format_args!("{how}: MPI_COMM_NULL"));
    }
    let info = t.comms.get(newcomm)?.clone();
    t.note(format_args!(
        "comm {} = {how}: world ranks {}",
        info.id,
        Counts(&info.peers.iter().map(|&w| u64::from(w)).collect::<Vec<_>>())
    ))
}

fn comm_id(t: &mut Tracer, comm: MPI_Comm) -> Result<u32, Fail> {
    Ok(t.comms.get(comm)?.id)
}

/// `comm_split`.
pub struct CommSplit;
impl Hook<(MPI_Comm, c_int, c_int, *mut MPI_Comm)> for CommSplit {
    type Stash = ();
    fn pre(_: &mut Tracer, _: &(MPI_Comm, c_int, c_int, *mut MPI_Comm)) -> Result<(), Fail> {
        Ok(())
    }
    fn post(
        t: &mut Tracer,
        &(comm, color, key, newcomm): &(MPI_Comm, c_int, c_int, *mut MPI_Comm),
        _: (),
        ret: c_int,
    ) -> Result<(), Fail> {
        if failed(t, ret)? {
            return Ok(());
        }
        let p = comm_id(t, comm)?;
        // SAFETY: output of a successful call.
        let nc = unsafe { *newcomm };
        new_comm(
            t,
            Some("comm_split"),
            format_args!("split of comm {p} color {color} key {key}"),
            nc,
        )
    }
}
impl Hook<(MPI_Comm, c_int, c_int, mpi_sys::MPI_Info, *mut MPI_Comm)> for CommSplit {
    type Stash = ();
    fn pre(
        _: &mut Tracer,
        _: &(MPI_Comm, c_int, c_int, mpi_sys::MPI_Info, *mut MPI_Comm),
    ) -> Result<(), Fail> {
        Ok(())
    }
    fn post(
        t: &mut Tracer,
        &(comm, split_type, key, _, newcomm): &(
            MPI_Comm,
            c_int,
            c_int,
            mpi_sys::MPI_Info,
            *mut MPI_Comm,
        ),
        _: (),
        ret: c_int,
    ) -> Result<(), Fail> {
        if failed(t, ret)? {
            return Ok(());
        }
        let p = comm_id(t, comm)?;
        // SAFETY: output of a successful call.
        let nc = unsafe { *newcomm };
        new_comm(
            t,
            Some("comm_split"),
            format_args!("split_type of comm {p} type {split_type} key {key}"),
            nc,
        )
    }
}

/// `comm_dup`.
pub struct CommDup;
impl Hook<(MPI_Comm, *mut MPI_Comm)> for CommDup {
    type Stash = ();
    fn pre(_: &mut Tracer, _: &(MPI_Comm, *mut MPI_Comm)) -> Result<(), Fail> {
        Ok(())
    }
    fn post(
        t: &mut Tracer,
        &(comm, newcomm): &(MPI_Comm, *mut MPI_Comm),
        _: (),
        ret: c_int,
    ) -> Result<(), Fail> {
        if failed(t, ret)? {
            return Ok(());
        }
        let p = comm_id(t, comm)?;
        // SAFETY: output of a successful call.
        let nc = unsafe { *newcomm };
        new_comm(t, Some("comm_dup"), format_args!("dup of comm {p}"), nc)
    }
}

/// `comm_create`: SimGrid 3.32 has no action for it, so a comment only.
pub struct CommCreate;
impl Hook<(MPI_Comm, MPI_Group, *mut MPI_Comm)> for CommCreate {
    type Stash = ();
    fn pre(_: &mut Tracer, _: &(MPI_Comm, MPI_Group, *mut MPI_Comm)) -> Result<(), Fail> {
        Ok(())
    }
    fn post(
        t: &mut Tracer,
        &(comm, _, newcomm): &(MPI_Comm, MPI_Group, *mut MPI_Comm),
        _: (),
        ret: c_int,
    ) -> Result<(), Fail> {
        if failed(t, ret)? {
            return Ok(());
        }
        let p = comm_id(t, comm)?;
        // SAFETY: output of a successful call.
        let nc = unsafe { *newcomm };
        new_comm(t, None, format_args!("create from comm {p}"), nc)
    }
}

/// `comm_free`: the handle may be reused, so the tracer forgets it.
pub struct CommFree;
impl Hook<(*mut MPI_Comm,)> for CommFree {
    type Stash = Option<u32>;
    fn pre(t: &mut Tracer, &(comm,): &(*mut MPI_Comm,)) -> Result<Option<u32>, Fail> {
        // SAFETY: the communicator argument, read before the call frees it.
        let c = unsafe { *comm };
        Ok(t.comms.forget(c).map(|i| i.id))
    }
    fn post(t: &mut Tracer, _: &(*mut MPI_Comm,), id: Option<u32>, _: c_int) -> Result<(), Fail> {
        match id {
            Some(id) => t.note(format_args!("comm {id} freed")),
            None => Ok(()),
        }
    }
}
