//! Record kinds: what each traced MPI call writes, in SimGrid 3.32's TI format.
//!
//! A kind implements [`Hook`] for the C argument tuple of every function the table maps to it
//! (the blocking and nonblocking forms of a collective share one kind). `pre` runs before the
//! library call and keeps what the call destroys (request handles); `post` writes the records
//! once the call succeeded. A failed call (non-`MPI_SUCCESS` return) records a comment only.
//!
//! Mapping to SimGrid 3.32 actions (reference §2), where the program's call has none:
//! * `ssend`/`rsend`/`bsend` → `send`; `issend`/`irsend`/`ibsend` → `isend`.
//! * `sendrecv` → `sendRecv` when both tags are 0 (SimGrid's action uses tag 0); otherwise
//!   `isend`, `irecv`, `wait`, `wait` with the real tags. With an `MPI_PROC_NULL` side, the
//!   other side alone as `send` or `recv`.
//! * `test` → `test src dst tag`; on success also `wait src dst tag`, so the replay completes the
//!   request where the program saw it complete.
//! * `waitall`/`testall` → `waitall` when they complete every pending point-to-point request of
//!   the rank (SimGrid waits for all stored requests), one `wait` per request otherwise;
//!   `waitany`/`waitsome`/`testany`/`testsome` → one `wait` per completed request.
//! * `probe`/`iprobe` → a comment (the following receive carries the size).
//! * nonblocking collectives → the blocking action, recorded when posted; their completion
//!   records nothing.
//! * reductions carry 0 flops (their arithmetic is inside MPI, excluded from bursts).
//! * collectives on a communicator other than the world (or a duplicate of it) → a comment
//!   naming the communicator; point-to-point on such a communicator → world ranks, preceded by
//!   a `# comm <id>` comment.

use std::ffi::{c_int, c_void};

use crate::mpi::{
    self, handle_key, MPI_Comm, MPI_Datatype, MPI_Group, MPI_Op, MPI_Request, MPI_Status,
};
use crate::runtime::Hook;
use crate::tracer::{Counts, Fail, Pending, Tracer, WaitKey};

type SB = *const c_void;
type RB = *mut c_void;
type Dt = MPI_Datatype;
type Req = *mut MPI_Request;
type St = *mut MPI_Status;
type Ints = *const c_int;

fn in_place<T>(buf: *const T) -> bool {
    std::ptr::eq(buf as *const c_void, mpi::in_place())
}

/// The `n` counts of a significant count array (`None` for a null pointer).
fn ints<'a>(p: Ints, n: usize) -> Option<&'a [c_int]> {
    // SAFETY: a significant count array of a successful call has one entry per rank of the
    // communicator.
    (!p.is_null()).then(|| unsafe { std::slice::from_raw_parts(p, n) })
}

fn failed(t: &mut Tracer, ret: c_int) -> Result<bool, Fail> {
    if ret == mpi::SUCCESS {
        Ok(false)
    } else {
        t.note(format_args!(
            "an MPI call failed with error {ret}: not recorded"
        ))?;
        Ok(true)
    }
}

/// Reads a status the wrapper guarantees to be real storage (never `MPI_STATUS_IGNORE`).
fn status<'a>(p: *mut MPI_Status) -> &'a MPI_Status {
    // SAFETY: the `Status`/`Statuses` argument kinds substitute the ignore sentinels.
    unsafe { &*p }
}

fn wait_rec(t: &mut Tracer, k: WaitKey) -> Result<(), Fail> {
    t.rec(format_args!("wait {} {} {}", k.0, k.1, k.2))
}

fn read_reqs(count: c_int, reqs: Req) -> Vec<u64> {
    if reqs.is_null() || count <= 0 {
        return Vec::new();
    }
    // SAFETY: an array of `count` requests, read before the call completes them.
    unsafe { std::slice::from_raw_parts(reqs, count as usize) }
        .iter()
        .map(|&r| handle_key(r))
        .collect()
}

/// `send`, `ssend`, `rsend`, `bsend`.
pub struct Send;
impl Hook<(SB, c_int, Dt, c_int, c_int, MPI_Comm)> for Send {
    type Stash = ();
    fn pre(_: &mut Tracer, _: &(SB, c_int, Dt, c_int, c_int, MPI_Comm)) -> Result<(), Fail> {
        Ok(())
    }
    fn post(
        t: &mut Tracer,
        &(_, count, dt, dest, tag, comm): &(SB, c_int, Dt, c_int, c_int, MPI_Comm),
        _: (),
        ret: c_int,
    ) -> Result<(), Fail> {
        if failed(t, ret)? {
            return Ok(());
        }
        let Some(dst) = t.peer(comm, dest)? else {
            return Ok(());
        };
        let (n, id) = t.volume(count, dt)?;
        t.note_comm(comm)?;
        t.rec(format_args!("send {dst} {tag} {n} {id}"))
    }
}

