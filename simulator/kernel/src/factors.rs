//! Piecewise size-dependent parameters of SMPI: `smpi/bw-factor`, `smpi/lat-factor` and the
//! software overheads `smpi/os`, `smpi/or`, `smpi/ois` (SimGrid 3.32 `src/smpi/internals/smpi_utils.cpp`,
//! reference §4.3 and §6.1).
//!
//! Syntax: `thr:v1[:v2...];thr:v1...`, entries separated by `;`, each a byte threshold followed by
//! one or more values. Entries are sorted by threshold.

use std::fmt;

/// One `thr:values...` entry: `first` and `second` repeat the first two values (0 when absent)
/// so that a lookup reads the entry alone.
#[derive(Debug, Clone, PartialEq)]
struct Entry {
    threshold_bytes: f64,
    first: f64,
    second: f64,
    values: Vec<f64>,
}

/// A piecewise table keyed by message size in bytes.
#[derive(Debug, Clone, PartialEq)]
pub struct PiecewiseFactor {
    entries: Vec<Entry>,
    /// Every value is zero (kept from parsing: asked once per message).
    zero: bool,
}

/// Why a piecewise string was rejected.
#[derive(Debug, Clone, PartialEq, thiserror::Error)]
#[error("bad piecewise value '{text}': {why} (expected 'threshold:value[:value];...', e.g. '0:1;65536:0.9')")]
pub struct FactorError {
    /// The rejected text.
    pub text: String,
    /// What is wrong.
    pub why: String,
}

impl PiecewiseFactor {
    /// SimGrid 3.32's default `smpi/bw-factor`.
    pub const DEFAULT_BW: &'static str = "65472:0.940694;15424:0.697866;9376:0.58729;5776:1.08739;3484:0.77493;1426:0.608902;732:0.341987;257:0.338112;0:0.812084";
    /// SimGrid 3.32's default `smpi/lat-factor`.
    pub const DEFAULT_LAT: &'static str = "65472:11.6436;15424:3.48845;9376:2.59299;5776:2.18796;3484:1.88101;1426:1.61075;732:1.9503;257:1.95341;0:2.01467";
    /// Default `smpi/os`, `smpi/or`, `smpi/ois`: zero cost.
    pub const DEFAULT_OVERHEAD: &'static str = "0:0:0:0:0";

    /// Parses `text`, requiring at least `min_values` values per entry.
    ///
    /// # Errors
    /// A malformed entry, a non-numeric field, or too few values.
    pub fn parse(text: &str, min_values: usize) -> Result<Self, FactorError> {
        let err = |why: String| FactorError {
            text: text.to_string(),
            why,
        };
        let mut entries = Vec::new();
        for part in text.split(';').map(str::trim).filter(|p| !p.is_empty()) {
            let mut fields = part.split(':');
            let thr = fields.next().unwrap_or_default().trim();
            let threshold_bytes: f64 = thr
                .parse()
                .map_err(|_| err(format!("threshold '{thr}' is not a number")))?;
            let values = fields
                .map(|f| {
                    f.trim()
                        .parse::<f64>()
                        .map_err(|_| err(format!("value '{f}' is not a number")))
                })
                .collect::<Result<Vec<_>, _>>()?;
            if values.len() < min_values {
                return Err(err(format!(
                    "entry '{part}' needs {min_values} value(s) after the threshold"
                )));
            }
            if values
                .iter()
                .chain([&threshold_bytes])
                .any(|v| !v.is_finite())
            {
                return Err(err(format!("entry '{part}' is not finite")));
            }
            entries.push(Entry {
                threshold_bytes,
                first: values.first().copied().unwrap_or(0.0),
                second: values.get(1).copied().unwrap_or(0.0),
                values,
            });
        }
        if entries.is_empty() {
            return Err(err("no entry".into()));
        }
        entries.sort_by(|a, b| a.threshold_bytes.total_cmp(&b.threshold_bytes));
        let zero = entries.iter().all(|e| e.values.iter().all(|&v| v == 0.0));
        Ok(PiecewiseFactor { entries, zero })
    }

    /// Factor for a message of `bytes` (the network size P = S + 16): the value of the largest
    /// threshold strictly below `bytes`, or 1 if none is (reference §6.1, verified at P = 257/258).
    pub fn factor(&self, bytes: f64) -> f64 {
        self.below(bytes).map_or(1.0, |e| e.first)
    }

    /// The entry of largest threshold strictly below `bytes` (the last of equal thresholds),
    /// by binary search over the sorted entries.
    #[inline]
    fn below(&self, bytes: f64) -> Option<&Entry> {
        let n = self.entries.partition_point(|e| e.threshold_bytes < bytes);
        n.checked_sub(1).map(|i| &self.entries[i])
    }

