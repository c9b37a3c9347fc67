//! The compensation engine: every rank's records approximated in an order that respects
//! happened-before, streamed.
//!
//! # Order
//! Each rank's stream is read one record ahead. The engine repeatedly takes, among the ranks
//! that can proceed, the one whose next record has the earliest measured enter time (ties: lowest
//! rank), and approximates that record:
//!
//! * a region or send depends on nothing but the rank's previous event (`004_*` eq. 1); a send
//!   then leaves its approximated `send_a` in the queue of its (source, destination,
//!   communicator, tag), where MPI's non-overtaking rule makes the n-th receive match the n-th
//!   send;
//! * a receive waits until its matching send has been processed, then uses [`crate::p2p`]; a
//!   probe does the same with an envelope (no copy) and leaves the message for the receive;
//! * a collective waits until the members it depends on have entered it ([`crate::collective`]):
//!   all of them for n-to-n, the root for a 1-to-n receiver, all of them for an n-to-1 root.
//!
//! A rank that must wait is set aside and resumed by the event it waits for. If no rank can
//! proceed while some have records left, the trace is inconsistent ([`ErrorKind::Unmatched`],
//! naming each stuck rank, its record's `file:line` and what it waits for).
//!
//! # Memory bound
//! The engine holds one look-ahead record per rank, the messages sent but not yet received, and
//! the collectives entered by some but not all of their members. Because ranks advance in
//! measured-time order, a message stays queued only while the measured receive had not started
//! yet, so the window is the set of messages in flight at the frontier of the measured run
//! (which the MPI library itself had to buffer) plus one open collective per communicator and
//! rank: O(ranks + messages in flight in the measured run), independent of the trace's length.
//! [`Summary::max_window`] reports the largest window seen.
//!
//! # Events and overhead
//! A record has two events, enter and exit; each independent event moves the rank's clock by
//! the measured gap minus `O`, never by less than zero (eq. 1, per event, so the subtracted
//! overhead accumulates with the number of events). A rank's first event keeps its measured
//! time. Dependent exits (receives, collective exits) come from eqs. 3-13 instead.
//!
//! Where an event's overhead lies: a tracer takes an event's timestamp and then does its own
//! work (reading the CPU clock, formatting the record), so the overhead `O` of an enter event
//! lies between the enter timestamp and the MPI call, and that of an exit event after the exit
//! timestamp. The operation itself therefore starts at `enter_m + O`: this is the paper's
//! `send` event, distinct from `enter.send` (§3.2), and the start a dependent formula measures
//! communication from (eq. 2's `send_m`, the latest enter `enter_m^j` of eqs. 12-13, the
//! root's send of 1-to-n). `recv` and `exit.recv` coincide. Taking `send_m = enter.send_m`
//! would keep the sender's enter overhead inside every measured communication time `Comm_m`
//! and leave one `O` per message on the critical path.

use std::cmp::Reverse;
use std::collections::{BTreeMap, BinaryHeap, VecDeque};

use crate::collective::{self, Member};
use crate::cost::Params;
use crate::error::{Error, ErrorKind};
use crate::format::TimedStream;
use crate::model::{CollectiveOp, CollectiveShape, Rank, RecordKind, TimedItem, TimedRecord};
use crate::p2p::{approx_recv, Bound, Case, MeasuredMessage};

/// One time per bound, indexed by `Bound as usize`.
pub type Pair = [f64; 2];

/// One record with its measured and approximated times, handed to a [`Sink`].
#[derive(Debug, Clone, Copy)]
pub struct Compensated<'a> {
    /// Rank.
    pub rank: Rank,
    /// 0-based index of the record in its rank's stream.
    pub index: u64,
    /// Line in the trace file (0 for in-memory records).
    pub line: u64,
    /// What the record is.
    pub kind: &'a RecordKind,
    /// Measured enter and exit, seconds.
    pub enter_m: f64,
    pub exit_m: f64,
    /// Approximated enter and exit, seconds, per [`Bound`].
    pub enter_a: Pair,
    pub exit_a: Pair,
}

