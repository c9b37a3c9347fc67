//! Solves from rest (`rest.rs`) give what a solve gives, values and `touched` order bit for bit,
//! and hit when the same activations come back.

use super::super::*;
use proptest::prelude::*;

/// The parent module's doc example as parked paths: A (C = 10) and B (C = 4); path 1 uses A,
/// path 2 uses A and B. Returns the system (solved once, at rest) and the two paths' parked
/// variables.
fn two_parked_paths() -> (System, VarId, VarId) {
    let mut s = System::new();
    let a = s.add_constraint(10.0, Sharing::Shared);
    let b = s.add_constraint(4.0, Sharing::Shared);
    let p1 = s.add_shape(&[(a, 1.0)]);
    let p2 = s.add_shape(&[(a, 1.0), (b, 1.0)]);
    let f1 = s.add_variable_shaped(0.0, -1.0, p1);
    let f2 = s.add_variable_shaped(0.0, -1.0, p2);
    s.solve();
    (s, f1, f2)
}

/// The parent module's doc example as parked paths: A (C = 10) and B (C = 4); path 1 uses A,
/// path 2 uses A and B, both at penalty 1. Activated from rest, flow 2 gets B's 4 and flow 1
/// A's remaining 10 − 4 = 6 (the walk from A lists flow 1 then flow 2). Parked again and
/// re-activated in the same order: a hit with 6 and 4 in the same order. In the reverse order
/// the key differs: a miss, and A now lists flow 2's element first, so the walk (from A) lists
/// flow 2 then flow 1 in `touched`, with the same values.
#[test]
fn the_same_activations_from_rest_hit() {
    let (mut s, f1, f2) = two_parked_paths();
    let round = |s: &mut System, order: [VarId; 2]| {
        for v in order {
            s.set_penalty(v, 1.0);
        }
        s.solve();
        let got = (s.value(f1), s.value(f2), s.touched().to_vec());
        for v in order {
            s.set_penalty(v, 0.0);
        }
        s.solve();
        got
    };
    assert_eq!(round(&mut s, [f1, f2]), (6.0, 4.0, vec![f1, f2]));
    assert_eq!(s.rest_counts(), (1, 0), "the first time misses");
    assert_eq!(round(&mut s, [f1, f2]), (6.0, 4.0, vec![f1, f2]));
    assert_eq!(s.rest_counts(), (2, 1), "the second time hits");
    assert_eq!(round(&mut s, [f2, f1]), (6.0, 4.0, vec![f2, f1]));
    assert_eq!(s.rest_counts(), (3, 1), "another order is another key");
    assert_eq!(round(&mut s, [f2, f1]), (6.0, 4.0, vec![f2, f1]));
    assert_eq!(s.rest_counts(), (4, 2));
}

/// Only activations from rest are logged: a bound changed on a parked variable, a variable
/// added active, or a solve between two activations (the system is no longer at rest) each
/// leave the next solve to the ordinary path (no lookup). Same system as above: flow 1 bounded
/// at 2 gets 2, flow 2 4 (B), A has 10 − 2 − 4 left.
#[test]
fn other_changes_end_the_log() {
    let (mut s, f1, f2) = two_parked_paths();
    let a = CnstId(0);
    s.set_bound(f1, 2.0);
    s.set_penalty(f1, 1.0);
    s.set_penalty(f2, 1.0);
    s.solve();
    assert_eq!((s.value(f1), s.value(f2)), (2.0, 4.0));
    assert_eq!(s.rest_counts(), (0, 0), "a bound changed since rest");
    s.set_penalty(f1, 0.0);
    s.set_penalty(f2, 0.0);
    s.solve();
    s.set_penalty(f1, 1.0);
    s.solve();
    assert_eq!(s.rest_counts(), (1, 0), "flow 1 alone from rest: a lookup");
    assert_eq!(s.value(f1), 2.0);
    s.set_penalty(f2, 1.0);
    s.solve();
    assert_eq!(s.rest_counts(), (1, 0), "flow 2 joins a system not at rest");
    assert_eq!(s.value(f2), 4.0);
    s.set_penalty(f1, 0.0);
    s.set_penalty(f2, 0.0);
    s.solve();
    let g = s.add_variable(1.0, -1.0);
    s.expand(a, g, 1.0);
    s.solve();
    assert_eq!(s.rest_counts(), (1, 0), "a variable added active");
    assert_eq!(s.value(g), 10.0);
}

/// A phase of a random replay: which parked paths activate, in order, and whether each of
/// them is first given a new bound (which ends the log).
type Phase = Vec<(usize, Option<f64>)>;

