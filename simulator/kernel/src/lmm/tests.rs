use super::*;
use proptest::prelude::*;

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * a.abs().max(b.abs()).max(1.0)
}

/// The module doc's example: A (C=10) carries flows 1 and 2, B (C=4) carries flow 2.
#[test]
fn doc_example() {
    let mut s = System::new();
    let a = s.add_constraint(10.0, Sharing::Shared);
    let b = s.add_constraint(4.0, Sharing::Shared);
    let f1 = s.add_variable(1.0, -1.0);
    let f2 = s.add_variable(1.0, -1.0);
    s.expand(a, f1, 1.0);
    s.expand(a, f2, 1.0);
    s.expand(b, f2, 1.0);
    s.solve();
    assert_eq!(s.value(f2), 4.0);
    assert_eq!(s.value(f1), 6.0);
}

/// A bound tied with a FATPIPE's saturation level, decided as SimGrid 3.32's maxmin.cpp decides
/// it (`bound * penalty < min_usage`, strict). FATPIPE C = 290, x0 (p 3.8, unbounded), x1 (p 3.7,
/// bound 290). usage = max(1/3.8, 1/3.7) = 1/3.7 = 0.27027027027027023 (rounded), so min_usage =
/// 290 / 0.27027027027027023 = 1073.0000000000002, while b1·p1 = 290 × 3.7 = 1073.0 (3.7 is
/// stored a little above 3.7, the product rounds down to 1073): the bound is taken first, x1 = 290;
/// the next round's usage is 1/3.8 alone, the offer 290 × 3.8, so x0 = 290 too.
#[test]
fn bound_tied_with_fatpipe_saturation_is_taken_first() {
    let mut s = System::new();
    let c = s.add_constraint(290.0, Sharing::FatPipe);
    let x0 = s.add_variable(3.8, -1.0);
    let x1 = s.add_variable(3.7, 290.0);
    s.expand(c, x0, 1.0);
    s.expand(c, x1, 1.0);
    s.solve();
    assert_eq!(s.value(x1), 290.0);
    assert!(close(s.value(x0), 290.0), "{}", s.value(x0));
}

/// Reference §11 case "sendRecv" on one SHARED link of 125 MB/s: two flows, each on the link
/// with weight 1 (route) + 0.05 (reverse route of the other direction's... its own reverse
/// route), so usage = 2 × 1.05 / p and each gets 125e6 / 2.1 B/s (before bw-factor).
#[test]
fn crosstraffic_weights_add_on_a_shared_link() {
    let mut s = System::new();
    let l = s.add_constraint(125e6, Sharing::Shared);
    let p = 50e-6 + 8775.0 / 125e6;
    let v1 = s.add_variable(p, 125e6);
    let v2 = s.add_variable(p, 125e6);
    for v in [v1, v2] {
        s.expand(l, v, 1.0);
        s.expand(l, v, 0.05);
    }
    s.solve();
    assert!(close(s.value(v1), 125e6 / 2.1));
    assert!(close(s.value(v2), 125e6 / 2.1));
}

/// FATPIPE: the constraint is `max w·x/… ≤ C` on the common level, so the flow with the smallest
/// penalty gets the whole capacity and the others `C·p_min/p` (SimGrid 3.32 `maxmin.cpp` fixes
/// every variable of the saturated constraint at `min_usage/p` in the same round).
/// `merge_elements` + `add_variable_merged` build the system `add_variable` + `expand` builds:
/// the same link named twice (route at 1, reverse route at 0.05) is one element of weight 1.05,
/// so two such flows on a 125 MB/s link get 125e6 / 2.1 B/s each, bit for bit as with `expand`;
/// on a FATPIPE link the larger weight is kept.
#[test]
fn merged_elements_build_what_expand_builds() {
    let p = 50e-6 + 8775.0 / 125e6;
    let mut a = System::new();
    let mut b = System::new();
    let (la, lb) = (
        a.add_constraint(125e6, Sharing::Shared),
        b.add_constraint(125e6, Sharing::Shared),
    );
    let mut va = Vec::new();
    let mut vb = Vec::new();
    for _ in 0..2 {
        let mut merged = Vec::new();
        a.merge_elements([(la, 1.0), (la, 0.05)], &mut merged);
        assert_eq!(merged, [(la, 1.05)]);
        va.push(a.add_variable_merged(p, 125e6, &merged));
        let v = b.add_variable(p, 125e6);
        b.expand(lb, v, 1.0);
        b.expand(lb, v, 0.05);
        vb.push(v);
    }
    a.solve();
    b.solve();
    for (x, y) in va.iter().zip(&vb) {
        assert_eq!(a.value(*x).to_bits(), b.value(*y).to_bits());
        assert!(close(a.value(*x), 125e6 / 2.1));
    }
    assert_eq!(
        a.vars[va[0].0 as usize].elems.len(),
        1,
        "one element per constraint"
    );
    let fat = a.add_constraint(1e9, Sharing::FatPipe);
    let mut merged = vec![(la, 7.0)];
    a.merge_elements(
        [(fat, 0.05), (la, 1.0), (fat, 1.0), (fat, 0.5)],
        &mut merged,
    );
    assert_eq!(merged, [(la, 7.0), (fat, 1.0), (la, 1.0)]);
}

