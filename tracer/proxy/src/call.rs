//! C code of one terminal: the MPI call a trace action stands for.
//!
//! Peers are written as displacements from the executing rank (`me + 2`), as in the call
//! signature, so one function serves every rank of an SPMD code; roots are absolute world
//! ranks. On a sub-communicator, world ranks are turned into comm ranks at run time
//! (`comm_rank_of`). Counts are scaled by `--scale-bytes`. Datatypes keep their MPI name when C
//! has it; otherwise (SimGrid-only ids such as `MPI_PTR`, or `MPI_INTEGER1`, which SimGrid
//! sizes as 4 bytes) the call moves the same bytes as `MPI_BYTE`. Reductions use `MPI_SUM`,
//! `MPI_MAXLOC` on pair types, `MPI_LOR` on booleans and `MPI_BOR` on bytes; characters and
//! packed data are reduced as bytes. MPI tags must be >= 0: the negative tags of the tracer's
//! point-to-point expansion of neighbourhood collectives (`-1000 - ...`) are sent as
//! `32768 + tag` (MPI guarantees tags up to 32767).

use std::fmt::Write;

use timeless_trace::{Action, Datatype, RecvCount, RequestKey};

use crate::error::ProxyError;
use crate::model::Terminal;

/// Ids whose C datatype does not exist or has another size than SimGrid gives it.
const AS_BYTES: &[&str] = &[
    "MPI_UB",
    "MPI_LB",
    "MPI_PTR",
    "MPI_2FLOAT",
    "MPI_2DOUBLE",
    "MPI_2LONG",
    "MPI_INTEGER1",
    "MPI_INTEGER16",
    "MPI_REAL16",
    "MPI_COMPLEX32",
    "MPI_CXX_BOOL",
    "MPI_CXX_FLOAT_COMPLEX",
    "MPI_CXX_DOUBLE_COMPLEX",
    "MPI_CXX_LONG_DOUBLE_COMPLEX",
];

const PAIRS: &[&str] = &[
    "MPI_FLOAT_INT",
    "MPI_LONG_INT",
    "MPI_DOUBLE_INT",
    "MPI_SHORT_INT",
    "MPI_2INT",
    "MPI_LONG_DOUBLE_INT",
];

const CHARS: &[&str] = &["MPI_CHAR", "MPI_WCHAR", "MPI_PACKED"];

/// A resolved datatype: its C name and how many of it one element of the trace is.
struct Dt {
    name: &'static str,
    per_element: u64,
}

struct Emitter<'a> {
    t: &'a Terminal,
    scale_bytes: f64,
    rank: u32,
}

