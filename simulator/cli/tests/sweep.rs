//! `timeless sweep`: kill a sweep midway, rerun, only the missing points run.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn data_rows(csv: &Path) -> Vec<String> {
    let text = std::fs::read_to_string(csv).unwrap_or_default();
    // Complete lines after the header.
    let complete = match text.rfind('\n') {
        Some(i) => &text[..=i],
        None => "",
    };
    complete.lines().skip(1).map(String::from).collect()
}

#[test]
fn killed_sweep_resumes_where_it_stopped() {
    let tmp = tempfile::tempdir().unwrap();
    let r = root();
    // 2 traces x 100 bandwidth factors x 3 latency factors = 600 points.
    let bw: Vec<String> = (1..=100).map(|i| format!("{}", 0.25 * i as f64)).collect();
    let spec = format!(
        "platform = {:?}\ndeployment = {:?}\ntraces = [{:?}, {:?}]\n\
         [[axis]]\nname = \"scale-bandwidth\"\nvalues = [{}]\n\
         [[axis]]\nname = \"scale-latency\"\nvalues = [0.5, 1, 2]\n",
        r.join("platforms/mycluster.xml"),
        r.join("deployments/mycluster-ring4.xml"),
        r.join("traces/ring4/ring.txt"),
        r.join("traces/commsplit4/trace-list.txt"),
        bw.join(", ")
    );
    let spec_path = tmp.path().join("study.toml");
    std::fs::write(&spec_path, spec).unwrap();
    let out = tmp.path().join("out");
    let csv = out.join("results.csv");

    let mut child = Command::new(env!("CARGO_BIN_EXE_timeless"))
        .args(["sweep", spec_path.to_str().unwrap(), "-j", "1", "-o"])
        .arg(&out)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let t0 = Instant::now();
    while data_rows(&csv).len() < 5 && t0.elapsed() < Duration::from_secs(60) {
        std::thread::sleep(Duration::from_millis(2));
    }
    child.kill().unwrap();
    child.wait().unwrap();
    let before = data_rows(&csv).len();
    assert!(before >= 5, "the sweep wrote {before} rows");
    assert!(before < 600, "the sweep finished before it was killed");

    let o = Command::new(env!("CARGO_BIN_EXE_timeless"))
        .args(["sweep", spec_path.to_str().unwrap(), "-j", "2", "-o"])
        .arg(&out)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "{stdout}{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let want = format!(
        "Points: 600 ({} run now, {before} already done, 0 failed)",
        600 - before
    );
    assert!(stdout.contains(&want), "{stdout}\nwanted: {want}");

    let rows = data_rows(&csv);
    assert_eq!(rows.len(), 600);
    let mut keys: Vec<String> = rows
        .iter()
        .map(|l| {
            // Keys hold no comma nor quote here (absolute paths without them).
            l.split(',').next().unwrap().to_string()
        })
        .collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 600, "each point once");
    assert!(stdout.contains("Best point per trace:"), "{stdout}");
}

#[test]
fn bad_spec_is_bad_input() {
    let tmp = tempfile::tempdir().unwrap();
    let spec = tmp.path().join("bad.toml");
    std::fs::write(
        &spec,
        "platform = \"p.xml\"\ntraces = [\"t\"]\n[[axis]]\nname = \"scale-network\"\nvalues = [1]\n",
    )
    .unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_timeless"))
        .args(["sweep", spec.to_str().unwrap()])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(
        err.contains("bad.toml") && err.contains("axis[0].name") && err.contains("scale-network"),
        "{err}"
    );
}
