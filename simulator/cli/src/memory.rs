//! The process's memory: its allocator, what it does with freed memory, and where it asks the
//! kernel for huge pages. Process-wide choices, so they are the binary's: the libraries keep
//! the system allocator and the kernel's defaults of whatever front end links them.
//!
//! # Huge pages by the replay's size
//! mimalloc asks for transparent huge pages (`madvise(MADV_HUGEPAGE)`) on the arenas it
//! reserves, so on a kernel in THP `madvise` mode (Debian's default) the first touch of any
//! byte of a 2 MiB region makes the kernel zero all of it. A replay of a few hundred ranks
//! touches its memory sparsely: the 16-rank ring of `validation/bench` peaks at 16.7 MB of
//! resident memory with huge pages and 10.6 MB without. Zeroing is cheap on a warm machine
//! but not on a virtual machine whose host backs guest memory on first use again after
//! another program freed it: on the 2-core EPYC VM of `validation/bench/SCALING.md` (session
//! 25), each run right after a SimGrid run, the two binaries alternated, medians in
//! milliseconds:
//!
//! | point (pairs) | huge pages | off below 4,096 ranks |
//! |---|---:|---:|
//! | ring, 16 ranks (10) | 154 | 144.5 |
//! | stencil, 64 ranks (6) | 192.5 | 170.5 |
//! | stencil, 256 ranks (4) | 371.5 | 250 |
//! | allreduce, 16 ranks (6) | 344 | 216 |
//!
//! (and with mimalloc built without huge pages at all, `no_thp`: the 1,024-rank stencil 448
//! against 395 ms, 3 pairs).
//!
//! A large replay touches its memory densely and reads it at random (thousands of ranks'
//! states, mailboxes and decoded batches), where 4 KiB pages cost TLB misses: alternated with
//! itself (7 pairs), the 4,096-rank stencil took 1.31 s with huge pages and 1.45 s without
//! (mimalloc's `no_thp`), the 4,096-rank allreduce 1.01 and 1.06 s (the 1,024-rank stencil
//! 0.326 and 0.336 s, within the noise). So the process starts with huge pages off
//! (`prctl(PR_SET_THP_DISABLE)`, before `main`) and a replay of [`HUGE_PAGES_FROM_RANKS`]
//! ranks or more turns them back on before it allocates its per-rank state
//! ([`huge_pages_for_replay`], called through `timeless_run::Frontend::replay_size`).
//! On a guest whose balloon reports free 2 MiB blocks to its host (the EPYC VM:
//! `page_reporting_order` 9), a huge page is such a block, discarded by the host while free,
//! so a replay started a few seconds after the last one faults its huge pages in again at the
//! host: the 4,096-rank stencil took 0.77-0.94 s of system time after a 3-second pause
//! against 0.11-0.30 s right after another replay, and 0.18-0.24 s without huge pages (RSS 99
//! instead of 121 MB). In the benchmark's order (a 64-rank replay before each 4,096-rank one)
//! huge pages still gave the lower median (1.094 against 1.145 s, 9 alternated runs), so the
//! threshold stays (`validation/bench/SCALING.md`, session 36).
//! The results do not depend on it. Every other command gives the process back the policy it
//! started with at once ([`restore_huge_pages`]): the flag is inherited by the programs a
//! process starts, and `trace`, `validate` and `calibrate` start the traced application.

use std::sync::atomic::{AtomicBool, Ordering};

/// The allocator: mimalloc rather than glibc's. A replay's two threads pass every decoded
/// batch from one to the other (allocated by the decoder, freed by the replay), which glibc
/// serves from per-thread arenas grown a page at a time (about 3,000 `mprotect` calls at 4,096
/// ranks). With mimalloc the 4,096-rank stencil, ring and allreduce of `validation/bench` ran
/// 8, 15 and 13 % faster and the 64- and 16-rank points the same (medians of 5 alternated
/// runs, `validation/bench/SCALING.md`, session 18), for about twice the live heap in
/// committed memory; the libraries keep the system allocator of whatever front end links
/// them.
///
/// Freed memory is kept rather than purged (`mi_option_purge_delay` -1): by default mimalloc
/// hands freed pages back to the OS after a delay and the next allocation faults them in again,
/// zeroed by the kernel (`clear_page_rep` was 14 % of the 4,096-rank ring's profile, system
/// time 0.24 s; 0.06 s without purging). A replay's memory peaks near its end anyway.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// `mi_option_purge_delay` in mimalloc v3's `mi_option_e` (`include/mimalloc.h` of the
/// libmimalloc-sys version in Cargo.lock, whose Rust constants predate the option); its
/// default is 1000 (ms, `src/options.c`), checked by a test.
const MI_OPTION_PURGE_DELAY: libmimalloc_sys::mi_option_t = 15;

/// Never purge freed memory (see [`GLOBAL`]).
pub(crate) fn keep_freed_memory() {
    // SAFETY: sets a process-wide allocator option; mimalloc reads it when it purges.
    unsafe { libmimalloc_sys::mi_option_set(MI_OPTION_PURGE_DELAY, -1) }
}

/// Replays of this many ranks or more run with transparent huge pages (module doc).
pub(crate) const HUGE_PAGES_FROM_RANKS: usize = 4096;

