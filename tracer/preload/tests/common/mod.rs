//! Helpers of the tracer's end-to-end tests (`traced.rs`, `failures.rs`): the MPI programs of
//! `validation/programs` built once, a traced run under `mpirun` with the tracer preloaded and
//! its decoded trace, and the checks every traced run gets. Each test binary uses a part.
#![allow(dead_code)]

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use timeless_trace::{parse_line, Action, Datatype, RecvCount, RequestKey};

/// `mpirun` jobs run one at a time: the machine may have few cores.
pub static MPI_JOBS: Mutex<()> = Mutex::new(());

pub fn tmp() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
}

/// The tracer library built alongside this test: `cargo test` leaves the fresh one next to the
/// test executable (`target/<profile>/deps`), `cargo build` in `target/<profile>`.
pub fn library() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let deps = exe.parent().expect("target/<profile>/deps");
    [deps, deps.parent().unwrap_or(deps)]
        .iter()
        .map(|d| d.join("libtimeless_preload.so"))
        .find(|p| p.exists())
        .expect("libtimeless_preload.so is built with the tests")
}

/// Builds the programs once, with `make` in `validation/programs`.
pub fn programs() -> &'static Path {
    static DIR: OnceLock<PathBuf> = OnceLock::new();
    DIR.get_or_init(|| {
        let src = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../validation/programs");
        let build = tmp().join("programs");
        let out = Command::new("make")
            .arg("-C")
            .arg(&src)
            .arg(format!("BUILD={}", build.display()))
            .output()
            .expect("make (needs mpicc and mpif90)");
        assert!(
            out.status.success(),
            "building the MPI programs failed:\n{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        build
    })
}

pub fn run_with_timeout(cmd: &mut Command, limit: Duration) -> Output {
    let mut child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("mpirun (needs openmpi-bin)");
    let start = Instant::now();
    loop {
        if child.try_wait().expect("wait").is_some() {
            return child.wait_with_output().expect("output");
        }
        if start.elapsed() > limit {
            let _ = child.kill();
            let out = child.wait_with_output().expect("output");
            panic!(
                "timed out after {limit:?}:\n{}{}",
                String::from_utf8_lossy(&out.stdout),
                String::from_utf8_lossy(&out.stderr)
            );
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// A `comm_def` record: the rank's communicator id and its members as world ranks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommDef {
    pub id: u32,
    pub members: Vec<u32>,
}

/// A traced run: its output and, per rank, the decoded actions (with the communicator id of
/// their `comm=` field, `None` for the world), the `comm_def` records and the raw lines.
pub struct Run {
    pub out: Output,
    pub dir: PathBuf,
    pub nranks: u32,
    pub actions: Vec<Vec<Action>>,
    pub comms: Vec<Vec<Option<u32>>>,
    pub comm_defs: Vec<Vec<CommDef>>,
    pub lines: Vec<Vec<String>>,
}

/// Splits timeless's communicator extension off a record: a `comm_def` line is returned as
/// such; otherwise the record without its trailing `comm=<id>` field, and the id.
pub fn split_comm(line: &str) -> Result<(Option<CommDef>, String, Option<u32>), String> {
    let fields: Vec<&str> = line.split_whitespace().collect();
    if fields.get(1) == Some(&"comm_def") {
        let num = |s: &str| s.parse::<u32>().map_err(|e| format!("'{s}': {e}"));
        let id = num(fields.get(2).ok_or("comm_def without an id")?)?;
        let size = num(fields.get(3).ok_or("comm_def without a size")?)? as usize;
        let members = fields[4..]
            .iter()
            .map(|f| num(f))
            .collect::<Result<Vec<_>, _>>()?;
        if members.len() != size {
            return Err(format!("comm_def of size {size} lists {}", members.len()));
        }
        return Ok((Some(CommDef { id, members }), String::new(), None));
    }
    match fields.last().and_then(|f| f.strip_prefix("comm=")) {
        Some(id) => {
            let id = id.parse::<u32>().map_err(|e| format!("comm={id}: {e}"))?;
            let rest = fields[..fields.len() - 1].join(" ");
            Ok((None, rest, Some(id)))
        }
        None => Ok((None, line.to_string(), None)),
    }
}

impl Run {
    pub fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.out.stdout).into_owned()
    }
    pub fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.out.stderr).into_owned()
    }
    /// Number of `keyword` records of `rank` (second field of its lines).
    pub fn count(&self, rank: usize, keyword: &str) -> usize {
        self.lines[rank]
            .iter()
            .filter(|l| l.split_whitespace().nth(1) == Some(keyword) && !l.starts_with('#'))
            .count()
    }
    pub fn file(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.join(name)).unwrap_or_default()
    }
}

