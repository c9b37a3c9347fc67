//! Piecewise-linear least-squares fit with automatically placed breakpoints.
//!
//! Seed 003 §5 instantiates SimGrid's MPI network model "for 3 segments, leading to 8
//! parameters": two segment boundaries, and a latency and a bandwidth per segment. SimGrid's old
//! `calibrate_piecewise.py` took the boundaries from the user; here they are chosen by least
//! squares, as Cornebize's automatic segmentation (SimGrid 3.32 docs) does.
//!
//! # Model
//! Points `(S_i, t_i)` sorted by size, with `x_i = S_i + offset` (`offset` = 16 bytes for network
//! times, SimGrid's envelope; 0 for per-call overheads). A fit with K segments splits the sorted
//! points into K contiguous runs; run k is fitted by `t = a_k + b_k · x`.
//!
//! # Criterion
//! Relative least squares: each run minimises `Σ w_i (a + b·x_i − t_i)²` with `w_i = 1/s_i²`,
//! `s_i` the local level of the times (median of point i and its two neighbours in size order).
//! Ping-pong times span four decades (µs to ms); with plain least squares the largest sizes
//! would decide everything. Weighting by a point's own time `1/t_i²` would be plain relative
//! error, but a single lucky low sample then outweighs its neighbours many times over. Lines are constrained to `a ≥ 0` and
//! `b ≥ 0` (a negative latency or bandwidth cannot be written as a SimGrid factor): when the free
//! optimum violates one, the best line on the boundary (`a = 0` or `b = 0`) is taken.
//!
//! # Breakpoint search
//! Dynamic programming over the sorted sizes: `best[k][j]` = least total cost of fitting points
//! `0..=j` with k runs = `min_i best[k−1][i−1] + cost(i..=j)`. Each run holds at least
//! `min_points` points, and no run may straddle a forced break (a size at which a new run must
//! start, e.g. the eager/rendezvous switch). Cost: O(K·n²) run evaluations of O(n) each; n is
//! a few dozen sizes. Ties keep the earliest breakpoint, so the result is deterministic.
//!
//! A companion series (`FitOptions::companion_points`: the network calibration passes the
//! bidirectional exchange) adds to each run's cost the relative least-squares cost of its own
//! line over its sizes in the run's range `[S_i, S_j]` (weights from its own neighbours, as
//! above): a break then goes where both series bend. A protocol switch moves both the one-way
//! time and the exchange, but the ping-pong alone can hide it in its noise: on the EPYC
//! machine (validation/calibration/README.md) vader's 4 KiB switch raises the one-way time by
//! 6 % (4032 → 4096 B, within the scatter of the sizes around it) and the exchange by 22 %;
//! fitted alone, the ping-pong put that break at 6144 B.

use crate::CalibrateError;

/// Options of [`fit_piecewise`].
#[derive(Debug, Clone, PartialEq)]
pub struct FitOptions {
    /// Number of segments K (exactly; seed 003 uses 3).
    pub segments: usize,
    /// Minimum number of distinct sizes per segment (>= 2; 3 makes each line over-determined).
    pub min_points: usize,
    /// Added to each size before fitting, in bytes (16 for network times: SimGrid's model is
    /// given P = S + 16, reference §6.1).
    pub offset_bytes: f64,
    /// Sizes (bytes) at which a segment must start, when they fall inside the measured range.
    pub forced_breaks_bytes: Vec<u64>,
    /// A second series `(size bytes, seconds)` measured across the same protocol regimes (the
    /// bidirectional exchange of the network calibration), empty by default. When given, the
    /// cost of a run is its own line's plus the companion's line's over the companion's sizes
    /// in the run's size range (module docs, "Breakpoint search"); the segments' lines are the
    /// primary series' alone.
    pub companion_points: Vec<(u64, f64)>,
}

impl Default for FitOptions {
    fn default() -> Self {
        FitOptions {
            segments: 3,
            min_points: 3,
            offset_bytes: 0.0,
            forced_breaks_bytes: Vec::new(),
            companion_points: Vec::new(),
        }
    }
}

