//! Compressed traces (`timeless compress`): for every corpus case, the bundled ring and the
//! sub-communicator example, (1) replaying the compressed file gives the same simulated time and
//! per-rank finish times as replaying the text trace, to the last printed digit, (2) a lossless
//! `decompress` gives back the same parsed actions (with communicator ids), and (3) the default
//! precision moves the simulated time by less than 0.5 %.

use std::path::{Path, PathBuf};
use std::process::Command;

use timeless_trace::TraceSource;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn timeless(dir: &Path, args: &[&str]) -> Vec<u8> {
    let out = Command::new(env!("CARGO_BIN_EXE_timeless"))
        .current_dir(dir)
        .args(args)
        .output()
        .expect("run timeless");
    assert!(
        out.status.success(),
        "{}: timeless {args:?} failed: {}",
        dir.display(),
        String::from_utf8_lossy(&out.stderr)
    );
    out.stdout
}

/// (simulated time, per-rank finish times) as printed in the JSON report.
fn times(dir: &Path, trace: &str, rest: &[String]) -> (String, Vec<String>) {
    let mut args = vec!["simulate", trace, "--format", "json"];
    args.extend(rest.iter().map(String::as_str));
    let v: serde_json::Value = serde_json::from_slice(&timeless(dir, &args)).unwrap();
    let finish = v["ranks"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["finish_time"].to_string())
        .collect();
    (v["simulated_time"].to_string(), finish)
}

fn events(list: &Path, nranks: u32) -> Vec<Vec<(timeless_trace::Action, u32)>> {
    let src = TraceSource::open(list).unwrap();
    (0..nranks)
        .map(|r| {
            let mut rd = src.open_rank(r, nranks).unwrap();
            let mut v = Vec::new();
            while let Some(e) = rd.next_event().unwrap() {
                v.push((e.action, e.comm));
            }
            v
        })
        .collect()
}

/// Checks one trace: `sim_args` are the `simulate` arguments after the trace.
fn check(dir: &Path, trace: &str, np: u32, sim_args: &[String]) {
    let tmp = tempfile::tempdir().unwrap();
    let tlg = tmp.path().join("t.tlg");
    let tlg_s = tlg.to_str().unwrap();
    let np_s = np.to_string();
    timeless(
        dir,
        &[
            "compress",
            trace,
            "-n",
            &np_s,
            "--precision",
            "0",
            "-o",
            tlg_s,
        ],
    );
    let text = times(dir, trace, sim_args);
    let packed = times(dir, tlg_s, sim_args);
    assert_eq!(text, packed, "{}: text vs compressed replay", dir.display());

    let out = tmp.path().join("out");
    timeless(dir, &["decompress", tlg_s, "-o", out.to_str().unwrap()]);
    // The decompressed text (with the tracer metadata written back) replays the same.
    let list = out.join("traces.txt");
    assert_eq!(
        times(dir, list.to_str().unwrap(), sim_args),
        text,
        "{}: decompressed replay",
        dir.display()
    );
    assert_eq!(
        events(&dir.join(trace), np),
        events(&out.join("traces.txt"), np),
        "{}: decompressed actions differ",
        dir.display()
    );

    let lossy = tmp.path().join("lossy.tlg");
    timeless(
        dir,
        &[
            "compress",
            trace,
            "-n",
            &np_s,
            "-o",
            lossy.to_str().unwrap(),
        ],
    );
    let (t_lossy, _) = times(dir, lossy.to_str().unwrap(), sim_args);
    let (a, b): (f64, f64) = (text.0.parse().unwrap(), t_lossy.parse().unwrap());
    assert!(
        (a - b).abs() <= 5e-3 * a.abs(),
        "{}: default precision moved the time from {a} to {b}",
        dir.display()
    );
}

#[test]
fn corpus_replays_identically_from_compressed_files() {
    let corpus = root().join("validation/corpus");
    let mut dirs: Vec<PathBuf> = std::fs::read_dir(&corpus)
        .unwrap()
        .map(|e| e.unwrap().path())
        .filter(|p| p.join("case.toml").exists())
        .collect();
    dirs.sort();
    assert!(dirs.len() >= 60, "corpus has {} cases", dirs.len());
    for dir in dirs {
        let case: toml::Value =
            toml::from_str(&std::fs::read_to_string(dir.join("case.toml")).unwrap()).unwrap();
        let np = case["np"].as_integer().unwrap() as u32;
        let mut args = vec![
            "--platform".to_string(),
            case["platform"].as_str().unwrap().to_string(),
            "--hostfile".to_string(),
            case["hostfile"].as_str().unwrap().to_string(),
            "-n".to_string(),
            np.to_string(),
        ];
        for c in case
            .get("cfg")
            .and_then(|c| c.as_array())
            .into_iter()
            .flatten()
        {
            args.push(format!("--cfg={}", c.as_str().unwrap()));
        }
        check(&dir, case["traces"].as_str().unwrap(), np, &args);
    }
}

#[test]
fn bundled_rings_and_subcommunicators() {
    let r = root();
    check(
        &r,
        "traces/ring4/ring.txt",
        4,
        &[
            "--platform".into(),
            "platforms/mycluster.xml".into(),
            "--deployment".into(),
            "deployments/mycluster-ring4.xml".into(),
        ],
    );
    // The seed's dialect (`p1 recv p0`: no count, no tag) round-trips in that dialect.
    check(
        &r,
        "traces/ring4/ring-seed.txt",
        4,
        &[
            "--platform".into(),
            "platforms/mycluster.xml".into(),
            "--deployment".into(),
            "deployments/mycluster-ring4.xml".into(),
        ],
    );
    check(
        &r,
        "traces/ring4/ring-fig1.txt",
        4,
        &[
            "--platform".into(),
            "platforms/mycluster.xml".into(),
            "--deployment".into(),
            "deployments/mycluster-ring4.xml".into(),
        ],
    );
    // A traced program on row, column, duplicated, Cartesian, self and intercommunicator-merged
    // communicators (comm_def + comm=<id>).
    check(
        &r.join("traces/commsplit4"),
        "trace-list.txt",
        4,
        &[
            "--platform".into(),
            "../../platforms/mycluster.xml".into(),
            "--deployment".into(),
            "../../deployments/mycluster-ring4.xml".into(),
        ],
    );
    let sub = r.join("simulator/cli/tests/data/subcomm");
    check(
        &sub,
        "sub-list.txt",
        4,
        &[
            "--platform".into(),
            "../../../../../platforms/mycluster.xml".into(),
            "--hostfile".into(),
            "hostfile-4".into(),
        ],
    );
}

#[test]
fn stats_and_errors() {
    let r = root();
    let tmp = tempfile::tempdir().unwrap();
    let tlg = tmp.path().join("ring.tlg");
    timeless(
        &r,
        &[
            "compress",
            "traces/ring4/ring-fig1.txt",
            "-o",
            tlg.to_str().unwrap(),
        ],
    );
    let s = String::from_utf8(timeless(&r, &["stats", tlg.to_str().unwrap()])).unwrap();
    // The seed's Figure 1 ring: 4 ranks of 5 actions (init, compute, send, recv, finalize).
    assert!(s.contains("ranks: 4\nactions: 20\n"), "{s}");
    // A truncated file is bad input (exit 2) with the byte offset.
    let bytes = std::fs::read(&tlg).unwrap();
    let cut = tmp.path().join("cut.tlg");
    std::fs::write(&cut, &bytes[..bytes.len() / 2]).unwrap();
    let out = Command::new(env!("CARGO_BIN_EXE_timeless"))
        .args(["stats", cut.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cut.tlg: byte "), "{err}");
}
