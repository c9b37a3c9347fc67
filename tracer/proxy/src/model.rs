//! What a proxy is generated from: the trace's distinct MPI calls (terminals), each rank's call
//! grammar, and the computation between calls attached to the grammar's sites.
//!
//! Each rank's non-compute actions become terminals keyed by their call signature
//! (`timeless_grammar::signature::split`: peers relative to the caller, so SPMD ranks share
//! terminals and code). The terminal sequence goes through Sequitur: loops become repetition
//! exponents, and identical rank grammars are stored once.
//!
//! Computation does not enter the grammar (its volumes are measured, noisy numbers that would
//! break every repetition). A *site* is one terminal occurrence in a rule body; every execution
//! of that occurrence is preceded by the flops computed since the previous call, and the proxy
//! computes the site's mean. A site inside a loop of 100 iterations preceded by 1e6, 1.1e6, ...
//! flops computes their mean each time, so the rank's total is kept exactly and the size of the
//! proxy follows the grammar, not the trace. Ranks with the same grammar and the same site
//! means (to `precision`, relative) form one group and share their code.

use rustc_hash::FxHashMap as HashMap;
use timeless_grammar::signature::split;
use timeless_grammar::{CallSignatureTable, Grammar, Sequitur, Symbol};
use timeless_trace::{Action, CommId, Rank, TraceSet, WORLD};

use crate::error::ProxyError;

/// One distinct MPI call of the trace, as first seen.
#[derive(Debug, Clone, PartialEq)]
pub struct Terminal {
    /// The action as executed by `first_rank` (peers are turned back into displacements from
    /// it when code is emitted).
    pub action: Action,
    /// Its communicator id (the rank's own; 0 = `MPI_COMM_WORLD`).
    pub comm: CommId,
    /// The rank the action was first read from.
    pub first_rank: Rank,
    /// Whether that rank's `init` made `MPI_DOUBLE` the default datatype.
    pub default_double: bool,
    /// An `isend`/`irecv` whose request no `wait`, `test` or `waitall` of the trace completes
    /// (the program freed it with `MPI_Request_free`): the proxy frees it too.
    pub freed: bool,
    /// A `test` that found its request complete: the tracer writes such a test immediately
    /// followed by the request's `wait`. The proxy completes the request there; tests that
    /// failed are not repeated (their outcome is a matter of timing).
    pub test_succeeded: bool,
}

/// What the proxy needs to know about a rank's requests before it emits their calls, gathered
/// in a first pass over the rank's events (one byte per event, plus the pending requests).
///
/// * `freed[i]`: event i is an `isend`/`irecv` whose request nothing in the trace completes.
///   Requests are paired with `wait` by `(src, dst, tag)`, oldest first, as SimGrid's replay
///   pairs them; `wait` with no key takes the oldest pending request; `waitall` completes every
///   pending request; a `test` completes nothing by itself (the tracer writes a successful
///   test's `wait` right after it).
/// * `test_succeeded[i]`: event i is a `test` immediately followed by the `wait` of its key on
///   the same communicator, which is how the tracer writes a test that found its request done.
#[derive(Debug, Default)]
struct RequestFlags {
    rank: Rank,
    posted: Vec<bool>,
    done: Vec<bool>,
    test_succeeded: Vec<bool>,
    pending: HashMap<(Rank, Rank, i32), std::collections::VecDeque<usize>>,
    order: std::collections::VecDeque<usize>,
    last: Option<(timeless_trace::RequestKey, CommId)>,
}

impl RequestFlags {
    fn new(rank: Rank) -> Self {
        RequestFlags {
            rank,
            ..RequestFlags::default()
        }
    }

