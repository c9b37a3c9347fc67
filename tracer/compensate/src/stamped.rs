//! Timestamped time-independent lines: the tracer's `--timestamps` output.
//!
//! A stamped line is a SimGrid TI line (with the project's `comm=<id>` extension) whose action is
//! preceded by the call's measured enter and exit times in seconds:
//! `<rank> <enter> <exit> <action> <args...>`, e.g. `1 0.0012 0.0031 recv 0 1 1 4`. Compute
//! bursts are the gaps between calls and are not written; `comm_def` lines carry no times; a
//! blocking probe is written `<rank> <enter> <exit> probe <src> <tag> [comm=<id>]`.
//!
//! [`StampedDecoder`] turns each stamped line into records of the timed event model
//! ([`crate::model`]), mapping MPI semantics onto `004_*`'s send/receive/collective events:
//!
//! * `send`, `isend` → a send (sends are non-blocking in `004_*` §3); `recv` → a receive;
//! * `irecv` → an independent region; the `wait` whose key (src, dst = this rank, tag) names a
//!   pending `irecv` → that receive, spanning the wait; `waitall` → every pending receive, the
//!   first spanning the call and the others of zero length at its exit;
//! * `sendRecv` → a zero-length send at the call's enter followed by a receive spanning it;
//! * collectives → collective records, `bytes` being the per-peer payload with the root
//!   (elements × datatype size; the default datatype follows `init` as in SimGrid);
//! * anything else (`init`, `finalize`, `wait` on a send, `test`, ...) → a region named after it.
//!
//! A `test` that completes a receive is not seen: the receive stays pending and its message is
//! reported as never received.

use std::collections::{BTreeMap, VecDeque};

use timeless_trace::{parse_line_in, Action, Datatype, RecvCount, RequestKey};

use crate::error::ErrorKind;
use crate::model::{CollectiveOp, CommId, Rank, RecordKind, TimedItem, TimedRecord};

/// Whether `line` (already trimmed, not a comment) is a stamped line: its second field is a
/// number.
pub fn is_stamped(line: &str) -> bool {
    line.split_ascii_whitespace()
        .nth(1)
        .is_some_and(|f| f.parse::<f64>().is_ok())
}

/// Per-rank decoding state.
#[derive(Debug, Default)]
pub struct StampedDecoder {
    double_default: bool,
    comm_sizes: BTreeMap<CommId, u32>,
    /// Pending non-blocking receives by (src, tag, comm): their sizes in bytes, oldest first.
    pending: BTreeMap<(Rank, i32, CommId), VecDeque<u64>>,
    /// The same keys in posting order, for `waitall`.
    order: VecDeque<(Rank, i32, CommId)>,
}

fn bad(msg: impl Into<String>) -> ErrorKind {
    ErrorKind::Malformed(msg.into())
}

fn time(tok: Option<&str>, what: &str) -> Result<f64, ErrorKind> {
    let tok = tok.ok_or_else(|| bad(format!("missing {what}")))?;
    tok.parse::<f64>()
        .ok()
        .filter(|v| v.is_finite() && *v >= 0.0)
        .ok_or_else(|| {
            bad(format!(
                "{what} '{tok}' is not a non-negative number of seconds"
            ))
        })
}

impl StampedDecoder {
    fn bytes(&self, count: u64, dt: Option<Datatype>) -> u64 {
        let dt = dt.unwrap_or(if self.double_default {
            Datatype::DOUBLE
        } else {
            Datatype::BYTE
        });
        count.saturating_mul(u64::from(dt.size_bytes()))
    }

