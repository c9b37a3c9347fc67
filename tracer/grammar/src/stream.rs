//! The compressed trace as a [`TraceSet`]: the replay opens one [`ActionStream`] per rank, each
//! walking its rank's grammar with a cursor stack (never expanding it).

use std::path::{Path, PathBuf};
use std::sync::Arc;

use timeless_trace::{ActionStream, Event, Rank, TraceError, TraceErrorKind, TraceSet};

use crate::trace::{CompressedTrace, RankStream};

/// A compressed trace file opened for replay.
#[derive(Debug, Clone)]
pub struct CompressedTraceSet {
    trace: Arc<CompressedTrace>,
    path: PathBuf,
}

impl CompressedTraceSet {
    /// Wraps a decoded trace read from `path` (the path is only used in messages).
    pub fn new(trace: CompressedTrace, path: PathBuf) -> Self {
        CompressedTraceSet {
            trace: Arc::new(trace),
            path,
        }
    }

    /// The decoded trace.
    pub fn trace(&self) -> &CompressedTrace {
        &self.trace
    }
}

fn malformed(path: &Path, location: u64, what: String) -> TraceError {
    TraceError::new(
        path,
        location,
        TraceErrorKind::Malformed {
            action: "compressed trace".into(),
            expected: what,
        },
    )
}

struct GrammarStream {
    inner: RankStream,
    path: PathBuf,
}

impl ActionStream for GrammarStream {
    fn next_event(&mut self) -> Result<Option<Event>, TraceError> {
        match self.inner.next_action() {
            Ok(Some((action, comm, callsite, location))) => Ok(Some(Event {
                action,
                comm,
                callsite,
                location,
            })),
            Ok(None) => Ok(None),
            Err(e) => Err(malformed(
                &self.path,
                self.inner.position() + 1,
                e.to_string(),
            )),
        }
    }

    fn origin(&self) -> &Path {
        &self.path
    }
}

impl TraceSet for CompressedTraceSet {
    fn open_stream(&self, rank: Rank, nranks: u32) -> Result<Box<dyn ActionStream>, TraceError> {
        if rank >= self.trace.nranks {
            return Err(TraceError::new(
                &self.path,
                0,
                TraceErrorKind::MissingRank(rank),
            ));
        }
        let mut inner = self
            .trace
            .rank_stream(rank)
            .map_err(|e| malformed(&self.path, 0, e.to_string()))?;
        inner.set_world_size(nranks);
        Ok(Box::new(GrammarStream {
            inner,
            path: self.path.clone(),
        }))
    }

    fn ranks(&self) -> Option<usize> {
        Some(self.trace.nranks as usize)
    }
}
