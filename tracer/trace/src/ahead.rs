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
//! Example: 1024 ranks give batches of 512 events, at most 2 per rank: 1 M events in flight;
//! 65,536 ranks batches of 16 (the minimum), 2 M events.
//! The decoder fills every queue once at start-up, then refills whichever the replay drains.

use std::collections::VecDeque;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;

use crate::action::Rank;
use crate::error::TraceError;
use crate::stream::{ActionStream, Event, TraceSet};

/// Batches kept ready per rank.
pub const DEPTH: usize = 2;
/// Events kept ready over all ranks, roughly (batches hold at least 16 and at most 1024).
pub const BUDGET_EVENTS: usize = 1 << 20;

type Item = Result<Event, TraceError>;

struct Batch {
    items: Vec<Item>,
    /// The stream's [`ActionStream::foreign_lines`] after the batch.
    foreign_lines: u64,
    /// The stream ended (or failed) with this batch.
    last: bool,
}

#[derive(Default)]
struct Queue {
    ready: VecDeque<Batch>,
    finished: bool,
}

struct State {
    queues: Vec<Queue>,
    /// A rank the replay waits for.
    wanted: Option<Rank>,
    /// The replay dropped its streams: the decoder stops.
    closed: bool,
    /// The decoder thread ended before every stream did (it panicked).
    decoder_gone: bool,
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
        let batch = (BUDGET_EVENTS / (DEPTH * nranks.max(1) as usize)).clamp(16, 1024);
        let shared = Arc::new(Shared {
            state: Mutex::new(State {
                queues: (0..nranks).map(|_| Queue::default()).collect(),
                wanted: None,
                closed: false,
                decoder_gone: false,
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
fn decode(shared: &Shared, mut streams: Vec<Box<dyn ActionStream>>, batch: usize) {
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
    let n = streams.len();
    let mut next = 0usize; // round-robin cursor
    loop {
        let rank = {
            let mut st = shared.lock();
            loop {
                if st.closed {
                    return;
                }
                let wanted = st.wanted.take().map(|r| r as usize);
                let needs = |q: &Queue| !q.finished && q.ready.len() < DEPTH;
                let pick = wanted.filter(|&r| needs(&st.queues[r])).or_else(|| {
                    (0..n)
                        .map(|k| (next + k) % n)
                        .find(|&r| needs(&st.queues[r]))
                });
                match pick {
                    Some(r) => break r,
                    None if st.queues.iter().all(|q| q.finished) => return,
                    None => st = shared.decoder.wait(st).unwrap_or_else(|e| e.into_inner()),
                }
            }
        };
        next = (rank + 1) % n;
        let s = &mut streams[rank];
        let mut items = Vec::with_capacity(batch);
        let mut last = false;
        while items.len() < batch {
            match s.next_event() {
                Ok(Some(e)) => items.push(Ok(e)),
                Ok(None) => {
                    last = true;
                    break;
                }
                Err(e) => {
                    items.push(Err(e));
                    last = true;
                    break;
                }
            }
        }
        let foreign_lines = s.foreign_lines();
        let mut st = shared.lock();
        let q = &mut st.queues[rank];
        q.finished = last;
        q.ready.push_back(Batch {
            items,
            foreign_lines,
            last,
        });
        drop(st);
        shared.replay.notify_all();
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
            items: VecDeque::new(),
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
    items: VecDeque<Item>,
    foreign_lines: u64,
    ended: bool,
}

impl ActionStream for AheadStream {
    fn next_event(&mut self) -> Result<Option<Event>, TraceError> {
        loop {
            if let Some(item) = self.items.pop_front() {
                return item.map(Some);
            }
            if self.ended {
                return Ok(None);
            }
            let mut st = self.shared.lock();
            loop {
                if let Some(b) = st.queues[self.rank as usize].ready.pop_front() {
                    drop(st);
                    self.shared.decoder.notify_one();
                    self.items = b.items.into();
                    self.foreign_lines = b.foreign_lines;
                    self.ended = b.last;
                    break;
                }
                if st.decoder_gone {
                    self.ended = true;
                    return Err(TraceError::new(
                        &self.origin,
                        0,
                        crate::error::TraceErrorKind::Io(std::io::Error::other(
                            "the trace decoder thread stopped",
                        )),
                    ));
                }
                st.wanted = Some(self.rank);
                self.shared.decoder.notify_one();
                st = self
                    .shared
                    .replay
                    .wait(st)
                    .unwrap_or_else(|e| e.into_inner());
            }
        }
    }

    fn origin(&self) -> &Path {
        &self.origin
    }

    fn foreign_lines(&self) -> u64 {
        self.foreign_lines
    }
}