#[test]
fn fatpipe_gives_each_flow_the_capacity() {
    let mut s = System::new();
    let l = s.add_constraint(100.0, Sharing::FatPipe);
    let v1 = s.add_variable(1.0, -1.0);
    let v2 = s.add_variable(3.0, -1.0);
    s.expand(l, v1, 1.0);
    s.expand(l, v2, 1.0);
    s.solve();
    assert_eq!(s.value(v1), 100.0);
    assert!(close(s.value(v2), 100.0 / 3.0));
}

/// Penalties split a bottleneck in proportion to 1/p: p = 1 and p = 3 on C = 100 give 75 and 25.
/// A bound below the share caps a flow and the rest goes to the others.
#[test]
fn penalties_and_bounds() {
    let mut s = System::new();
    let l = s.add_constraint(100.0, Sharing::Shared);
    let v1 = s.add_variable(1.0, -1.0);
    let v2 = s.add_variable(3.0, -1.0);
    s.expand(l, v1, 1.0);
    s.expand(l, v2, 1.0);
    s.solve();
    assert!(close(s.value(v1), 75.0));
    assert!(close(s.value(v2), 25.0));
    s.set_bound(v1, 10.0);
    s.solve();
    assert!(close(s.value(v1), 10.0));
    assert!(close(s.value(v2), 90.0));
}

/// A CPU of 2 cores × 1 Gf/s with 3 execs bounded at one core each: 2/3 Gf/s each;
/// with one exec: bounded at 1 Gf/s (reference §7).
#[test]
fn multicore_cpu_sharing() {
    let mut s = System::new();
    let cpu = s.add_constraint(2e9, Sharing::Shared);
    let vs: Vec<_> = (0..3).map(|_| s.add_variable(1.0, 1e9)).collect();
    for &v in &vs {
        s.expand(cpu, v, 1.0);
    }
    s.solve();
    for &v in &vs {
        assert!(close(s.value(v), 2e9 / 3.0));
    }
    s.remove_variable(vs[0]);
    s.remove_variable(vs[1]);
    s.solve();
    assert_eq!(s.value(vs[2]), 1e9);
    assert_eq!(s.touched(), &[vs[2]]);
}

/// Incremental solving touches only the component of the change.
#[test]
fn selective_solve_touches_only_the_connected_component() {
    let mut s = System::new();
    let a = s.add_constraint(10.0, Sharing::Shared);
    let b = s.add_constraint(10.0, Sharing::Shared);
    let va = s.add_variable(1.0, -1.0);
    let vb = s.add_variable(1.0, -1.0);
    s.expand(a, va, 1.0);
    s.expand(b, vb, 1.0);
    s.solve();
    let vb2 = s.add_variable(1.0, -1.0);
    s.expand(b, vb2, 1.0);
    s.solve();
    let mut t = s.touched().to_vec();
    t.sort();
    assert_eq!(t, vec![vb, vb2]);
    assert_eq!(s.value(va), 10.0);
    assert_eq!(s.value(vb), 5.0);
}

// ---------------------------------------------------------------------------------------------
// Differential testing against a naive reference solver.

/// (penalty, bound, [(constraint, weight)]) of one random variable.
type RandVar = (f64, f64, Vec<(usize, f64)>);

#[derive(Debug, Clone)]
struct RandSystem {
    cnsts: Vec<(f64, bool)>,
    /// (penalty, bound, [(cnst, weight)])
    vars: Vec<RandVar>,
}

