//! Graphviz pictures of flow graphs: one `digraph` with a cluster per distinct graph (so one
//! picture holds them all), each labelled with the ranks it stands for; node labels with the
//! first rank's total time in the node when the graph comes from a timed trace; node size by visits, edge width by count (log scale), and on the exits
//! of branch nodes the sequence numbers and counts of §2.1 (`seq:count`, a compressed pattern
//! shown as `[seq..]xN`).

use std::fmt::Write as _;

use timeless_grammar::signature::rebuild;
use timeless_grammar::text::write_action;

use crate::pattern::compress;
use crate::FlowGraphs;

/// The DOT text of every distinct graph.
pub fn to_dot(g: &FlowGraphs) -> String {
    let mut out =
        String::from("digraph flowgraphs {\n  node [shape=box, fontname=\"sans-serif\"];\n");
    let n = g.ranks.len() as u32;
    for (gi, graph) in g.graphs.iter().enumerate() {
        let ranks: Vec<u32> = g
            .ranks
            .iter()
            .enumerate()
            .filter(|(_, e)| e.graph == gi)
            .map(|(r, _)| r as u32)
            .collect();
        let first = ranks.first().copied().unwrap_or(0);
        let _ = writeln!(out, "subgraph cluster_{gi} {{");
        let _ = writeln!(out, "  label=\"ranks {}\"; labelloc=t;", ranges(&ranks));
        let max_visits = graph.visits.iter().copied().max().unwrap_or(1).max(1) as f64;
        for (i, sig) in graph.signatures.iter().enumerate() {
            let label = node_label(g, sig, first, n).unwrap_or_else(|| format!("node {i}"));
            let v = graph.visits[i];
            let label = match g.ranks.get(first as usize).and_then(|e| e.durations.get(i)) {
                Some(Some(d)) => format!("{label}\\n{:.3e} s", d.total_secs),
                _ => label,
            };
            let size = 10.0 + 8.0 * (v as f64).ln_1p() / max_visits.ln_1p();
            let _ = writeln!(
                out,
                "  g{gi}n{i} [label=\"{}\\n{v}x\", fontsize={size:.1}];",
                label.replace('"', "'")
            );
        }
        for (from, exits) in graph.exits.iter().enumerate() {
            let mut totals: std::collections::BTreeMap<u32, u64> = Default::default();
            for r in exits {
                *totals.entry(r.to).or_default() += r.count;
            }
            let branch = totals.len() > 1;
            let segs = compress(exits);
            for (to, count) in totals {
                let width = 1.0 + (count as f64).ln_1p() / 2.0;
                let mut label = count.to_string();
                if branch {
                    // Sequence numbers of this edge's runs (1-based, over the expanded list).
                    let mut seq = 1u64;
                    let mut parts = Vec::new();
                    for s in &segs {
                        let hits: Vec<String> = s
                            .pattern
                            .iter()
                            .enumerate()
                            .filter(|(_, r)| r.to == to)
                            .map(|(k, r)| format!("{}:{}", seq + k as u64, r.count))
                            .collect();
                        if !hits.is_empty() {
                            if s.repeat > 1 {
                                parts.push(format!("[{}]x{}", hits.join(","), s.repeat));
                            } else {
                                parts.push(hits.join(","));
                            }
                        }
                        seq += s.repeat * s.pattern.len() as u64;
                    }
                    label = parts.join(" ");
                }
                let _ = writeln!(
                    out,
                    "  g{gi}n{from} -> g{gi}n{to} [label=\"{label}\", penwidth={width:.2}];"
                );
            }
        }
        let _ = writeln!(out, "}}");
    }
    out.push_str("}\n");
    out
}

/// The node label of signature `sig` as rank `rank` of `n` runs it (compute and sleep without
/// their volume); a call site is shown as its label in the graphs' call-site table
/// ([`FlowGraphs::callsites`]: `function (file:line)`), or as `@cs=<id>` without one.
pub fn node_label(g: &FlowGraphs, sig: &[u8], rank: u32, n: u32) -> Option<String> {
    let (a, comm, cs) = rebuild(sig, 0, rank, n.max(1), Some(0.0)).ok()?;
    if a.keyword() == "compute" || a.keyword() == "sleep" {
        return Some(a.keyword().to_string());
    }
    let mut l = String::new();
    write_action(&mut l, rank, &a, n.max(1)).ok()?;
    let l = l
        .trim()
        .trim_start_matches(|c: char| c.is_ascii_digit())
        .trim();
    let mut l = if comm != 0 {
        format!("{l} comm={comm}")
    } else {
        l.to_string()
    };
    if let Some(cs) = cs {
        match g.callsites.get(&cs) {
            Some(site) => {
                let _ = write!(l, " @ {site}");
            }
            None => {
                let _ = write!(l, " @cs={cs}");
            }
        }
    }
    Some(l)
}

/// The graphs as JSON for other tools: per distinct graph, its ranks, entry node, nodes (label,
/// visits) and each node's exit runs in sequence order (`{"to", "count"}`); volumes are left
/// out.
pub fn to_json(g: &FlowGraphs) -> String {
    use serde_json::{json, Value};
    let n = g.ranks.len() as u32;
    let graphs: Vec<Value> = g
        .graphs
        .iter()
        .enumerate()
        .map(|(gi, graph)| {
            let ranks: Vec<u32> = g
                .ranks
                .iter()
                .enumerate()
                .filter(|(_, e)| e.graph == gi)
                .map(|(r, _)| r as u32)
                .collect();
            let first = ranks.first().copied().unwrap_or(0);
            let nodes: Vec<Value> = graph
                .signatures
                .iter()
                .enumerate()
                .map(|(i, sig)| {
                    let exits: Vec<Value> = graph.exits[i]
                        .iter()
                        .map(|r| json!({"to": r.to, "count": r.count}))
                        .collect();
                    let d = g
                        .ranks
                        .get(first as usize)
                        .and_then(|e| e.durations.get(i).copied().flatten());
                    json!({
                        "id": i,
                        "label": node_label(g, sig, first, n).unwrap_or_else(|| format!("node {i}")),
                        "visits": graph.visits[i],
                        "exits": exits,
                        "seconds": d.map(|d| json!({
                            "min": d.min_secs, "max": d.max_secs, "total": d.total_secs
                        })),
                    })
                })
                .collect();
            json!({"ranks": ranks, "entry": graph.entry, "nodes": nodes})
        })
        .collect();
    let mut s =
        serde_json::to_string_pretty(&json!({"ranks": n, "graphs": graphs})).unwrap_or_default();
    s.push('\n');
    s
}

/// `0-3,5,7-9`.
fn ranges(v: &[u32]) -> String {
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while i < v.len() {
        let mut j = i;
        while j + 1 < v.len() && v[j + 1] == v[j] + 1 {
            j += 1;
        }
        out.push(if i == j {
            v[i].to_string()
        } else {
            format!("{}-{}", v[i], v[j])
        });
        i = j + 1;
    }
    out.join(",")
}