    /// Overhead in seconds for a message of `bytes` (the raw size S): `a + b·S` from the entry with
    /// the largest threshold strictly below S, else the lowest entry (reference §4.3).
    pub fn overhead_secs(&self, bytes: f64) -> f64 {
        if self.zero {
            return 0.0;
        }
        let e = self.below(bytes).unwrap_or(&self.entries[0]);
        e.first + e.second * bytes
    }

    /// True when every value is zero (an overhead table that costs nothing).
    pub fn is_zero(&self) -> bool {
        self.zero
    }
}

impl fmt::Display for PiecewiseFactor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        for (i, e) in self.entries.iter().rev().enumerate() {
            if i > 0 {
                f.write_str(";")?;
            }
            write!(f, "{}", e.threshold_bytes)?;
            for v in &e.values {
                write!(f, ":{v}")?;
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Reference §6.1: P = 257 uses the `0` entry, P = 258 the `257` entry (S = 241 / 242).
    #[test]
    fn strict_threshold_lookup() {
        let bw = PiecewiseFactor::parse(PiecewiseFactor::DEFAULT_BW, 1).unwrap();
        assert_eq!(bw.factor(257.0), 0.812084);
        assert_eq!(bw.factor(258.0), 0.338112);
        assert_eq!(bw.factor(1016.0), 0.341987);
        assert_eq!(bw.factor(1_000_016.0), 0.940694);
        assert_eq!(bw.factor(0.0), 1.0);
        let lat = PiecewiseFactor::parse(PiecewiseFactor::DEFAULT_LAT, 1).unwrap();
        assert_eq!(lat.factor(1016.0), 1.9503);
    }

    /// The binary search picks the entry of the rule "largest threshold strictly below P": at,
    /// just above and just below every threshold of the default tables, and the last of equal
    /// thresholds (`100:2;100:3` gives 3 above 100, as a scan from the end finds it first).
    #[test]
    fn lookup_at_every_threshold() {
        let bw = PiecewiseFactor::parse(PiecewiseFactor::DEFAULT_BW, 1).unwrap();
        // (P, factor) by hand from DEFAULT_BW.
        for (p, want) in [
            (0.5, 0.812084),
            (257.0, 0.812084),
            (257.5, 0.338112),
            (732.0, 0.338112),
            (733.0, 0.341987),
            (1426.0, 0.341987),
            (1427.0, 0.608902),
            (3485.0, 0.77493),
            (5777.0, 1.08739),
            (9377.0, 0.58729),
            (15424.0, 0.58729),
            (15425.0, 0.697866),
            (65472.0, 0.697866),
            (65473.0, 0.940694),
            (f64::INFINITY, 0.940694),
        ] {
            assert_eq!(bw.factor(p), want, "P = {p}");
        }
        assert_eq!(bw.factor(-1.0), 1.0);
        let dup = PiecewiseFactor::parse("0:1;100:2;100:3;200:4", 1).unwrap();
        assert_eq!(dup.factor(100.0), 1.0);
        assert_eq!(dup.factor(150.0), 3.0);
        assert_eq!(dup.factor(201.0), 4.0);
        let os = PiecewiseFactor::parse("100:1:0;100:2:0", 2).unwrap();
        assert_eq!(os.overhead_secs(101.0), 2.0);
        assert_eq!(os.overhead_secs(100.0), 1.0);
    }

    /// Reference §4.3: `0:1e-3:1e-6` costs 1e-3 + 1e-6 × 1000 = 2 ms for S = 1000.
    #[test]
    fn overhead_formula() {
        let os = PiecewiseFactor::parse("0:1e-3:1e-6", 2).unwrap();
        assert!((os.overhead_secs(1000.0) - 2e-3).abs() < 1e-15);
        // No threshold strictly below S = 0: the lowest entry applies.
        assert!((os.overhead_secs(0.0) - 1e-3).abs() < 1e-15);
        assert!(PiecewiseFactor::parse(PiecewiseFactor::DEFAULT_OVERHEAD, 2)
            .unwrap()
            .is_zero());
    }

    #[test]
    fn rejects_bad_text() {
        assert!(PiecewiseFactor::parse("1", 1)
            .unwrap_err()
            .why
            .contains("needs 1 value"));
        assert!(PiecewiseFactor::parse("0:x", 1)
            .unwrap_err()
            .why
            .contains("'x' is not a number"));
        assert!(PiecewiseFactor::parse("", 1).is_err());
    }
}
