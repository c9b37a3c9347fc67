//! Communicator creation and release.
//!
//! Every member of a new communicator writes SimGrid's no-op action for the call where SimGrid
//! has one (`comm_split`, `comm_dup`), then the communicator's `comm_def` record. A rank that
//! gets `MPI_COMM_NULL` writes the no-op action only. Communicators made by calls not listed
//! here are described at their first use.

use super::*;
use timeless_profile::naming::Kind;

/// Records the creation of the communicator in `newcomm` (the output of a successful call) by
/// a call of `kind` on `parent`; `local_group` is an intercommunicator's local group.
fn created(
    t: &mut Tracer,
    action: Option<&str>,
    newcomm: *mut MPI_Comm,
    kind: Kind,
    parent: MPI_Comm,
    local_group: Option<Vec<u32>>,
) -> Result<(), Fail> {
    if let Some(a) = action {
        t.rec(format_args!("{a}"))?;
    }
    // SAFETY: output of a successful call.
    let nc = unsafe { *newcomm };
    if t.profile.is_some() {
        // The parent first: described now if this is its first use.
        let pid = t.comm(parent)?.id;
        if let Some(p) = &mut t.profile {
            // The creating call's time goes to its parent.
            p.hint_comm(pid);
            p.creating(kind, pid, local_group);
            if nc == mpi::comm_null() {
                p.created_null();
            }
        }
    }
    if nc == mpi::comm_null() {
        return Ok(());
    }
    // A handle may be reused after MPI_Comm_free: describe the new communicator afresh.
    t.comms.forget(nc);
    t.comm(nc).map(drop)
}