    /// Event `i` (the next one) is `action` on communicator `comm`.
    fn observe(&mut self, action: &Action, comm: CommId) {
        use timeless_trace::RequestKey;
        let i = self.posted.len();
        self.posted.push(false);
        self.done.push(false);
        self.test_succeeded.push(false);
        if let (Some((k, c)), Action::Wait(w)) = (self.last, action) {
            if k == *w && c == comm {
                self.test_succeeded[i - 1] = true;
            }
        }
        self.last = match action {
            Action::Test(k) => Some((*k, comm)),
            _ => None,
        };
        let key = match *action {
            Action::Send {
                dst,
                tag,
                blocking: false,
                ..
            } => Some((self.rank, dst, tag)),
            Action::Recv {
                src,
                tag,
                blocking: false,
                ..
            } => Some((src, self.rank, tag)),
            _ => None,
        };
        if let Some(key) = key {
            self.posted[i] = true;
            self.pending.entry(key).or_default().push_back(i);
            self.order.push_back(i);
            return;
        }
        match *action {
            Action::Wait(RequestKey::Key { src, dst, tag }) => {
                if let Some(j) = self
                    .pending
                    .get_mut(&(src, dst, tag))
                    .and_then(std::collections::VecDeque::pop_front)
                {
                    self.done[j] = true;
                }
            }
            Action::Wait(RequestKey::Oldest) => {
                while self.order.front().is_some_and(|&j| self.done[j]) {
                    self.order.pop_front();
                }
                if let Some(j) = self.order.pop_front() {
                    self.done[j] = true;
                }
            }
            Action::WaitAll => {
                for &j in &self.order {
                    self.done[j] = true;
                }
                self.order.clear();
                self.pending.clear();
            }
            _ => {}
        }
    }

    /// Per event: (freed, test succeeded).
    fn finish(self) -> Vec<(bool, bool)> {
        self.posted
            .iter()
            .zip(&self.done)
            .zip(&self.test_succeeded)
            .map(|((&p, &d), &t)| (p && !d, t))
            .collect()
    }
}

/// Ranks sharing one grammar and the same computation per site.
#[derive(Debug, Clone, PartialEq)]
pub struct Group {
    /// Index into [`Model::grammars`].
    pub grammar: u32,
    /// Its ranks, increasing.
    pub ranks: Vec<Rank>,
    /// Seconds of computation before each site (index into the grammar's flat symbol array)
    /// at the rank's reference speed, the mean over the site's executions and the group's
    /// ranks; 0 for rule symbols.
    pub site_secs: Vec<f64>,
    /// Seconds of computation after the last call.
    pub tail_secs: f64,
}

impl Group {
    /// Seconds of computation one of the group's ranks does over the whole run (its grammar
    /// `g`'s expansion): every site's mean times the site's executions, plus the tail. Each
    /// rule's total is computed once, after the rules it uses. O(symbols of `g`).
    pub fn total_secs(&self, g: &Grammar) -> f64 {
        let n = g.rule_count();
        let mut offset = Vec::with_capacity(n);
        let mut o = 0;
        for r in 0..n as u32 {
            offset.push(o);
            o += g.body(r).len();
        }
        let mut total: Vec<Option<f64>> = vec![None; n];
        let mut stack = vec![0u32];
        while let Some(&r) = stack.last() {
            if total[r as usize].is_some() {
                stack.pop();
                continue;
            }
            let pending: Vec<u32> = g
                .body(r)
                .iter()
                .filter_map(|&(s, _)| match s {
                    Symbol::Rule(q) if total[q as usize].is_none() => Some(q),
                    _ => None,
                })
                .collect();
            if !pending.is_empty() {
                stack.extend(pending);
                continue;
            }
            let sum = g
                .body(r)
                .iter()
                .enumerate()
                .map(|(i, &(s, e))| {
                    let one = match s {
                        Symbol::Terminal(_) => self.site_secs[offset[r as usize] + i],
                        Symbol::Rule(q) => total[q as usize].unwrap_or(0.0),
                    };
                    one * e as f64
                })
                .sum();
            total[r as usize] = Some(sum);
            stack.pop();
        }
        total[0].unwrap_or(0.0) + self.tail_secs
    }
}

