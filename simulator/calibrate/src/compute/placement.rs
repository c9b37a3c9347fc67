//! Where a traced run's ranks ran, from its `trace-meta.json`: the hosts, the cores their ranks
//! could use, and the CPU each rank was bound to (the parent module's "Ranks sharing cores" and
//! "Ranks pinned to cores").
//!
//! Example: `"rank_hosts": ["a", "a", "a"]`, `"acquisition_mode": "folding: 3 ranks on 2 cores
//! (2 ranks per core)"`, `"per_rank_bound_cpu": [0, 1, 0]`: one host `a` of 2 cores, ranks 0
//! and 2 on CPU 0, rank 1 on CPU 1.

use std::path::Path;

/// Cores of a folded acquisition from its `acquisition_mode` text (`timeless trace`'s
/// `"folding: 8 ranks on 2 cores (4 ranks per core)"`); `Some(usize::MAX)` for a regular one
/// (one core per rank: nothing shared); `None` otherwise.
fn mode_cores(mode: &str) -> Option<usize> {
    if mode.starts_with("regular") {
        return Some(usize::MAX);
    }
    let rest = mode.strip_prefix("folding:")?;
    let (_, after) = rest.split_once(" on ")?;
    after
        .split_whitespace()
        .next()?
        .parse()
        .ok()
        .filter(|&c| c > 0)
}

/// Where a traced run's ranks ran ([`hosts_of`]).
pub(super) struct Placement {
    /// Per rank, the index of its host in `hosts`.
    pub(super) host_of_rank: Vec<usize>,
    /// Per host: its name and the cores its ranks could use.
    pub(super) hosts: Vec<(String, Option<usize>)>,
    /// Per rank, the CPU it was bound to ([`bound_cpus`]).
    pub(super) bound_cpus: Vec<Option<u32>>,
}

impl Placement {
    /// The groups of ranks that share cores, each with the cores they share (`None`:
    /// unknown): a pinned host's ranks by CPU (one core each), another host's ranks together
    /// on its cores. Example (module doc): `[([0, 2], Some(1)), ([1], Some(1))]`.
    pub(super) fn core_groups(&self) -> Vec<(Vec<usize>, Option<usize>)> {
        let nranks = self.host_of_rank.len();
        let mut groups = Vec::new();
        for (h, (_, cores)) in self.hosts.iter().enumerate() {
            let members: Vec<usize> = (0..nranks).filter(|&r| self.host_of_rank[r] == h).collect();
            if members.iter().all(|&r| self.bound_cpus[r].is_some()) {
                let mut cpus: Vec<u32> =
                    members.iter().filter_map(|&r| self.bound_cpus[r]).collect();
                cpus.sort_unstable();
                cpus.dedup();
                for c in cpus {
                    let on_c = members
                        .iter()
                        .copied()
                        .filter(|&r| self.bound_cpus[r] == Some(c));
                    groups.push((on_c.collect(), Some(1)));
                }
            } else {
                groups.push((members, *cores));
            }
        }
        groups
    }
}