/// Declares a creation kind: `$kind` for the argument tuple `$args`, whose parent
/// communicator is the first argument and whose `newcomm` output is at position `$out`,
/// written as SimGrid's `$action` (if any) and a `comm_def`; `$naming` is its kind for mpisee's
/// names (profiles).
macro_rules! creation {
    ($(#[$doc:meta])* $kind:ident ( $args:ty ) . $out:tt => $action:expr, $naming:expr) => {
        $(#[$doc])*
        pub struct $kind;
        impl Hook<$args> for $kind {
            type Stash = ();
            fn post(t: &mut Tracer, a: &$args, _: ()) -> Result<(), Fail> {
                created(t, $action, a.$out, $naming, a.0, None)
            }
        }
    };
}

creation!(
    /// `comm_split`.
    CommSplit((MPI_Comm, c_int, c_int, *mut MPI_Comm)).3 => Some("comm_split"), Kind::Split
);
creation!(
    /// `comm_split_type`, written as SimGrid's `comm_split`.
    CommSplitType((MPI_Comm, c_int, c_int, mpi_sys::MPI_Info, *mut MPI_Comm)).4 => Some("comm_split"), Kind::SplitType
);
creation!(
    /// `comm_dup`.
    CommDup((MPI_Comm, *mut MPI_Comm)).1 => Some("comm_dup"), Kind::Dup
);
creation!(
    /// `comm_dup_with_info`, written as SimGrid's `comm_dup`.
    CommDupWithInfo((MPI_Comm, mpi_sys::MPI_Info, *mut MPI_Comm)).2 => Some("comm_dup"), Kind::Dup
);
creation!(
    /// `comm_create_group` (called by the group's members only): the `comm_def` only.
    CommCreateGroup((MPI_Comm, MPI_Group, c_int, *mut MPI_Comm)).3 => None, Kind::CreateGroup
);
creation!(
    /// `intercomm_merge`: the merged intracommunicator's `comm_def`.
    IntercommMerge((MPI_Comm, c_int, *mut MPI_Comm)).2 => None, Kind::IntercommMerge
);
creation!(
    /// `comm_create`: SimGrid 3.32 has no action for it, so the `comm_def` only.
    CommCreate((MPI_Comm, MPI_Group, *mut MPI_Comm)).2 => None, Kind::Create
);
creation!(
    /// `cart_create`: the Cartesian communicator's `comm_def` (ranks may be reordered).
    CartCreate((MPI_Comm, c_int, Ints, Ints, c_int, *mut MPI_Comm)).5 => None, Kind::CartCreate
);
creation!(
    /// `graph_create`: the graph communicator's `comm_def`.
    GraphCreate((MPI_Comm, c_int, Ints, Ints, c_int, *mut MPI_Comm)).5 => None, Kind::GraphCreate
);
creation!(
    /// `dist_graph_create_adjacent`: the communicator's `comm_def`.
    DistGraphCreateAdjacent((MPI_Comm, c_int, Ints, Ints, c_int, Ints, Ints, mpi_sys::MPI_Info, c_int, *mut MPI_Comm)).9 => None, Kind::DistGraphAdjacent
);
creation!(
    /// `dist_graph_create`: the communicator's `comm_def`.
    DistGraphCreate((MPI_Comm, c_int, Ints, Ints, Ints, Ints, mpi_sys::MPI_Info, c_int, *mut MPI_Comm)).8 => None, Kind::DistGraphCreate
);
creation!(
    /// `cart_sub`: the `comm_def` of the caller's slice.
    CartSub((MPI_Comm, Ints, *mut MPI_Comm)).2 => None, Kind::CartSub
);

/// `comm_create_from_group` (MPI-4 sessions, called by the group's members only): the
/// `comm_def` only, as `comm_create`. The group may come from a process set of any session;
/// its members are written in the ranks of `mpi://WORLD` (see `session`).
#[cfg(mpi_sessions)]
pub struct CommFromGroup;
#[cfg(mpi_sessions)]
type FromGroupArgs = (
    MPI_Group,
    *const std::ffi::c_char,
    mpi_sys::MPI_Info,
    mpi_sys::MPI_Errhandler,
    *mut MPI_Comm,
);
#[cfg(mpi_sessions)]
impl Hook<FromGroupArgs> for CommFromGroup {
    type Stash = ();
    fn post(t: &mut Tracer, a: &FromGroupArgs, _: ()) -> Result<(), Fail> {
        // SAFETY: output of a successful call.
        let nc = unsafe { *a.4 };
        if nc == mpi::comm_null() {
            return Ok(());
        }
        // A handle may be reused after MPI_Comm_free: describe the new communicator afresh.
        t.comms.forget(nc);
        t.comm(nc).map(drop)
    }
}

/// `comm_idup`: SimGrid's `comm_dup` and the `comm_def` of the new communicator when the call
/// is posted, in creation order like the other ranks. Its members are the parent's: the new
/// handle may not be used (so not asked for its group) before the request completes, whose
/// completion then records nothing.
pub struct CommIdup;
impl Hook<(MPI_Comm, *mut MPI_Comm, Req)> for CommIdup {
    type Stash = ();
    fn post(
        t: &mut Tracer,
        &(comm, newcomm, req): &(MPI_Comm, *mut MPI_Comm, Req),
        _: (),
    ) -> Result<(), Fail> {
        t.rec(format_args!("comm_dup"))?;
        // SAFETY: outputs of a successful call.
        let (nc, rq) = unsafe { (*newcomm, *req) };
        if t.profile.is_some() {
            let pid = t.comm(comm)?.id;
            if let Some(p) = &mut t.profile {
                p.hint_comm(pid);
                p.creating(Kind::Idup, pid, None);
            }
        }
        t.comms.forget(nc);
        t.comms.add_copy(nc, comm)?;
        t.comm(nc)?;
        t.track(rq, Pending::Collective);
        Ok(())
    }
}

/// `intercomm_create`: timeless's format has no intercommunicator, so a comment naming both
/// groups (in world ranks) and what is not replayed; the new intercommunicator's own comment
/// follows (see `Tracer::comm`), and its point-to-point records are written in world ranks.
pub struct IntercommCreate;
impl Hook<(MPI_Comm, c_int, MPI_Comm, c_int, c_int, *mut MPI_Comm)> for IntercommCreate {
    type Stash = ();
    fn post(
        t: &mut Tracer,
        &(local, _, _, _, tag, newcomm): &(MPI_Comm, c_int, MPI_Comm, c_int, c_int, *mut MPI_Comm),
        _: (),
    ) -> Result<(), Fail> {
        let group = t.comm(local)?.peers;
        let members: Vec<u64> = group.iter().map(|&w| u64::from(w)).collect();
        t.note(format_args!(
            "intercomm_create (tag {tag}): local group world ranks {}; not replayed: the \
             leaders' exchange; point-to-point on the intercommunicator is written in world \
             ranks, its collectives as comments",
            Counts(&members)
        ))?;
        created(
            t,
            None,
            newcomm,
            Kind::IntercommCreate,
            local,
            Some(group.to_vec()),
        )
    }
}

/// `comm_free`: the handle may be reused, so the tracer forgets it.
pub struct CommFree;
impl Hook<(*mut MPI_Comm,)> for CommFree {
    type Stash = ();
    const WHILE_PAUSED: bool = true;
    fn pre(t: &mut Tracer, &(comm,): &(*mut MPI_Comm,)) -> Result<(), Fail> {
        // SAFETY: the communicator argument, read before the call frees it.
        let c = unsafe { *comm };
        if t.profile.is_some() {
            // The freeing call's time goes to the communicator freed.
            let id = t.comm(c)?.id;
            if let Some(p) = &mut t.profile {
                p.hint_comm(id);
            }
        }
        t.comms.forget(c);
        Ok(())
    }
    fn post(_: &mut Tracer, _: &(*mut MPI_Comm,), _: ()) -> Result<(), Fail> {
        Ok(())
    }
}
