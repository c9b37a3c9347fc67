//! Hardware-counter compute volumes, on request (`TIMELESS_COUNTERS=1` or `instructions`;
//! `timeless trace --counters`).
//!
//! By default a compute burst of `t` thread CPU seconds is recorded as `t × speed` flops, the
//! speed being the reference kernel's rate on the acquisition host (`calibrate`). On request,
//! each thread that traces opens a counter of the instructions it retires in user space
//! (`perf_event_open(2)`: `PERF_TYPE_HARDWARE` / `PERF_COUNT_HW_INSTRUCTIONS`, `exclude_kernel`,
//! `exclude_hv`, counting the calling thread on any CPU), read with `read(2)` at the same
//! tracer points as the CPU clock. A burst of `n` instructions is recorded as
//! `n × flops_per_instruction` flops, where `flops_per_instruction` is the reference kernel's:
//! its flops are known (`timeless_refkernel::KERNEL_FLOPS_PER_REP` per repetition) and its
//! instructions are counted at start-up ([`kernel_flops_per_instruction`]). A burst replayed on
//! a host at the reference speed then takes the time the kernel would take to retire as many
//! instructions, independently of how the burst's own run was slowed (seed 003 §3: volumes,
//! not times).
//!
//! Where the machine has no counter (virtual machines without a virtual PMU: `ENOENT`;
//! `perf_event_paranoid` or seccomp: `EACCES`/`EPERM`/`ENOSYS`), `setup` writes one message
//! naming the errno, records the fallback in the metadata, and the bursts are CPU time ×
//! speed as without the request. A thread whose counter cannot be opened later, or an interval
//! that starts and ends on different threads, is converted with CPU time × speed too (counted
//! in the trace's closing note).
//!
//! # Testing without hardware counters
//!
//! `TIMELESS_COUNTERS_TEST_EVENT=task-clock` (tests only) counts the software event
//! `PERF_COUNT_SW_TASK_CLOCK` (nanoseconds on the CPU) in place of instructions, which works on
//! machines without a PMU. The whole counter path then runs, and since the kernel's "flops per
//! instruction" becomes its flops per CPU nanosecond, the volumes must agree with CPU time ×
//! speed: what the integration test checks.

use std::cell::RefCell;
use std::ffi::c_int;
use std::sync::atomic::{AtomicBool, Ordering};

/// The counter's name, as the metadata writes it.
pub const COUNTER_NAME: &str = "PERF_COUNT_HW_INSTRUCTIONS";

/// `PERF_TYPE_HARDWARE` (`linux/perf_event.h`).
const PERF_TYPE_HARDWARE: u32 = 0;
/// `PERF_COUNT_HW_INSTRUCTIONS`.
const PERF_COUNT_HW_INSTRUCTIONS: u64 = 1;
/// `PERF_TYPE_SOFTWARE` / `PERF_COUNT_SW_TASK_CLOCK`: the test stand-in (module docs).
const PERF_TYPE_SOFTWARE: u32 = 1;
const PERF_COUNT_SW_TASK_CLOCK: u64 = 1;

/// The event counted: (type, config, name). Instructions, unless the test stand-in is asked for.
fn event() -> (u32, u64, &'static str) {
    static EVENT: std::sync::OnceLock<(u32, u64, &'static str)> = std::sync::OnceLock::new();
    *EVENT.get_or_init(
        || match std::env::var("TIMELESS_COUNTERS_TEST_EVENT").as_deref() {
            Ok("task-clock") => (
                PERF_TYPE_SOFTWARE,
                PERF_COUNT_SW_TASK_CLOCK,
                "PERF_COUNT_SW_TASK_CLOCK (test stand-in for instructions)",
            ),
            _ => (PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS, COUNTER_NAME),
        },
    )
}

/// The name of the counted event: [`COUNTER_NAME`], or the test stand-in's (module docs).
pub fn counter_name() -> &'static str {
    event().2
}
/// Bits of the attribute's flag word: `exclude_kernel` (bit 5), `exclude_hv` (bit 6).
const EXCLUDE_KERNEL: u64 = 1 << 5;
const EXCLUDE_HV: u64 = 1 << 6;
/// `PERF_FLAG_FD_CLOEXEC`.
const PERF_FLAG_FD_CLOEXEC: libc::c_ulong = 1 << 3;