/// Runs `program args` on `np` ranks with the tracer preloaded; `env` adds variables.
pub fn trace(name: &str, program: &str, np: u32, args: &[&str], env: &[(&str, &str)]) -> Run {
    let dir = tmp().join("traces").join(name);
    let _ = std::fs::remove_dir_all(&dir);
    let exe = programs().join(program);
    let mut cmd = Command::new("mpirun");
    cmd.env("OMPI_ALLOW_RUN_AS_ROOT", "1")
        .env("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        .args(["-np", &np.to_string(), "--oversubscribe"])
        .args(["-x", &format!("LD_PRELOAD={}", library().display())])
        .args(["-x", &format!("TIMELESS_OUT={}", dir.display())]);
    for (k, v) in env {
        cmd.args(["-x", &format!("{k}={v}")]);
    }
    cmd.arg(&exe).args(args);
    let out = {
        let _serial = MPI_JOBS.lock().unwrap_or_else(|p| p.into_inner());
        run_with_timeout(&mut cmd, Duration::from_secs(180))
    };
    let mut run = Run {
        out,
        dir,
        nranks: np,
        actions: Vec::new(),
        comms: Vec::new(),
        comm_defs: Vec::new(),
        lines: Vec::new(),
    };
    for r in 0..np {
        let path = run.dir.join(format!("rank-{r}.txt"));
        let text = std::fs::read_to_string(&path).unwrap_or_default();
        let (mut acts, mut comms, mut defs) = (Vec::new(), Vec::new(), Vec::new());
        for (i, line) in text.lines().enumerate() {
            let (def, line, comm) =
                split_comm(line).unwrap_or_else(|e| panic!("{}:{}: {e}", path.display(), i + 1));
            if let Some(d) = def {
                defs.push(d);
                continue;
            }
            // Per-peer count vectors of a sub-communicator have its size; its peers and roots
            // are world ranks (below `np`): try the world size first.
            let size = match comm {
                Some(id) => defs
                    .iter()
                    .rev()
                    .find(|d: &&CommDef| d.id == id)
                    .unwrap_or_else(|| {
                        panic!(
                            "{}:{}: comm={id} before its comm_def",
                            path.display(),
                            i + 1
                        )
                    })
                    .members
                    .len() as u32,
                None => np,
            };
            let parsed = parse_line(&line, np).or_else(|e| {
                if size != np {
                    parse_line(&line, size)
                } else {
                    Err(e)
                }
            });
            match parsed {
                Ok(Some(rec)) => {
                    assert_eq!(
                        rec.rank,
                        r,
                        "{}:{}: wrong rank in '{line}'",
                        path.display(),
                        i + 1
                    );
                    acts.push(rec.action);
                    comms.push(comm);
                }
                Ok(None) => {}
                Err(e) => panic!(
                    "{}:{}: '{line}' does not decode: {e}",
                    path.display(),
                    i + 1
                ),
            }
        }
        run.actions.push(acts);
        run.comms.push(comms);
        run.comm_defs.push(defs);
        run.lines.push(text.lines().map(str::to_string).collect());
    }
    run
}

pub fn assert_ok(run: &Run) {
    assert!(
        run.out.status.success(),
        "the traced program failed:\n{}{}",
        run.stdout(),
        run.stderr()
    );
    assert!(
        !run.stderr().contains("timeless-preload"),
        "the tracer complained:\n{}",
        run.stderr()
    );
    for r in 0..run.nranks as usize {
        assert!(
            matches!(run.actions[r].first(), Some(Action::Init { .. })),
            "rank {r} does not start with init"
        );
        assert_eq!(
            run.actions[r].last(),
            Some(&Action::Finalize),
            "rank {r} does not end with finalize"
        );
    }
}

pub fn bytes(count: u64, dt: Option<Datatype>) -> u64 {
    count
        * u64::from(
            dt.expect("the tracer always writes the datatype")
                .size_bytes(),
        )
}

/// Bytes sent and received per (src, dst) pair, from the point-to-point actions.
/// Bytes per (src, dst) pair of world ranks.
pub type PairBytes = BTreeMap<(u32, u32), u64>;

pub fn p2p_bytes(run: &Run) -> (PairBytes, PairBytes) {
    let (mut sent, mut recvd) = (BTreeMap::new(), BTreeMap::new());
    for (r, acts) in run.actions.iter().enumerate() {
        let me = r as u32;
        for a in acts {
            match a {
                Action::Send { dst, count, dt, .. } => {
                    *sent.entry((me, *dst)).or_insert(0) += bytes(*count, *dt)
                }
                Action::Recv {
                    src,
                    count: RecvCount::Count(c),
                    dt,
                    ..
                } => *recvd.entry((*src, me)).or_insert(0) += bytes(*c, *dt),
                Action::Recv { .. } => panic!("rank {r}: receive without a count: {a:?}"),
                Action::SendRecv {
                    send_count,
                    dst,
                    recv_count,
                    src,
                    send_dt,
                    recv_dt,
                } => {
                    *sent.entry((me, *dst)).or_insert(0) += bytes(*send_count, *send_dt);
                    *recvd.entry((*src, me)).or_insert(0) += bytes(*recv_count, *recv_dt);
                }
                _ => {}
            }
        }
    }
    (sent, recvd)
}

pub fn assert_pairs_match(run: &Run) {
    let (sent, recvd) = p2p_bytes(run);
    assert_eq!(sent, recvd, "bytes sent and received per (src, dst) differ");
}

/// Replays each rank's request store as SimGrid does: `wait`/`test` must name a request that
/// was posted (or completed by an earlier `test`), and nothing may be left at the end except
/// `leftover` requests per rank.
pub fn assert_requests_balanced(run: &Run, leftover: usize) {
    for (r, acts) in run.actions.iter().enumerate() {
        let mut store: HashMap<(u32, u32, i32), usize> = HashMap::new();
        let me = r as u32;
        for a in acts {
            match a {
                Action::Send {
                    dst,
                    tag,
                    blocking: false,
                    ..
                } => *store.entry((me, *dst, *tag)).or_default() += 1,
                Action::Recv {
                    src,
                    tag,
                    blocking: false,
                    ..
                } => *store.entry((*src, me, *tag)).or_default() += 1,
                Action::Wait(RequestKey::Key { src, dst, tag }) => {
                    let n = store.get_mut(&(*src, *dst, *tag));
                    match n {
                        Some(n) if *n > 0 => *n -= 1,
                        _ => panic!("rank {r}: {a:?} without a pending request"),
                    }
                }
                Action::Test(RequestKey::Key { src, dst, tag }) => {
                    assert!(
                        store.get(&(*src, *dst, *tag)).copied().unwrap_or(0) > 0,
                        "rank {r}: {a:?} without a pending request"
                    );
                }
                Action::WaitAll => store.clear(),
                _ => {}
            }
        }
        let left: usize = store.values().sum();
        assert_eq!(left, leftover, "rank {r}: requests never waited: {store:?}");
    }
}

/// Every rank performs the same world collectives in the same order.
pub fn assert_collectives_agree(run: &Run) {
    let coll = |r: usize| -> Vec<&'static str> {
        run.actions[r]
            .iter()
            .zip(&run.comms[r])
            .filter(|(_, c)| c.is_none())
            .map(|(a, _)| a.keyword())
            .filter(|k| {
                matches!(
                    *k,
                    "barrier"
                        | "bcast"
                        | "reduce"
                        | "allreduce"
                        | "alltoall"
                        | "alltoallv"
                        | "gather"
                        | "allgather"
                        | "gatherv"
                        | "allgatherv"
                        | "scatter"
                        | "scatterv"
                        | "reducescatter"
                        | "scan"
                        | "exscan"
                )
            })
            .collect()
    };
    let first = coll(0);
    for r in 0..run.actions.len() {
        assert_eq!(coll(r), first, "rank {r} collectives differ from rank 0's");
    }
}

