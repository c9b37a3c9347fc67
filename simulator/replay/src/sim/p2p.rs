//! Point-to-point messages: posting, matching, and the transfers that move them.
//!
//! A send and a receive match in the receiver's mailbox ([`crate::mailbox`]) by (source, tag),
//! oldest first, as SMPI does (reference §4). Whichever is posted second finds the first and
//! starts the kernel transfer, except that a send under `smpi/async-small-thresh` starts moving
//! at once (eager) and is matched later. A send under `smpi/send-is-detached-thresh` is
//! detached: its request is complete when posted, and the receiver owes `smpi/or` for it
//! ([`super::waits`]). A receive shorter than the message it matches is a truncation error.

use super::{Owner, Simulation, ENVELOPE_BYTES};
use crate::comm::{comm_of, mpi_tag, Tag};
use crate::error::ReplayError;
use crate::mailbox::{PendingSend, ReqId, Request, Transfer, TransferId};
use crate::rank::{Dest, RecvSize, Step};

impl Simulation<'_> {
    /// Queues a send step, preceded by its software overhead (`smpi/ois` for every isend,
    /// `smpi/os` for a blocking detached send; reference §4.3).
    pub(super) fn push_send(&mut self, r: u32, peer: u32, tag: Tag, bytes: u64, dest: Dest) {
        let host = self.ranks[r as usize].host;
        let overhead = match dest {
            Dest::Block if bytes < self.cfg.detached_thresh_bytes => {
                self.overhead(host, 0).overhead_secs(bytes as f64)
            }
            Dest::Block => 0.0,
            Dest::Store | Dest::Group => self.overhead(host, 2).overhead_secs(bytes as f64),
        };
        let st = &mut self.ranks[r as usize];
        if overhead > 0.0 {
            st.steps.push_back(Step::Sleep(overhead));
        }
        st.steps.push_back(Step::Send {
            peer,
            tag,
            bytes,
            dest,
        });
    }

    pub(super) fn post_send(
        &mut self,
        r: u32,
        dst: u32,
        tag: Tag,
        bytes: u64,
    ) -> Result<ReqId, ReplayError> {
        let now = self.engine.now();
        let detached = bytes < self.cfg.detached_thresh_bytes;
        let req = self.mail.new_request(Request {
            owner: r,
            is_send: true,
            peer: dst,
            tag,
            bytes,
            done: detached,
            waited: false,
            matched_secs: f64::NAN,
            sender_bytes: bytes,
            sender_detached: detached,
        });
        let send_req = (!detached).then_some(req);
        let eager = bytes < self.cfg.async_small_thresh_bytes;
        if let Some(rq) = self.mail.take_recv(dst, r, tag) {
            self.check_truncation(dst, rq, r, tag, bytes)?;
            self.start_transfer(r, dst, bytes, detached, send_req, Some(rq))?;
        } else if eager {
            let t = self.start_transfer(r, dst, bytes, detached, send_req, None)?;
            self.mail.push_send(
                dst,
                r,
                tag,
                PendingSend {
                    req: send_req,
                    bytes,
                    detached,
                    eager: Some(t),
                    posted_secs: now,
                },
            );
        } else {
            self.mail.push_send(
                dst,
                r,
                tag,
                PendingSend {
                    req: send_req,
                    bytes,
                    detached,
                    eager: None,
                    posted_secs: now,
                },
            );
        }
        if detached {
            self.mail.reqs[req as usize].matched_secs = now;
        }
        Ok(req)
    }

    pub(super) fn post_recv(
        &mut self,
        r: u32,
        src: u32,
        tag: Tag,
        size: RecvSize,
    ) -> Result<ReqId, ReplayError> {
        let bytes = match size {
            RecvSize::Bytes(b) => b,
            RecvSize::FromSender => u64::MAX,
        };
        let req = self.mail.new_request(Request {
            owner: r,
            is_send: false,
            peer: src,
            tag,
            bytes,
            done: false,
            waited: false,
            matched_secs: f64::NAN,
            sender_bytes: 0,
            sender_detached: false,
        });
        if let Some(ps) = self.mail.take_send(r, src, tag) {
            self.check_truncation(r, req, src, tag, ps.bytes)?;
            match ps.eager {
                Some(t) => {
                    let now = self.engine.now();
                    let tr = &mut self.mail.transfers[t as usize];
                    tr.recv_req = Some(req);
                    let finished = tr.done;
                    let rq = &mut self.mail.reqs[req as usize];
                    rq.matched_secs = now;
                    rq.sender_bytes = ps.bytes;
                    rq.sender_detached = ps.detached;
                    if finished {
                        rq.done = true;
                        self.mail.free_transfer(t);
                    }
                }
                None => {
                    let t =
                        self.start_transfer(src, r, ps.bytes, ps.detached, ps.req, Some(req))?;
                    // A rendezvous send found by a receiver posted after it (strictly later:
                    // posts at the same date are not late): its sender sees the
                    // acknowledgement a `timeless/rendezvous-late-wait` after the transfer.
                    let late = &self.cfg.rendezvous_late_wait;
                    if ps.req.is_some() && !late.is_zero() && self.engine.now() > ps.posted_secs {
                        self.mail.transfers[t as usize].send_late_wait_secs =
                            late.overhead_secs(ps.bytes as f64).max(0.0);
                    }
                }
            }
        } else {
            self.mail.push_recv(r, src, tag, req);
        }
        Ok(req)
    }

    fn check_truncation(
        &self,
        dst: u32,
        rq: ReqId,
        src: u32,
        tag: Tag,
        send_bytes: u64,
    ) -> Result<(), ReplayError> {
        let recv_bytes = self.mail.reqs[rq as usize].bytes;
        if recv_bytes < send_bytes {
            return Err(ReplayError::Truncation {
                at: self.loc(dst),
                src,
                tag: mpi_tag(tag),
                comm: comm_of(tag),
                recv_bytes,
                send_bytes,
            });
        }
        Ok(())
    }

    fn start_transfer(
        &mut self,
        src: u32,
        dst: u32,
        bytes: u64,
        detached: bool,
        send_req: Option<ReqId>,
        recv_req: Option<ReqId>,
    ) -> Result<TransferId, ReplayError> {
        let now = self.engine.now();
        let (hs, hd) = (self.ranks[src as usize].host, self.ranks[dst as usize].host);
        let path = self.path(hs, hd, src)?;
        let act = self
            .engine
            .start_path_comm(path, (bytes + ENVELOPE_BYTES) as f64);
        let t = self.mail.new_transfer(Transfer {
            send_req,
            recv_req,
            done: false,
            send_late_wait_secs: 0.0,
        });
        self.set_owner(act, Owner::Transfer(t));
        for q in [send_req, recv_req].into_iter().flatten() {
            let rq = &mut self.mail.reqs[q as usize];
            rq.matched_secs = now;
            if !rq.is_send {
                rq.sender_bytes = bytes;
                rq.sender_detached = detached;
            }
        }
        Ok(t)
    }
}
