//! Typed records: the frequent action records as values, written by [`fmt::Display`] and keyed
//! by value.
//!
//! Most records a program makes are a handful of point-to-point, completion and collective
//! calls repeated with the same arguments. The hooks describe those as a [`Record`] instead of
//! a format string; its `Display` writes exactly the text the TI trace holds, so the text
//! trace is unchanged, and a [`RecordKey`] (the record, its `comm=<id>` field and its call
//! site) identifies the line as a fixed-size value, hashed in a few instructions.
//!
//! The online flow graph (`flowcapture`) uses the key as its first-level signature table
//! (IPM's hash table of event signatures, `002_*` §2): a key seen before maps straight to its
//! graph node, without formatting, decoding or hashing the line's text, which is what makes
//! `--flowgraph-only` cheaper than tracing. The key determines the line: two equal keys always
//! write the same text for a rank (`Display` reads nothing but the key), so a node found by key
//! is the node the text would have found. A `compute` record's flops are not in its key (they
//! are the visit's volume, not part of the node's signature).
//!
//! Rare records (communicator definitions, v-collectives with count vectors, comments) stay
//! format strings: the graph decodes their text.

use std::fmt;

/// A frequent action record, without its rank, `comm=<id>` field and call site. Element
/// counts are in the record's datatype (`dt`, a SimGrid datatype id); ranks are world ranks.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Record {
    /// `compute <flops>`: the flops are given apart (see [`RecordKey`]).
    Compute,
    /// `send`/`isend dst tag count dt`.
    Send {
        nonblocking: bool,
        dst: u32,
        tag: i32,
        count: u64,
        dt: u8,
    },
    /// `recv`/`irecv src tag count dt`.
    Recv {
        nonblocking: bool,
        src: u32,
        tag: i32,
        count: u64,
        dt: u8,
    },
    /// `sendRecv send_count dst recv_count src send_dt recv_dt`.
    SendRecv {
        send_count: u64,
        dst: u32,
        recv_count: u64,
        src: u32,
        send_dt: u8,
        recv_dt: u8,
    },
    /// `wait src dst tag`.
    Wait { src: u32, dst: u32, tag: i32 },
    /// `test src dst tag`.
    Test { src: u32, dst: u32, tag: i32 },
    /// `waitall`.
    WaitAll,
    /// `barrier`.
    Barrier,
    /// `bcast count root dt`.
    Bcast { count: u64, root: u32, dt: u8 },
    /// `reduce count 0 root dt` (reductions carry 0 flops).
    Reduce { count: u64, root: u32, dt: u8 },
    /// `allreduce`/`scan`/`exscan count 0 dt`.
    Reduction { op: Reduction, count: u64, dt: u8 },
    /// `gather`/`scatter send_count recv_count root send_dt recv_dt`.
    Rooted {
        scatter: bool,
        send_count: u64,
        recv_count: u64,
        root: u32,
        send_dt: u8,
        recv_dt: u8,
    },
    /// `allgather`/`alltoall send_count recv_count send_dt recv_dt`.
    AllTo {
        alltoall: bool,
        send_count: u64,
        recv_count: u64,
        send_dt: u8,
        recv_dt: u8,
    },
}

/// The reductions written `<keyword> count 0 dt`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Reduction {
    AllReduce,
    Scan,
    ExScan,
}

impl Reduction {
    /// The record's keyword.
    pub fn keyword(self) -> &'static str {
        match self {
            Reduction::AllReduce => "allreduce",
            Reduction::Scan => "scan",
            Reduction::ExScan => "exscan",
        }
    }
}

