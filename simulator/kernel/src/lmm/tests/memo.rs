//! The solution memo gives the values a filling gives, bit for bit, and hits when a component
//! comes back in the same shape.

use super::super::*;
use super::hubs::HubOp;
use super::RandVar;
use proptest::prelude::*;
use proptest::strategy::ValueTree;

/// A system whose general solves all take the memo's path (the region path off).
fn memo_system() -> System {
    let mut s = System::new();
    s.set_region_filling(false);
    s
}

/// The parent module's doc example built twice: A (C = 10) carries flows 1 and 2, B (C = 4)
/// carries flow 2, so flow 2 gets 4 and flow 1 gets 10 − 4 = 6. The second time the flows sit
/// in other variable slots (freed slots are reused last-freed first) but the component has the
/// same shape: the solve is a hit and gives 4 and 6 again.
#[test]
fn repeated_component_is_a_hit_with_the_same_values() {
    let mut s = memo_system();
    let a = s.add_constraint(10.0, Sharing::Shared);
    let b = s.add_constraint(4.0, Sharing::Shared);
    let build = |s: &mut System| {
        let f1 = s.add_variable(1.0, -1.0);
        let f2 = s.add_variable(1.0, -1.0);
        s.expand(a, f1, 1.0);
        s.expand(a, f2, 1.0);
        s.expand(b, f2, 1.0);
        (f1, f2)
    };
    let (f1, f2) = build(&mut s);
    s.solve();
    assert_eq!((s.value(f1), s.value(f2)), (6.0, 4.0));
    assert_eq!(s.memo_counts(), (1, 0));
    s.remove_variable(f1);
    s.remove_variable(f2);
    // The emptied constraints have nothing to solve: no lookup.
    s.solve();
    assert_eq!(s.memo_counts(), (1, 0));
    let (g1, g2) = build(&mut s);
    assert_eq!(
        (g1, g2),
        (f2, f1),
        "the flows came back in each other's slots"
    );
    s.solve();
    assert_eq!(s.memo_counts(), (2, 1));
    assert_eq!((s.value(g1), s.value(g2)), (6.0, 4.0));
    assert_eq!(
        s.touched(),
        &[g1, g2],
        "touched in the order a filling lists them"
    );
}

/// A different penalty is a different shape, and a lookup misses (the key holds every penalty's
/// bits). With flow 2 at penalty 2, A offers 10 / (1/1 + 1/2) = 6.67 and B 4 / (1/2) = 8: A is
/// the bottleneck, flow 1 gets 6.67 and flow 2 6.67 / 2 = 3.33 (a stale hit would give 6 and 4).
#[test]
fn another_penalty_misses() {
    let mut s = memo_system();
    let a = s.add_constraint(10.0, Sharing::Shared);
    let b = s.add_constraint(4.0, Sharing::Shared);
    for (p, expected) in [(1.0, (6.0, 4.0)), (2.0, (10.0 / 1.5, 10.0 / 1.5 / 2.0))] {
        let f1 = s.add_variable(1.0, -1.0);
        let f2 = s.add_variable(p, -1.0);
        s.expand(a, f1, 1.0);
        s.expand(a, f2, 1.0);
        s.expand(b, f2, 1.0);
        s.solve();
        assert_eq!((s.value(f1), s.value(f2)), expected);
        s.remove_variable(f1);
        s.remove_variable(f2);
        s.solve();
    }
    assert_eq!(
        s.memo_counts(),
        (2, 0),
        "two shapes, each looked up once (emptied constraints are not)"
    );
}

/// A shaped variable that gets one more element is keyed by its elements, not by its shape:
/// shape S = (A, 1) on A (C = 10, SHARED). Round 1: f is made from S, then expanded onto A
/// again, which adds the weights (w = 2): f gets 10 / 2 = 5. Round 2: f made from S alone gets
/// 10. Both components are {A} with one variable of penalty 1; had f kept naming S in round 1,
/// round 2 would hit round 1's entry and give 5.
#[test]
fn an_expanded_shape_is_keyed_by_its_elements() {
    let mut s = memo_system();
    let a = s.add_constraint(10.0, Sharing::Shared);
    let shape = s.add_shape(&[(a, 1.0)]);
    let f = s.add_variable_shaped(1.0, -1.0, shape);
    s.expand(a, f, 1.0);
    s.solve();
    assert_eq!(s.value(f), 5.0);
    s.remove_variable(f);
    let g = s.add_variable_shaped(1.0, -1.0, shape);
    s.solve();
    assert_eq!(s.value(g), 10.0);
    // Lookups: round 1 (miss), round 2 (miss: the keys differ).
    assert_eq!(s.memo_counts(), (2, 0));
    // The emptied {A} (no lookup), then the same shape again: a hit that gives 10.
    s.remove_variable(g);
    s.solve();
    let h = s.add_variable_shaped(1.0, -1.0, shape);
    s.solve();
    assert_eq!(s.value(h), 10.0);
    assert_eq!(s.memo_counts(), (3, 1));
}

