//! `<cluster topology="FAT_TREE" topo_parameters="L;d_1,..,d_L;u_1,..,u_L;p_1,..,p_L">`.
//!
//! Source: `src/kernel/routing/FatTreeZone.cpp` (a parallel ports generalised fat tree, PGFT).
//!
//! `L` levels; at level `l` (1-based in the parameters, 0-based below) each node has `d_l`
//! children and `u_l` parents, and `p_l` parallel links to each of them. There are
//! `d_1 × ... × d_L` leaves (the hosts, in cluster order) and, at switch level `i + 1`,
//! `u_1 × ... × u_{i+1} × d_{i+2} × ... × d_L` switches.
//!
//! Construction, mirrored step by step because it fixes the link names:
//!
//! * leaves get ids `0..n` and a *position* taken from a counter that SimGrid keeps in a
//!   `static` variable, so it continues across fat-tree clusters of the same platform;
//! * switches get decreasing ids starting at `2n − 1`, level by level;
//! * every node gets a label (an odometer over `levels` digits, digit `j` running up to `d_j`
//!   below level `j + 1` and up to `u_j` from there on);
//! * a node is connected to every node of the next level whose label equals its own except
//!   at digit `parent level − 1`, with `p` parallel links each named
//!   `link_from_<child id>_<parent id>_<counter>` (no cluster prefix; `_UP`/`_DOWN` halves for
//!   SPLITDUPLEX), where the counter is another process-wide `static`.
//!
//! Routing (d-mod-k): going up from a node at level `l`, take parent port
//! `(dst_position / (u_0 × ... × u_{l-1})) mod (u_l × p_l)` until the current node's subtree
//! contains the destination; then go down choosing, among the children ports starting at
//! `(src_position mod p) × d`, the ones whose index matches the destination's label. The
//! downward scan keeps its port index when it moves to the next node, exactly like SimGrid's
//! `for` loop that changes `currentNode` while iterating. Limiters of every node left are
//! added, and the destination's limiter at the end. `a → a` uses the loopback if there is one.

use super::add_link;
use super::cluster_base::{bounded_product, ClusterBase};
use crate::zone::{Gateways, NetPoint};
use crate::{Link, LinkId};
use rustc_hash::FxHashMap as HashMap;

/// A fat-tree node (leaf or switch).
#[derive(Debug, Clone)]
pub(crate) struct FtNode {
    pub id: i64,
    pub level: usize,
    pub position: usize,
    pub label: Vec<usize>,
    /// Indices into `FatTreeRouting::links`, by port.
    pub children: Vec<Option<usize>>,
    pub parents: Vec<Option<usize>>,
    pub limiter: Option<LinkId>,
    pub loopback: Option<LinkId>,
}

/// A cable between a child and a parent.
#[derive(Debug, Clone)]
pub(crate) struct FtLink {
    pub up_node: usize,
    pub down_node: usize,
    pub up_link: LinkId,
    pub down_link: LinkId,
}

/// A fat-tree cluster's tables.
#[derive(Debug, Clone)]
pub(crate) struct FatTreeRouting {
    pub base: ClusterBase,
    levels: usize,
    children_per_node: Vec<usize>,
    parents_per_node: Vec<usize>,
    ports_lower_level: Vec<usize>,
    /// Leaf id → index in `nodes`.
    compute_nodes: HashMap<usize, usize>,
    nodes: Vec<FtNode>,
    links: Vec<FtLink>,
    nodes_by_level: Vec<usize>,
}

/// Fat-tree shape: (levels, down links per level, up links per level, link count per level).
type FatTreeShape = (usize, Vec<usize>, Vec<usize>, Vec<usize>);

