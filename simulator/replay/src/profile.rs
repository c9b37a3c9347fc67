//! Simulated communicator-centric profiles (mpisee's view of a replay, `001_*`): every MPI call
//! of the replay attributed to its communicator, operation, rank and size bucket, with
//! simulated seconds, in the schema of measured profiles so that the two compare row by row.
//!
//! [`ProfileRecorder`] is an [`Observer`]; [`ProfileRecorder::finish`] names the communicators.
//! A traced run's profile (`timeless trace --profile`) lists which name each rank's
//! communicator ids stand for (its `rank_comms` table); given it, the replay uses the same
//! names. Without it, communicators are named from what the trace says, their members:
//! `U<size>.<smallest world rank>` (`#2`, `#3`, ... for further communicators with the same
//! members, e.g. duplicates), and have no parent.
//!
//! A call's time is the simulated time from the start of its action to the return: transfer
//! time, waiting for peers and the software overheads (`smpi/os`, `or`, ...). Summed over a
//! rank's rows it is the rank's communication + wait + overhead time of the replay report (plus
//! the flops of reductions).

use std::collections::HashMap;

use timeless_profile::accumulate::RankPart;
use timeless_profile::{Communicator, LocalComm, Profile, Row, RunMeta};

use crate::report::{CallInfo, Observer};

/// Collects a replay's calls per rank.
#[derive(Debug, Default)]
pub struct ProfileRecorder {
    parts: Vec<RankPart>,
    /// Per rank: (local id, members) of each communicator it defined, in order.
    defs: Vec<Vec<(u32, Vec<u32>)>>,
}

impl ProfileRecorder {
    /// A recorder for `ranks` ranks.
    pub fn new(ranks: u32) -> ProfileRecorder {
        ProfileRecorder {
            parts: (0..ranks).map(|_| RankPart::default()).collect(),
            defs: vec![Vec::new(); ranks as usize],
        }
    }

    /// The profile, named after `names` (a measured profile of the traced run) where it knows
    /// a rank's communicator id, else after the members.
    pub fn finish(self, meta: RunMeta, names: Option<&Profile>) -> Profile {
        let n = self.parts.len() as u32;
        let mut comms: Vec<Communicator> = match names {
            Some(p) => p.comms.clone(),
            None => vec![Communicator {
                name: "W".into(),
                parent: None,
                members: (0..n).collect(),
            }],
        };
        let known: HashMap<(u32, u32), &str> = names
            .map(|p| {
                p.locals
                    .iter()
                    .map(|l| ((l.rank, l.local), l.comm.as_str()))
                    .collect()
            })
            .unwrap_or_default();
        let mut name_of: HashMap<(u32, u32), String> = HashMap::new();
        // Fallback identity: the member list and how many communicators with that list the
        // rank defined before (as the replay matches communicators).
        let mut fallback: HashMap<(Vec<u32>, u32), String> = HashMap::new();
        let mut used: std::collections::HashSet<String> =
            comms.iter().map(|c| c.name.clone()).collect();
        for (r, defs) in self.defs.iter().enumerate() {
            let mut seen: HashMap<&[u32], u32> = HashMap::new();
            for (local, members) in defs {
                let occ = seen.entry(members.as_slice()).or_insert(0);
                let key = (members.clone(), *occ);
                *occ += 1;
                let name = match known.get(&(r as u32, *local)) {
                    Some(name) => name.to_string(),
                    None => fallback
                        .entry(key)
                        .or_insert_with(|| {
                            let min = members.iter().min().copied().unwrap_or(0);
                            let base = format!("U{}.{min}", members.len());
                            let mut name = base.clone();
                            let mut k = 2;
                            while used.contains(&name) {
                                name = format!("{base}#{k}");
                                k += 1;
                            }
                            used.insert(name.clone());
                            comms.push(Communicator {
                                name: name.clone(),
                                parent: None,
                                members: members.clone(),
                            });
                            name
                        })
                        .clone(),
                };
                name_of.insert((r as u32, *local), name);
            }
        }
        let mut rows = Vec::new();
        for (r, part) in self.parts.iter().enumerate() {
            for (k, s) in &part.cells {
                let comm = if k.comm == 0 {
                    "W".to_string()
                } else {
                    name_of
                        .get(&(r as u32, k.comm))
                        .cloned()
                        .unwrap_or_else(|| format!("?{}", k.comm))
                };
                rows.push(Row {
                    comm,
                    op: k.op.to_string(),
                    rank: r as u32,
                    bucket: k.bucket,
                    stats: *s,
                });
            }
        }
        // Rows on a communicator id no comm_def defined cannot happen (the replay stops first);
        // keep the profile well-formed anyway.
        for r in &rows {
            if !comms.iter().any(|c| c.name == r.comm) {
                comms.push(Communicator {
                    name: r.comm.clone(),
                    parent: None,
                    members: vec![r.rank],
                });
            }
        }
        let mut locals: Vec<LocalComm> = name_of
            .into_iter()
            .map(|((rank, local), comm)| LocalComm { rank, local, comm })
            .collect();
        locals.sort_by_key(|l| (l.rank, l.local));
        let mut p = Profile {
            meta,
            comms,
            rows,
            locals,
        };
        p.sort_rows();
        p
    }
}

impl Observer for ProfileRecorder {
    fn wants_calls(&self) -> bool {
        true
    }

    fn wants_actions(&self) -> bool {
        false
    }

    fn call(&mut self, c: &CallInfo) {
        if let Some(part) = self.parts.get_mut(c.rank as usize) {
            part.record(
                c.comm,
                c.op,
                c.bytes_sent,
                c.bytes_recv,
                c.end_secs - c.start_secs,
            );
        }
    }

    fn comm_defined(&mut self, rank: u32, local: u32, members: &[u32]) {
        if let Some(d) = self.defs.get_mut(rank as usize) {
            d.push((local, members.to_vec()));
        }
    }
}
