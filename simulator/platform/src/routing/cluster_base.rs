//! What torus, fat-tree and dragonfly clusters share: private links stored by position.
//!
//! Source: `src/kernel/routing/ClusterZone.cpp` and `include/simgrid/kernel/routing/ClusterZone.hpp`
//! (`ClusterBase`).
//!
//! Every leaf (host) owns `num_links_per_node` consecutive *positions* starting at
//! `node_pos(id) = id × num_links_per_node`, each holding a pair (link up, link down):
//! first the loopback if the cluster has one, then the limiter if it has one, then the
//! topology's own links (one per dimension for a torus). `num_links_per_node` starts at the
//! topology's count (the number of dimensions for a torus, 1 otherwise) and grows by one when
//! the first loopback or limiter is set; this happens while leaf 0 is created, so every leaf
//! uses the final value except for positions computed before that, which are all 0 anyway.

use crate::LinkId;

/// Largest number of elements (leaves, switches, routers, ports) a cluster topology may have.
/// SimGrid has no limit; this one turns absurd parameters into an error instead of an
/// arithmetic overflow or an allocation failure.
pub(crate) const MAX_TOPOLOGY_ELEMENTS: usize = 1_000_000;

/// The product of `factors`, or an error if it exceeds [`MAX_TOPOLOGY_ELEMENTS`].
pub(crate) fn bounded_product(factors: &[usize], what: &str) -> Result<usize, String> {
    let mut product: usize = 1;
    for &f in factors {
        product = product
            .checked_mul(f)
            .filter(|&p| p <= MAX_TOPOLOGY_ELEMENTS)
            .ok_or_else(|| {
                format!("{what}: more than {MAX_TOPOLOGY_ELEMENTS} elements, too large")
            })?;
    }
    Ok(product)
}
use rustc_hash::FxHashMap as HashMap;

/// `ClusterBase`'s position table.
#[derive(Debug, Clone)]
pub(crate) struct ClusterBase {
    private_links: HashMap<usize, (LinkId, LinkId)>,
    pub has_loopback: bool,
    pub has_limiter: bool,
    pub num_links_per_node: usize,
}

impl ClusterBase {
    pub(crate) fn new(num_links_per_node: usize) -> Self {
        ClusterBase {
            private_links: HashMap::default(),
            has_loopback: false,
            has_limiter: false,
            num_links_per_node,
        }
    }

    pub(crate) fn set_loopback(&mut self) {
        if !self.has_loopback {
            self.num_links_per_node += 1;
            self.has_loopback = true;
        }
    }

    pub(crate) fn set_limiter(&mut self) {
        if !self.has_limiter {
            self.num_links_per_node += 1;
            self.has_limiter = true;
        }
    }

    /// `add_private_link_at`: the first insertion at a position wins.
    pub(crate) fn add_private_link_at(&mut self, position: usize, link: (LinkId, LinkId)) {
        self.private_links.entry(position).or_insert(link);
    }

    pub(crate) fn node_pos(&self, id: usize) -> usize {
        id * self.num_links_per_node
    }

    pub(crate) fn node_pos_with_loopback(&self, id: usize) -> usize {
        self.node_pos(id) + usize::from(self.has_loopback)
    }

    pub(crate) fn node_pos_with_loopback_limiter(&self, id: usize) -> usize {
        self.node_pos_with_loopback(id) + usize::from(self.has_limiter)
    }

    /// `get_uplink_from` (`unordered_map::at`: a missing position is an error).
    pub(crate) fn uplink_from(&self, position: usize) -> Result<LinkId, String> {
        self.private_links
            .get(&position)
            .map(|p| p.0)
            .ok_or_else(|| format!("no private link at position {position} (unordered_map::at)"))
    }

    /// `get_downlink_to`.
    pub(crate) fn downlink_to(&self, position: usize) -> Result<LinkId, String> {
        self.private_links
            .get(&position)
            .map(|p| p.1)
            .ok_or_else(|| format!("no private link at position {position} (unordered_map::at)"))
    }
}
