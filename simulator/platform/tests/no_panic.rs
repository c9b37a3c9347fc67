//! Property: whatever the input, parsing and routing return `Ok` or `Err`, never panic.
//!
//! Valid platforms are mutated (cut, duplicated or rewritten attribute values) and every
//! host-to-host route of those that still parse is computed.

mod common;

use proptest::prelude::*;
use timeless_platform::{deployment, HostId, Platform, PlatformOptions};

const BASES: &[&str] = &[
    "topologies.xml",
    "zones.xml",
    "shortest.xml",
    "splitduplex.xml",
    "c4.xml",
    "figure5_v3.xml",
];

/// Values that stress the attribute parsers.
const NASTY: &[&str] = &[
    "",
    "0",
    "-1",
    "1e400",
    "1e-320",
    "abc",
    "99999999999",
    "3,3,0",
    "0;0;0;0",
    "1;1;1;1",
    "2;2,2;1,2;1,1",
    "1,1;1,1;1,1;1",
    "3,1;1,1;1,1;1",
    "0-3",
    "5-2",
    "1-2-3",
    "nan",
    "inf",
    "1KBps",
    "UP",
    "NONE",
    "FATPIPE",
    "SPLITDUPLEX",
    "Floyd",
    "Dijkstra",
    "Cluster",
    "None",
    "h0",
    "r0",
    "__loopback__",
    "1,1,1,1,1,1,1,1,1,1",
];

fn exercise(text: &str) {
    if let Ok(p) = Platform::from_xml(text, "fuzz.xml", &PlatformOptions::default()) {
        let n = p.hosts().len().min(30) as u32;
        for s in 0..n {
            for d in 0..n {
                let _ = p.route(HostId(s), HostId(d));
            }
        }
        let _ = deployment::default_for(&p, 3);
        let _ = deployment::from_hostfile_text("h0:2\nx\n", "hf", &p, None);
    }
}

fn rewrite_values(text: &str, picks: &[(usize, usize)]) -> String {
    // Replace the k-th attribute value (k = pick.0 modulo the count) by NASTY[pick.1].
    let mut quotes: Vec<(usize, usize)> = Vec::new();
    let bytes = text.as_bytes();
    let mut i = 0;
    while i + 1 < bytes.len() {
        if bytes[i] == b'=' && bytes[i + 1] == b'"' {
            if let Some(len) = text[i + 2..].find('"') {
                quotes.push((i + 2, i + 2 + len));
                i += 2 + len;
            }
        }
        i += 1;
    }
    if quotes.is_empty() {
        return text.to_string();
    }
    let mut chosen: Vec<(usize, usize, &str)> = picks
        .iter()
        .map(|&(k, v)| {
            let (a, b) = quotes[k % quotes.len()];
            (a, b, NASTY[v % NASTY.len()])
        })
        .collect();
    chosen.sort_by_key(|c| std::cmp::Reverse(c.0));
    chosen.dedup_by_key(|c| c.0);
    let mut out = text.to_string();
    for (a, b, v) in chosen {
        out.replace_range(a..b, v);
    }
    out
}

proptest! {
    // 256 cases by default; set PROPTEST_CASES for a longer search.
    #![proptest_config(ProptestConfig::default())]

    #[test]
    fn rewritten_attribute_values_never_panic(
        base in 0..BASES.len(),
        picks in proptest::collection::vec((0usize..400, 0usize..100), 1..4),
    ) {
        let text = std::fs::read_to_string(common::data(BASES[base])).unwrap();
        exercise(&rewrite_values(&text, &picks));
    }

    #[test]
    fn cut_and_duplicated_text_never_panics(
        base in 0..BASES.len(),
        start in 0usize..4000,
        len in 0usize..200,
        duplicate in any::<bool>(),
    ) {
        let text = std::fs::read_to_string(common::data(BASES[base])).unwrap();
        let mut a = start.min(text.len());
        while !text.is_char_boundary(a) { a -= 1; }
        let mut b = (a + len).min(text.len());
        while !text.is_char_boundary(b) { b -= 1; }
        let mutated = if duplicate {
            format!("{}{}{}", &text[..b], &text[a..b], &text[b..])
        } else {
            format!("{}{}", &text[..a], &text[b..])
        };
        exercise(&mutated);
    }
}
