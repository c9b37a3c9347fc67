//! Any byte string: `format::read` returns Ok or Err, never panics; an Ok trace replays every
//! rank (bounded) without panicking and round-trips through `format::write`.
#![no_main]

use std::sync::Arc;

use libfuzzer_sys::fuzz_target;
use timeless_grammar::format::{read, write};

fuzz_target!(|data: &[u8]| {
    if let Ok((trace, _)) = read(data) {
        let (again, _) = write(&trace);
        let (back, _) = read(&again).expect("a written file reads back");
        assert_eq!(back.grammars, trace.grammars);
        let trace = Arc::new(trace);
        for r in 0..trace.nranks.min(16) {
            let mut s = trace.rank_stream(r).expect("rank in range");
            for _ in 0..100_000 {
                match s.next_action() {
                    Ok(Some(_)) => {}
                    _ => break,
                }
            }
        }
    }
});
