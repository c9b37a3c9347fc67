//! `timeless sweep --mpi N` runs `timeless-sweep-mpi` under mpirun: same results bytes as the
//! local sweep, plots drawn. Skipped (with a notice) without `mpirun` or when the driver was not
//! built next to `timeless` (`cargo test --workspace` builds it).

use std::path::{Path, PathBuf};
use std::process::Command;

fn root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

#[test]
fn sweep_mpi_option_equals_local_sweep() {
    let timeless = Path::new(env!("CARGO_BIN_EXE_timeless"));
    let driver = timeless.with_file_name("timeless-sweep-mpi");
    if Command::new("mpirun").arg("--version").output().is_err() || !driver.exists() {
        eprintln!("mpirun or {} missing: --mpi test skipped", driver.display());
        return;
    }
    let tmp = tempfile::tempdir().unwrap();
    let r = root();
    let spec = tmp.path().join("s.toml");
    std::fs::write(
        &spec,
        format!(
            "platform = {:?}\ndeployment = {:?}\ntraces = [{:?}]\n\
             [[axis]]\nname = \"scale-bandwidth\"\nvalues = [0.5, 1, 2]\n\
             [[axis]]\nname = \"scale-latency\"\nvalues = [1, 4]\n",
            r.join("platforms/mycluster.xml"),
            r.join("deployments/mycluster-ring4.xml"),
            r.join("traces/ring4/ring.txt"),
        ),
    )
    .unwrap();
    let run = |extra: &[&str], out: &Path| {
        let o = Command::new(timeless)
            .arg("sweep")
            .arg(&spec)
            .args(extra)
            .arg("-o")
            .arg(out)
            .env("OMPI_ALLOW_RUN_AS_ROOT", "1")
            .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
            .output()
            .unwrap();
        let t = format!(
            "{}{}",
            String::from_utf8_lossy(&o.stdout),
            String::from_utf8_lossy(&o.stderr)
        );
        assert!(o.status.success(), "{t}");
        t
    };
    let local = tmp.path().join("local");
    let mpi = tmp.path().join("mpi");
    run(&["-j", "2", "--no-plot"], &local);
    let t = run(&["--mpi", "2"], &mpi);
    assert!(
        t.contains("Points: 6 (6 run now, 0 already done, 0 failed)"),
        "{t}"
    );
    for f in ["results.csv", "results.db"] {
        assert!(
            std::fs::read(local.join(f)).unwrap() == std::fs::read(mpi.join(f)).unwrap(),
            "{f} differs"
        );
    }
    // Bandwidth 1, latency 1: SimGrid 3.32's 0.22372670703708541 s.
    let csv = std::fs::read_to_string(mpi.join("results.csv")).unwrap();
    assert!(csv.contains(",1,1,0.22372670703708541,76\n"), "{csv}");
}
