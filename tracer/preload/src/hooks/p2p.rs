//! Point-to-point calls: sends, receives, send-receives, probes.

use super::*;

/// Bytes of `n` elements of SimGrid datatype `id` (for the profile).
fn bytes(n: u64, id: u8) -> u64 {
    let size = timeless_trace::Datatype::from_id(u32::from(id)).map_or(1, |d| d.size_bytes());
    n.saturating_mul(u64::from(size))
}

/// Writes `send`/`isend dst tag count dt` for a send on `comm`; returns the destination's
/// world rank, `None` for `MPI_PROC_NULL` (nothing is written).
fn send(
    t: &mut Tracer,
    nonblocking: bool,
    (count, dt, dest, tag, comm): (c_int, Dt, c_int, c_int, MPI_Comm),
) -> Result<Option<u32>, Fail> {
    let Some(dst) = t.peer(comm, dest)? else {
        return Ok(None);
    };
    let (n, id) = t.volume(count, dt)?;
    t.profile_direct(comm, bytes(n, id), 0)?;
    t.on_record(
        comm,
        Record::Send {
            nonblocking,
            dst,
            tag,
            count: n,
            dt: id,
        },
    )?;
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
        send(t, false, (count, dt, dest, tag, comm)).map(drop)
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
        if let Some(dst) = send(t, true, (count, dt, dest, tag, comm))? {
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
        // The profile counts what arrived, the trace what was posted.
        let got = mpi::received_bytes(status(st)).unwrap_or(bytes(n, id));
        t.profile_direct(comm, 0, got)?;
        t.on_record(
            comm,
            Record::Recv {
                nonblocking: false,
                src,
                tag,
                count: n,
                dt: id,
            },
        )
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
                t.profile_direct(comm, 0, bytes(n, id))?;
                t.on_record(
                    comm,
                    Record::Recv {
                        nonblocking: true,
                        src: s,
                        tag: g,
                        count: n,
                        dt: id,
                    },
                )?;
                None
            }
            _ => {
                let field = t.comm_field(comm)?;
                Some(t.hole(n, id, field)?)
            }
        };
        // The members are needed to name a wildcard receive's source at completion.
        let peers = match src {
            None => Some(t.comm(comm)?.peers),
            Some(_) => None,
        };
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

fn send_of(nonblocking: bool, dst: u32, tag: c_int, count: u64, dt: u8) -> Record {
    Record::Send {
        nonblocking,
        dst,
        tag,
        count,
        dt,
    }
}