/// Everything a proxy program is generated from.
#[derive(Debug, Clone)]
pub struct Model {
    /// Size of `MPI_COMM_WORLD`.
    pub nranks: u32,
    /// Distinct calls, by terminal id.
    pub terminals: Vec<Terminal>,
    /// Distinct rank grammars (terminals are [`Model::terminals`] indices).
    pub grammars: Vec<Grammar>,
    /// Rank groups, each rank in exactly one.
    pub groups: Vec<Group>,
    /// Largest buffer any call needs, in bytes (before `--scale-bytes`).
    pub buffer_bytes: u64,
    /// Largest communicator id used.
    pub max_comm: CommId,
    /// Calls over all ranks.
    pub calls: u64,
    /// Seconds of computation over all ranks, at their reference speeds.
    pub compute_secs: f64,
}

/// Quantizes a duration on a log scale of ratio `1 + precision` (0 stays apart).
fn bucket(x: f64, precision: f64) -> i64 {
    if x <= 0.0 {
        i64::MIN
    } else {
        (x.ln() / precision.ln_1p()).round() as i64
    }
}

/// Calls `f(site)` for each terminal site of `g`'s expansion, in order. O(expansion).
pub fn for_each_site(g: &Grammar, mut f: impl FnMut(usize)) {
    let mut offset = Vec::with_capacity(g.rule_count());
    let mut o = 0;
    for r in 0..g.rule_count() as u32 {
        offset.push(o);
        o += g.body(r).len();
    }
    // (rule, position in body, repetitions left of the symbol at that position)
    let mut stack: Vec<(u32, usize, u64)> = Vec::new();
    if let Some(&(_, e)) = g.body(0).first() {
        stack.push((0, 0, e));
    }
    while let Some(top) = stack.last_mut() {
        let (r, pos, left) = *top;
        let body = g.body(r);
        if left == 0 {
            top.1 += 1;
            match body.get(top.1) {
                Some(&(_, e)) => top.2 = e,
                None => {
                    stack.pop();
                }
            }
            continue;
        }
        top.2 -= 1;
        match body[pos].0 {
            Symbol::Terminal(_) => f(offset[r as usize] + pos),
            Symbol::Rule(q) => {
                let first = g.body(q)[0].1;
                stack.push((q, 0, first));
            }
        }
    }
}

/// Bytes the largest buffer of `action` needs, with `size` ranks in its communicator and
/// `dt_bytes` resolving a datatype (its default included).
fn bytes_needed(
    action: &Action,
    size: u64,
    dt_bytes: impl Fn(Option<timeless_trace::Datatype>) -> u64,
) -> u64 {
    use timeless_trace::RecvCount;
    let sum = |v: &[u64]| v.iter().sum::<u64>();
    match action {
        Action::Send { count, dt, .. } => count * dt_bytes(*dt),
        Action::Recv {
            count: RecvCount::Count(c),
            dt,
            ..
        } => c * dt_bytes(*dt),
        Action::SendRecv {
            send_count,
            recv_count,
            send_dt,
            recv_dt,
            ..
        } => (send_count * dt_bytes(*send_dt)).max(recv_count * dt_bytes(*recv_dt)),
        Action::Bcast { count, dt, .. }
        | Action::Reduce { count, dt, .. }
        | Action::AllReduce { count, dt, .. }
        | Action::Scan { count, dt, .. }
        | Action::ExScan { count, dt, .. } => count * dt_bytes(*dt),
        Action::AllToAll {
            send_count,
            recv_count,
            send_dt,
            recv_dt,
        }
        | Action::Gather {
            send_count,
            recv_count,
            send_dt,
            recv_dt,
            ..
        }
        | Action::AllGather {
            send_count,
            recv_count,
            send_dt,
            recv_dt,
        }
        | Action::Scatter {
            send_count,
            recv_count,
            send_dt,
            recv_dt,
            ..
        } => (send_count * dt_bytes(*send_dt)).max(recv_count * dt_bytes(*recv_dt)) * size,
        Action::AllToAllV {
            send_counts,
            recv_counts,
            send_dt,
            recv_dt,
        } => (sum(send_counts) * dt_bytes(*send_dt)).max(sum(recv_counts) * dt_bytes(*recv_dt)),
        Action::GatherV {
            send_count,
            recv_counts,
            send_dt,
            recv_dt,
            ..
        }
        | Action::AllGatherV {
            send_count,
            recv_counts,
            send_dt,
            recv_dt,
            ..
        } => (send_count * dt_bytes(*send_dt)).max(sum(recv_counts) * dt_bytes(*recv_dt)),
        Action::ScatterV {
            send_counts,
            recv_count,
            send_dt,
            recv_dt,
            ..
        } => (sum(send_counts) * dt_bytes(*send_dt)).max(recv_count * dt_bytes(*recv_dt)),
        Action::ReduceScatter {
            recv_counts, dt, ..
        } => sum(recv_counts) * dt_bytes(*dt),
        _ => 0,
    }
}

