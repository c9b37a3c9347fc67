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
/// A's remaining 10 − 4 = 6 (the walk from A lists flow 1 then flow 2). Each round is two
/// solves, both looked up: the activations', and the parking's (which touches nothing: no
/// variable is left active). The same history again hits both. In the reverse order the
/// histories differ: misses, and A now lists flow 2's element first, so the walk (from A) lists
/// flow 2 then flow 1 in `touched`, with the same values.
#[test]
fn the_same_history_from_rest_hits() {
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
        assert!(s.touched().is_empty());
        got
    };
    assert_eq!(round(&mut s, [f1, f2]), (6.0, 4.0, vec![f1, f2]));
    assert_eq!(s.rest_counts(), (2, 0), "the first time misses");
    assert_eq!(round(&mut s, [f1, f2]), (6.0, 4.0, vec![f1, f2]));
    assert_eq!(s.rest_counts(), (4, 2), "the second time hits");
    assert_eq!(round(&mut s, [f2, f1]), (6.0, 4.0, vec![f2, f1]));
    assert_eq!(s.rest_counts(), (6, 2), "another order is another history");
    assert_eq!(round(&mut s, [f2, f1]), (6.0, 4.0, vec![f2, f1]));
    assert_eq!(s.rest_counts(), (8, 4));
}

/// A history goes on through solves and departures: flows 1 and 2 start (6 and 4, as above),
/// flow 2 ends (flow 1 alone on A: 10), then flow 1 (nothing left). Three solves, three
/// misses; the same history again, three hits with the same values and `touched` lists; and
/// ending flow 1 first instead is another history from its second solve on (flow 2 alone: 4).
#[test]
fn departures_between_solves_stay_in_the_history() {
    let (mut s, f1, f2) = two_parked_paths();
    let play = |s: &mut System, first_out: VarId, second_out: VarId| {
        let mut seen = Vec::new();
        s.set_penalty(f1, 1.0);
        s.set_penalty(f2, 1.0);
        s.solve();
        seen.push((s.value(f1), s.value(f2), s.touched().to_vec()));
        s.set_penalty(first_out, 0.0);
        s.solve();
        seen.push((s.value(f1), s.value(f2), s.touched().to_vec()));
        s.set_penalty(second_out, 0.0);
        s.solve();
        seen.push((s.value(f1), s.value(f2), s.touched().to_vec()));
        seen
    };
    let f2_first = vec![
        (6.0, 4.0, vec![f1, f2]),
        (10.0, 0.0, vec![f1]),
        (0.0, 0.0, vec![]),
    ];
    assert_eq!(play(&mut s, f2, f1), f2_first);
    assert_eq!(s.rest_counts(), (3, 0));
    assert_eq!(play(&mut s, f2, f1), f2_first);
    assert_eq!(
        s.rest_counts(),
        (6, 3),
        "the same history hits at every solve"
    );
    let f1_first = vec![
        (6.0, 4.0, vec![f1, f2]),
        (0.0, 4.0, vec![f2]),
        (0.0, 0.0, vec![]),
    ];
    assert_eq!(play(&mut s, f1, f2), f1_first);
    assert_eq!(
        s.rest_counts(),
        (9, 4),
        "the first solve hits, the others miss"
    );
}

/// Changes the history does not describe end the log until the next rest, so that the solves
/// after them are not looked up: a bound changed on a parked variable, a variable added active
/// without a shape (`expand`), a penalty changed while active. Same system as above: flow 1
/// bounded at 2 gets 2, flow 2 4 (B).
#[test]
fn other_changes_end_the_log() {
    let (mut s, f1, f2) = two_parked_paths();
    let a = CnstId(0);
    s.set_bound(f1, 2.0);
    s.set_penalty(f1, 1.0);
    s.set_penalty(f2, 1.0);
    s.solve();
    assert_eq!((s.value(f1), s.value(f2)), (2.0, 4.0));
    s.set_penalty(f1, 0.0);
    s.solve();
    assert_eq!(s.value(f2), 4.0);
    assert_eq!(s.rest_counts(), (0, 0), "a bound changed since rest");
    s.set_penalty(f2, 0.0);
    s.solve();
    s.set_penalty(f1, 1.0);
    s.solve();
    assert_eq!(s.rest_counts(), (1, 0), "flow 1 alone from rest: a lookup");
    assert_eq!(s.value(f1), 2.0);
    s.set_penalty(f1, 2.0);
    s.solve();
    assert_eq!(s.rest_counts(), (1, 0), "a penalty changed while active");
    assert_eq!(s.value(f1), 2.0);
    s.set_penalty(f1, 0.0);
    s.solve();
    let g = s.add_variable(1.0, -1.0);
    s.expand(a, g, 1.0);
    s.solve();
    assert_eq!(s.rest_counts(), (1, 0), "a variable added active");
    assert_eq!(s.value(g), 10.0);
}

/// One step of a random replay's phase on parked path `k` (with, first, a new bound on its
/// variable, which ends the log): activate it, or activate it and solve, or end it and solve
/// (remove it and park a new variable of its shape in its place when `replace`), or replace its
/// parked variable by a new one added active (an idle removal and an activation).
#[derive(Debug, Clone)]
enum Op {
    Start { solve: bool },
    End { replace: bool },
    StartNew,
}

/// A phase of a random replay: steps on paths, each with an optional new bound.
type Phase = Vec<(usize, Option<f64>, Op)>;

