//! The MPI-distributed sweep equals the local one byte for byte (`results.csv` and
//! `results.db`), on 1, 2 and 4 ranks, resumed or not. Skipped (with a notice) where `mpirun`
//! is not installed; CI installs Open MPI, so they run there.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use std::sync::Mutex;

use timeless_sweep::{NoProgress, Options, Spec};

/// MPI jobs run one at a time (the machine may have two cores).
static MPI_JOBS: Mutex<()> = Mutex::new(());

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn have_mpirun() -> bool {
    let ok = Command::new("mpirun").arg("--version").output().is_ok();
    if !ok {
        eprintln!("mpirun not installed: timeless-sweep-mpi tests skipped");
    }
    ok
}

/// `mpirun -n N timeless-sweep-mpi ARGS`.
fn mpirun(n: usize, args: &[&str]) -> Output {
    let _one = MPI_JOBS.lock().unwrap_or_else(|e| e.into_inner());
    Command::new("mpirun")
        .args(["-n", &n.to_string(), "--oversubscribe"])
        .arg(env!("CARGO_BIN_EXE_timeless-sweep-mpi"))
        .args(args)
        // Open MPI refuses root without these (CI containers run as root).
        .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .output()
        .expect("mpirun starts")
}

fn text(o: &Output) -> String {
    format!(
        "{}{}",
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr)
    )
}

/// 2 traces x 2 axes x 3 values = 18 points (the commsplit points are ~10x shorter than the
/// ring ones: uneven work).
fn study(dir: &Path) -> PathBuf {
    let r = root();
    let spec = format!(
        "platform = {:?}\ndeployment = {:?}\ntraces = [{:?}, {:?}]\n\
         [[axis]]\nname = \"scale-bandwidth\"\nvalues = [0.5, 1, 2]\n\
         [[axis]]\nname = \"scale-latency\"\nvalues = [0.5, 1, 2]\n",
        r.join("platforms/mycluster.xml"),
        r.join("deployments/mycluster-ring4.xml"),
        r.join("traces/ring4/ring.txt"),
        r.join("traces/commsplit4/trace-list.txt"),
    );
    let file = dir.join("study.toml");
    std::fs::write(&file, spec).unwrap();
    file
}

/// Every row of both tables, in key order.
fn db_dump(file: &Path) -> Vec<String> {
    let db = rusqlite::Connection::open(file).unwrap();
    let mut out = Vec::new();
    let mut q = db
        .prepare("SELECT key, trace, simulated_time_s, actions FROM points ORDER BY key")
        .unwrap();
    let rows = q
        .query_map([], |r| {
            Ok(format!(
                "{}|{}|{:?}|{}",
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, f64>(2)?,
                r.get::<_, i64>(3)?
            ))
        })
        .unwrap();
    out.extend(rows.map(Result::unwrap));
    let mut q = db
        .prepare("SELECT key, axis, value FROM point_axes ORDER BY key, axis")
        .unwrap();
    let rows = q
        .query_map([], |r| {
            Ok(format!(
                "{}|{}|{:?}",
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, Option<String>>(2)?
            ))
        })
        .unwrap();
    out.extend(rows.map(Result::unwrap));
    out
}

fn assert_same(local: &Path, mpi: &Path) {
    for f in ["results.csv", "results.db"] {
        let a = std::fs::read(local.join(f)).unwrap();
        let b = std::fs::read(mpi.join(f)).unwrap();
        assert!(
            a == b,
            "{f} of {} differs from the local one",
            mpi.display()
        );
    }
    assert_eq!(
        db_dump(&local.join("results.db")),
        db_dump(&mpi.join("results.db"))
    );
}