/// Parses `topo_parameters` like `FatTreeZone::parse_topo_parameters` and checks it like
/// `FatTreeZone::check_topology`. Returns (levels, down, up, count).
pub(crate) fn parse_topo_parameters(text: &str) -> Result<FatTreeShape, String> {
    let parts: Vec<&str> = text.split(';').collect();
    if parts.len() != 4 {
        return Err("Fat trees are defined by the levels number and 3 vectors, see the documentation for more information (expected \"levels;down,..;up,..;count,..\")".to_string());
    }
    let levels = crate::platform_xml::stoi(parts[0])
        .ok_or_else(|| format!("First parameter is not the amount of levels: {}", parts[0]))?;
    if levels <= 0 {
        return Err("FatTreeZone: invalid number of levels, must be > 0".to_string());
    }
    if levels > 64 {
        return Err(format!("FatTreeZone: {levels} levels, too many"));
    }
    let levels = levels as usize;
    let vector = |s: &str, what: &str| -> Result<Vec<usize>, String> {
        let items: Vec<&str> = s.split(',').collect();
        if items.len() != levels {
            return Err(format!(
                "You specified {levels} levels but the {what} vector contains {} levels.",
                items.len()
            ));
        }
        items
            .iter()
            .map(|item| match crate::platform_xml::stoi(item) {
                Some(v) if v > 0 => Ok(v as usize),
                Some(_) => Err(format!(
                    "FatTreeZone: invalid {what} parameter, all values must be greater than 0"
                )),
                None => Err(format!("Invalid {what}: {item}")),
            })
            .collect()
    };
    let down = vector(parts[1], "child count")?;
    let up = vector(parts[2], "parent count")?;
    let count = vector(parts[3], "port count")?;
    // Every size computed by the construction must stay reasonable.
    bounded_product(&down, "fat-tree leaves")?;
    for i in 0..levels {
        let mut factors: Vec<usize> = up[..=i].to_vec();
        factors.extend_from_slice(&down[i + 1..]);
        bounded_product(&factors, "fat-tree switches")?;
        bounded_product(&[down[i], count[i]], "fat-tree ports")?;
        bounded_product(&[up[i], count[i]], "fat-tree ports")?;
    }
    Ok((levels, down, up, count))
}

impl FatTreeRouting {
    pub(crate) fn new(levels: usize, down: Vec<usize>, up: Vec<usize>, count: Vec<usize>) -> Self {
        FatTreeRouting {
            base: ClusterBase::new(1),
            levels,
            children_per_node: down,
            parents_per_node: up,
            ports_lower_level: count,
            compute_nodes: HashMap::default(),
            nodes: Vec::new(),
            links: Vec::new(),
            nodes_by_level: Vec::new(),
        }
    }

    /// Number of leaves: the product of the children counts.
    pub(crate) fn leaf_count(&self) -> usize {
        self.children_per_node.iter().product()
    }

    /// `FatTreeZone::add_processing_node`.
    pub(crate) fn add_processing_node(
        &mut self,
        id: usize,
        position: usize,
        limiter: Option<LinkId>,
        loopback: Option<LinkId>,
    ) {
        let node = FtNode {
            id: id as i64,
            level: 0,
            position,
            label: vec![0; self.levels],
            children: Vec::new(),
            parents: vec![None; self.parents_per_node[0] * self.ports_lower_level[0]],
            limiter,
            loopback,
        };
        self.compute_nodes.entry(id).or_insert(self.nodes.len());
        self.nodes.push(node);
    }

    /// `FatTreeZone::build_upper_levels`: switches, labels and cables.
    ///
    /// `limiter_for(switch_id)` creates the switch's limiter if the cluster has limiters;
    /// `make_link(name)` creates a cable's link(s) and returns (up, down).
    pub(crate) fn build_upper_levels(
        &mut self,
        limiter_for: &mut dyn FnMut(i64) -> Result<Option<LinkId>, String>,
        make_link: &mut dyn FnMut(String) -> Result<(LinkId, LinkId), String>,
        unique_id: &mut u64,
    ) -> Result<(), String> {
        self.generate_switches(limiter_for)?;
        self.generate_labels();
        let mut k = 0;
        for level in 0..self.levels {
            for _ in 0..self.nodes_by_level[level] {
                self.connect_node_to_parents(k, make_link, unique_id)?;
                k += 1;
            }
        }
        Ok(())
    }