impl Emitter<'_> {
    fn dt(&self, dt: Option<Datatype>, reduce: bool) -> Dt {
        let d = dt.unwrap_or(if self.t.default_double {
            Datatype::DOUBLE
        } else {
            Datatype::BYTE
        });
        let name = d.name();
        if AS_BYTES.contains(&name) || (reduce && CHARS.contains(&name)) {
            Dt {
                name: "MPI_BYTE",
                per_element: u64::from(d.size_bytes()),
            }
        } else {
            Dt {
                name,
                per_element: 1,
            }
        }
    }

    fn op(dt: &Dt) -> &'static str {
        match dt.name {
            "MPI_BYTE" => "MPI_BOR",
            "MPI_C_BOOL" => "MPI_LOR",
            n if PAIRS.contains(&n) => "MPI_MAXLOC",
            _ => "MPI_SUM",
        }
    }

    /// A count of `dt` elements as a C int, scaled.
    fn count(&self, c: u64, dt: &Dt) -> Result<i64, ProxyError> {
        let scaled = if c == 0 {
            0.0
        } else {
            (c as f64 * dt.per_element as f64 * self.scale_bytes)
                .round()
                .max(1.0)
        };
        if scaled > f64::from(i32::MAX) {
            return Err(self.unsupported(format!(
                "a count of {scaled} elements does not fit an MPI int"
            )));
        }
        Ok(scaled as i64)
    }

    fn counts(&self, v: &[u64], dt: &Dt) -> Result<String, ProxyError> {
        let mut s = String::new();
        for (i, &c) in v.iter().enumerate() {
            if i > 0 {
                s.push_str(", ");
            }
            write!(s, "{}", self.count(c, dt)?).expect("write to String");
        }
        Ok(s)
    }

    /// An MPI tag for trace tag `t`.
    fn tag(&self, t: i32) -> Result<i32, ProxyError> {
        if t >= 0 {
            return Ok(t);
        }
        let mapped = 32768 + i64::from(t);
        if mapped < 0 {
            return Err(self.unsupported(format!("tag {t} has no non-negative MPI equivalent")));
        }
        Ok(mapped as i32)
    }

    fn unsupported(&self, what: String) -> ProxyError {
        ProxyError::Unsupported {
            rank: self.rank,
            location: 0,
            what,
        }
    }

    /// `me + d` for a world rank `p` of the first rank's action.
    fn peer(&self, p: u32) -> String {
        let d = i64::from(p) - i64::from(self.t.first_rank);
        match d {
            0 => "me".to_string(),
            d if d > 0 => format!("me + {d}"),
            d => format!("me - {}", -d),
        }
    }

    /// The comm rank of world rank expression `w` in this call's communicator.
    fn in_comm(&self, w: String) -> String {
        if self.t.comm == 0 {
            w
        } else {
            format!("comm_rank_of({}, {w})", self.t.comm)
        }
    }

    fn root(&self, root: u32) -> String {
        if self.t.comm == 0 {
            root.to_string()
        } else {
            format!("comm_rank_of({}, {root})", self.t.comm)
        }
    }

    fn comm(&self) -> String {
        format!("comms[{}]", self.t.comm)
    }

    fn body(&self) -> Result<String, ProxyError> {
        let c = self.comm();
        let a = &self.t.action;
        Ok(match a {
            Action::Init { .. } => "/* MPI_Init: done by main */".into(),
            Action::Finalize => "/* MPI_Finalize: done by main */".into(),
            Action::CommNoop => {
                "/* comm_size/comm_split/comm_dup: the comm_def that follows creates it */".into()
            }
            Action::Location | Action::Compute { .. } | Action::Sleep { .. } => {
                return Err(self.unsupported(format!("{} is not a call", a.keyword())))
            }
            Action::CommDef { id, world_ranks } => {
                let disps: Vec<String> = world_ranks
                    .iter()
                    .map(|&w| (i64::from(w) - i64::from(self.t.first_rank)).to_string())
                    .collect();
                format!(
                    "static const int d[] = {{{}}};\n    comm_create({id}, d, {});",
                    disps.join(", "),
                    world_ranks.len()
                )
            }
            Action::Send {
                dst,
                tag,
                count,
                dt,
                blocking,
            } => {
                let tag = self.tag(*tag)?;
                let d = self.dt(*dt, false);
                let n = self.count(*count, &d)?;
                let p = self.in_comm(self.peer(*dst));
                if *blocking {
                    format!("MPI_Send(sbuf, {n}, {}, {p}, {tag}, {c});", d.name)
                } else if self.t.freed {
                    format!(
                        "MPI_Request q;\n    MPI_Isend(sbuf, {n}, {}, {p}, {tag}, {c}, &q);\n    MPI_Request_free(&q);",
                        d.name
                    )
                } else {
                    format!(
                        "MPI_Request q;\n    MPI_Isend(sbuf, {n}, {}, {p}, {tag}, {c}, &q);\n    store_push(q, me, {}, {tag}, 0, {n}, {});",
                        d.name,
                        self.peer(*dst),
                        d.name
                    )
                }
            }
            Action::Recv {
                src,
                tag,
                count,
                dt,
                blocking,
            } => {
                let tag = self.tag(*tag)?;
                let d = self.dt(*dt, false);
                let p = self.in_comm(self.peer(*src));
                match count {
                    RecvCount::Count(k) => {
                        let n = self.count(*k, &d)?;
                        if *blocking {
                            format!(
                                "MPI_Status st;\n    MPI_Recv(rbuf, {n}, {dt}, {p}, {tag}, {c}, &st);\n    check_count(&st, {dt}, {n});",
                                dt = d.name
                            )
                        } else if self.t.freed {
                            format!(
                                "MPI_Request q;\n    MPI_Irecv(rbuf, {n}, {}, {p}, {tag}, {c}, &q);\n    MPI_Request_free(&q);",
                                d.name
                            )
                        } else {
                            format!(
                                "MPI_Request q;\n    MPI_Irecv(rbuf, {n}, {dt}, {p}, {tag}, {c}, &q);\n    store_push(q, {}, me, {tag}, 1, {n}, {dt});",
                                self.peer(*src),
                                dt = d.name
                            )
                        }
                    }
                    RecvCount::Probe | RecvCount::FromSender => {
                        format!("recv_probed({p}, {tag}, {}, {c});", d.name)
                    }
                }
            }
            Action::Wait(RequestKey::Key { src, dst, tag }) => format!(
                "store_wait(store_find({}, {}, {}));",
                self.peer(*src),
                self.peer(*dst),
                self.tag(*tag)?
            ),
            Action::Wait(RequestKey::Oldest) => "store_wait(nstore ? 0 : -1);".into(),
            Action::Test(RequestKey::Key { src, dst, tag }) if self.t.test_succeeded => format!(
                "store_complete(store_find({}, {}, {}));",
                self.peer(*src),
                self.peer(*dst),
                self.tag(*tag)?
            ),
            Action::Test(RequestKey::Key { .. }) => {
                "/* a test that failed in the trace: not repeated */".into()
            }
            Action::Test(RequestKey::Oldest) => "/* test of no request: nothing */".into(),
            Action::WaitAll => "store_waitall();".into(),
            Action::SendRecv {
                send_count,
                dst,
                recv_count,
                src,
                send_dt,
                recv_dt,
            } => {
                let (sd, rd) = (self.dt(*send_dt, false), self.dt(*recv_dt, false));
                let (sn, rn) = (self.count(*send_count, &sd)?, self.count(*recv_count, &rd)?);
                format!(
                    "MPI_Status st;\n    MPI_Sendrecv(sbuf, {sn}, {}, {}, 0, rbuf, {rn}, {rdt}, {}, 0, {c}, &st);\n    check_count(&st, {rdt}, {rn});",
                    sd.name,
                    self.in_comm(self.peer(*dst)),
                    self.in_comm(self.peer(*src)),
                    rdt = rd.name
                )
            }
            Action::Barrier => format!("MPI_Barrier({c});"),
            Action::Bcast { count, root, dt } => {
                let d = self.dt(*dt, false);
                format!(
                    "MPI_Bcast(sbuf, {}, {}, {}, {c});",
                    self.count(*count, &d)?,
                    d.name,
                    self.root(*root)
                )
            }
            Action::Reduce {
                count, root, dt, ..
            } => {
                let d = self.dt(*dt, true);
                format!(
                    "MPI_Reduce(sbuf, rbuf, {}, {}, {}, {}, {c});",
                    self.count(*count, &d)?,
                    d.name,
                    Self::op(&d),
                    self.root(*root)
                )
            }
            Action::AllReduce { count, dt, .. }
            | Action::Scan { count, dt, .. }
            | Action::ExScan { count, dt, .. } => {
                let d = self.dt(*dt, true);
                let f = match a {
                    Action::AllReduce { .. } => "MPI_Allreduce",
                    Action::Scan { .. } => "MPI_Scan",
                    _ => "MPI_Exscan",
                };
                format!(
                    "{f}(sbuf, rbuf, {}, {}, {}, {c});",
                    self.count(*count, &d)?,
                    d.name,
                    Self::op(&d)
                )
            }
            Action::AllToAll {
                send_count,
                recv_count,
                send_dt,
                recv_dt,
            }
            | Action::AllGather {
                send_count,
                recv_count,
                send_dt,
                recv_dt,
            } => {
                let (sd, rd) = (self.dt(*send_dt, false), self.dt(*recv_dt, false));
                let f = if matches!(a, Action::AllToAll { .. }) {
                    "MPI_Alltoall"
                } else {
                    "MPI_Allgather"
                };
                format!(
                    "{f}(sbuf, {}, {}, rbuf, {}, {}, {c});",
                    self.count(*send_count, &sd)?,
                    sd.name,
                    self.count(*recv_count, &rd)?,
                    rd.name
                )
            }
            Action::Gather {
                send_count,
                recv_count,
                root,
                send_dt,
                recv_dt,
            }
            | Action::Scatter {
                send_count,
                recv_count,
                root,
                send_dt,
                recv_dt,
            } => {
                let (sd, rd) = (self.dt(*send_dt, false), self.dt(*recv_dt, false));
                let f = if matches!(a, Action::Gather { .. }) {
                    "MPI_Gather"
                } else {
                    "MPI_Scatter"
                };
                format!(
                    "{f}(sbuf, {}, {}, rbuf, {}, {}, {}, {c});",
                    self.count(*send_count, &sd)?,
                    sd.name,
                    self.count(*recv_count, &rd)?,
                    rd.name,
                    self.root(*root)
                )
            }
            Action::AllToAllV {
                send_counts,
                recv_counts,
                send_dt,
                recv_dt,
            } => {
                let (sd, rd) = (self.dt(*send_dt, false), self.dt(*recv_dt, false));
                let n = send_counts.len();
                format!(
                    "static const int sc[] = {{{}}}, rc[] = {{{}}};\n    int sd[{n}], rd[{n}];\n    prefix(sc, {n}, sd);\n    prefix(rc, {n}, rd);\n    MPI_Alltoallv(sbuf, sc, sd, {}, rbuf, rc, rd, {}, {c});",
                    self.counts(send_counts, &sd)?,
                    self.counts(recv_counts, &rd)?,
                    sd.name,
                    rd.name
                )
            }
            Action::GatherV {
                send_count,
                recv_counts,
                root,
                send_dt,
                recv_dt,
            } => {
                let (sd, rd) = (self.dt(*send_dt, false), self.dt(*recv_dt, false));
                let n = recv_counts.len();
                format!(
                    "static const int rc[] = {{{}}};\n    int rd[{n}];\n    prefix(rc, {n}, rd);\n    MPI_Gatherv(sbuf, {}, {}, rbuf, rc, rd, {}, {}, {c});",
                    self.counts(recv_counts, &rd)?,
                    self.count(*send_count, &sd)?,
                    sd.name,
                    rd.name,
                    self.root(*root)
                )
            }
            Action::AllGatherV {
                send_count,
                recv_counts,
                send_dt,
                recv_dt,
                ..
            } => {
                let (sd, rd) = (self.dt(*send_dt, false), self.dt(*recv_dt, false));
                let n = recv_counts.len();
                format!(
                    "static const int rc[] = {{{}}};\n    int rd[{n}];\n    prefix(rc, {n}, rd);\n    MPI_Allgatherv(sbuf, {}, {}, rbuf, rc, rd, {}, {c});",
                    self.counts(recv_counts, &rd)?,
                    self.count(*send_count, &sd)?,
                    sd.name,
                    rd.name
                )
            }
            Action::ScatterV {
                send_counts,
                recv_count,
                root,
                send_dt,
                recv_dt,
            } => {
                let (sd, rd) = (self.dt(*send_dt, false), self.dt(*recv_dt, false));
                let n = send_counts.len();
                format!(
                    "static const int sc[] = {{{}}};\n    int sd[{n}];\n    prefix(sc, {n}, sd);\n    MPI_Scatterv(sbuf, sc, sd, {}, rbuf, {}, {}, {}, {c});",
                    self.counts(send_counts, &sd)?,
                    sd.name,
                    self.count(*recv_count, &rd)?,
                    rd.name,
                    self.root(*root)
                )
            }
            Action::ReduceScatter {
                recv_counts, dt, ..
            } => {
                let d = self.dt(*dt, true);
                format!(
                    "static const int rc[] = {{{}}};\n    MPI_Reduce_scatter(sbuf, rbuf, rc, {}, {}, {c});",
                    self.counts(recv_counts, &d)?,
                    d.name,
                    Self::op(&d)
                )
            }
        })
    }
}

/// The C function `t<id>` performing terminal `t`.
///
/// # Errors
/// [`ProxyError::Unsupported`]: a count that does not fit an MPI `int` after scaling.
pub fn function(id: usize, t: &Terminal, scale_bytes: f64) -> Result<String, ProxyError> {
    let e = Emitter {
        t,
        scale_bytes,
        rank: t.first_rank,
    };
    Ok(format!(
        "/* {} */\nstatic void t{id}(void)\n{{\n    {}\n}}\n",
        t.action.keyword(),
        e.body()?
    ))
}
