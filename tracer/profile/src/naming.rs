//! mpisee's communicator names (`001_*` §III-A), computed once from every rank's log of
//! communicator creations, so that all members of a communicator get the same name.
//!
//! A name is a prefix and a suffix. The prefix is the parent's name (the communicator of the
//! creating call); the suffix is the creating call's letter, then the largest number of
//! communicators any participant of the call belonged to at the call, then, for calls that
//! can create several communicators (split, split_type, create, create_group, cart_sub,
//! intercomm_create), a dot and the smallest parent rank among the new communicator's members.
//!
//! Letters (mpisee's): `a` cart_create, `b` cart_sub, `c` create, `d` dup and dup_with_info,
//! `g` dist_graph_create, `i` idup, `j` dist_graph_create_adjacent, `r` graph_create, `s`
//! split, `t` split_type, `u` create_group; timeless adds `x` intercomm_create and `m`
//! intercomm_merge. `W` is `MPI_COMM_WORLD`.
//!
//! # Worked example (`001_*` Fig. 1)
//!
//! Four processes: `MPI_Cart_create` on `W`, `MPI_Comm_split` on `W` into {P0, P1} and
//! {P2, P3}, then P0 and P1 `MPI_Comm_dup` their half while P2 and P3 `MPI_Comm_create` on theirs
//! a communicator of P2 alone.
//!
//! * cart_create: every process belongs to 1 communicator (`W`): `W_a1`.
//! * split: every process belongs to 2 (`W`, `W_a1`): `W_s2.0` (smallest parent rank 0) and
//!   `W_s2.2`.
//! * create on `W_s2.2`: P2 and P3 belong to 3: `W_s2_c3.0` (P2 is rank 0 of `W_s2.2`).
//! * dup on `W_s2.0`: `W_s2_d3`.
//!
//! As in the figure, a parent's own dot part is left out of the prefix (`W_s2_c3.0`, not
//! `W_s2.2_c3.0`). Where that would give two communicators the same name (two halves of a
//! split each creating a child the same way), the later one (in the order the calls are
//! matched: by parent, then call) keeps its parent's whole name as prefix, so names stay unique.
//!
//! The participants' counts are local: a process's count at its k-th creation call is 1 (for
//! `W`) plus the communicators its earlier calls gave it, so the names need no communication
//! while the program runs; calls are matched across ranks afterwards: the k-th call on a
//! parent by each of its members (creation calls are collective over the parent), or, for
//! `create_group` and `intercomm_create` (collective over the new communicator only), by the
//! new communicator's members.
//!
//! Communicators used but not seen created (`MPI_COMM_SELF`, or made by a call timeless does
//! not wrap) are named `U<size>.<smallest world rank>` and have no parent.

use std::collections::{BTreeMap, HashMap};

use crate::model::Communicator;

/// How a communicator was created.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum Kind {
    /// `MPI_Cart_create`.
    CartCreate,
    /// `MPI_Cart_sub`.
    CartSub,
    /// `MPI_Comm_create`.
    Create,
    /// `MPI_Comm_dup`, `MPI_Comm_dup_with_info`.
    Dup,
    /// `MPI_Dist_graph_create`.
    DistGraphCreate,
    /// `MPI_Comm_idup`.
    Idup,
    /// `MPI_Dist_graph_create_adjacent`.
    DistGraphAdjacent,
    /// `MPI_Graph_create`.
    GraphCreate,
    /// `MPI_Comm_split`.
    Split,
    /// `MPI_Comm_split_type`.
    SplitType,
    /// `MPI_Comm_create_group` (collective over the group only).
    CreateGroup,
    /// `MPI_Intercomm_create` (collective over both local communicators).
    IntercommCreate,
    /// `MPI_Intercomm_merge`.
    IntercommMerge,
}

impl Kind {
    /// mpisee's letter.
    pub fn letter(self) -> char {
        match self {
            Kind::CartCreate => 'a',
            Kind::CartSub => 'b',
            Kind::Create => 'c',
            Kind::Dup => 'd',
            Kind::DistGraphCreate => 'g',
            Kind::Idup => 'i',
            Kind::DistGraphAdjacent => 'j',
            Kind::GraphCreate => 'r',
            Kind::Split => 's',
            Kind::SplitType => 't',
            Kind::CreateGroup => 'u',
            Kind::IntercommCreate => 'x',
            Kind::IntercommMerge => 'm',
        }
    }

