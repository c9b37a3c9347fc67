//! A replay that stops early frees every decoded event it did not take: `DecodeAhead`'s
//! batches hold their items without drop glue (`ManuallyDrop`, so that a taken batch is freed
//! without being read back) and must drop the untaken ones themselves. Checked with a global
//! allocator that counts the bytes live: after a first round (whatever the standard library
//! allocates once), a second round that takes a few events of each rank and drops the rest
//! must leave exactly as many bytes live as before it. Its own test binary, with one test, so
//! that no other test allocates meanwhile.

use std::alloc::{GlobalAlloc, Layout, System};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicIsize, Ordering};

use timeless_trace::{
    Action, ActionStream, DecodeAhead, Event, Rank, TraceError, TraceErrorKind, TraceSet,
};

struct Counting;

static LIVE_BYTES: AtomicIsize = AtomicIsize::new(0);

unsafe impl GlobalAlloc for Counting {
    unsafe fn alloc(&self, layout: Layout) -> *mut u8 {
        LIVE_BYTES.fetch_add(layout.size() as isize, Ordering::SeqCst);
        // SAFETY: forwarded as received.
        unsafe { System.alloc(layout) }
    }

    unsafe fn dealloc(&self, ptr: *mut u8, layout: Layout) {
        LIVE_BYTES.fetch_sub(layout.size() as isize, Ordering::SeqCst);
        // SAFETY: forwarded as received.
        unsafe { System.dealloc(ptr, layout) }
    }
}

#[global_allocator]
static ALLOCATOR: Counting = Counting;

/// Rank r: 1,000 `comm_def` events, each holding a list of 64 ranks (heap memory an untaken
/// event would leak); rank 3 fails after 10 events (a boxed error).
struct Lists;

struct ListStream {
    rank: Rank,
    i: u64,
    path: PathBuf,
}

impl ActionStream for ListStream {
    fn next_event(&mut self) -> Result<Option<Event>, TraceError> {
        if self.rank == 3 && self.i == 10 {
            return Err(TraceError::new(
                &self.path,
                self.i + 1,
                TraceErrorKind::BadRank("x".into()),
            ));
        }
        if self.i == 1000 {
            return Ok(None);
        }
        self.i += 1;
        Ok(Some(Event {
            action: Action::CommDef {
                id: self.i as u32,
                world_ranks: Box::new((0..64).collect()),
            },
            comm: 0,
            callsite: None,
            location: self.i,
        }))
    }

    fn origin(&self) -> &Path {
        &self.path
    }
}

impl TraceSet for Lists {
    fn open_stream(&self, rank: Rank, _: u32) -> Result<Box<dyn ActionStream>, TraceError> {
        Ok(Box::new(ListStream {
            rank,
            i: 0,
            path: PathBuf::from(format!("rank-{rank}.txt")),
        }))
    }

    fn ranks(&self) -> Option<usize> {
        None
    }
}

/// Opens 4 ranks through `DecodeAhead`, takes `take` events of each (or up to its error), and
/// drops everything; returns the number of events taken.
fn round(take: usize) -> usize {
    let ahead = DecodeAhead::new(&Lists, 4).expect("synthetic streams open");
    let mut streams: Vec<_> = (0..4)
        .map(|r| ahead.open_stream(r, 4).expect("each rank opens once"))
        .collect();
    let mut taken = 0;
    for s in &mut streams {
        for _ in 0..take {
            match s.next_event() {
                Ok(Some(_)) => taken += 1,
                Ok(None) | Err(_) => break,
            }
        }
    }
    drop(streams);
    drop(ahead);
    taken
}

#[test]
fn untaken_events_are_freed() {
    // The first round's events are all taken; the second stops after 300 events of a rank,
    // inside a batch, with later batches decoded and queued.
    assert_eq!(round(2000), 3 * 1000 + 10);
    let before = LIVE_BYTES.load(Ordering::SeqCst);
    assert_eq!(round(300), 3 * 300 + 10);
    assert_eq!(
        LIVE_BYTES.load(Ordering::SeqCst),
        before,
        "bytes live after the round"
    );
}
