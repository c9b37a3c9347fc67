//! Requests the tracer follows from their posting to their completion: nonblocking
//! point-to-point and collective requests, persistent requests and the `isend`/`irecv` each
//! `MPI_Start` of them posts, and messages matched by `MPI_Mprobe`.
//!
//! A receive from `MPI_ANY_SOURCE` or with `MPI_ANY_TAG` is written as a hole in the writer
//! when posted, and filled when it completes, from its status; a completed request gives the
//! `src dst tag` key of its SimGrid `wait`/`test` record ([`WaitKey`]).

use std::collections::VecDeque;
use std::fmt;
use std::sync::Arc;

use rustc_hash::FxHashMap;

use super::{CommField, Fail, SiteField, Tracer};
use crate::mpi::{self, handle_key, MPI_Request, MPI_Status};
use crate::record::{Record, RecordKey};
use crate::writer::HoleId;

/// A request the tracer waits to see completed.
#[derive(Debug, Clone)]
pub enum Pending {
    /// From `isend` (and its modes): completes as `wait me dst tag`.
    Send {
        dst: u32,
        tag: i32,
        comm: Option<u32>,
    },
    /// From `irecv`. A wildcard source or tag is `None` until completion; its record is then
    /// a hole in the writer.
    Recv {
        src: Option<u32>,
        tag: Option<i32>,
        /// World rank of each member of the communicator, kept for a wildcard source only
        /// (its completion names the sender).
        peers: Option<Arc<[u32]>>,
        comm: Option<u32>,
        count: u64,
        dt: u8,
        hole: Option<HoleId>,
    },
    /// A nonblocking collective, recorded when posted: its completion records nothing.
    Collective,
}

/// Pending requests by handle, each handle's oldest first. Handles are not unique (Open MPI
/// returns one shared, already complete request for every send that completed at once), but
/// a handle almost always has one request: it is kept inline in `first`, and only the others
/// in a queue, so tracking a request allocates nothing.
#[derive(Default)]
pub(super) struct Requests {
    first: FxHashMap<u64, Pending>,
    more: FxHashMap<u64, VecDeque<Pending>>,
}

impl Requests {
    fn push(&mut self, key: u64, p: Pending) {
        use std::collections::hash_map::Entry;
        match self.first.entry(key) {
            Entry::Vacant(v) => {
                v.insert(p);
            }
            Entry::Occupied(_) => self.more.entry(key).or_default().push_back(p),
        }
    }

    /// Removes and returns the oldest request of `key`.
    fn pop(&mut self, key: u64) -> Option<Pending> {
        let p = self.first.remove(&key)?;
        if let Some(q) = self.more.get_mut(&key) {
            if let Some(next) = q.pop_front() {
                self.first.insert(key, next);
            }
            if q.is_empty() {
                self.more.remove(&key);
            }
        }
        Some(p)
    }

    fn front(&self, key: u64) -> Option<&Pending> {
        self.first.get(&key)
    }

    fn iter(&self) -> impl Iterator<Item = &Pending> {
        self.first.values().chain(self.more.values().flatten())
    }
}

/// A persistent request (`MPI_Send_init`, `MPI_Recv_init`...): what each `MPI_Start` of it
/// posts, recorded as an `isend` or `irecv`.
#[derive(Debug, Clone)]
pub enum Persistent {
    Send {
        dst: u32,
        tag: i32,
        count: u64,
        dt: u8,
        comm: Option<u32>,
    },
    Recv {
        src: Option<u32>,
        tag: Option<i32>,
        peers: Arc<[u32]>,
        count: u64,
        dt: u8,
        comm: Option<u32>,
    },
    /// With `MPI_PROC_NULL` as peer: starting it records nothing.
    Null,
}

/// A message matched by a probe: its sender (world rank), tag and communicator field.
#[derive(Debug, Clone, Copy)]
pub struct Matched {
    pub src: u32,
    pub tag: i32,
    pub comm: Option<u32>,
}

/// What a SimGrid `wait`/`test` names: `src dst tag` (world ranks), and the communicator.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct WaitKey {
    pub src: u32,
    pub dst: u32,
    pub tag: i32,
    pub comm: Option<u32>,
}

