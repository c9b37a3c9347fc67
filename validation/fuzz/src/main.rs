//! `timeless-fuzz`: runs every fuzz target (or those named) for a bounded time each, on the
//! stable toolchain, and fails on the first panic, abort or hang.
//!
//! ```text
//! timeless-fuzz [--secs S] [--seed N] [--crashes DIR] [TARGET...]   # all targets, S s each
//! timeless-fuzz --list
//! timeless-fuzz --replay TARGET FILE...                            # run saved inputs
//! ```
//!
//! Each target runs in a child process (`--child`), so that an abort or a hang is caught too:
//! the child writes every input to `DIR/<target>.current` before running it, and a watchdog
//! ends it with exit code 3 when one input takes longer than 10 s. A crashing input is saved as
//! `DIR/crash-<target>` (default DIR: `target/fuzz-crashes`). Exit code 0: no crash; 1: a
//! crash (named with its file); 2: bad arguments.

use std::path::{Path, PathBuf};
use std::process::{Command, ExitCode};
use std::time::{Duration, Instant};

use timeless_fuzz::campaign::{self, Limits};
use timeless_fuzz::{find, TARGETS};

const HANG_SECS: u64 = 10;

struct Args {
    secs: f64,
    seed: u64,
    crashes: PathBuf,
    targets: Vec<String>,
    child: bool,
    list: bool,
    replay: bool,
}

fn parse_args() -> Result<Args, String> {
    let mut a = Args {
        secs: 10.0,
        seed: 1,
        crashes: PathBuf::from(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/../../target/fuzz-crashes"
        )),
        targets: Vec::new(),
        child: false,
        list: false,
        replay: false,
    };
    let mut it = std::env::args().skip(1);
    while let Some(arg) = it.next() {
        let mut value = |name: &str| it.next().ok_or(format!("{name} needs a value"));
        match arg.as_str() {
            "--secs" => {
                a.secs = value("--secs")?
                    .parse()
                    .map_err(|_| "--secs takes seconds".to_string())?
            }
            "--seed" => {
                a.seed = value("--seed")?
                    .parse()
                    .map_err(|_| "--seed takes an integer".to_string())?
            }
            "--crashes" => a.crashes = PathBuf::from(value("--crashes")?),
            "--child" => a.child = true,
            "--list" => a.list = true,
            "--replay" => a.replay = true,
            s if s.starts_with('-') => return Err(format!("unknown option {s}")),
            _ => a.targets.push(arg),
        }
    }
    Ok(a)
}

/// Runs saved inputs (`--replay TARGET FILE...`) and prints each outcome.
fn replay(args: &Args) -> ExitCode {
    let Some(target) = args.targets.first().and_then(|t| find(t)) else {
        eprintln!("--replay needs a target name, then files");
        return ExitCode::from(2);
    };
    for f in &args.targets[1..] {
        let data = std::fs::read(f).unwrap_or_default();
        match campaign::run_one(target, &data) {
            Ok(Ok(())) => println!("{f}: accepted"),
            Ok(Err(m)) => println!("{f}: error: {m}"),
            Err(p) => println!("{f}: PANIC: {p}"),
        }
    }
    ExitCode::SUCCESS
}

/// In the child: one target's campaign; prints `iterations outcomes` on success.
fn child(args: &Args) -> ExitCode {
    let Some(target) = args.targets.first().and_then(|t| find(t)) else {
        return ExitCode::from(2);
    };
    campaign::quiet_panics();
    let current = args.crashes.join(format!("{}.current", target.name));
    let limits = Limits {
        duration: Duration::from_secs_f64(args.secs),
        max_iterations: 0,
        seed: args.seed,
        hang_secs: HANG_SECS,
    };
    match campaign::run(target, &limits, Some(&current)) {
        Ok(s) => {
            println!("{} {} {}", s.iterations, s.outcomes, s.pool);
            ExitCode::SUCCESS
        }
        Err(c) => {
            let _ = std::fs::write(&current, &c.input);
            eprintln!("panic: {}", c.message);
            ExitCode::from(1)
        }
    }
}

fn save_crash(dir: &Path, name: &str) -> PathBuf {
    let crash = dir.join(format!("crash-{name}"));
    let _ = std::fs::copy(dir.join(format!("{name}.current")), &crash);
    crash
}

fn main() -> ExitCode {
    let args = match parse_args() {
        Ok(a) => a,
        Err(e) => {
            eprintln!("timeless-fuzz: {e}");
            return ExitCode::from(2);
        }
    };
    if args.list {
        for t in TARGETS {
            println!("{:18} {}", t.name, t.about);
        }
        return ExitCode::SUCCESS;
    }
    if args.replay {
        return replay(&args);
    }
    if args.child {
        return child(&args);
    }
    let names: Vec<&str> = if args.targets.is_empty() {
        TARGETS.iter().map(|t| t.name).collect()
    } else {
        args.targets.iter().map(String::as_str).collect()
    };
    if let Some(bad) = names.iter().find(|n| find(n).is_none()) {
        eprintln!("timeless-fuzz: no target '{bad}' (--list names them)");
        return ExitCode::from(2);
    }
    if let Err(e) = std::fs::create_dir_all(&args.crashes) {
        eprintln!("timeless-fuzz: {}: {e}", args.crashes.display());
        return ExitCode::from(2);
    }
    let me = std::env::current_exe().expect("own path");
    let start = Instant::now();
    let mut failed = false;
    for name in names {
        let out = Command::new(&me)
            .args(["--child", "--secs", &args.secs.to_string(), "--seed"])
            .arg(args.seed.to_string())
            .arg("--crashes")
            .arg(&args.crashes)
            .arg(name)
            .output()
            .expect("run the fuzz child");
        let stdout = String::from_utf8_lossy(&out.stdout);
        let stderr = String::from_utf8_lossy(&out.stderr);
        if out.status.success() {
            let f: Vec<&str> = stdout.split_whitespace().collect();
            println!(
                "{name:18} {:>9} inputs, {:>5} distinct outcomes, pool {:>4}: no crash",
                f.first().unwrap_or(&"?"),
                f.get(1).unwrap_or(&"?"),
                f.get(2).unwrap_or(&"?")
            );
        } else {
            failed = true;
            let crash = save_crash(&args.crashes, name);
            println!(
                "{name:18} CRASH ({}): {}\n  input saved as {} (rerun: timeless-fuzz --replay {name} FILE)",
                out.status,
                stderr.trim(),
                crash.display()
            );
        }
    }
    println!("fuzzing took {:.0} s", start.elapsed().as_secs_f64());
    if failed {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    }
}
