//! Point-to-point calls: sends, receives, send-receives, probes.

use super::*;
use crate::tracer::CommField;

/// Writes `<keyword> dst tag count dt` for a send on `comm`; returns the destination's world
/// rank, `None` for `MPI_PROC_NULL` (nothing is written).
fn send(
    t: &mut Tracer,
    keyword: &str,
    (count, dt, dest, tag, comm): (c_int, Dt, c_int, c_int, MPI_Comm),
) -> Result<Option<u32>, Fail> {
    let Some(dst) = t.peer(comm, dest)? else {
        return Ok(None);
    };
    let (n, id) = t.volume(count, dt)?;
    t.on(comm, format_args!("{keyword} {dst} {tag} {n} {id}"))?;
    Ok(Some(dst))
}

/// `send`, `ssend`, `rsend`, `bsend`.
pub struct Send;
impl Hook<(SB, c_int, Dt, c_int, c_int, MPI_Comm)> for Send {
    type Stash = ();
    fn post(
        t: &mut Tracer,
        &(_, count, dt, dest, tag, comm): &(SB, c_int, Dt, c_int, c_int, MPI_Comm),
        _: (),
    ) -> Result<(), Fail> {
        send(t, "send", (count, dt, dest, tag, comm)).map(drop)
    }
}

