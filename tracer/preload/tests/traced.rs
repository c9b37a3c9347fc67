//! End-to-end tests: build the MPI programs of `validation/programs`, run them under `mpirun`
//! with the tracer preloaded, and check the traces: every line decodes with `timeless-trace`,
//! actions per kind, bytes sent and received per pair of ranks, real sources and tags for
//! wildcard receives, request bookkeeping, and that SimGrid 3.32's `smpirun -replay` accepts
//! the traces (when `smpirun` is installed).
//!
//! Needs `mpicc`, `mpif90` and `mpirun` (Debian: libopenmpi-dev openmpi-bin gfortran).

use std::collections::{BTreeMap, HashMap};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

use timeless_trace::{parse_line, Action, Datatype, RecvCount, RequestKey};

/// `mpirun` jobs run one at a time: the machine may have few cores.
static MPI_JOBS: Mutex<()> = Mutex::new(());

fn tmp() -> PathBuf {
    PathBuf::from(env!("CARGO_TARGET_TMPDIR"))
}

/// The tracer library built alongside this test: `cargo test` leaves the fresh one next to the
/// test executable (`target/<profile>/deps`), `cargo build` in `target/<profile>`.
fn library() -> PathBuf {
    let exe = std::env::current_exe().expect("test executable path");
    let deps = exe.parent().expect("target/<profile>/deps");
    [deps, deps.parent().unwrap_or(deps)]
        .iter()
        .map(|d| d.join("libtimeless_preload.so"))
        .find(|p| p.exists())
        .expect("libtimeless_preload.so is built with the tests")
}

/// Builds the programs once, with `make` in `validation/programs`.
fn programs() -> &'static Path {
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

