//! Hubs, groups, cut hubs and dormant registration (`lmm::hubs`): hand-derived cases and
//! proptests against full re-solves.

use super::*;

/// Hand-derived group regime. B (C = 100) carries v0..v3 (p = 1, w = 1), each also on its own
/// side constraint S_i (C = 1000). With hubs from 3 variables, B is a hub; its offer
/// m = 100 / 4 = 25 is below every side's 1000 / 1, so the four form a group of share 25, each
/// at 25 / 1. v4 (p = 2, on B only) arrives: Σ w/p = 4.5, m = 22.2̅, v0..v3 at 22.2̅ and v4 at
/// 11.1̅, and no variable is re-solved one by one. v5 (p = 1) on S0 alone makes S0 unclean:
/// the group dissolves and the general path gives round 1: B offers 100 / 4.5 = 22.2̅, S0
/// 1000 / 2 = 500, so B fixes v0..v4 as before; round 2: S0 has 1000 − 22.2̅ left for v5.
#[test]
fn hub_group_forms_follows_arrivals_and_dissolves() {
    let mut s = System::new();
    s.set_hub_thresholds(3, 1);
    s.set_wake_ratio(0);
    let b = s.add_constraint(100.0, Sharing::Shared);
    let sides: Vec<CnstId> = (0..4)
        .map(|_| s.add_constraint(1000.0, Sharing::Shared))
        .collect();
    let vs: Vec<VarId> = (0..4)
        .map(|i| {
            let v = s.add_variable(1.0, -1.0);
            s.expand(b, v, 1.0);
            s.expand(sides[i], v, 1.0);
            v
        })
        .collect();
    s.solve();
    assert!(vs.iter().all(|&v| s.group_of(v).is_some()));
    let g = s.group_of(vs[0]).unwrap();
    assert_eq!(s.group_share(g), 25.0);
    assert_eq!(s.value(vs[2]), 25.0);
    assert!(s.touched().is_empty());
    s.clear_group_events();

    let v4 = s.add_variable(2.0, -1.0);
    s.expand(b, v4, 1.0);
    s.solve();
    assert_eq!(s.group_joined(), &[v4]);
    assert!(s.touched().is_empty());
    assert!(close(s.value(vs[1]), 100.0 / 4.5));
    assert!(close(s.value(v4), 100.0 / 4.5 / 2.0));
    s.clear_group_events();

    let v5 = s.add_variable(1.0, -1.0);
    s.expand(sides[0], v5, 1.0);
    s.solve();
    let mut left = s.group_left().to_vec();
    left.sort();
    assert_eq!(left, vec![vs[0], vs[1], vs[2], vs[3], v4]);
    assert!(vs.iter().all(|&v| s.group_of(v).is_none()));
    assert!(close(s.value(vs[3]), 100.0 / 4.5));
    assert!(close(s.value(v4), 100.0 / 9.0));
    assert!(close(s.value(v5), 1000.0 - 100.0 / 4.5));
}

/// A member's bound below the share keeps the hub on the general path: B (C = 90) with three
/// variables of p = 1, one bounded at 10 (b·p = 10 < m = 30): the general path fixes it at 10
/// and the other two share the remaining 80: 40 each.
#[test]
fn binding_bound_keeps_the_general_path() {
    let mut s = System::new();
    s.set_hub_thresholds(2, 1);
    s.set_wake_ratio(0);
    let b = s.add_constraint(90.0, Sharing::Shared);
    let bounded = s.add_variable(1.0, 10.0);
    s.expand(b, bounded, 1.0);
    let others: Vec<VarId> = (0..2)
        .map(|_| {
            let v = s.add_variable(1.0, -1.0);
            s.expand(b, v, 1.0);
            v
        })
        .collect();
    s.solve();
    assert!(s.group_of(bounded).is_none());
    assert_eq!(s.value(bounded), 10.0);
    assert_eq!(s.value(others[0]), 40.0);
    assert_eq!(s.value(others[1]), 40.0);
}

