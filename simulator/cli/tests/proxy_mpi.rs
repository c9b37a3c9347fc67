//! Proxy applications (`timeless proxy`, issue 15): for every validation program that ends
//! normally (C and Fortran) at 2 and 4 ranks (4 only for the programs that need exactly 4),
//! the generated C program compiles without warnings, runs with no received-size mismatch, and
//! its own trace has every rank's calls of the original trace, with the same signatures, in the
//! same order.

use std::path::{Path, PathBuf};
use std::process::Command;

mod common;

use common::mpi::{text, timeless, MPI_JOBS};
use timeless_grammar::signature::split;
use timeless_trace::{Action, TraceSet, TraceSource};

fn tmp() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("proxy-mpi")
}

/// Traces `exe` at `n` ranks into `dir`, the launcher's environment extended by `env` (the programs that create graph
/// communicators run with `OMPI_MCA_topo=basic`, as in the profile tests).
fn trace_env(exe: &Path, args: &[&str], n: u32, dir: &Path, env: &[(&str, &str)]) -> String {
    common::mpi::trace_into_env(exe, args, n, dir, &[], env)
}

/// Every rank's calls as signatures: computation and SimGrid's no-op records left out (a
/// proxy creates communicators at their `comm_def`), negative tags as the proxy sends them,
/// and communicators numbered by their `comm_def`s in order (the tracer also numbers
/// intercommunicators, which TI traces hold as comments only, so ids may skip). Tests are left
/// out: how many polls fail is a matter of timing (the proxy completes a request where a test
/// found it complete, which the tracer writes as the `wait` that follows it anyway).
fn calls(list: &Path, n: u32) -> Vec<Vec<Vec<u8>>> {
    let src = TraceSource::open(list).unwrap();
    (0..n)
        .map(|r| {
            let mut s = src.open_stream(r, n).unwrap();
            let mut v = Vec::new();
            let mut ids = std::collections::HashMap::new();
            while let Some(mut ev) = s.next_event().unwrap() {
                if let Action::CommDef { id, .. } = &mut ev.action {
                    let next = ids.len() as u32 + 1;
                    *id = *ids.entry(*id).or_insert(next);
                }
                if ev.comm != 0 {
                    ev.comm = ids[&ev.comm];
                }
                match &mut ev.action {
                    Action::Compute { .. }
                    | Action::Sleep { .. }
                    | Action::Location
                    | Action::CommNoop
                    | Action::Test(_) => continue,
                    Action::Send { tag, .. } | Action::Recv { tag, .. } if *tag < 0 => {
                        *tag += 32768
                    }
                    Action::Wait(timeless_trace::RequestKey::Key { tag, .. }) if *tag < 0 => {
                        *tag += 32768
                    }
                    _ => {}
                }
                v.push(split(&ev.action, r, ev.comm, None).signature);
            }
            v
        })
        .collect()
}

/// `timeless proxy TRACE -o SRC`, then `make -C SRC` with `-Werror`: panics with the output if
/// either fails.
fn build_proxy(trace: &Path, src: &Path) {
    let out = timeless(&[
        "proxy",
        trace.to_str().unwrap(),
        "-o",
        src.to_str().unwrap(),
    ]);
    let (o, e) = text(&out);
    assert!(out.status.success(), "{}: {o}{e}", trace.display());
    let make = Command::new("make")
        .arg("-C")
        .arg(src)
        .arg("CFLAGS=-O2 -Wall -Wextra -Werror")
        .output()
        .unwrap();
    let (mo, me) = text(&make);
    assert!(
        make.status.success(),
        "{}: proxy build: {mo}{me}",
        trace.display()
    );
}

/// A program, its arguments, its rank counts and extra launcher environment.
type Case<'a> = (&'a str, &'a [&'a str], &'a [u32], &'a [(&'a str, &'a str)]);