fn rand_system() -> impl Strategy<Value = RandSystem> {
    let cnsts = proptest::collection::vec((1u32..1000, proptest::bool::weighted(0.2)), 1..8);
    cnsts
        .prop_flat_map(|cnsts| {
            let n = cnsts.len();
            let var = (
                1u32..100,
                prop_oneof![Just(0u32), 1u32..2000],
                proptest::collection::vec(
                    (
                        0..n,
                        prop_oneof![Just(1.0f64), Just(0.05f64), Just(1.05f64)],
                    ),
                    1..4,
                ),
            );
            (Just(cnsts), proptest::collection::vec(var, 1..12))
        })
        .prop_map(|(cnsts, vars)| RandSystem {
            cnsts: cnsts.into_iter().map(|(c, f)| (f64::from(c), f)).collect(),
            vars: vars
                .into_iter()
                .map(|(p, b, es)| {
                    let mut dedup: Vec<(usize, f64)> = Vec::new();
                    for (c, w) in es {
                        if !dedup.iter().any(|&(c2, _)| c2 == c) {
                            dedup.push((c, w));
                        }
                    }
                    (
                        f64::from(p) / 10.0,
                        if b == 0 { -1.0 } else { f64::from(b) / 3.0 },
                        dedup,
                    )
                })
                .collect(),
        })
}

/// Progressive filling written the obvious way: a common level `t` rises; every unfixed variable
/// runs at `t/p`; the first event (a constraint filling up or a bound reached) fixes variables.
/// Naive progressive filling: the values, and whether some round had a tie between a bound and a
/// constraint's saturation level (within 1e-6 relative). At such a tie the order in which the two
/// are taken is decided by rounding (SimGrid's strict `b·p < min_usage`), and the two orders
/// give different but equally max-min answers, so the comparison is meaningless there: e.g. a
/// FATPIPE of 290 with x0 (p 3.8) and x1 (p 3.7, bound 290) saturates at level 290 × 3.7 = b1·p1;
/// bound first gives x0 = 290, saturation first x0 = 290 × 3.7 / 3.8.
fn naive(sys: &RandSystem) -> (Vec<f64>, bool) {
    let nv = sys.vars.len();
    let mut value = vec![0.0; nv];
    let mut fixed = vec![false; nv];
    let mut tie = false;
    loop {
        let unfixed: Vec<usize> = (0..nv).filter(|&v| !fixed[v]).collect();
        if unfixed.is_empty() {
            break;
        }
        // Level at which each constraint saturates, given fixed variables' consumption.
        let mut best = f64::INFINITY;
        for (c, &(cap, fat)) in sys.cnsts.iter().enumerate() {
            let mut used = 0.0;
            let mut slope = 0.0f64;
            for (v, (p, _, es)) in sys.vars.iter().enumerate() {
                for &(c2, w) in es {
                    if c2 != c {
                        continue;
                    }
                    if fixed[v] {
                        if !fat {
                            used += w * value[v];
                        }
                    } else if fat {
                        slope = slope.max(w / p);
                    } else {
                        slope += w / p;
                    }
                }
            }
            if slope > 0.0 {
                best = best.min(((cap - used).max(0.0)) / slope);
            }
        }
        let mut best_bound = f64::INFINITY;
        for &v in &unfixed {
            let (p, b, _) = sys.vars[v];
            if b > 0.0 {
                best_bound = best_bound.min(b * p);
            }
        }
        if best.is_finite()
            && best_bound.is_finite()
            && (best - best_bound).abs() <= 1e-6 * best.max(best_bound)
        {
            tie = true;
        }
        best = best.min(best_bound);
        if !best.is_finite() {
            break;
        }
        // Fix every variable blocked at this level (decided on the state before this round).
        let mut any = false;
        let snapshot = fixed.clone();
        let fixed_before = &snapshot;
        let mut to_fix = Vec::new();
        for &v in &unfixed {
            let (p, b, ref es) = sys.vars[v];
            let at_bound = b > 0.0 && (b * p - best).abs() <= 1e-9 * best.max(1.0);
            let on_saturated = es.iter().any(|&(c, _)| {
                let (cap, fat) = sys.cnsts[c];
                let mut used = 0.0;
                let mut slope = 0.0f64;
                for (v2, (p2, _, es2)) in sys.vars.iter().enumerate() {
                    for &(c2, w) in es2 {
                        if c2 == c {
                            if fixed_before[v2] {
                                if !fat {
                                    used += w * value[v2];
                                }
                            } else if fat {
                                slope = slope.max(w / p2);
                            } else {
                                slope += w / p2;
                            }
                        }
                    }
                }
                slope > 0.0
                    && (((cap - used).max(0.0)) / slope - best).abs() <= 1e-9 * best.max(1.0)
            });
            if at_bound || on_saturated {
                to_fix.push((v, if at_bound { b } else { best / p }));
            }
        }
        for (v, x) in to_fix {
            value[v] = x;
            fixed[v] = true;
            any = true;
        }
        if !any {
            break;
        }
    }
    (value, tie)
}