    /// The kind of a letter.
    pub fn from_letter(c: char) -> Option<Kind> {
        Some(match c {
            'a' => Kind::CartCreate,
            'b' => Kind::CartSub,
            'c' => Kind::Create,
            'd' => Kind::Dup,
            'g' => Kind::DistGraphCreate,
            'i' => Kind::Idup,
            'j' => Kind::DistGraphAdjacent,
            'r' => Kind::GraphCreate,
            's' => Kind::Split,
            't' => Kind::SplitType,
            'u' => Kind::CreateGroup,
            'x' => Kind::IntercommCreate,
            'm' => Kind::IntercommMerge,
            _ => return None,
        })
    }

    /// Whether one call may create several communicators (the name then has a dot part).
    pub fn several(self) -> bool {
        matches!(
            self,
            Kind::Split
                | Kind::SplitType
                | Kind::Create
                | Kind::CreateGroup
                | Kind::CartSub
                | Kind::IntercommCreate
        )
    }

    /// Whether every member of the parent takes part in the call.
    fn over_parent(self) -> bool {
        !matches!(self, Kind::CreateGroup | Kind::IntercommCreate)
    }
}

/// One event of a rank's communicator log, in call order.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event {
    /// A creation call on the rank's communicator `parent` (its local id; 0 is `W`). `child`
    /// is `None` when the call returned `MPI_COMM_NULL`.
    Created {
        /// How.
        kind: Kind,
        /// Local id of the communicator of the call (for `intercomm_create`, the local one).
        parent: u32,
        /// The new communicator.
        child: Option<Child>,
    },
    /// A communicator used without a creation seen (`MPI_COMM_SELF`, ...).
    Seen(Child),
}

/// A communicator as one member knows it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Child {
    /// The rank's local id for it (what its profile rows and trace records use).
    pub local: u32,
    /// World ranks of its members in communicator rank order (intercommunicator: local group
    /// then remote group).
    pub members: Vec<u32>,
}

/// One rank's log.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct RankLog {
    /// Events in call order.
    pub events: Vec<Event>,
}

/// The names of a run.
#[derive(Debug, Clone, PartialEq)]
pub struct Naming {
    /// Every communicator, `W` first, then in the order their calls were matched.
    pub comms: Vec<Communicator>,
    /// For each world rank, its local ids and the index in `comms` each stands for.
    pub local: Vec<BTreeMap<u32, usize>>,
}

impl Naming {
    /// The name of rank `rank`'s local communicator `local`.
    pub fn name(&self, rank: u32, local: u32) -> Option<&str> {
        let i = *self.local.get(rank as usize)?.get(&local)?;
        Some(&self.comms[i].name)
    }
}

/// Logs that do not fit together.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum NamingError {
    /// A call names a communicator the rank has not defined.
    #[error(
        "rank {rank}, communicator event {event}: communicator {local} is not known to the rank"
    )]
    UnknownParent {
        /// World rank.
        rank: u32,
        /// Event index in the rank's log.
        event: usize,
        /// The local id.
        local: u32,
    },
    /// Calls that never found all their participants.
    #[error("rank {rank}, communicator event {event}: the {what} call has no match on every participant")]
    Unmatched {
        /// World rank.
        rank: u32,
        /// Event index.
        event: usize,
        /// The call's kind.
        what: String,
    },
    /// Participants of one call disagree on the new communicator's members.
    #[error("rank {rank}, communicator event {event}: {why}")]
    Inconsistent {
        /// World rank.
        rank: u32,
        /// Event index.
        event: usize,
        /// What disagrees.
        why: String,
    },
}

/// A call's matching key across ranks.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
enum Key {
    /// The `seq`-th creation call on global communicator `parent`.
    OverParent { parent: usize, seq: u64 },
    /// A call collective over the new communicator's members (sorted), `occurrence`-th time
    /// the rank made such a call with these members and this parent.
    OverChild {
        kind: char,
        parent: usize,
        members: Vec<u32>,
        occurrence: u64,
    },
}

/// (letter, parent, sorted members): calls collective over the new communicator only.
type OccurrenceKey = (char, usize, Vec<u32>);

struct Arrival {
    rank: u32,
    event: usize,
    kind: Kind,
    parent: usize,
    count: u64,
    child: Option<Child>,
}