/// Reads every rank of `traces` (`nranks` ranks) into a [`Model`]. `speeds_flops_per_sec`
/// gives each rank's reference speed (the speed its flops were recorded with; one value for
/// all ranks, or one per rank), which turns `compute` flops into seconds; `sleep` seconds count
/// as computation. `precision` (> 0) is the relative difference under which two ranks'
/// per-site computations count as equal.
///
/// # Errors
/// A trace error (file:line), or an action a proxy cannot reproduce.
pub fn build(
    traces: &dyn TraceSet,
    nranks: u32,
    speeds_flops_per_sec: &[f64],
    precision: f64,
) -> Result<Model, ProxyError> {
    let mut cst = CallSignatureTable::new();
    let mut terminals: Vec<Terminal> = Vec::new();
    let mut grammar_index: HashMap<Grammar, u32> = HashMap::default();
    let mut grammars = Vec::new();
    let mut groups: Vec<Group> = Vec::new();
    let mut group_index: HashMap<(u32, Vec<i64>), usize> = HashMap::default();
    let mut group_members: Vec<u32> = Vec::new();
    let mut buffer_bytes = 0u64;
    let mut max_comm = 0;
    let mut calls = 0u64;
    let mut total_secs = 0.0;
    for r in 0..nranks {
        let speed = speeds_flops_per_sec
            .get(r as usize)
            .or(speeds_flops_per_sec.first())
            .copied()
            .unwrap_or(1e9);
        let mut stream = traces.open_stream(r, nranks)?;
        let mut seq = Sequitur::new();
        let mut gaps: Vec<f64> = Vec::new();
        let mut gap = 0.0;
        let mut default_double = false;
        let mut comm_sizes: HashMap<CommId, u64> = HashMap::default();
        // First pass: which requests the trace never completes, which tests succeeded.
        let mut flags = RequestFlags::new(r);
        while let Some(ev) = stream.next_event()? {
            flags.observe(&ev.action, ev.comm);
        }
        let flags = flags.finish();
        let mut stream = traces.open_stream(r, nranks)?;
        let mut index = 0;
        while let Some(ev) = stream.next_event()? {
            let (freed, test_succeeded) = flags.get(index).copied().unwrap_or_default();
            index += 1;
            match &ev.action {
                Action::Compute { flops } => {
                    gap += flops / speed;
                    continue;
                }
                Action::Sleep { secs } => {
                    gap += secs;
                    continue;
                }
                Action::Location => continue,
                // A poll that failed in the trace is not repeated (crate docs): it stays out
                // of the grammar, so that polling loops whose failed tests vary in number
                // (SNAP: 10^4-10^6 per rank) do not make every iteration a distinct rule;
                // the computation before it joins the next call's.
                Action::Test(_) if !test_succeeded => {
                    calls += 1;
                    continue;
                }
                Action::Init { double_default } => default_double = *double_default,
                Action::CommDef { id, world_ranks } => {
                    comm_sizes.insert(*id, world_ranks.len() as u64);
                    max_comm = max_comm.max(*id);
                }
                _ => {}
            }
            max_comm = max_comm.max(ev.comm);
            let size = if ev.comm == WORLD {
                u64::from(nranks)
            } else {
                comm_sizes
                    .get(&ev.comm)
                    .copied()
                    .ok_or_else(|| ProxyError::Unsupported {
                        rank: r,
                        location: ev.location,
                        what: format!("communicator {} is used before its comm_def", ev.comm),
                    })?
            };
            let dt_bytes = |dt: Option<timeless_trace::Datatype>| {
                u64::from(
                    dt.unwrap_or(if default_double {
                        timeless_trace::Datatype::DOUBLE
                    } else {
                        timeless_trace::Datatype::BYTE
                    })
                    .size_bytes(),
                )
            };
            buffer_bytes = buffer_bytes.max(bytes_needed(&ev.action, size, dt_bytes));
            // Call sites are left out: the proxy has its own, and calls from two places are alike.
            let mut sig = split(&ev.action, r, ev.comm, None).signature;
            if freed || test_succeeded {
                sig.push(0xFF); // no signature ends so: a distinct terminal
            }
            let t = cst.intern(&sig);
            if t as usize == terminals.len() {
                terminals.push(Terminal {
                    action: ev.action.clone(),
                    comm: ev.comm,
                    first_rank: r,
                    default_double,
                    freed,
                    test_succeeded,
                });
            }
            seq.push(u64::from(t));
            gaps.push(gap);
            total_secs += gap;
            gap = 0.0;
            calls += 1;
        }
        total_secs += gap;
        let g = seq.finish();
        let mut sums = vec![0.0; g.symbol_count()];
        let mut counts = vec![0u64; g.symbol_count()];
        let mut k = 0;
        for_each_site(&g, |s| {
            sums[s] += gaps[k];
            counts[s] += 1;
            k += 1;
        });
        debug_assert_eq!(k, gaps.len());
        let means: Vec<f64> = sums
            .iter()
            .zip(&counts)
            .map(|(&s, &c)| if c == 0 { 0.0 } else { s / c as f64 })
            .collect();
        let next = grammars.len() as u32;
        let gi = *grammar_index.entry(g.clone()).or_insert(next);
        if gi == next {
            grammars.push(g);
        }
        let mut key: Vec<i64> = means.iter().map(|&m| bucket(m, precision)).collect();
        key.push(bucket(gap, precision));
        let gr = *group_index.entry((gi, key)).or_insert_with(|| {
            groups.push(Group {
                grammar: gi,
                ranks: Vec::new(),
                site_secs: vec![0.0; means.len()],
                tail_secs: 0.0,
            });
            group_members.push(0);
            groups.len() - 1
        });
        // Running mean over the group's ranks.
        let group = &mut groups[gr];
        group.ranks.push(r);
        group_members[gr] += 1;
        let n = f64::from(group_members[gr]);
        for (acc, m) in group.site_secs.iter_mut().zip(&means) {
            *acc += (m - *acc) / n;
        }
        group.tail_secs += (gap - group.tail_secs) / n;
    }
    Ok(Model {
        nranks,
        terminals,
        grammars,
        groups,
        buffer_bytes,
        max_comm,
        calls,
        compute_secs: total_secs,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sites_follow_the_expansion() {
        // a (b c)^3 d: terminal sites in the flat body array.
        let mut s = Sequitur::new();
        for t in [1u64, 2, 3, 2, 3, 2, 3, 4] {
            s.push(t);
        }
        let g = s.finish();
        let mut seen = Vec::new();
        for_each_site(&g, |site| seen.push(site));
        assert_eq!(seen.len(), 8);
        // The three b's share one site, as do the three c's.
        assert_eq!(seen[1], seen[3]);
        assert_eq!(seen[3], seen[5]);
        assert_eq!(seen[2], seen[6]);
        assert_ne!(seen[0], seen[1]);
        let syms = g.symbols();
        let term = |i: usize| match syms[seen[i]].0 {
            Symbol::Terminal(t) => t,
            Symbol::Rule(_) => panic!("a site is a terminal"),
        };
        assert_eq!(
            (0..8).map(term).collect::<Vec<_>>(),
            [1, 2, 3, 2, 3, 2, 3, 4]
        );
    }

    #[test]
    fn a_groups_total_counts_every_execution() {
        // a (b c)^3 d with 1 ms before a, 2 ms before each b, 3 ms before each c, 4 ms before
        // d and a 5 ms tail: 1 + 3 x (2 + 3) + 4 + 5 = 25 ms.
        let mut s = Sequitur::new();
        for t in [1u64, 2, 3, 2, 3, 2, 3, 4] {
            s.push(t);
        }
        let g = s.finish();
        let mut site_secs = vec![0.0; g.symbols().len()];
        for (i, &(sym, _)) in g.symbols().iter().enumerate() {
            if let Symbol::Terminal(t) = sym {
                site_secs[i] = t as f64 * 1e-3;
            }
        }
        let group = Group {
            grammar: 0,
            ranks: vec![0],
            site_secs,
            tail_secs: 5e-3,
        };
        assert!((group.total_secs(&g) - 25e-3).abs() < 1e-15);
    }

    #[test]
    fn unwaited_requests_are_freed() {
        use timeless_trace::{Event, RequestKey};
        let ev = |action| Event {
            action,
            comm: 0,
            location: 0,
            callsite: None,
        };
        let isend = |dst, tag| Action::Send {
            dst,
            tag,
            count: 1,
            dt: None,
            blocking: false,
        };
        let events = vec![
            ev(isend(1, 13)), // no keyed wait, but the waitall takes it (TI semantics)
            ev(isend(1, 30)),
            ev(Action::Wait(RequestKey::Key {
                src: 0,
                dst: 1,
                tag: 30,
            })),
            ev(isend(1, 30)), // completed by the waitall
            ev(Action::WaitAll),
            ev(isend(2, 7)), // left at the end: freed
        ];
        let mut flags = RequestFlags::new(0);
        for e in &events {
            flags.observe(&e.action, e.comm);
        }
        let freed: Vec<bool> = flags.finish().iter().map(|f| f.0).collect();
        assert_eq!(freed, [false, false, false, false, false, true]);

        // Two polls of a receive: the tracer writes the second, successful one right before the
        // request's wait; a wait after other calls does not make an earlier test succeed.
        let key = RequestKey::Key {
            src: 1,
            dst: 0,
            tag: 5,
        };
        let irecv = Action::Recv {
            src: 1,
            tag: 5,
            count: timeless_trace::RecvCount::Count(8),
            dt: None,
            blocking: false,
        };
        let events = [
            ev(irecv.clone()),
            ev(Action::Test(key)),
            ev(Action::Test(key)),
            ev(Action::Wait(key)),
            ev(irecv),
            ev(Action::Test(key)),
            ev(Action::Barrier),
            ev(Action::Wait(key)),
        ];
        let mut flags = RequestFlags::new(0);
        for e in &events {
            flags.observe(&e.action, e.comm);
        }
        let succeeded: Vec<bool> = flags.finish().iter().map(|f| f.1).collect();
        assert_eq!(
            succeeded,
            [false, false, true, false, false, false, false, false]
        );
    }

    #[test]
    fn buckets_part_by_precision() {
        // ln(1e6) / ln(1.01) = 1388.45 and ln(1.0003e6) / ln(1.01) = 1388.48: bucket 1388;
        // 1.02e6 gives 1390.44.
        assert_eq!(bucket(1e6, 0.01), bucket(1.0003e6, 0.01));
        assert_ne!(bucket(1e6, 0.01), bucket(1.02e6, 0.01));
        assert_ne!(bucket(0.0, 0.01), bucket(1e-300, 0.01));
    }
}