fn build(sys: &RandSystem) -> (System, Vec<VarId>) {
    let mut s = System::new();
    let cs: Vec<CnstId> = sys
        .cnsts
        .iter()
        .map(|&(cap, fat)| {
            s.add_constraint(
                cap,
                if fat {
                    Sharing::FatPipe
                } else {
                    Sharing::Shared
                },
            )
        })
        .collect();
    let vs = sys
        .vars
        .iter()
        .map(|(p, b, es)| {
            let v = s.add_variable(*p, *b);
            for &(c, w) in es {
                s.expand(cs[c], v, w);
            }
            v
        })
        .collect();
    (s, vs)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    /// The bottleneck-filling solver agrees with naive progressive filling.
    #[test]
    fn agrees_with_naive_progressive_filling(sys in rand_system()) {
        let (expected, tie) = naive(&sys);
        prop_assume!(!tie);
        let (mut s, vs) = build(&sys);
        s.solve();
        for (i, &v) in vs.iter().enumerate() {
            let got = s.value(v);
            prop_assert!((got - expected[i]).abs() <= 1e-6 * expected[i].max(1.0),
                "var {}: solver {} naive {}", i, got, expected[i]);
        }
    }

    /// Feasibility and max-min optimality: every constraint holds, and every variable is at its
    /// bound or crosses a saturated constraint.
    #[test]
    fn solution_is_feasible_and_bottlenecked(sys in rand_system()) {
        let (mut s, vs) = build(&sys);
        s.solve();
        let x: Vec<f64> = vs.iter().map(|&v| s.value(v)).collect();
        let load = |c: usize| -> f64 {
            let (_, fat) = sys.cnsts[c];
            let mut l = 0.0f64;
            for (v, (_, _, es)) in sys.vars.iter().enumerate() {
                for &(c2, w) in es { if c2 == c { if fat { l = l.max(w * x[v]); } else { l += w * x[v]; } } }
            }
            l
        };
        for (c, &(cap, _)) in sys.cnsts.iter().enumerate() {
            prop_assert!(load(c) <= cap * (1.0 + 1e-6) + 1e-6, "constraint {} overloaded", c);
        }
        for (v, (_, b, es)) in sys.vars.iter().enumerate() {
            let at_bound = *b > 0.0 && (x[v] - b).abs() <= 1e-6 * b.max(1.0);
            let saturated = es.iter().any(|&(c, _)| load(c) >= sys.cnsts[c].0 * (1.0 - 1e-4));
            prop_assert!(at_bound || saturated, "var {} neither bounded nor bottlenecked", v);
        }
    }

    /// Incremental solving after removals and penalty changes equals a full solve from scratch.
    #[test]
    fn incremental_equals_full(sys in rand_system(), removals in proptest::collection::vec(0usize..12, 0..4)) {
        let (mut inc, vs) = build(&sys);
        inc.solve();
        let mut kept = sys.clone();
        let mut removed = vec![false; vs.len()];
        for r in removals {
            if r < vs.len() && !removed[r] {
                removed[r] = true;
                inc.remove_variable(vs[r]);
                inc.solve();
            }
        }
        kept.vars = sys.vars.iter().enumerate().filter(|(i, _)| !removed[*i]).map(|(_, v)| v.clone()).collect();
        let (mut full, fvs) = build(&kept);
        full.set_selective(false);
        full.solve();
        let live: Vec<VarId> = vs.iter().enumerate().filter(|(i, _)| !removed[*i]).map(|(_, v)| *v).collect();
        for (a, b) in live.iter().zip(fvs.iter()) {
            prop_assert!(close(inc.value(*a), full.value(*b)), "{} vs {}", inc.value(*a), full.value(*b));
        }
    }
}

// ---------------------------------------------------------------------------------------------
// Hubs and groups (`hubs.rs`).

mod hubs;

// Solution memo (`memo.rs`).

mod memo;

// The incremental filling of a change's region (`region.rs`).

mod region;

// Solves from rest (`rest.rs`).

mod rest;