/// Dormant registration (`hubs::dormant`), on = 3, off = 2, backbone B (C = 90) and variables
/// of p = 1: two variables leave the system dormant (45 each by the general path); the third
/// wakes it and B becomes a hub whose group gives each 90/3 = 30; removing two leaves one
/// (below off): the hub is dropped, the system sleeps with no registration left, and the
/// survivor gets all 90; two arrivals wake it again (30 each, in the group). Each wake makes B a
/// hub before it registers the variables, so each registers once (3 per wake), not once
/// without a hub and again when B becomes one (6); dropping B registers the survivor again,
/// without a hub, before the system sleeps (3 + 1 + 3 = 7 in all).
#[test]
fn dormant_registration_wakes_and_sleeps() {
    let mut s = System::new();
    s.set_hub_thresholds(3, 2);
    s.set_wake_ratio(0);
    let b = s.add_constraint(90.0, Sharing::Shared);
    let add = |s: &mut System| {
        let v = s.add_variable(1.0, -1.0);
        s.expand(b, v, 1.0);
        v
    };
    let v0 = add(&mut s);
    let v1 = add(&mut s);
    s.solve();
    assert!(s.hubs.dormant);
    assert!(!s.vars[v0.0 as usize].reg.registered);
    assert_eq!((s.value(v0), s.value(v1)), (45.0, 45.0));
    let v2 = add(&mut s);
    s.solve();
    assert!(!s.hubs.dormant);
    assert_eq!(s.hubs.n_live, 1);
    assert!([v0, v1, v2].iter().all(|&v| s.group_of(v).is_some()));
    assert_eq!(s.group_share(s.group_of(v0).unwrap()), 30.0);
    assert_eq!(s.stats().registrations, 3);
    s.clear_group_events();
    s.remove_variable(v0);
    s.remove_variable(v1);
    s.solve();
    assert!(s.hubs.dormant);
    assert_eq!(s.hubs.n_live, 0);
    assert!(!s.vars[v2.0 as usize].reg.registered);
    assert_eq!(s.cnsts[b.0 as usize].reg.n_active, 0);
    assert_eq!(s.value(v2), 90.0);
    s.clear_group_events();
    let v3 = add(&mut s);
    let v4 = add(&mut s);
    s.solve();
    assert!(!s.hubs.dormant);
    assert!([v2, v3, v4].iter().all(|&v| s.group_of(v).is_some()));
    assert_eq!(s.group_share(s.group_of(v3).unwrap()), 30.0);
    assert_eq!(s.stats().registrations, 7);
}

/// The wake decision (`hubs::dormant`, "When to wake"), on = 3, off = 1, R = 2, backbone B
/// (C = 90), variables of p = 1 on B alone.
/// 1. Four arrive in one solve: the period opens with W = 4 < 2 × 4 active, so the system stays
///    dormant and the general path gives 90/4 = 22.5 each; all four leave: the period closes
///    with W = 4 ≤ R·N = 2 × 4 (waking would not have paid).
/// 2. Four arrive (W = 4 < 8), a fifth (W = 4 + 5 = 9 < 10, 18 each), a sixth: W = 15 ≥ 2 × 6,
///    so it wakes: B is a hub and the six form a group of share 90/6 = 15. All six leave: the
///    hub is dropped, the system sleeps and the period closes with W = 15 (the awake solve adds
///    the 0 variables left) > R·N = 2 × (4 + 2).
/// 3. So three arrivals wake it at their first solve: a group of share 30.
#[test]
fn wake_waits_until_staying_dormant_would_cost_more() {
    let mut s = System::new();
    s.set_hub_thresholds(3, 1);
    s.set_wake_ratio(2);
    let b = s.add_constraint(90.0, Sharing::Shared);
    let add = |s: &mut System, n: usize| -> Vec<VarId> {
        (0..n)
            .map(|_| {
                let v = s.add_variable(1.0, -1.0);
                s.expand(b, v, 1.0);
                v
            })
            .collect()
    };
    let first = add(&mut s, 4);
    s.solve();
    assert!(s.hubs.dormant);
    assert!(first.iter().all(|&v| s.value(v) == 22.5));
    for &v in &first {
        s.remove_variable(v);
    }
    s.solve();
    assert!(s.hubs.dormant);
    assert!(!s.hubs.crowding.wake_at_once());

    let mut second = add(&mut s, 4);
    s.solve();
    assert!(s.hubs.dormant);
    second.extend(add(&mut s, 1));
    s.solve();
    assert!(s.hubs.dormant);
    assert!(second.iter().all(|&v| s.value(v) == 18.0));
    second.extend(add(&mut s, 1));
    s.solve();
    assert!(!s.hubs.dormant);
    let g = s.group_of(second[0]).expect("the six form a group");
    assert_eq!(s.group_share(g), 15.0);
    assert!(second
        .iter()
        .all(|&v| s.group_of(v) == Some(g) && s.value(v) == 15.0));
    s.clear_group_events();
    for &v in &second {
        s.remove_variable(v);
    }
    s.solve();
    assert!(s.hubs.dormant);
    assert!(s.hubs.crowding.wake_at_once());

    let third = add(&mut s, 3);
    s.solve();
    assert!(!s.hubs.dormant);
    let g = s.group_of(third[0]).expect("woken at once");
    assert_eq!(s.group_share(g), 30.0);
}