/// A random system's constraints and variables (`rand_system`), the variables as parked paths,
/// and 1 to 4 phases of 1 to 5 activations each.
fn rest_case() -> impl Strategy<Value = (Vec<(f64, bool)>, Vec<super::RandVar>, Vec<Phase>)> {
    super::rand_system().prop_flat_map(|sys| {
        let k = sys.vars.len();
        let step = (
            0..k,
            prop_oneof![8 => Just(None), 1 => (1u32..2000).prop_map(|b| Some(f64::from(b)))],
        );
        let phase = proptest::collection::vec(step, 1..6);
        (
            Just(sys.cnsts),
            Just(sys.vars),
            proptest::collection::vec(phase, 1..5),
        )
    })
}

/// Plays `phases` three times over on two systems of parked shaped paths, one with the memos
/// (and so solves from rest) and one without: each phase activates its paths from rest (a path
/// named twice in a phase is activated once), solves, then parks them all and solves. After
/// every solve both give the same values bit for bit and list the same paths in `touched` in
/// the same order. Returns the rest memo's (lookups, hits).
fn play(
    cnsts: &[(f64, bool)],
    paths: &[super::RandVar],
    phases: &[Phase],
) -> Result<(u64, u64), TestCaseError> {
    let mut with = System::new();
    let mut without = System::new();
    without.set_memo(false);
    // Both fill whole components (the region path equals a filling to rounding only).
    with.set_region_filling(false);
    without.set_region_filling(false);
    let mut vars: Vec<[VarId; 2]> = Vec::new();
    for (i, s) in [&mut with, &mut without].into_iter().enumerate() {
        for &(c, fat) in cnsts {
            let sharing = if fat {
                Sharing::FatPipe
            } else {
                Sharing::Shared
            };
            s.add_constraint(c, sharing);
        }
        for (k, (_, b, es)) in paths.iter().enumerate() {
            let mut merged = Vec::new();
            s.merge_elements(es.iter().map(|&(c, w)| (CnstId(c as u32), w)), &mut merged);
            let shape = s.add_shape(&merged);
            let v = s.add_variable_shaped(0.0, *b, shape);
            if i == 0 {
                vars.push([v, v]);
            } else {
                vars[k][1] = v;
            }
        }
        s.solve();
    }
    let index_of = |side: usize, v: VarId| vars.iter().position(|p| p[side] == v);
    let check = |with: &System, without: &System| -> Result<(), TestCaseError> {
        let t1: Vec<_> = with.touched().iter().map(|&v| index_of(0, v)).collect();
        let t2: Vec<_> = without.touched().iter().map(|&v| index_of(1, v)).collect();
        prop_assert_eq!(t1, t2, "touched order");
        for p in &vars {
            prop_assert_eq!(with.value(p[0]).to_bits(), without.value(p[1]).to_bits());
        }
        Ok(())
    };
    for _round in 0..3 {
        for phase in phases {
            let mut active = Vec::new();
            for &(k, bound) in phase {
                if active.contains(&k) {
                    continue;
                }
                if let Some(b) = bound {
                    with.set_bound(vars[k][0], b);
                    without.set_bound(vars[k][1], b);
                }
                with.set_penalty(vars[k][0], paths[k].0);
                without.set_penalty(vars[k][1], paths[k].0);
                active.push(k);
            }
            for s in [&mut with, &mut without] {
                s.solve();
            }
            check(&with, &without)?;
            for &k in &active {
                with.set_penalty(vars[k][0], 0.0);
                without.set_penalty(vars[k][1], 0.0);
            }
            for s in [&mut with, &mut without] {
                s.solve();
            }
            check(&with, &without)?;
        }
    }
    prop_assert_eq!(without.rest_counts(), (0, 0));
    Ok(with.rest_counts())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Random parked paths activated from rest in random phases, three times over: the same
    /// values and `touched` order as without the memos after every solve.
    #[test]
    fn rest_solves_equal_ordinary_solves((cnsts, paths, phases) in rest_case()) {
        let (lookups, hits) = play(&cnsts, &paths, &phases)?;
        prop_assert!(hits <= lookups);
    }
}

/// Over many generated cases the repeated rounds hit: the proptest above compares hits, not
/// only misses.
#[test]
fn rest_solves_hit_in_repeated_rounds() {
    use proptest::strategy::ValueTree;
    let mut runner = proptest::test_runner::TestRunner::deterministic();
    let (mut lookups, mut hits) = (0u64, 0u64);
    for _ in 0..64 {
        let (cnsts, paths, phases) = rest_case()
            .new_tree(&mut runner)
            .expect("a generated case")
            .current();
        let (l, h) = play(&cnsts, &paths, &phases).expect("equal solves");
        lookups += l;
        hits += h;
    }
    assert!(
        lookups > 0 && hits * 3 >= lookups,
        "{hits} hits in {lookups} lookups"
    );
}
