//! Property tests of the Sequitur builder: the grammar expands back to its input, and the
//! invariants (digram uniqueness, rule utility, no adjacent twins, index consistency) hold after
//! every appended terminal.

use proptest::prelude::*;
use timeless_grammar::{Grammar, Sequitur};

/// Builds `x`, validating after every push, and returns the frozen grammar.
fn build_checked(x: &[u64]) -> Grammar {
    let mut s = Sequitur::new();
    for &t in x {
        s.push(t);
        if let Err(e) = s.validate() {
            panic!(
                "invariant broken after {} terminals of {x:?}: {e}",
                s.terminal_count()
            );
        }
    }
    s.finish()
}

fn round_trip(x: &[u64]) {
    let g = build_checked(x);
    assert_eq!(g.expand().collect::<Vec<_>>(), x);
    assert_eq!(g.expanded_len(), x.len() as u64);
    let words = g.to_words();
    let (back, used) = Grammar::from_words(&words).unwrap();
    assert_eq!(used, words.len());
    assert_eq!(back, g);
}

fn thue_morse(n: usize) -> Vec<u64> {
    (0..n)
        .map(|i| u64::from((i as u32).count_ones() % 2))
        .collect()
}

fn fibonacci_word(n: usize) -> Vec<u64> {
    let (mut a, mut b) = (vec![0u64], vec![0u64, 1]);
    while b.len() < n {
        let c = [b.clone(), a].concat();
        a = b;
        b = c;
    }
    b.truncate(n);
    b
}

#[test]
fn adversarial_cases() {
    let s = |t: &str| t.bytes().map(u64::from).collect::<Vec<_>>();
    for case in [
        "",
        "a",
        "aa",
        "aaaa",
        "abbbabcbb",
        "abcabcabc",
        "abababab",
        "aabaabaab",
        "abcdbcabcdbc",
        "aaabaaabaaab",
        "abbabbbabbbbabbbbb",
        "abcbcbcabcbcbcabc",
        "xyxyxzxyxyxz",
    ] {
        round_trip(&s(case));
    }
    round_trip(&thue_morse(2000));
    round_trip(&fibonacci_word(3000));
}

#[test]
fn periodic_loops_are_constant_size() {
    // A 2-level loop nest (inner loop of 5, outer of n) keeps the same grammar size as n grows.
    let body = |n: usize| {
        let mut v = Vec::new();
        for _ in 0..n {
            v.push(1);
            for _ in 0..5 {
                v.extend([2, 3, 4]);
            }
            v.push(5);
        }
        v
    };
    let sizes: Vec<(usize, usize)> = [10, 100, 1000]
        .iter()
        .map(|&n| {
            let g = build_checked(&body(n));
            assert_eq!(g.expand().collect::<Vec<_>>(), body(n));
            (g.rule_count(), g.symbol_count())
        })
        .collect();
    assert_eq!(sizes[0], sizes[1]);
    assert_eq!(sizes[1], sizes[2]);
    // S → A^n, A → 1 B^5 5, B → 2 3 4: 3 rules, 1 + 3 + 3 symbols.
    assert_eq!(sizes[0], (3, 7));
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(200))]

    #[test]
    fn random_sequences(x in prop::collection::vec(0u64..4, 0..300)) {
        round_trip(&x);
    }

    #[test]
    fn random_wide_alphabet(x in prop::collection::vec(0u64..40, 0..300)) {
        round_trip(&x);
    }

    #[test]
    fn periodic_with_noise(
        pattern in prop::collection::vec(0u64..6, 1..8),
        reps in 1usize..60,
        noise in prop::collection::vec((0usize..400, 0u64..6), 0..4),
    ) {
        let mut x: Vec<u64> = pattern.iter().copied().cycle().take(pattern.len() * reps).collect();
        for (pos, v) in noise {
            if !x.is_empty() {
                let p = pos % x.len();
                x[p] = v;
            }
        }
        round_trip(&x);
    }

    #[test]
    fn nested_runs(runs in prop::collection::vec((0u64..3, 1usize..6), 0..80)) {
        let x: Vec<u64> = runs.iter().flat_map(|&(v, k)| std::iter::repeat_n(v, k)).collect();
        round_trip(&x);
    }
}
