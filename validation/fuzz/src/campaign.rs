//! A bounded fuzzing campaign on one target: mutate, run, keep inputs with a new outcome,
//! stop at the first panic or at the deadline.
//!
//! Panics are caught ([`std::panic::catch_unwind`]) and returned as a [`Crash`] with the input.
//! An abort (stack overflow, failed allocation) or a hang cannot be caught in-process, so when
//! the caller gives a `current` file every input is written there before it runs (two system
//! calls), and a watchdog thread ends the process with exit code 3 when one input runs longer
//! than `hang_secs`: the parent process (`timeless-fuzz`) then finds the culprit in that file.

use std::collections::HashSet;
use std::fs::File;
use std::os::unix::fs::FileExt;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::mutate::Mutator;
use crate::{seeds, Target};

/// The largest pool of inputs mutations start from.
const MAX_POOL: usize = 2000;

/// What a campaign did.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stats {
    /// Inputs run (seeds included).
    pub iterations: u64,
    /// Distinct outcomes seen (accepted, and each error message without digits and quotes).
    pub outcomes: usize,
    /// Inputs in the pool at the end.
    pub pool: usize,
}

/// An input that made the target panic.
#[derive(Debug, Clone)]
pub struct Crash {
    /// The input.
    pub input: Vec<u8>,
    /// The panic's message and location.
    pub message: String,
}

/// Limits of a campaign.
#[derive(Debug, Clone)]
pub struct Limits {
    /// Wall-clock budget.
    pub duration: Duration,
    /// At most this many inputs (0: no limit).
    pub max_iterations: u64,
    /// Seed of the mutations.
    pub seed: u64,
    /// One input running longer than this is a hang (with `current`).
    pub hang_secs: u64,
}

/// The outcome's class: the message without digits and without quoted text, so `line 3: 'x'`
/// and `line 4: 'y'` are one class (messages quote the offending input).
fn class(outcome: &Result<(), String>) -> String {
    match outcome {
        Ok(()) => "ok".into(),
        Err(m) => {
            let mut quoted = false;
            m.chars()
                .filter(|&c| {
                    if c == '\'' || c == '"' {
                        quoted = !quoted;
                        return false;
                    }
                    !quoted && !c.is_ascii_digit()
                })
                .take(120)
                .collect()
        }
    }
}

thread_local! {
    static LAST_PANIC: std::cell::RefCell<String> = const { std::cell::RefCell::new(String::new()) };
}

/// Replaces the panic hook by one that records the message and location silently (the
/// campaign reports it once, with the input).
pub fn quiet_panics() {
    std::panic::set_hook(Box::new(|info| {
        let msg = info
            .payload()
            .downcast_ref::<&str>()
            .map(|s| s.to_string())
            .or_else(|| info.payload().downcast_ref::<String>().cloned())
            .unwrap_or_default();
        let at = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        LAST_PANIC.with(|p| *p.borrow_mut() = format!("{msg} (at {at})"));
    }));
}

/// Runs one input; a panic becomes `Err(message)`.
pub fn run_one(target: &Target, input: &[u8]) -> Result<Result<(), String>, String> {
    match catch_unwind(AssertUnwindSafe(|| (target.run)(input))) {
        Ok(outcome) => Ok(outcome),
        Err(_) => Err(LAST_PANIC.with(|p| p.borrow().clone())),
    }
}

/// Runs `target` on its seeds, then on mutations until `limits` are reached. Call
/// [`quiet_panics`] first for quiet output.
///
/// # Errors
/// The first input that panicked, or whose error message was empty.
pub fn run(target: &Target, limits: &Limits, current: Option<&Path>) -> Result<Stats, Crash> {
    let mut pool = seeds(target.name);
    if pool.is_empty() {
        pool.push(Vec::new());
    }
    let current = current.and_then(|p| File::create(p).ok());
    let progress = Arc::new(AtomicU64::new(0));
    if current.is_some() {
        let progress = Arc::clone(&progress);
        let hang = limits.hang_secs.max(1);
        let name = target.name;
        std::thread::spawn(move || {
            let mut last = u64::MAX;
            loop {
                std::thread::sleep(Duration::from_secs(hang));
                let now = progress.load(Ordering::Relaxed);
                if now == last {
                    eprintln!("{name}: one input ran longer than {hang} s (a hang)");
                    std::process::exit(3);
                }
                last = now;
            }
        });
    }
    let mut seen = HashSet::new();
    let mut mutator = Mutator::new(limits.seed, target.dictionary);
    let start = Instant::now();
    let mut iterations = 0u64;
    let n_seeds = pool.len();
    loop {
        let input = if (iterations as usize) < n_seeds {
            pool[iterations as usize].clone()
        } else {
            if start.elapsed() >= limits.duration
                || (limits.max_iterations > 0 && iterations >= limits.max_iterations)
            {
                break;
            }
            let a = mutator.pick(pool.len());
            let b = mutator.pick(pool.len());
            mutator.mutate(&pool[a], &pool[b])
        };
        if let Some(f) = &current {
            let _ = f.set_len(0);
            let _ = f.write_all_at(&input, 0);
        }
        let outcome = run_one(target, &input).map_err(|message| Crash {
            input: input.clone(),
            message,
        })?;
        if let Err(m) = &outcome {
            if m.trim().is_empty() {
                return Err(Crash {
                    input,
                    message: "an error with an empty message".into(),
                });
            }
        }
        iterations += 1;
        progress.store(iterations, Ordering::Relaxed);
        if seen.insert(class(&outcome)) && (iterations as usize) > n_seeds {
            if pool.len() >= MAX_POOL {
                let i = mutator.pick(pool.len());
                pool[i] = input;
            } else {
                pool.push(input);
            }
        }
    }
    Ok(Stats {
        iterations,
        outcomes: seen.len(),
        pool: pool.len(),
    })
}