/// The wake decision learns that the groups do not form (`hubs::dormant`, "When the groups do
/// not form"), on = 3, off = 1, R = 2: backbone B (C = 900) and, per variable, a private link
/// P_i (C = 10), p = 1, weight 1 on both. B is crowded but never the bottleneck (its offer
/// 900/n is above every P_i's 10/1), so each variable gets 10 and no group forms.
/// 1. Three arrive (W = 3 < 2 × 3), a fourth (W = 7 < 8), a fifth (W = 12 ≥ 10): it wakes.
///    A sixth arrives in an awake solve (5 active, none grouped) and all six leave (an awake
///    solve of 0 active): the system sleeps and the period closes with W = 12 + 5 + 0 = 17 >
///    R·N = 2 × (3 + 3) and a grouped share of 0/5, the first stretch below 1/2: W is still
///    counted in full and the next period wakes at once.
/// 2. Three arrive and wake it at their first solve, a fourth comes (3 active, 0 grouped), all
///    leave: the second low stretch in a row (the past shares 0/(5/2 + 3)), so a dormant
///    active variable now counts for 1/64 in W and no period wakes at once.
/// 3. Three, four, five, six arrive over four solves: W = (3 + 4 + 5 + 6)/64 = 0.28, far from
///    2 × 6: the system stays dormant (before the lesson it would have woken at the third
///    solve), and every variable still gets 10.
#[test]
fn wake_stops_when_the_groups_do_not_form() {
    let mut s = System::new();
    s.set_hub_thresholds(3, 1);
    s.set_wake_ratio(2);
    let b = s.add_constraint(900.0, Sharing::Shared);
    let add = |s: &mut System, n: usize| -> Vec<VarId> {
        (0..n)
            .map(|_| {
                let p = s.add_constraint(10.0, Sharing::Shared);
                let v = s.add_variable(1.0, -1.0);
                s.expand(b, v, 1.0);
                s.expand(p, v, 1.0);
                v
            })
            .collect()
    };
    let leave = |s: &mut System, vars: &[VarId]| {
        for &v in vars {
            s.remove_variable(v);
        }
        s.solve();
    };

    let mut first = add(&mut s, 3);
    s.solve();
    first.extend(add(&mut s, 1));
    s.solve();
    assert!(s.hubs.dormant);
    first.extend(add(&mut s, 1));
    s.solve();
    assert!(!s.hubs.dormant, "W = 12 >= 2 x 5");
    first.extend(add(&mut s, 1));
    s.solve();
    assert!(first
        .iter()
        .all(|&v| s.group_of(v).is_none() && s.value(v) == 10.0));
    leave(&mut s, &first);
    assert!(s.hubs.dormant);
    assert!(s.hubs.crowding.wake_at_once());
    assert_eq!(s.hubs.crowding.weight(), 1.0);

    let mut second = add(&mut s, 3);
    s.solve();
    assert!(!s.hubs.dormant, "woken at once");
    second.extend(add(&mut s, 1));
    s.solve();
    leave(&mut s, &second);
    assert!(s.hubs.dormant);
    assert!(!s.hubs.crowding.wake_at_once());
    assert_eq!(s.hubs.crowding.weight(), crate::lmm::UNPAID_WEIGHT);

    let mut third = Vec::new();
    for n in [3, 1, 1, 1] {
        third.extend(add(&mut s, n));
        s.solve();
        assert!(
            s.hubs.dormant,
            "{} active: W far below 2 x active",
            third.len()
        );
    }
    assert!(third.iter().all(|&v| s.value(v) == 10.0));
    assert_eq!(s.stats().wakes, 2);
    assert_eq!(s.stats().grouped, 0);
}

