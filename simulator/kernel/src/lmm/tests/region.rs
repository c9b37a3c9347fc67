//! The region path (`lmm/region.rs`): hand-derived solves, and random sequences of arrivals,
//! departures, activations and bound changes against full solves from scratch.

use super::hubs::{backbone_ops, churn_ops, hub_ops, replay_system_against_full_solve, HubOp};
use super::*;

/// A system with the solution memo off (so that general solves take the region path).
fn region_system() -> System {
    let mut s = System::new();
    s.set_memo(false);
    s
}

/// Links A (C = 10) and B (C = 4); flow 1 on A, flow 2 on A and B, flow 3 on B, solved once
/// (all weights and penalties 1, no bound).
fn a_and_b() -> (System, [CnstId; 2], [VarId; 3]) {
    let mut s = region_system();
    let a = s.add_constraint(10.0, Sharing::Shared);
    let b = s.add_constraint(4.0, Sharing::Shared);
    let f1 = s.add_variable(1.0, -1.0);
    s.expand(a, f1, 1.0);
    let f2 = s.add_variable(1.0, -1.0);
    s.expand(a, f2, 1.0);
    s.expand(b, f2, 1.0);
    let f3 = s.add_variable(1.0, -1.0);
    s.expand(b, f3, 1.0);
    s.solve();
    (s, [a, b], [f1, f2, f3])
}

/// The module doc's worked example. Links A (C = 10) and B (C = 4); flow 1 on A, flow 2 on A
/// and B, flow 3 on B: B bottlenecks flows 2 and 3 at 2 each, flow 1 takes A's other 8. Flow
/// 4 arrives on A: the region is A's variables {1, 2, 4}, flow 3 is on the boundary (B keeps
/// 4 − 2 = 2 for flow 2); A offers 10/3, B 2/1: flow 2 gets 2, then flows 1 and 4 share
/// A's 8: 4 each. Every certificate holds (A carries 10 at top level 4, B 4 at top level 2),
/// so flow 3 is not re-solved: one region solve of 3 variables, one filling.
#[test]
fn doc_example_refills_the_region_only() {
    let (mut s, [a, _], [f1, f2, f3]) = a_and_b();
    assert_eq!(
        [f1, f2, f3].map(|v| s.value(v)),
        [8.0, 2.0, 2.0],
        "the first solve"
    );
    let before = s.stats();
    let f4 = s.add_variable(1.0, -1.0);
    s.expand(a, f4, 1.0);
    s.solve();
    assert_eq!([f1, f2, f3, f4].map(|v| s.value(v)), [4.0, 2.0, 2.0, 4.0]);
    assert_eq!(
        s.touched(),
        &[f1, f2, f4],
        "flow 3 keeps its value untouched"
    );
    let after = s.stats();
    assert_eq!(after.region_solves - before.region_solves, 1);
    assert_eq!(after.region_vars - before.region_vars, 3);
    assert_eq!(after.fillings - before.fillings, 1);
    assert_eq!(after.region_gave_up, 0);
}

/// A departure that frees a boundary variable's bottleneck: the region grows. Link A (C = 10)
/// carries flows 1 and 2, link B (C = 4) flows 2 and 3: B offers 4/2 = 2, A 10/2 = 5, so
/// flows 2 and 3 get 2 and flow 1 gets 8. Flow 3 leaves: the region is B's variable {2}, `K`
/// = {A, B}, flow 1 on the boundary with 8 of A. Filling 1: A has 2 left, B 4: flow 2 gets
/// 2 (A). Check: B carries 2 of 4 (not saturated) and on A flow 2's level 2 is below flow 1's
/// 8, so flow 2 holds no certificate, and flow 1 (higher on A) joins. Filling 2: A offers
/// 10/2 = 5, B 4/1: flow 2 gets 4 (B), then flow 1 the 6 left on A. Check: A carries 10 at
/// top level 6 (flow 1), B 4 at top level 4 (flow 2): done, one region solve of 2 variables
/// in two fillings, as a full filling gives.
#[test]
fn a_departure_grows_the_region_to_the_freed_boundary() {
    let (mut s, _, [f1, f2, f3]) = a_and_b();
    assert_eq!([f1, f2, f3].map(|v| s.value(v)), [8.0, 2.0, 2.0]);
    let before = s.stats();
    s.remove_variable(f3);
    s.solve();
    assert_eq!([f1, f2].map(|v| s.value(v)), [6.0, 4.0]);
    assert_eq!(s.touched(), &[f2, f1]);
    let after = s.stats();
    assert_eq!(after.region_solves - before.region_solves, 1);
    assert_eq!(after.region_vars - before.region_vars, 2);
    assert_eq!(after.fillings - before.fillings, 2);
}

/// A FATPIPE constraint in the region: the region gives up and the component is filled in
/// full (a bound tied with a FATPIPE's saturation has two max-min answers, see `naive`).
#[test]
fn a_fatpipe_in_reach_fills_the_whole_component() {
    let mut s = region_system();
    let a = s.add_constraint(10.0, Sharing::Shared);
    let f = s.add_constraint(4.0, Sharing::FatPipe);
    let x1 = s.add_variable(1.0, -1.0);
    s.expand(a, x1, 1.0);
    s.expand(f, x1, 1.0);
    s.solve();
    let x2 = s.add_variable(1.0, -1.0);
    s.expand(a, x2, 1.0);
    s.solve();
    // FATPIPE: x1 may use all of its 4; A gives x2 the other 6.
    assert_eq!([x1, x2].map(|v| s.value(v)), [4.0, 6.0]);
    let st = s.stats();
    assert_eq!((st.region_solves, st.region_gave_up), (0, 2));
    assert_eq!(st.general_solves, 2, "both solves filled their component");
}

