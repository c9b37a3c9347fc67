//! Tracer start-up, run by the `MPI_Init` wrappers once the library is initialised (or by the
//! first `MPI_Session_init` of a program that uses MPI-4 sessions, see `session`).
//!
//! Every rank measures its reference speed, its per-event overhead and its clock granularity,
//! then all ranks exchange them with one `PMPI_Allgather` on `MPI_COMM_WORLD` (a sessions
//! program: the tracer's communicator of the `mpi://WORLD` process set); rank 0 writes the
//! list and metadata files. The exchange happens even when a rank could not open its trace file
//! (that rank then runs untraced), so a local failure never leaves the others waiting.
//!
//! Environment: `TIMELESS_OUT` (trace directory, default `timeless-trace`; `%r` in it stands
//! for the world rank), `TIMELESS_GATHER_OUT`, `TIMELESS_GATHER_RADIX` and
//! `TIMELESS_GATHER_KEEP` (see `gather`),
//! `TIMELESS_BUFFER_BYTES` (write threshold, default 1 MiB), `TIMELESS_MIN_BURST_SECS` (a
//! burst shorter than this is carried over to the next record, default 1e-6 s) and
//! `TIMELESS_MAX_CARRY_SECS` (carried compute is written once it reaches this, default 20e-6 s;
//! see `burst`), `TIMELESS_REF_SPEED` (flop/s,
//! replaces the calibration; `timeless trace` sets it) and `TIMELESS_REF_SPEED_SOURCE` (where it
//! came from, for the metadata), `TIMELESS_EXACT_CPU_ABOVE_SECS` (intervals longer than this
//! read the real thread CPU clock, default 20e-6 s; see `clock`), `TIMELESS_FLUSH_SECS`
//! (buffered lines older than this are written out, default 1 s, 0: only when the buffer
//! fills), `TIMELESS_MODE` (acquisition
//! mode written in the metadata), `TIMELESS_COUNTERS` (`1` or `instructions`: compute volumes
//! from the instruction counter where every rank has one, see `counters`),
//! `TIMELESS_INJECT_PANIC=n` (tests only: the tracer panics at its n-th record, to check that
//! the program survives it).

use std::ffi::{c_char, c_int, c_void};
use std::path::PathBuf;

use crate::burst::BurstRule;
use crate::calibrate::{self, median, Calibration};
use crate::clock;
use crate::counters::{self, Request};
use crate::meta::{self, Json};
use crate::mpi;
use crate::runtime;
use crate::stamps;
use crate::tracer::{CommTable, Fail, Settings, Tracer};
use crate::writer::Writer;

/// Tracer version written in every trace.
pub const VERSION: &str = concat!("timeless-preload ", env!("CARGO_PKG_VERSION"));

const HOST_LEN: usize = 256;

/// What each rank tells the others at start-up.
#[repr(C)]
#[derive(Clone, Copy)]
struct RankInfo {
    speed: f64,
    overhead_secs: f64,
    granularity_secs: f64,
    kernel_cpu_secs: f64,
    /// The reference kernel's flops per instruction (0 unless counted, see `counters`).
    flops_per_instruction: f64,
    /// Instructions of one counted kernel run (0 unless counted).
    kernel_instructions: f64,
    /// Counters: 0 not requested, 1 open, 2 failed (`counter_errno` says why).
    counters: i32,
    counter_errno: i32,
    cpus: i32,
    /// CPUs this rank may run on (its affinity mask).
    allowed_cpus: i32,
    /// The one CPU of the affinity mask of a rank bound to a single CPU, else -1.
    bound_cpu: i32,
    ok: i32,
    host: [u8; HOST_LEN],
}

impl RankInfo {
    fn host(&self) -> String {
        let end = self.host.iter().position(|&b| b == 0).unwrap_or(HOST_LEN);
        String::from_utf8_lossy(&self.host[..end]).into_owned()
    }
}

fn env_f64(name: &str) -> Option<f64> {
    std::env::var(name).ok()?.trim().parse().ok()
}

/// Default period of the periodic flush (`TIMELESS_FLUSH_SECS`), seconds.
pub const DEFAULT_FLUSH_SECS: f64 = 1.0;

/// Rank `rank`'s trace directory: `TIMELESS_OUT` (default `timeless-trace`), each `%r` in it
/// replaced by the world rank (per-rank directories, e.g. node-local ones gathered at the end).
pub fn trace_dir(rank: u32) -> PathBuf {
    let out = std::env::var("TIMELESS_OUT").unwrap_or_else(|_| "timeless-trace".into());
    PathBuf::from(out.replace("%r", &rank.to_string()))
}