/// One step of a random arrival/departure sequence.
#[derive(Debug, Clone)]
pub(super) enum HubOp {
    /// A variable (penalty, bound, elements), active at once or added inactive (penalty 0).
    Add(RandVar, bool),
    /// Remove the k-th live variable (modulo).
    Remove(usize),
    /// Activate the k-th inactive variable (modulo) with its penalty.
    Activate(usize),
    /// Give the k-th live variable (modulo) this bound (≤ 0: none).
    SetBound(usize, f64),
}

/// Star-shaped systems where hubs form: constraint 0 is crossed by most variables, the others
/// are side constraints (one in eight FATPIPE).
pub(super) fn hub_ops() -> impl Strategy<Value = (Vec<(f64, bool)>, Vec<HubOp>)> {
    let cnsts = (
        100u32..5000,
        proptest::collection::vec((1u32..2000, proptest::bool::weighted(0.12)), 2..7),
    );
    cnsts.prop_flat_map(|(hub_cap, sides)| {
        let n = sides.len() + 1;
        let mut all = vec![(f64::from(hub_cap), false)];
        all.extend(sides.iter().map(|&(c, f)| (f64::from(c), f)));
        let var = (
            1u32..100,
            prop_oneof![3 => Just(0u32), 1 => 1u32..3000],
            proptest::bool::weighted(0.85),
            prop_oneof![Just(1.0f64), Just(1.05f64)],
            proptest::collection::vec((1..n, prop_oneof![Just(1.0f64), Just(0.05f64)]), 0..3),
        )
            .prop_map(|(p, b, on_hub, w, side)| {
                let mut es: Vec<(usize, f64)> = Vec::new();
                if on_hub {
                    es.push((0, w));
                }
                for (c, w) in side {
                    if !es.iter().any(|&(c2, _)| c2 == c) {
                        es.push((c, w));
                    }
                }
                if es.is_empty() {
                    es.push((0, 1.0));
                }
                let bound = if b == 0 { -1.0 } else { f64::from(b) / 3.0 };
                (f64::from(p) / 10.0, bound, es)
            });
        let op = prop_oneof![
            6 => (var, proptest::bool::weighted(0.7)).prop_map(|(v, a)| HubOp::Add(v, a)),
            3 => (0usize..64).prop_map(HubOp::Remove),
            2 => (0usize..64).prop_map(HubOp::Activate),
        ];
        (Just(all), proptest::collection::vec(op, 1..60))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(384))]

    /// After every arrival, activation and departure, the incremental system with hubs (from 2
    /// or 3 variables) gives every variable the value a full solve from scratch gives. (About
    /// half of the generated cases put variables in groups: 211 of 385 when this was written.)
    #[test]
    fn hubs_equal_full_solve_after_random_arrivals_and_departures(
        (cnsts, ops) in hub_ops(), on in 2u32..4, wake in 0u32..3,
    ) {
        replay_against_full_solve(&cnsts, &ops, on, wake)?;
    }
}

/// Applies `ops` to an incremental system with hubs from `on` variables (waking with ratio
/// `wake`, `hubs::dormant`) and, after each, checks
/// every variable's value against a full solve from scratch of the same variables. Returns the
/// hub statistics (`Hubs::stats`: cuts, uncuts, variables moved, group evaluations with cut
/// neighbours).
fn replay_against_full_solve(
    cnsts: &[(f64, bool)],
    ops: &[HubOp],
    on: u32,
    wake: u32,
) -> Result<[u64; 4], TestCaseError> {
    replay_system_against_full_solve(System::new(), cnsts, ops, on, wake).map(|s| s.hubs.stats)
}

