//! The event heap's operation mix, timed on the kernel's `IndexedHeap` and on
//! `priority_queue::PriorityQueue` (the design card's crate), alternately.
//!
//!     cargo run --release -p timeless-kernel --example heap_bench [ACTIVE] [EVENTS]
//!
//! The mix follows a replay's: ACTIVE activities are scheduled (default 4096); each event pops
//! the earliest, schedules a new one (a flow or an execution starting) and moves two others (a
//! re-solve changing their dates), with equal dates popping in scheduling order (a sequence
//! number). Both queues must pop the same ids in the same order (a checksum is compared). Prints
//! each run's time and the medians of 5 alternated runs.

use std::cmp::Reverse;
use std::time::Instant;

use ordered_float::OrderedFloat;
use priority_queue::PriorityQueue;
use timeless_kernel::heap::IndexedHeap;

/// xorshift64*: a deterministic stream of dates.
struct Rng(u64);

impl Rng {
    fn next(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A delay in (0, 1] s on a grid of 2^-10 s, so that equal dates occur.
    fn delay(&mut self) -> f64 {
        ((self.next() >> 54) + 1) as f64 / 1024.0
    }
}

trait EventQueue {
    fn set(&mut self, id: u32, date: f64);
    fn pop(&mut self) -> Option<(f64, u32)>;
}

impl EventQueue for IndexedHeap {
    fn set(&mut self, id: u32, date: f64) {
        IndexedHeap::set(self, id, date)
    }
    fn pop(&mut self) -> Option<(f64, u32)> {
        IndexedHeap::pop(self)
    }
}

/// `PriorityQueue` keyed by (date, sequence number), reversed into a min-queue.
#[derive(Default)]
struct Pq {
    q: PriorityQueue<u32, Reverse<(OrderedFloat<f64>, u64)>>,
    seq: u64,
}

impl EventQueue for Pq {
    fn set(&mut self, id: u32, date: f64) {
        if let Some(Reverse((d, _))) = self.q.get_priority(&id) {
            if d.0 == date {
                return;
            }
        }
        self.seq += 1;
        self.q.push(id, Reverse((OrderedFloat(date), self.seq)));
    }
    fn pop(&mut self) -> Option<(f64, u32)> {
        self.q.pop().map(|(id, Reverse((d, _)))| (d.0, id))
    }
}

/// Runs the mix; returns (seconds, checksum of the popped ids).
fn run(q: &mut dyn EventQueue, active: u32, events: u64) -> (f64, u64) {
    let mut rng = Rng(0x9e37_79b9_7f4a_7c15);
    let t0 = Instant::now();
    for id in 0..active {
        q.set(id, rng.delay());
    }
    let mut sum = 0u64;
    for k in 0..events {
        let (now, id) = q.pop().expect("never empty");
        sum = sum.wrapping_mul(31).wrapping_add(u64::from(id));
        let new_id = ((u64::from(active) + k) % u64::from(4 * active)) as u32;
        q.set(new_id, now + rng.delay());
        for _ in 0..2 {
            let other = (rng.next() % u64::from(4 * active)) as u32;
            q.set(other, now + rng.delay());
        }
    }
    (t0.elapsed().as_secs_f64(), sum)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() {
    let args: Vec<u64> = std::env::args()
        .skip(1)
        .filter_map(|a| a.parse().ok())
        .collect();
    let active = args.first().copied().unwrap_or(4096) as u32;
    let events = args.get(1).copied().unwrap_or(2_000_000);
    let (mut ih, mut pq) = (Vec::new(), Vec::new());
    for round in 0..5 {
        let (t, a) = run(&mut IndexedHeap::new(), active, events);
        ih.push(t);
        let (u, b) = run(&mut Pq::default(), active, events);
        pq.push(u);
        assert_eq!(a, b, "both queues pop the same ids in the same order");
        println!("round {round}: IndexedHeap {t:.3} s, PriorityQueue {u:.3} s");
    }
    let (a, b) = (median(ih), median(pq));
    println!(
        "{active} active, {events} events: median IndexedHeap {a:.3} s ({:.0} ns/event), \
         PriorityQueue {b:.3} s ({:.0} ns/event), ratio {:.2}",
        a * 1e9 / events as f64,
        b * 1e9 / events as f64,
        b / a
    );
}
