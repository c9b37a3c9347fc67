//! `<cluster topology="TORUS" topo_parameters="d1,d2,...">`: dimension-ordered routing.
//!
//! Source: `src/kernel/routing/TorusZone.cpp`.
//!
//! Node `r` (its vertex index, i.e. its position in the cluster) has coordinates
//! `c_j = (r / (d_0 × ... × d_{j-1})) mod d_j`. In each dimension `j` it owns one link to its
//! "right" neighbour (`c_j + 1`, wrapping around), named
//! `<cluster id>_link_from_<r>_to_<neighbour>` with `_UP`/`_DOWN` halves when the cluster is
//! SPLITDUPLEX (otherwise a single SHARED link, even for FATPIPE).
//!
//! A route goes through the dimensions in increasing order and fixes one coordinate per hop.
//! Whether to go right or left is decided from the **source and target** coordinates:
//! right if `t_j > s_j && t_j <= s_j + d_j/2`, or `s_j > d_j/2 && (s_j + d_j/2) mod d_j >= t_j`
//! (integer division); left otherwise. Going right from `cur` uses the UP half of `cur`'s link
//! in dimension `j`; going left uses the DOWN half of the next node's link. With a limiter,
//! the limiter of the node being left is added at **every** hop, and the destination's at the
//! end. `a → a` is the loopback if the cluster has one, otherwise empty (plus the limiter).

use super::add_link;
use super::cluster_base::ClusterBase;
use crate::zone::{Gateways, NetPoint};
use crate::{Link, LinkId};

/// A torus cluster's tables.
#[derive(Debug, Clone)]
pub(crate) struct TorusRouting {
    pub base: ClusterBase,
    pub dims: Vec<usize>,
}

impl TorusRouting {
    /// `TorusZone::get_local_route`.
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
        let base = &self.base;
        if src.vertex == dst.vertex && base.has_loopback {
            let link = base.uplink_from(base.node_pos(src.vertex))?;
            add_link(links, lat, all, link);
            return Ok(Gateways::default());
        }
        let dsize = self.dims.len();
        let mut my = vec![0usize; dsize];
        let mut target = vec![0usize; dsize];
        let mut product = 1usize;
        for i in 0..dsize {
            let d = self.dims[i];
            my[i] = (src.vertex / product) % d;
            target[i] = (dst.vertex / product) % d;
            product = product.wrapping_mul(d);
        }
        let max_hops: usize = self.dims.iter().sum::<usize>() + 1;
        let mut hops = 0;
        let mut current = src.vertex;
        while current != dst.vertex {
            hops += 1;
            let mut step = None;
            let mut dim_product = 1usize;
            for j in 0..dsize {
                let cur_dim = self.dims[j];
                if (current / dim_product) % cur_dim != (dst.vertex / dim_product) % cur_dim {
                    let right = (target[j] > my[j] && target[j] <= my[j] + cur_dim / 2)
                        || (my[j] > cur_dim / 2 && (my[j] + cur_dim / 2) % cur_dim >= target[j]);
                    step = Some(if right {
                        let next = if (current / dim_product) % cur_dim == cur_dim - 1 {
                            current
                                .wrapping_add(dim_product)
                                .wrapping_sub(dim_product * cur_dim)
                        } else {
                            current + dim_product
                        };
                        (next, base.node_pos_with_loopback_limiter(current) + j, true)
                    } else {
                        let next = if (current / dim_product).is_multiple_of(cur_dim) {
                            current
                                .wrapping_sub(dim_product)
                                .wrapping_add(dim_product * cur_dim)
                        } else {
                            current - dim_product
                        };
                        (next, base.node_pos_with_loopback_limiter(next) + j, false)
                    });
                    break;
                }
                dim_product = dim_product.wrapping_mul(cur_dim);
            }
            let Some((next, offset, up)) = step else {
                return Err(format!(
                    "torus routing from '{}' to '{}' found no dimension to move in",
                    src.name, dst.name
                ));
            };
            if hops > max_hops {
                return Err(format!(
                    "torus routing from '{}' to '{}' does not converge",
                    src.name, dst.name
                ));
            }
            if base.has_limiter {
                links.push(base.uplink_from(base.node_pos_with_loopback(current))?);
            }
            let link = if up {
                base.uplink_from(offset)?
            } else {
                base.downlink_to(offset)?
            };
            add_link(links, lat, all, link);
            current = next;
        }
        if base.has_limiter {
            links.push(base.downlink_to(base.node_pos_with_loopback(dst.vertex))?);
        }
        Ok(Gateways::default())
    }
}