/// One fitted segment: `t = intercept_secs + slope_secs_per_byte · (S + offset)` for sizes S in
/// `first_size_bytes..=last_size_bytes` (and up to the next segment's first size).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Segment {
    /// Smallest measured size of the segment, bytes.
    pub first_size_bytes: u64,
    /// Largest measured size of the segment, bytes.
    pub last_size_bytes: u64,
    /// `a`, seconds (the time of a zero-byte message, offset included).
    pub intercept_secs: f64,
    /// `b`, seconds per byte (the inverse of the segment's bandwidth).
    pub slope_secs_per_byte: f64,
    /// Number of sizes fitted.
    pub points: usize,
}

/// A piecewise-linear fit.
#[derive(Debug, Clone, PartialEq)]
pub struct PiecewiseFit {
    /// The offset the fit was made with, bytes.
    pub offset_bytes: f64,
    /// Segments in increasing size order.
    pub segments: Vec<Segment>,
    /// Root mean square of the relative residuals `(fit − t)/t` over all points.
    pub relative_rms: f64,
}

impl PiecewiseFit {
    /// Index of the segment that covers `size_bytes`: the last one whose first size is <= it
    /// (the first segment below the measured range).
    pub fn segment_index(&self, size_bytes: u64) -> usize {
        self.segments
            .iter()
            .rposition(|s| s.first_size_bytes <= size_bytes)
            .unwrap_or(0)
    }

    /// Fitted time in seconds at `size_bytes`.
    pub fn predict_secs(&self, size_bytes: u64) -> f64 {
        let s = &self.segments[self.segment_index(size_bytes)];
        s.intercept_secs + s.slope_secs_per_byte * (size_bytes as f64 + self.offset_bytes)
    }
}

/// Weighted sums of one run, centred for numerical stability.
struct Line {
    a: f64,
    b: f64,
    cost: f64,
}

/// Relative weights `1 / s_i²`, where `s_i` is the median of the times of point i and its two
/// neighbours in size order (the mean of the two at either end). Weighting by a point's own time
/// would give a low outlier (a lucky sample) a huge weight; its neighbours' level does not.
pub(crate) fn relative_weights(times: &[f64]) -> Vec<f64> {
    let n = times.len();
    (0..n)
        .map(|i| {
            let s = if n == 1 {
                times[0]
            } else if i == 0 || i == n - 1 {
                let j = if i == 0 { 1 } else { n - 2 };
                (times[i] + times[j]) / 2.0
            } else {
                let mut w = [times[i - 1], times[i], times[i + 1]];
                w.sort_by(f64::total_cmp);
                w[1]
            };
            1.0 / s.abs().max(1e-15).powi(2)
        })
        .collect()
}

/// Size-sorted `(size bytes, seconds)` points as the line fit reads them: `(size + offset_bytes,
/// seconds, relative weight)`, weights from [`relative_weights`].
fn weighted_points(sorted: &[(u64, f64)], offset_bytes: f64) -> Vec<(f64, f64, f64)> {
    let times: Vec<f64> = sorted.iter().map(|p| p.1).collect();
    sorted
        .iter()
        .zip(relative_weights(&times))
        .map(|(&(s, t), w)| (s as f64 + offset_bytes, t, w))
        .collect()
}