    /// Decodes one stamped line (or an unstamped `comm_def`) of rank `rank` in a run of
    /// `nranks` ranks into zero or more items, in order.
    ///
    /// # Errors
    /// Bad timestamps, exit before enter, and anything the TI line decoder rejects.
    pub fn decode(&mut self, line: &str, nranks: u32) -> Result<Vec<TimedItem>, ErrorKind> {
        let trimmed = line.trim();
        let mut f = trimmed.split_ascii_whitespace();
        let rank_tok = f.next().unwrap_or("");
        if !is_stamped(trimmed) {
            // Unstamped: comm_def declarations (and compute, which stamped traces leave out).
            let rec = parse_line_in(trimmed, nranks, &|c| self.comm_sizes.get(&c).copied())
                .map_err(|e| bad(e.to_string()))?;
            return match rec.map(|r| r.action) {
                Some(Action::CommDef { id, world_ranks }) => {
                    self.comm_sizes.insert(id, world_ranks.len() as u32);
                    Ok(vec![TimedItem::CommDef {
                        id,
                        members: *world_ranks,
                    }])
                }
                Some(Action::Compute { .. }) | None => Ok(Vec::new()),
                Some(a) => Err(bad(format!(
                    "'{}' needs its enter and exit times: <rank> <enter> <exit> {} ...",
                    a.keyword(),
                    a.keyword()
                ))),
            };
        }
        let enter = time(f.next(), "enter time")?;
        let exit = time(f.next(), "exit time")?;
        if exit < enter {
            return Err(bad(format!(
                "exit time {exit} is before enter time {enter}"
            )));
        }
        let rest: Vec<&str> = f.collect();
        let rank: Rank = rank_tok
            .parse()
            .map_err(|_| bad(format!("rank field '{rank_tok}' is not a rank number")))?;
        let record = |kind| {
            TimedItem::Record(TimedRecord {
                rank,
                line: 0,
                enter_secs: enter,
                exit_secs: exit,
                kind,
            })
        };
        if rest.first() == Some(&"probe") {
            let native = format!("{rank} probe {enter} {exit} {}", rest[1..].join(" "));
            return Ok(crate::format::parse_line(&native, nranks)?
                .map(|(_, item)| vec![item])
                .unwrap_or_default());
        }
        let ti = format!("{rank} {}", rest.join(" "));
        let Some(rec) = parse_line_in(&ti, nranks, &|c| self.comm_sizes.get(&c).copied())
            .map_err(|e| bad(e.to_string()))?
        else {
            return Err(bad("missing action after the times"));
        };
        let comm = rec.comm;
        let region = |name: &str| RecordKind::Region {
            name: name.to_string(),
        };
        let coll = |op, bytes, root: Option<Rank>| RecordKind::Collective {
            op,
            bytes,
            root,
            comm,
        };
        let kind = match rec.action {
            Action::Init { double_default } => {
                self.double_default = double_default;
                region("init")
            }
            Action::Compute { .. } => return Err(bad("compute lines carry no times")),
            Action::CommDef { .. } => return Err(bad("comm_def lines carry no times")),
            Action::Send {
                dst,
                tag,
                count,
                dt,
                ..
            } => RecordKind::Send {
                dst,
                tag,
                bytes: self.bytes(count, dt),
                comm,
            },
            Action::Recv {
                src,
                tag,
                count,
                dt,
                blocking,
            } => {
                let bytes = match count {
                    RecvCount::Count(c) => self.bytes(c, dt),
                    RecvCount::Probe | RecvCount::FromSender => 0,
                };
                if blocking {
                    RecordKind::Recv {
                        src,
                        tag,
                        bytes,
                        comm,
                    }
                } else {
                    self.pending
                        .entry((src, tag, comm))
                        .or_default()
                        .push_back(bytes);
                    self.order.push_back((src, tag, comm));
                    region("irecv")
                }
            }
            Action::Wait(RequestKey::Key { src, dst, tag }) if dst == rank && src != rank => {
                match self.take((src, tag, comm)) {
                    Some(bytes) => RecordKind::Recv {
                        src,
                        tag,
                        bytes,
                        comm,
                    },
                    None => region("wait"),
                }
            }
            Action::WaitAll => {
                let mut items = Vec::new();
                while let Some(key) = self.order.front().copied() {
                    let bytes = self.take(key).expect("ordered keys are pending");
                    let t0 = if items.is_empty() { enter } else { exit };
                    items.push(TimedItem::Record(TimedRecord {
                        rank,
                        line: 0,
                        enter_secs: t0,
                        exit_secs: exit,
                        kind: RecordKind::Recv {
                            src: key.0,
                            tag: key.1,
                            bytes,
                            comm: key.2,
                        },
                    }));
                }
                if items.is_empty() {
                    items.push(record(region("waitall")));
                }
                return Ok(items);
            }
            Action::SendRecv {
                send_count,
                dst,
                recv_count,
                src,
                send_dt,
                recv_dt,
            } => {
                let send = TimedItem::Record(TimedRecord {
                    rank,
                    line: 0,
                    enter_secs: enter,
                    exit_secs: enter,
                    kind: RecordKind::Send {
                        dst,
                        tag: 0,
                        bytes: self.bytes(send_count, send_dt),
                        comm,
                    },
                });
                let recv = record(RecordKind::Recv {
                    src,
                    tag: 0,
                    bytes: self.bytes(recv_count, recv_dt),
                    comm,
                });
                return Ok(vec![send, recv]);
            }
            Action::Barrier => coll(CollectiveOp::Barrier, 0, None),
            Action::Bcast { count, root, dt } => {
                coll(CollectiveOp::Bcast, self.bytes(count, dt), Some(root))
            }
            Action::Reduce {
                count, root, dt, ..
            } => coll(CollectiveOp::Reduce, self.bytes(count, dt), Some(root)),
            Action::AllReduce { count, dt, .. } => {
                coll(CollectiveOp::Allreduce, self.bytes(count, dt), None)
            }
            Action::AllToAll {
                send_count,
                send_dt,
                ..
            } => coll(
                CollectiveOp::Alltoall,
                self.bytes(send_count, send_dt),
                None,
            ),
            Action::AllToAllV {
                send_counts,
                send_dt,
                ..
            } => coll(
                CollectiveOp::Alltoallv,
                self.bytes(send_counts.iter().sum(), send_dt),
                None,
            ),
            Action::Gather {
                send_count,
                root,
                send_dt,
                ..
            } => coll(
                CollectiveOp::Gather,
                self.bytes(send_count, send_dt),
                Some(root),
            ),
            Action::GatherV {
                send_count,
                root,
                send_dt,
                ..
            } => coll(
                CollectiveOp::Gatherv,
                self.bytes(send_count, send_dt),
                Some(root),
            ),
            Action::AllGather {
                send_count,
                send_dt,
                ..
            } => coll(
                CollectiveOp::Allgather,
                self.bytes(send_count, send_dt),
                None,
            ),
            Action::AllGatherV {
                send_count,
                send_dt,
                ..
            } => coll(
                CollectiveOp::Allgatherv,
                self.bytes(send_count, send_dt),
                None,
            ),
            Action::Scatter {
                recv_count,
                root,
                recv_dt,
                ..
            } => coll(
                CollectiveOp::Scatter,
                self.bytes(recv_count, recv_dt),
                Some(root),
            ),
            Action::ScatterV {
                recv_count,
                root,
                recv_dt,
                ..
            } => coll(
                CollectiveOp::Scatterv,
                self.bytes(recv_count, recv_dt),
                Some(root),
            ),
            Action::ReduceScatter {
                recv_counts, dt, ..
            } => coll(
                CollectiveOp::Reducescatter,
                self.bytes(recv_counts.iter().sum(), dt),
                None,
            ),
            Action::Scan { count, dt, .. } => coll(CollectiveOp::Scan, self.bytes(count, dt), None),
            Action::ExScan { count, dt, .. } => {
                coll(CollectiveOp::Exscan, self.bytes(count, dt), None)
            }
            other => region(other.keyword()),
        };
        Ok(vec![record(kind)])
    }