/// Names every communicator of a run of `logs.len()` ranks (`logs[r]` is world rank r's log).
///
/// # Errors
/// [`NamingError`] when a log names an unknown communicator, a call has no match on all its
/// participants, or participants disagree on the members of what they created.
pub fn name_all(logs: &[RankLog]) -> Result<Naming, NamingError> {
    let n = logs.len() as u32;
    let mut comms = vec![Communicator {
        name: "W".into(),
        parent: None,
        members: (0..n).collect(),
    }];
    let mut used: HashMap<String, usize> = HashMap::from([("W".to_string(), 0)]);
    let mut local: Vec<BTreeMap<u32, usize>> = (0..n).map(|_| BTreeMap::from([(0, 0)])).collect();
    let mut next = vec![0usize; n as usize];
    // Communicators each rank belongs to (W counts).
    let mut count = vec![1u64; n as usize];
    let mut seq: Vec<HashMap<usize, u64>> = vec![HashMap::new(); n as usize];
    let mut occ: Vec<HashMap<OccurrenceKey, u64>> = vec![HashMap::new(); n as usize];
    let mut waiting = vec![false; n as usize];
    let mut groups: BTreeMap<Key, Vec<Arrival>> = BTreeMap::new();
    // Communicators seen in use, by ordered members and the occurrence of that list among
    // the rank's own seen ones (the trace's identity rule, tracer/preload/src/tracer.rs): two
    // communicators of one rank with the same members (sessions programs make them from
    // process sets) stay two.
    let mut seen: HashMap<(Vec<u32>, u64), usize> = HashMap::new();
    let mut seen_occ: Vec<HashMap<Vec<u32>, u64>> = vec![HashMap::new(); n as usize];

    loop {
        let mut progress = false;
        for r in 0..n as usize {
            while !waiting[r] && next[r] < logs[r].events.len() {
                let e = next[r];
                match &logs[r].events[e] {
                    Event::Seen(child) => {
                        let k = seen_occ[r].entry(child.members.clone()).or_insert(0);
                        let key = (child.members.clone(), *k);
                        *k += 1;
                        let g = *seen.entry(key).or_insert_with(|| {
                            let min = child.members.iter().min().copied().unwrap_or(0);
                            let name = unique(
                                &mut used,
                                format!("U{}.{min}", child.members.len()),
                                comms.len(),
                            );
                            comms.push(Communicator {
                                name,
                                parent: None,
                                members: child.members.clone(),
                            });
                            comms.len() - 1
                        });
                        local[r].insert(child.local, g);
                        next[r] += 1;
                        progress = true;
                    }
                    Event::Created {
                        kind,
                        parent,
                        child,
                    } => {
                        let Some(&pg) = local[r].get(parent) else {
                            return Err(NamingError::UnknownParent {
                                rank: r as u32,
                                event: e,
                                local: *parent,
                            });
                        };
                        let key = if kind.over_parent() {
                            let s = seq[r].entry(pg).or_insert(0);
                            let k = Key::OverParent {
                                parent: pg,
                                seq: *s,
                            };
                            *s += 1;
                            k
                        } else {
                            let Some(c) = child else {
                                return Err(NamingError::Inconsistent {
                                    rank: r as u32,
                                    event: e,
                                    why: format!(
                                        "{kind:?} returned no communicator to one of its members"
                                    ),
                                });
                            };
                            let mut members = c.members.clone();
                            members.sort_unstable();
                            // intercomm_create joins two parents: match on members only.
                            let parent = if *kind == Kind::IntercommCreate {
                                usize::MAX
                            } else {
                                pg
                            };
                            let o = occ[r]
                                .entry((kind.letter(), parent, members.clone()))
                                .or_insert(0);
                            let k = Key::OverChild {
                                kind: kind.letter(),
                                parent,
                                members,
                                occurrence: *o,
                            };
                            *o += 1;
                            k
                        };
                        groups.entry(key.clone()).or_default().push(Arrival {
                            rank: r as u32,
                            event: e,
                            kind: *kind,
                            parent: pg,
                            count: count[r],
                            child: child.clone(),
                        });
                        if child.is_some() {
                            count[r] += 1;
                            waiting[r] = true;
                        }
                        next[r] += 1;
                        progress = true;
                        // Complete the group if everyone is there.
                        let expected = match &key {
                            Key::OverParent { parent, .. } => comms[*parent].members.len(),
                            Key::OverChild { members, .. } => members.len(),
                        };
                        if groups[&key].len() == expected {
                            let arrivals = groups.remove(&key).unwrap_or_default();
                            complete(&arrivals, &mut comms, &mut used, &mut local)?;
                            // Ranks that got MPI_COMM_NULL did not wait for this call (they
                            // may be waiting for a later one).
                            for a in arrivals.iter().filter(|a| a.child.is_some()) {
                                waiting[a.rank as usize] = false;
                            }
                        }
                    }
                }
            }
        }
        if !progress {
            break;
        }
    }
    for r in 0..n as usize {
        if waiting[r] || next[r] < logs[r].events.len() {
            // The first call of this rank that is still open.
            if let Some(a) = groups.values().flatten().find(|a| a.rank == r as u32) {
                return Err(NamingError::Unmatched {
                    rank: r as u32,
                    event: a.event,
                    what: format!("{:?}", a.kind),
                });
            }
        }
    }
    if let Some(a) = groups.values().flatten().next() {
        return Err(NamingError::Unmatched {
            rank: a.rank,
            event: a.event,
            what: format!("{:?}", a.kind),
        });
    }
    Ok(Naming { comms, local })
}