impl fmt::Display for WaitKey {
    /// `src dst tag[ comm=<id>]`.
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(
            f,
            "{} {} {}{}",
            self.src,
            self.dst,
            self.tag,
            CommField(self.comm)
        )
    }
}

impl Tracer {
    /// The communicator of the oldest request the tracer tracks under `key` (a request
    /// handle), 0 for the world; `None` if untracked or a collective's.
    pub fn request_comm(&self, key: u64) -> Option<u32> {
        match self.reqs.front(key)? {
            Pending::Send { comm, .. } | Pending::Recv { comm, .. } => Some(comm.unwrap_or(0)),
            Pending::Collective => None,
        }
    }

    /// Starts tracking a request.
    pub fn track(&mut self, req: MPI_Request, p: Pending) {
        if req != mpi::request_null() {
            self.reqs.push(handle_key(req), p);
        }
    }

    fn pop(&mut self, req: u64) -> Option<Pending> {
        self.reqs.pop(req)
    }

    /// Stops tracking a request without recording anything (`MPI_Request_free`).
    pub fn untrack(&mut self, req: u64) -> Result<(), Fail> {
        if let Some(Pending::Recv { hole: Some(h), .. }) = self.pop(req) {
            self.hole_sites.remove(&h);
            self.out
                .fill(h, format_args!("# irecv freed before its source was known"))?;
            self.fill_stamped(
                h,
                false,
                format_args!("# irecv freed before its source was known"),
            )?;
        }
        Ok(())
    }

    /// Number of point-to-point requests being tracked.
    pub fn pending_p2p(&self) -> usize {
        self.reqs
            .iter()
            .filter(|p| !matches!(p, Pending::Collective))
            .count()
    }

    /// The `wait` key of a pending request if it is known before completion.
    pub fn known_key(&self, req: u64) -> Option<WaitKey> {
        match self.reqs.front(req)? {
            Pending::Send { dst, tag, comm } => Some(WaitKey {
                src: self.rank,
                dst: *dst,
                tag: *tag,
                comm: *comm,
            }),
            Pending::Recv {
                src: Some(s),
                tag: Some(t),
                comm,
                ..
            } => Some(WaitKey {
                src: *s,
                dst: self.rank,
                tag: *t,
                comm: *comm,
            }),
            _ => None,
        }
    }

    /// A tracked request completed with `status`: fills its record if it was a wildcard
    /// receive. Returns whether it was a point-to-point request, and its `wait` key (`None`
    /// for collectives, cancelled or unknown requests).
    pub fn complete(
        &mut self,
        req: u64,
        status: &MPI_Status,
    ) -> Result<(bool, Option<WaitKey>), Fail> {
        let Some(p) = self.pop(req) else {
            return Ok((false, None));
        };
        match p {
            Pending::Send { dst, tag, comm } => Ok((
                true,
                Some(WaitKey {
                    src: self.rank,
                    dst,
                    tag,
                    comm,
                }),
            )),
            Pending::Collective => Ok((false, None)),
            Pending::Recv {
                src,
                tag,
                peers,
                comm,
                count,
                dt,
                hole,
            } => {
                if mpi::status_cancelled(status) {
                    if let Some(h) = hole {
                        self.hole_sites.remove(&h);
                        self.out.fill(h, format_args!("# irecv cancelled"))?;
                        self.fill_stamped(h, false, format_args!("# irecv cancelled"))?;
                    }
                    return Ok((true, None));
                }
                let src = match src {
                    Some(s) => s,
                    None => peers
                        .as_deref()
                        .and_then(|p| p.get(status.MPI_SOURCE as usize))
                        .copied()
                        .ok_or_else(|| Fail::new("completed receive without a valid source"))?,
                };
                let tag = tag.unwrap_or(status.MPI_TAG);
                if let Some(p) = &mut self.profile {
                    // The profile counts what arrived, the trace what was posted.
                    let size = timeless_trace::Datatype::from_id(u32::from(dt))
                        .map_or(1, |d| d.size_bytes());
                    let posted = count.saturating_mul(u64::from(size));
                    if let Some(got) = mpi::received_bytes(status) {
                        p.irecv_arrived(comm.unwrap_or(0), posted, got);
                    }
                }
                if let Some(h) = hole {
                    let rank = self.rank;
                    let key = RecordKey {
                        record: Record::Recv {
                            nonblocking: true,
                            src,
                            tag,
                            count,
                            dt,
                        },
                        comm,
                        site: self.hole_sites.remove(&h),
                    };
                    self.out.fill_record(
                        h,
                        Some(&key),
                        format_args!(
                            "{rank} {}{}{}",
                            key.record,
                            CommField(comm),
                            SiteField(key.site)
                        ),
                    )?;
                    self.fill_stamped(
                        h,
                        true,
                        format_args!("irecv {src} {tag} {count} {dt}{}", CommField(comm)),
                    )?;
                }
                Ok((
                    true,
                    Some(WaitKey {
                        src,
                        dst: self.rank,
                        tag,
                        comm,
                    }),
                ))
            }
        }
    }

