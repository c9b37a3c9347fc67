//! `routing="Dijkstra"` and `"DijkstraCache"`: shortest paths by link count, per query.
//!
//! Source: `src/kernel/routing/DijkstraZone.cpp` (with `xbt/graph`).
//!
//! The graph has one node per vertex that appears in a declared route, created in the order the
//! routes mention them (source before destination), and one edge per declared route (plus the
//! reverse edge for symmetrical routes). Vertices mentioned by no route are not in the graph
//! and cannot be routed from or to. When sealing in base mode, each graph node without a
//! self-edge gets a `__loopback__` self-edge.
//!
//! A query runs Dijkstra from `src` with edge cost = number of links, using a min-heap of
//! `(cost as f64, node index)` pairs without decrease-key and **without skipping stale
//! entries**, all in `unsigned long` arithmetic. Two quirks of SimGrid 3.32 are reproduced on
//! purpose because they change routes:
//!
//! * unreachable nodes keep the cost `ULONG_MAX` and are still popped last; relaxing their
//!   edges computes `ULONG_MAX + c`, which wraps around to `c - 1`, so such a node can become a
//!   bogus predecessor (and the route then usually fails with "No route");
//! * predecessors start at node 0, so an unreachable destination walks back through node 0.
//!
//! The route is composed backwards from `dst`, each edge's links being inserted at the
//! **front of the whole accumulated list in reverse order** (`insert_link_latency`), so a
//! multi-link edge appears reversed. Latencies are summed edge by edge from the destination
//! side, each edge in its own order. For `src == dst` the self-edge is used the same way.
//! A walk that cycles (which would hang SimGrid) is reported as an error.

use super::full::RouteNames;
use super::insert_links_front;
use crate::zone::{Gateways, LocalRoute, NpId, Zone};
use crate::{LinkId, Platform};
use ordered_float::OrderedFloat;
use priority_queue::PriorityQueue;
use rustc_hash::FxHashMap as HashMap;
use std::cmp::Reverse;

/// The route graph of a Dijkstra zone.
#[derive(Debug, Clone, Default)]
pub(crate) struct DijkstraRouting {
    /// Graph node index of each vertex that has one.
    node_of_vertex: HashMap<usize, usize>,
    /// Vertex of each graph node, in creation order.
    vertex_of_node: Vec<usize>,
    /// Out-edges of each node, in creation order: (target node, route).
    out_edges: Vec<Vec<(usize, LocalRoute)>>,
}

/// Queue priority of a node: SimGrid's `std::priority_queue<pair<double, ulong>, ...,
/// std::greater<>>` pops the smallest `(cost as double, node)` first, so the priority is its
/// reverse.
fn priority(cost: u64, node: usize) -> Reverse<(OrderedFloat<f64>, usize)> {
    Reverse((OrderedFloat(cost as f64), node))
}

impl DijkstraRouting {
    fn node(&mut self, vertex: usize) -> usize {
        if let Some(&n) = self.node_of_vertex.get(&vertex) {
            return n;
        }
        let n = self.vertex_of_node.len();
        self.vertex_of_node.push(vertex);
        self.out_edges.push(Vec::new());
        self.node_of_vertex.insert(vertex, n);
        n
    }

    fn edge(&self, from: usize, to: usize) -> Option<&LocalRoute> {
        self.out_edges[from]
            .iter()
            .find(|(t, _)| *t == to)
            .map(|(_, r)| r)
    }

    /// `DijkstraZone::new_edge`.
    fn new_edge(
        &mut self,
        src: usize,
        dst: usize,
        route: LocalRoute,
        label: String,
    ) -> Result<(), String> {
        let s = self.node(src);
        let d = self.node(dst);
        if self.edge(s, d).is_some() {
            return Err(format!("Route from {label} already exists"));
        }
        self.out_edges[s].push((d, route));
        Ok(())
    }

