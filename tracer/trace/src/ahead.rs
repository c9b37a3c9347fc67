//! Decoding ahead: every rank's stream is read and parsed on a background thread while the replay
//! runs, so parsing leaves the replay's critical path.
//!
//! [`DecodeAhead::new`] opens the streams of an inner [`TraceSet`] and moves them to one decoder
//! thread. For each rank the thread keeps up to [`DEPTH`] *batches* of decoded events ready (a
//! batch is a `Vec` of up to `batch` results, `batch` shrinking with the rank count so that all
//! queues together hold about [`BUDGET_EVENTS`] events whatever the trace length). The replay
//! takes a whole batch at a time from a rank's queue under one lock; a rank whose queue is empty
//! is named to the thread as *wanted*, so it is decoded next, and the replay waits for it.
//!
//! Each rank's events come out in trace order, errors included (an error ends its stream, as it
//! would end a direct read), so a replay through `DecodeAhead` is identical to a direct one.
//!
//! Example: 64 ranks give batches of 256 events (the maximum), at most 2 per rank: 32 k events in
//! flight; 1024 ranks batches of 128, 256 k events; 65,536 ranks batches of 16 (the minimum),
//! 2 M events. The decoder fills every queue once at start-up, then refills whichever the replay
//! drains: ranks with room for a batch wait in a FIFO work list, so picking one is O(1) at any
//! rank count, and each side signals the other only when it sleeps, once per sleep (a wake-up is a
//! system call).
//! The sizes were chosen by alternated runs (medians of 3, 2 cores): against 2^20 events in
//! batches of 16..1024, the 1024-rank stencil went 0.76 -> 0.65 s and 4096 ranks 2.04 -> 1.73 s.
//!
//! # Start-up
//! A replay needs the first events of *every* rank before it needs the next ones of any: at
//! time 0 each rank starts, computes, then posts its first messages. Full first batches made
//! the decoder go depth-first (a whole batch of rank 0, then of rank 1, ...) while the replay
//! went breadth-first, so the replay caught up with the decoder at every rank and waited for
//! it: at 4096 ranks (batches of 32) about 4,000-8,000 waits, 0.24-0.46 s of a 1.3-3.7 s run,
//! almost all in its first half second. A rank's first batch therefore holds [`FIRST_BATCH`]
//! events and each next one twice as many up to the full size (4, 8, 16, 32 at 4096 ranks;
//! 4 .. 256 in 7 batches at 64): the first pass over all ranks is 8 times shorter, and the
//! replay's waits fell to 0.05-0.13 s (`validation/bench`'s ring, stencil and allreduce at
//! 4096 ranks, the replay's time in `Condvar::wait` measured by an instrumented build; a first
//! batch of 2 or 8 did no better). The order of each rank's events is unchanged.

use std::collections::VecDeque;
use std::mem::ManuallyDrop;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use crate::action::Rank;
use crate::error::TraceError;
use crate::stream::{ActionStream, Event, TraceSet};

/// Events [`ActionStream::prefetch_next`] asks the cache for.
const PREFETCH_EVENTS: usize = 3;

/// Batches kept ready per rank.
pub const DEPTH: usize = 2;
/// A rank's first batch: its next ones double up to the full size (module doc, "Start-up").
pub const FIRST_BATCH: usize = 4;
/// Events kept ready over all ranks, roughly (batches hold at least 16 and at most 256).
pub const BUDGET_EVENTS: usize = 1 << 18;

/// A decoded event or the error that ended its stream, boxed: the error (80 bytes) would make
/// every queued item larger than the event (56 bytes, one cache line). Stored as the very type
/// [`AheadStream::next_event_boxed`] returns (never `Ok(None)`), so that handing an event out
/// is one copy of the whole item: converting `Result<Event, _>` rewrote its tag and copied the
/// fields one by one, and the replay's wider loads of the copy could not be forwarded from
/// those stores (a stall per event).
type Item = Result<Option<Event>, Box<TraceError>>;

const _: () = assert!(std::mem::size_of::<Item>() == 56);

