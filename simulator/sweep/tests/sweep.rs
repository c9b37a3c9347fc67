//! A real sweep: 2 traces x 2 axes x 3 values, checked against single replays; resuming.

use std::path::{Path, PathBuf};

use timeless_replay::{NoObserver, Observer};
use timeless_run::{Frontend, FrontendError, SimulateConfig};
use timeless_sweep::{points, run, NoProgress, Options, Spec, SweepError};

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

const SPEC: &str = r#"
platform = "platforms/mycluster.xml"
deployment = "deployments/mycluster-ring4.xml"
traces = ["traces/ring4/ring.txt", "traces/commsplit4/trace-list.txt"]

[[axis]]
name = "scale-bandwidth"
values = [0.5, 1, 2]

[[axis]]
name = "scale-latency"
values = [0.5, 1.0, 2]
"#;

fn spec() -> Spec {
    Spec::parse(SPEC, &root().join("study.toml")).expect("the spec parses")
}

struct Quiet(NoObserver);
impl Frontend for Quiet {
    fn notice(&mut self, _: &str) {}
    fn observer(&mut self) -> Result<&mut dyn Observer, FrontendError> {
        Ok(&mut self.0)
    }
}

/// The simulated time of one plain `simulate` call (no sweep machinery).
fn single(trace: &str, bw: f64, lat: f64) -> f64 {
    let r = root();
    let mut c = SimulateConfig::new(r.join("platforms/mycluster.xml"));
    c.trace = Some(r.join(trace));
    c.deployment = Some(r.join("deployments/mycluster-ring4.xml"));
    c.what_if.bandwidth = bw;
    c.what_if.latency = lat;
    timeless_run::simulate(&c, &mut Quiet(NoObserver))
        .expect("single run")
        .report
        .simulated_time_secs
}

fn csv_rows(dir: &Path) -> Vec<Vec<String>> {
    let mut r = csv::Reader::from_path(dir.join("results.csv")).unwrap();
    r.records()
        .map(|x| x.unwrap().iter().map(String::from).collect())
        .collect()
}

#[test]
fn points_are_ordered_and_keyed() {
    let p = points(&spec());
    assert_eq!(p.len(), 18);
    assert_eq!(
        p[0].key,
        "traces/ring4/ring.txt|scale-bandwidth=0.5|scale-latency=0.5"
    );
    assert_eq!(
        p[1].key,
        "traces/ring4/ring.txt|scale-bandwidth=0.5|scale-latency=1"
    );
    assert_eq!(
        p[17].key,
        "traces/commsplit4/trace-list.txt|scale-bandwidth=2|scale-latency=2"
    );
}