/// [`replay_against_full_solve`] on system `inc` as configured by the caller (the solution
/// memo off, for the region path: `lmm/tests/region.rs`); returns it after the last step.
pub(super) fn replay_system_against_full_solve(
    mut inc: System,
    cnsts: &[(f64, bool)],
    ops: &[HubOp],
    on: u32,
    wake: u32,
) -> Result<System, TestCaseError> {
    inc.set_hub_thresholds(on, 1);
    inc.set_wake_ratio(wake);
    let sharing = |fat: bool| {
        if fat {
            Sharing::FatPipe
        } else {
            Sharing::Shared
        }
    };
    let cs: Vec<CnstId> = cnsts
        .iter()
        .map(|&(c, f)| inc.add_constraint(c, sharing(f)))
        .collect();
    // (handle, spec, active)
    let mut live: Vec<(VarId, RandVar, bool)> = Vec::new();
    for op in ops {
        match *op {
            HubOp::Add((p, b, ref es), active) => {
                let v = inc.add_variable(if active { p } else { 0.0 }, b);
                for &(c, w) in es {
                    inc.expand(cs[c], v, w);
                }
                live.push((v, (p, b, es.clone()), active));
            }
            HubOp::Remove(k) if !live.is_empty() => {
                let (v, _, _) = live.remove(k % live.len());
                inc.remove_variable(v);
            }
            HubOp::Activate(k) => {
                let idle: Vec<usize> = (0..live.len()).filter(|&i| !live[i].2).collect();
                if !idle.is_empty() {
                    let i = idle[k % idle.len()];
                    inc.set_penalty(live[i].0, live[i].1 .0);
                    live[i].2 = true;
                }
            }
            HubOp::SetBound(k, b) if !live.is_empty() => {
                let i = k % live.len();
                inc.set_bound(live[i].0, b);
                live[i].1 .1 = b;
            }
            HubOp::Remove(_) | HubOp::SetBound(..) => {}
        }
        inc.solve();
        // The events of a solve are consistent (what the engine relies on): a variable joins
        // once and only into a group it is in, and a touched one is in none.
        let joined = inc.group_joined().to_vec();
        for (i, v) in joined.iter().enumerate() {
            prop_assert!(inc.group_of(*v).is_some(), "joined but in no group");
            prop_assert!(!joined[..i].contains(v), "joined twice");
        }
        for v in inc.touched() {
            prop_assert!(inc.group_of(*v).is_none(), "touched but in a group");
        }
        inc.clear_group_events();
        let mut full = System::new();
        full.set_selective(false);
        let fcs: Vec<CnstId> = cnsts
            .iter()
            .map(|&(c, f)| full.add_constraint(c, sharing(f)))
            .collect();
        let fvs: Vec<VarId> = live
            .iter()
            .map(|(_, (p, b, es), active)| {
                let v = full.add_variable(if *active { *p } else { 0.0 }, *b);
                for &(c, w) in es {
                    full.expand(fcs[c], v, w);
                }
                v
            })
            .collect();
        full.solve();
        for ((v, _, active), fv) in live.iter().zip(&fvs) {
            let (a, b) = (inc.value(*v), full.value(*fv));
            let ok = if *active {
                close(a, b)
            } else {
                a == 0.0 && b == 0.0
            };
            prop_assert!(ok, "incremental {} vs full {}", a, b);
        }
    }
    Ok(inc)
}