/// `isend`, `issend`, `irsend`, `ibsend`.
pub struct Isend;
impl Hook<(SB, c_int, Dt, c_int, c_int, MPI_Comm, Req)> for Isend {
    type Stash = ();
    fn pre(_: &mut Tracer, _: &(SB, c_int, Dt, c_int, c_int, MPI_Comm, Req)) -> Result<(), Fail> {
        Ok(())
    }
    fn post(
        t: &mut Tracer,
        &(_, count, dt, dest, tag, comm, req): &(SB, c_int, Dt, c_int, c_int, MPI_Comm, Req),
        _: (),
        ret: c_int,
    ) -> Result<(), Fail> {
        if failed(t, ret)? {
            return Ok(());
        }
        let Some(dst) = t.peer(comm, dest)? else {
            return Ok(());
        };
        let (n, id) = t.volume(count, dt)?;
        t.note_comm(comm)?;
        t.rec(format_args!("isend {dst} {tag} {n} {id}"))?;
        // SAFETY: the request output of a successful call.
        t.track(unsafe { *req }, Pending::Send { dst, tag });
        Ok(())
    }
}

/// Source and tag a completed receive matched, as world rank and tag.
fn matched(
    t: &mut Tracer,
    comm: MPI_Comm,
    source: c_int,
    tag: c_int,
    st: &MPI_Status,
) -> Result<Option<(u32, c_int)>, Fail> {
    let source = if source == mpi::any_source() {
        st.MPI_SOURCE
    } else {
        source
    };
    let tag = if tag == mpi::any_tag() {
        st.MPI_TAG
    } else {
        tag
    };
    Ok(t.peer(comm, source)?.map(|s| (s, tag)))
}

/// `recv`.
pub struct Recv;
impl Hook<(RB, c_int, Dt, c_int, c_int, MPI_Comm, St)> for Recv {
    type Stash = ();
    fn pre(_: &mut Tracer, _: &(RB, c_int, Dt, c_int, c_int, MPI_Comm, St)) -> Result<(), Fail> {
        Ok(())
    }
    fn post(
        t: &mut Tracer,
        &(_, count, dt, source, tag, comm, st): &(RB, c_int, Dt, c_int, c_int, MPI_Comm, St),
        _: (),
        ret: c_int,
    ) -> Result<(), Fail> {
        if failed(t, ret)? {
            return Ok(());
        }
        let Some((src, tag)) = matched(t, comm, source, tag, status(st))? else {
            return Ok(());
        };
        let (n, id) = t.volume(count, dt)?;
        t.note_comm(comm)?;
        t.rec(format_args!("recv {src} {tag} {n} {id}"))
    }
}

/// `irecv`: written where posted; a wildcard source or tag leaves a hole filled at completion.
pub struct Irecv;
impl Hook<(RB, c_int, Dt, c_int, c_int, MPI_Comm, Req)> for Irecv {
    type Stash = ();
    fn pre(_: &mut Tracer, _: &(RB, c_int, Dt, c_int, c_int, MPI_Comm, Req)) -> Result<(), Fail> {
        Ok(())
    }
    fn post(
        t: &mut Tracer,
        &(_, count, dt, source, tag, comm, req): &(RB, c_int, Dt, c_int, c_int, MPI_Comm, Req),
        _: (),
        ret: c_int,
    ) -> Result<(), Fail> {
        if failed(t, ret)? || source == mpi::proc_null() {
            return Ok(());
        }
        let (n, id) = t.volume(count, dt)?;
        t.note_comm(comm)?;
        let peers = t.comms.get(comm)?.peers.clone();
        let src = if source == mpi::any_source() {
            None
        } else {
            t.peer(comm, source)?
        };
        let tag = (tag != mpi::any_tag()).then_some(tag);
        let hole = match (src, tag) {
            (Some(s), Some(g)) => {
                t.rec(format_args!("irecv {s} {g} {n} {id}"))?;
                None
            }
            _ => Some(t.hole()?),
        };
        // SAFETY: the request output of a successful call.
        let r = unsafe { *req };
        t.track(
            r,
            Pending::Recv {
                src,
                tag,
                peers,
                count: n,
                dt: id,
                hole,
            },
        );
        Ok(())
    }
}

/// Writes the two halves of a send-receive (see the module documentation).
#[allow(clippy::too_many_arguments)]
fn sendrecv(
    t: &mut Tracer,
    scount: c_int,
    sdt: Dt,
    dest: c_int,
    stag: c_int,
    rcount: c_int,
    rdt: Dt,
    source: c_int,
    rtag: c_int,
    comm: MPI_Comm,
    st: &MPI_Status,
) -> Result<(), Fail> {
    let dst = t.peer(comm, dest)?;
    let src = matched(t, comm, source, rtag, st)?;
    if dst.is_none() && src.is_none() {
        return Ok(());
    }
    let (sn, sid) = t.volume(scount, sdt)?;
    let (rn, rid) = t.volume(rcount, rdt)?;
    t.note_comm(comm)?;
    let me = t.rank();
    match (dst, src) {
        (Some(d), Some((s, 0))) if stag == 0 => {
            t.rec(format_args!("sendRecv {sn} {d} {rn} {s} {sid} {rid}"))
        }
        (Some(d), Some((s, rtag))) => {
            t.rec(format_args!("isend {d} {stag} {sn} {sid}"))?;
            t.rec(format_args!("irecv {s} {rtag} {rn} {rid}"))?;
            wait_rec(t, (me, d, stag))?;
            wait_rec(t, (s, me, rtag))
        }
        (Some(d), None) => t.rec(format_args!("send {d} {stag} {sn} {sid}")),
        (None, Some((s, rtag))) => t.rec(format_args!("recv {s} {rtag} {rn} {rid}")),
        (None, None) => Ok(()),
    }
}

