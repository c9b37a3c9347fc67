//! One rank's event flow graph (`002_*` §2): nodes are event signatures, each node's exits are
//! the successors of its visits in order, as runs.
//!
//! A node is a call signature ([`timeless_grammar::signature`]: the action with peers relative
//! to the rank and without its compute volume), so SPMD ranks build the same nodes. Its exits
//! are a *multidigraph* edge list with sequence numbers (§2.1): the successor of each visit, in
//! visit order, run-length coded as [`Run`]s; the sequence number of an edge is its index in
//! that list. A node with one successor has one run; a branch node whose taken arm changes has
//! one run per change, which keeps the exact order of events (Fig. 3). Compute and sleep volumes
//! are not in signatures: each node keeps the volumes of its visits in order.
//!
//! Example: `barrier, send, barrier, recv, barrier, send, finalize` (Fig. 3 without
//! `comm_rank`): nodes barrier (0), send (1), recv (2), finalize (3); barrier's exits are the
//! runs (1, 1), (2, 1), (1, 1) — sequence numbers 1..3 —, send's (0, 1), (3, 1), recv's (0, 1). Walking from the entry node and taking each node's next exit gives the events back.

/// A node's index in its graph.
pub type NodeId = u32;

/// `count` consecutive visits of a node leaving to `to`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct Run {
    /// The successor.
    pub to: NodeId,
    /// How many consecutive visits go there (>= 1).
    pub count: u64,
}

/// One rank's graph: node signatures, entry, exits and volumes.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct RankGraph {
    /// Each node's call signature bytes.
    pub signatures: Vec<Vec<u8>>,
    /// The first event's node; `None` for an empty trace.
    pub entry: Option<NodeId>,
    /// Each node's exits in sequence order.
    pub exits: Vec<Vec<Run>>,
    /// Each node's visits.
    pub visits: Vec<u64>,
    /// Each node's compute/sleep volumes in visit order (empty for other actions).
    pub volumes: Vec<Vec<f64>>,
}

impl RankGraph {
    /// The graph of a sequence of (signature, volume) events.
    pub fn build<'a>(events: impl IntoIterator<Item = (&'a [u8], Option<f64>)>) -> RankGraph {
        let mut b = GraphBuilder::default();
        for (sig, vol) in events {
            let id = b.node(sig);
            b.visit(id, vol);
        }
        b.finish()
    }

    /// Events (edges traversed + 1).
    pub fn events(&self) -> u64 {
        self.visits.iter().sum()
    }

    /// The number of times the edge `from -> to` is taken.
    pub fn edge_count(&self, from: NodeId, to: NodeId) -> u64 {
        self.exits[from as usize]
            .iter()
            .filter(|r| r.to == to)
            .map(|r| r.count)
            .sum()
    }

    /// The events back, in order: (node, volume of that visit).
    pub fn walk(&self) -> Walk<'_> {
        Walk {
            g: self,
            at: self.entry,
            run: vec![(0, 0); self.signatures.len()],
            vol: vec![0; self.signatures.len()],
        }
    }
}

/// Builds a graph one event at a time (a tracer feeding its records while the program runs).
#[derive(Debug, Default)]
pub struct GraphBuilder {
    g: RankGraph,
    index: std::collections::HashMap<Vec<u8>, NodeId>,
    prev: Option<NodeId>,
}

impl GraphBuilder {
    /// The node of signature `sig`, created at its first sight.
    pub fn node(&mut self, sig: &[u8]) -> NodeId {
        if let Some(&id) = self.index.get(sig) {
            return id;
        }
        let g = &mut self.g;
        let id = g.signatures.len() as NodeId;
        self.index.insert(sig.to_vec(), id);
        g.signatures.push(sig.to_vec());
        g.exits.push(Vec::new());
        g.visits.push(0);
        g.volumes.push(Vec::new());
        id
    }

    /// The next event is a visit of node `id` (from [`GraphBuilder::node`]) with `volume`.
    pub fn visit(&mut self, id: NodeId, volume: Option<f64>) {
        let g = &mut self.g;
        g.visits[id as usize] += 1;
        if let Some(v) = volume {
            g.volumes[id as usize].push(v);
        }
        match self.prev {
            None => g.entry = Some(id),
            Some(p) => {
                let exits = &mut g.exits[p as usize];
                match exits.last_mut() {
                    Some(r) if r.to == id => r.count += 1,
                    _ => exits.push(Run { to: id, count: 1 }),
                }
            }
        }
        self.prev = Some(id);
    }

    /// The graph so far.
    pub fn finish(self) -> RankGraph {
        self.g
    }
}

/// Iterator of [`RankGraph::walk`]: each node's cursor (run index, visits used in that run).
pub struct Walk<'a> {
    g: &'a RankGraph,
    at: Option<NodeId>,
    run: Vec<(usize, u64)>,
    vol: Vec<usize>,
}

impl Iterator for Walk<'_> {
    type Item = (NodeId, Option<f64>);

    fn next(&mut self) -> Option<Self::Item> {
        let n = self.at? as usize;
        let v = &mut self.vol[n];
        let volume = self.g.volumes[n].get(*v).copied();
        if volume.is_some() {
            *v += 1;
        }
        // Leave by the next exit, if any is left.
        let (ri, used) = &mut self.run[n];
        self.at = match self.g.exits[n].get(*ri) {
            Some(r) => {
                *used += 1;
                let to = r.to;
                if *used == r.count {
                    *ri += 1;
                    *used = 0;
                }
                Some(to)
            }
            None => None,
        };
        Some((n as NodeId, volume))
    }
}