/// Cluster-shaped systems where a crowded constraint often does not bind: constraint 0 is a
/// backbone, constraint 1 a root's link, the others private links (one in ten FATPIPE). Most
/// variables are flows into the root (root link, backbone, a private link) or between two private
/// links through the backbone, some with cross-traffic weights; a few use the backbone alone
/// (they put a cut backbone back) or skip it. Bounds come and go.
pub(super) fn backbone_ops() -> impl Strategy<Value = (Vec<(f64, bool)>, Vec<HubOp>)> {
    let cnsts = (
        50u32..3000,
        20u32..1000,
        proptest::collection::vec((20u32..2000, proptest::bool::weighted(0.1)), 2..8),
    );
    cnsts.prop_flat_map(|(backbone, root, privates)| {
        let n = privates.len() + 2;
        let mut all = vec![(f64::from(backbone), false), (f64::from(root), false)];
        all.extend(privates.iter().map(|&(c, f)| (f64::from(c), f)));
        let weight = prop_oneof![3 => Just(1.0f64), 1 => Just(1.05f64)];
        let var = (
            1u32..100,
            prop_oneof![4 => Just(0u32), 1 => 1u32..3000],
            prop_oneof![8 => Just(0u8), 6 => Just(1u8), 1 => Just(2u8), 1 => Just(3u8)],
            (2..n, 2..n),
            (weight.clone(), weight),
            proptest::bool::weighted(0.2),
        )
            .prop_map(|(p, b, kind, (src, dst), (w0, w1), cross)| {
                let mut es: Vec<(usize, f64)> = match kind {
                    // into the root
                    0 => vec![(src, w0), (0, w0), (1, w1)],
                    // between two private links (or within one)
                    1 => vec![(src, w0), (0, w0), (dst, w1)],
                    // the backbone alone
                    2 => vec![(0, w0)],
                    // into the root without the backbone
                    _ => vec![(src, w0), (1, w1)],
                };
                if cross && kind < 2 {
                    es.push((if dst == src { 1 } else { dst }, 0.05));
                }
                let mut dedup: Vec<(usize, f64)> = Vec::new();
                for (c, w) in es {
                    match dedup.iter_mut().find(|(c2, _)| *c2 == c) {
                        Some(e) => e.1 += w,
                        None => dedup.push((c, w)),
                    }
                }
                let bound = if b == 0 { -1.0 } else { f64::from(b) / 3.0 };
                (f64::from(p) / 10.0, bound, dedup)
            });
        (Just(all), churn_ops(var, 0.7))
    })
}

/// 1 to 80 steps: arrivals of variables drawn from `var` (active at once with probability
/// `active`), departures, activations and bound changes, in proportions 8 : 4 : 2 : 1.
pub(super) fn churn_ops(
    var: impl Strategy<Value = RandVar> + Clone,
    active: f64,
) -> impl Strategy<Value = Vec<HubOp>> {
    let op = prop_oneof![
        8 => (var, proptest::bool::weighted(active)).prop_map(|(v, a)| HubOp::Add(v, a)),
        4 => (0usize..64).prop_map(HubOp::Remove),
        2 => (0usize..64).prop_map(HubOp::Activate),
        1 => (0usize..64, prop_oneof![Just(-1.0f64), (1u32..3000).prop_map(|b| f64::from(b) / 3.0)])
            .prop_map(|(k, b)| HubOp::SetBound(k, b)),
    ];
    proptest::collection::vec(op, 1..80)
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(384))]

    /// As `hubs_equal_full_solve_after_random_arrivals_and_departures`, on cluster-shaped systems
    /// where backbones are cut, their members move to the next hub (the root's link), groups
    /// form with a cut neighbour, and cut hubs are put back (`cut_paths_are_exercised` checks
    /// that the generator reaches these paths).
    #[test]
    fn cut_hubs_equal_full_solve_after_random_arrivals_and_departures(
        (cnsts, ops) in backbone_ops(), on in 2u32..5, wake in 0u32..3,
    ) {
        replay_against_full_solve(&cnsts, &ops, on, wake)?;
    }
}

