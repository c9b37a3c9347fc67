//! Compressed exits (`002_*` §2.2): a branch node's run list as repeated patterns.
//!
//! Real codes alternate arms in regular ways (Fig. 4: ten `recv`s, ten `send`s, ten `recv`s...),
//! so a node's exit runs form a few patterns repeated many times. [`compress`] covers the run
//! list greedily from the left with [`Segment`]s: at each position the period p (1..=[`MAX_PERIOD`])
//! whose pattern repeats over the most runs, if it repeats at least twice, else one literal
//! run, merged with the literal runs around it. Example: runs a, b, a, b, a, b, c give
//! `[a b] x3, [c] x1`; expansion is exact.

use crate::graph::Run;

/// Longest pattern looked for.
pub const MAX_PERIOD: usize = 16;

/// `pattern` repeated `repeat` times.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Segment {
    /// The runs of one repetition (non-empty).
    pub pattern: Vec<Run>,
    /// Repetitions (>= 1).
    pub repeat: u64,
}

/// The run list as segments.
pub fn compress(runs: &[Run]) -> Vec<Segment> {
    let mut out: Vec<Segment> = Vec::new();
    let mut i = 0;
    while i < runs.len() {
        let mut best = (0usize, 1u64); // (period, repeats)
        for p in 1..=MAX_PERIOD.min(runs.len() - i) {
            let mut reps = 1u64;
            while i + (reps as usize + 1) * p <= runs.len()
                && runs[i..i + p] == runs[i + reps as usize * p..i + (reps as usize + 1) * p]
            {
                reps += 1;
            }
            if reps >= 2 && (reps as usize * p) > best.0 * best.1 as usize {
                best = (p, reps);
            }
        }
        if best.0 == 0 {
            // A literal run: extend the previous literal segment.
            match out.last_mut() {
                Some(s) if s.repeat == 1 => s.pattern.push(runs[i]),
                _ => out.push(Segment {
                    pattern: vec![runs[i]],
                    repeat: 1,
                }),
            }
            i += 1;
        } else {
            let (p, reps) = best;
            out.push(Segment {
                pattern: runs[i..i + p].to_vec(),
                repeat: reps,
            });
            i += p * reps as usize;
        }
    }
    out
}

/// The run list back.
pub fn expand(segments: &[Segment]) -> Vec<Run> {
    let mut out = Vec::new();
    for s in segments {
        for _ in 0..s.repeat {
            out.extend_from_slice(&s.pattern);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(to: u32, count: u64) -> Run {
        Run { to, count }
    }

    #[test]
    fn patterns_by_hand() {
        // Fig. 4: barrier -> recv x10, send x10, recv x10, send x10, recv x10, send x10: one
        // pattern [recv 10, send 10] repeated 3 times.
        let fig4: Vec<Run> = (0..6).map(|k| r(1 + k % 2, 10)).collect();
        let s = compress(&fig4);
        assert_eq!(
            s,
            [Segment {
                pattern: vec![r(1, 10), r(2, 10)],
                repeat: 3
            }]
        );
        assert_eq!(expand(&s), fig4);
        // a b a b a b c: [a b] x3 then the literal c.
        let v = [
            r(0, 1),
            r(1, 1),
            r(0, 1),
            r(1, 1),
            r(0, 1),
            r(1, 1),
            r(2, 4),
        ];
        let s = compress(&v);
        assert_eq!(s.len(), 2);
        assert_eq!((s[0].pattern.len(), s[0].repeat), (2, 3));
        assert_eq!(s[1].pattern, [r(2, 4)]);
        assert_eq!(expand(&s), v);
        // No repetition: one literal segment.
        let v = [r(0, 1), r(1, 2), r(2, 3)];
        assert_eq!(compress(&v).len(), 1);
        assert!(compress(&[]).is_empty());
    }
}