#[test]
fn proxies_repeat_the_calls_of_the_original() {
    if !common::mpi::have_mpi("proxy") {
        return;
    }
    let programs = common::mpi::programs(&tmp());
    // Every validation program that ends normally (abort_midway does not; the sessions
    // programs need MPICH, whose runs are in validation/testsuite), C and Fortran.
    let topo: &[(&str, &str)] = &[("OMPI_MCA_topo", "basic")];
    let both: &[u32] = &[2, 4];
    let cases: &[Case] = &[
        ("ring", &["20", "100000", "1000000"], both, &[]),
        ("stencil2d", &["32", "10"], both, &[]),
        ("stencil3d", &["8", "3"], both, &[]),
        ("commsplit", &["3"], both, &[]),
        ("coverage", &[], both, &[]),
        ("wavefront", &["16", "4", "2"], both, &[]),
        ("persistent", &["4", "50"], both, &[]),
        ("pi_mc", &["8", "2000"], both, &[]),
        ("callsites", &["3"], both, &[]),
        ("callcost", &["200"], both, &[]),
        ("tracing_control", &["100000"], both, &[]),
        ("commfig1", &[], &[4], topo),
        ("commkinds", &[], &[4], topo),
        ("commkinds_f", &[], &[4], topo),
        ("fortran_control", &[], both, &[]),
        ("fortran_f08", &[], both, &[]),
        ("fortran_mix", &["2"], both, &[]),
        ("callsites_f", &[], both, &[]),
    ];
    for &(program, args, ranks, env) in cases {
        for &n in ranks {
            let base = tmp().join(format!("{program}-{n}"));
            let original = base.join("original");
            trace_env(&programs.join(program), args, n, &original, env);
            let src = base.join("src");
            build_proxy(&original.join("trace-list.txt"), &src);
            let replayed = base.join("proxy-trace");
            let log = trace_env(&src.join("proxy"), &[], n, &replayed, env);
            assert!(
                log.contains("proxy: 0 size mismatches"),
                "{program} {n}: {log}"
            );
            let want = calls(&original.join("trace-list.txt"), n);
            let got = calls(&replayed.join("trace-list.txt"), n);
            for r in 0..n as usize {
                assert_eq!(
                    want[r].len(),
                    got[r].len(),
                    "{program} {n}: rank {r} makes {} calls in the proxy, {} in the original",
                    got[r].len(),
                    want[r].len()
                );
                if let Some(i) = (0..want[r].len()).find(|&i| want[r][i] != got[r][i]) {
                    panic!("{program} {n}: rank {r}: call {i} differs");
                }
            }
        }
    }
}

/// A TI receive records the count the program posted, which may exceed what arrives (NAS MG
/// posts its whole buffer): the proxy receives less, as the original did, and that is no size
/// mismatch.
#[test]
fn a_receive_smaller_than_posted_is_no_mismatch() {
    if !common::mpi::have_mpi("proxy") {
        return;
    }
    let base = tmp().join("posted-upper-bound");
    let _ = std::fs::remove_dir_all(&base);
    let trace = base.join("trace");
    std::fs::create_dir_all(&trace).unwrap();
    std::fs::write(
        trace.join("rank-0.txt"),
        "0 init\n0 isend 1 3 100\n0 recv 1 4 5000\n0 wait 0 1 3\n0 finalize\n",
    )
    .unwrap();
    std::fs::write(
        trace.join("rank-1.txt"),
        "1 init\n1 irecv 0 3 1000\n1 send 0 4 20\n1 wait 0 1 3\n1 finalize\n",
    )
    .unwrap();
    let list = trace.join("list.txt");
    std::fs::write(
        &list,
        format!(
            "{}\n{}\n",
            trace.join("rank-0.txt").display(),
            trace.join("rank-1.txt").display()
        ),
    )
    .unwrap();
    let src = base.join("src");
    build_proxy(&list, &src);
    let _serial = MPI_JOBS.lock().unwrap_or_else(|p| p.into_inner());
    let run = Command::new("mpirun")
        .args(["--oversubscribe", "-n", "2"])
        .arg(src.join("proxy"))
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .output()
        .unwrap();
    let (ro, re) = text(&run);
    assert!(run.status.success(), "{ro}{re}");
    assert!(ro.contains("proxy: 0 size mismatches"), "{ro}{re}");
}
