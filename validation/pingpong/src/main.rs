//! `timeless-pingpong`: the measurements `timeless calibrate network` fits (seed 003 §5 uses
//! SKaMPI's `Pingpong_Send_Recv`; SimGrid's platform-calibration adds the per-call costs of
//! `MPI_Send`, `MPI_Isend` and `MPI_Recv`, reference §10).
//!
//! Run with 2 ranks: `mpirun -np 2 timeless-pingpong [--reps N] [--warmup N] [--max-size BYTES]
//! [--late-us US] [--yield] [--out FILE]`, or with `--empty` (any rank count) only `MPI_Init` and
//! `MPI_Finalize`, the launch baseline of `timeless validate`. With more than 2 ranks, ranks 0
//! and 1 measure while the others wait in `MPI_Barrier` (polling, as the blocked ranks of a
//! folded run do: `timeless calibrate network --fold K` runs K ranks per core this way).
//! Rank 0 writes CSV `op,size_bytes,time_secs`, one row per timed
//! repetition (the calibration takes medians):
//! * `pingpong`: round trip `MPI_Send` + `MPI_Recv` against `MPI_Recv` + `MPI_Send`, on rank 0,
//!   sent from one buffer and received into another (as OSU's and IMB's ping-pongs);
//! * `exchange`: both ranks post `MPI_Irecv` and `MPI_Isend` of the same size to each other and
//!   wait for both (`MPI_Sendrecv`'s pattern), every measuring rank at once after a barrier:
//!   concurrent flows, two per pair, whose time per exchange (the longest of the measuring
//!   ranks' own times) tells how they share the bandwidth;
//! * `exchange_ranks`: one row whose size is the number of ranks that exchanged at once (the
//!   number of concurrent flows; 2 unless `--busy-pairs`);
//! * `send`: `MPI_Send` while rank 1 posts its receive `late` later (rendezvous sizes wait for
//!   the receiver, which reveals the eager/rendezvous switch);
//! * `send_burst`: mean cost of the next 7 back-to-back `MPI_Send` calls of that burst (the
//!   steady-state send overhead `smpi/os`, with warm caches as in the ping-pong loop);
//! * `isend`: the `MPI_Isend` call (`smpi/ois`);
//! * `recv`: `MPI_Recv` on rank 1 of a message sent `late` earlier;
//! * `recv_burst`: mean cost of the next 7 `MPI_Recv` calls of already-arrived messages
//!   (`smpi/or` for eager sizes);
//! * `late`: one row with the delay used (seconds);
//! * `cold_allreduce`: an `MPI_Allreduce` of one double right after each measuring rank
//!   streamed through `size_bytes` of its own memory (8 KiB: warm caches; 32 MiB: more than
//!   the caches hold), the time of the rank that arrived last (the smaller of the two ranks'
//!   times), 200 repetitions each: what a call costs when the MPI library's shared state has
//!   left the core's caches (`timeless/cold-call-secs`; `--cold-only` measures only this).
//!
//! `--yield`: the late rank's busy wait calls `sched_yield` (for folded runs, where the rank
//! it waits for may need its core).
//!
//! Sizes: 1 B to `--max-size` (16 MiB) at powers of two and their 1.5× midpoints, plus sizes
//! 64 B either side of the usual eager/rendezvous switches (4, 8, 16, 32, 64, 128 KiB). Each size
//! gets `--warmup` untimed repetitions before each batch (after 200 untimed 1-byte round
//! trips); the sweep over sizes is repeated 5 times, each doing a fifth of the repetitions.
//! Large sizes get fewer repetitions (at least 10) so that no size takes much more than
//! `--reps` × 1 MiB of traffic.

use std::io::Write;

use mpi::traits::*;

struct Options {
    reps: usize,
    warmup: usize,
    max_size_bytes: usize,
    late_secs: f64,
    out: Option<String>,
    empty: bool,
    yield_while_late: bool,
    busy_pairs: bool,
    cold_only: bool,
}

fn usage(msg: &str) -> ! {
    eprintln!("timeless-pingpong: {msg}\nusage: mpirun -np 2 timeless-pingpong [--reps N] [--warmup N] [--max-size BYTES] [--late-us US] [--yield] [--busy-pairs] [--cold-only] [--out FILE] | --empty");
    std::process::exit(2);
}

