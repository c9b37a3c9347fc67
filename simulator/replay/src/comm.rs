//! Communicators of a replay: world and the sub-communicators ranks define with `comm_def`.
//!
//! Each rank names communicators by its own ids (trace extension, README "Communicators"); a
//! communicator's identity across ranks is its ordered member list plus how many communicators
//! with that same list the rank defined before (two `MPI_Comm_dup`s of one communicator are
//! distinct), which every member sees in the same order since creation is collective.
//! Messages match only within a communicator: the matching tag carries the communicator's
//! global index in its high 32 bits.
//!
//! Several jobs (SimGrid's `replay_multiple`) each have their own `MPI_COMM_WORLD`: with jobs of
//! 2 and 3 ranks, replay ranks 0-1 are job 0's world (global index 1) and ranks 2-4 job 1's
//! (global index 2); a rank's id 0 resolves to its job's world, and index 0 (all ranks) is
//! never used. With a single job, its world is index 0 as before.

use rustc_hash::FxHashMap as HashMap;
use timeless_trace::{CommId, Rank, WORLD};

/// Matching tag: global communicator index (high 32 bits) and MPI tag (low 32 bits).
pub type Tag = i64;

/// Index of a communicator in [`Comms`]; 0 is `MPI_COMM_WORLD`.
pub type GlobalComm = u32;

/// The matching tag of MPI tag `tag` on communicator `comm`.
pub fn tag_in(comm: GlobalComm, tag: i32) -> Tag {
    (i64::from(comm) << 32) | i64::from(tag as u32)
}

/// The MPI tag of a matching tag.
pub fn mpi_tag(t: Tag) -> i32 {
    t as u32 as i32
}

/// The communicator of a matching tag.
pub fn comm_of(t: Tag) -> GlobalComm {
    (t >> 32) as GlobalComm
}

#[derive(Debug, Default)]
struct RankComms {
    /// The rank's ids → global index.
    local: HashMap<CommId, GlobalComm>,
    /// How many communicators with each member list the rank defined.
    seen: HashMap<Vec<Rank>, u32>,
}

/// Every communicator of a replay.
#[derive(Debug)]
pub struct Comms {
    members: Vec<Vec<Rank>>,
    /// Per communicator, its first member when its members are `first, first + 1, ...`.
    consecutive: Vec<Option<Rank>>,
    index: HashMap<(Vec<Rank>, u32), GlobalComm>,
    ranks: Vec<RankComms>,
    /// Global index of each rank's `MPI_COMM_WORLD` (its job's world), apart from the maps:
    /// `resolve(r, WORLD)`, on nearly every action of a replay, reads 4 bytes per rank (16 KiB
    /// at 4096 ranks) rather than a rank's 72-byte entry.
    world: Vec<GlobalComm>,
}

impl Comms {
    /// World of `n` ranks, no sub-communicator yet.
    #[cfg(test)]
    pub fn new(n: u32) -> Self {
        Comms::with_jobs(&[n])
    }

    /// Consecutive jobs of these sizes, each with its own world (one job: a single world).
    pub fn with_jobs(sizes: &[u32]) -> Self {
        let n: u32 = sizes.iter().sum();
        let mut members = vec![(0..n).collect::<Vec<Rank>>()];
        let ranks: Vec<RankComms> = (0..n).map(|_| RankComms::default()).collect();
        let mut world: Vec<GlobalComm> = vec![0; n as usize];
        if sizes.len() > 1 {
            let mut first = 0;
            for &size in sizes {
                let g = members.len() as GlobalComm;
                members.push((first..first + size).collect());
                world[first as usize..(first + size) as usize].fill(g);
                first += size;
            }
        }
        Comms {
            consecutive: members.iter().map(|m| consecutive(m)).collect(),
            members,
            index: HashMap::default(),
            ranks,
            world,
        }
    }

    /// Rank `rank` defines its communicator `id` with these members (comm rank order).
    ///
    /// # Errors
    /// `rank` is not a member, or `id` is 0 or already defined by the rank.
    pub fn define(&mut self, rank: Rank, id: CommId, world_ranks: &[Rank]) -> Result<(), String> {
        if id == WORLD {
            return Err("communicator id 0 is MPI_COMM_WORLD and cannot be defined".into());
        }
        if !world_ranks.contains(&rank) {
            return Err(format!(
                "rank {rank} defines communicator {id} without being one of its members {world_ranks:?}"
            ));
        }
        let rc = &mut self.ranks[rank as usize];
        if rc.local.contains_key(&id) {
            return Err(format!("communicator {id} is defined twice"));
        }
        let seen = rc.seen.entry(world_ranks.to_vec()).or_insert(0);
        let key = (world_ranks.to_vec(), *seen);
        *seen += 1;
        let next = self.members.len() as GlobalComm;
        let g = *self.index.entry(key).or_insert(next);
        if g == next {
            self.members.push(world_ranks.to_vec());
            self.consecutive.push(consecutive(world_ranks));
        }
        self.ranks[rank as usize].local.insert(id, g);
        Ok(())
    }