/// Constrained relative least-squares line through `pts` (x, t); see the module docs.
fn fit_line(pts: &[(f64, f64, f64)]) -> Line {
    let cost = |a: f64, b: f64| -> f64 {
        pts.iter()
            .map(|&(x, t, w)| w * (a + b * x - t).powi(2))
            .sum()
    };
    let sw: f64 = pts.iter().map(|p| p.2).sum();
    let mx = pts.iter().map(|&(x, _, w)| w * x).sum::<f64>() / sw;
    let my = pts.iter().map(|&(_, t, w)| w * t).sum::<f64>() / sw;
    let sxx: f64 = pts.iter().map(|&(x, _, w)| w * (x - mx).powi(2)).sum();
    let sxy: f64 = pts.iter().map(|&(x, t, w)| w * (x - mx) * (t - my)).sum();
    if sxx > 0.0 {
        let b = sxy / sxx;
        let a = my - b * mx;
        if a >= 0.0 && b >= 0.0 {
            return Line {
                a,
                b,
                cost: cost(a, b),
            };
        }
    }
    // Boundary candidates: b = 0 (a = weighted mean), and a = 0 (line through the origin).
    let mut best = Line {
        a: my.max(0.0),
        b: 0.0,
        cost: cost(my.max(0.0), 0.0),
    };
    let swxx: f64 = pts.iter().map(|&(x, _, w)| w * x * x).sum();
    if swxx > 0.0 {
        let b = pts.iter().map(|&(x, t, w)| w * x * t).sum::<f64>() / swxx;
        if b >= 0.0 {
            let c = cost(0.0, b);
            if c < best.cost {
                best = Line { a: 0.0, b, cost: c };
            }
        }
    }
    best
}

/// Fits `points` (size in bytes, time in seconds; distinct sizes, any order) with
/// `opts.segments` linear segments; see the module docs for the criterion and the search.
///
/// # Errors
/// [`CalibrateError::TooFewSizes`] when there are fewer than `segments × min_points` sizes (or a
/// duplicated size), [`CalibrateError::Invalid`] for a non-finite or negative time, zero segments,
/// or forced breaks that leave no admissible split.
pub fn fit_piecewise(
    points: &[(u64, f64)],
    opts: &FitOptions,
) -> Result<PiecewiseFit, CalibrateError> {
    let k_max = opts.segments;
    let min_pts = opts.min_points.max(2);
    if k_max == 0 {
        return Err(CalibrateError::Invalid {
            what: "a piecewise fit needs at least 1 segment".into(),
        });
    }
    let mut sorted = points.to_vec();
    sorted.sort_by_key(|p| p.0);
    if sorted.windows(2).any(|w| w[0].0 == w[1].0) {
        return Err(CalibrateError::Invalid {
            what: "piecewise fit: sizes must be distinct (give per-size medians)".into(),
        });
    }
    if let Some(&(s, t)) = sorted.iter().find(|p| !p.1.is_finite() || p.1 < 0.0) {
        return Err(CalibrateError::Invalid {
            what: format!("piecewise fit: time {t:e} s at {s} B is negative or not finite"),
        });
    }
    let n = sorted.len();
    let needed = k_max * min_pts;
    if n < needed {
        return Err(CalibrateError::TooFewSizes {
            what: format!("a {k_max}-segment fit with {min_pts} sizes per segment"),
            found: n,
            needed,
        });
    }
    let xy = weighted_points(&sorted, opts.offset_bytes);
    // A run i..=j is admissible if long enough and no forced break lies in (size_i, size_j].
    let admissible = |i: usize, j: usize| {
        j + 1 - i >= min_pts
            && !opts
                .forced_breaks_bytes
                .iter()
                .any(|&f| sorted[i].0 < f && f <= sorted[j].0)
    };
    let mut companion = opts.companion_points.clone();
    companion.sort_by_key(|p| p.0);
    let companion_xy = weighted_points(&companion, opts.offset_bytes);
    // The companion's points in the size range of run i..=j: [lo, hi).
    let companion_range = |i: usize, j: usize| {
        let lo = companion.partition_point(|p| p.0 < sorted[i].0);
        let hi = companion.partition_point(|p| p.0 <= sorted[j].0);
        (lo, hi)
    };
    let mut run_cost = vec![vec![f64::INFINITY; n]; n];
    for i in 0..n {
        for j in i..n {
            if admissible(i, j) {
                let (lo, hi) = companion_range(i, j);
                let extra = if hi > lo + 1 {
                    fit_line(&companion_xy[lo..hi]).cost
                } else {
                    0.0
                };
                run_cost[i][j] = fit_line(&xy[i..=j]).cost + extra;
            }
        }
    }
    // best[k][j]: k+1 runs covering 0..=j; from[k][j]: start of the last run.
    let mut best = vec![vec![f64::INFINITY; n]; k_max];
    let mut from = vec![vec![0usize; n]; k_max];
    for j in 0..n {
        best[0][j] = run_cost[0][j];
    }
    for k in 1..k_max {
        for j in 0..n {
            for i in 1..=j {
                let c = best[k - 1][i - 1] + run_cost[i][j];
                if c < best[k][j] {
                    best[k][j] = c;
                    from[k][j] = i;
                }
            }
        }
    }
    if !best[k_max - 1][n - 1].is_finite() {
        return Err(CalibrateError::Invalid {
            what: format!(
                "no {k_max}-segment split of the {n} sizes respects the forced breaks {:?} with {min_pts} sizes per segment",
                opts.forced_breaks_bytes
            ),
        });
    }
    let mut starts = vec![0usize; k_max];
    let mut j = n - 1;
    for k in (1..k_max).rev() {
        starts[k] = from[k][j];
        j = starts[k] - 1;
    }
    let mut segments = Vec::with_capacity(k_max);
    let mut sq = 0.0;
    for k in 0..k_max {
        let i = starts[k];
        let j = if k + 1 < k_max {
            starts[k + 1] - 1
        } else {
            n - 1
        };
        let line = fit_line(&xy[i..=j]);
        sq += line.cost;
        segments.push(Segment {
            first_size_bytes: sorted[i].0,
            last_size_bytes: sorted[j].0,
            intercept_secs: line.a,
            slope_secs_per_byte: line.b,
            points: j + 1 - i,
        });
    }
    Ok(PiecewiseFit {
        offset_bytes: opts.offset_bytes,
        segments,
        relative_rms: (sq / n as f64).sqrt(),
    })
}