/// The first 64 bytes of `struct perf_event_attr` (`PERF_ATTR_SIZE_VER0`, accepted by every
/// kernel since 2.6.31); the later fields are zero.
#[repr(C)]
#[derive(Default)]
struct PerfEventAttr {
    kind: u32,
    size: u32,
    config: u64,
    sample_period: u64,
    sample_type: u64,
    read_format: u64,
    flags: u64,
    wakeup_events: u32,
    bp_type: u32,
    config1: u64,
}

/// What `TIMELESS_COUNTERS` asks for.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Request {
    /// Unset, empty or `0`: CPU time × reference speed.
    Off,
    /// `1` or `instructions`: instructions × the kernel's flops per instruction.
    Instructions,
    /// Any other value (kept for the message): treated as unavailable.
    Unknown(String),
}

/// Reads the request from `TIMELESS_COUNTERS`'s value.
pub fn parse_request(value: Option<&str>) -> Request {
    match value.map(str::trim) {
        None | Some("") | Some("0") => Request::Off,
        Some(v) if v == "1" || v.eq_ignore_ascii_case("instructions") => Request::Instructions,
        Some(v) => Request::Unknown(v.to_string()),
    }
}

/// The request of this process's environment.
pub fn request_from_env() -> Request {
    parse_request(std::env::var("TIMELESS_COUNTERS").ok().as_deref())
}

/// One thread's instruction counter (a perf event file descriptor).
#[derive(Debug)]
pub struct Counter {
    fd: c_int,
}

impl Counter {
    /// Opens a counter of the user-space instructions of the calling thread.
    ///
    /// # Errors
    /// The `errno` of `perf_event_open(2)`.
    pub fn open_instructions() -> Result<Counter, i32> {
        let (kind, config, _) = event();
        let attr = PerfEventAttr {
            kind,
            size: std::mem::size_of::<PerfEventAttr>() as u32,
            config,
            flags: EXCLUDE_KERNEL | EXCLUDE_HV,
            ..PerfEventAttr::default()
        };
        // SAFETY: a valid attribute of the size it declares; pid 0 = calling thread, cpu -1 =
        // any CPU, no group.
        let fd = unsafe {
            libc::syscall(
                libc::SYS_perf_event_open,
                &attr as *const PerfEventAttr,
                0 as libc::pid_t,
                -1 as c_int,
                -1 as c_int,
                PERF_FLAG_FD_CLOEXEC,
            )
        };
        if fd < 0 {
            return Err(std::io::Error::last_os_error().raw_os_error().unwrap_or(0));
        }
        Ok(Counter { fd: fd as c_int })
    }

    /// Instructions retired in user space since the counter was opened; `None` if the read
    /// fails.
    pub fn read(&self) -> Option<u64> {
        let mut value: u64 = 0;
        // SAFETY: reads 8 bytes into a local u64 from our own descriptor.
        let n = unsafe { libc::read(self.fd, (&mut value as *mut u64).cast(), 8) };
        (n == 8).then_some(value)
    }
}

impl Drop for Counter {
    fn drop(&mut self) {
        // SAFETY: closes the descriptor this counter owns.
        unsafe { libc::close(self.fd) };
    }
}

/// The calling thread's counter.
enum ThreadCounter {
    Unopened,
    Open(Counter),
    Failed(i32),
}

thread_local! {
    static THREAD_COUNTER: RefCell<ThreadCounter> = const { RefCell::new(ThreadCounter::Unopened) };
}

/// Bursts are measured in instructions (set by `setup` when every rank opened its counter).
static ACTIVE: AtomicBool = AtomicBool::new(false);

/// Makes every traced thread read its counter at the tracer points.
pub fn activate() {
    ACTIVE.store(true, Ordering::Release);
}

/// Whether bursts are measured in instructions.
#[inline]
pub fn active() -> bool {
    ACTIVE.load(Ordering::Relaxed)
}

/// An instruction count read on one thread: the counter's descriptor (two reads are comparable
/// only on the same counter) and its value.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Reading {
    pub counter: i32,
    pub instructions: u64,
}