    /// Reserves the place of a wildcard `irecv` record of `count` elements of SimGrid datatype
    /// `dt` on communicator field `comm`, after the compute burst before it (the
    /// communicator's `comm_def` must be written already: see [`Tracer::comm`]).
    pub fn hole(&mut self, count: u64, dt: u8, comm: Option<u32>) -> Result<HoleId, Fail> {
        if let Some(p) = &mut self.profile {
            let size =
                timeless_trace::Datatype::from_id(u32::from(dt)).map_or(1, |d| d.size_bytes());
            p.recv_bytes(count.saturating_mul(u64::from(size)), comm);
        }
        self.flush_compute()?;
        self.count_record();
        let h = self.out.hole();
        if let Some(cs) = self.callsite {
            self.hole_sites.insert(h, cs);
        }
        if let Some(s) = &mut self.stamped {
            // Both writers number their holes in creation order.
            let hs = s.hole();
            debug_assert_eq!(h, hs);
        }
        Ok(h)
    }

    fn fill_stamped(
        &mut self,
        h: HoleId,
        record: bool,
        args: fmt::Arguments<'_>,
    ) -> Result<(), Fail> {
        let rank = self.rank;
        if let Some(s) = &mut self.stamped {
            s.fill(h, rank, record, args)?;
        }
        Ok(())
    }

    /// Remembers a persistent request created by a successful `*_init` call.
    pub fn add_persistent(&mut self, req: MPI_Request, p: Persistent) {
        if req != mpi::request_null() {
            self.persistent.insert(handle_key(req), p);
        }
    }

    /// Remembers a message matched by `MPI_Mprobe`/`MPI_Improbe`.
    pub fn add_message(&mut self, msg: mpi::MPI_Message, m: Matched) {
        self.messages.insert(handle_key(msg), m);
    }

    /// The matched message `msg` (a handle key read before the receive freed it), forgotten.
    pub fn take_message(&mut self, msg: u64) -> Option<Matched> {
        self.messages.remove(&msg)
    }

    /// Forgets a freed persistent request.
    pub fn forget_persistent(&mut self, req: u64) {
        self.persistent.remove(&req);
    }

    /// `MPI_Start` of the persistent request `req`: records its `isend` or `irecv` and
    /// tracks it like a nonblocking one. Unknown requests (created while recording was
    /// paused) record nothing.
    pub fn start(&mut self, req: MPI_Request) -> Result<(), Fail> {
        let Some(p) = self.persistent.get(&handle_key(req)).cloned() else {
            return Ok(());
        };
        match p {
            Persistent::Null => {}
            Persistent::Send {
                dst,
                tag,
                count,
                dt,
                comm,
            } => {
                self.rec_record(
                    Record::Send {
                        nonblocking: true,
                        dst,
                        tag,
                        count,
                        dt,
                    },
                    comm,
                )?;
                self.track(req, Pending::Send { dst, tag, comm });
            }
            Persistent::Recv {
                src,
                tag,
                peers,
                count,
                dt,
                comm,
            } => {
                let hole = match (src, tag) {
                    (Some(s), Some(g)) => {
                        self.rec_record(
                            Record::Recv {
                                nonblocking: true,
                                src: s,
                                tag: g,
                                count,
                                dt,
                            },
                            comm,
                        )?;
                        None
                    }
                    _ => Some(self.hole(count, dt, comm)?),
                };
                self.track(
                    req,
                    Pending::Recv {
                        src,
                        tag,
                        peers: src.is_none().then_some(peers),
                        comm,
                        count,
                        dt,
                        hole,
                    },
                );
            }
        }
        Ok(())
    }
}