#[test]
fn sweep_equals_single_runs_and_resumes() {
    let spec = spec();
    let dir = tempfile::tempdir().unwrap();
    // First: stop after 7 points (an interrupted sweep).
    let mut opts = Options::default();
    opts.jobs = Some(2);
    opts.max_points = Some(7);
    let s = run(&spec, dir.path(), &opts, &NoProgress).unwrap();
    assert_eq!((s.total, s.skipped, s.ran), (18, 0, 7));
    assert_eq!(csv_rows(dir.path()).len(), 7);
    // A torn last line, as a kill mid-write leaves.
    {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .append(true)
            .open(dir.path().join("results.csv"))
            .unwrap();
        f.write_all(b"traces/ring4/ring.txt|scale-bandwidth=2|scale-lat")
            .unwrap();
    }
    // A kill between the CSV and the database write: the rerun puts the row back.
    {
        let db = rusqlite::Connection::open(dir.path().join("results.db")).unwrap();
        let gone = db
            .execute(
                "DELETE FROM points WHERE key = ?1",
                ["traces/ring4/ring.txt|scale-bandwidth=0.5|scale-latency=0.5"],
            )
            .unwrap();
        assert_eq!(gone, 1);
    }
    // The rerun runs only the 11 missing points.
    opts.max_points = None;
    let s = run(&spec, dir.path(), &opts, &NoProgress).unwrap();
    assert_eq!((s.total, s.skipped, s.ran), (18, 7, 11));
    assert!(s.failed.is_empty(), "{:?}", s.failed);
    assert_eq!(s.results.len(), 18);
    // A third run has nothing to do.
    let again = run(&spec, dir.path(), &opts, &NoProgress).unwrap();
    assert_eq!((again.skipped, again.ran), (18, 0));
    assert_eq!(again.results, s.results);

    let rows = csv_rows(dir.path());
    assert_eq!(rows.len(), 18, "each point once");
    let mut keys: Vec<&str> = rows.iter().map(|r| r[0].as_str()).collect();
    keys.sort();
    keys.dedup();
    assert_eq!(keys.len(), 18);
    for row in &rows {
        let (trace, bw, lat) = (&row[1], &row[2], &row[3]);
        assert_eq!(row.len(), 6);
        let t: f64 = row[4].parse().unwrap();
        let want = single(trace, bw.parse().unwrap(), lat.parse().unwrap());
        assert_eq!(t, want, "{}", row[0]);
        if trace == "traces/ring4/ring.txt" && bw == "1" && lat == "1" {
            assert_eq!(format!("{t:.12}"), "0.223726707037");
        }
    }

    // The database holds the same points.
    let db = rusqlite::Connection::open(dir.path().join("results.db")).unwrap();
    let n: i64 = db
        .query_row("SELECT COUNT(*) FROM points", [], |r| r.get(0))
        .unwrap();
    assert_eq!(n, 18);
    let t: f64 = db
        .query_row(
            "SELECT simulated_time_s FROM points WHERE key = ?1",
            ["traces/ring4/ring.txt|scale-bandwidth=1|scale-latency=1"],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(format!("{t:.12}"), "0.223726707037");

    // Summary: best point per trace is the smallest time; faster network is never slower.
    assert_eq!(s.best.len(), 2);
    for (trace, b) in &s.best {
        let min = s
            .results
            .iter()
            .filter(|r| r.key.starts_with(&format!("{trace}|")))
            .map(|r| r.simulated_secs)
            .fold(f64::INFINITY, f64::min);
        assert_eq!(b.simulated_secs, min);
    }
    // Plots, when a font is installed (text needs one).
    let font = [
        "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
        "/usr/share/fonts/truetype/liberation/LiberationSans-Regular.ttf",
    ]
    .iter()
    .find_map(|p| std::fs::read(p).ok());
    if let Some(bytes) = font {
        let bytes: &'static [u8] = Box::leak(bytes.into_boxed_slice());
        let _ =
            plotters::style::register_font("sans-serif", plotters::style::FontStyle::Normal, bytes);
        let files = timeless_sweep::plot(&s, dir.path()).unwrap();
        assert_eq!(
            files,
            vec![
                dir.path().join("plot-scale-bandwidth.svg"),
                dir.path().join("plot-scale-latency.svg")
            ]
        );
        for f in files {
            let svg = std::fs::read_to_string(f).unwrap();
            assert!(svg.contains("predicted time vs") && svg.contains("commsplit4"));
        }
    }
    assert_eq!(s.sensitivity.len(), 4);
    for x in &s.sensitivity {
        assert_eq!(x.series.len(), 3);
        let rel = x.relative.unwrap();
        assert!(rel >= 0.0, "{x:?}");
    }
}

#[test]
fn bad_spec_names_file_and_key() {
    let file = Path::new("dir/s.toml");
    let e = Spec::parse(
        "platform = \"p.xml\"\ntraces = [\"t\"]\n[[axis]]\nname = \"bogus\"\nvalues = [1]\n",
        file,
    )
    .unwrap_err();
    assert!(matches!(&e, SweepError::Spec { key, .. } if key == "axis[0].name"));
    let msg = e.to_string();
    assert!(msg.contains("dir/s.toml") && msg.contains("bogus"), "{msg}");

    let e = Spec::parse(
        "platform = \"p.xml\"\ntraces = [\"t\"]\n[[axis]]\nname = \"scale-latency\"\nvalues = [0]\n",
        file,
    )
    .unwrap_err();
    assert!(e.to_string().contains("scale-latency"), "{e}");

    let e = Spec::parse("platfrom = \"p.xml\"\ntraces = [\"t\"]\n", file).unwrap_err();
    assert!(
        matches!(&e, SweepError::Spec { key, .. } if key == "platfrom"),
        "{e}"
    );
}

#[test]
fn explicit_points() {
    let text = r#"
platform = "platforms/mycluster.xml"
deployment = "deployments/mycluster-ring4.xml"
traces = ["traces/ring4/ring.txt"]
mode = "points"
[[point]]
scale-bandwidth = 2
[[point]]
scale-bandwidth = 0.5
"smpi/lat-factor" = "0:1.5"
"#;
    let spec = Spec::parse(text, &root().join("s.toml")).unwrap();
    let p = points(&spec);
    assert_eq!(p.len(), 2);
    assert_eq!(
        p[0].key,
        "traces/ring4/ring.txt|scale-bandwidth=2|smpi/lat-factor="
    );
    let c = timeless_sweep::config(&spec, &p[1]);
    assert_eq!(c.what_if.bandwidth, 0.5);
    assert!(c.cfg.contains(&"smpi/lat-factor:0:1.5".to_string()));

    // A point whose replay fails is reported, not written, and retried by the next run.
    let bad = text.replace("smpi/lat-factor", "smpi/no-such-key");
    let spec = Spec::parse(&bad, &root().join("s.toml")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    let s = run(&spec, dir.path(), &Options::default(), &NoProgress).unwrap();
    assert_eq!((s.ran, s.failed.len()), (1, 1));
    assert!(s.failed[0].1.contains("smpi/no-such-key"), "{:?}", s.failed);
    let s = run(&spec, dir.path(), &Options::default(), &NoProgress).unwrap();
    assert_eq!((s.skipped, s.ran, s.failed.len()), (1, 0, 1));
    assert_eq!(csv_rows(dir.path()).len(), 1);
}

#[test]
fn bundled_example_parses() {
    let spec = Spec::from_file(&root().join("simulator/sweep/example.toml")).unwrap();
    assert_eq!(points(&spec).len(), 2 * 3 * 3 * 2);
    for t in &spec.traces {
        assert!(t.path.exists(), "{}", t.path.display());
    }
}

/// Platform, hostfile and `--cfg` axes give the single replays' times.
#[test]
fn platform_hostfile_and_cfg_axes() {
    let r = root();
    let dir = tempfile::tempdir().unwrap();
    let hosts: Vec<String> = (0..4).map(|i| format!("mycluster-{i}.mysite.fr")).collect();
    std::fs::write(dir.path().join("in-order"), hosts.join("\n") + "\n").unwrap();
    let rev: Vec<String> = hosts.iter().rev().cloned().collect();
    std::fs::write(dir.path().join("reversed"), rev.join("\n") + "\n").unwrap();
    let text = format!(
        "traces = [{:?}]\n\
         [[axis]]\nname = \"platform\"\nvalues = [{:?}, {:?}]\n\
         [[axis]]\nname = \"hostfile\"\nvalues = [\"in-order\", \"reversed\"]\n\
         [[axis]]\nname = \"smpi/lat-factor\"\nvalues = [\"0:1\", \"0:3\"]\n",
        r.join("traces/ring4/ring.txt"),
        r.join("platforms/mycluster.xml"),
        r.join("platforms/mycluster-v3.xml"),
    );
    let spec_file = dir.path().join("s.toml");
    std::fs::write(&spec_file, text).unwrap();
    let spec = Spec::from_file(&spec_file).unwrap();
    let out = dir.path().join("out");
    let s = run(&spec, &out, &Options::default(), &NoProgress).unwrap();
    assert_eq!((s.ran, s.failed.len()), (8, 0), "{:?}", s.failed);
    let mut distinct = Vec::new();
    for (p, res) in points(&spec).iter().zip(&s.results) {
        assert_eq!(p.key, res.key);
        let v = |i: usize| p.values[i].clone().unwrap();
        let mut c = SimulateConfig::new(PathBuf::from(v(0)));
        c.trace = Some(r.join("traces/ring4/ring.txt"));
        c.hostfile = Some(dir.path().join(v(1)));
        c.cfg = vec![format!("smpi/lat-factor:{}", v(2))];
        let want = timeless_run::simulate(&c, &mut Quiet(NoObserver))
            .unwrap()
            .report
            .simulated_time_secs;
        assert_eq!(res.simulated_secs, want, "{}", p.key);
        if !distinct.contains(&want.to_bits()) {
            distinct.push(want.to_bits());
        }
    }
    // The latency factor changes the time.
    assert!(distinct.len() >= 2, "{distinct:?}");
}

/// `results.csv` and `results.db` are canonical: a serial sweep, a parallel one and one
/// interrupted and resumed (completion order differs) leave the same bytes.
#[test]
fn results_files_are_canonical() {
    let spec = spec();
    let serial = tempfile::tempdir().unwrap();
    let mut opts = Options::default();
    opts.jobs = Some(1);
    run(&spec, serial.path(), &opts, &NoProgress).unwrap();
    let resumed = tempfile::tempdir().unwrap();
    opts.jobs = Some(2);
    opts.max_points = Some(5);
    run(&spec, resumed.path(), &opts, &NoProgress).unwrap();
    opts.max_points = None;
    run(&spec, resumed.path(), &opts, &NoProgress).unwrap();
    for f in ["results.csv", "results.db"] {
        let a = std::fs::read(serial.path().join(f)).unwrap();
        let b = std::fs::read(resumed.path().join(f)).unwrap();
        assert!(a == b, "{f} differs");
    }
    let text = std::fs::read_to_string(serial.path().join("results.csv")).unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 19);
    assert_eq!(
        lines[0],
        "key,trace,scale-bandwidth,scale-latency,simulated_time_s,actions"
    );
    // Point 4 (bandwidth 1, latency 1) of the ring trace: SimGrid 3.32's 0.22372670703708541 s
    // for traces/ring4/ring.txt on mycluster.xml, 76 actions.
    assert_eq!(
        lines[5],
        "traces/ring4/ring.txt|scale-bandwidth=1|scale-latency=1,traces/ring4/ring.txt,1,1,\
         0.22372670703708541,76"
    );
    // Wall-clock times go to wall.csv, one row per point.
    let wall = std::fs::read_to_string(serial.path().join("wall.csv")).unwrap();
    assert_eq!(wall.lines().count(), 19);
    assert!(wall.starts_with("key,wall_s\n"), "{wall}");
}