/// A batch's items, taken in order: `slots[next..]` are not taken yet, a taken slot holds
/// `Ok(None)`. The slots are `ManuallyDrop` and [`Items`]' drop drops the untaken ones only, so
/// that freeing a batch whose items were all taken reads none of them back (a `Vec<Item>`'s
/// drop reads every slot's tag: at thousands of ranks the batch has left the cache by then,
/// a miss per item). Taking an item stays an index check and one copy (see [`Item`]).
struct Items {
    slots: Vec<ManuallyDrop<Item>>,
    next: usize,
}

impl Items {
    fn with_capacity(n: usize) -> Self {
        Items {
            slots: Vec::with_capacity(n),
            next: 0,
        }
    }

    fn len(&self) -> usize {
        self.slots.len()
    }

    fn push(&mut self, item: Item) {
        self.slots.push(ManuallyDrop::new(item));
    }

    /// The items not taken yet.
    fn rest(&self) -> &[ManuallyDrop<Item>] {
        &self.slots[self.next..]
    }
}

impl Drop for Items {
    fn drop(&mut self) {
        for slot in &mut self.slots[self.next..] {
            drop(take_slot(slot));
        }
    }
}

/// Moves slot's item out whole (see [`Item`]), leaving `Ok(None)`, which holds nothing.
#[inline(always)]
fn take_slot(slot: &mut ManuallyDrop<Item>) -> Item {
    ManuallyDrop::into_inner(std::mem::replace(slot, ManuallyDrop::new(Ok(None))))
}

struct Batch {
    items: Items,
    /// The stream's [`ActionStream::foreign_lines`] after the batch.
    foreign_lines: u64,
    /// The stream ended (or failed) with this batch.
    last: bool,
}

#[derive(Default)]
struct Queue {
    ready: VecDeque<Batch>,
    finished: bool,
    /// In `State::needy`.
    needy: bool,
}

struct State {
    queues: Vec<Queue>,
    /// Ranks with room for a batch, in the order they got it (each once): the decoder's work
    /// list, so that picking a rank costs O(1) whatever the rank count.
    needy: VecDeque<u32>,
    /// Ranks whose stream has not ended.
    unfinished: usize,
    /// A rank the replay waits for.
    wanted: Option<Rank>,
    /// The replay dropped its streams: the decoder stops.
    closed: bool,
    /// The decoder thread ended before every stream did (it panicked).
    decoder_gone: bool,
    /// The decoder waits on `decoder` / the replay waits on `replay`: only then is a
    /// notification sent (a futex wake is a system call), and only once per wait: the side
    /// that notifies clears the flag under the lock, and the woken side, which re-checks its
    /// condition in a loop, sets it again if it waits again. (Read without clearing it, the
    /// flag stayed set from the notification until the woken thread ran, and the replay of the
    /// 16-rank ring of `validation/bench` sent 3,100-3,400 wake-ups for the decoder's 250-280
    /// waits; cleared, 260.)
    decoder_waiting: bool,
    replay_waiting: bool,
}

struct Shared {
    state: Mutex<State>,
    /// Signalled when a batch is taken or a rank is wanted.
    decoder: Condvar,
    /// Signalled when a batch is ready.
    replay: Condvar,
}

impl Shared {
    fn lock(&self) -> MutexGuard<'_, State> {
        // A panic on the decoder thread leaves the data consistent (queues of whole batches).
        self.state.lock().unwrap_or_else(|e| e.into_inner())
    }
}

/// A [`TraceSet`] whose streams are decoded ahead on a background thread.
pub struct DecodeAhead {
    shared: Arc<Shared>,
    origins: Vec<PathBuf>,
    nranks: u32,
    thread: Option<JoinHandle<()>>,
}