/// Receives compensated records, in processing order (per rank: program order).
pub trait Sink {
    /// One record is approximated.
    fn record(&mut self, c: &Compensated<'_>);
}

/// A sink that keeps nothing.
#[derive(Debug, Default)]
pub struct NoSink;

impl Sink for NoSink {
    fn record(&mut self, _: &Compensated<'_>) {}
}

/// A sink that keeps every record (tests and small traces).
#[derive(Debug, Default, Clone)]
pub struct CollectSink {
    /// `(rank, index, keyword, enter_m, exit_m, enter_a, exit_a)` per record, processing order.
    pub records: Vec<CollectedRecord>,
}

/// An owned copy of a [`Compensated`] record.
#[derive(Debug, Clone, PartialEq)]
pub struct CollectedRecord {
    pub rank: Rank,
    pub index: u64,
    pub kind: RecordKind,
    pub enter_m: f64,
    pub exit_m: f64,
    pub enter_a: Pair,
    pub exit_a: Pair,
}

impl Sink for CollectSink {
    fn record(&mut self, c: &Compensated<'_>) {
        self.records.push(CollectedRecord {
            rank: c.rank,
            index: c.index,
            kind: c.kind.clone(),
            enter_m: c.enter_m,
            exit_m: c.exit_m,
            enter_a: c.enter_a,
            exit_a: c.exit_a,
        });
    }
}

impl CollectSink {
    /// The record `index` of `rank`.
    pub fn get(&self, rank: Rank, index: u64) -> Option<&CollectedRecord> {
        self.records
            .iter()
            .find(|r| r.rank == rank && r.index == index)
    }
}

/// Per-rank account of a compensation. Times in seconds; `_a` fields per [`Bound`].
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RankAccount {
    /// Records processed.
    pub records: u64,
    /// Measured time of the first enter (0 when the rank has no record).
    pub first_enter_m: f64,
    /// Measured and approximated time of the last exit.
    pub last_exit_m: f64,
    pub last_exit_a: Pair,
    /// Late-sender waiting time in receives and probes: from entering until the matching send
    /// started, or until the receive ended if earlier (KOJAK's Late Sender pattern, `004_*` §5).
    pub late_sender_m: f64,
    pub late_sender_a: Pair,
    /// Waiting time in n-to-n collectives: from entering until the last member entered
    /// (KOJAK's Wait at N x N).
    pub wait_nxn_m: f64,
    pub wait_nxn_a: Pair,
}

/// Outcome of a compensation.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Summary {
    /// One account per rank.
    pub ranks: Vec<RankAccount>,
    /// Earliest measured first enter over the ranks, seconds (the origin of the totals).
    pub start_m: f64,
    /// Measured total time: latest last exit minus earliest first enter, seconds.
    pub total_m: f64,
    /// Approximated total time per bound, same definition, seconds.
    pub total_a: Pair,
    /// Point-to-point messages by case, per bound: `[bound][M1A1, M1A2, M2]`.
    pub cases: [[u64; 3]; 2],
    /// Messages whose measured receive ended before their send started (skewed clocks).
    pub clock_violations: u64,
    /// Messages sent and never received.
    pub unreceived: u64,
    /// Largest number of queued messages plus open collectives at any time.
    pub max_window: usize,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct MsgKey {
    src: Rank,
    dst: Rank,
    comm: usize,
    tag: i32,
}

#[derive(Debug, Clone, Copy)]
struct Sent {
    /// The send's measured enter, seconds.
    enter_send_m: f64,
    /// The send event: measured enter plus the sender's enter overhead, seconds.
    send_m: f64,
    exit_send_m: f64,
    send_a: Pair,
}

struct Instance {
    op: CollectiveOp,
    root: Option<Rank>,
    first: (Rank, u64),
    members: Vec<Option<Member>>,
    arrived: usize,
    finished: usize,
    root_done: bool,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Status {
    Ready,
    WaitMsg(MsgKey),
    WaitColl(usize, u64),
    Done,
}

struct RankState<S> {
    stream: S,
    next: Option<TimedRecord>,
    /// A record whose enter is approximated and whose exit waits (receive or collective).
    parked: Option<(TimedRecord, Pair)>,
    prev: Option<(f64, Pair)>,
    /// Local communicator id → global communicator index.
    comms: BTreeMap<u32, usize>,
    /// Occurrences of each member list among this rank's `comm_def`s.
    occurrences: BTreeMap<Vec<Rank>, u32>,
    /// Collectives started on each global communicator.
    coll_seq: BTreeMap<usize, u64>,
    index: u64,
    status: Status,
    acc: RankAccount,
}

/// A heap key: a time ordered with `total_cmp`.
#[derive(Debug, Clone, Copy)]
struct Key(f64);
impl PartialEq for Key {
    fn eq(&self, o: &Self) -> bool {
        self.cmp(o).is_eq()
    }
}
impl Eq for Key {}
impl PartialOrd for Key {
    fn partial_cmp(&self, o: &Self) -> Option<std::cmp::Ordering> {
        Some(self.cmp(o))
    }
}
impl Ord for Key {
    fn cmp(&self, o: &Self) -> std::cmp::Ordering {
        self.0.total_cmp(&o.0)
    }
}

/// The streaming compensation of one trace. Build with [`Engine::new`], run with
/// [`Engine::run`].
pub struct Engine<'p, S> {
    params: &'p Params,
    ranks: Vec<RankState<S>>,
    comm_members: Vec<Vec<Rank>>,
    comm_index: BTreeMap<(Vec<Rank>, u32), usize>,
    queues: BTreeMap<MsgKey, VecDeque<Sent>>,
    queued: usize,
    instances: BTreeMap<(usize, u64), Instance>,
    heap: BinaryHeap<Reverse<(Key, Rank)>>,
    summary: Summary,
}

impl<'p, S: TimedStream> Engine<'p, S> {
    /// An engine over one stream per rank (stream i is world rank i).
    pub fn new(streams: Vec<S>, params: &'p Params) -> Self {
        let n = streams.len();
        let ranks = streams
            .into_iter()
            .map(|stream| RankState {
                stream,
                next: None,
                parked: None,
                prev: None,
                comms: BTreeMap::new(),
                occurrences: BTreeMap::new(),
                coll_seq: BTreeMap::new(),
                index: 0,
                status: Status::Ready,
                acc: RankAccount::default(),
            })
            .collect();
        let world: Vec<Rank> = (0..n as Rank).collect();
        Engine {
            params,
            ranks,
            comm_members: vec![world],
            comm_index: BTreeMap::new(),
            queues: BTreeMap::new(),
            queued: 0,
            instances: BTreeMap::new(),
            heap: BinaryHeap::new(),
            summary: Summary::default(),
        }
    }