    fn generate_switches(
        &mut self,
        limiter_for: &mut dyn FnMut(i64) -> Result<Option<LinkId>, String>,
    ) -> Result<(), String> {
        let levels = self.levels;
        self.nodes_by_level = vec![0; levels + 1];
        self.nodes_by_level[0] = self.children_per_node.iter().product();
        if self.nodes_by_level[0] != self.nodes.len() {
            return Err(format!(
                "The number of provided nodes does not fit with the wanted topology. Please check your platform description (We need {} nodes, we got {})",
                self.nodes_by_level[0],
                self.nodes.len()
            ));
        }
        for i in 0..levels {
            let mut count = 1;
            for j in 0..=i {
                count *= self.parents_per_node[j];
            }
            for j in i + 1..levels {
                count *= self.children_per_node[j];
            }
            self.nodes_by_level[i + 1] = count;
        }
        let mut k = 2 * self.nodes.len() as i64;
        for i in 0..levels {
            for j in 0..self.nodes_by_level[i + 1] {
                k -= 1;
                let limiter = limiter_for(k)?;
                let parents = if i != levels - 1 {
                    self.parents_per_node[i + 1] * self.ports_lower_level[i + 1]
                } else {
                    0
                };
                self.nodes.push(FtNode {
                    id: k,
                    level: i + 1,
                    position: j,
                    label: vec![0; levels],
                    children: vec![None; self.children_per_node[i] * self.ports_lower_level[i]],
                    parents: vec![None; parents],
                    limiter,
                    loopback: None,
                });
            }
        }
        Ok(())
    }

    fn generate_labels(&mut self) {
        let levels = self.levels;
        let mut k = 0;
        for i in 0..=levels {
            let mut current = vec![0usize; levels];
            let max_label: Vec<usize> = (0..levels)
                .map(|j| {
                    if j + 1 > i {
                        self.children_per_node[j]
                    } else {
                        self.parents_per_node[j]
                    }
                })
                .collect();
            for _ in 0..self.nodes_by_level[i] {
                self.nodes[k].label.clone_from(&current);
                let mut remainder = true;
                let mut pos = 0;
                while remainder && pos < levels {
                    current[pos] += 1;
                    if current[pos] >= max_label[pos] {
                        current[pos] = 0;
                        remainder = true;
                        pos += 1;
                    } else {
                        pos = 0;
                        remainder = false;
                    }
                }
                k += 1;
            }
        }
    }

    fn are_related(&self, parent: usize, child: usize) -> bool {
        let (p, c) = (&self.nodes[parent], &self.nodes[child]);
        if p.level != c.level + 1 {
            return false;
        }
        (0..self.levels).all(|i| p.label[i] == c.label[i] || i + 1 == p.level)
    }

    fn connect_node_to_parents(
        &mut self,
        node: usize,
        make_link: &mut dyn FnMut(String) -> Result<(LinkId, LinkId), String>,
        unique_id: &mut u64,
    ) -> Result<(), String> {
        let level = self.nodes[node].level;
        let start: usize = self.nodes_by_level[..=level].iter().sum();
        for parent in start..start + self.nodes_by_level[level + 1] {
            if !self.are_related(parent, node) {
                continue;
            }
            for j in 0..self.ports_lower_level[level] {
                let parent_port = self.nodes[node].label[level] + j * self.children_per_node[level];
                let child_port = self.nodes[parent].label[level] + j * self.parents_per_node[level];
                let name = format!(
                    "link_from_{}_{}_{}",
                    self.nodes[node].id, self.nodes[parent].id, unique_id
                );
                let (up_link, down_link) = make_link(name)?;
                *unique_id += 1;
                let index = self.links.len();
                self.links.push(FtLink {
                    up_node: parent,
                    down_node: node,
                    up_link,
                    down_link,
                });
                let bad_port =
                    || "fat-tree port out of range (inconsistent topo_parameters)".to_string();
                *self.nodes[parent]
                    .children
                    .get_mut(parent_port)
                    .ok_or_else(bad_port)? = Some(index);
                *self.nodes[node]
                    .parents
                    .get_mut(child_port)
                    .ok_or_else(bad_port)? = Some(index);
            }
        }
        Ok(())
    }