/// Systems without a dominant constraint, as a fat-tree's: 3 to 11 links (one in twelve
/// FATPIPE), each variable on 1 to 4 of them with weight 1, 1.05 (a route that is also its
/// reverse route) or 0.05 (cross-traffic), a bound one time in four.
fn mesh_ops() -> impl Strategy<Value = (Vec<(f64, bool)>, Vec<HubOp>)> {
    let cnsts = proptest::collection::vec((20u32..2000, proptest::bool::weighted(0.08)), 3..12);
    cnsts.prop_flat_map(|cnsts| {
        let n = cnsts.len();
        let all: Vec<(f64, bool)> = cnsts.iter().map(|&(c, f)| (f64::from(c), f)).collect();
        let var = (
            1u32..100,
            prop_oneof![3 => Just(0u32), 1 => 1u32..3000],
            proptest::collection::vec(
                (
                    0..n,
                    prop_oneof![4 => Just(1.0f64), 1 => Just(1.05f64), 1 => Just(0.05f64)],
                ),
                1..5,
            ),
        )
            .prop_map(|(p, b, es)| {
                let mut dedup: Vec<(usize, f64)> = Vec::new();
                for (c, w) in es {
                    if !dedup.iter().any(|&(c2, _)| c2 == c) {
                        dedup.push((c, w));
                    }
                }
                let bound = if b == 0 { -1.0 } else { f64::from(b) / 3.0 };
                (f64::from(p) / 10.0, bound, dedup)
            });
        (Just(all), churn_ops(var, 0.8))
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(384))]

    /// After every step of a random sequence on a mesh without hubs, the region path gives
    /// every variable the value a full solve from scratch gives (1e-9 relative).
    #[test]
    fn region_equals_full_solve_on_meshes((cnsts, ops) in mesh_ops()) {
        replay_system_against_full_solve(region_system(), &cnsts, &ops, u32::MAX, 0)?;
    }

    /// The same with hubs forming (star-shaped systems): the region path and the hubs' group
    /// regime take turns.
    #[test]
    fn region_equals_full_solve_with_hubs((cnsts, ops) in hub_ops(), on in 2u32..4, wake in 0u32..3) {
        replay_system_against_full_solve(region_system(), &cnsts, &ops, on, wake)?;
    }

    /// The same on cluster-shaped systems, where backbones are cut and put back.
    #[test]
    fn region_equals_full_solve_with_cut_hubs((cnsts, ops) in backbone_ops(), on in 2u32..5) {
        replay_system_against_full_solve(region_system(), &cnsts, &ops, on, 0)?;
    }
}

/// The mesh sequences reach the region path's branches: solves that keep the boundary,
/// solves that grow (more fillings than solves), and solves that give up (a FATPIPE in
/// reach), each in a good share of the cases (values are checked by the proptests above).
#[test]
fn region_paths_are_exercised() {
    use proptest::test_runner::{Config, TestRunner};
    let mut runner = TestRunner::new(Config {
        cases: 200,
        ..Config::default()
    });
    let cases = std::cell::RefCell::new([0u32; 3]);
    runner
        .run(&mesh_ops(), |(cnsts, ops)| {
            let s = replay_system_against_full_solve(region_system(), &cnsts, &ops, u32::MAX, 0)?;
            let st = s.stats();
            let mut c = cases.borrow_mut();
            c[0] += u32::from(st.region_solves > 0);
            c[1] += u32::from(st.fillings > st.region_solves + st.general_solves);
            c[2] += u32::from(st.region_gave_up > 0);
            Ok(())
        })
        .unwrap();
    let c = cases.into_inner();
    assert!(c[0] >= 100, "region solves in {} of 200 cases", c[0]);
    assert!(c[1] >= 20, "growing regions in {} of 200 cases", c[1]);
    assert!(c[2] >= 20, "full fillings in {} of 200 cases", c[2]);
}

/// The policy (`region::Policy`): the first general solves alternate, the memo's path first;
/// with the components' average at 100 variables and the regions' at 10 (10 × 5 < 100) it
/// takes the region, except one solve in 128 (the 128th); once the regions average about 30
/// (150 > 100) it takes the memo's path. A region's budget is one component's filling: 64
/// variables before any component was seen, then the components' average, 100.
#[test]
fn the_policy_alternates_then_follows_the_sizes() {
    let mut p = super::super::region::Policy::default();
    assert_eq!(p.budget(), 64);
    let first: Vec<bool> = (0..4).map(|_| p.prefers_region()).collect();
    assert_eq!(first, [false, true, false, true]);
    for _ in 0..16 {
        p.note_component(100);
        p.note_region(10);
    }
    assert_eq!(p.budget(), 100);
    let picks: Vec<bool> = (5..=128).map(|_| p.prefers_region()).collect();
    assert!(picks[..123].iter().all(|&b| b), "{picks:?}");
    assert!(!picks[123], "the 128th solve probes the memo's path");
    for _ in 0..200 {
        p.note_region(30);
    }
    assert!(!p.prefers_region());
}