#[test]
fn distributed_sweep_equals_local_byte_for_byte() {
    if !have_mpirun() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let file = study(tmp.path());
    let local = tmp.path().join("local");
    let spec = Spec::from_file(&file).unwrap();
    let mut o = Options::default();
    o.jobs = Some(2);
    let s = timeless_sweep::run(&spec, &local, &o, &NoProgress).unwrap();
    assert_eq!((s.ran, s.failed.len()), (18, 0));
    // The ring point at bandwidth 1, latency 1: SimGrid 3.32's 0.22372670703708541 s.
    let csv = std::fs::read_to_string(local.join("results.csv")).unwrap();
    assert!(
        csv.contains("|scale-bandwidth=1|scale-latency=1,")
            && csv.contains(",1,1,0.22372670703708541,76\n"),
        "{csv}"
    );

    for n in [1, 2, 4] {
        let out = tmp.path().join(format!("mpi{n}"));
        let o = mpirun(n, &[file.to_str().unwrap(), "-o", out.to_str().unwrap()]);
        let t = text(&o);
        assert!(o.status.success(), "{n} ranks: {t}");
        assert!(
            t.contains("Points: 18 (18 run now, 0 already done, 0 failed)"),
            "{t}"
        );
        assert_same(&local, &out);
        // One wall time per point.
        let wall = std::fs::read_to_string(out.join("wall.csv")).unwrap();
        assert_eq!(wall.lines().count(), 19, "{wall}");
    }
}

#[test]
fn distributed_sweep_resumes() {
    if !have_mpirun() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let file = study(tmp.path());
    let local = tmp.path().join("local");
    let spec = Spec::from_file(&file).unwrap();
    timeless_sweep::run(&spec, &local, &Options::default(), &NoProgress).unwrap();

    let out = tmp.path().join("mpi");
    let args = |extra: &[&'static str]| {
        let mut a = vec![
            file.to_str().unwrap().to_string(),
            "-o".into(),
            out.to_str().unwrap().to_string(),
        ];
        a.extend(extra.iter().map(|s| s.to_string()));
        a
    };
    let run = |n: usize, a: Vec<String>| {
        let a: Vec<&str> = a.iter().map(String::as_str).collect();
        mpirun(n, &a)
    };
    let o = run(4, args(&["--max-points", "5"]));
    assert!(o.status.success(), "{}", text(&o));
    assert!(text(&o).contains("Points: 18 (5 run now, 0 already done"));
    let o = run(2, args(&[]));
    let t = text(&o);
    assert!(o.status.success(), "{t}");
    assert!(
        t.contains("Points: 18 (13 run now, 5 already done, 0 failed)"),
        "{t}"
    );
    assert_same(&local, &out);
}

#[test]
fn bad_study_is_one_error_and_exit_2() {
    if !have_mpirun() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let file = tmp.path().join("bad.toml");
    std::fs::write(
        &file,
        "platform = \"p.xml\"\ntraces = [\"t\"]\n[[axis]]\nname = \"scale-network\"\nvalues = [1]\n",
    )
    .unwrap();
    let o = mpirun(2, &[file.to_str().unwrap()]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert_eq!(t.matches("scale-network").count(), 1, "one message: {t}");
    assert!(t.contains("bad.toml") && t.contains("axis[0].name"), "{t}");
}

#[test]
fn failed_point_is_reported_and_not_written() {
    if !have_mpirun() {
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let r = root();
    let file = tmp.path().join("points.toml");
    std::fs::write(
        &file,
        format!(
            "platform = {:?}\ndeployment = {:?}\ntraces = [{:?}]\nmode = \"points\"\n\
             [[point]]\nscale-bandwidth = 2\n\
             [[point]]\n\"smpi/no-such-key\" = \"1\"\n\
             [[point]]\nscale-latency = 2\n",
            r.join("platforms/mycluster.xml"),
            r.join("deployments/mycluster-ring4.xml"),
            r.join("traces/ring4/ring.txt"),
        ),
    )
    .unwrap();
    let local = tmp.path().join("local");
    let spec = Spec::from_file(&file).unwrap();
    let s = timeless_sweep::run(&spec, &local, &Options::default(), &NoProgress).unwrap();
    assert_eq!((s.ran, s.failed.len()), (2, 1));
    let out = tmp.path().join("mpi");
    let o = mpirun(2, &[file.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    let t = text(&o);
    assert_eq!(o.status.code(), Some(2), "{t}");
    assert!(
        t.contains("Points: 3 (2 run now, 0 already done, 1 failed)"),
        "{t}"
    );
    assert!(
        t.contains("failed: ") && t.contains("smpi/no-such-key"),
        "{t}"
    );
    assert_same(&local, &out);
}