fn run_with_timeout(cmd: &mut Command, limit: Duration) -> Output {
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
struct CommDef {
    id: u32,
    members: Vec<u32>,
}

/// A traced run: its output and, per rank, the decoded actions (with the communicator id of
/// their `comm=` field, `None` for the world), the `comm_def` records and the raw lines.
struct Run {
    out: Output,
    dir: PathBuf,
    nranks: u32,
    actions: Vec<Vec<Action>>,
    comms: Vec<Vec<Option<u32>>>,
    comm_defs: Vec<Vec<CommDef>>,
    lines: Vec<Vec<String>>,
}

/// Splits timeless's communicator extension off a record: a `comm_def` line is returned as
/// such; otherwise the record without its trailing `comm=<id>` field, and the id.
fn split_comm(line: &str) -> Result<(Option<CommDef>, String, Option<u32>), String> {
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
    fn stdout(&self) -> String {
        String::from_utf8_lossy(&self.out.stdout).into_owned()
    }
    fn stderr(&self) -> String {
        String::from_utf8_lossy(&self.out.stderr).into_owned()
    }
    /// Number of `keyword` records of `rank` (second field of its lines).
    fn count(&self, rank: usize, keyword: &str) -> usize {
        self.lines[rank]
            .iter()
            .filter(|l| l.split_whitespace().nth(1) == Some(keyword) && !l.starts_with('#'))
            .count()
    }
    fn file(&self, name: &str) -> String {
        std::fs::read_to_string(self.dir.join(name)).unwrap_or_default()
    }
}

/// Runs `program args` on `np` ranks with the tracer preloaded; `env` adds variables.
fn trace(name: &str, program: &str, np: u32, args: &[&str], env: &[(&str, &str)]) -> Run {
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

fn assert_ok(run: &Run) {
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

fn bytes(count: u64, dt: Option<Datatype>) -> u64 {
    count
        * u64::from(
            dt.expect("the tracer always writes the datatype")
                .size_bytes(),
        )
}

/// Bytes sent and received per (src, dst) pair, from the point-to-point actions.
/// Bytes per (src, dst) pair of world ranks.
type PairBytes = BTreeMap<(u32, u32), u64>;

fn p2p_bytes(run: &Run) -> (PairBytes, PairBytes) {
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

fn assert_pairs_match(run: &Run) {
    let (sent, recvd) = p2p_bytes(run);
    assert_eq!(sent, recvd, "bytes sent and received per (src, dst) differ");
}

/// Replays each rank's request store as SimGrid does: `wait`/`test` must name a request that
/// was posted (or completed by an earlier `test`), and nothing may be left at the end except
/// `leftover` requests per rank.
fn assert_requests_balanced(run: &Run, leftover: usize) {
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
fn assert_collectives_agree(run: &Run) {
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
fn assert_simgrid_replays(run: &Run) {
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

#[test]
fn ring_traces_and_replays() {
    let run = trace("ring", "ring", 4, &[], &[]);
    assert_ok(&run);
    assert!(run
        .stdout()
        .contains("ring: 4 rounds of 1000000 bytes on 4 ranks"));
    for r in 0..4usize {
        assert_eq!(run.count(r, "send"), 4, "rank {r}");
        assert_eq!(run.count(r, "recv"), 4, "rank {r}");
        let peer_of = |a: &Action| match a {
            Action::Send { dst, count, dt, .. } => Some(("send", *dst, bytes(*count, *dt))),
            Action::Recv {
                src,
                count: RecvCount::Count(c),
                dt,
                ..
            } => Some(("recv", *src, bytes(*c, *dt))),
            _ => None,
        };
        for (kind, peer, b) in run.actions[r].iter().filter_map(peer_of) {
            let expected = if kind == "send" {
                (r as u32 + 1) % 4
            } else {
                (r as u32 + 3) % 4
            };
            assert_eq!((peer, b), (expected, 1_000_000), "rank {r} {kind}");
        }
        // Each round's burst holds the program's 1 Mflop loop: several compute records, and
        // at least one large one.
        let flops: Vec<f64> = run.actions[r]
            .iter()
            .filter_map(|a| match a {
                Action::Compute { flops } => Some(*flops),
                _ => None,
            })
            .collect();
        assert!(
            flops.iter().filter(|&&f| f > 2e5).count() >= 4,
            "rank {r} bursts: {flops:?}"
        );
    }
    assert_pairs_match(&run);
    let list = run.file("trace-list.txt");
    assert_eq!(list, "rank-0.txt\nrank-1.txt\nrank-2.txt\nrank-3.txt\n");
    let meta = run.file("trace-meta.json");
    for key in [
        "\"ranks\": 4",
        "\"mpi_library\": \"Open MPI",
        "\"acquisition_mode\"",
        "\"reference_speed_flops_per_sec\"",
        "\"per_event_secs_median\"",
        "\"declared_resolution_secs\"",
        "\"command_line\"",
        "\"tracer\": \"timeless-preload",
    ] {
        assert!(meta.contains(key), "metadata lacks {key}:\n{meta}");
    }
    assert_simgrid_replays(&run);
}

#[test]
fn stencil_nonblocking_exchange_with_derived_columns() {
    let run = trace("stencil2d", "stencil2d", 4, &["32", "20"], &[]);
    assert_ok(&run);
    // 2 x 2 grid: every rank has one north/south and one east/west neighbour.
    for r in 0..4usize {
        assert_eq!(run.count(r, "isend"), 40, "rank {r}");
        assert_eq!(run.count(r, "irecv"), 40, "rank {r}");
        assert_eq!(run.count(r, "waitall"), 20, "rank {r}");
        assert_eq!(run.count(r, "allreduce"), 2, "rank {r}");
        // Rows are 32 MPI_DOUBLE; columns a derived vector type: 32 x 8 bytes as MPI_BYTE.
        let column_bytes = run.actions[r].iter().any(|a| {
            matches!(
                a,
                Action::Send {
                    count: 256,
                    dt: Some(Datatype::BYTE),
                    blocking: false,
                    ..
                }
            )
        });
        let rows = run.actions[r].iter().any(|a| {
            matches!(
                a,
                Action::Send {
                    count: 32,
                    dt: Some(Datatype::DOUBLE),
                    blocking: false,
                    ..
                }
            )
        });
        assert!(
            column_bytes && rows,
            "rank {r}: {:?}",
            &run.actions[r][..12]
        );
    }
    assert_pairs_match(&run);
    assert_requests_balanced(&run, 0);
    assert_collectives_agree(&run);
    assert_simgrid_replays(&run);
}

/// stencil3d on 8 ranks: `MPI_Dims_create` gives a periodic 2 x 2 x 2 grid, so rank r's
/// neighbours across the x, y and z faces are r ^ 4, r ^ 2 and r ^ 1 (world rank =
/// (x·2 + y)·2 + z), each one on both sides. Per iteration, face f (0 = −x, 1 = +x, ... 5 = +z)
/// receives from the neighbour across f with tag f and sends to it with tag f ^ 1, n·n = 36
/// MPI_DOUBLE; one waitall; one allreduce at the end.
#[test]
fn stencil3d_exchanges_six_faces_with_its_periodic_neighbours() {
    let iters = 7usize;
    let run = trace("stencil3d", "stencil3d", 8, &["6", "7"], &[]);
    assert_ok(&run);
    assert!(
        run.stdout().contains("stencil3d: 2 x 2 x 2 ranks"),
        "{}",
        run.stdout()
    );
    for r in 0..8u32 {
        let ru = r as usize;
        assert_eq!(run.count(ru, "isend"), 6 * iters, "rank {r}");
        assert_eq!(run.count(ru, "irecv"), 6 * iters, "rank {r}");
        assert_eq!(run.count(ru, "waitall"), iters, "rank {r}");
        assert_eq!(run.count(ru, "allreduce"), 1, "rank {r}");
        let mut got: BTreeMap<(&str, u32, i32), usize> = BTreeMap::new();
        for a in &run.actions[ru] {
            let key = match a {
                Action::Send {
                    dst,
                    tag,
                    count: 36,
                    dt: Some(Datatype::DOUBLE),
                    blocking: false,
                } => ("isend", *dst, *tag),
                Action::Recv {
                    src,
                    tag,
                    count: RecvCount::Count(36),
                    dt: Some(Datatype::DOUBLE),
                    blocking: false,
                } => ("irecv", *src, *tag),
                Action::Send { .. } | Action::Recv { .. } => panic!("rank {r}: {a:?}"),
                _ => continue,
            };
            *got.entry(key).or_default() += 1;
        }
        let mut want = BTreeMap::new();
        for f in 0..6i32 {
            let peer = r ^ (4 >> (f / 2));
            want.insert(("irecv", peer, f), iters);
            want.insert(("isend", peer, f ^ 1), iters);
        }
        assert_eq!(got, want, "rank {r}");
    }
    assert_pairs_match(&run);
    assert_requests_balanced(&run, 0);
    assert_collectives_agree(&run);
    assert_simgrid_replays(&run);
}

#[test]
fn wildcard_receives_record_the_real_source_and_tag() {
    let run = trace("pi_mc", "pi_mc", 4, &["24", "20000"], &[]);
    assert_ok(&run);
    // Workers tag results 10 + rank: rank 0's receives must say who sent and with which tag.
    let mut results = 0;
    for a in &run.actions[0] {
        if let Action::Recv { src, tag, .. } = a {
            assert!((1..4).contains(src), "{a:?}");
            assert_eq!(*tag, 10 + *src as i32, "{a:?}");
            results += 1;
        }
    }
    assert_eq!(results, 24, "one receive per chunk");
    assert_eq!(
        run.count(0, "irecv"),
        23,
        "all but the first result through MPI_Irecv"
    );
    assert_eq!(run.count(0, "wait"), 23);
    assert!(
        !run.lines[0].iter().any(|l| l.contains("never completed")),
        "an irecv was left unresolved"
    );
    for r in 1..4usize {
        let probes = run.lines[r]
            .iter()
            .filter(|l| l.starts_with("# probe 0 "))
            .count();
        assert_eq!(
            probes,
            run.count(r, "recv"),
            "rank {r}: one probe per receive"
        );
    }
    assert_pairs_match(&run);
    assert_requests_balanced(&run, 0);
    assert_collectives_agree(&run);
    assert_simgrid_replays(&run);
}

#[test]
fn a_one_byte_buffer_writes_every_line_and_keeps_wildcard_holes_in_place() {
    let run = trace(
        "pi_mc_tiny_buffer",
        "pi_mc",
        3,
        &["8", "1000"],
        &[("TIMELESS_BUFFER_BYTES", "1")],
    );
    assert_ok(&run);
    let results = run.actions[0]
        .iter()
        .filter(|a| matches!(a, Action::Recv { src: 1 | 2, .. }))
        .count();
    assert_eq!(results, 8);
    assert_pairs_match(&run);
    assert_requests_balanced(&run, 0);
}

#[test]
fn every_traced_call_of_the_coverage_program() {
    let run = trace("coverage", "coverage", 4, &[], &[]);
    assert_ok(&run);
    for kw in [
        "send",
        "recv",
        "isend",
        "irecv",
        "wait",
        "waitall",
        "test",
        "sendRecv",
        "barrier",
        "bcast",
        "reduce",
        "allreduce",
        "gather",
        "gatherv",
        "scatter",
        "scatterv",
        "allgather",
        "allgatherv",
        "alltoall",
        "alltoallv",
        "reducescatter",
        "scan",
        "exscan",
        "comm_split",
        "comm_dup",
    ] {
        for r in 0..4usize {
            assert!(run.count(r, kw) > 0, "rank {r} has no {kw}");
        }
    }
    let r0 = run.lines[0].join("\n");
    // Derived datatype: 2 x MPI_Type_contiguous(3, MPI_INT) = 24 bytes.
    assert!(r0.contains("0 bcast 24 0 6"), "{r0}");
    // Communicators: the even/odd split (1), the duplicate of the world (2), the create that
    // only rank 0 belongs to (3); each defined right after the call that created it.
    let def = |id: u32, m: &[u32]| CommDef {
        id,
        members: m.to_vec(),
    };
    // Then the MPI-3 section: the idup (4), the Cartesian grid (5), the even/odd split (6).
    let world = [0, 1, 2, 3];
    assert_eq!(
        run.comm_defs[0],
        vec![
            def(1, &[0, 2]),
            def(2, &world),
            def(3, &[0]),
            def(4, &world),
            def(5, &world),
            def(6, &[0, 2])
        ]
    );
    assert_eq!(
        run.comm_defs[1],
        vec![
            def(1, &[1, 3]),
            def(2, &world),
            def(3, &world),
            def(4, &world),
            def(5, &[1, 3])
        ]
    );
    assert!(r0.contains("0 comm_split\n0 comm_def 1 2 0 2\n"), "{r0}");
    assert!(r0.contains("0 comm_dup\n0 comm_def 2 4 0 1 2 3\n"), "{r0}");
    // The sub-communicator bcast: root is world rank 0 (rank 1's root is world rank 1).
    assert!(r0.contains("0 bcast 4 0 0 comm=1"), "{r0}");
    let r1 = run.lines[1].join("\n");
    assert!(r1.contains("1 bcast 4 1 0 comm=1"), "{r1}");
    assert!(r0.contains("0 allreduce 2 0 0 comm=2"), "{r0}");
    // Point-to-point on the split, in world ranks: tag 20 goes through isend/irecv/wait.
    assert!(r1.contains("1 isend 3 20 2 0 comm=1"), "{r1}");
    assert!(r1.contains("1 wait 1 3 20 comm=1"), "{r1}");
    assert_comms_agree(&run.comm_defs);
    // Matched probes: the receives name the sender and tag the probe matched.
    for r in 0..4u32 {
        let (prev, next) = ((r + 3) % 4, (r + 1) % 4);
        let text = run.lines[r as usize].join("\n");
        for expected in [
            format!("# mprobe {prev} 30"),
            format!("{r} recv {prev} 30 3 1"),
            format!("# improbe {next} 31"),
            format!("{r} irecv {next} 31 4 1"),
            format!("{r} wait {next} {r} 31"),
        ] {
            assert!(text.contains(&expected), "rank {r}: {expected}\n{text}");
        }
    }
    // MPI_IN_PLACE at the gather root sends the root's block of the receive buffer.
    assert_eq!(run.count(0, "gather"), 2);
    // Sendrecv from MPI_ANY_SOURCE with tag 5: expanded with the real source.
    assert!(r0.contains("0 irecv 3 5 6 1"), "{r0}");
    coverage_mpi3(&run);
    assert_pairs_match(&run);
    // The isend freed with MPI_Request_free stays in SimGrid's store (waited at the end).
    assert_requests_balanced(&run, 1);
    assert_collectives_agree(&run);
    assert_simgrid_replays(&run);
}

/// The MPI-3 section of `coverage` (4 ranks).
fn coverage_mpi3(run: &Run) {
    // Without the compute records, which fall between calls.
    let text = |r: usize| {
        run.lines[r]
            .iter()
            .filter(|l| !l.contains(" compute "))
            .cloned()
            .collect::<Vec<_>>()
            .join("\n")
            + "\n"
    };
    // MPI_Comm_idup: SimGrid's comm_dup and the new communicator's definition when posted.
    assert!(
        text(0).contains("0 comm_dup\n0 comm_def 4 4 0 1 2 3\n0 barrier comm=4\n"),
        "{}",
        text(0)
    );
    // MPI_Alltoallw in bytes: rank r sends 1 + r elements to peer i, ints (4 bytes) to even
    // peers, doubles (8) to odd ones, and receives 1 + j elements of its own parity's type
    // from peer j. Rank 0: sends 4 8 4 8 (24), receives 4 8 12 16 (40); rank 1: sends
    // 8 16 8 16 (48), receives 8 16 24 32 (80).
    assert!(
        text(0).contains("0 alltoallv 24 4 8 4 8 40 4 8 12 16 6 6\n"),
        "{}",
        text(0)
    );
    assert!(text(1).contains("1 alltoallv 48 8 16 8 16 80 8 16 24 32 6 6\n"));
    // Neighbourhood collectives on the 2 x 2 grid, periodic in dimension 0 only: rank 0 =
    // (0, 0) has world rank 2 on both sides of dimension 0 and rank 1 above it in dimension 1.
    // Tags: -1000 - 2d travelling down, -1001 - 2d travelling up (hooks::neighbor).
    let allgather = "0 irecv 2 -1001 2 1 comm=5\n0 irecv 2 -1000 2 1 comm=5\n\
        0 irecv 1 -1002 2 1 comm=5\n0 isend 2 -1000 2 1 comm=5\n0 isend 2 -1001 2 1 comm=5\n\
        0 isend 1 -1003 2 1 comm=5\n0 wait 2 0 -1001 comm=5\n0 wait 2 0 -1000 comm=5\n\
        0 wait 1 0 -1002 comm=5\n0 wait 0 2 -1000 comm=5\n0 wait 0 2 -1001 comm=5\n\
        0 wait 0 1 -1003 comm=5\n";
    assert!(text(0).contains(allgather), "{}", text(0));
    // The alltoall: the same messages with 3 ints.
    assert!(text(0).contains(&allgather.replace(" 2 1 comm", " 3 1 comm")));
    // Rank 3 = (1, 1): world rank 1 on both sides of dimension 0, rank 2 below it (its grid
    // is its communicator 4: rank 3 is not in MPI_Comm_create's communicator).
    assert!(
        text(3).contains(
            "3 irecv 1 -1001 2 1 comm=4\n3 irecv 1 -1000 2 1 comm=4\n\
             3 irecv 2 -1003 2 1 comm=4\n3 isend 1 -1000 2 1 comm=4\n\
             3 isend 1 -1001 2 1 comm=4\n3 isend 2 -1002 2 1 comm=4\n"
        ),
        "{}",
        text(3)
    );
    // MPI_Intercomm_create: a comment naming the local group, the intercommunicator's remote
    // group, and the exchange on it in world ranks.
    assert!(
        text(0).contains("# intercomm_create (tag 99): local group world ranks 0 2; not replayed"),
        "{}",
        text(0)
    );
    assert!(text(0).contains("with remote group world ranks 1 3"));
    assert!(text(1).contains("# intercomm_create (tag 99): local group world ranks 1 3;"));
    assert!(text(0).contains("0 isend 1 40 2 0\n"), "{}", text(0));
    assert!(text(3).contains("3 irecv 2 40 2 0\n"), "{}", text(3));
}

#[test]
fn fortran_calls_go_through_the_fortran_wrappers() {
    let run = trace("fortran_mix", "fortran_mix", 4, &["3"], &[]);
    assert_ok(&run);
    assert!(run.stdout().contains("fortran_mix: done on 4 ranks"));
    for r in 0..4usize {
        for (kw, n) in [
            ("send", 3),
            ("recv", 3),
            ("isend", 3 * 2 + 3 + 2),
            ("irecv", 3 * 2 + 3 + 2),
            ("alltoallv", 1),
            ("waitall", 3),
            ("bcast", 1),
            ("reduce", 1),
            ("allreduce", 1),
            ("gather", 1),
            ("alltoall", 1),
            ("barrier", 2),
            ("comm_split", 1),
        ] {
            assert_eq!(run.count(r, kw), n, "rank {r} {kw}");
        }
        // MPI_TEST loops until the message is there: one `test` per call, then one `wait`.
        assert!(run.count(r, "test") >= 1, "rank {r}");
        assert_eq!(
            run.count(r, "wait"),
            2 + 2 + 2 + 4,
            "rank {r}: sendrecv, waitany x2, test + wait, neighbour allgather"
        );
        // MPI_ALLTOALLW with MPI_INTEGER for every peer (handles converted one by one): 4 bytes
        // to and from each of the 4 ranks. The neighbour allgather on the periodic ring: one
        // MPI_INTEGER (id 47) from and to each side.
        let text = run.lines[r].join("\n");
        assert!(
            text.contains(&format!("{r} alltoallv 16 4 4 4 4 16 4 4 4 4 6 6")),
            "{text}"
        );
        let (prv, nxt) = ((r + 3) % 4, (r + 1) % 4);
        assert!(
            text.contains(&format!(
                "{r} irecv {prv} -1001 1 47 comm=2\n{r} irecv {nxt} -1000 1 47 comm=2\n\
                 {r} isend {prv} -1000 1 47 comm=2\n{r} isend {nxt} -1001 1 47 comm=2\n"
            )),
            "{text}"
        );
        // MPI_DOUBLE_PRECISION is written as id 40 (MPI_REAL8), MPI_INTEGER as 47 (INTEGER4).
        assert!(
            run.lines[r].iter().any(|l| l.ends_with(" 100 40")),
            "rank {r}"
        );
        assert!(
            run.lines[r]
                .iter()
                .any(|l| l.contains("gather 1 1 0 47 47")),
            "rank {r}"
        );
    }
    // Ranks 1..3 receive from MPI_ANY_SOURCE with MPI_STATUS_IGNORE: the source is still real.
    for r in 1..4u32 {
        let recvs: Vec<u32> = run.actions[r as usize]
            .iter()
            .filter_map(|a| match a {
                Action::Recv {
                    src,
                    blocking: true,
                    ..
                } => Some(*src),
                _ => None,
            })
            .collect();
        assert_eq!(recvs, vec![r - 1; 3], "rank {r}");
    }
    for r in 0..4u32 {
        let half: Vec<u32> = (0..4).filter(|w| w % 2 == r % 2).collect();
        assert_eq!(
            run.comm_defs[r as usize],
            vec![
                CommDef {
                    id: 1,
                    members: half
                },
                CommDef {
                    id: 2,
                    members: vec![0, 1, 2, 3]
                }
            ],
            "rank {r}"
        );
        let on_half: Vec<&Action> = run.actions[r as usize]
            .iter()
            .zip(&run.comms[r as usize])
            .filter(|(_, c)| **c == Some(1))
            .map(|(a, _)| a)
            .collect();
        assert_eq!(on_half, vec![&Action::Barrier], "rank {r}");
    }
    assert_pairs_match(&run);
    assert_requests_balanced(&run, 0);
    assert_collectives_agree(&run);
    assert_simgrid_replays(&run);
}

#[test]
fn fortran_2008_bindings_are_traced_through_open_mpi_s_common_implementation() {
    let run = trace("fortran_f08", "fortran_f08", 3, &[], &[]);
    assert_ok(&run);
    assert!(run.stdout().contains("fortran_f08: done on 3 ranks"));
    for r in 0..3u32 {
        let text = run.lines[r as usize].join("\n");
        let (prev, next) = ((r + 2) % 3, (r + 1) % 3);
        // The receive from MPI_ANY_SOURCE with MPI_STATUS_IGNORE still names its source.
        assert!(text.contains(&format!("{r} recv {prev} 1 50 40")), "{text}");
        assert!(text.contains(&format!("{r} send {next} 1 50 40")), "{text}");
        assert_eq!(run.count(r as usize, "waitall"), 1);
        assert!(text.contains(&format!("{r} allreduce 50 0 40")), "{text}");
    }
    assert_pairs_match(&run);
    assert_requests_balanced(&run, 0);
    assert_simgrid_replays(&run);
}

#[test]
fn an_unwritable_trace_directory_disables_tracing_only() {
    let run = trace(
        "unwritable",
        "ring",
        2,
        &["2", "1000", "1000"],
        &[("TIMELESS_OUT", "/proc/none")],
    );
    assert!(run.out.status.success(), "{}", run.stderr());
    assert!(run.stdout().contains("ring: 2 rounds"));
    let err = run.stderr();
    assert_eq!(
        err.matches("tracing disabled").count(),
        2,
        "one message per rank:\n{err}"
    );
}

#[test]
fn a_panic_inside_the_tracer_never_reaches_the_program() {
    let run = trace(
        "panic",
        "stencil2d",
        4,
        &["16", "10"],
        &[("TIMELESS_INJECT_PANIC", "20")],
    );
    assert!(run.out.status.success(), "{}", run.stderr());
    assert!(run.stdout().contains("stencil2d: iteration 10"));
    let err = run.stderr();
    assert_eq!(
        err.matches("tracing disabled").count(),
        4,
        "one message per rank:\n{err}"
    );
    assert!(
        !err.contains("panicked at"),
        "the panic message leaked:\n{err}"
    );
    for r in 0..4usize {
        let last = run.lines[r].last().cloned().unwrap_or_default();
        assert!(
            last.starts_with("# tracing stopped here"),
            "rank {r} ends with '{last}'"
        );
        assert!(run.actions[r].len() < 20, "rank {r}");
    }
}

#[test]
fn mpi_abort_leaves_a_valid_trace() {
    // pi_mc aborts on a single rank.
    let run = trace("abort", "pi_mc", 1, &[], &[]);
    assert!(!run.out.status.success());
    let text = run.lines[0].join("\n");
    assert!(text.contains("0 bcast 2 0 4"), "{text}");
    assert!(text.ends_with("# MPI_Abort with error code 1"), "{text}");
}

/// The communicator extension's identity rule: a communicator is (ordered member list,
/// occurrence index of that list among a rank's own `comm_def`s). Every rank that defines it
/// must be a member, and every member must define it.
fn assert_comms_agree(defs: &[Vec<CommDef>]) {
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

#[test]
fn the_committed_commsplit_trace_follows_the_communicator_identity_rule() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../../traces/commsplit4");
    let defs: Vec<Vec<CommDef>> = (0..4)
        .map(|r| {
            std::fs::read_to_string(dir.join(format!("rank-{r}.txt")))
                .expect("committed trace")
                .lines()
                .filter_map(|l| split_comm(l).expect("valid record").0)
                .collect()
        })
        .collect();
    assert_eq!(defs[0].len(), 10);
    assert_eq!(defs[1].len(), 9);
    assert_comms_agree(&defs);
}

/// Actions per (keyword, communicator id) of one rank.
fn kinds(run: &Run, rank: usize) -> BTreeMap<(&'static str, Option<u32>), usize> {
    let mut m = BTreeMap::new();
    for (a, c) in run.actions[rank].iter().zip(&run.comms[rank]) {
        *m.entry((a.keyword(), *c)).or_insert(0) += 1;
    }
    m
}

#[test]
fn sub_communicators_are_defined_and_named_on_every_record() {
    // 2 x 2 grid: rank r is in row r / 2 and column r % 2.
    let run = trace("commsplit", "commsplit", 4, &["2"], &[]);
    assert_ok(&run);
    assert!(run
        .stdout()
        .contains("commsplit: 4 ranks on a 2x2 grid, 2 rounds, checksum"));
    for r in 0..4u32 {
        let (row, col) = (r / 2, r % 2);
        let row_members = vec![2 * row, 2 * row + 1];
        let def = |id: u32, members: Vec<u32>| CommDef { id, members };
        // In creation order: row split, column split, row duplicate, Cartesian grid, its row
        // slice, then MPI_COMM_SELF at first use.
        assert_eq!(
            run.comm_defs[r as usize],
            vec![
                def(1, row_members.clone()),
                def(2, vec![col, col + 2]),
                def(3, row_members.clone()),
                def(4, vec![0, 1, 2, 3]),
                def(5, row_members.clone()),
                def(6, vec![r]),
            ]
            .into_iter()
            .chain([def(7, vec![col, col + 2])])
            // The even ranks' communicator, made by them only.
            .chain((r % 2 == 0).then(|| def(8, vec![0, 2])))
            // The intercommunicator between the rows takes the next id (described by comments,
            // see below); then rows 0 and 1 merged, row 0 first.
            .chain([def(if r % 2 == 0 { 10 } else { 9 }, vec![0, 1, 2, 3])])
            // MPI_Comm_split_type(MPI_COMM_TYPE_SHARED): one machine, every rank.
            .chain([def(if r % 2 == 0 { 11 } else { 10 }, vec![0, 1, 2, 3])])
            .collect::<Vec<_>>(),
            "rank {r}"
        );
        let k = kinds(&run, r as usize);
        let expected: BTreeMap<(&str, Option<u32>), usize> = [
            (("init", None), 1),
            // SimGrid's no-op actions (3 comm_split, 2 comm_dup) decode as one kind.
            (("comm_size", None), 5),
            (("barrier", Some(7)), 1),
            (("bcast", Some(1)), 2),
            (("allreduce", Some(1)), 2),
            (("alltoall", Some(1)), 2),
            // Sendrecv with tag 7 → isend, irecv, wait, wait; then isend/irecv + waitall.
            (("isend", Some(1)), 4),
            (("irecv", Some(1)), 4),
            (("wait", Some(1)), 4),
            (("waitall", None), 2),
            (("reduce", Some(2)), 2),
            (("allgather", Some(2)), 2),
            (("allreduce", None), 2),
            (("barrier", Some(3)), 1),
            (("allreduce", Some(5)), 1),
            (("allreduce", Some(6)), 1),
            (("reduce", None), 1),
            (("finalize", None), 1),
        ]
        .into_iter()
        // Even ranks: on their own communicator (8), on the merged one (10), on the node (11);
        // odd ranks: on the merged one (9), on the node (10).
        .chain(if r % 2 == 0 {
            vec![
                (("allreduce", Some(8)), 1),
                (("allreduce", Some(10)), 1),
                (("barrier", Some(11)), 1),
            ]
        } else {
            vec![(("allreduce", Some(9)), 1), (("barrier", Some(10)), 1)]
        })
        .collect();
        let without_compute: BTreeMap<_, _> = k
            .into_iter()
            .filter(|((kw, _), _)| *kw != "compute")
            .collect();
        assert_eq!(without_compute, expected, "rank {r}");
        // MPI_Intercomm_create: the comment naming the local row, then the intercommunicator's.
        let (inter, other) = (if r % 2 == 0 { 9 } else { 8 }, 1 - row);
        let text = run.lines[r as usize].join("\n");
        assert!(
            text.contains(&format!(
                "# intercomm_create (tag 11): local group world ranks {} {}; not replayed: \
                 the leaders' exchange; point-to-point on the intercommunicator is written in \
                 world ranks, its collectives as comments\n# comm {inter} (intercommunicator) \
                 with remote group world ranks {} {}",
                2 * row,
                2 * row + 1,
                2 * other,
                2 * other + 1
            )),
            "rank {r}:\n{text}"
        );
        // Roots and peers are world ranks: the row's bcast root is its first rank, the
        // column's reduce root its last, and the ring shift's peer the other row member.
        let peer = 2 * row + (1 - col);
        for (a, c) in run.actions[r as usize].iter().zip(&run.comms[r as usize]) {
            match (a, c) {
                (Action::Bcast { root, .. }, Some(1)) => assert_eq!(*root, 2 * row),
                (Action::Reduce { root, .. }, Some(2)) => assert_eq!(*root, col + 2),
                (Action::Send { dst, .. }, Some(1)) => assert_eq!(*dst, peer),
                (Action::Recv { src, .. }, Some(1)) => assert_eq!(*src, peer, "wildcard source"),
                _ => {}
            }
        }
    }
    assert_comms_agree(&run.comm_defs);
    assert_pairs_match(&run);
    assert_requests_balanced(&run, 0);
    assert_collectives_agree(&run);
}

#[test]
fn the_wavefront_pipeline_sends_each_boundary_once_per_plane_and_sweep() {
    // 2 x 2 grid, 48 x 48 blocks, 6 planes, 3 iterations: every rank has one downstream and
    // one upstream neighbour per direction it borders, i.e. 2 per sweep and plane.
    let run = trace("wavefront", "wavefront", 4, &["48", "6", "3"], &[]);
    assert_ok(&run);
    assert!(run
        .stdout()
        .contains("wavefront: 4 ranks on a 2x2 grid, n 48, nz 6, 3 iterations, norm"));
    for r in 0..4usize {
        assert_eq!(run.count(r, "send"), 36, "rank {r}");
        assert_eq!(run.count(r, "recv"), 36, "rank {r}");
        assert_eq!(run.count(r, "allreduce"), 3, "rank {r}");
        assert_eq!(run.count(r, "isend") + run.count(r, "irecv"), 0, "rank {r}");
        for a in &run.actions[r] {
            if let Action::Send { count, dt, .. } = a {
                assert_eq!((*count, *dt), (48, Some(Datatype::DOUBLE)), "rank {r}");
            }
        }
    }
    // Rank 3 (south-east corner) waits for its north (1) and west (2) neighbours first.
    let first_recvs: Vec<(u32, i32)> = run.actions[3]
        .iter()
        .filter_map(|a| match a {
            Action::Recv { src, tag, .. } => Some((*src, *tag)),
            _ => None,
        })
        .take(2)
        .collect();
    assert_eq!(first_recvs, vec![(1, 0), (2, 1000)]);
    // Rank 0 (north-west corner) first sends south (2) then east (1), plane 0.
    let first_sends: Vec<(u32, i32)> = run.actions[0]
        .iter()
        .filter_map(|a| match a {
            Action::Send { dst, tag, .. } => Some((*dst, *tag)),
            _ => None,
        })
        .take(2)
        .collect();
    assert_eq!(first_sends, vec![(2, 0), (1, 1000)]);
    assert_pairs_match(&run);
    assert_collectives_agree(&run);
    assert_simgrid_replays(&run);
}

/// Checks a pause/resume trace: messages of phases 1, 3 and 5 only, one heavy burst (phase
/// 1's; phases 2 and 4 ran paused), and the comments naming the switches.
fn assert_phases_1_3_5(run: &Run, pause: &str, resume: &str, info: &str) {
    for r in 0..run.nranks as usize {
        let tags: Vec<i32> = run.actions[r]
            .iter()
            .filter_map(|a| match a {
                Action::Send { tag, .. } => Some(*tag),
                _ => None,
            })
            .collect();
        assert_eq!(tags, vec![1, 3, 5], "rank {r}: sends");
        assert_eq!(run.count(r, "recv"), 3, "rank {r}");
        let flops: Vec<f64> = run.actions[r]
            .iter()
            .filter_map(|a| match a {
                Action::Compute { flops } => Some(*flops),
                _ => None,
            })
            .collect();
        let max = flops.iter().copied().fold(0.0, f64::max);
        assert_eq!(
            flops.iter().filter(|&&f| f > max / 4.0).count(),
            1,
            "rank {r}: one heavy burst: {flops:?}"
        );
        let text = run.lines[r].join("\n");
        for note in [
            format!("# tracing paused by {pause}"),
            format!("# tracing resumed by {resume}"),
            format!("# tracing paused by {info} TIMELESS_TRACING"),
            format!("# tracing resumed by {info} TIMELESS_TRACING"),
        ] {
            assert_eq!(text.matches(&note).count(), 1, "rank {r}: {note}\n{text}");
        }
    }
    assert_pairs_match(run);
    assert_collectives_agree(run);
}

#[test]
fn pcontrol_and_the_info_key_pause_and_resume_tracing_in_c() {
    let run = trace("tracing_control", "tracing_control", 3, &[], &[]);
    assert_ok(&run);
    // Phases 1..5 with values rank + phase, weighted by the phase: the ring shift.
    assert!(
        run.stdout()
            .contains("tracing_control: 3 ranks, checksum 210"),
        "{}",
        run.stdout()
    );
    assert_phases_1_3_5(&run, "MPI_Pcontrol(0)", "MPI_Pcontrol(1)", "MPI_Info_set");
    assert_simgrid_replays(&run);
}

#[test]
fn pcontrol_and_the_info_key_pause_and_resume_tracing_in_fortran() {
    let run = trace("fortran_control", "fortran_control", 3, &[], &[]);
    assert_ok(&run);
    assert!(
        run.stdout()
            .contains("fortran_control: 3 ranks, checksum 210"),
        "{}",
        run.stdout()
    );
    assert_phases_1_3_5(&run, "MPI_PCONTROL(0)", "MPI_PCONTROL(1)", "MPI_INFO_SET");
}

/// Tags of the `send`s or `recv`s of a rank, in trace order.
fn tags(run: &Run, r: usize, kind: &str) -> Vec<i32> {
    run.actions[r]
        .iter()
        .filter_map(|a| match a {
            Action::Send { tag, .. } if kind == "send" => Some(*tag),
            Action::Recv { tag, .. } if kind == "recv" => Some(*tag),
            _ => None,
        })
        .collect()
}

/// Checks the ranks of `abort_midway` killed by the launcher: each file is a non-empty valid
/// prefix of the rank's actions (whole lines, `init` first, sends and receives in round order,
/// at least rounds `0..min_rounds` on every rank and round `0..=2`'s send on rank 0), ended by
/// the `SIGTERM` handler's comment or, for a rank that the launcher's `SIGKILL` reached before
/// its handler ran, by what the tracer had flushed. Returns how many ranks ran the handler.
fn assert_killed_prefixes(run: &Run, min_rounds: i32) -> usize {
    let mut handled = 0;
    for r in [0usize, 2, 3] {
        let text = std::fs::read_to_string(run.dir.join(format!("rank-{r}.txt"))).unwrap();
        assert!(text.ends_with('\n'), "rank {r}: a partial line:\n{text}");
        assert!(
            matches!(run.actions[r].first(), Some(Action::Init { .. })),
            "rank {r} does not start with init:\n{text}"
        );
        if run.lines[r].last().map(String::as_str)
            == Some("# terminated by SIGTERM: the trace stops here")
        {
            handled += 1;
        }
        let (sends, recvs) = (tags(run, r, "send"), tags(run, r, "recv"));
        let in_order = |v: &[i32]| v.iter().enumerate().all(|(i, &t)| t == i as i32);
        assert!(
            in_order(&sends) && in_order(&recvs),
            "rank {r}: {sends:?} {recvs:?}"
        );
        let expected: Vec<i32> = (0..min_rounds).collect();
        assert!(sends.starts_with(&expected), "rank {r}: sends {sends:?}");
        assert!(recvs.starts_with(&expected), "rank {r}: recvs {recvs:?}");
    }
    handled
}

#[test]
fn ranks_killed_after_mpi_abort_write_their_buffered_records() {
    // Rank 1 aborts in round 2; mpirun then sends SIGTERM to the others, blocked in MPI_Recv.
    let run = trace("abort_midway", "abort_midway", 4, &["2", "1"], &[]);
    assert!(!run.out.status.success());
    // The aborting rank: rounds 0 and 1 in full, the receive of round 2, then the abort.
    assert_eq!(tags(&run, 1, "recv"), vec![0, 1, 2]);
    assert_eq!(tags(&run, 1, "send"), vec![0, 1]);
    assert_eq!(
        run.lines[1].last().map(String::as_str),
        Some("# MPI_Abort with error code 3")
    );
    // The killed ranks: how far each got is a race with the launcher's signals; whatever it is,
    // the file holds at least the start-up records (written at once), as a valid prefix.
    let handled = assert_killed_prefixes(&run, 0);
    eprintln!("{handled} of the 3 killed ranks ran their SIGTERM handler");
}

/// A rank blocked for long in a call before it is killed keeps its records even if no
/// handler runs: the flusher thread wrote them (period 0.2 s; the aborting rank waits 1.5 s).
#[test]
fn ranks_blocked_before_they_are_killed_keep_what_the_flusher_wrote() {
    let run = trace(
        "abort_delayed",
        "abort_midway",
        4,
        &["2", "1", "1500"],
        &[("TIMELESS_FLUSH_SECS", "0.2")],
    );
    assert!(!run.out.status.success());
    // Every killed rank completed rounds 0 and 1 (rank 0 also sent round 2) before blocking.
    assert_killed_prefixes(&run, 2);
    assert!(tags(&run, 0, "send").starts_with(&[0, 1, 2]));
    assert_eq!(
        run.lines[1].last().map(String::as_str),
        Some("# MPI_Abort with error code 3")
    );
}

#[test]
fn persistent_requests_record_one_isend_or_irecv_per_start() {
    // 3 ranks, 2 iterations with MPI_Startall/MPI_Waitall, then one with MPI_Start/MPI_Wait.
    let run = trace("persistent", "persistent", 3, &["2", "10"], &[]);
    assert_ok(&run);
    assert!(
        run.stdout()
            .contains("persistent: 3 ranks, 2 iterations, total 182232.0"),
        "{}",
        run.stdout()
    );
    for r in 0..3u32 {
        let (left, right) = ((r + 2) % 3, (r + 1) % 3);
        assert_eq!(run.count(r as usize, "isend"), 6, "rank {r}");
        assert_eq!(run.count(r as usize, "irecv"), 6, "rank {r}");
        assert_eq!(run.count(r as usize, "waitall"), 2, "rank {r}");
        assert_eq!(run.count(r as usize, "wait"), 4, "rank {r}");
        // The MPI_ANY_SOURCE receive (tag 1) names the left neighbour each time it starts.
        let tag1: Vec<u32> = run.actions[r as usize]
            .iter()
            .filter_map(|a| match a {
                Action::Recv {
                    src,
                    tag: 1,
                    blocking: false,
                    ..
                } => Some(*src),
                _ => None,
            })
            .collect();
        assert_eq!(tag1, vec![left; 3], "rank {r}");
        let text = run.lines[r as usize].join("\n");
        assert!(
            text.contains(&format!(
                "{r} isend {right} 1 10 0\n{r} isend {left} 2 10 0"
            )),
            "{text}"
        );
        assert!(!text.contains("never completed"), "{text}");
    }
    assert_pairs_match(&run);
    assert_requests_balanced(&run, 0);
    assert_simgrid_replays(&run);
}

/// The self-message loop of `callcost` (validation/tracing/run.py's per-call cost): one irecv,
/// send and wait per iteration, and the closing note of the chained CPU clock, which counts one
/// clock point at the entry and one at the exit of every traced call (start-up points too).
#[test]
fn the_callcost_loop_records_three_calls_per_iteration() {
    let run = trace("callcost", "callcost", 1, &["200"], &[]);
    assert_ok(&run);
    assert!(
        run.stdout().contains("callcost: 600 calls"),
        "{}",
        run.stdout()
    );
    assert_eq!(run.count(0, "irecv"), 200);
    assert_eq!(run.count(0, "send"), 200);
    assert_eq!(run.count(0, "wait"), 200);
    let text = run.lines[0].join("\n");
    assert!(text.contains("0 irecv 0 7 1 1\n"), "{text}");
    assert!(text.contains("0 wait 0 0 7\n"), "{text}");
    let note = run.lines[0]
        .iter()
        .find_map(|l| l.strip_prefix("# thread CPU clock: "))
        .expect("the clock note");
    let nums: Vec<u64> = note
        .split_whitespace()
        .filter_map(|w| w.parse().ok())
        .collect();
    // 601 traced calls (600 + MPI_Finalize), 2 points each.
    assert!(nums.len() >= 2 && nums[0] + nums[1] >= 1202, "{note}");
}

/// `--gather` over MPI: 5 ranks write to private directories (`%r` in `TIMELESS_OUT`, as if
/// each were on a node of its own), and at `MPI_Finalize` a binomial tree (radix 2: rounds
/// 0 ← 1, 2 ← 3; 0 ← 2; 0 ← 4, rank 2 staging rank 3's files) moves them into the gather
/// directory: byte-identical to the originals (kept with `TIMELESS_GATHER_KEEP`), timestamped
/// files over 1 MiB (sent in several chunks), the metadata gaining the gather's figures.
#[test]
fn the_gather_moves_every_rank_s_files_onto_rank_0_over_mpi() {
    let dir = tmp().join("traces").join("gather");
    let local = |r: u32| dir.join(format!("local-{r}"));
    let run = trace(
        "gather",
        "ring",
        5,
        &["12000", "8", "0"],
        &[
            ("TIMELESS_OUT", &format!("{}/local-%r", dir.display())),
            ("TIMELESS_GATHER_OUT", &dir.display().to_string()),
            ("TIMELESS_GATHER_RADIX", "2"),
            ("TIMELESS_GATHER_KEEP", "1"),
            ("TIMELESS_TIMESTAMPS", "1"),
            // 5 ranks on fewer cores: waiting ranks yield the core.
            ("OMPI_MCA_mpi_yield_when_idle", "1"),
            ("TIMELESS_REF_SPEED", "1e9"),
        ],
    );
    assert_ok(&run);
    assert!(
        run.stdout().contains("ring: 12000 rounds"),
        "{}",
        run.stdout()
    );
    for r in 0..5 {
        assert_eq!(run.count(r, "send"), 12000, "rank {r}");
    }
    assert_pairs_match(&run);
    let mut total = 0u64;
    for r in 0..5u32 {
        for name in [format!("rank-{r}.txt"), format!("rank-{r}.timed.txt")] {
            let original = std::fs::read(local(r).join(&name)).unwrap();
            let gathered = std::fs::read(dir.join(&name)).unwrap();
            assert!(original == gathered, "{name}: the gathered file differs");
            total += original.len() as u64;
        }
        let timed = std::fs::metadata(dir.join(format!("rank-{r}.timed.txt"))).unwrap();
        assert!(timed.len() > 1 << 20, "rank {r}: {} bytes", timed.len());
        // Only rank 0 writes the lists and the metadata; the staging directory is gone.
        assert_eq!(local(r).join("trace-list.txt").exists(), r == 0);
        assert!(!local(r).join(format!(".timeless-gather-{r}")).exists());
    }
    for name in ["trace-list.txt", "timed-list.txt", "in-call-times.csv"] {
        let original = std::fs::read(local(0).join(name)).unwrap();
        assert_eq!(original, std::fs::read(dir.join(name)).unwrap(), "{name}");
        total += original.len() as u64;
    }
    let original_meta = std::fs::read_to_string(local(0).join("trace-meta.json")).unwrap();
    let meta = run.file("trace-meta.json");
    let head = original_meta
        .trim_end()
        .strip_suffix('}')
        .unwrap()
        .trim_end();
    assert!(
        meta.starts_with(&format!("{head},\n  \"gather\": {{")),
        "{meta}"
    );
    total += original_meta.len() as u64;
    // 10 rank files, 2 lists, the in-call times and the metadata; 3 rounds for 5 ranks in a
    // binomial tree.
    for field in [
        "\"radix\": 2,".to_string(),
        "\"rounds\": 3,".to_string(),
        "\"files\": 14,".to_string(),
        format!("\"bytes\": {total},"),
    ] {
        assert!(meta.contains(&field), "{field}:\n{meta}");
    }
    assert_simgrid_replays(&run);
}

/// Without `TIMELESS_GATHER_KEEP` each rank removes what it sent, and its directory.
#[test]
fn the_gather_cleans_the_node_local_directories() {
    let dir = tmp().join("traces").join("gather_clean");
    let run = trace(
        "gather_clean",
        "stencil2d",
        4,
        &["64", "5"],
        &[
            ("TIMELESS_OUT", &format!("{}/local-%r", dir.display())),
            ("TIMELESS_GATHER_OUT", &dir.display().to_string()),
        ],
    );
    assert_ok(&run);
    assert_pairs_match(&run);
    for r in 0..4 {
        assert!(!dir.join(format!("local-{r}")).exists(), "rank {r}");
    }
    assert!(run.file("trace-meta.json").contains("\"radix\": 4,"));
    assert!(run.file("trace-meta.json").contains("\"rounds\": 1,"));
}