    fn take(&mut self, key: (Rank, i32, CommId)) -> Option<u64> {
        let q = self.pending.get_mut(&key)?;
        let bytes = q.pop_front()?;
        if q.is_empty() {
            self.pending.remove(&key);
        }
        if let Some(pos) = self.order.iter().position(|k| *k == key) {
            self.order.remove(pos);
        }
        Some(bytes)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(lines: &[&str]) -> Vec<(f64, f64, RecordKind)> {
        let mut d = StampedDecoder::default();
        let mut out = Vec::new();
        for l in lines {
            for item in d.decode(l, 4).unwrap() {
                if let TimedItem::Record(r) = item {
                    out.push((r.enter_secs, r.exit_secs, r.kind));
                }
            }
        }
        out
    }

    #[test]
    fn maps_point_to_point_calls_onto_send_and_receive_events() {
        // Datatype 4 is MPI_LONG (8 bytes); `init` without argument: MPI_BYTE default.
        let k = kinds(&[
            "0 0 0.5 init",
            "0 1 1.5 isend 1 7 10 4",
            "0 2 2.5 irecv 2 12 3",
            "0 3 3.5 wait 0 1 7",
            "0 4 4.5 wait 2 0 12",
            "0 5 5.5 sendRecv 8 1 16 3 6 6",
        ]);
        assert_eq!(
            k[0].2,
            RecordKind::Region {
                name: "init".into()
            }
        );
        assert_eq!(
            k[1].2,
            RecordKind::Send {
                dst: 1,
                tag: 7,
                bytes: 80,
                comm: 0
            }
        );
        assert_eq!(
            k[2].2,
            RecordKind::Region {
                name: "irecv".into()
            }
        );
        assert_eq!(
            k[3].2,
            RecordKind::Region {
                name: "wait".into()
            }
        );
        assert_eq!(
            (k[4].0, k[4].1, k[4].2.clone()),
            (
                4.0,
                4.5,
                RecordKind::Recv {
                    src: 2,
                    tag: 12,
                    bytes: 3,
                    comm: 0
                }
            )
        );
        assert_eq!(
            (k[5].0, k[5].1, k[5].2.clone()),
            (
                5.0,
                5.0,
                RecordKind::Send {
                    dst: 1,
                    tag: 0,
                    bytes: 8,
                    comm: 0
                }
            )
        );
        assert_eq!(
            (k[6].0, k[6].1),
            (5.0, 5.5),
            "the receive half spans the call"
        );
    }

    #[test]
    fn waitall_completes_every_pending_receive_and_collectives_carry_payloads() {
        let k = kinds(&[
            "1 0 0.1 init 1",
            "1 1 1.1 irecv 0 1 2",
            "1 2 2.1 irecv 3 1 2",
            "1 3 4 waitall",
            "1 5 6 bcast 4 0",
            "1 comm_def 1 2 1 3",
            "1 7 8 reduce 2 0 3 comm=1",
            "1 9 9.5 probe 0 4",
        ]);
        // init 1: MPI_DOUBLE default, 8 bytes per element.
        assert_eq!(
            (k[3].0, k[3].1, k[3].2.clone()),
            (
                3.0,
                4.0,
                RecordKind::Recv {
                    src: 0,
                    tag: 1,
                    bytes: 16,
                    comm: 0
                }
            )
        );
        assert_eq!((k[4].0, k[4].1), (4.0, 4.0));
        assert_eq!(
            k[5].2,
            RecordKind::Collective {
                op: CollectiveOp::Bcast,
                bytes: 32,
                root: Some(0),
                comm: 0
            }
        );
        assert_eq!(
            k[6].2,
            RecordKind::Collective {
                op: CollectiveOp::Reduce,
                bytes: 16,
                root: Some(3),
                comm: 1
            }
        );
        assert_eq!(
            k[7].2,
            RecordKind::Probe {
                src: 0,
                tag: 4,
                comm: 0
            }
        );
    }

    #[test]
    fn rejects_unstamped_actions_and_bad_times() {
        let mut d = StampedDecoder::default();
        assert!(d
            .decode("0 send 1 0 8", 2)
            .unwrap_err()
            .to_string()
            .contains("needs its enter and exit times"));
        assert!(d
            .decode("0 2 1 send 1 0 8", 2)
            .unwrap_err()
            .to_string()
            .contains("exit time 1 is before enter time 2"));
        assert!(d
            .decode("0 1 2 frob", 2)
            .unwrap_err()
            .to_string()
            .contains("unknown action 'frob'"));
        assert!(d.decode("0 compute 100", 2).unwrap().is_empty());
    }
}