    /// Approximates every record, handing each to `sink`.
    ///
    /// # Errors
    /// Read and format errors of the streams; [`ErrorKind::Unmatched`] when records cannot be
    /// ordered (a receive without send, a collective some member never enters);
    /// [`ErrorKind::Inconsistent`] when members disagree on a collective.
    pub fn run(mut self, sink: &mut dyn Sink) -> Result<Summary, Error> {
        for r in 0..self.ranks.len() {
            self.load(r as Rank)?;
        }
        while let Some(Reverse((_, r))) = self.heap.pop() {
            self.step(r, sink)?;
            let window = self.queued + self.instances.len();
            self.summary.max_window = self.summary.max_window.max(window);
        }
        if self.ranks.iter().any(|s| s.status != Status::Done) {
            return Err(Error::bare(ErrorKind::Unmatched(self.describe_stuck())));
        }
        self.summary.unreceived = self.queued as u64;
        let mut s = self.summary;
        s.ranks = self.ranks.into_iter().map(|st| st.acc).collect();
        let active: Vec<&RankAccount> = s.ranks.iter().filter(|a| a.records > 0).collect();
        if !active.is_empty() {
            let start = active
                .iter()
                .map(|a| a.first_enter_m)
                .fold(f64::INFINITY, f64::min);
            s.start_m = start;
            s.total_m = active.iter().map(|a| a.last_exit_m).fold(0.0, f64::max) - start;
            for b in Bound::ALL {
                s.total_a[b as usize] = active
                    .iter()
                    .map(|a| a.last_exit_a[b as usize])
                    .fold(0.0, f64::max)
                    - start;
            }
        }
        Ok(s)
    }

