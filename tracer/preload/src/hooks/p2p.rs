//! Point-to-point calls: sends, receives, send-receives, probes.

use super::*;

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
