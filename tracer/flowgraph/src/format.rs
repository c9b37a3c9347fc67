//! The graph file (`timeless flowgraph -o OUT.tfg`), little-endian varints:
//!
//! ```text
//! "TLFG" u8 version=1
//! varint ranks, varint graphs
//! per graph:  varint nodes; per node: varint len, signature bytes
//!             varint entry (0: empty trace, else node + 1)
//!             per node: varint segments; per segment: varint pattern length,
//!                       (varint to, varint count) per run, varint repeat
//! per rank:   varint graph; per node of that graph: varint runs of volumes; per run:
//!             varint (length << 1 | integral), then the value: zigzag varint if integral
//!             (|v| < 2^53), else f64 LE
//!             u8 durations (0: none, 1: per node u8 present + min, max, total f64 LE)
//! ```
//!
//! Volumes are flops (or seconds of `sleep`): captured ones are whole flops, so most take a
//! varint of 3-5 bytes instead of 8, and runs of equal values (generated traces) one run.
//!
//! Every count read is checked against the bytes left before anything is allocated (each item
//! takes at least one byte), node ids against the node count, run counts and repeats >= 1; a
//! truncated or damaged file gives [`FlowGraphError::Corrupt`] with the byte offset.
//!
//! Patterns and volume runs are expanded when read, and a few bytes can state a huge
//! expansion (a pattern repeated 2^40 times). So a file may expand to at most
//! [`MAX_EXPANDED`] exit runs and volumes in all (512 MiB of memory; a trace that needs more has
//! over 2^25 branch changes or compute events, some 1 GB of text), and the memory is
//! reserved fallibly: a file beyond either limit is refused with its offset instead of
//! aborting the process on a failed allocation.

use std::path::Path;

use timeless_grammar::varint::{put_u64, Reader};

use crate::error::FlowGraphError;
use crate::graph::{RankGraph, Run};
use crate::pattern::{compress, Segment};
use crate::FlowGraphs;

/// File magic.
pub const MAGIC: &[u8; 4] = b"TLFG";
/// Format version.
pub const VERSION: u8 = 1;

/// Most exit runs and volumes a file may expand to, in all: 2^25, at most 512 MiB in memory (16
/// bytes per run, 8 per volume). A traced program's graphs are far smaller: a run is a change of
/// successor. (Issue 18, found by fuzzing: an 81-byte file asked for 133 million runs.)
pub const MAX_EXPANDED: u64 = 1 << 25;

/// The file's bytes.
pub fn encode(g: &FlowGraphs) -> Vec<u8> {
    let mut b = MAGIC.to_vec();
    b.push(VERSION);
    put_u64(&mut b, g.ranks.len() as u64);
    put_u64(&mut b, g.graphs.len() as u64);
    for graph in &g.graphs {
        put_u64(&mut b, graph.signatures.len() as u64);
        for s in &graph.signatures {
            put_u64(&mut b, s.len() as u64);
            b.extend_from_slice(s);
        }
        put_u64(&mut b, graph.entry.map_or(0, |e| u64::from(e) + 1));
        for exits in &graph.exits {
            let segs = compress(exits);
            put_u64(&mut b, segs.len() as u64);
            for s in &segs {
                put_u64(&mut b, s.pattern.len() as u64);
                for r in &s.pattern {
                    put_u64(&mut b, u64::from(r.to));
                    put_u64(&mut b, r.count);
                }
                put_u64(&mut b, s.repeat);
            }
        }
    }
    for r in &g.ranks {
        put_u64(&mut b, r.graph as u64);
        for v in &r.volumes {
            put_volumes(&mut b, v);
        }
        if r.durations.is_empty() {
            b.push(0);
        } else {
            b.push(1);
            for d in &r.durations {
                match d {
                    None => b.push(0),
                    Some(d) => {
                        b.push(1);
                        for x in [d.min_secs, d.max_secs, d.total_secs] {
                            b.extend_from_slice(&x.to_le_bytes());
                        }
                    }
                }
            }
        }
    }
    b
}

/// Largest magnitude stored as an integer (every integer below it is an exact f64).
const MAX_INTEGRAL: f64 = 9_007_199_254_740_992.0; // 2^53

fn integral(x: f64) -> bool {
    x.fract() == 0.0 && x.abs() < MAX_INTEGRAL && !(x == 0.0 && x.is_sign_negative())
}