fn parse_args() -> Options {
    let mut o = Options {
        reps: 30,
        warmup: 2,
        max_size_bytes: 16 << 20,
        late_secs: 500e-6,
        out: None,
        empty: false,
        yield_while_late: false,
        busy_pairs: false,
        cold_only: false,
    };
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        let mut value = |name: &str| {
            args.next()
                .unwrap_or_else(|| usage(&format!("{name} needs a value")))
        };
        let num = |name: &str, v: String| -> f64 {
            v.parse::<f64>()
                .ok()
                .filter(|x| x.is_finite() && *x >= 0.0)
                .unwrap_or_else(|| usage(&format!("{name}: '{v}' is not a number >= 0")))
        };
        match a.as_str() {
            "--reps" => o.reps = (num("--reps", value("--reps")) as usize).max(1),
            "--warmup" => o.warmup = num("--warmup", value("--warmup")) as usize,
            "--max-size" => o.max_size_bytes = num("--max-size", value("--max-size")) as usize,
            "--late-us" => o.late_secs = num("--late-us", value("--late-us")) * 1e-6,
            "--out" => o.out = Some(value("--out")),
            "--empty" => o.empty = true,
            "--yield" => o.yield_while_late = true,
            "--busy-pairs" => o.busy_pairs = true,
            "--cold-only" => o.cold_only = true,
            "-h" | "--help" => usage("help"),
            other => usage(&format!("unknown argument '{other}'")),
        }
    }
    o
}

/// The message sizes, sorted and distinct (module docs).
fn sizes(max_bytes: usize) -> Vec<usize> {
    let mut v = Vec::new();
    let mut p = 1usize;
    while p <= max_bytes {
        v.push(p);
        if p >= 2 && p + p / 2 <= max_bytes {
            v.push(p + p / 2);
        }
        p *= 2;
    }
    for k in [4usize, 8, 16, 32, 64, 128] {
        for s in [k * 1024 - 64, k * 1024 + 64] {
            if s <= max_bytes {
                v.push(s);
            }
        }
    }
    v.sort_unstable();
    v.dedup();
    v
}

/// Sweeps over all sizes; each does 1/ROUNDS of every size's repetitions.
const ROUNDS: usize = 5;

/// Calls per burst in the per-call cost tests.
const BURST: usize = 8;

/// Bytes each rank streams through before a `cold_allreduce`: warm, then cold.
const COLD_BYTES: [usize; 2] = [8 << 10, 32 << 20];

/// Timed repetitions of each `cold_allreduce` size.
const COLD_REPS: usize = 200;

/// One pass over `a` that reads and writes every element (a streaming compute burst).
fn stream(a: &mut [f64]) {
    for v in a.iter_mut() {
        *v = *v * 1.000_000_1 + 1.0;
    }
}

/// The `cold_allreduce` rows (module docs): per size of [`COLD_BYTES`], [`COLD_REPS`] times
/// (after `warmup` untimed ones) stream, barrier, stream again, then one allreduce of one
/// double on `pair`; returns (size, time of the last to arrive) on rank 0, nothing on rank 1.
fn cold_allreduce<C: Communicator>(pair: &C, warmup: usize) -> Vec<(usize, f64)> {
    let rank = pair.rank();
    let peer = pair.process_at_rank(1 - rank);
    let mut rows = Vec::new();
    let mut sink = 0.0;
    for &bytes in &COLD_BYTES {
        let mut a: Vec<f64> = (0..bytes / 8).map(|i| i as f64).collect();
        let mut took = Vec::with_capacity(COLD_REPS);
        for it in 0..warmup + COLD_REPS {
            stream(&mut a);
            pair.barrier();
            stream(&mut a);
            let x = a[it % a.len()];
            let mut y = 0.0f64;
            let t0 = mpi::time();
            pair.all_reduce_into(&x, &mut y, mpi::collective::SystemOperation::sum());
            let dt = mpi::time() - t0;
            if it >= warmup {
                took.push(dt);
            }
            sink += y;
        }
        if rank == 1 {
            peer.send(&took[..]);
        } else {
            let mut other = vec![0f64; took.len()];
            peer.receive_into(&mut other[..]);
            rows.extend(took.iter().zip(&other).map(|(a, b)| (bytes, a.min(*b))));
        }
    }
    std::hint::black_box(sink);
    rows
}

fn spin_for(secs: f64, yield_core: bool) {
    let t0 = mpi::time();
    while mpi::time() - t0 < secs {
        if yield_core {
            std::thread::yield_now();
        } else {
            std::hint::spin_loop();
        }
    }
}