/// Hosts of a traced run from its `trace-meta.json`: per rank the index of its host, and per
/// host its name and the cores its ranks could use: those of the acquisition mode (a folded
/// run is confined to ⌈ranks/K⌉ cores), at most the host's `cpus`. The ranks' own CPU counts
/// (`per_rank_allowed_cpus`) do not tell: ranks bound one per core each see one CPU. `None`
/// when the file is absent or lacks these fields: all ranks on one host, no sharing correction.
pub(super) fn hosts_of(dir: &Path, nranks: usize) -> Placement {
    let none = || Placement {
        host_of_rank: vec![0; nranks],
        hosts: vec![("?".to_string(), None)],
        bound_cpus: vec![None; nranks],
    };
    let Ok(text) = std::fs::read_to_string(dir.join("trace-meta.json")) else {
        return none();
    };
    let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) else {
        return none();
    };
    let names: Vec<String> = match v.get("rank_hosts").and_then(|h| h.as_array()) {
        Some(a) if a.len() == nranks => a
            .iter()
            .map(|x| x.as_str().unwrap_or("?").to_string())
            .collect(),
        _ => return none(),
    };
    let mode = v
        .get("acquisition_mode")
        .and_then(|m| m.as_str())
        .and_then(mode_cores);
    let host_cpus = |name: &str| -> Option<usize> {
        v.get("hosts")?
            .as_array()?
            .iter()
            .find(|h| h.get("name").and_then(|n| n.as_str()) == Some(name))?
            .get("cpus")?
            .as_u64()
            .filter(|&c| c > 0)
            .map(|c| c as usize)
    };
    let mut hosts: Vec<(String, Option<usize>)> = Vec::new();
    let mut of_rank = Vec::with_capacity(nranks);
    for name in &names {
        let h = match hosts.iter().position(|(n, _)| n == name) {
            Some(h) => h,
            None => {
                hosts.push((name.clone(), None));
                hosts.len() - 1
            }
        };
        hosts[h].1 = match (mode, host_cpus(name)) {
            (Some(m), Some(c)) => Some(m.min(c)),
            (Some(usize::MAX), None) => None,
            (m, c) => m.or(c),
        };
        of_rank.push(h);
    }
    let bound_cpus = bound_cpus(&v, &of_rank, &hosts);
    Placement {
        host_of_rank: of_rank,
        hosts,
        bound_cpus,
    }
}

/// Per rank, the CPU it was bound to, for the hosts whose ranks were all bound to one CPU
/// (module doc, "Ranks pinned to cores"): `per_rank_bound_cpu` (-1: not bound to one), or for
/// a folded trace written before that field whose ranks were each allowed one CPU, the
/// mapping of `timeless trace --pin`: rank i of a host's ranks on core i mod C.
fn bound_cpus(
    meta: &serde_json::Value,
    host_of_rank: &[usize],
    hosts: &[(String, Option<usize>)],
) -> Vec<Option<u32>> {
    let nranks = host_of_rank.len();
    let ints = |key: &str| -> Option<Vec<i64>> {
        let a = meta.get(key)?.as_array()?;
        let v: Vec<i64> = a.iter().filter_map(serde_json::Value::as_i64).collect();
        (v.len() == nranks && a.len() == nranks).then_some(v)
    };
    let mut cpus: Vec<Option<u32>> = match ints("per_rank_bound_cpu") {
        Some(v) => v.iter().map(|&c| u32::try_from(c).ok()).collect(),
        None => {
            let folded = meta
                .get("acquisition_mode")
                .and_then(|m| m.as_str())
                .is_some_and(|m| m.starts_with("folding"));
            let one_each = ints("per_rank_allowed_cpus").is_some_and(|v| v.iter().all(|&c| c == 1));
            if !(folded && one_each) {
                return vec![None; nranks];
            }
            let mut seen = vec![0usize; hosts.len()];
            host_of_rank
                .iter()
                .map(|&h| {
                    let i = seen[h];
                    seen[h] += 1;
                    let cores = hosts[h].1?;
                    u32::try_from(i % cores.max(1)).ok()
                })
                .collect()
        }
    };
    // A host counts per core only if every one of its ranks was bound to one CPU.
    for h in 0..hosts.len() {
        let members = || (0..nranks).filter(|&r| host_of_rank[r] == h);
        if members().any(|r| cpus[r].is_none()) {
            for r in members() {
                cpus[r] = None;
            }
        }
    }
    cpus
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cores_of_the_acquisition_mode() {
        assert_eq!(
            mode_cores("folding: 8 ranks on 2 cores (4 ranks per core)"),
            Some(2)
        );
        assert_eq!(
            mode_cores("folding: 2 ranks on 1 core (2 ranks per core)"),
            Some(1)
        );
        assert_eq!(
            mode_cores("regular: 2 ranks, one per core"),
            Some(usize::MAX)
        );
        assert_eq!(mode_cores("scattered: 4 ranks over the hosts of h"), None);
    }
}
