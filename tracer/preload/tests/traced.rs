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
    assert_eq!(
        run.comm_defs[0],
        vec![def(1, &[0, 2]), def(2, &[0, 1, 2, 3]), def(3, &[0])]
    );
    assert_eq!(
        run.comm_defs[1],
        vec![def(1, &[1, 3]), def(2, &[0, 1, 2, 3])]
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
    assert_pairs_match(&run);
    // The isend freed with MPI_Request_free stays in SimGrid's store (waited at the end).
    assert_requests_balanced(&run, 1);
    assert_collectives_agree(&run);
    assert_simgrid_replays(&run);
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
            ("isend", 3 * 2 + 3),
            ("irecv", 3 * 2 + 3),
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
            2 + 2 + 2,
            "rank {r}: sendrecv, waitany x2, test + wait"
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
            vec![CommDef {
                id: 1,
                members: half
            }],
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
            // Rows 0 and 1 merged, row 0 first.
            .chain([def(if r % 2 == 0 { 9 } else { 8 }, vec![0, 1, 2, 3])])
            // MPI_Comm_split_type(MPI_COMM_TYPE_SHARED): one machine, every rank.
            .chain([def(if r % 2 == 0 { 10 } else { 9 }, vec![0, 1, 2, 3])])
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
        // Even ranks: on their own communicator (8), on the merged one (9), on the node (10);
        // odd ranks: on the merged one (8), on the node (9).
        .chain(if r % 2 == 0 {
            vec![
                (("allreduce", Some(8)), 1),
                (("allreduce", Some(9)), 1),
                (("barrier", Some(10)), 1),
            ]
        } else {
            vec![(("allreduce", Some(8)), 1), (("barrier", Some(9)), 1)]
        })
        .collect();
        let without_compute: BTreeMap<_, _> = k
            .into_iter()
            .filter(|((kw, _), _)| *kw != "compute")
            .collect();
        assert_eq!(without_compute, expected, "rank {r}");
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

#[test]
fn ranks_killed_after_mpi_abort_write_their_buffered_records() {
    // Rank 1 aborts in round 2; mpirun then sends SIGTERM to the others, blocked in MPI_Recv.
    let run = trace("abort_midway", "abort_midway", 4, &["2", "1"], &[]);
    assert!(!run.out.status.success());
    for r in 0..4usize {
        let text = std::fs::read_to_string(run.dir.join(format!("rank-{r}.txt"))).unwrap();
        assert!(
            text.is_empty() || text.ends_with('\n'),
            "rank {r}: a partial line"
        );
    }
    // The aborting rank: rounds 0 and 1 in full, the receive of round 2, then the abort.
    let tags = |r: usize, kind: &str| -> Vec<i32> {
        run.actions[r]
            .iter()
            .filter_map(|a| match a {
                Action::Send { tag, .. } if kind == "send" => Some(*tag),
                Action::Recv { tag, .. } if kind == "recv" => Some(*tag),
                _ => None,
            })
            .collect()
    };
    assert_eq!(tags(1, "recv"), vec![0, 1, 2]);
    assert_eq!(tags(1, "send"), vec![0, 1]);
    assert_eq!(
        run.lines[1].last().map(String::as_str),
        Some("# MPI_Abort with error code 3")
    );
    // The killed ranks: what they did before the abort, then the signal's comment. How far each
    // got is a race with the launcher's SIGTERM (rank 0 must have sent round 2, which rank 1
    // received; ranks 2 and 3 may be anywhere in rounds 0-2), and a rank killed before its
    // handler runs leaves an empty file: both are reported, not failed, so the test does not
    // depend on the scheduler. What is asserted is that whatever was written is a whole,
    // ordered prefix of the rank's actions.
    let mut flushed = 0;
    for r in [0usize, 2, 3] {
        if run.lines[r].is_empty() {
            eprintln!("rank {r} was killed before it could write its trace");
            continue;
        }
        flushed += 1;
        assert_eq!(
            run.lines[r].last().map(String::as_str),
            Some("# terminated by SIGTERM: the trace stops here"),
            "rank {r}"
        );
        assert!(matches!(run.actions[r].first(), Some(Action::Init { .. })));
        let sends = tags(r, "send");
        let recvs = tags(r, "recv");
        let in_order = |v: &[i32]| v.iter().enumerate().all(|(i, &t)| t == i as i32);
        assert!(
            in_order(&sends) && in_order(&recvs),
            "rank {r}: {sends:?} {recvs:?}"
        );
        if r == 0 {
            assert!(sends.starts_with(&[0, 1, 2]), "rank 0: {sends:?}");
        }
    }
    eprintln!("{flushed} of the 3 killed ranks wrote their trace");
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