/// `sendrecv`.
pub struct Sendrecv;
type SendrecvArgs = (
    SB,
    c_int,
    Dt,
    c_int,
    c_int,
    RB,
    c_int,
    Dt,
    c_int,
    c_int,
    MPI_Comm,
    St,
);
impl Hook<SendrecvArgs> for Sendrecv {
    type Stash = ();
    fn pre(_: &mut Tracer, _: &SendrecvArgs) -> Result<(), Fail> {
        Ok(())
    }
    fn post(t: &mut Tracer, a: &SendrecvArgs, _: (), ret: c_int) -> Result<(), Fail> {
        if failed(t, ret)? {
            return Ok(());
        }
        let &(_, sc, sdt, dest, stag, _, rc, rdt, source, rtag, comm, st) = a;
        sendrecv(
            t,
            sc,
            sdt,
            dest,
            stag,
            rc,
            rdt,
            source,
            rtag,
            comm,
            status(st),
        )
    }
}

/// `sendrecv_replace`.
pub struct SendrecvReplace;
type ReplaceArgs = (RB, c_int, Dt, c_int, c_int, c_int, c_int, MPI_Comm, St);
impl Hook<ReplaceArgs> for SendrecvReplace {
    type Stash = ();
    fn pre(_: &mut Tracer, _: &ReplaceArgs) -> Result<(), Fail> {
        Ok(())
    }
    fn post(t: &mut Tracer, a: &ReplaceArgs, _: (), ret: c_int) -> Result<(), Fail> {
        if failed(t, ret)? {
            return Ok(());
        }
        let &(_, c, dt, dest, stag, source, rtag, comm, st) = a;
        sendrecv(t, c, dt, dest, stag, c, dt, source, rtag, comm, status(st))
    }
}

/// `probe` and `iprobe` (when a message is found): a comment.
pub struct Probe;
impl Hook<(c_int, c_int, MPI_Comm, St)> for Probe {
    type Stash = ();
    fn pre(_: &mut Tracer, _: &(c_int, c_int, MPI_Comm, St)) -> Result<(), Fail> {
        Ok(())
    }
    fn post(
        t: &mut Tracer,
        &(source, tag, comm, st): &(c_int, c_int, MPI_Comm, St),
        _: (),
        ret: c_int,
    ) -> Result<(), Fail> {
        if failed(t, ret)? {
            return Ok(());
        }
        if let Some((s, g)) = matched(t, comm, source, tag, status(st))? {
            t.note(format_args!("probe {s} {g}"))?;
        }
        Ok(())
    }
}
impl Hook<(c_int, c_int, MPI_Comm, *mut c_int, St)> for Probe {
    type Stash = ();
    fn pre(_: &mut Tracer, _: &(c_int, c_int, MPI_Comm, *mut c_int, St)) -> Result<(), Fail> {
        Ok(())
    }
    fn post(
        t: &mut Tracer,
        &(source, tag, comm, flag, st): &(c_int, c_int, MPI_Comm, *mut c_int, St),
        _: (),
        ret: c_int,
    ) -> Result<(), Fail> {
        // SAFETY: flag output of the call.
        if failed(t, ret)? || unsafe { *flag } == 0 {
            return Ok(());
        }
        if let Some((s, g)) = matched(t, comm, source, tag, status(st))? {
            t.note(format_args!("iprobe {s} {g}"))?;
        }
        Ok(())
    }
}

/// `wait`.
pub struct Wait;
impl Hook<(Req, St)> for Wait {
    type Stash = u64;
    fn pre(_: &mut Tracer, &(req, _): &(Req, St)) -> Result<u64, Fail> {
        // SAFETY: the request argument, read before the call frees it.
        Ok(handle_key(unsafe { *req }))
    }
    fn post(t: &mut Tracer, &(_, st): &(Req, St), key: u64, ret: c_int) -> Result<(), Fail> {
        if failed(t, ret)? {
            return Ok(());
        }
        if let (_, Some(k)) = t.complete(key, status(st))? {
            wait_rec(t, k)?;
        }
        Ok(())
    }
}