/// Replays the trace with SimGrid 3.32's `smpirun -replay` on a 4-node cluster, if installed.
/// Traces using timeless's communicator extension are not SimGrid's format: skipped.
pub fn assert_simgrid_replays(run: &Run) {
    if Command::new("smpirun").arg("--version").output().is_err() {
        eprintln!("smpirun not installed: SimGrid replay check skipped");
        return;
    }
    if run.comm_defs.iter().any(|d| !d.is_empty()) {
        eprintln!(
            "{}: communicator extension in use: SimGrid replay check skipped",
            run.dir.display()
        );
        return;
    }
    let platform = run.dir.join("platform.xml");
    std::fs::write(
        &platform,
        r#"<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="z" routing="Full">
    <cluster id="c" prefix="n-" suffix="" radical="0-7" speed="1Gf" bw="125MBps" lat="50us"/>
  </zone>
</platform>
"#,
    )
    .unwrap();
    let hosts: String = (0..run.nranks).map(|r| format!("n-{r}\n")).collect();
    std::fs::write(run.dir.join("hosts.txt"), hosts).unwrap();
    let mut cmd = Command::new("smpirun");
    cmd.current_dir(&run.dir)
        .args(["-np", &run.nranks.to_string()])
        .args([
            "-platform",
            "platform.xml",
            "-hostfile",
            "hosts.txt",
            "-replay",
            "trace-list.txt",
        ])
        .arg("--log=root.thres:warning");
    let out = {
        let _serial = MPI_JOBS.lock().unwrap_or_else(|p| p.into_inner());
        run_with_timeout(&mut cmd, Duration::from_secs(180))
    };
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(out.status.success(), "smpirun -replay failed:\n{text}");
    assert!(
        !text.contains("unknown"),
        "smpirun -replay rejected an action:\n{text}"
    );
}

/// The communicator extension's identity rule: a communicator is (ordered member list,
/// occurrence index of that list among a rank's own `comm_def`s). Every rank that defines it
/// must be a member, and every member must define it.
pub fn assert_comms_agree(defs: &[Vec<CommDef>]) {
    let mut definers: BTreeMap<(Vec<u32>, usize), Vec<u32>> = BTreeMap::new();
    for (r, rank_defs) in defs.iter().enumerate() {
        let mut seen: BTreeMap<&Vec<u32>, usize> = BTreeMap::new();
        for d in rank_defs {
            assert!(d.members.contains(&(r as u32)), "rank {r} defines {d:?}");
            let k = seen.entry(&d.members).or_insert(0);
            definers
                .entry((d.members.clone(), *k))
                .or_default()
                .push(r as u32);
            *k += 1;
        }
    }
    for ((members, occurrence), ranks) in definers {
        let mut sorted = members.clone();
        sorted.sort_unstable();
        assert_eq!(
            ranks, sorted,
            "communicator {members:?} (occurrence {occurrence}) defined by {ranks:?}"
        );
    }
}