impl DecodeAhead {
    /// Opens the `nranks` streams of `inner` and starts decoding them.
    ///
    /// # Errors
    /// A stream cannot be opened (the first such error, as a direct open would report it).
    pub fn new(inner: &dyn TraceSet, nranks: u32) -> Result<Self, TraceError> {
        let mut streams = Vec::with_capacity(nranks as usize);
        let mut origins = Vec::with_capacity(nranks as usize);
        for r in 0..nranks {
            let s = inner.open_stream(r, nranks)?;
            origins.push(s.origin().to_path_buf());
            streams.push(s);
        }
        let batch = (BUDGET_EVENTS / (DEPTH * nranks.max(1) as usize)).clamp(16, 256);
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                queues: (0..nranks)
                    .map(|_| Queue {
                        needy: true,
                        ..Queue::default()
                    })
                    .collect(),
                needy: (0..nranks).collect(),
                unfinished: nranks as usize,
                wanted: None,
                closed: false,
                decoder_gone: false,
                decoder_waiting: false,
                replay_waiting: false,
            }),
            decoder: Condvar::new(),
            replay: Condvar::new(),
        });
        let s = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("timeless-decode".into())
            .spawn(move || decode(&s, streams, batch))
            .map_err(|e| {
                TraceError::new(
                    origins.first().cloned().unwrap_or_default(),
                    0,
                    crate::error::TraceErrorKind::Io(e),
                )
            })?;
        Ok(DecodeAhead {
            shared,
            origins,
            nranks,
            thread: Some(thread),
        })
    }
}

impl Drop for DecodeAhead {
    fn drop(&mut self) {
        self.shared.lock().closed = true;
        self.shared.decoder.notify_all();
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// The decoder thread: refills the queues, the wanted rank first, until every stream ended or
/// the replay is gone.
fn decode(shared: &Shared, streams: Vec<Box<dyn ActionStream>>, batch: usize) {
    let mut streams: Vec<Option<Box<dyn ActionStream>>> = streams.into_iter().map(Some).collect();
    // Each rank's next batch size: FIRST_BATCH, doubling up to `batch` (module doc, "Start-up").
    let mut next_size: Vec<usize> = vec![FIRST_BATCH.min(batch); streams.len()];
    /// Tells a waiting replay if this thread unwinds.
    struct Gone<'a>(&'a Shared);
    impl Drop for Gone<'_> {
        fn drop(&mut self) {
            if std::thread::panicking() {
                self.0.lock().decoder_gone = true;
                self.0.replay.notify_all();
            }
        }
    }
    let _gone = Gone(shared);
    loop {
        let rank = {
            let mut st = shared.lock();
            loop {
                if st.closed {
                    return;
                }
                let needs = |q: &Queue| !q.finished && q.ready.len() < DEPTH;
                let wanted = st.wanted.take().map(|r| r as usize);
                let mut pick = wanted.filter(|&r| needs(&st.queues[r]));
                while pick.is_none() {
                    let Some(r) = st.needy.pop_front() else { break };
                    let q = &mut st.queues[r as usize];
                    q.needy = false;
                    if needs(q) {
                        pick = Some(r as usize);
                    }
                }
                match pick {
                    Some(r) => break r,
                    None if st.unfinished == 0 => return,
                    None => {
                        st.decoder_waiting = true;
                        st = shared.decoder.wait(st).unwrap_or_else(|e| e.into_inner());
                        st.decoder_waiting = false;
                    }
                }
            }
        };
        let Some(s) = streams[rank].as_mut() else {
            continue; // not reached: a finished rank is never picked
        };
        let size = next_size[rank];
        next_size[rank] = (size * 2).min(batch);
        let mut items = Items::with_capacity(size);
        let mut last = false;
        while items.len() < size {
            match s.next_event() {
                Ok(Some(e)) => items.push(Ok(Some(e))),
                Ok(None) => {
                    last = true;
                    break;
                }
                Err(e) => {
                    items.push(Err(Box::new(e)));
                    last = true;
                    break;
                }
            }
        }
        let foreign_lines = s.foreign_lines();
        if last {
            // Closed here, on this thread, as soon as it ends (not all at the replay's end).
            streams[rank] = None;
        }
        let mut st = shared.lock();
        let q = &mut st.queues[rank];
        q.finished = last;
        q.ready.push_back(Batch {
            items,
            foreign_lines,
            last,
        });
        let requeue = !last && q.ready.len() < DEPTH && !q.needy;
        if requeue {
            q.needy = true;
            st.needy.push_back(rank as u32);
        }
        if last {
            st.unfinished -= 1;
        }
        let wake = std::mem::take(&mut st.replay_waiting);
        drop(st);
        if wake {
            shared.replay.notify_all();
        }
    }
}