    /// Reads rank `r`'s next record (handling `comm_def`s) and queues the rank, or marks it done.
    fn load(&mut self, r: Rank) -> Result<(), Error> {
        loop {
            let item = self.ranks[r as usize].stream.next_item()?;
            match item {
                None => {
                    self.ranks[r as usize].status = Status::Done;
                    return Ok(());
                }
                Some(TimedItem::CommDef { id, members }) => {
                    let st = &mut self.ranks[r as usize];
                    let occ = st.occurrences.entry(members.clone()).or_insert(0);
                    let key = (members.clone(), *occ);
                    *occ += 1;
                    let next = self.comm_members.len();
                    let g = *self.comm_index.entry(key).or_insert(next);
                    if g == next {
                        self.comm_members.push(members);
                    }
                    st.comms.insert(id, g);
                }
                Some(TimedItem::Record(rec)) => {
                    let st = &mut self.ranks[r as usize];
                    st.status = Status::Ready;
                    self.heap.push(Reverse((Key(rec.enter_secs), r)));
                    st.next = Some(rec);
                    return Ok(());
                }
            }
        }
    }

    fn origin(&self, r: Rank, line: u64) -> String {
        format!(
            "{}:{line}",
            self.ranks[r as usize].stream.origin().display()
        )
    }

    fn global_comm(&self, r: Rank, rec: &TimedRecord, comm: u32) -> Result<usize, Error> {
        if comm == 0 {
            return Ok(0);
        }
        self.ranks[r as usize]
            .comms
            .get(&comm)
            .copied()
            .ok_or_else(|| {
                Error::new(
                    self.ranks[r as usize].stream.origin(),
                    rec.line,
                    ErrorKind::Malformed(format!(
                        "communicator {comm} is used before its comm_def"
                    )),
                )
            })
    }

    /// Eq. 1 for rank `r`'s next event, measured at `t_m`: the approximated time per bound.
    fn advance(&mut self, r: Rank, t_m: f64) -> Pair {
        let o = self.params.overhead_of(r);
        let st = &mut self.ranks[r as usize];
        let t_a = match st.prev {
            None => [t_m; 2],
            Some((prev_m, prev_a)) => {
                let gap = (t_m - prev_m - o).max(0.0);
                [prev_a[0] + gap, prev_a[1] + gap]
            }
        };
        st.prev = Some((t_m, t_a));
        t_a
    }

    fn step(&mut self, r: Rank, sink: &mut dyn Sink) -> Result<(), Error> {
        let rec = self.ranks[r as usize]
            .next
            .take()
            .expect("a queued rank has a look-ahead record");
        let enter_a = self.advance(r, rec.enter_secs);
        match rec.kind {
            RecordKind::Region { .. } => {
                let exit_a = self.advance(r, rec.exit_secs);
                self.finish(r, &rec, enter_a, exit_a, sink)
            }
            RecordKind::Send { dst, tag, comm, .. } => {
                let comm = self.global_comm(r, &rec, comm)?;
                let key = MsgKey {
                    src: r,
                    dst,
                    comm,
                    tag,
                };
                let o = self.params.overhead_of(r);
                self.queues.entry(key).or_default().push_back(Sent {
                    enter_send_m: rec.enter_secs,
                    send_m: rec.enter_secs + o,
                    exit_send_m: rec.exit_secs,
                    send_a: enter_a,
                });
                self.queued += 1;
                let exit_a = self.advance(r, rec.exit_secs);
                self.finish(r, &rec, enter_a, exit_a, sink)?;
                if self.ranks[dst as usize].status == Status::WaitMsg(key) {
                    self.complete_recv(dst, key, sink)?;
                }
                Ok(())
            }
            RecordKind::Recv { src, tag, comm, .. } | RecordKind::Probe { src, tag, comm } => {
                let comm = self.global_comm(r, &rec, comm)?;
                let key = MsgKey {
                    src,
                    dst: r,
                    comm,
                    tag,
                };
                self.ranks[r as usize].parked = Some((rec, enter_a));
                self.ranks[r as usize].status = Status::WaitMsg(key);
                if self.queues.contains_key(&key) {
                    self.complete_recv(r, key, sink)?;
                }
                Ok(())
            }
            RecordKind::Collective { op, root, comm, .. } => {
                let comm = self.global_comm(r, &rec, comm)?;
                self.arrive(r, rec, enter_a, op, root, comm, sink)
            }
        }
    }