/// Fits one constrained line (`a ≥ 0`, `b ≥ 0`, relative least squares) over `points` whose
/// sizes lie in `first..=last`, returning `(intercept_secs, slope_secs_per_byte)` for
/// `t = a + b·(S + offset)`; `None` when no point is in range. With a single point the line is
/// flat through it.
pub fn fit_range(
    points: &[(u64, f64)],
    first: u64,
    last: u64,
    offset_bytes: f64,
) -> Option<(f64, f64)> {
    let mut in_range: Vec<(u64, f64)> = points
        .iter()
        .copied()
        .filter(|p| p.0 >= first && p.0 <= last)
        .collect();
    in_range.sort_by_key(|p| p.0);
    let xy = weighted_points(&in_range, offset_bytes);
    match xy.len() {
        0 => None,
        1 => Some((xy[0].1, 0.0)),
        _ => {
            let l = fit_line(&xy);
            Some((l.a, l.b))
        }
    }
}

/// Constrained least-squares line (`a ≥ 0`, `b ≥ 0`) through weighted points `(x, t, w)`,
/// minimising `Σ w·(a + b·x − t)²` (the same solver as the segments': the free optimum, else
/// the better of the flat line and the line through the origin). `None` without points; one
/// point gives the flat line through it.
pub fn fit_weighted_line(points: &[(f64, f64, f64)]) -> Option<(f64, f64)> {
    match points.len() {
        0 => None,
        1 => Some((points[0].1.max(0.0), 0.0)),
        _ => {
            let l = fit_line(points);
            Some((l.a, l.b))
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn close(a: f64, b: f64, rel: f64) -> bool {
        (a - b).abs() <= rel * b.abs().max(1e-300)
    }

    /// Hand-built data: three exact lines with jumps between them.
    /// Segment 1 (S = 1, 2, 4, 8): t = 1e-6 + 1e-9·S.
    /// Segment 2 (S = 64, 128, 256, 512): t = 5e-6 + 5e-10·S.
    /// Segment 3 (S = 4096 ... 32768): t = 20e-6 + 1e-10·S.
    /// The only zero-cost 3-split is the true one, so the fit must recover it exactly.
    #[test]
    fn recovers_three_exact_segments() {
        let mut pts = Vec::new();
        for s in [1u64, 2, 4, 8] {
            pts.push((s, 1e-6 + 1e-9 * s as f64));
        }
        for s in [64u64, 128, 256, 512] {
            pts.push((s, 5e-6 + 5e-10 * s as f64));
        }
        for s in [4096u64, 8192, 16384, 32768] {
            pts.push((s, 20e-6 + 1e-10 * s as f64));
        }
        pts.reverse(); // input order must not matter
        let fit = fit_piecewise(&pts, &FitOptions::default()).unwrap();
        let seg = &fit.segments;
        assert_eq!(seg.len(), 3);
        assert_eq!((seg[0].first_size_bytes, seg[0].last_size_bytes), (1, 8));
        assert_eq!((seg[1].first_size_bytes, seg[1].last_size_bytes), (64, 512));
        assert_eq!(
            (seg[2].first_size_bytes, seg[2].last_size_bytes),
            (4096, 32768)
        );
        for (s, (a, b)) in seg
            .iter()
            .zip([(1e-6, 1e-9), (5e-6, 5e-10), (20e-6, 1e-10)])
        {
            assert!(close(s.intercept_secs, a, 1e-9), "{s:?}");
            assert!(close(s.slope_secs_per_byte, b, 1e-9), "{s:?}");
        }
        assert!(fit.relative_rms < 1e-12);
        assert!(close(fit.predict_secs(100), 5e-6 + 5e-8, 1e-9));
        assert!(close(fit.predict_secs(0), 1e-6, 1e-9)); // below the range: first segment
    }

    /// With an offset of 16 bytes the intercept is the time at P = 0: t = 2e-6 + 1e-9·(S+16).
    #[test]
    fn offset_moves_the_intercept() {
        let pts: Vec<(u64, f64)> = [0u64, 100, 1000]
            .iter()
            .map(|&s| (s, 2e-6 + 1e-9 * (s as f64 + 16.0)))
            .collect();
        let opts = FitOptions {
            segments: 1,
            offset_bytes: 16.0,
            ..FitOptions::default()
        };
        let fit = fit_piecewise(&pts, &opts).unwrap();
        assert!(close(fit.segments[0].intercept_secs, 2e-6, 1e-9));
        assert!(close(fit.segments[0].slope_secs_per_byte, 1e-9, 1e-9));
    }

    /// By hand. Points (1, 2), (2, 2), (3, 3), (4, 4): local levels s = 2 (mean of 2, 2), 2
    /// (median of 2, 2, 3), 3 (median of 2, 3, 4), 3.5 (mean of 3, 4); weights 1/4, 1/4, 1/9,
    /// 4/49. Σw = 611/882, Σwx = 829/588, Σwt = 244/147, Σwx² = 697/196, Σwxt = 373/98;
    /// determinant Σw·Σwx² − (Σwx)² = 373/784;
    /// a = (Σwt·Σwx² − Σwx·Σwxt)/det = 1262/1119, b = (Σw·Σwxt − Σwx·Σwt)/det = 2092/3357.
    #[test]
    fn relative_weights_by_hand() {
        let (a, b) = fit_range(&[(1, 2.0), (2, 2.0), (3, 3.0), (4, 4.0)], 0, 10, 0.0).unwrap();
        assert!(close(a, 1262.0 / 1119.0, 1e-12), "{a}");
        assert!(close(b, 2092.0 / 3357.0, 1e-12), "{b}");
    }

    /// A low outlier does not dominate. Points (1, 1), (2, 1), (3, 4): levels 1, 1, 2.5, weights
    /// 1, 1, 4/25; the free optimum has a = −1/15 < 0, so the constrained line through the
    /// origin wins: b = Σwxt/Σwx² = (123/25)/(161/25) = 123/161 (cost 0.80 against 1.33 for the
    /// flat line a = Σwt/Σw = 11/9).
    #[test]
    fn negative_intercept_is_clamped() {
        let (a, b) = fit_range(&[(1, 1.0), (2, 1.0), (3, 4.0)], 0, 10, 0.0).unwrap();
        assert_eq!(a, 0.0);
        assert!(close(b, 123.0 / 161.0, 1e-12), "{b}");
    }

    /// A decreasing run cannot have a negative slope. Points (1, 2), (2, 1): both levels are 1.5,
    /// equal weights; the flat line a = 1.5 (cost 0.5/2.25) beats the line through the origin
    /// b = 4/5 (cost 1.8/2.25).
    #[test]
    fn negative_slope_is_clamped() {
        let (a, b) = fit_range(&[(1, 2.0), (2, 1.0)], 0, 10, 0.0).unwrap();
        assert_eq!(b, 0.0);
        assert!(close(a, 1.5, 1e-12), "{a}");
    }

    #[test]
    fn forced_break_starts_a_segment() {
        // One exact line everywhere: without the forced break any split is free; with a break at
        // 64 the second segment must start at 64.
        let pts: Vec<(u64, f64)> = [1u64, 2, 4, 8, 16, 32, 64, 128, 256]
            .iter()
            .map(|&s| (s, 1e-6 + 1e-9 * s as f64))
            .collect();
        let opts = FitOptions {
            segments: 2,
            forced_breaks_bytes: vec![64],
            ..FitOptions::default()
        };
        let fit = fit_piecewise(&pts, &opts).unwrap();
        assert_eq!(fit.segments[1].first_size_bytes, 64);
        assert_eq!(fit.segments[0].last_size_bytes, 32);
    }

    /// A companion series places a break the primary leaves free. Primary: the exact line
    /// t = 1 + S at S = 1..=8, so every 2-segment split costs 0 (to rounding) and the data
    /// alone do not decide. Companion: 1 at S = 1..=5 and 10 at S = 6..=8,
    /// two flat runs, so the only split of zero total cost is [1, 5] | [6, 8]. The lines stay
    /// the primary's: a = 1, b = 1 on both.
    #[test]
    fn companion_places_the_break() {
        let primary: Vec<(u64, f64)> = (1..=8u64).map(|s| (s, 1.0 + s as f64)).collect();
        let alone = FitOptions {
            segments: 2,
            min_points: 2,
            ..FitOptions::default()
        };
        let with = FitOptions {
            companion_points: (1..=8u64)
                .map(|s| (s, if s <= 5 { 1.0 } else { 10.0 }))
                .collect(),
            ..alone
        };
        let fit = fit_piecewise(&primary, &with).unwrap();
        let seg = &fit.segments;
        assert_eq!((seg[0].first_size_bytes, seg[0].last_size_bytes), (1, 5));
        assert_eq!((seg[1].first_size_bytes, seg[1].last_size_bytes), (6, 8));
        for s in seg {
            assert!(close(s.intercept_secs, 1.0, 1e-9), "{s:?}");
            assert!(close(s.slope_secs_per_byte, 1.0, 1e-9), "{s:?}");
        }
        assert!(fit.relative_rms < 1e-12);
    }

    #[test]
    fn too_few_sizes_and_bad_values() {
        let pts = [(1u64, 1e-6), (2, 2e-6), (4, 3e-6)];
        let e = fit_piecewise(&pts, &FitOptions::default()).unwrap_err();
        assert_eq!(
            e.to_string(),
            "a 3-segment fit with 3 sizes per segment: 3 distinct message size(s), at least 9 needed"
        );
        let e = fit_piecewise(
            &[(1, 1.0), (2, f64::NAN), (3, 1.0)],
            &FitOptions {
                segments: 1,
                ..FitOptions::default()
            },
        )
        .unwrap_err();
        assert!(
            e.to_string().contains("at 2 B is negative or not finite"),
            "{e}"
        );
    }
}