/// Opens the calling thread's counter if it has none yet.
///
/// # Errors
/// The `errno` of `perf_event_open(2)` (remembered: the thread does not try again).
pub fn open_on_this_thread() -> Result<(), i32> {
    THREAD_COUNTER.with(|c| {
        let mut c = c.borrow_mut();
        match &*c {
            ThreadCounter::Open(_) => Ok(()),
            ThreadCounter::Failed(e) => Err(*e),
            ThreadCounter::Unopened => match Counter::open_instructions() {
                Ok(k) => {
                    *c = ThreadCounter::Open(k);
                    Ok(())
                }
                Err(e) => {
                    *c = ThreadCounter::Failed(e);
                    Err(e)
                }
            },
        }
    })
}

/// The calling thread's instruction count: read if its counter is open, opened first if
/// counters are [`active`]; `None` otherwise or if the counter cannot be opened or read.
#[inline]
pub fn thread_instructions() -> Option<Reading> {
    THREAD_COUNTER
        .try_with(|c| {
            if matches!(&*c.borrow(), ThreadCounter::Unopened) && active() {
                let _ = open_on_this_thread();
            }
            match &*c.borrow() {
                ThreadCounter::Open(k) => k.read().map(|instructions| Reading {
                    counter: k.fd,
                    instructions,
                }),
                _ => None,
            }
        })
        .ok()
        .flatten()
}

/// Instructions between two readings, `None` when they come from different counters (an
/// interval that starts on one thread and ends on another).
pub fn delta(from: Reading, to: Reading) -> Option<u64> {
    (from.counter == to.counter).then(|| to.instructions.saturating_sub(from.instructions))
}

/// Flops per instruction of the reference kernel: `kernel_flops / kernel_instructions`;
/// `None` when no instruction was counted.
pub fn flops_per_instruction(kernel_flops: f64, kernel_instructions: u64) -> Option<f64> {
    (kernel_instructions > 0).then(|| kernel_flops / kernel_instructions as f64)
}

/// The volume recorded for a burst of `instructions`: `instructions × flops_per_instruction`
/// flops (module documentation).
pub fn burst_flops(instructions: u64, flops_per_instruction: f64) -> f64 {
    instructions as f64 * flops_per_instruction
}

/// Repetitions of the reference kernel whose instructions are counted (4 Mflop, a few ms).
pub const KERNEL_COUNT_REPS: i64 = 4096;

/// The reference kernel measured in instructions on the calling thread.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct KernelCount {
    /// Flops of one counted run.
    pub kernel_flops: f64,
    /// Fewest user-space instructions of three counted runs.
    pub kernel_instructions: u64,
    pub flops_per_instruction: f64,
}

/// Opens the calling thread's counter and counts the instructions of [`KERNEL_COUNT_REPS`]
/// repetitions of the reference kernel (after one warm-up run; fewest of three runs).
///
/// # Errors
/// The `errno` of `perf_event_open(2)`, or `EIO` when the counter cannot be read or counts
/// nothing.
pub fn kernel_flops_per_instruction() -> Result<KernelCount, i32> {
    open_on_this_thread()?;
    std::hint::black_box(timeless_refkernel::daxpy(KERNEL_COUNT_REPS));
    let mut best = u64::MAX;
    for _ in 0..3 {
        let a = thread_instructions().ok_or(libc::EIO)?;
        std::hint::black_box(timeless_refkernel::daxpy(KERNEL_COUNT_REPS));
        let b = thread_instructions().ok_or(libc::EIO)?;
        best = best.min(delta(a, b).ok_or(libc::EIO)?);
    }
    let kernel_flops = KERNEL_COUNT_REPS as f64 * timeless_refkernel::KERNEL_FLOPS_PER_REP;
    let ratio = flops_per_instruction(kernel_flops, best).ok_or(libc::EIO)?;
    Ok(KernelCount {
        kernel_flops,
        kernel_instructions: best,
        flops_per_instruction: ratio,
    })
}