    fn complete_recv(&mut self, r: Rank, key: MsgKey, sink: &mut dyn Sink) -> Result<(), Error> {
        let (rec, enter_a) = self.ranks[r as usize]
            .parked
            .take()
            .expect("a rank waiting for a message has a parked receive or probe");
        // A probe sees the message and leaves it queued for the receive that follows.
        let (bytes, consume) = match rec.kind {
            RecordKind::Recv { bytes, .. } => (bytes, true),
            RecordKind::Probe { .. } => (0, false),
            _ => unreachable!("parked record of a message wait is a receive or a probe"),
        };
        let q = self.queues.get_mut(&key).expect("queue exists");
        let sent = *q.front().expect("queues are never left empty");
        if consume {
            q.pop_front();
            if q.is_empty() {
                self.queues.remove(&key);
            }
            self.queued -= 1;
        }
        let m = MeasuredMessage {
            send_secs: sent.send_m,
            exit_send_secs: sent.exit_send_m,
            enter_recv_secs: rec.enter_secs,
            recv_secs: rec.exit_secs,
        };
        if m.recv_secs < m.send_secs {
            self.summary.clock_violations += 1;
        }
        let copy = self.params.copy.copy_secs(bytes);
        let mut exit_a = [0.0; 2];
        for b in Bound::ALL {
            let i = b as usize;
            let (t, case) = approx_recv(&m, sent.send_a[i], enter_a[i], copy, b);
            exit_a[i] = t;
            let c = match case {
                Case::M1A1 => 0,
                Case::M1A2 => 1,
                Case::M2 => 2,
            };
            if consume {
                self.summary.cases[i][c] += 1;
            }
        }
        let acc = &mut self.ranks[r as usize].acc;
        acc.late_sender_m += late_sender(rec.enter_secs, rec.exit_secs, sent.enter_send_m);
        for (i, ls) in acc.late_sender_a.iter_mut().enumerate() {
            *ls += late_sender(enter_a[i], exit_a[i], sent.send_a[i]);
        }
        self.ranks[r as usize].prev = Some((rec.exit_secs, exit_a));
        self.finish(r, &rec, enter_a, exit_a, sink)
    }