    fn is_in_sub_tree(&self, root: usize, node: usize) -> bool {
        let (r, n) = (&self.nodes[root], &self.nodes[node]);
        if r.level <= n.level {
            return false;
        }
        (0..n.level).all(|i| r.label[i] == n.label[i])
            && (r.level..self.levels).all(|i| r.label[i] == n.label[i])
    }

    /// `FatTreeZone::get_local_route`.
    pub(crate) fn local_route(
        &self,
        src: &NetPoint,
        dst: &NetPoint,
        links: &mut Vec<LinkId>,
        lat: &mut f64,
        all: &[Link],
    ) -> Result<Gateways, String> {
        if src.is_router() || dst.is_router() {
            return Ok(Gateways::default());
        }
        let source = *self
            .compute_nodes
            .get(&src.vertex)
            .ok_or_else(|| format!("Could not find the source {} in the fat tree", src.name))?;
        let destination = *self.compute_nodes.get(&dst.vertex).ok_or_else(|| {
            format!(
                "Could not find the destination {} in the fat tree",
                dst.name
            )
        })?;
        let broken = || {
            format!(
                "fat-tree routing from '{}' to '{}' reaches a missing cable",
                src.name, dst.name
            )
        };
        if self.nodes[source].id == self.nodes[destination].id && self.base.has_loopback {
            let loopback = self.nodes[source].loopback.ok_or_else(broken)?;
            add_link(links, lat, all, loopback);
            return Ok(Gateways::default());
        }
        let mut current = source;
        let mut steps = 0;
        while !self.is_in_sub_tree(current, destination) {
            steps += 1;
            if steps > self.levels + 1 {
                return Err(broken());
            }
            let node = &self.nodes[current];
            let mut d = self.nodes[destination].position;
            for i in 0..node.level {
                d /= self.parents_per_node[i];
            }
            let k = self
                .parents_per_node
                .get(node.level)
                .zip(self.ports_lower_level.get(node.level))
                .map(|(a, b)| a * b)
                .ok_or_else(broken)?;
            d %= k;
            if let Some(limiter) = node.limiter {
                links.push(limiter);
            }
            let cable = &self.links[node.parents.get(d).copied().flatten().ok_or_else(broken)?];
            add_link(links, lat, all, cable.up_link);
            current = cable.up_node;
        }
        let dest_label = &self.nodes[destination].label;
        while current != destination {
            let level = self.nodes[current].level;
            if level == 0 {
                return Err(broken());
            }
            let d = self.nodes[source].position % self.ports_lower_level[level - 1];
            let before = current;
            let mut i = d * self.children_per_node[level - 1];
            while i < self.nodes[current].children.len() {
                let lvl = self.nodes[current].level;
                if i % self.children_per_node[lvl - 1] == dest_label[lvl - 1] {
                    let cable = &self.links[self.nodes[current].children[i].ok_or_else(broken)?];
                    add_link(links, lat, all, cable.down_link);
                    if let Some(limiter) = self.nodes[current].limiter {
                        links.push(limiter);
                    }
                    current = cable.down_node;
                }
                i += 1;
            }
            if current == before {
                return Err(format!("{} (SimGrid 3.32 loops forever here)", broken()));
            }
        }
        if let Some(limiter) = self.nodes[current].limiter {
            links.push(limiter);
        }
        Ok(Gateways::default())
    }
}