/// Applies `ops` three times over (each round removes what is left, so later rounds repeat the
/// first one's components) to a system with the memo and to one without, solving after every
/// step; returns the memo's (lookups, hits). Every value must be equal bit for bit. The system
/// with the memo makes every other new variable from a shape (`add_variable_shaped`), so
/// that keys naming shapes and keys listing elements mix.
fn replay_with_and_without_memo(
    cnsts: &[(f64, bool)],
    ops: &[HubOp],
    on: u32,
) -> Result<(u64, u64), TestCaseError> {
    let mut with = System::new();
    let mut without = System::new();
    without.set_memo(false);
    // Both fill whole components (the region path equals a filling to rounding only).
    with.set_region_filling(false);
    without.set_region_filling(false);
    for s in [&mut with, &mut without] {
        s.set_hub_thresholds(on, 1);
        s.set_wake_ratio(0);
        for &(c, fat) in cnsts {
            s.add_constraint(
                c,
                if fat {
                    Sharing::FatPipe
                } else {
                    Sharing::Shared
                },
            );
        }
    }
    let mut shapes = std::collections::HashMap::new();
    for _round in 0..3 {
        // (with's handle, without's handle, spec, active)
        let mut live: Vec<(VarId, VarId, RandVar, bool)> = Vec::new();
        for (k, op) in ops.iter().enumerate() {
            match *op {
                HubOp::Add((p, b, ref es), active) => {
                    let pen = if active { p } else { 0.0 };
                    // `with` makes every other variable from a shape (one per operation, kept
                    // across rounds as a path is), `without` always by `expand`.
                    let v1 = if k % 2 == 0 {
                        let shape = *shapes.entry(k).or_insert_with(|| {
                            let mut merged = Vec::new();
                            with.merge_elements(
                                es.iter().map(|&(c, w)| (CnstId(c as u32), w)),
                                &mut merged,
                            );
                            with.add_shape(&merged)
                        });
                        with.add_variable_shaped(pen, b, shape)
                    } else {
                        let v1 = with.add_variable(pen, b);
                        for &(c, w) in es {
                            with.expand(CnstId(c as u32), v1, w);
                        }
                        v1
                    };
                    let v2 = without.add_variable(pen, b);
                    for &(c, w) in es {
                        without.expand(CnstId(c as u32), v2, w);
                    }
                    live.push((v1, v2, (p, b, es.clone()), active));
                }
                HubOp::Remove(k) if !live.is_empty() => {
                    let (v1, v2, _, _) = live.remove(k % live.len());
                    with.remove_variable(v1);
                    without.remove_variable(v2);
                }
                HubOp::Activate(k) => {
                    let idle: Vec<usize> = (0..live.len()).filter(|&i| !live[i].3).collect();
                    if !idle.is_empty() {
                        let i = idle[k % idle.len()];
                        with.set_penalty(live[i].0, live[i].2 .0);
                        without.set_penalty(live[i].1, live[i].2 .0);
                        live[i].3 = true;
                    }
                }
                HubOp::SetBound(k, b) if !live.is_empty() => {
                    let i = k % live.len();
                    with.set_bound(live[i].0, b);
                    without.set_bound(live[i].1, b);
                }
                HubOp::Remove(_) | HubOp::SetBound(..) => {}
            }
            with.solve();
            without.solve();
            with.clear_group_events();
            without.clear_group_events();
            for &(v1, v2, _, _) in &live {
                let (a, b) = (with.value(v1), without.value(v2));
                prop_assert_eq!(a.to_bits(), b.to_bits(), "with memo {} without {}", a, b);
            }
        }
        for (v1, v2, _, _) in live {
            with.remove_variable(v1);
            without.remove_variable(v2);
        }
        with.solve();
        without.solve();
    }
    prop_assert_eq!(without.memo_counts(), (0, 0));
    Ok(with.memo_counts())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// With and without the memo, the same values bit for bit after every step of random
    /// arrival, activation, bound and departure sequences replayed three times (hubs from 2 or
    /// 3 variables, so that memo hits and hub groups mix), and the repeated rounds hit.
    #[test]
    fn memo_gives_the_filling_values_bit_for_bit(
        (cnsts, ops) in super::hubs::hub_ops(), on in 2u32..4,
    ) {
        let (lookups, hits) = replay_with_and_without_memo(&cnsts, &ops, on)?;
        prop_assert!(hits <= lookups);
    }
}

/// Over many generated cases the repeated rounds do hit: the proptest above compares values on
/// hits, not only on misses.
#[test]
fn memo_hits_in_repeated_rounds() {
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let (mut lookups, mut hits) = (0u64, 0u64);
    for _ in 0..64 {
        let (cnsts, ops) = super::hubs::hub_ops()
            .new_tree(&mut runner)
            .expect("a generated case")
            .current();
        let (l, h) = replay_with_and_without_memo(&cnsts, &ops, u32::MAX).expect("equal values");
        lookups += l;
        hits += h;
    }
    assert!(
        lookups > 0 && hits * 4 >= lookups,
        "{hits} hits in {lookups} lookups"
    );
}
