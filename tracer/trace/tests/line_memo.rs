//! A rank reader with its memo of decoded lines (`line_memo`) gives the events and the error a
//! line-by-line decoding gives: random sequences over a small vocabulary (so that lines repeat,
//! hit, and evict each other), with communicator definitions, lines on a sub-communicator
//! whose meaning depends on its size, other ranks' lines, blank and comment lines, and
//! malformed ones.

use std::io::Write;
use std::path::PathBuf;
use std::sync::atomic::{AtomicU32, Ordering};

use proptest::prelude::*;
use timeless_trace::{parse_line_in, Action, Event, TraceErrorKind, TraceSource};

/// Lines of rank 0 in a world of 4 ranks that decode (once communicator 1 is defined).
const VOCABULARY: &[&str] = &[
    "0 compute 1e6",
    "0 compute 2e6",
    "0 send 1 0 100",
    "0 isend 2 5 100",
    "0 recv 3 0 100",
    "0 irecv 1 7 64",
    "0 waitall",
    "0 barrier",
    "0 allreduce 8 1e3",
    // Need communicator 1: an error before its definition.
    "0 send 1 0 100 comm=1",
    "0 bcast 10 0 comm=1",
    // Two counts: one per member of communicator 1.
    "0 gatherv 10 1 2 comm=1",
    "0 compute 1e6 @cs=3",
    "",
    "# a comment",
    // Another rank's line: skipped and counted.
    "1 compute 5",
];

/// Defines communicator 1 (ranks 0 and 1); a second definition is an error.
const COMM_DEF: &str = "0 comm_def 1 2 0 1";

/// Malformed: a peer outside the world.
const MALFORMED: &str = "0 send 9 0 1";

/// The line for a draw in 0..1000: rarely the malformed line or a (re)definition, else a line
/// of [`VOCABULARY`], so that most sequences run long enough for lines to repeat and evict
/// each other.
fn line_of(pick: usize) -> &'static str {
    match pick {
        0..=2 => MALFORMED,
        3..=7 => COMM_DEF,
        p => VOCABULARY[p % VOCABULARY.len()],
    }
}

/// What decoding the lines one by one gives: rank 0's events, then the error that ends them
/// (its line and kind), if any; and the count of other ranks' lines.
fn reference(lines: &[&str]) -> (Vec<Event>, Option<(u64, TraceErrorKind)>, u64) {
    let mut sizes = std::collections::HashMap::new();
    let mut events = Vec::new();
    let mut foreign = 0;
    for (i, line) in lines.iter().enumerate() {
        let no = i as u64 + 1;
        match parse_line_in(line, 4, &|c| sizes.get(&c).copied()) {
            Ok(None) => {}
            Ok(Some(rec)) if rec.rank != 0 => foreign += 1,
            Ok(Some(rec)) => {
                if let Action::CommDef { id, world_ranks } = &rec.action {
                    if sizes.insert(*id, world_ranks.len() as u32).is_some() {
                        let kind = TraceErrorKind::Malformed {
                            action: "comm_def".into(),
                            expected: format!(
                                "a communicator id not defined before, {id} already is"
                            ),
                        };
                        return (events, Some((no, kind)), foreign);
                    }
                }
                events.push(Event {
                    action: rec.action,
                    comm: rec.comm,
                    callsite: rec.callsite,
                    location: no,
                });
            }
            Err(kind) => return (events, Some((no, kind)), foreign),
        }
    }
    (events, None, foreign)
}

fn write_trace(lines: &[&str]) -> PathBuf {
    static N: AtomicU32 = AtomicU32::new(0);
    let path = std::env::temp_dir().join(format!(
        "timeless-line-memo-{}-{}.txt",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    ));
    let mut f = std::fs::File::create(&path).expect("temp file");
    for l in lines {
        writeln!(f, "{l}").expect("write");
    }
    path
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn the_reader_decodes_as_line_by_line_parsing(
        define_first in any::<bool>(),
        picks in proptest::collection::vec(0..1000usize, 1..150)
    ) {
        let mut lines: Vec<&str> = Vec::new();
        if define_first {
            lines.push(COMM_DEF);
        }
        lines.extend(picks.iter().map(|&p| line_of(p)));
        let (want, want_err, want_foreign) = reference(&lines);
        let path = write_trace(&lines);
        let source = TraceSource::Shared(path.clone());
        // Shared mode reads every line (another rank's lines are skipped before decoding);
        // a per-rank file decodes them all.
        for per_rank in [false, true] {
            let mut reader = if per_rank {
                TraceSource::PerRank(vec![path.clone()]).open_rank(0, 4)
            } else {
                source.open_rank(0, 4)
            }
            .expect("opens");
            let mut got = Vec::new();
            let err = loop {
                match reader.next_event() {
                    Ok(Some(e)) => got.push(e),
                    Ok(None) => break None,
                    Err(e) => break Some(e),
                }
            };
            prop_assert_eq!(&got, &want);
            match (&err, &want_err) {
                (None, None) => {}
                (Some(e), Some((line, kind))) => {
                    prop_assert_eq!(e.line, *line);
                    prop_assert_eq!(format!("{:?}", e.kind), format!("{kind:?}"));
                }
                _ => prop_assert!(false, "error {:?}, expected {:?}", err, want_err),
            }
            if per_rank && want_err.is_none() {
                prop_assert_eq!(reader.foreign_lines(), want_foreign);
            }
        }
        std::fs::remove_file(&path).ok();
    }
}