/// Names the communicators of one matched call and maps every participant's local id.
fn complete(
    arrivals: &[Arrival],
    comms: &mut Vec<Communicator>,
    used: &mut HashMap<String, usize>,
    local: &mut [BTreeMap<u32, usize>],
) -> Result<(), NamingError> {
    let top = arrivals.iter().map(|a| a.count).max().unwrap_or(1);
    // Distinct new communicators by member set, in order of their smallest world rank.
    let mut by_set: BTreeMap<Vec<u32>, Vec<&Arrival>> = BTreeMap::new();
    for a in arrivals {
        if let Some(c) = &a.child {
            if !c.members.contains(&a.rank) {
                return Err(NamingError::Inconsistent {
                    rank: a.rank,
                    event: a.event,
                    why: "the new communicator's members do not include the rank".into(),
                });
            }
            let mut s = c.members.clone();
            s.sort_unstable();
            by_set.entry(s).or_default().push(a);
        }
    }
    for (set, holders) in by_set {
        let first = holders[0];
        let Some(c) = &first.child else { continue };
        if holders.len() != set.len() {
            return Err(NamingError::Inconsistent {
                rank: first.rank,
                event: first.event,
                why: format!(
                    "{} of the {} members of a new communicator got it from the matched call",
                    holders.len(),
                    set.len()
                ),
            });
        }
        // An intercommunicator's members list each side's own group first: only the sets agree.
        for h in holders
            .iter()
            .filter(|_| first.kind != Kind::IntercommCreate)
        {
            if h.child.as_ref().map(|c| &c.members) != Some(&c.members) {
                return Err(NamingError::Inconsistent {
                    rank: h.rank,
                    event: h.event,
                    why: "members disagree on the new communicator's rank order".into(),
                });
            }
        }
        // The parent naming it: for intercomm_create, that of the smallest world rank.
        let lead = holders.iter().min_by_key(|h| h.rank).unwrap_or(&first);
        let parent = lead.parent;
        let mut suffix = format!("{}{top}", first.kind.letter());
        if first.kind.several() {
            let prank = |w: u32| comms[parent].members.iter().position(|&m| m == w);
            let k = set.iter().filter_map(|&w| prank(w)).min().unwrap_or(0);
            suffix.push_str(&format!(".{k}"));
        }
        let pname = comms[parent].name.clone();
        let short = format!("{}_{suffix}", strip_dot(&pname));
        let name = if used.contains_key(&short) {
            unique(used, format!("{pname}_{suffix}"), comms.len())
        } else {
            unique(used, short, comms.len())
        };
        let members = lead
            .child
            .as_ref()
            .map_or_else(|| c.members.clone(), |l| l.members.clone());
        comms.push(Communicator {
            name,
            parent: Some(pname),
            members,
        });
        let g = comms.len() - 1;
        for h in holders {
            if let Some(c) = &h.child {
                local[h.rank as usize].insert(c.local, g);
            }
        }
    }
    Ok(())
}

/// `W_s2.2` -> `W_s2`: a name without its last dot part.
fn strip_dot(name: &str) -> &str {
    let last = name.rsplit('_').next().unwrap_or(name);
    match last.rfind('.') {
        Some(i) => &name[..name.len() - (last.len() - i)],
        None => name,
    }
}

/// Registers `name`, with `#k` appended if taken (never for well-formed logs).
fn unique(used: &mut HashMap<String, usize>, name: String, index: usize) -> String {
    let mut candidate = name.clone();
    let mut k = 2;
    while used.contains_key(&candidate) {
        candidate = format!("{name}#{k}");
        k += 1;
    }
    used.insert(candidate.clone(), index);
    candidate
}