/// `test`.
pub struct Test;
impl Hook<(Req, *mut c_int, St)> for Test {
    type Stash = (u64, Option<WaitKey>);
    fn pre(t: &mut Tracer, &(req, _, _): &(Req, *mut c_int, St)) -> Result<Self::Stash, Fail> {
        // SAFETY: the request argument, read before the call frees it.
        let key = handle_key(unsafe { *req });
        Ok((key, t.known_key(key)))
    }
    fn post(
        t: &mut Tracer,
        &(_, flag, st): &(Req, *mut c_int, St),
        (key, known): Self::Stash,
        ret: c_int,
    ) -> Result<(), Fail> {
        if failed(t, ret)? {
            return Ok(());
        }
        // SAFETY: flag output of the call.
        if unsafe { *flag } != 0 {
            if let (_, Some(k)) = t.complete(key, status(st))? {
                t.rec(format_args!("test {} {} {}", k.0, k.1, k.2))?;
                wait_rec(t, k)?;
            }
        } else if let Some(k) = known {
            t.rec(format_args!("test {} {} {}", k.0, k.1, k.2))?;
        }
        Ok(())
    }
}

/// Records the completion of the requests `done` (index into `keys`, status): `waitall` if
/// they are all the rank's pending point-to-point requests (`allow_waitall`), else one `wait`
/// each.
fn completed(
    t: &mut Tracer,
    keys: &[u64],
    done: &[(usize, *mut MPI_Status)],
    allow_waitall: bool,
) -> Result<(), Fail> {
    let pending = t.pending_p2p();
    let mut p2p = 0;
    let mut waits = Vec::with_capacity(done.len());
    for &(i, st) in done {
        let (was_p2p, key) = t.complete(keys[i], status(st))?;
        p2p += usize::from(was_p2p);
        waits.extend(key);
    }
    if allow_waitall && p2p > 0 && p2p == pending {
        t.rec(format_args!("waitall"))
    } else {
        waits.into_iter().try_for_each(|k| wait_rec(t, k))
    }
}

fn all_of(n: usize, statuses: St) -> Vec<(usize, St)> {
    // SAFETY: pointer arithmetic inside an array of `n` statuses.
    (0..n).map(|i| (i, unsafe { statuses.add(i) })).collect()
}

/// `waitall`, `testall`.
pub struct WaitAll;
impl Hook<(c_int, Req, St)> for WaitAll {
    type Stash = Vec<u64>;
    fn pre(_: &mut Tracer, &(n, reqs, _): &(c_int, Req, St)) -> Result<Vec<u64>, Fail> {
        Ok(read_reqs(n, reqs))
    }
    fn post(
        t: &mut Tracer,
        &(_, _, st): &(c_int, Req, St),
        keys: Vec<u64>,
        ret: c_int,
    ) -> Result<(), Fail> {
        if failed(t, ret)? {
            return Ok(());
        }
        completed(t, &keys, &all_of(keys.len(), st), true)
    }
}
impl Hook<(c_int, Req, *mut c_int, St)> for WaitAll {
    type Stash = Vec<u64>;
    fn pre(
        _: &mut Tracer,
        &(n, reqs, _, _): &(c_int, Req, *mut c_int, St),
    ) -> Result<Vec<u64>, Fail> {
        Ok(read_reqs(n, reqs))
    }
    fn post(
        t: &mut Tracer,
        &(_, _, flag, st): &(c_int, Req, *mut c_int, St),
        keys: Vec<u64>,
        ret: c_int,
    ) -> Result<(), Fail> {
        // SAFETY: flag output of the call.
        if failed(t, ret)? || unsafe { *flag } == 0 {
            return Ok(());
        }
        completed(t, &keys, &all_of(keys.len(), st), true)
    }
}

/// `waitany`, `testany`.
pub struct WaitAny;
fn any_done(t: &mut Tracer, keys: &[u64], index: *mut c_int, st: St) -> Result<(), Fail> {
    // SAFETY: index output of the call.
    let i = unsafe { *index };
    if i == mpi::undefined() || i < 0 || i as usize >= keys.len() {
        return Ok(());
    }
    completed(t, keys, &[(i as usize, st)], false)
}
impl Hook<(c_int, Req, *mut c_int, St)> for WaitAny {
    type Stash = Vec<u64>;
    fn pre(
        _: &mut Tracer,
        &(n, reqs, _, _): &(c_int, Req, *mut c_int, St),
    ) -> Result<Vec<u64>, Fail> {
        Ok(read_reqs(n, reqs))
    }
    fn post(
        t: &mut Tracer,
        &(_, _, index, st): &(c_int, Req, *mut c_int, St),
        keys: Vec<u64>,
        ret: c_int,
    ) -> Result<(), Fail> {
        if failed(t, ret)? {
            return Ok(());
        }
        any_done(t, &keys, index, st)
    }
}
impl Hook<(c_int, Req, *mut c_int, *mut c_int, St)> for WaitAny {
    type Stash = Vec<u64>;
    fn pre(
        _: &mut Tracer,
        &(n, reqs, _, _, _): &(c_int, Req, *mut c_int, *mut c_int, St),
    ) -> Result<Vec<u64>, Fail> {
        Ok(read_reqs(n, reqs))
    }
    fn post(
        t: &mut Tracer,
        &(_, _, index, flag, st): &(c_int, Req, *mut c_int, *mut c_int, St),
        keys: Vec<u64>,
        ret: c_int,
    ) -> Result<(), Fail> {
        // SAFETY: flag output of the call.
        if failed(t, ret)? || unsafe { *flag } == 0 {
            return Ok(());
        }
        any_done(t, &keys, index, st)
    }
}