fn recv_of(nonblocking: bool, src: u32, tag: c_int, count: u64, dt: u8) -> Record {
    Record::Recv {
        nonblocking,
        src,
        tag,
        count,
        dt,
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
        (Some(d), Some((s, 0))) if stag == 0 => t.on_record(
            comm,
            Record::SendRecv {
                send_count: sn,
                dst: d,
                recv_count: rn,
                src: s,
                send_dt: sid,
                recv_dt: rid,
            },
        ),
        (Some(d), Some((s, rtag))) => {
            t.on_record(comm, send_of(true, d, stag, sn, sid))?;
            t.on_record(comm, recv_of(true, s, rtag, rn, rid))?;
            t.on_record(
                comm,
                Record::Wait {
                    src: me,
                    dst: d,
                    tag: stag,
                },
            )?;
            t.on_record(
                comm,
                Record::Wait {
                    src: s,
                    dst: me,
                    tag: rtag,
                },
            )
        }
        (Some(d), None) => t.on_record(comm, send_of(false, d, stag, sn, sid)),
        (None, Some((s, rtag))) => t.on_record(comm, recv_of(false, s, rtag, rn, rid)),
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

/// `mprobe`, `improbe` (when a message is found): a comment, and the message's sender kept
/// for its `mrecv`/`imrecv`.
pub struct Mprobe;
type MprobeArgs = (c_int, c_int, MPI_Comm, *mut mpi::MPI_Message, St);
impl Hook<MprobeArgs> for Mprobe {
    type Stash = ();
    fn post(t: &mut Tracer, &(source, tag, comm, msg, st): &MprobeArgs, _: ()) -> Result<(), Fail> {
        matched_probe(t, "mprobe", (source, tag, comm, msg, st))
    }
}
type ImprobeArgs = (
    c_int,
    c_int,
    MPI_Comm,
    *mut c_int,
    *mut mpi::MPI_Message,
    St,
);
impl Hook<ImprobeArgs> for Mprobe {
    type Stash = ();
    fn post(
        t: &mut Tracer,
        &(source, tag, comm, flag, msg, st): &ImprobeArgs,
        _: (),
    ) -> Result<(), Fail> {
        // SAFETY: flag output of a successful call.
        if unsafe { *flag } == 0 {
            return Ok(());
        }
        matched_probe(t, "improbe", (source, tag, comm, msg, st))
    }
}

fn matched_probe(
    t: &mut Tracer,
    keyword: &str,
    (source, tag, comm, msg, st): MprobeArgs,
) -> Result<(), Fail> {
    let Some((src, tag)) = matched(t, comm, source, tag, status(st))? else {
        return Ok(()); // MPI_PROC_NULL: MPI_MESSAGE_NO_PROC, received as nothing
    };
    t.note(format_args!("{keyword} {src} {tag}"))?;
    let comm = t.comm_field(comm)?;
    // SAFETY: the message output of a successful call.
    t.add_message(unsafe { *msg }, Matched { src, tag, comm });
    Ok(())
}

/// Records the receive (`keyword`) of the message a matched probe returned, with the probe's
/// sender and tag; `None` if the probe was not recorded. Returns the match, count and datatype id.
fn matched_recv(
    t: &mut Tracer,
    keyword: &str,
    count: c_int,
    dt: Dt,
    msg: u64,
) -> Result<Option<(Matched, u64, u8)>, Fail> {
    let Some(m) = t.take_message(msg) else {
        return Ok(None);
    };
    let (n, id) = t.volume(count, dt)?;
    t.rec(format_args!(
        "{keyword} {} {} {n} {id}{}",
        m.src,
        m.tag,
        CommField(m.comm)
    ))?;
    Ok(Some((m, n, id)))
}

/// `mrecv` → `recv`, `imrecv` → `irecv`, with the sender and tag of the probe that matched the
/// message.
pub struct Mrecv;
impl Hook<(RB, c_int, Dt, *mut mpi::MPI_Message, St)> for Mrecv {
    type Stash = u64;
    fn pre(_: &mut Tracer, a: &(RB, c_int, Dt, *mut mpi::MPI_Message, St)) -> Result<u64, Fail> {
        // SAFETY: the message argument, read before the call frees it.
        Ok(handle_key(unsafe { *a.3 }))
    }
    fn post(
        t: &mut Tracer,
        &(_, count, dt, _, _): &(RB, c_int, Dt, *mut mpi::MPI_Message, St),
        msg: u64,
    ) -> Result<(), Fail> {
        matched_recv(t, "recv", count, dt, msg).map(|_| ())
    }
}
impl Hook<(RB, c_int, Dt, *mut mpi::MPI_Message, Req)> for Mrecv {
    type Stash = u64;
    fn pre(_: &mut Tracer, a: &(RB, c_int, Dt, *mut mpi::MPI_Message, Req)) -> Result<u64, Fail> {
        // SAFETY: the message argument, read before the call frees it.
        Ok(handle_key(unsafe { *a.3 }))
    }
    fn post(
        t: &mut Tracer,
        &(_, count, dt, _, req): &(RB, c_int, Dt, *mut mpi::MPI_Message, Req),
        msg: u64,
    ) -> Result<(), Fail> {
        let Some((m, n, id)) = matched_recv(t, "irecv", count, dt, msg)? else {
            return Ok(());
        };
        // SAFETY: the request output of a successful call.
        t.track(
            unsafe { *req },
            Pending::Recv {
                src: Some(m.src),
                tag: Some(m.tag),
                peers: None,
                comm: m.comm,
                count: n,
                dt: id,
                hole: None,
            },
        );
        Ok(())
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

/// `send_init`, `ssend_init`, `rsend_init`, `bsend_init`: nothing is recorded until
/// `MPI_Start` (the communicator's `comm_def` is written now).
pub struct SendInit;
impl Hook<(SB, c_int, Dt, c_int, c_int, MPI_Comm, Req)> for SendInit {
    type Stash = ();
    fn post(
        t: &mut Tracer,
        &(_, count, dt, dest, tag, comm, req): &(SB, c_int, Dt, c_int, c_int, MPI_Comm, Req),
        _: (),
    ) -> Result<(), Fail> {
        let p = match t.peer(comm, dest)? {
            None => Persistent::Null,
            Some(dst) => {
                let (count, dt) = t.volume(count, dt)?;
                let comm = t.comm_field(comm)?;
                Persistent::Send {
                    dst,
                    tag,
                    count,
                    dt,
                    comm,
                }
            }
        };
        // SAFETY: the request output of a successful call.
        t.add_persistent(unsafe { *req }, p);
        Ok(())
    }
}

/// `recv_init`: nothing is recorded until `MPI_Start`.
pub struct RecvInit;
impl Hook<(RB, c_int, Dt, c_int, c_int, MPI_Comm, Req)> for RecvInit {
    type Stash = ();
    fn post(
        t: &mut Tracer,
        &(_, count, dt, source, tag, comm, req): &(RB, c_int, Dt, c_int, c_int, MPI_Comm, Req),
        _: (),
    ) -> Result<(), Fail> {
        let p = if source == mpi::proc_null() {
            Persistent::Null
        } else {
            let (count, dt) = t.volume(count, dt)?;
            let src = if source == mpi::any_source() {
                None
            } else {
                t.peer(comm, source)?
            };
            let peers = t.comm(comm)?.peers;
            Persistent::Recv {
                src,
                tag: (tag != mpi::any_tag()).then_some(tag),
                peers,
                count,
                dt,
                comm: t.comm_field(comm)?,
            }
        };
        // SAFETY: the request output of a successful call.
        t.add_persistent(unsafe { *req }, p);
        Ok(())
    }
}

/// `start`: the persistent request's `isend` or `irecv`.
pub struct Start;
impl Hook<(Req,)> for Start {
    type Stash = ();
    fn post(t: &mut Tracer, &(req,): &(Req,), _: ()) -> Result<(), Fail> {
        // SAFETY: the request argument (a persistent request keeps its handle).
        t.start(unsafe { *req })
    }
}

/// `startall`: each request in order.
pub struct StartAll;
impl Hook<(c_int, Req)> for StartAll {
    type Stash = ();
    fn post(t: &mut Tracer, &(n, reqs): &(c_int, Req), _: ()) -> Result<(), Fail> {
        if reqs.is_null() || n <= 0 {
            return Ok(());
        }
        // SAFETY: an array of `n` persistent requests.
        for &r in unsafe { std::slice::from_raw_parts(reqs, n as usize) } {
            t.start(r)?;
        }
        Ok(())
    }
}
