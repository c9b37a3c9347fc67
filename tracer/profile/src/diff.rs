//! Where time moved between two profiles (measured vs simulated, two platforms, two collective
//! algorithms): per (communicator, operation), matched by name.
//!
//! Example: `W`/`MPI_Allreduce` sums 2.0 s over the ranks in A and 1.5 s in B: delta -0.5 s,
//! -25 %. Rows are sorted by |delta| (largest move first), ties by communicator and operation.

use std::collections::BTreeMap;

use crate::model::Profile;
use crate::view::{Cell, Table};

/// One (communicator, operation) in either profile.
#[derive(Debug, Clone, PartialEq)]
pub struct Change {
    /// Communicator name.
    pub comm: String,
    /// Operation.
    pub op: String,
    /// Calls in A and in B.
    pub calls: [u64; 2],
    /// Bytes (sent + received) in A and in B.
    pub bytes: [u64; 2],
    /// Time summed over ranks in A and in B, s.
    pub time_secs: [f64; 2],
}

impl Change {
    /// B - A, s.
    pub fn delta_secs(&self) -> f64 {
        self.time_secs[1] - self.time_secs[0]
    }
}

/// Every (communicator, operation) of A or B with its totals in both.
pub fn changes(a: &Profile, b: &Profile) -> Vec<Change> {
    let mut acc: BTreeMap<(String, String), Change> = BTreeMap::new();
    for (side, p) in [a, b].into_iter().enumerate() {
        for r in &p.rows {
            let c = acc
                .entry((r.comm.clone(), r.op.clone()))
                .or_insert_with(|| Change {
                    comm: r.comm.clone(),
                    op: r.op.clone(),
                    calls: [0; 2],
                    bytes: [0; 2],
                    time_secs: [0.0; 2],
                });
            c.calls[side] += r.stats.calls;
            c.bytes[side] += r.stats.bytes_sent + r.stats.bytes_recv;
            c.time_secs[side] += r.stats.time_sum_secs;
        }
    }
    let mut v: Vec<Change> = acc.into_values().collect();
    v.sort_by(|x, y| {
        y.delta_secs()
            .abs()
            .total_cmp(&x.delta_secs().abs())
            .then_with(|| x.comm.cmp(&y.comm))
            .then_with(|| x.op.cmp(&y.op))
    });
    v
}

/// The changes as a table (`rel_pct` is the delta relative to A; empty when A is 0).
pub fn table(changes: &[Change]) -> Table {
    let rows = changes
        .iter()
        .map(|c| {
            let rel = if c.time_secs[0] > 0.0 {
                Cell::Text(format!("{:+.2}", 100.0 * c.delta_secs() / c.time_secs[0]))
            } else {
                Cell::Text(String::new())
            };
            vec![
                Cell::Text(c.comm.clone()),
                Cell::Text(c.op.clone()),
                Cell::Int(c.calls[0]),
                Cell::Int(c.calls[1]),
                Cell::Int(c.bytes[0]),
                Cell::Int(c.bytes[1]),
                Cell::Secs(c.time_secs[0]),
                Cell::Secs(c.time_secs[1]),
                Cell::Secs(c.delta_secs()),
                rel,
            ]
        })
        .collect();
    Table {
        title: "diff (B - A)".into(),
        columns: vec![
            "comm", "op", "calls_a", "calls_b", "bytes_a", "bytes_b", "time_a_s", "time_b_s",
            "delta_s", "rel_pct",
        ],
        rows,
    }
}