/// `waitsome`, `testsome`.
pub struct WaitSome;
type SomeArgs = (c_int, Req, *mut c_int, *mut c_int, St);
impl Hook<SomeArgs> for WaitSome {
    type Stash = Vec<u64>;
    fn pre(_: &mut Tracer, &(n, reqs, _, _, _): &SomeArgs) -> Result<Vec<u64>, Fail> {
        Ok(read_reqs(n, reqs))
    }
    fn post(
        t: &mut Tracer,
        &(_, _, outcount, indices, st): &SomeArgs,
        keys: Vec<u64>,
        ret: c_int,
    ) -> Result<(), Fail> {
        if failed(t, ret)? {
            return Ok(());
        }
        // SAFETY: outputs of the call: `outcount` indices and statuses.
        let n = unsafe { *outcount };
        if n == mpi::undefined() || n <= 0 {
            return Ok(());
        }
        let idx = unsafe { std::slice::from_raw_parts(indices, n as usize) };
        let done: Vec<(usize, St)> = idx
            .iter()
            .enumerate()
            .filter(|(_, &i)| i >= 0 && (i as usize) < keys.len())
            .map(|(k, &i)| (i as usize, unsafe { st.add(k) }))
            .collect();
        completed(t, &keys, &done, false)
    }
}

/// `request_free`: the request is no longer followed.
pub struct RequestFree;
impl Hook<(Req,)> for RequestFree {
    type Stash = u64;
    fn pre(_: &mut Tracer, &(req,): &(Req,)) -> Result<u64, Fail> {
        // SAFETY: the request argument, read before the call frees it.
        Ok(handle_key(unsafe { *req }))
    }
    fn post(t: &mut Tracer, _: &(Req,), key: u64, ret: c_int) -> Result<(), Fail> {
        if ret == mpi::SUCCESS {
            t.untrack(key)?;
        }
        Ok(())
    }
}