impl TraceSet for DecodeAhead {
    /// Rank `rank`'s decoded stream. Each rank can be opened once.
    fn open_stream(&self, rank: Rank, nranks: u32) -> Result<Box<dyn ActionStream>, TraceError> {
        debug_assert_eq!(
            nranks, self.nranks,
            "opened with the rank count it was built for"
        );
        Ok(Box::new(AheadStream {
            shared: Arc::clone(&self.shared),
            rank,
            origin: self.origins[rank as usize].clone(),
            items: Items::with_capacity(0),
            foreign_lines: 0,
            ended: false,
        }))
    }

    fn ranks(&self) -> Option<usize> {
        Some(self.nranks as usize)
    }
}

/// One rank's events, taken a batch at a time from the decoder.
struct AheadStream {
    shared: Arc<Shared>,
    rank: Rank,
    origin: PathBuf,
    /// The current batch.
    items: Items,
    foreign_lines: u64,
    ended: bool,
}

impl AheadStream {
    /// Takes the rank's next decoded batch, waiting for the decoder if it has none ready
    /// (out of line: once per batch, not per event).
    #[inline(never)]
    fn take_batch(&mut self) -> Result<(), Box<TraceError>> {
        let mut st = self.shared.lock();
        loop {
            if let Some(b) = st.queues[self.rank as usize].ready.pop_front() {
                let q = &mut st.queues[self.rank as usize];
                if !q.finished && !q.needy {
                    q.needy = true;
                    st.needy.push_back(self.rank);
                }
                let wake = std::mem::take(&mut st.decoder_waiting);
                drop(st);
                if wake {
                    self.shared.decoder.notify_one();
                }
                self.items = b.items;
                self.foreign_lines = b.foreign_lines;
                self.ended = b.last;
                return Ok(());
            }
            if st.decoder_gone {
                self.ended = true;
                return Err(Box::new(TraceError::new(
                    &self.origin,
                    0,
                    crate::error::TraceErrorKind::Io(std::io::Error::other(
                        "the trace decoder thread stopped",
                    )),
                )));
            }
            st.wanted = Some(self.rank);
            if std::mem::take(&mut st.decoder_waiting) {
                self.shared.decoder.notify_one();
            }
            st.replay_waiting = true;
            st = self
                .shared
                .replay
                .wait(st)
                .unwrap_or_else(|e| e.into_inner());
            st.replay_waiting = false;
        }
    }
}

impl ActionStream for AheadStream {
    fn next_event(&mut self) -> Result<Option<Event>, TraceError> {
        self.next_event_boxed().map_err(|e| *e)
    }

    /// The decoded items hold their errors boxed already.
    fn next_event_boxed(&mut self) -> Result<Option<Event>, Box<TraceError>> {
        loop {
            let items = &mut self.items;
            if let Some(slot) = items.slots.get_mut(items.next) {
                items.next += 1;
                return take_slot(slot);
            }
            if self.ended {
                return Ok(None);
            }
            self.take_batch()?;
        }
    }

    fn origin(&self) -> &Path {
        &self.origin
    }

    fn foreign_lines(&self) -> u64 {
        self.foreign_lines
    }

    fn prefetch_next(&self) {
        // The next events a rank reads in one run (a wake-up typically reads two or three:
        // compute, send, recv), each line they span.
        for item in self.items.rest().iter().take(PREFETCH_EVENTS) {
            let p = item as *const ManuallyDrop<Item> as *const u8;
            let size = std::mem::size_of::<Item>();
            let mut off = 0;
            while off < size {
                crate::stream::prefetch(p.wrapping_add(off));
                off += 64;
            }
            crate::stream::prefetch(p.wrapping_add(size - 1));
        }
    }
}