fn put_volumes(b: &mut Vec<u8>, v: &[f64]) {
    let mut runs: Vec<(f64, u64)> = Vec::new();
    for &x in v {
        match runs.last_mut() {
            Some((y, n)) if y.to_bits() == x.to_bits() => *n += 1,
            _ => runs.push((x, 1)),
        }
    }
    put_u64(b, runs.len() as u64);
    for (x, n) in runs {
        let int = integral(x);
        put_u64(b, n << 1 | u64::from(int));
        if int {
            timeless_grammar::varint::put_i64(b, x as i64);
        } else {
            b.extend_from_slice(&x.to_le_bytes());
        }
    }
}

/// Parses a graph file's bytes (`path` names it in errors).
///
/// # Errors
/// [`FlowGraphError::Corrupt`] with the offset of the first byte that is not as expected.
pub fn decode(bytes: &[u8], path: &Path) -> Result<FlowGraphs, FlowGraphError> {
    let corrupt = |offset: usize, what: String| FlowGraphError::Corrupt {
        path: path.to_path_buf(),
        offset,
        what,
    };
    let g = |e: timeless_grammar::GrammarError| match e {
        timeless_grammar::GrammarError::Corrupt { offset, what } => corrupt(offset as usize, what),
        other => corrupt(0, other.to_string()),
    };
    if bytes.len() < 5 || &bytes[..4] != MAGIC {
        return Err(corrupt(
            0,
            "expected the magic \"TLFG\" of a timeless flow graph".into(),
        ));
    }
    if bytes[4] != VERSION {
        return Err(corrupt(
            4,
            format!("format version {}, expected {VERSION}", bytes[4]),
        ));
    }
    let mut r = Reader::new(&bytes[5..], 5);
    // A count of items that take at least `min` bytes each, checked against what is left.
    let count = |r: &mut Reader, what: &str, min: usize| -> Result<usize, FlowGraphError> {
        let at = r.offset();
        let n = r.varint(what).map_err(g)?;
        if n > (r.remaining() / min.max(1)) as u64 {
            return Err(corrupt(at, format!("{what} {n}: more than the bytes left")));
        }
        Ok(n as usize)
    };
    let nranks = count(&mut r, "rank count", 1)?;
    let ngraphs = count(&mut r, "graph count", 2)?;
    let mut graphs = Vec::with_capacity(ngraphs);
    // Exit runs and volumes expanded so far (at most MAX_EXPANDED).
    let mut expanded: u64 = 0;
    for _ in 0..ngraphs {
        let nodes = count(&mut r, "node count", 2)?;
        let mut signatures = Vec::with_capacity(nodes);
        for _ in 0..nodes {
            let len = count(&mut r, "signature length", 1)?;
            signatures.push(r.take(len, "signature").map_err(g)?.to_vec());
        }
        let at = r.offset();
        let entry = match r.varint("entry").map_err(g)? {
            0 => None,
            e if e <= nodes as u64 => Some((e - 1) as u32),
            e => return Err(corrupt(at, format!("entry node {} of {nodes}", e - 1))),
        };
        let mut exits = Vec::with_capacity(nodes);
        for _ in 0..nodes {
            let nseg = count(&mut r, "segment count", 3)?;
            let mut segs = Vec::with_capacity(nseg);
            for _ in 0..nseg {
                let plen = count(&mut r, "pattern length", 2)?;
                if plen == 0 {
                    return Err(corrupt(r.offset(), "an empty pattern".into()));
                }
                let mut pattern = Vec::with_capacity(plen);
                for _ in 0..plen {
                    let at = r.offset();
                    let to = r.varint("successor").map_err(g)?;
                    if to >= nodes as u64 {
                        return Err(corrupt(at, format!("successor {to} of {nodes} nodes")));
                    }
                    let at = r.offset();
                    let c = r.varint("run count").map_err(g)?;
                    if c == 0 {
                        return Err(corrupt(at, "a run of 0 visits".into()));
                    }
                    pattern.push(Run {
                        to: to as u32,
                        count: c,
                    });
                }
                let at = r.offset();
                let repeat = r.varint("repeat").map_err(g)?;
                if repeat == 0 {
                    return Err(corrupt(at, "a pattern repeated 0 times".into()));
                }
                segs.push(Segment { pattern, repeat });
            }
            // A few bytes can state a huge expansion: bounded file-wide (module docs).
            let total: u64 = segs
                .iter()
                .map(|s| s.repeat.saturating_mul(s.pattern.len() as u64))
                .fold(0u64, u64::saturating_add);
            expanded = expanded.saturating_add(total);
            if expanded > MAX_EXPANDED {
                return Err(corrupt(
                    r.offset(),
                    format!("{total} exit runs for one node: more than {MAX_EXPANDED} in the file"),
                ));
            }
            let mut runs = Vec::new();
            if runs.try_reserve_exact(total as usize).is_err() {
                return Err(corrupt(
                    r.offset(),
                    format!("{total} exit runs for one node: cannot allocate them"),
                ));
            }
            for seg in &segs {
                for _ in 0..seg.repeat {
                    runs.extend_from_slice(&seg.pattern);
                }
            }
            exits.push(runs);
        }
        let mut graph = RankGraph {
            signatures,
            entry,
            exits,
            visits: vec![0; nodes],
            volumes: vec![Vec::new(); nodes],
        };
        graph.visits = visits(&graph);
        graphs.push(graph);
    }
    let mut ranks = Vec::with_capacity(nranks);
    for _ in 0..nranks {
        let at = r.offset();
        let gi = r.varint("graph index").map_err(g)?;
        let Some(graph) = graphs.get(gi as usize) else {
            return Err(corrupt(at, format!("graph {gi} of {}", graphs.len())));
        };
        let mut volumes = Vec::with_capacity(graph.signatures.len());
        for node in 0..graph.signatures.len() {
            let nruns = count(&mut r, "volume run count", 2)?;
            let mut v = Vec::new();
            for _ in 0..nruns {
                let at = r.offset();
                let head = r.varint("volume run").map_err(g)?;
                let n = head >> 1;
                // A node has at most one volume per visit: that bounds what is allocated.
                if n == 0 || v.len() as u64 + n > graph.visits[node] {
                    return Err(corrupt(
                        at,
                        format!(
                            "a run of {n} volumes for node {node} of {} visits",
                            graph.visits[node]
                        ),
                    ));
                }
                expanded = expanded.saturating_add(n);
                if expanded > MAX_EXPANDED {
                    return Err(corrupt(
                        at,
                        format!("a run of {n} volumes: more than {MAX_EXPANDED} in the file"),
                    ));
                }
                if v.try_reserve(n as usize).is_err() {
                    return Err(corrupt(
                        at,
                        format!("a run of {n} volumes: cannot allocate them"),
                    ));
                }
                let x = if head & 1 == 1 {
                    r.zigzag("volume").map_err(g)? as f64
                } else {
                    f64::from_le_bytes(r.take(8, "volume").map_err(g)?.try_into().unwrap_or([0; 8]))
                };
                v.extend(std::iter::repeat_n(x, n as usize));
            }
            volumes.push(v);
        }
        let at = r.offset();
        let durations = match r.u8("durations flag").map_err(g)? {
            0 => Vec::new(),
            1 => {
                let mut d = Vec::with_capacity(graph.signatures.len());
                for _ in 0..graph.signatures.len() {
                    let at = r.offset();
                    d.push(match r.u8("duration flag").map_err(g)? {
                        0 => None,
                        1 => {
                            let mut x = [0f64; 3];
                            for v in &mut x {
                                *v = f64::from_le_bytes(
                                    r.take(8, "duration")
                                        .map_err(g)?
                                        .try_into()
                                        .unwrap_or([0; 8]),
                                );
                            }
                            Some(crate::Durations {
                                min_secs: x[0],
                                max_secs: x[1],
                                total_secs: x[2],
                            })
                        }
                        f => return Err(corrupt(at, format!("duration flag {f}"))),
                    });
                }
                d
            }
            f => return Err(corrupt(at, format!("durations flag {f}"))),
        };
        ranks.push(crate::RankEntry {
            graph: gi as usize,
            volumes,
            durations,
        });
    }
    if !r.is_empty() {
        return Err(corrupt(r.offset(), "bytes after the last rank".into()));
    }
    Ok(FlowGraphs {
        graphs,
        ranks,
        callsites: Default::default(),
    })
}

/// Visits of each node: its incoming edge counts, plus one for the entry.
pub fn visits(g: &RankGraph) -> Vec<u64> {
    let mut v = vec![0u64; g.signatures.len()];
    if let Some(e) = g.entry {
        v[e as usize] += 1;
    }
    for exits in &g.exits {
        for r in exits {
            v[r.to as usize] = v[r.to as usize].saturating_add(r.count);
        }
    }
    v
}
