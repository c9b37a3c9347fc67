//! Collectives into point-to-point schedules, on the world or on a sub-communicator.
//!
//! [`crate::collectives::schedule`] gives a rank's part of a collective as a list of [`Op`]s
//! between comm ranks, chosen by the `smpi/*` algorithm keys as SimGrid 3.32 does; here those
//! ops become the rank's steps. On a sub-communicator, comm ranks are mapped back to world ranks
//! through its member list and tags are tied to the communicator. For example, a `bcast` rooted
//! at world rank 4 on a communicator of world ranks `[2, 4, 6]` is scheduled with root 1
//! ([`localize_root`]), and an `Isend` to comm rank 2 becomes a send to world rank 6.

use timeless_trace::Action;

use super::Simulation;
use crate::collective::Op;
use crate::comm::{tag_in, GlobalComm};
use crate::error::ReplayError;
use crate::rank::{Dest, RecvSize, Step};

impl Simulation<'_> {
    /// Queues the point-to-point schedule of collective `action` for world rank `r`, which is
    /// rank `me` of the `size` members of communicator `g` (roots in `action` are comm ranks).
    pub(super) fn expand_collective(
        &mut self,
        r: u32,
        action: &Action,
        g: GlobalComm,
        me: u32,
        size: u32,
    ) -> Result<(), ReplayError> {
        let mut ops = std::mem::take(&mut self.ops);
        ops.clear();
        let flops = crate::collectives::schedule(
            &self.cfg.colls,
            &self.ranks[r as usize],
            me,
            size,
            action,
            &mut ops,
        )
        .map_err(|source| ReplayError::Collective {
            at: self.loc(r),
            source,
        })?;
        for &op in &ops {
            let world = |peer: u32| {
                if g == 0 {
                    peer
                } else {
                    self.comms.members(g)[peer as usize]
                }
            };
            match op {
                Op::Isend { peer, bytes, tag } => {
                    self.push_send(r, world(peer), tag_in(g, tag), bytes, Dest::Group)
                }
                Op::Send { peer, bytes, tag } => {
                    self.push_send(r, world(peer), tag_in(g, tag), bytes, Dest::Block)
                }
                Op::Irecv { peer, bytes, tag } => {
                    let peer = world(peer);
                    self.ranks[r as usize].steps.push_back(Step::Recv {
                        peer,
                        tag: tag_in(g, tag),
                        size: RecvSize::Bytes(bytes),
                        dest: Dest::Group,
                    })
                }
                Op::Recv { peer, bytes, tag } => {
                    let peer = world(peer);
                    self.ranks[r as usize].steps.push_back(Step::Recv {
                        peer,
                        tag: tag_in(g, tag),
                        size: RecvSize::Bytes(bytes),
                        dest: Dest::Block,
                    })
                }
                Op::WaitAll => self.ranks[r as usize].steps.push_back(Step::WaitGroup),
                Op::WaitEach => self.ranks[r as usize]
                    .steps
                    .push_back(Step::WaitGroupInOrder),
                Op::Exec { flops } => {
                    if flops > 0.0 {
                        self.ranks[r as usize].steps.push_back(Step::Exec(flops));
                    }
                }
            }
        }
        if flops > 0.0 {
            self.ranks[r as usize].steps.push_back(Step::Exec(flops));
        }
        self.ops = ops;
        Ok(())
    }
}

/// `action` with its root (a world rank) replaced by its rank in the communicator; the world
/// rank back as the error when it is not a member.
pub(super) fn localize_root(
    action: &Action,
    comm_rank: impl Fn(u32) -> Option<u32>,
) -> Result<Action, u32> {
    let mut a = action.clone();
    match &mut a {
        Action::Bcast { root, .. }
        | Action::Reduce { root, .. }
        | Action::Gather { root, .. }
        | Action::GatherV { root, .. }
        | Action::Scatter { root, .. }
        | Action::ScatterV { root, .. } => *root = comm_rank(*root).ok_or(*root)?,
        _ => {}
    }
    Ok(a)
}