/// Whether start-up ran (or was attempted) in this process.
static STARTED: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// Whether start-up ran (or was attempted) in this process: the first of `MPI_Init`,
/// `MPI_Init_thread` and `MPI_Session_init` starts the tracer, the others find it started.
pub fn started() -> bool {
    STARTED.load(std::sync::atomic::Ordering::Acquire)
}

/// Starts tracing, once per process; called once `MPI_Init` (or, in a sessions program, the
/// first `MPI_Session_init`, see `session`) succeeded. Collective over [`mpi::base_comm`].
pub fn start(what: &str) {
    start_with(what, || Ok(()));
}

/// [`start`], after `prepare` (a sessions program: opening the tracer's own session and
/// communicator, see `session`), both as tracer code; a failure of either disables tracing.
pub fn start_with(what: &str, prepare: impl FnOnce() -> Result<(), Fail>) {
    if STARTED.swap(true, std::sync::atomic::Ordering::AcqRel) {
        return;
    }
    runtime::guarded_startup(what, || {
        if let Err(e) = prepare().and_then(|()| try_start(what)) {
            runtime::disable(&e.to_string());
        }
    });
}

fn try_start(what: &str) -> Result<(), Fail> {
    let world = mpi::base_comm();
    let (rank, size) = mpi::rank_size(world).ok_or_else(|| Fail::new("MPI_Comm_rank failed"))?;
    let (rank, size) = (rank as u32, size as u32);
    runtime::set_rank(i64::from(rank));
    // Read first: every rank then joins the call sites' gather at MPI_Finalize.
    crate::callsite::configure_from_env();
    let dir = trace_dir(rank);
    let buffer = env_f64("TIMELESS_BUFFER_BYTES").map_or(1 << 20, |v| v.max(1.0) as usize);
    // Experiments on the tracer's intrusion (see `stamps`); set before any wrapper runs traced.
    if std::env::var("TIMELESS_TIMESTAMPS").is_ok_and(|v| !v.is_empty() && v != "0") {
        stamps::enable_stamps();
    }
    stamps::set_inject_ns(env_f64("TIMELESS_INJECT_NS").map_or(0, |v| v.max(0.0) as u64));
    clock::set_exact_above_secs(
        env_f64("TIMELESS_EXACT_CPU_ABOVE_SECS").unwrap_or(clock::DEFAULT_EXACT_ABOVE_SECS),
    );
    let settings = Settings {
        burst_rule: burst_rule(),
        inject_panic_at: env_f64("TIMELESS_INJECT_PANIC").map(|v| v as u64),
        flush_secs: env_f64("TIMELESS_FLUSH_SECS")
            .unwrap_or(DEFAULT_FLUSH_SECS)
            .max(0.0),
    };

    let profile = crate::profile::configure_from_env();
    let profile_only = profile.is_some_and(|p| p.only);
    // Online compression registers its merge at MPI_Finalize on every rank, first.
    let online = crate::online::start(rank, size, &dir);
    // Local steps: a failure is remembered, the exchange below still happens.
    let flowgraph = crate::flowcapture::configure_from_env();
    let graph_only = flowgraph.is_some_and(|f| f.only);
    let writer = if profile_only {
        // The profile only: the records are formatted (the profile reads them) but go nowhere.
        crate::online::writer(std::path::Path::new("/dev/null"), buffer, online)
    } else if graph_only {
        // The flow graph only: the lines feed it, no file.
        let mut w = Writer::discard(buffer);
        if let Some(o) = online {
            w.set_online(o);
        }
        match flowgraph.and_then(|f| f.check.as_ref()) {
            // A test's check: the text trace of this run, next to the graph.
            Some(check) => std::fs::create_dir_all(check)
                .and_then(|_| Writer::create(&check.join(meta::rank_file(rank)), buffer))
                .map(|c| {
                    w.set_check_copy(c);
                    w
                }),
            None => Ok(w),
        }
    } else {
        std::fs::create_dir_all(&dir)
            .and_then(|_| crate::online::writer(&dir.join(meta::rank_file(rank)), buffer, online))
    };
    let writer = writer
        .map(|mut w| {
            if let Some(f) = flowgraph {
                w.set_graph(f.capture(rank, size));
            }
            w
        })
        .map_err(|e| {
            Fail::new(format!(
                "cannot create the trace file in {}: {e}",
                dir.display()
            ))
        });
    let cal = calibrate::reference_speed();
    let request = counters::request_from_env();
    let counted = match request {
        Request::Instructions => Some(counters::kernel_flops_per_instruction()),
        Request::Off | Request::Unknown(_) => None,
    };
    // After the counter is opened: the per-event cost then includes its reads.
    let overhead = measure_overhead(rank, size);
    let mut info = RankInfo {
        speed: cal.flops_per_sec,
        overhead_secs: overhead,
        granularity_secs: clock::thread_cpu_measured_granularity_secs(),
        kernel_cpu_secs: cal.kernel_cpu_secs,
        flops_per_instruction: counted
            .and_then(Result::ok)
            .map_or(0.0, |k| k.flops_per_instruction),
        kernel_instructions: counted
            .and_then(Result::ok)
            .map_or(0.0, |k| k.kernel_instructions as f64),
        counters: match counted {
            None => 0,
            Some(Ok(_)) => 1,
            Some(Err(_)) => 2,
        },
        counter_errno: counted.and_then(Result::err).unwrap_or(0),
        // SAFETY: sysconf has no preconditions.
        cpus: unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) } as i32,
        allowed_cpus: allowed_cpus(),
        bound_cpu: bound_cpu(),
        ok: i32::from(writer.is_ok()),
        host: [0; HOST_LEN],
    };
    let host = processor_name();
    let n = host.len().min(HOST_LEN - 1);
    info.host[..n].copy_from_slice(&host.as_bytes()[..n]);

    let mut all = vec![info; size as usize];
    let bytes = std::mem::size_of::<RankInfo>() as c_int;
    // SAFETY: `info` and `all` hold 1 and `size` RankInfo; every rank calls this once.
    let rc = unsafe {
        mpi_sys::PMPI_Allgather(
            &info as *const RankInfo as *const c_void,
            bytes,
            mpi_sys::RSMPI_UINT8_T,
            all.as_mut_ptr() as *mut c_void,
            bytes,
            mpi_sys::RSMPI_UINT8_T,
            world,
        )
    };
    if rc != mpi::SUCCESS {
        return Err(Fail::new("start-up exchange (MPI_Allgather) failed"));
    }
    let same_host: Vec<f64> = all
        .iter()
        .filter(|i| i.host() == host)
        .map(|i| i.speed)
        .collect();
    let speed = median(&same_host);
    let volume = ComputeVolume::decide(&request, &all, &host);
    if rank == 0 {
        if let Some(notice) = volume.fallback() {
            eprintln!("timeless-preload: {notice}");
        }
    }

    let files = if rank == 0 && !profile_only && !graph_only {
        let meta = metadata(&all, &cal, &volume, size, &dir, what);
        (if crate::online::text_enabled() {
            meta::write_list(&dir, size)
        } else {
            Ok(())
        })
        .and_then(|_| std::fs::write(dir.join(meta::META_FILE), meta.render()))
        .map_err(|e| Fail::new(format!("cannot write the list and metadata files: {e}")))
    } else {
        Ok(())
    };
    let writer = writer?;
    files?;
    let stamped = if stamps::stamps_enabled() && !profile_only {
        let w = Writer::create(&dir.join(stamps::timed_file(rank)), buffer).map_err(|e| {
            Fail::new(format!(
                "cannot create the timestamped file in {}: {e}",
                dir.display()
            ))
        })?;
        if rank == 0 {
            let list: String = (0..size).map(|r| stamps::timed_file(r) + "\n").collect();
            std::fs::write(dir.join(stamps::TIMED_LIST_FILE), list)
                .map_err(|e| Fail::new(format!("cannot write the timestamped list: {e}")))?;
        }
        Some(stamps::Stamped::new(w))
    } else {
        None
    };
    let mut world_group = unsafe { std::mem::zeroed::<mpi::MPI_Group>() };
    // SAFETY: valid communicator; out-parameter is a local.
    if unsafe { mpi_sys::PMPI_Comm_group(world, &mut world_group) } != mpi::SUCCESS {
        return Err(Fail::new("MPI_Comm_group failed"));
    }
    let mut t = Tracer::new(
        rank,
        size,
        writer,
        speed,
        settings,
        CommTable::new(world_group),
    );
    if let Some(s) = stamped {
        t.set_stamped(s);
    }
    if profile.is_some() {
        t.profile = Some(crate::profile::Capture::new(rank, size));
    }
    t.note(format_args!(
        "{VERSION}: rank {rank} of {size}, SimGrid 3.32 time-independent format"
    ))?;
    if mpi::has_session_base() {
        t.note(format_args!(
            "started by {what} (MPI-4 sessions): ranks are those of the mpi://WORLD process set"
        ))?;
    }
    match volume.flops_per_instruction {
        Some(ratio) => {
            counters::activate();
            t.count_instructions(ratio);
            t.note(format_args!(
                "host {host}; compute volumes in flops = user-space instructions x {ratio:e} \
                 flops per instruction (the reference kernel's; {} counter)",
                counters::counter_name()
            ))?;
        }
        None => t.note(format_args!(
            "host {host}; compute volumes in flops = thread CPU seconds x {speed:e} flop/s"
        ))?,
    }
    if crate::callsite::enabled() {
        t.callsites = Some(crate::callsite::CallSites::new());
        // The init record's site: the program's MPI_Init call (this runs inside its wrapper).
        t.capture_callsite();
    }
    t.comms.reserve_world(size); // world is communicator 0
    t.rec(format_args!("init"))?;
    // On disk from the start: a rank killed at any later point leaves a valid prefix.
    t.flush_buffered()?;
    // SAFETY: registers a plain extern "C" function.
    unsafe { libc::atexit(at_exit_trampoline) };
    crate::signals::install();
    t.end_event()?;
    let flush_secs = t.settings_flush_secs();
    runtime::install(t);
    runtime::start_flusher(flush_secs);
    Ok(())
}

