//! `DecodeAhead` gives every rank the same events, errors and counts as a direct read.

use std::io::Write;
use std::path::{Path, PathBuf};

use timeless_trace::{
    Action, ActionStream, DecodeAhead, Event, Rank, TraceError, TraceErrorKind, TraceSet,
    TraceSource,
};

/// A synthetic trace: rank r has `len(r)` compute actions of r·1e6 + i flops, and optionally an
/// error after `fail_at` actions.
struct Synthetic {
    len: fn(Rank) -> u64,
    fail_at: Option<(Rank, u64)>,
}

struct SyntheticStream {
    rank: Rank,
    i: u64,
    len: u64,
    fail_at: Option<u64>,
    path: PathBuf,
}

impl ActionStream for SyntheticStream {
    fn next_event(&mut self) -> Result<Option<Event>, TraceError> {
        if self.fail_at == Some(self.i) {
            return Err(TraceError::new(
                &self.path,
                self.i + 1,
                TraceErrorKind::BadRank("x".into()),
            ));
        }
        if self.i == self.len {
            return Ok(None);
        }
        self.i += 1;
        Ok(Some(Event {
            action: Action::Compute {
                flops: f64::from(self.rank) * 1e6 + self.i as f64,
            },
            comm: 0,
            callsite: None,
            location: self.i,
        }))
    }

    fn origin(&self) -> &Path {
        &self.path
    }
}

impl TraceSet for Synthetic {
    fn open_stream(&self, rank: Rank, _: u32) -> Result<Box<dyn ActionStream>, TraceError> {
        Ok(Box::new(SyntheticStream {
            rank,
            i: 0,
            len: (self.len)(rank),
            fail_at: self.fail_at.filter(|f| f.0 == rank).map(|f| f.1),
            path: PathBuf::from(format!("rank-{rank}.txt")),
        }))
    }

    fn ranks(&self) -> Option<usize> {
        None
    }
}

/// `(rank, flops, location)` of every event, and each stream's final error text.
type Drained = (Vec<(Rank, f64, u64)>, Vec<Option<String>>);

/// Every rank's events, reading the ranks in a skewed order (rank r takes r+1 events per turn),
/// as `(rank, flops, location)` plus each stream's final error text.
fn drain(set: &dyn TraceSet, n: u32) -> Drained {
    drain_with(set, n, |s| s.next_event())
}

/// [`drain`] through `ActionStream::next_event_boxed`.
fn drain_boxed(set: &dyn TraceSet, n: u32) -> Drained {
    drain_with(set, n, |s| s.next_event_boxed().map_err(|e| *e))
}

fn drain_with(
    set: &dyn TraceSet,
    n: u32,
    next: impl Fn(&mut dyn ActionStream) -> Result<Option<Event>, TraceError>,
) -> Drained {
    let mut streams: Vec<_> = (0..n).map(|r| set.open_stream(r, n).unwrap()).collect();
    let mut done = vec![false; n as usize];
    let mut errors = vec![None; n as usize];
    let mut out = Vec::new();
    while done.iter().any(|d| !d) {
        for r in 0..n as usize {
            for _ in 0..=r {
                if done[r] {
                    break;
                }
                match next(streams[r].as_mut()) {
                    Ok(Some(e)) => {
                        let Action::Compute { flops } = e.action else {
                            panic!("synthetic streams hold computes only")
                        };
                        out.push((r as Rank, flops, e.location));
                    }
                    Ok(None) => done[r] = true,
                    Err(e) => {
                        errors[r] = Some(e.to_string());
                        done[r] = true;
                    }
                }
            }
        }
    }
    (out, errors)
}

/// 37 ranks of 0..=2999 events each (uneven, some empty), with rank 5 failing at its 1000th
/// read: the decoded sequences, locations and the error equal the direct ones.
#[test]
fn decoded_ahead_equals_direct() {
    let set = Synthetic {
        len: |r| u64::from(r * 811 % 3000),
        fail_at: Some((5, 999)),
    };
    let direct = drain(&set, 37);
    let ahead = DecodeAhead::new(&set, 37).unwrap();
    let decoded = drain(&ahead, 37);
    assert_eq!(direct, decoded);
    // The boxed-error reads give the same events and errors, ahead or direct.
    let ahead = DecodeAhead::new(&set, 37).unwrap();
    assert_eq!(drain_boxed(&ahead, 37), direct);
    assert_eq!(drain_boxed(&set, 37), direct);
    // Hand check of the synthetic trace: rank 5 has 5·811 mod 3000 = 1055 actions but fails at
    // its 1000th read, after 999 events; its error names rank-5.txt:1000.
    assert_eq!(direct.0.iter().filter(|e| e.0 == 5).count(), 999);
    assert!(direct.1[5].as_deref().unwrap().contains("rank-5.txt:1000"));
    assert_eq!(direct.0.iter().filter(|e| e.0 == 0).count(), 0);
}

/// Many ranks (smallest batches): every event arrives once, in order.
#[test]
fn many_ranks_with_small_batches() {
    let set = Synthetic {
        len: |r| u64::from(r % 7) * 20,
        fail_at: None,
    };
    let n = 20_000;
    let (events, errors) = drain(&DecodeAhead::new(&set, n).unwrap(), n);
    assert!(errors.iter().all(Option::is_none));
    // Σ over r < 20000 of (r mod 7)·20: 2857 full cycles of 0+1+...+6 = 21, then r mod 7 = 0..0
    // for the 20000 - 7·2857 = 1 remaining rank: (2857·21 + 0)·20 = 1,199,940 events.
    assert_eq!(events.len(), 1_199_940);
    let mut last = vec![0u64; n as usize];
    for (r, flops, loc) in events {
        assert_eq!(loc, last[r as usize] + 1, "rank {r} out of order");
        assert_eq!(flops, f64::from(r) * 1e6 + loc as f64);
        last[r as usize] = loc;
    }
}

/// A real text trace with a malformed line: same error at the same file:line, same foreign-line
/// count, through the decoder.
#[test]
fn text_trace_errors_and_foreign_lines_are_kept() {
    let dir = std::env::temp_dir().join(format!("timeless-ahead-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let write = |name: &str, body: &str| {
        let p = dir.join(name);
        std::fs::File::create(&p)
            .unwrap()
            .write_all(body.as_bytes())
            .unwrap();
        p
    };
    let r0 = write(
        "r0.txt",
        "0 init\n0 compute 10\n1 compute 5\n0 compute 20\n0 finalize\n",
    );
    let r1 = write("r1.txt", "1 init\n1 compute 10\n1 sned 0 0 8\n1 finalize\n");
    let list = write("list.txt", &format!("{}\n{}\n", r0.display(), r1.display()));
    let src = TraceSource::open(&list).unwrap();
    let read_all = |set: &dyn TraceSet| {
        let mut res = Vec::new();
        for r in 0..2 {
            let mut s = set.open_stream(r, 2).unwrap();
            let mut acts = Vec::new();
            let err = loop {
                match s.next_event() {
                    Ok(Some(e)) => acts.push((e.action.keyword(), e.location)),
                    Ok(None) => break None,
                    Err(e) => break Some(e.to_string()),
                }
            };
            res.push((acts, err, s.foreign_lines()));
        }
        res
    };
    let direct = read_all(&src);
    let ahead = read_all(&DecodeAhead::new(&src, 2).unwrap());
    assert_eq!(direct, ahead);
    assert_eq!(direct[0].2, 1, "rank 0's file has one line of rank 1");
    assert!(direct[1].1.as_deref().unwrap().contains("r1.txt:3"));
    std::fs::remove_dir_all(&dir).ok();
}