/// Whether the process started with huge pages disabled (`PR_GET_THP_DISABLE` read before
/// [`HUGE_PAGES_OFF_BEFORE_MAIN`] set it): a parent's choice, which [`restore_huge_pages`]
/// gives back.
static INHERITED_THP_DISABLED: AtomicBool = AtomicBool::new(false);

/// Huge pages off before `main`, as the dynamic loader runs the executable's initialisers: the
/// Rust runtime allocates before `main` (its thread's information), and that first allocation
/// reserves mimalloc's arena and faults its first pages in, two huge pages' worth (4 MiB) if
/// nothing stopped them (the 16-rank ring peaked at 14.3 MB with the switch made in `main`,
/// 10.6 MB with it made here). The state it found is kept for [`restore_huge_pages`].
#[cfg(target_os = "linux")]
#[used]
#[link_section = ".init_array"]
static HUGE_PAGES_OFF_BEFORE_MAIN: extern "C" fn() = {
    extern "C" fn off() {
        INHERITED_THP_DISABLED.store(thp_disabled(), Ordering::Relaxed);
        set_thp_disabled(true);
    }
    off
};

/// Gives the process back the huge-page policy it started with: for a replay of
/// [`HUGE_PAGES_FROM_RANKS`] ranks or more, and, from `main`, for every command but
/// `simulate`. The flag is inherited across `fork` and `exec`, so a command that starts other
/// programs (`trace`, `validate` and `calibrate` run the traced MPI applications and
/// benchmarks) must not leave it set: the traced program would run with another memory policy
/// than it does untraced.
pub(crate) fn restore_huge_pages() {
    set_thp_disabled(INHERITED_THP_DISABLED.load(Ordering::Relaxed));
}

/// The huge-page policy for a replay of `ranks` ranks, set before it allocates its per-rank
/// state: the inherited one from [`HUGE_PAGES_FROM_RANKS`] ranks on, off below (module doc).
pub(crate) fn huge_pages_for_replay(ranks: usize) {
    if ranks >= HUGE_PAGES_FROM_RANKS {
        restore_huge_pages();
    }
}

/// Whether transparent huge pages are disabled for this process (`prctl`
/// `PR_GET_THP_DISABLE`); `false` where the call does not exist.
fn thp_disabled() -> bool {
    #[cfg(target_os = "linux")]
    // SAFETY: reads a process attribute.
    return unsafe { libc::prctl(libc::PR_GET_THP_DISABLE, 0, 0, 0, 0) } == 1;
    #[cfg(not(target_os = "linux"))]
    false
}

/// Disables (or allows) transparent huge pages for the rest of the process and the programs
/// it starts (`prctl` `PR_SET_THP_DISABLE`; pages already faulted in keep their size). A
/// kernel without the call (before Linux 3.15) or another system leaves the policy as it is.
fn set_thp_disabled(disabled: bool) {
    #[cfg(target_os = "linux")]
    // SAFETY: sets a process attribute; no memory is touched. The result is ignored on
    // purpose: the policy is a speed hint and the replay's results do not depend on it.
    unsafe {
        libc::prctl(
            libc::PR_SET_THP_DISABLE,
            libc::c_ulong::from(disabled),
            0 as libc::c_ulong,
            0 as libc::c_ulong,
            0 as libc::c_ulong,
        );
    }
    #[cfg(not(target_os = "linux"))]
    let _ = disabled;
}

#[cfg(test)]
mod tests {
    use super::MI_OPTION_PURGE_DELAY;

    /// The option number names the purge delay: mimalloc v3's `src/options.c` gives it the
    /// default 1000 (ms; the header's comment still says 10), which none of its neighbours has
    /// (14, a deprecated eager-commit delay, defaults to 1; 16, the NUMA node count, to 0), so
    /// an enum that moved would fail here.
    #[test]
    fn purge_delay_option_number() {
        // SAFETY: reads an allocator option.
        let default = unsafe { libmimalloc_sys::mi_option_get(MI_OPTION_PURGE_DELAY) };
        assert_eq!(default, 1000);
    }

    /// The initialiser ran before the tests (a test binary runs the crate's initialisers too):
    /// huge pages are off; `restore_huge_pages` gives back the state found before (here,
    /// whatever the test runner inherited) and `set_thp_disabled` sets the flag both ways.
    #[cfg(target_os = "linux")]
    #[test]
    fn huge_pages_are_off_and_restored() {
        use super::{restore_huge_pages, set_thp_disabled, thp_disabled, INHERITED_THP_DISABLED};
        use std::sync::atomic::Ordering;
        assert!(thp_disabled(), "off before main");
        restore_huge_pages();
        assert_eq!(
            thp_disabled(),
            INHERITED_THP_DISABLED.load(Ordering::Relaxed)
        );
        set_thp_disabled(false);
        assert!(!thp_disabled());
        set_thp_disabled(true);
        assert!(thp_disabled());
        // A replay below the threshold keeps them off, one at it gets the inherited policy
        // (one test, so that no other thread of the test binary flips the flag meanwhile).
        super::huge_pages_for_replay(super::HUGE_PAGES_FROM_RANKS - 1);
        assert!(thp_disabled());
        super::huge_pages_for_replay(super::HUGE_PAGES_FROM_RANKS);
        assert_eq!(
            thp_disabled(),
            INHERITED_THP_DISABLED.load(Ordering::Relaxed)
        );
        set_thp_disabled(true);
    }
}