extern "C" fn at_exit_trampoline() {
    runtime::at_exit();
}

/// Number of CPUs in this thread's affinity mask (0 if unknown).
fn allowed_cpus() -> i32 {
    // SAFETY: a zeroed cpu_set_t filled by sched_getaffinity for the calling thread.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0 {
            return 0;
        }
        libc::CPU_COUNT(&set)
    }
}

/// The CPU this thread is bound to when its affinity mask holds exactly one, else -1.
fn bound_cpu() -> i32 {
    // SAFETY: a zeroed cpu_set_t filled by sched_getaffinity for the calling thread; CPU_ISSET
    // reads bits below CPU_SETSIZE only.
    unsafe {
        let mut set: libc::cpu_set_t = std::mem::zeroed();
        if libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) != 0
            || libc::CPU_COUNT(&set) != 1
        {
            return -1;
        }
        (0..libc::CPU_SETSIZE as usize)
            .find(|&c| libc::CPU_ISSET(c, &set))
            .map_or(-1, |c| c as i32)
    }
}

fn processor_name() -> String {
    let mut buf = vec![0 as c_char; mpi_sys::MPI_MAX_PROCESSOR_NAME as usize + 1];
    let mut len: c_int = 0;
    // SAFETY: buffer of MPI_MAX_PROCESSOR_NAME + 1 chars.
    let rc = unsafe { mpi_sys::PMPI_Get_processor_name(buf.as_mut_ptr(), &mut len) };
    if rc != mpi::SUCCESS {
        return "unknown".into();
    }
    let bytes: Vec<u8> = buf[..len.max(0) as usize]
        .iter()
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

fn library_version() -> (String, String) {
    let mut buf = vec![0 as c_char; mpi_sys::MPI_MAX_LIBRARY_VERSION_STRING as usize + 1];
    let mut len: c_int = 0;
    let (mut major, mut minor) = (0, 0);
    // SAFETY: buffer of MPI_MAX_LIBRARY_VERSION_STRING + 1 chars; locals.
    let lib = unsafe {
        if mpi_sys::PMPI_Get_library_version(buf.as_mut_ptr(), &mut len) == mpi::SUCCESS {
            let bytes: Vec<u8> = buf[..len.max(0) as usize]
                .iter()
                .map(|&c| c as u8)
                .collect();
            String::from_utf8_lossy(&bytes)
                .trim_end_matches(['\0', '\n', ' '])
                .to_string()
        } else {
            "unknown".into()
        }
    };
    // SAFETY: locals.
    unsafe { mpi_sys::PMPI_Get_version(&mut major, &mut minor) };
    (lib, format!("{major}.{minor}"))
}

/// Mean CPU cost of the tracer's work for one record, measured on a synthetic event:
/// two reads of the tracer's CPU clock (chained, as in a traced call), a lock, a datatype lookup
/// and formatting one record.
fn measure_overhead(rank: u32, size: u32) -> f64 {
    use std::fmt::Write as _;
    let scratch = std::sync::Mutex::new(String::with_capacity(128));
    let table: std::collections::HashMap<u64, u8> = (0..64).map(|i| (i * 8, i as u8)).collect();
    calibrate::per_event_secs(2000, |i| {
        let t0 = clock::thread_cpu_chained_secs();
        // Reads this thread's instruction counter if it is open (see `counters`).
        std::hint::black_box(counters::thread_instructions());
        let _ = std::panic::catch_unwind(|| {
            let mut s = scratch.lock().unwrap_or_else(|p| p.into_inner());
            s.clear();
            let id = table.get(&(u64::from(i % 64) * 8)).copied().unwrap_or(6);
            let _ = writeln!(s, "{rank} send {} 0 1000 {id}", i % size.max(1));
            std::hint::black_box(&*s);
        });
        std::hint::black_box(clock::thread_cpu_chained_secs() - t0);
        std::hint::black_box(counters::thread_instructions());
    })
}

fn command_line() -> Vec<Json> {
    std::fs::read("/proc/self/cmdline")
        .map(|b| {
            b.split(|&c| c == 0)
                .filter(|a| !a.is_empty())
                .map(|a| Json::str(String::from_utf8_lossy(a)))
                .collect()
        })
        .unwrap_or_default()
}

/// How the run's compute volumes are measured, decided from every rank's start-up report.
#[derive(Debug, Clone, PartialEq)]
struct ComputeVolume {
    /// What `TIMELESS_COUNTERS` asked for.
    request: Request,
    /// The ratio this rank converts instructions with (median of its host's ranks), when
    /// counters are used: only if every rank counted the kernel.
    flops_per_instruction: Option<f64>,
    /// Ranks whose counter failed, with their errno.
    failed: Vec<(usize, i32)>,
    /// Ranks of the run.
    ranks: usize,
}

impl ComputeVolume {
    fn decide(request: &Request, all: &[RankInfo], host: &str) -> ComputeVolume {
        let failed: Vec<(usize, i32)> = all
            .iter()
            .enumerate()
            .filter(|(_, i)| i.counters == 2)
            .map(|(r, i)| (r, i.counter_errno))
            .collect();
        let counted = *request == Request::Instructions && all.iter().all(|i| i.counters == 1);
        let ratio = counted.then(|| {
            let ratios: Vec<f64> = all
                .iter()
                .filter(|i| i.host() == host)
                .map(|i| i.flops_per_instruction)
                .collect();
            median(&ratios)
        });
        ComputeVolume {
            request: request.clone(),
            flops_per_instruction: ratio,
            failed,
            ranks: all.len(),
        }
    }

    /// Why counters were requested but not used (`None` if not requested, or used): the one
    /// stderr line rank 0 writes, also recorded as `compute_volume.fallback`.
    fn fallback(&self) -> Option<String> {
        match &self.request {
            Request::Off => None,
            Request::Unknown(v) => Some(format!(
                "TIMELESS_COUNTERS='{v}' is neither 1 nor instructions: hardware counters not \
                 used, compute volumes are thread CPU time x reference speed instead"
            )),
            Request::Instructions if self.flops_per_instruction.is_some() => None,
            Request::Instructions => {
                let mut errnos: Vec<i32> = self.failed.iter().map(|&(_, e)| e).collect();
                errnos.sort_unstable();
                errnos.dedup();
                let why: Vec<String> = errnos.into_iter().map(counters::describe_errno).collect();
                Some(format!(
                    "hardware counters requested (TIMELESS_COUNTERS), but perf_event_open({}) \
                     failed on {} of {} ranks with {}: compute volumes are thread CPU time \
                     x reference speed instead",
                    counters::counter_name(),
                    self.failed.len(),
                    self.ranks,
                    why.join(", ")
                ))
            }
        }
    }

    fn json(&self, all: &[RankInfo]) -> Json {
        let per_rank =
            |f: fn(&RankInfo) -> f64| Json::Arr(all.iter().map(|i| Json::Num(f(i))).collect());
        let requested = match &self.request {
            Request::Off => Json::Bool(false),
            Request::Instructions => Json::str("instructions"),
            Request::Unknown(v) => Json::str(v.clone()),
        };
        let mut fields = vec![("requested", requested)];
        match self.flops_per_instruction {
            Some(ratio) => fields.extend([
                ("source", Json::str("hardware counter")),
                ("unit", Json::str("flops: user-space instructions of the burst scaled by the reference kernel's flops per instruction")),
                ("counter", Json::str(format!("{} (perf_event_open, user space only: exclude_kernel, exclude_hv), one per traced thread, read with read(2) at the tracer points of the CPU clock", counters::counter_name()))),
                ("flops_per_instruction_rank_0", Json::Num(ratio)),
                ("per_rank_flops_per_instruction", per_rank(|i| i.flops_per_instruction)),
                ("per_rank_kernel_instructions_per_run", per_rank(|i| i.kernel_instructions)),
                ("kernel_flops_per_counted_run", Json::Num(counters::KERNEL_COUNT_REPS as f64 * timeless_refkernel::KERNEL_FLOPS_PER_REP)),
                ("rule", Json::str("each rank converts with the median ratio of the ranks on its host; fewest instructions of 3 counted kernel runs per rank")),
            ]),
            None => {
                fields.push(("source", Json::str("thread CPU time")));
                fields.push(("unit", Json::str("flops: thread CPU seconds of the burst x the host's reference speed")));
                if let Some(why) = self.fallback() {
                    fields.push(("fallback", Json::str(why)));
                }
            }
        }
        Json::Obj(fields)
    }
}

fn metadata(
    all: &[RankInfo],
    cal: &Calibration,
    volume: &ComputeVolume,
    size: u32,
    dir: &std::path::Path,
    started_by: &str,
) -> Json {
    // Hosts in order of their first rank.
    let mut hosts: Vec<(String, Vec<usize>)> = Vec::new();
    for (r, i) in all.iter().enumerate() {
        let h = i.host();
        match hosts.iter_mut().find(|(n, _)| *n == h) {
            Some((_, ranks)) => ranks.push(r),
            None => hosts.push((h, vec![r])),
        }
    }
    let folded = hosts
        .iter()
        .any(|(_, ranks)| ranks.len() as i32 > all[ranks[0]].cpus.max(1));
    let mode = std::env::var("TIMELESS_MODE")
        .unwrap_or_else(|_| if folded { "folding" } else { "regular" }.to_string());
    let host_json: Vec<Json> = hosts
        .iter()
        .map(|(name, ranks)| {
            let speeds: Vec<f64> = ranks.iter().map(|&r| all[r].speed).collect();
            Json::Obj(vec![
                ("name", Json::str(name.clone())),
                (
                    "ranks",
                    Json::Arr(ranks.iter().map(|&r| Json::Int(r as i64)).collect()),
                ),
                ("cpus", Json::Int(i64::from(all[ranks[0]].cpus))),
                ("reference_speed_flops_per_sec", Json::Num(median(&speeds))),
            ])
        })
        .collect();
    let (lib, version) = library_version();
    let per_rank =
        |f: fn(&RankInfo) -> f64| Json::Arr(all.iter().map(|i| Json::Num(f(i))).collect());
    let overheads: Vec<f64> = all.iter().map(|i| i.overhead_secs).collect();
    let failed: Vec<Json> = all
        .iter()
        .enumerate()
        .filter(|(_, i)| i.ok == 0)
        .map(|(r, _)| Json::Int(r as i64))
        .collect();
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    Json::Obj(vec![
        ("format", Json::str("SimGrid 3.32 time-independent trace (TI text), one file per rank")),
        ("tracer", Json::str(VERSION)),
        ("ranks", Json::Int(i64::from(size))),
        ("list_file", Json::str(meta::LIST_FILE)),
        ("rank_files", Json::Arr((0..size).map(|r| Json::str(meta::rank_file(r))).collect())),
        ("trace_directory", Json::str(dir.display().to_string())),
        ("hosts", Json::Arr(host_json)),
        ("rank_hosts", Json::Arr(all.iter().map(|i| Json::str(i.host())).collect())),
        (
            "per_rank_allowed_cpus",
            Json::Arr(all.iter().map(|i| Json::Int(i64::from(i.allowed_cpus))).collect()),
        ),
        (
            "per_rank_bound_cpu",
            Json::Arr(all.iter().map(|i| Json::Int(i64::from(i.bound_cpu))).collect()),
        ),
        ("mpi_library", Json::str(lib)),
        ("mpi_version", Json::str(version)),
        ("started_by", Json::str(started_by)),
        (
            "world",
            Json::str(if mpi::has_session_base() {
                "the mpi://WORLD process set of MPI-4 sessions (no MPI_Init): ranks are its ranks"
            } else {
                "MPI_COMM_WORLD"
            }),
        ),
        ("acquisition_mode", Json::str(mode)),
        (
            "volume_units",
            Json::Obj(vec![
                (
                    "compute",
                    Json::str(if volume.flops_per_instruction.is_some() {
                        "flops: user-space instructions of the burst x the reference kernel's flops per instruction (compute_volume)"
                    } else {
                        "flops: thread CPU seconds of the burst x the host's reference speed"
                    }),
                ),
                ("messages", Json::str("elements of the written datatype id; id 6 (MPI_BYTE) for derived datatypes")),
            ]),
        ),
        ("compute_volume", volume.json(all)),
        (
            "reference_speed",
            Json::Obj(vec![
                ("source", Json::str(cal.source.describe())),
                ("kernel", Json::str("timeless-refkernel: daxpy y = a*x + y on 512 doubles, 2 flops per element, C -O2 scalar, thread CPU time, best of 3 runs")),
                ("kernel_flops_per_run", Json::Num(cal.kernel_flops)),
                ("per_rank_flops_per_sec", per_rank(|i| i.speed)),
                ("per_rank_kernel_cpu_secs", per_rank(|i| i.kernel_cpu_secs)),
                ("rule", Json::str("each rank converts with the median speed of the ranks on its host")),
            ]),
        ),
        (
            "tracer_overhead",
            Json::Obj(vec![
                ("per_event_secs_median", Json::Num(median(&overheads))),
                ("per_rank_per_event_secs", per_rank(|i| i.overhead_secs)),
                (
                    "injected_per_event_secs",
                    Json::Num(env_f64("TIMELESS_INJECT_NS").map_or(0.0, |v| v.max(0.0).floor() * 1e-9)),
                ),
                ("method", Json::str("thread CPU time of a synthetic record (two chained CPU clock reads, lock, lookup, formatting), mean of 2000")),
            ]),
        ),
        (
            "timer",
            Json::Obj(vec![
                ("clock", Json::str("CLOCK_THREAD_CPUTIME_ID, read at a tracer point only when the wall time (CLOCK_MONOTONIC) since the thread's previous point exceeds exact_above_secs; shorter intervals count their wall time")),
                ("exact_above_secs", Json::Num(clock::exact_above_secs())),
                ("declared_resolution_secs", Json::Num(clock::thread_cpu_declared_resolution_secs())),
                ("per_rank_measured_granularity_secs", per_rank(|i| i.granularity_secs)),
            ]),
        ),
        ("min_burst_secs", Json::Num(burst_rule().min_burst_secs)),
        ("max_carry_secs", Json::Num(burst_rule().max_carry_secs)),
        ("flush_secs", Json::Num(env_f64("TIMELESS_FLUSH_SECS").unwrap_or(DEFAULT_FLUSH_SECS).max(0.0))),
        (
            "timestamps",
            if stamps::stamps_enabled() {
                Json::Obj(vec![
                    ("clock", Json::str("CLOCK_MONOTONIC, wall seconds, enter and exit of every traced call")),
                    ("list_file", Json::str(stamps::TIMED_LIST_FILE)),
                    ("format", Json::str("<rank> <enter> <exit> <TI action>: timeless compensate")),
                ])
            } else {
                Json::Bool(false)
            },
        ),
        ("command_line", Json::Arr(command_line())),
        ("start_unix_secs", Json::Int(now)),
        ("untraced_ranks", Json::Arr(failed)),
    ])
}

/// The burst thresholds from `TIMELESS_MIN_BURST_SECS` and `TIMELESS_MAX_CARRY_SECS` (CPU
/// seconds; defaults in [`BurstRule::default`]; negative values count as 0).
fn burst_rule() -> BurstRule {
    let d = BurstRule::default();
    BurstRule {
        min_burst_secs: env_f64("TIMELESS_MIN_BURST_SECS")
            .unwrap_or(d.min_burst_secs)
            .max(0.0),
        max_carry_secs: env_f64("TIMELESS_MAX_CARRY_SECS")
            .unwrap_or(d.max_carry_secs)
            .max(0.0),
    }
}
