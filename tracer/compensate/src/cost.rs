//! The two platform constants of `004_*` §3: the per-event measurement overhead `O` and the
//! buffer copy time `C(size) × size`.

/// Per-byte copy time by message size: `004_*` §3.2 measures "a table of per byte copy times"
/// for several message sizes and looks it up during analysis.
#[derive(Debug, Clone, PartialEq)]
pub struct CopyCost {
    /// `(min_bytes, secs_per_byte)` sorted by `min_bytes`: a message of `s` bytes uses the entry
    /// with the largest `min_bytes <= s` (none: free).
    table: Vec<(u64, f64)>,
}

impl CopyCost {
    /// Copies cost nothing (the network-only model).
    pub fn free() -> Self {
        CopyCost { table: Vec::new() }
    }

    /// One per-byte cost for every size.
    pub fn uniform(secs_per_byte: f64) -> Self {
        CopyCost {
            table: vec![(0, secs_per_byte.max(0.0))],
        }
    }

    /// A table of `(min_bytes, secs_per_byte)` entries, in any order.
    pub fn table(mut entries: Vec<(u64, f64)>) -> Self {
        entries.sort_by_key(|e| e.0);
        for e in &mut entries {
            e.1 = e.1.max(0.0);
        }
        CopyCost { table: entries }
    }

    /// `C(size) × size`: seconds to copy a message of `bytes` bytes once.
    pub fn copy_secs(&self, bytes: u64) -> f64 {
        let idx = self.table.partition_point(|e| e.0 <= bytes);
        match idx {
            0 => 0.0,
            i => self.table[i - 1].1 * bytes as f64,
        }
    }
}

/// Inputs of the compensation.
#[derive(Debug, Clone, PartialEq)]
pub struct Params {
    /// Per-event overhead `O` of each rank, seconds (`004_*` eq. 1). A rank beyond the vector
    /// uses its last entry; an empty vector means 0.
    pub overhead_secs: Vec<f64>,
    /// Buffer copy cost.
    pub copy: CopyCost,
    /// Rule for the exits of n-to-n collectives.
    pub n_to_n: NToNRule,
}

impl Params {
    /// `O` for rank `r`, seconds.
    pub fn overhead_of(&self, r: u32) -> f64 {
        self.overhead_secs
            .get(r as usize)
            .or(self.overhead_secs.last())
            .copied()
            .unwrap_or(0.0)
            .max(0.0)
    }
}

/// Which of `004_*`'s two n-to-n formulas sets the exits.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum NToNRule {
    /// Eq. 13: `exit_a^i = enter_a^k + (exit_m^i - enter_m^j)`, each member's own
    /// synchronisation time.
    #[default]
    PerRank,
    /// Eq. 12: `exit_a^i = enter_a^k + (exit_m^l - enter_m^j)`, one common exit, `l` being the
    /// member with the earliest measured exit.
    Common,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_table_uses_the_largest_entry_not_above_the_size() {
        let c = CopyCost::table(vec![(1024, 1e-10), (0, 4e-10)]);
        assert_eq!(c.copy_secs(0), 0.0);
        assert!((c.copy_secs(100) - 4e-8).abs() < 1e-20);
        assert!((c.copy_secs(2048) - 2048.0 * 1e-10).abs() < 1e-20);
        assert_eq!(CopyCost::free().copy_secs(1 << 20), 0.0);
        assert_eq!(CopyCost::table(vec![(10, 1.0)]).copy_secs(5), 0.0);
    }

    #[test]
    fn overhead_falls_back_to_the_last_entry() {
        let p = Params {
            overhead_secs: vec![1e-6, 2e-6],
            copy: CopyCost::free(),
            n_to_n: NToNRule::PerRank,
        };
        assert_eq!(p.overhead_of(0), 1e-6);
        assert_eq!(p.overhead_of(5), 2e-6);
    }
}