impl fmt::Display for Record {
    /// The record's text after `<rank> ` (for [`Record::Compute`], the keyword alone).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let io = |b: bool, s: &'static str| if b { s } else { &s[1..] };
        match *self {
            Record::Compute => f.write_str("compute"),
            Record::Send {
                nonblocking,
                dst,
                tag,
                count,
                dt,
            } => write!(f, "{} {dst} {tag} {count} {dt}", io(nonblocking, "isend")),
            Record::Recv {
                nonblocking,
                src,
                tag,
                count,
                dt,
            } => write!(f, "{} {src} {tag} {count} {dt}", io(nonblocking, "irecv")),
            Record::SendRecv {
                send_count,
                dst,
                recv_count,
                src,
                send_dt,
                recv_dt,
            } => write!(
                f,
                "sendRecv {send_count} {dst} {recv_count} {src} {send_dt} {recv_dt}"
            ),
            Record::Wait { src, dst, tag } => write!(f, "wait {src} {dst} {tag}"),
            Record::Test { src, dst, tag } => write!(f, "test {src} {dst} {tag}"),
            Record::WaitAll => f.write_str("waitall"),
            Record::Barrier => f.write_str("barrier"),
            Record::Bcast { count, root, dt } => write!(f, "bcast {count} {root} {dt}"),
            Record::Reduce { count, root, dt } => write!(f, "reduce {count} 0 {root} {dt}"),
            Record::Reduction { op, count, dt } => write!(f, "{} {count} 0 {dt}", op.keyword()),
            Record::Rooted {
                scatter,
                send_count,
                recv_count,
                root,
                send_dt,
                recv_dt,
            } => write!(
                f,
                "{} {send_count} {recv_count} {root} {send_dt} {recv_dt}",
                if scatter { "scatter" } else { "gather" }
            ),
            Record::AllTo {
                alltoall,
                send_count,
                recv_count,
                send_dt,
                recv_dt,
            } => write!(
                f,
                "{} {send_count} {recv_count} {send_dt} {recv_dt}",
                if alltoall { "alltoall" } else { "allgather" }
            ),
        }
    }
}

/// A typed record line of one rank: the record, its `comm=<id>` field (`None`: the world, or
/// an intercommunicator's record written in world ranks) and its call site (`@cs=<id>`).
/// Equal keys write equal lines (module documentation).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct RecordKey {
    pub record: Record,
    pub comm: Option<u32>,
    pub site: Option<u32>,
}

/// Hashes a [`RecordKey`] with FxHash (`rustc-hash`): a few multiply-rotate steps over the
/// key's words. Keys are per-rank table lookups, never iterated, so the hash's quality only
/// matters for speed.
pub type KeyMap<V> = rustc_hash::FxHashMap<RecordKey, V>;

#[cfg(test)]
mod tests {
    use super::*;

    /// The text of every kind, as the format strings the hooks used to write.
    #[test]
    fn display_is_the_ti_text() {
        let cases: [(Record, &str); 14] = [
            (Record::Compute, "compute"),
            (
                Record::Send {
                    nonblocking: true,
                    dst: 3,
                    tag: -7,
                    count: 8,
                    dt: 6,
                },
                "isend 3 -7 8 6",
            ),
            (
                Record::Send {
                    nonblocking: false,
                    dst: 0,
                    tag: 1,
                    count: 2,
                    dt: 1,
                },
                "send 0 1 2 1",
            ),
            (
                Record::Recv {
                    nonblocking: true,
                    src: 2,
                    tag: 5,
                    count: 100,
                    dt: 0,
                },
                "irecv 2 5 100 0",
            ),
            (
                Record::Recv {
                    nonblocking: false,
                    src: 2,
                    tag: 5,
                    count: 100,
                    dt: 0,
                },
                "recv 2 5 100 0",
            ),
            (
                Record::SendRecv {
                    send_count: 4,
                    dst: 1,
                    recv_count: 5,
                    src: 2,
                    send_dt: 6,
                    recv_dt: 7,
                },
                "sendRecv 4 1 5 2 6 7",
            ),
            (
                Record::Wait {
                    src: 1,
                    dst: 0,
                    tag: 9,
                },
                "wait 1 0 9",
            ),
            (
                Record::Test {
                    src: 1,
                    dst: 0,
                    tag: 9,
                },
                "test 1 0 9",
            ),
            (Record::WaitAll, "waitall"),
            (
                Record::Bcast {
                    count: 10,
                    root: 0,
                    dt: 1,
                },
                "bcast 10 0 1",
            ),
            (
                Record::Reduce {
                    count: 10,
                    root: 2,
                    dt: 1,
                },
                "reduce 10 0 2 1",
            ),
            (
                Record::Reduction {
                    op: Reduction::ExScan,
                    count: 3,
                    dt: 2,
                },
                "exscan 3 0 2",
            ),
            (
                Record::Rooted {
                    scatter: true,
                    send_count: 1,
                    recv_count: 2,
                    root: 3,
                    send_dt: 4,
                    recv_dt: 5,
                },
                "scatter 1 2 3 4 5",
            ),
            (
                Record::AllTo {
                    alltoall: false,
                    send_count: 1,
                    recv_count: 2,
                    send_dt: 4,
                    recv_dt: 5,
                },
                "allgather 1 2 4 5",
            ),
        ];
        for (r, text) in cases {
            assert_eq!(r.to_string(), text);
        }
    }
}