/// Declares a collective kind whose record is written by `$write` from the blocking form's
/// arguments; the nonblocking form (same arguments plus a request) also tracks its request.
macro_rules! collective {
    ($(#[$doc:meta])* $kind:ident => $write:ident ( $($a:ident : $t:ty),* )) => {
        $(#[$doc])*
        pub struct $kind;
        impl Hook<($($t,)*)> for $kind {
            type Stash = ();
            fn pre(_: &mut Tracer, _: &($($t,)*)) -> Result<(), Fail> {
                Ok(())
            }
            fn post(t: &mut Tracer, &($($a,)*): &($($t,)*), _: (), ret: c_int) -> Result<(), Fail> {
                if failed(t, ret)? {
                    return Ok(());
                }
                $write(t, $($a),*)
            }
        }
        impl Hook<($($t,)* Req,)> for $kind {
            type Stash = ();
            fn pre(_: &mut Tracer, _: &($($t,)* Req,)) -> Result<(), Fail> {
                Ok(())
            }
            fn post(t: &mut Tracer, &($($a,)* req,): &($($t,)* Req,), _: (), ret: c_int) -> Result<(), Fail> {
                if failed(t, ret)? {
                    return Ok(());
                }
                $write(t, $($a),*)?;
                // SAFETY: the request output of a successful call.
                t.track(unsafe { *req }, Pending::Collective);
                Ok(())
            }
        }
    };
}

/// Collective on an intercommunicator: not recorded yet, noted.
fn inter(t: &mut Tracer, comm: MPI_Comm, what: &str) -> Result<bool, Fail> {
    let info = t.comms.get(comm)?;
    if info.is_inter {
        let id = info.id;
        t.note(format_args!(
            "comm {id}: {what} on an intercommunicator, not recorded"
        ))?;
        return Ok(true);
    }
    Ok(false)
}

collective!(
    /// `barrier`, `ibarrier`.
    Barrier => barrier(comm: MPI_Comm)
);
fn barrier(t: &mut Tracer, comm: MPI_Comm) -> Result<(), Fail> {
    if inter(t, comm, "barrier")? {
        return Ok(());
    }
    t.coll(comm, format_args!("barrier"))
}

collective!(
    /// `bcast`, `ibcast`.
    Bcast => bcast(b: RB, count: c_int, dt: Dt, root: c_int, comm: MPI_Comm)
);
fn bcast(
    t: &mut Tracer,
    _: RB,
    count: c_int,
    dt: Dt,
    root: c_int,
    comm: MPI_Comm,
) -> Result<(), Fail> {
    if inter(t, comm, "bcast")? {
        return Ok(());
    }
    let (n, id) = t.volume(count, dt)?;
    let r = t.root(comm, root)?;
    t.coll(comm, format_args!("bcast {n} {r} {id}"))
}

collective!(
    /// `reduce`, `ireduce`.
    Reduce => reduce(s: SB, r: RB, count: c_int, dt: Dt, op: MPI_Op, root: c_int, comm: MPI_Comm)
);
#[allow(clippy::too_many_arguments)]
fn reduce(
    t: &mut Tracer,
    _: SB,
    _: RB,
    count: c_int,
    dt: Dt,
    _: MPI_Op,
    root: c_int,
    comm: MPI_Comm,
) -> Result<(), Fail> {
    if inter(t, comm, "reduce")? {
        return Ok(());
    }
    let (n, id) = t.volume(count, dt)?;
    let r = t.root(comm, root)?;
    t.coll(comm, format_args!("reduce {n} 0 {r} {id}"))
}

/// Writes `<keyword> count 0 dt` (allreduce, scan, exscan).
fn reduction(
    t: &mut Tracer,
    keyword: &str,
    count: c_int,
    dt: Dt,
    comm: MPI_Comm,
) -> Result<(), Fail> {
    if inter(t, comm, keyword)? {
        return Ok(());
    }
    let (n, id) = t.volume(count, dt)?;
    t.coll(comm, format_args!("{keyword} {n} 0 {id}"))
}

collective!(
    /// `allreduce`, `iallreduce`.
    AllReduce => allreduce(s: SB, r: RB, count: c_int, dt: Dt, op: MPI_Op, comm: MPI_Comm)
);
fn allreduce(
    t: &mut Tracer,
    _: SB,
    _: RB,
    count: c_int,
    dt: Dt,
    _: MPI_Op,
    comm: MPI_Comm,
) -> Result<(), Fail> {
    reduction(t, "allreduce", count, dt, comm)
}

collective!(
    /// `scan`, `iscan`.
    Scan => scan(s: SB, r: RB, count: c_int, dt: Dt, op: MPI_Op, comm: MPI_Comm)
);
fn scan(
    t: &mut Tracer,
    _: SB,
    _: RB,
    count: c_int,
    dt: Dt,
    _: MPI_Op,
    comm: MPI_Comm,
) -> Result<(), Fail> {
    reduction(t, "scan", count, dt, comm)
}

collective!(
    /// `exscan`, `iexscan`.
    ExScan => exscan(s: SB, r: RB, count: c_int, dt: Dt, op: MPI_Op, comm: MPI_Comm)
);
fn exscan(
    t: &mut Tracer,
    _: SB,
    _: RB,
    count: c_int,
    dt: Dt,
    _: MPI_Op,
    comm: MPI_Comm,
) -> Result<(), Fail> {
    reduction(t, "exscan", count, dt, comm)
}

collective!(
    /// `reduce_scatter_block`, `ireduce_scatter_block`: equal counts.
    ReduceScatterBlock => reduce_scatter_block(s: SB, r: RB, count: c_int, dt: Dt, op: MPI_Op, comm: MPI_Comm)
);
fn reduce_scatter_block(
    t: &mut Tracer,
    _: SB,
    _: RB,
    count: c_int,
    dt: Dt,
    _: MPI_Op,
    comm: MPI_Comm,
) -> Result<(), Fail> {
    if inter(t, comm, "reduce_scatter_block")? {
        return Ok(());
    }
    let (n, id) = t.volume(count, dt)?;
    let counts = vec![n; t.comm_size(comm)?];
    t.coll(
        comm,
        format_args!("reducescatter {} 0 {id}", Counts(&counts)),
    )
}

collective!(
    /// `reduce_scatter`, `ireduce_scatter`.
    ReduceScatter => reduce_scatter(s: SB, r: RB, counts: Ints, dt: Dt, op: MPI_Op, comm: MPI_Comm)
);
fn reduce_scatter(
    t: &mut Tracer,
    _: SB,
    _: RB,
    counts: Ints,
    dt: Dt,
    _: MPI_Op,
    comm: MPI_Comm,
) -> Result<(), Fail> {
    if inter(t, comm, "reduce_scatter")? {
        return Ok(());
    }
    let n = t.comm_size(comm)?;
    let (c, id) = t.volumes(ints(counts, n), n, dt)?;
    t.coll(comm, format_args!("reducescatter {} 0 {id}", Counts(&c)))
}

collective!(
    /// `gather`, `igather`.
    Gather => gather(sbuf: SB, sc: c_int, sdt: Dt, rbuf: RB, rc: c_int, rdt: Dt, root: c_int, comm: MPI_Comm)
);
/// Receive arguments count at the root only (elsewhere the send ones are written twice);
/// `MPI_IN_PLACE` at the root sends the root's block of the receive buffer.
#[allow(clippy::too_many_arguments)]
fn gather(
    t: &mut Tracer,
    sbuf: SB,
    sc: c_int,
    sdt: Dt,
    _: RB,
    rc: c_int,
    rdt: Dt,
    root: c_int,
    comm: MPI_Comm,
) -> Result<(), Fail> {
    if inter(t, comm, "gather")? {
        return Ok(());
    }
    let is_root = t.local_rank(comm)? == root;
    let (s, sid) = if is_root && in_place(sbuf) {
        t.volume(rc, rdt)?
    } else {
        t.volume(sc, sdt)?
    };
    let (r, rid) = if is_root {
        t.volume(rc, rdt)?
    } else {
        (s, sid)
    };
    let w = t.root(comm, root)?;
    t.coll(comm, format_args!("gather {s} {r} {w} {sid} {rid}"))
}

collective!(
    /// `gatherv`, `igatherv`.
    GatherV => gatherv(sbuf: SB, sc: c_int, sdt: Dt, rbuf: RB, rcs: Ints, displs: Ints, rdt: Dt, root: c_int, comm: MPI_Comm)
);
/// The counts are the root's (zeros elsewhere).
#[allow(clippy::too_many_arguments)]
fn gatherv(
    t: &mut Tracer,
    sbuf: SB,
    sc: c_int,
    sdt: Dt,
    _: RB,
    rcs: Ints,
    _: Ints,
    rdt: Dt,
    root: c_int,
    comm: MPI_Comm,
) -> Result<(), Fail> {
    if inter(t, comm, "gatherv")? {
        return Ok(());
    }
    let me = t.local_rank(comm)?;
    let n = t.comm_size(comm)?;
    let (s, sid, r, rid) = if me == root {
        let (r, rid) = t.volumes(ints(rcs, n), n, rdt)?;
        let (s, sid) = if in_place(sbuf) {
            (r[me as usize], rid)
        } else {
            t.volume(sc, sdt)?
        };
        (s, sid, r, rid)
    } else {
        let (s, sid) = t.volume(sc, sdt)?;
        (s, sid, vec![0; n], sid)
    };
    let w = t.root(comm, root)?;
    t.coll(
        comm,
        format_args!("gatherv {s} {} {w} {sid} {rid}", Counts(&r)),
    )
}

collective!(
    /// `scatter`, `iscatter`.
    Scatter => scatter(sbuf: SB, sc: c_int, sdt: Dt, rbuf: RB, rc: c_int, rdt: Dt, root: c_int, comm: MPI_Comm)
);
/// Send arguments count at the root only (elsewhere the receive ones are written twice);
/// `MPI_IN_PLACE` at the root keeps the root's block in the send buffer.
#[allow(clippy::too_many_arguments)]
fn scatter(
    t: &mut Tracer,
    _: SB,
    sc: c_int,
    sdt: Dt,
    rbuf: RB,
    rc: c_int,
    rdt: Dt,
    root: c_int,
    comm: MPI_Comm,
) -> Result<(), Fail> {
    if inter(t, comm, "scatter")? {
        return Ok(());
    }
    let is_root = t.local_rank(comm)? == root;
    let (r, rid) = if is_root && in_place(rbuf) {
        t.volume(sc, sdt)?
    } else {
        t.volume(rc, rdt)?
    };
    let (s, sid) = if is_root {
        t.volume(sc, sdt)?
    } else {
        (r, rid)
    };
    let w = t.root(comm, root)?;
    t.coll(comm, format_args!("scatter {s} {r} {w} {sid} {rid}"))
}

collective!(
    /// `scatterv`, `iscatterv`.
    ScatterV => scatterv(sbuf: SB, scs: Ints, displs: Ints, sdt: Dt, rbuf: RB, rc: c_int, rdt: Dt, root: c_int, comm: MPI_Comm)
);
/// The counts are the root's (zeros elsewhere).
#[allow(clippy::too_many_arguments)]
fn scatterv(
    t: &mut Tracer,
    _: SB,
    scs: Ints,
    _: Ints,
    sdt: Dt,
    rbuf: RB,
    rc: c_int,
    rdt: Dt,
    root: c_int,
    comm: MPI_Comm,
) -> Result<(), Fail> {
    if inter(t, comm, "scatterv")? {
        return Ok(());
    }
    let me = t.local_rank(comm)?;
    let n = t.comm_size(comm)?;
    let (s, sid, r, rid) = if me == root {
        let (s, sid) = t.volumes(ints(scs, n), n, sdt)?;
        let (r, rid) = if in_place(rbuf) {
            (s[me as usize], sid)
        } else {
            t.volume(rc, rdt)?
        };
        (s, sid, r, rid)
    } else {
        let (r, rid) = t.volume(rc, rdt)?;
        (vec![0; n], rid, r, rid)
    };
    let w = t.root(comm, root)?;
    t.coll(
        comm,
        format_args!("scatterv {} {r} {w} {sid} {rid}", Counts(&s)),
    )
}

collective!(
    /// `allgather`, `iallgather`.
    AllGather => allgather(sbuf: SB, sc: c_int, sdt: Dt, rbuf: RB, rc: c_int, rdt: Dt, comm: MPI_Comm)
);
#[allow(clippy::too_many_arguments)]
fn allgather(
    t: &mut Tracer,
    sbuf: SB,
    sc: c_int,
    sdt: Dt,
    _: RB,
    rc: c_int,
    rdt: Dt,
    comm: MPI_Comm,
) -> Result<(), Fail> {
    if inter(t, comm, "allgather")? {
        return Ok(());
    }
    let (r, rid) = t.volume(rc, rdt)?;
    let (s, sid) = if in_place(sbuf) {
        (r, rid)
    } else {
        t.volume(sc, sdt)?
    };
    t.coll(comm, format_args!("allgather {s} {r} {sid} {rid}"))
}

collective!(
    /// `allgatherv`, `iallgatherv`.
    AllGatherV => allgatherv(sbuf: SB, sc: c_int, sdt: Dt, rbuf: RB, rcs: Ints, displs: Ints, rdt: Dt, comm: MPI_Comm)
);
/// Displacements are not written: they do not affect timing.
#[allow(clippy::too_many_arguments)]
fn allgatherv(
    t: &mut Tracer,
    sbuf: SB,
    sc: c_int,
    sdt: Dt,
    _: RB,
    rcs: Ints,
    _: Ints,
    rdt: Dt,
    comm: MPI_Comm,
) -> Result<(), Fail> {
    if inter(t, comm, "allgatherv")? {
        return Ok(());
    }
    let me = t.local_rank(comm)? as usize;
    let n = t.comm_size(comm)?;
    let (r, rid) = t.volumes(ints(rcs, n), n, rdt)?;
    let (s, sid) = if in_place(sbuf) {
        (r[me], rid)
    } else {
        t.volume(sc, sdt)?
    };
    t.coll(
        comm,
        format_args!("allgatherv {s} {} {sid} {rid}", Counts(&r)),
    )
}

collective!(
    /// `alltoall`, `ialltoall`.
    AllToAll => alltoall(sbuf: SB, sc: c_int, sdt: Dt, rbuf: RB, rc: c_int, rdt: Dt, comm: MPI_Comm)
);
#[allow(clippy::too_many_arguments)]
fn alltoall(
    t: &mut Tracer,
    sbuf: SB,
    sc: c_int,
    sdt: Dt,
    _: RB,
    rc: c_int,
    rdt: Dt,
    comm: MPI_Comm,
) -> Result<(), Fail> {
    if inter(t, comm, "alltoall")? {
        return Ok(());
    }
    let (r, rid) = t.volume(rc, rdt)?;
    let (s, sid) = if in_place(sbuf) {
        (r, rid)
    } else {
        t.volume(sc, sdt)?
    };
    t.coll(comm, format_args!("alltoall {s} {r} {sid} {rid}"))
}

collective!(
    /// `alltoallv`, `ialltoallv`.
    AllToAllV => alltoallv(sbuf: SB, scs: Ints, sd: Ints, sdt: Dt, rbuf: RB, rcs: Ints, rd: Ints, rdt: Dt, comm: MPI_Comm)
);
/// Buffer sizes are the sums of the counts.
#[allow(clippy::too_many_arguments)]
fn alltoallv(
    t: &mut Tracer,
    sbuf: SB,
    scs: Ints,
    _: Ints,
    sdt: Dt,
    _: RB,
    rcs: Ints,
    _: Ints,
    rdt: Dt,
    comm: MPI_Comm,
) -> Result<(), Fail> {
    if inter(t, comm, "alltoallv")? {
        return Ok(());
    }
    let n = t.comm_size(comm)?;
    let (r, rid) = t.volumes(ints(rcs, n), n, rdt)?;
    let (s, sid) = if in_place(sbuf) {
        (r.clone(), rid)
    } else {
        t.volumes(ints(scs, n), n, sdt)?
    };
    let (ss, rs): (u64, u64) = (s.iter().sum(), r.iter().sum());
    t.coll(
        comm,
        format_args!(
            "alltoallv {ss} {} {rs} {} {sid} {rid}",
            Counts(&s),
            Counts(&r)
        ),
    )
}

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

/// `finalize`: the last record; the trace is closed before the library shuts down.
pub struct Finalize;
impl Hook<()> for Finalize {
    type Stash = ();
    fn pre(t: &mut Tracer, _: &()) -> Result<(), Fail> {
        t.rec(format_args!("finalize"))?;
        t.close("")
    }
    fn post(_: &mut Tracer, _: &(), _: (), _: c_int) -> Result<(), Fail> {
        Ok(())
    }
}

/// `abort`: everything recorded is written before the library kills the job.
pub struct Abort;
impl Hook<(MPI_Comm, c_int)> for Abort {
    type Stash = ();
    fn pre(t: &mut Tracer, &(_, code): &(MPI_Comm, c_int)) -> Result<(), Fail> {
        t.close(&format!("# MPI_Abort with error code {code}"))
    }
    fn post(_: &mut Tracer, _: &(MPI_Comm, c_int), _: (), _: c_int) -> Result<(), Fail> {
        Ok(())
    }
}