    #[allow(clippy::too_many_arguments)]
    fn arrive(
        &mut self,
        r: Rank,
        rec: TimedRecord,
        enter_a: Pair,
        op: CollectiveOp,
        root: Option<Rank>,
        comm: usize,
        sink: &mut dyn Sink,
    ) -> Result<(), Error> {
        let members = &self.comm_members[comm];
        let size = members.len();
        let Some(pos) = members.iter().position(|&m| m == r) else {
            return Err(Error::new(
                self.ranks[r as usize].stream.origin(),
                rec.line,
                ErrorKind::Inconsistent(format!(
                    "rank {r} is not a member of the collective's communicator"
                )),
            ));
        };
        if let Some(root) = root {
            if !members.contains(&root) {
                return Err(Error::new(
                    self.ranks[r as usize].stream.origin(),
                    rec.line,
                    ErrorKind::Inconsistent(format!(
                        "root {root} is not a member of the collective's communicator"
                    )),
                ));
            }
        }
        let seq = {
            let s = self.ranks[r as usize].coll_seq.entry(comm).or_insert(0);
            *s += 1;
            *s - 1
        };
        let key = (comm, seq);
        let line = rec.line;
        let inst = self.instances.entry(key).or_insert_with(|| Instance {
            op,
            root,
            first: (r, line),
            members: vec![None; size],
            arrived: 0,
            finished: 0,
            root_done: false,
        });
        if inst.op != op || inst.root != root {
            let (fr, fl) = inst.first;
            let (iop, iroot) = (inst.op, inst.root);
            return Err(Error::new(
                self.ranks[r as usize].stream.origin(),
                line,
                ErrorKind::Inconsistent(format!(
                    "collective #{seq} on this communicator is {} with root {} here but {} with root {} at {}",
                    op.keyword(),
                    root.map_or("none".to_string(), |r| r.to_string()),
                    iop.keyword(),
                    iroot.map_or("none".to_string(), |r| r.to_string()),
                    self.origin(fr, fl)
                )),
            ));
        }
        let start_m = rec.enter_secs + self.params.overhead_of(r);
        let inst = self.instances.get_mut(&key).expect("instance exists");
        inst.members[pos] = Some(Member {
            rank: r,
            enter_m: rec.enter_secs,
            start_m,
            exit_m: rec.exit_secs,
            enter_a,
            bytes: match rec.kind {
                RecordKind::Collective { bytes, .. } => bytes,
                _ => 0,
            },
        });
        inst.arrived += 1;
        let st = &mut self.ranks[r as usize];
        st.parked = Some((rec, enter_a));
        st.status = Status::WaitColl(comm, seq);
        self.progress_collective(key, sink)
    }

    /// Completes every member of collective `key` whose dependencies are now met.
    fn progress_collective(&mut self, key: (usize, u64), sink: &mut dyn Sink) -> Result<(), Error> {
        let inst = self.instances.get(&key).expect("instance exists");
        let size = inst.members.len();
        let mut exits: Vec<(Rank, Pair, Pair)> = Vec::new(); // (rank, exit_a, wait_nxn_a)
        match inst.op.shape() {
            CollectiveShape::NToN => {
                if inst.arrived == size {
                    let members: Vec<Member> =
                        inst.members.iter().map(|m| m.expect("arrived")).collect();
                    let out = collective::n_to_n(&members, self.params.n_to_n);
                    let latest_m = members.iter().map(|m| m.enter_m).fold(f64::MIN, f64::max);
                    for (m, exit_a) in members.iter().zip(out.exits) {
                        let acc = &mut self.ranks[m.rank as usize].acc;
                        acc.wait_nxn_m += (latest_m - m.enter_m).max(0.0);
                        let w = [0, 1].map(|i| (out.latest_enter_a[i] - m.enter_a[i]).max(0.0));
                        exits.push((m.rank, exit_a, w));
                    }
                }
            }
            CollectiveShape::OneToN => {
                let root = inst.root.expect("rooted");
                let root_member = inst
                    .members
                    .iter()
                    .flatten()
                    .find(|m| m.rank == root)
                    .copied();
                if let Some(root_m) = root_member {
                    if !inst.root_done {
                        exits.push((root, self.independent_exit(&root_m), [0.0; 2]));
                    }
                    for m in inst.members.iter().flatten() {
                        if m.rank != root
                            && self.ranks[m.rank as usize].status == Status::WaitColl(key.0, key.1)
                        {
                            let copy = self.params.copy.copy_secs(m.bytes);
                            exits.push((
                                m.rank,
                                collective::one_to_n_receiver(&root_m, m, copy),
                                [0.0; 2],
                            ));
                        }
                    }
                }
            }
            CollectiveShape::NToOne => {
                let root = inst.root.expect("rooted");
                for m in inst.members.iter().flatten() {
                    if m.rank != root
                        && self.ranks[m.rank as usize].status == Status::WaitColl(key.0, key.1)
                    {
                        exits.push((m.rank, self.independent_exit(m), [0.0; 2]));
                    }
                }
                if inst.arrived == size {
                    let members: Vec<Member> =
                        inst.members.iter().map(|m| m.expect("arrived")).collect();
                    let root_m = *members
                        .iter()
                        .find(|m| m.rank == root)
                        .expect("root is a member");
                    let exit_a = if size == 1 {
                        self.independent_exit(&root_m)
                    } else {
                        let copy = |b: u64| self.params.copy.copy_secs(b);
                        collective::n_to_one_root(&root_m, &members, copy)
                    };
                    exits.push((root, exit_a, [0.0; 2]));
                }
            }
        }
        for (rank, exit_a, w) in exits {
            let inst = self.instances.get_mut(&key).expect("instance exists");
            if Some(rank) == inst.root {
                inst.root_done = true;
            }
            inst.finished += 1;
            let st = &mut self.ranks[rank as usize];
            let (rec, enter_a) = st
                .parked
                .take()
                .expect("a member waiting in a collective is parked");
            st.prev = Some((rec.exit_secs, exit_a));
            for (i, wi) in w.iter().enumerate() {
                st.acc.wait_nxn_a[i] += wi;
            }
            self.finish(rank, &rec, enter_a, exit_a, sink)?;
        }
        let inst = self.instances.get(&key).expect("instance exists");
        if inst.finished == inst.members.len() {
            self.instances.remove(&key);
        }
        Ok(())
    }