fn main() {
    let opts = parse_args();
    let universe = mpi::initialize().unwrap_or_else(|| usage("MPI is already initialised"));
    let world = universe.world();
    if opts.empty {
        // MPI_Init and MPI_Finalize only: the launch cost `timeless validate` subtracts.
        return;
    }
    let world_rank = world.rank();
    let ranks = world.size();
    if ranks < 2 {
        eprintln!("timeless-pingpong: needs at least 2 ranks (got {ranks}); run with mpirun -np 2");
        std::process::exit(2);
    }
    // Pairs (0, 1), (2, 3), ... synchronise on their own communicator. Ranks 0 and 1 measure;
    // with --busy-pairs the other pairs run the same benchmark at the same time (unrecorded),
    // otherwise they (and an odd last rank) wait in the final barrier.
    let active = world_rank < 2 || (opts.busy_pairs && world_rank < ranks - ranks % 2);
    let pair = world
        .split_by_color(mpi::topology::Color::with_value(if active {
            world_rank / 2
        } else {
            ranks
        }))
        .expect("every rank has a color");
    // The ranks that measure, together: every exchange starts on all of them at once.
    let measuring = world
        .split_by_color(mpi::topology::Color::with_value(i32::from(!active)))
        .expect("every rank has a color");
    if !active {
        world.barrier();
        return;
    }
    let rank = pair.rank();
    let records = world_rank == 0;
    let peer = pair.process_at_rank(1 - rank);
    let sizes = sizes(opts.max_size_bytes);
    let mut buf = vec![0u8; opts.max_size_bytes.max(1)];
    let mut incoming = vec![0u8; opts.max_size_bytes.max(1)];
    let mut rows: Vec<(&str, usize, f64)> = vec![
        ("late", 0, opts.late_secs),
        ("exchange_ranks", measuring.size() as usize, 0.0),
    ];
    // Global warm-up: Open MPI's shared-memory transport sets up its per-peer fast boxes only
    // after a number of sends (btl_vader_fbox_threshold, 16), so the first size would be slow.
    for _ in 0..200 {
        if rank == 0 {
            peer.send(&buf[..1]);
            peer.receive_into(&mut buf[..1]);
        } else {
            peer.receive_into(&mut buf[..1]);
            peer.send(&buf[..1]);
        }
    }
    // The sweep over sizes is repeated ROUNDS times, each round doing a share of the
    // repetitions: a burst of load from other processes then spreads over many sizes instead of
    // spoiling every sample of one size.
    let steps = if opts.cold_only {
        0
    } else {
        ROUNDS * sizes.len()
    };
    for (step, (round, &size)) in (0..ROUNDS)
        .flat_map(|r| sizes.iter().map(move |s| (r, s)))
        .take(steps)
        .enumerate()
    {
        let msg = &mut buf[..size];
        let total = opts.reps.min(((opts.reps << 20) / size.max(1)).max(10));
        let reps = total / ROUNDS + usize::from(round < total % ROUNDS);
        // Every measuring pair starts the size together: with --busy-pairs, pairs out of step
        // would measure small sizes against another pair's multi-MiB transfers.
        measuring.barrier();
        // Ping-pong: sent from `msg`, received into `incoming`, as the OSU and Intel MPI
        // benchmarks do (separate send and receive buffers) and as applications exchange data.
        // Receiving into the buffer just sent (echoing the data back) made every copy write
        // lines the peer's core had just read or written: at 32 KiB - 1 MiB the one-way time
        // doubled (vader's single copy, CMA) and an exchange took half a one-way message
        // (README, "Concurrent flows").
        for r in 0..opts.warmup + reps {
            let t0 = mpi::time();
            if rank == 0 {
                peer.send(&msg[..]);
                peer.receive_into(&mut incoming[..size]);
                if r >= opts.warmup {
                    rows.push(("pingpong", size, mpi::time() - t0));
                }
            } else {
                peer.receive_into(&mut incoming[..size]);
                peer.send(&msg[..]);
            }
        }
        // Exchange: both directions at once, every measuring rank at the same time (after a
        // barrier). One exchange lasts the longest of the measuring ranks' own times (from its
        // barrier exit to both completions), as a replay's lasts until its last rank is done.
        // Rank 0's own time was bimodal in folded runs: leaving the barrier last, it found its
        // partner's message already there (4 ranks per core, 96 B: 0.3 us in 25 of 30
        // repetitions, 9-10 us in the others).
        let root = measuring.process_at_rank(0);
        let longest_of_all = mpi::collective::SystemOperation::max();
        for r in 0..opts.warmup + reps {
            measuring.barrier();
            let t0 = mpi::time();
            mpi::request::scope(|scope| {
                let recv = peer.immediate_receive_into(scope, &mut incoming[..size]);
                let send = peer.immediate_send(scope, &msg[..]);
                recv.wait();
                send.wait();
            });
            let own = mpi::time() - t0;
            if measuring.rank() == 0 {
                let mut longest = 0.0f64;
                root.reduce_into_root(&own, &mut longest, longest_of_all);
                if r >= opts.warmup {
                    rows.push(("exchange", size, longest));
                }
            } else {
                root.reduce_into(&own, longest_of_all);
            }
        }
        // MPI_Send with a late receiver: the first call alone (does it wait?), then the mean of
        // the next BURST - 1 back-to-back calls (the steady-state per-call cost).
        for r in 0..opts.warmup + reps {
            pair.barrier();
            if rank == 0 {
                let t0 = mpi::time();
                peer.send(&msg[..]);
                let t1 = mpi::time();
                for _ in 1..BURST {
                    peer.send(&msg[..]);
                }
                let t2 = mpi::time();
                if r >= opts.warmup {
                    rows.push(("send", size, t1 - t0));
                    rows.push(("send_burst", size, (t2 - t1) / (BURST - 1) as f64));
                }
            } else {
                spin_for(opts.late_secs, opts.yield_while_late);
                for _ in 0..BURST {
                    peer.receive_into(&mut msg[..]);
                }
            }
        }
        // MPI_Isend call cost.
        for r in 0..opts.warmup + reps {
            pair.barrier();
            if rank == 0 {
                mpi::request::scope(|scope| {
                    let t0 = mpi::time();
                    let req = peer.immediate_send(scope, &msg[..]);
                    let dt = mpi::time() - t0;
                    req.wait();
                    if r >= opts.warmup {
                        rows.push(("isend", size, dt));
                    }
                });
            } else {
                peer.receive_into(&mut msg[..]);
            }
        }
        // MPI_Recv of already-arrived messages, timed on rank 1: the first call alone, then the
        // mean of the next BURST - 1 calls.
        let mut recv_secs = vec![0f64; 2 * reps];
        for r in 0..opts.warmup + reps {
            pair.barrier();
            if rank == 0 {
                for _ in 0..BURST {
                    peer.send(&msg[..]);
                }
            } else {
                spin_for(opts.late_secs, opts.yield_while_late);
                let t0 = mpi::time();
                peer.receive_into(&mut msg[..]);
                let t1 = mpi::time();
                for _ in 1..BURST {
                    peer.receive_into(&mut msg[..]);
                }
                let t2 = mpi::time();
                if r >= opts.warmup {
                    recv_secs[2 * (r - opts.warmup)] = t1 - t0;
                    recv_secs[2 * (r - opts.warmup) + 1] = (t2 - t1) / (BURST - 1) as f64;
                }
            }
        }
        if rank == 1 {
            peer.send(&recv_secs[..]);
        } else {
            peer.receive_into(&mut recv_secs[..]);
            for p in recv_secs.chunks(2) {
                rows.push(("recv", size, p[0]));
                rows.push(("recv_burst", size, p[1]));
            }
            if records {
                eprint!(
                    "\rtimeless-pingpong: {}/{steps} steps (round {}, {size} B)    ",
                    step + 1,
                    round + 1
                );
            }
        }
    }
    for (bytes, secs) in cold_allreduce(&pair, opts.warmup.max(2)) {
        rows.push(("cold_allreduce", bytes, secs));
    }
    world.barrier();
    if records {
        eprintln!();
        let mut text = String::from("op,size_bytes,time_secs\n");
        for (op, size, t) in &rows {
            text.push_str(&format!("{op},{size},{t:e}\n"));
        }
        let written = match &opts.out {
            Some(path) => std::fs::write(path, text),
            None => std::io::stdout().lock().write_all(text.as_bytes()),
        };
        if let Err(e) = written {
            eprintln!("timeless-pingpong: cannot write the CSV: {e}");
            std::process::exit(1);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::sizes;

    #[test]
    fn sizes_cover_the_range_and_the_switches() {
        let s = sizes(16 << 20);
        assert_eq!(s[..6], [1, 2, 3, 4, 6, 8]);
        assert_eq!(*s.last().unwrap(), 16 << 20);
        assert!(s.contains(&(4096 - 64)) && s.contains(&(65536 + 64)));
        assert!(s.windows(2).all(|w| w[0] < w[1]));
    }
}