    /// `DijkstraZone::add_route`.
    pub(crate) fn add_route(
        &mut self,
        src: usize,
        dst: usize,
        forward: LocalRoute,
        reverse: Option<LocalRoute>,
        names: &RouteNames,
    ) -> Result<(), String> {
        self.new_edge(
            src,
            dst,
            forward,
            format!("{} to {}", names.src_label(), names.dst_label()),
        )?;
        if let Some(reverse) = reverse {
            self.new_edge(
                dst,
                src,
                reverse,
                format!("{} to {}", names.dst_label(), names.src_label()),
            )?;
        }
        Ok(())
    }

    /// `DijkstraZone::do_seal`: a loopback self-edge on every graph node lacking one (base mode).
    pub(crate) fn seal(&mut self, loopback: Option<LinkId>) {
        if let Some(loopback) = loopback {
            for node in 0..self.vertex_of_node.len() {
                if self.edge(node, node).is_none() {
                    self.out_edges[node].push((
                        node,
                        LocalRoute {
                            links: vec![loopback],
                            gw_src: None,
                            gw_dst: None,
                        },
                    ));
                }
            }
        }
    }

    /// Predecessor array of a Dijkstra run from `src_node`, with SimGrid's arithmetic.
    ///
    /// SimGrid pushes every node (cost `ULONG_MAX`, the source 0) into a heap without
    /// decrease-key and pushes a node again whenever its cost drops, popping the stale entries
    /// too. A stale entry pops after the node's newer, cheaper one and relaxes with the node's
    /// current cost, which finds nothing new (`candidate < cost` is strict), so a queue with
    /// decrease-key (`priority-queue`'s `push_increase`: update if queued, push again if already
    /// popped) pops the same nodes in the same order and ends with the same predecessors,
    /// wrap-around quirk included (checked against the heap version by a property test).
    fn predecessors(&self, src_node: usize) -> Vec<usize> {
        let nr_nodes = self.vertex_of_node.len();
        let mut cost = vec![u64::MAX; nr_nodes];
        let mut pred = vec![0usize; nr_nodes];
        cost[src_node] = 0;
        let mut queue = PriorityQueue::with_capacity(nr_nodes);
        for (node, &c) in cost.iter().enumerate() {
            queue.push(node, priority(c, node));
        }
        while let Some((v, _)) = queue.pop() {
            for (u, route) in &self.out_edges[v] {
                let cost_v_u = route.links.len() as u64;
                let candidate = cost_v_u.wrapping_add(cost[v]);
                if candidate < cost[*u] {
                    pred[*u] = v;
                    cost[*u] = candidate;
                    queue.push_increase(*u, priority(candidate, *u));
                }
            }
        }
        pred
    }