    /// Exit of a member that depends on no other member: eq. 1 from its own enter.
    fn independent_exit(&self, m: &Member) -> Pair {
        let gap = (m.exit_m - m.enter_m - self.params.overhead_of(m.rank)).max(0.0);
        [m.enter_a[0] + gap, m.enter_a[1] + gap]
    }

    /// Emits rank `r`'s record, updates its account and loads its next record.
    fn finish(
        &mut self,
        r: Rank,
        rec: &TimedRecord,
        enter_a: Pair,
        exit_a: Pair,
        sink: &mut dyn Sink,
    ) -> Result<(), Error> {
        let st = &mut self.ranks[r as usize];
        sink.record(&Compensated {
            rank: r,
            index: st.index,
            line: rec.line,
            kind: &rec.kind,
            enter_m: rec.enter_secs,
            exit_m: rec.exit_secs,
            enter_a,
            exit_a,
        });
        st.index += 1;
        let acc = &mut st.acc;
        if acc.records == 0 {
            acc.first_enter_m = rec.enter_secs;
        }
        acc.records += 1;
        acc.last_exit_m = rec.exit_secs;
        acc.last_exit_a = exit_a;
        self.load(r)
    }

    fn describe_stuck(&self) -> String {
        let mut parts = Vec::new();
        for (r, st) in self.ranks.iter().enumerate() {
            let line = st.parked.as_ref().map_or(0, |p| p.0.line);
            let at = self.origin(r as Rank, line);
            match st.status {
                Status::WaitMsg(k) => parts.push(format!(
                    "rank {r} waits at {at} for a message from rank {} with tag {} that is never sent",
                    k.src, k.tag
                )),
                Status::WaitColl(c, seq) => {
                    let inst = &self.instances[&(c, seq)];
                    let missing: Vec<String> = self.comm_members[c]
                        .iter()
                        .zip(&inst.members)
                        .filter(|(_, m)| m.is_none())
                        .map(|(w, _)| w.to_string())
                        .collect();
                    parts.push(format!(
                        "rank {r} waits at {at} in {} #{seq} for ranks {} that never enter it",
                        inst.op.keyword(),
                        missing.join(",")
                    ));
                }
                Status::Ready | Status::Done => {}
            }
        }
        parts.join("; ")
    }
}

fn late_sender(enter_recv: f64, exit_recv: f64, send: f64) -> f64 {
    (send.min(exit_recv) - enter_recv).max(0.0)
}

/// Compensates the trace given as one stream per rank (convenience over [`Engine`]).
///
/// # Errors
/// See [`Engine::run`].
pub fn compensate<S: TimedStream>(
    streams: Vec<S>,
    params: &Params,
    sink: &mut dyn Sink,
) -> Result<Summary, Error> {
    Engine::new(streams, params).run(sink)
}