/// `isend`, `issend`, `irsend`, `ibsend`.
pub struct Isend;
impl Hook<(SB, c_int, Dt, c_int, c_int, MPI_Comm, Req)> for Isend {
    type Stash = ();
    fn post(
        t: &mut Tracer,
        &(_, count, dt, dest, tag, comm, req): &(SB, c_int, Dt, c_int, c_int, MPI_Comm, Req),
        _: (),
    ) -> Result<(), Fail> {
        if let Some(dst) = send(t, "isend", (count, dt, dest, tag, comm))? {
            let comm = t.comm_field(comm)?;
            // SAFETY: the request output of a successful call.
            t.track(unsafe { *req }, Pending::Send { dst, tag, comm });
        }
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
    fn post(
        t: &mut Tracer,
        &(_, count, dt, source, tag, comm, st): &(RB, c_int, Dt, c_int, c_int, MPI_Comm, St),
        _: (),
    ) -> Result<(), Fail> {
        let Some((src, tag)) = matched(t, comm, source, tag, status(st))? else {
            return Ok(());
        };
        let (n, id) = t.volume(count, dt)?;
        t.on(comm, format_args!("recv {src} {tag} {n} {id}"))
    }
}

/// `irecv`: written where posted; a wildcard source or tag leaves a hole filled at completion.
pub struct Irecv;
impl Hook<(RB, c_int, Dt, c_int, c_int, MPI_Comm, Req)> for Irecv {
    type Stash = ();
    fn post(
        t: &mut Tracer,
        &(_, count, dt, source, tag, comm, req): &(RB, c_int, Dt, c_int, c_int, MPI_Comm, Req),
        _: (),
    ) -> Result<(), Fail> {
        if source == mpi::proc_null() {
            return Ok(());
        }
        let (n, id) = t.volume(count, dt)?;
        let src = if source == mpi::any_source() {
            None
        } else {
            t.peer(comm, source)?
        };
        let tag = (tag != mpi::any_tag()).then_some(tag);
        let hole = match (src, tag) {
            (Some(s), Some(g)) => {
                t.on(comm, format_args!("irecv {s} {g} {n} {id}"))?;
                None
            }
            _ => Some(t.hole(comm)?),
        };
        let peers = t.comm(comm)?.peers;
        let comm = t.comm_field(comm)?;
        // SAFETY: the request output of a successful call.
        let r = unsafe { *req };
        t.track(
            r,
            Pending::Recv {
                src,
                tag,
                peers,
                comm,
                count: n,
                dt: id,
                hole,
            },
        );
        Ok(())
    }
}

/// Send and receive halves of a send-receive, in the program's arguments.
struct SendRecvArgs {
    scount: c_int,
    sdt: Dt,
    dest: c_int,
    stag: c_int,
    rcount: c_int,
    rdt: Dt,
    source: c_int,
    rtag: c_int,
    comm: MPI_Comm,
    st: St,
}

/// Writes the two halves of a send-receive (see the module documentation).
fn sendrecv(t: &mut Tracer, a: SendRecvArgs) -> Result<(), Fail> {
    let comm = a.comm;
    let dst = t.peer(comm, a.dest)?;
    let src = matched(t, comm, a.source, a.rtag, status(a.st))?;
    let (sn, sid) = t.volume(a.scount, a.sdt)?;
    let (rn, rid) = t.volume(a.rcount, a.rdt)?;
    let (me, stag) = (t.rank(), a.stag);
    match (dst, src) {
        (Some(d), Some((s, 0))) if stag == 0 => {
            t.on(comm, format_args!("sendRecv {sn} {d} {rn} {s} {sid} {rid}"))
        }
        (Some(d), Some((s, rtag))) => {
            t.on(comm, format_args!("isend {d} {stag} {sn} {sid}"))?;
            t.on(comm, format_args!("irecv {s} {rtag} {rn} {rid}"))?;
            t.on(comm, format_args!("wait {me} {d} {stag}"))?;
            t.on(comm, format_args!("wait {s} {me} {rtag}"))
        }
        (Some(d), None) => t.on(comm, format_args!("send {d} {stag} {sn} {sid}")),
        (None, Some((s, rtag))) => t.on(comm, format_args!("recv {s} {rtag} {rn} {rid}")),
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
    fn post(t: &mut Tracer, a: &SendrecvArgs, _: ()) -> Result<(), Fail> {
        let &(_, scount, sdt, dest, stag, _, rcount, rdt, source, rtag, comm, st) = a;
        sendrecv(
            t,
            SendRecvArgs {
                scount,
                sdt,
                dest,
                stag,
                rcount,
                rdt,
                source,
                rtag,
                comm,
                st,
            },
        )
    }
}

/// `sendrecv_replace`.
pub struct SendrecvReplace;
type ReplaceArgs = (RB, c_int, Dt, c_int, c_int, c_int, c_int, MPI_Comm, St);
impl Hook<ReplaceArgs> for SendrecvReplace {
    type Stash = ();
    fn post(t: &mut Tracer, a: &ReplaceArgs, _: ()) -> Result<(), Fail> {
        let &(_, count, dt, dest, stag, source, rtag, comm, st) = a;
        sendrecv(
            t,
            SendRecvArgs {
                scount: count,
                sdt: dt,
                dest,
                stag,
                rcount: count,
                rdt: dt,
                source,
                rtag,
                comm,
                st,
            },
        )
    }
}

/// `probe` and `iprobe` (when a message is found): a comment.
pub struct Probe;
impl Hook<(c_int, c_int, MPI_Comm, St)> for Probe {
    type Stash = ();
    fn post(
        t: &mut Tracer,
        &(source, tag, comm, st): &(c_int, c_int, MPI_Comm, St),
        _: (),
    ) -> Result<(), Fail> {
        probe(t, "probe", (source, tag, comm, st))
    }
}
impl Hook<(c_int, c_int, MPI_Comm, *mut c_int, St)> for Probe {
    type Stash = ();
    fn post(
        t: &mut Tracer,
        &(source, tag, comm, flag, st): &(c_int, c_int, MPI_Comm, *mut c_int, St),
        _: (),
    ) -> Result<(), Fail> {
        // SAFETY: flag output of a successful call.
        if unsafe { *flag } == 0 {
            return Ok(());
        }
        probe(t, "iprobe", (source, tag, comm, st))
    }
}

fn probe(
    t: &mut Tracer,
    keyword: &str,
    (source, tag, comm, st): (c_int, c_int, MPI_Comm, St),
) -> Result<(), Fail> {
    if let Some((s, g)) = matched(t, comm, source, tag, status(st))? {
        t.note(format_args!("{keyword} {s} {g}"))?;
        if keyword == "probe" {
            // A blocking probe waits for its message: a dependency in the timestamped file.
            let field = t.comm_field(comm)?;
            t.stamped_only(format_args!("probe {s} {g}{}", CommField(field)))?;
        }
    }
    Ok(())
}