/// A random system's constraints and variables (`rand_system`), the variables as parked paths,
/// and 1 to 4 phases of 1 to 6 steps each.
fn rest_case() -> impl Strategy<Value = (Vec<(f64, bool)>, Vec<super::RandVar>, Vec<Phase>)> {
    super::rand_system().prop_flat_map(|sys| {
        let k = sys.vars.len();
        let op = prop_oneof![
            4 => proptest::bool::ANY.prop_map(|solve| Op::Start { solve }),
            2 => proptest::bool::weighted(0.3).prop_map(|replace| Op::End { replace }),
            1 => Just(Op::StartNew),
        ];
        let step = (
            0..k,
            prop_oneof![12 => Just(None), 1 => (1u32..2000).prop_map(|b| Some(f64::from(b)))],
            op,
        );
        let phase = proptest::collection::vec(step, 1..7);
        (
            Just(sys.cnsts),
            Just(sys.vars),
            proptest::collection::vec(phase, 1..5),
        )
    })
}

/// Plays `phases` three times over on two systems of parked shaped paths, one with the memos
/// (and so solves along histories from rest) and one without: each phase runs its steps (a
/// path already active is not started again, one not active is not ended), then parks every
/// path still active and solves. After every solve both give the same values bit for bit and
/// list the same paths in `touched` in the same order. Returns the rest memo's (lookups, hits).
fn play(
    cnsts: &[(f64, bool)],
    paths: &[super::RandVar],
    phases: &[Phase],
) -> Result<(u64, u64), TestCaseError> {
    let mut sys = [System::new(), System::new()];
    sys[1].set_memo(false);
    let mut shapes = Vec::new();
    // Both fill whole components (the region path equals a filling to rounding only).
    for (i, s) in sys.iter_mut().enumerate() {
        s.set_region_filling(false);
        for &(c, fat) in cnsts {
            let sharing = if fat {
                Sharing::FatPipe
            } else {
                Sharing::Shared
            };
            s.add_constraint(c, sharing);
        }
        for (_, _, es) in paths {
            let mut merged = Vec::new();
            s.merge_elements(es.iter().map(|&(c, w)| (CnstId(c as u32), w)), &mut merged);
            let shape = s.add_shape(&merged);
            if i == 0 {
                shapes.push(shape);
            }
        }
    }
    // vars[k][side]: path k's variable on each side; bounds[k]: its current bound.
    let mut bounds: Vec<f64> = paths.iter().map(|p| p.1).collect();
    let mut vars: Vec<[VarId; 2]> = Vec::new();
    for (k, &shape) in shapes.iter().enumerate() {
        let v0 = sys[0].add_variable_shaped(0.0, bounds[k], shape);
        let v1 = sys[1].add_variable_shaped(0.0, bounds[k], shape);
        vars.push([v0, v1]);
    }
    for s in &mut sys {
        s.solve();
    }
    let check = |sys: &[System; 2], vars: &[[VarId; 2]]| -> Result<(), TestCaseError> {
        let index_of = |side: usize, v: VarId| vars.iter().position(|p| p[side] == v);
        let t1: Vec<_> = sys[0].touched().iter().map(|&v| index_of(0, v)).collect();
        let t2: Vec<_> = sys[1].touched().iter().map(|&v| index_of(1, v)).collect();
        prop_assert_eq!(t1, t2, "touched order");
        for p in vars {
            prop_assert_eq!(sys[0].value(p[0]).to_bits(), sys[1].value(p[1]).to_bits());
        }
        Ok(())
    };
    for _round in 0..3 {
        for phase in phases {
            let mut active = vec![false; paths.len()];
            for (k, bound, op) in phase {
                let k = *k;
                if let Some(b) = *bound {
                    bounds[k] = b;
                    for side in 0..2 {
                        sys[side].set_bound(vars[k][side], b);
                    }
                }
                match *op {
                    Op::Start { solve } if !active[k] => {
                        for side in 0..2 {
                            sys[side].set_penalty(vars[k][side], paths[k].0);
                        }
                        active[k] = true;
                        if solve {
                            sys.iter_mut().for_each(System::solve);
                            check(&sys, &vars)?;
                        }
                    }
                    Op::End { replace } if active[k] => {
                        for side in 0..2 {
                            if replace {
                                sys[side].remove_variable(vars[k][side]);
                                vars[k][side] =
                                    sys[side].add_variable_shaped(0.0, bounds[k], shapes[k]);
                            } else {
                                sys[side].set_penalty(vars[k][side], 0.0);
                            }
                        }
                        active[k] = false;
                        sys.iter_mut().for_each(System::solve);
                        check(&sys, &vars)?;
                    }
                    Op::StartNew if !active[k] => {
                        for side in 0..2 {
                            sys[side].remove_variable(vars[k][side]);
                            vars[k][side] =
                                sys[side].add_variable_shaped(paths[k].0, bounds[k], shapes[k]);
                        }
                        active[k] = true;
                    }
                    _ => {}
                }
            }
            sys.iter_mut().for_each(System::solve);
            check(&sys, &vars)?;
            for k in 0..paths.len() {
                if active[k] {
                    for side in 0..2 {
                        sys[side].set_penalty(vars[k][side], 0.0);
                    }
                }
            }
            sys.iter_mut().for_each(System::solve);
            check(&sys, &vars)?;
        }
    }
    prop_assert_eq!(sys[1].rest_counts(), (0, 0));
    Ok(sys[0].rest_counts())
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(256))]

    /// Random parked paths started and ended in random phases (with solves between, removals,
    /// variables added active, new bounds), three times over: the same values and `touched`
    /// order as without the memos after every solve.
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