    /// `DijkstraZone::get_local_route`.
    pub(crate) fn local_route(
        &self,
        platform: &Platform,
        zone: &Zone,
        src: NpId,
        dst: NpId,
        links: &mut Vec<LinkId>,
        lat: &mut f64,
    ) -> Result<Gateways, String> {
        let no_route = || {
            format!(
                "No route from '{}' to '{}'",
                platform.netpoints[src].name, platform.netpoints[dst].name
            )
        };
        let src_node = *self
            .node_of_vertex
            .get(&platform.netpoints[src].vertex)
            .ok_or_else(no_route)?;
        let dst_node = *self
            .node_of_vertex
            .get(&platform.netpoints[dst].vertex)
            .ok_or_else(no_route)?;
        if src_node == dst_node {
            let route = self.edge(src_node, dst_node).ok_or_else(no_route)?;
            insert_links_front(links, lat, &platform.links, &route.links);
        }
        let pred = self.predecessors(src_node);

        let mut gw_src: Option<NpId> = None;
        let mut first_gw: Option<NpId> = None;
        let mut v = dst_node;
        let mut steps = 0;
        while v != src_node {
            steps += 1;
            if steps > self.vertex_of_node.len() {
                return Err(format!(
                    "{} (the predecessor walk of SimGrid 3.32's Dijkstra loops forever here)",
                    no_route()
                ));
            }
            let route = self.edge(pred[v], v).ok_or_else(no_route)?;
            let prev_gw_src = gw_src;
            gw_src = route.gw_src;
            let gw_dst = route.gw_dst;
            if v == dst_node {
                first_gw = gw_dst;
            }
            if zone.recursive && v != dst_node && gw_dst != prev_gw_src {
                return Err(format!(
                    "{}: the Dijkstra zone '{}' would need a route between two gateways of consecutive zone routes, which crashes SimGrid 3.32",
                    no_route(),
                    zone.name
                ));
            }
            insert_links_front(links, lat, &platform.links, &route.links);
            v = pred[v];
        }
        let mut gateways = Gateways::default();
        if zone.recursive {
            gateways.src = gw_src;
            gateways.dst = first_gw;
        }
        Ok(gateways)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;
    use std::cmp::Ordering;
    use std::collections::BinaryHeap;

    /// SimGrid 3.32's loop as written (`DijkstraZone::get_local_route`): a binary heap without
    /// decrease-key whose stale entries are popped and relaxed too.
    fn heap_predecessors(out_edges: &[Vec<(usize, u64)>], src: usize) -> Vec<usize> {
        #[derive(PartialEq)]
        struct Entry(f64, usize);
        impl Eq for Entry {}
        impl Ord for Entry {
            fn cmp(&self, o: &Self) -> Ordering {
                o.0.total_cmp(&self.0).then_with(|| o.1.cmp(&self.1))
            }
        }
        impl PartialOrd for Entry {
            fn partial_cmp(&self, o: &Self) -> Option<Ordering> {
                Some(self.cmp(o))
            }
        }
        let n = out_edges.len();
        let mut cost = vec![u64::MAX; n];
        let mut pred = vec![0usize; n];
        cost[src] = 0;
        let mut heap: BinaryHeap<Entry> = (0..n).map(|v| Entry(cost[v] as f64, v)).collect();
        while let Some(Entry(_, v)) = heap.pop() {
            for &(u, c) in &out_edges[v] {
                let candidate = c.wrapping_add(cost[v]);
                if candidate < cost[u] {
                    pred[u] = v;
                    cost[u] = candidate;
                    heap.push(Entry(candidate as f64, u));
                }
            }
        }
        pred
    }

    fn routing(out_edges: &[Vec<(usize, u64)>]) -> DijkstraRouting {
        DijkstraRouting {
            node_of_vertex: (0..out_edges.len()).map(|v| (v, v)).collect(),
            vertex_of_node: (0..out_edges.len()).collect(),
            out_edges: out_edges
                .iter()
                .map(|es| {
                    es.iter()
                        .map(|&(u, c)| {
                            let route = LocalRoute {
                                links: vec![LinkId(0); c as usize],
                                gw_src: None,
                                gw_dst: None,
                            };
                            (u, route)
                        })
                        .collect()
                })
                .collect(),
        }
    }

    /// Hand case of the wrap-around quirk: 0 → 1 (one link); 2 and 3 are unreachable, with
    /// 2 → 3 (two links) and 3 → 1 (one link). Pops: 0 (cost 0) relaxes 1 to 1; 1 (cost 1);
    /// then the unreachable 2 (ULONG_MAX) relaxes 3 to ULONG_MAX + 2 = 1; 3 (cost 1) relaxes 1
    /// to 1 + 1 = 2, not below 1: predecessors [0, 0, 0, 2].
    #[test]
    fn unreachable_nodes_wrap_around_as_in_simgrid() {
        let edges = vec![vec![(1, 1)], vec![], vec![(3, 2)], vec![(1, 1)]];
        assert_eq!(routing(&edges).predecessors(0), vec![0, 0, 0, 2]);
        assert_eq!(heap_predecessors(&edges, 0), vec![0, 0, 0, 2]);
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(2000))]

        /// The decrease-key queue gives the predecessors of SimGrid's heap loop on random
        /// graphs (edges of 0..3 links, unreachable parts, self-edges, parallel edges).
        #[test]
        fn decrease_key_equals_simgrids_heap(
            n in 1usize..10,
            raw in proptest::collection::vec((0usize..10, 0usize..10, 0u64..4), 0..30),
            src in 0usize..10,
        ) {
            let mut edges = vec![Vec::new(); n];
            for (a, b, c) in raw {
                edges[a % n].push((b % n, c));
            }
            let src = src % n;
            prop_assert_eq!(routing(&edges).predecessors(src), heap_predecessors(&edges, src));
        }
    }
}