/// The cluster-shaped sequences above do reach the paths they are meant to test: hubs cut,
/// put back, variables moved to another hub, and groups in the regime next to a cut hub, each
/// in a good share of the cases (not a check of values: those are compared with full solves).
#[test]
fn cut_paths_are_exercised() {
    use proptest::test_runner::{Config, TestRunner};
    let mut runner = TestRunner::new(Config {
        cases: 200,
        ..Config::default()
    });
    let cases = std::cell::RefCell::new([0u32; 4]);
    runner
        .run(&(backbone_ops(), 2u32..5), |((cnsts, ops), on)| {
            let stats = replay_against_full_solve(&cnsts, &ops, on, 0)?;
            let mut c = cases.borrow_mut();
            for (k, &n) in stats.iter().enumerate() {
                c[k] += u32::from(n > 0);
            }
            Ok(())
        })
        .expect("incremental equals full");
    let c = cases.into_inner();
    // (cases with cuts, uncuts, moved variables, groups next to a cut hub) out of 200: 152,
    // 114, 129 and 84 when this was written
    assert!(
        c.iter().all(|&n| n >= 40),
        "cases exercising each path: {c:?}"
    );
}

/// Hand-derived: cut, re-registration with the root's link, group next to a cut backbone, and
/// the backbone put back (the worked example of `hubs/cut.rs`). Backbone B (C = 250, index 0),
/// root link D (C = 100), private links P1..P9 (C = 100); hubs from 4 variables. f1..f4 go
/// P_i → B → D, g goes P5 → B → P6, all of weight 1 and penalty 1.
/// 1. All five register with B (smallest index). Bottleneck filling: D offers 100/4 = 25,
///    P5 and P6 100, B 250/5 = 50: f_i = 25; then P5/P6 100 against B (250 − 100)/1 = 150:
///    g = 100. B carries 4 × 25 + 100 = 200 < 250: B is cut, f1..f4 move to D (g, with no
///    other hub, stays B's member, in no group), whose
///    neighbours P1..P4 offer 100 ≥ 25: a group of share 25.
/// 2. f5 (P7 → B → D) joins D's group: share 100/5 = 20, B's load 5 × 20 + 100 = 200; nothing is
///    re-solved one by one.
/// 3. g2 (P8 → B → P9) is solved without B: 100; B's load 300 > 250, so B is put back and
///    f1..f5 move back to B. Filling: D offers 20 < B's 250/7: f_i = 20, then B
///    (250 − 100)/2 = 75 < the private links' 100: g = g2 = 75 (B's group, D an exception).
#[test]
fn cut_backbone_moves_members_to_the_root_link_and_back() {
    let mut s = System::new();
    s.set_hub_thresholds(4, 1);
    s.set_wake_ratio(0);
    let b = s.add_constraint(250.0, Sharing::Shared);
    let d = s.add_constraint(100.0, Sharing::Shared);
    let p: Vec<CnstId> = (0..10)
        .map(|_| s.add_constraint(100.0, Sharing::Shared))
        .collect();
    let flow = |s: &mut System, path: &[CnstId]| {
        let v = s.add_variable(1.0, -1.0);
        for &c in path {
            s.expand(c, v, 1.0);
        }
        v
    };
    let mut f: Vec<VarId> = (1..=4).map(|i| flow(&mut s, &[p[i], b, d])).collect();
    let g = flow(&mut s, &[p[5], b, p[6]]);
    s.solve();
    assert!(s.is_cut(b.0));
    let group = s.group_of(f[0]).expect("f1 in D's group");
    assert!(f.iter().all(|&v| s.group_of(v) == Some(group)));
    assert_eq!(s.group_share(group), 25.0);
    assert_eq!(s.group_of(g), None);
    assert_eq!(s.value(g), 100.0);
    s.clear_group_events();

    f.push(flow(&mut s, &[p[7], b, d]));
    s.solve();
    assert!(s.is_cut(b.0));
    assert!(s.touched().is_empty());
    assert_eq!(s.group_joined(), &[f[4]]);
    assert!(f.iter().all(|&v| s.value(v) == 20.0));
    s.clear_group_events();

    let g2 = flow(&mut s, &[p[8], b, p[9]]);
    s.solve();
    assert!(!s.is_cut(b.0));
    for &v in &f {
        assert!(close(s.value(v), 20.0), "{}", s.value(v));
        assert_eq!(s.group_of(v), None);
    }
    let group = s.group_of(g).expect("g in B's group");
    assert_eq!(s.group_of(g2), Some(group));
    assert!(close(s.value(g), 75.0) && close(s.value(g2), 75.0));
}