/// `errno 2 (ENOENT: No such file or directory)`.
pub fn describe_errno(errno: i32) -> String {
    let name = match errno {
        libc::EPERM => "EPERM",
        libc::ENOENT => "ENOENT",
        libc::EIO => "EIO",
        libc::E2BIG => "E2BIG",
        libc::EBADF => "EBADF",
        libc::EAGAIN => "EAGAIN",
        libc::ENOMEM => "ENOMEM",
        libc::EACCES => "EACCES",
        libc::EFAULT => "EFAULT",
        libc::EBUSY => "EBUSY",
        libc::ENODEV => "ENODEV",
        libc::EINVAL => "EINVAL",
        libc::EMFILE => "EMFILE",
        libc::ENOSYS => "ENOSYS",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        _ => "",
    };
    let text = std::io::Error::from_raw_os_error(errno).to_string();
    // std appends " (os error N)".
    let text = text.split(" (os error").next().unwrap_or(&text).to_string();
    if name.is_empty() {
        format!("errno {errno} ({text})")
    } else {
        format!("errno {errno} ({name}: {text})")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_request_accepts_1_and_instructions() {
        assert_eq!(parse_request(None), Request::Off);
        assert_eq!(parse_request(Some("")), Request::Off);
        assert_eq!(parse_request(Some("0")), Request::Off);
        assert_eq!(parse_request(Some("1")), Request::Instructions);
        assert_eq!(parse_request(Some(" Instructions ")), Request::Instructions);
        assert_eq!(
            parse_request(Some("cycles")),
            Request::Unknown("cycles".into())
        );
    }

    /// Hand derivation: 4096 repetitions × 1024 flops = 4 194 304 flops; if the kernel retires
    /// 14 680 064 instructions (3.5 per flop: per element two loads, a multiply, an add, a
    /// store and two loop instructions for 2 flops), the ratio is 4194304 / 14680064 = 2/7.
    /// A burst of 7 000 000 instructions is then 7e6 × 2/7 = 2 000 000 flops, and one of 0
    /// instructions is 0 flops.
    #[test]
    fn instructions_convert_with_the_kernel_s_flops_per_instruction() {
        let ratio = flops_per_instruction(4096.0 * 1024.0, 14_680_064).unwrap();
        assert!((ratio - 2.0 / 7.0).abs() < 1e-15, "{ratio}");
        assert!((burst_flops(7_000_000, ratio) - 2e6).abs() < 1e-6);
        assert_eq!(burst_flops(0, ratio), 0.0);
        // A kernel of 1 000 flops in 500 instructions: 2 flops per instruction, so 12 345
        // instructions are 24 690 flops.
        let r = flops_per_instruction(1000.0, 500).unwrap();
        assert_eq!(r, 2.0);
        assert_eq!(burst_flops(12_345, r), 24_690.0);
        assert_eq!(flops_per_instruction(1000.0, 0), None);
    }

    /// Fake readings: a delta is taken on one counter only; a counter that went backwards
    /// (impossible, but never a huge unsigned wrap) gives 0.
    #[test]
    fn deltas_are_taken_on_one_counter_only() {
        let r = |counter, instructions| Reading {
            counter,
            instructions,
        };
        assert_eq!(delta(r(5, 1_000), r(5, 8_000)), Some(7_000));
        assert_eq!(delta(r(5, 1_000), r(6, 8_000)), None);
        assert_eq!(delta(r(5, 9_000), r(5, 8_000)), Some(0));
    }

    #[test]
    fn errno_text_names_the_constant() {
        assert_eq!(
            describe_errno(libc::ENOENT),
            "errno 2 (ENOENT: No such file or directory)"
        );
        assert!(describe_errno(libc::EACCES).starts_with("errno 13 (EACCES: "));
    }

    /// Works with and without counters: where `perf_event_open` fails the errno is reported
    /// (and no reading exists); where it succeeds the kernel's ratio is plausible for a
    /// scalar daxpy (between 0.05 and 2 flops per instruction).
    #[test]
    fn the_kernel_is_counted_or_the_errno_reported() {
        let h = std::thread::spawn(|| match kernel_flops_per_instruction() {
            Ok(k) => {
                assert!(
                    k.flops_per_instruction > 0.05 && k.flops_per_instruction < 2.0,
                    "{k:?}"
                );
                assert!(thread_instructions().is_some());
            }
            Err(e) => {
                assert!(e > 0, "errno {e}");
                assert_eq!(thread_instructions(), None);
                assert_eq!(open_on_this_thread(), Err(e), "the failure is remembered");
            }
        });
        h.join().unwrap();
    }
}