    /// Global index of rank `rank`'s communicator `id`.
    pub fn resolve(&self, rank: Rank, id: CommId) -> Option<GlobalComm> {
        if id == WORLD {
            return Some(self.world[rank as usize]);
        }
        self.ranks[rank as usize].local.get(&id).copied()
    }

    /// Rank `rank`'s own id of global communicator `g` (0 for the world).
    pub fn local_id(&self, rank: Rank, g: GlobalComm) -> Option<CommId> {
        if g == self.world[rank as usize] {
            return Some(WORLD);
        }
        let mut ids: Vec<CommId> = self.ranks[rank as usize]
            .local
            .iter()
            .filter(|(_, &v)| v == g)
            .map(|(&k, _)| k)
            .collect();
        ids.sort_unstable();
        ids.first().copied()
    }

    /// Members of a communicator, world ranks in comm-rank order.
    pub fn members(&self, g: GlobalComm) -> &[Rank] {
        &self.members[g as usize]
    }

    /// Comm rank of world rank `w` in `g`, if a member.
    pub fn comm_rank(&self, g: GlobalComm, w: Rank) -> Option<u32> {
        let members = &self.members[g as usize];
        // Worlds (and any communicator of consecutive ranks in order) are found by offset.
        if let Some(first) = self.consecutive[g as usize] {
            return w
                .checked_sub(first)
                .filter(|&i| (i as usize) < members.len());
        }
        members.iter().position(|&m| m == w).map(|p| p as u32)
    }
}

/// The first member of `members` if they are consecutive ranks in increasing order.
fn consecutive(members: &[Rank]) -> Option<Rank> {
    let first = *members.first()?;
    members
        .iter()
        .enumerate()
        .all(|(i, &m)| u64::from(m) == u64::from(first) + i as u64)
        .then_some(first)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tags_round_trip_and_separate_communicators() {
        for &t in &[0, 7, -1, -17, i32::MAX, i32::MIN] {
            for &c in &[0u32, 1, 5] {
                assert_eq!(mpi_tag(tag_in(c, t)), t);
                assert_eq!(comm_of(tag_in(c, t)), c);
            }
        }
        assert_ne!(tag_in(0, 3), tag_in(1, 3));
    }

    #[test]
    fn identity_is_member_list_and_occurrence() {
        let mut c = Comms::new(4);
        // Ranks 0 and 2 split into {0,2}; they use different local ids.
        c.define(0, 1, &[0, 2]).unwrap();
        c.define(2, 5, &[0, 2]).unwrap();
        // A dup of the same group is a different communicator.
        c.define(0, 2, &[0, 2]).unwrap();
        c.define(2, 6, &[0, 2]).unwrap();
        assert_eq!(c.resolve(0, 1), c.resolve(2, 5));
        assert_eq!(c.resolve(0, 2), c.resolve(2, 6));
        assert_ne!(c.resolve(0, 1), c.resolve(0, 2));
        assert_eq!(c.resolve(1, 1), None);
        assert_eq!(c.resolve(3, 0), Some(0));
        let g = c.resolve(2, 5).unwrap();
        assert_eq!(c.members(g), &[0, 2]);
        assert_eq!(c.comm_rank(g, 2), Some(1));
        assert_eq!(c.comm_rank(g, 1), None);
        assert!(c.define(1, 1, &[0, 2]).is_err(), "not a member");
        assert!(c.define(0, 1, &[0, 2]).is_err(), "defined twice");
    }

    #[test]
    fn each_job_has_its_own_world() {
        // Jobs of 2 and 3 ranks: replay ranks 0-1 and 2-4.
        let mut c = Comms::with_jobs(&[2, 3]);
        assert_eq!(c.resolve(1, WORLD), Some(1));
        assert_eq!(c.resolve(2, WORLD), Some(2));
        assert_eq!(c.members(2), &[2, 3, 4]);
        assert_eq!(c.comm_rank(2, 4), Some(2));
        assert_eq!(c.comm_rank(2, 1), None, "rank 1 is in the other job");
        assert_eq!(c.local_id(3, 2), Some(WORLD));
        // A split inside job 1 is a new communicator, distinct from both worlds.
        c.define(2, 1, &[2, 4]).unwrap();
        c.define(4, 1, &[2, 4]).unwrap();
        assert_eq!(c.resolve(2, 1), Some(3));
        assert_eq!(c.comm_rank(3, 4), Some(1));
        // One job keeps index 0 for its world.
        let one = Comms::with_jobs(&[4]);
        assert_eq!(one.resolve(3, WORLD), Some(0));
        assert_eq!(one.comm_rank(0, 3), Some(3));
        assert_eq!(one.comm_rank(0, 4), None);
        // Members out of order are looked up, not offset.
        c.define(3, 2, &[4, 3]).unwrap();
        let g = c.resolve(3, 2).unwrap();
        assert_eq!(c.comm_rank(g, 3), Some(1));
        assert_eq!(c.comm_rank(g, 4), Some(0));
    }
}
