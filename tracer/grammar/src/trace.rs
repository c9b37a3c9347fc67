//! The complete compressed trace: merged CST, unique rank grammars (stored through one more
//! Sequitur pass, Pilgrim `000_*` §2.5.2), rank map and volume streams.

use std::sync::Arc;

use timeless_trace::{Action, Rank};

use crate::cst::CallSignatureTable;
use crate::error::GrammarError;
use crate::grammar::{Cursor, Grammar};
use crate::merge::MergedRanks;
use crate::placement::PlacementCursor;
use crate::sequitur::Sequitur;
use crate::signature::{rebuild, takes_volume};
use crate::volume::{Precision, VolumeCursor, VolumeStream};

/// A compressed trace of `nranks` ranks.
#[derive(Debug, Clone)]
pub struct CompressedTrace {
    /// Size of `MPI_COMM_WORLD`.
    pub nranks: u32,
    /// How compute volumes are stored.
    pub precision: Precision,
    /// Call signatures by terminal.
    pub cst: Vec<Box<[u8]>>,
    /// File offset of each signature (0 when built in memory), for error messages.
    pub cst_offsets: Vec<usize>,
    /// Unique rank grammars.
    pub grammars: Vec<Grammar>,
    /// The grammar of the concatenated unique grammars' words (the final Sequitur pass).
    pub meta: Grammar,
    /// Grammar index of each rank.
    pub grammar_of_rank: Vec<u32>,
    /// Unique volume streams.
    pub volumes: Vec<VolumeStream>,
    /// Volume stream index of each rank.
    pub volumes_of_rank: Vec<u32>,
    /// The tracer's `trace-meta.json`, verbatim, when the text trace had one (overhead
    /// compensation needs it).
    pub tracer_meta: Option<Vec<u8>>,
    /// The trace's call-site table (`callsites.txt`), verbatim, when it had one.
    pub callsites: Option<Vec<u8>>,
}

/// Size statistics of a compressed trace.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stats {
    /// Ranks.
    pub ranks: u32,
    /// Actions over all ranks (the expansion's length).
    pub actions: u64,
    /// CST entries.
    pub terminals: usize,
    /// Rules over the unique rank grammars.
    pub rules: usize,
    /// Symbols over the unique rank grammars.
    pub symbols: usize,
    /// Unique rank grammars.
    pub unique_grammars: usize,
    /// Rules and symbols of the stored (final-pass) grammar.
    pub meta_rules: usize,
    /// Symbols of the stored grammar.
    pub meta_symbols: usize,
    /// Unique volume streams.
    pub unique_volume_streams: usize,
    /// Volumes over all ranks.
    pub volumes: u64,
    /// `compute` actions over all ranks (placed by gaps, not in the grammars).
    pub computes: u64,
}

impl CompressedTrace {
    /// Finishes a merge of all `nranks` ranks: runs the final Sequitur pass over the
    /// concatenated unique grammars (as integer words, [`Grammar::to_words`]) and orders the
    /// rank map by rank.
    ///
    /// # Errors
    /// [`GrammarError::Invalid`] if a rank in `0..nranks` is missing or appears twice.
    pub fn from_merged(
        m: MergedRanks,
        nranks: u32,
        precision: Precision,
    ) -> Result<Self, GrammarError> {
        let mut grammar_of_rank = vec![u32::MAX; nranks as usize];
        let mut volumes_of_rank = vec![u32::MAX; nranks as usize];
        for e in &m.ranks {
            let slot = grammar_of_rank.get_mut(e.rank as usize).ok_or_else(|| {
                GrammarError::Invalid(format!("rank {} outside 0..{nranks}", e.rank))
            })?;
            if *slot != u32::MAX {
                return Err(GrammarError::Invalid(format!(
                    "rank {} merged twice",
                    e.rank
                )));
            }
            *slot = e.grammar;
            volumes_of_rank[e.rank as usize] = e.volumes;
        }
        if let Some(r) = grammar_of_rank.iter().position(|&g| g == u32::MAX) {
            return Err(GrammarError::Invalid(format!("rank {r} has no trace")));
        }
        let mut seq = Sequitur::new();
        for g in &m.grammars {
            for w in g.to_words() {
                seq.push(w);
            }
        }
        let meta = seq.finish();
        let cst: Vec<Box<[u8]>> = m.cst.signatures().to_vec();
        Ok(CompressedTrace {
            nranks,
            precision,
            cst_offsets: vec![0; cst.len()],
            cst,
            grammars: m.grammars,
            meta,
            grammar_of_rank,
            volumes: m.volumes,
            volumes_of_rank,
            tracer_meta: None,
            callsites: None,
        })
    }

    /// A CST holding this trace's signatures (for merging it again).
    pub fn table(&self) -> CallSignatureTable {
        let mut t = CallSignatureTable::new();
        for s in &self.cst {
            t.intern(s);
        }
        t
    }

    /// Size statistics. O(grammar size), no expansion.
    pub fn stats(&self) -> Stats {
        let per_grammar: Vec<u64> = self.grammars.iter().map(Grammar::expanded_len).collect();
        let computes = self
            .volumes_of_rank
            .iter()
            .map(|&v| self.volumes[v as usize].placement.count)
            .fold(0u64, u64::saturating_add);
        let actions = self
            .grammar_of_rank
            .iter()
            .map(|&g| per_grammar[g as usize])
            .fold(computes, u64::saturating_add);
        Stats {
            ranks: self.nranks,
            actions,
            terminals: self.cst.len(),
            rules: self.grammars.iter().map(Grammar::rule_count).sum(),
            symbols: self.grammars.iter().map(Grammar::symbol_count).sum(),
            unique_grammars: self.grammars.len(),
            meta_rules: self.meta.rule_count(),
            meta_symbols: self.meta.symbol_count(),
            unique_volume_streams: self.volumes.len(),
            volumes: self
                .volumes_of_rank
                .iter()
                .map(|&v| self.volumes[v as usize].count)
                .sum(),
            computes,
        }
    }

    /// Checks cross-references: terminals within the CST, rank maps within the unique lists,
    /// signatures decodable, and each rank's volume count equal to its compute actions (its
    /// placement count) plus the volume-taking terminals of its grammar (computed on the
    /// grammar, without expansion). Gaps are checked by the replay, which decodes them.
    ///
    /// # Errors
    /// [`GrammarError::Invalid`] or [`GrammarError::Corrupt`] naming the problem.
    pub fn validate(&self) -> Result<(), GrammarError> {
        let bad = |s: String| Err(GrammarError::Invalid(s));
        for (i, g) in self.grammars.iter().enumerate() {
            for &(s, _) in g.symbols() {
                if let crate::Symbol::Terminal(t) = s {
                    if t >= self.cst.len() as u64 {
                        return bad(format!(
                            "grammar {i} uses terminal {t}, the CST has {}",
                            self.cst.len()
                        ));
                    }
                }
            }
        }
        for (t, s) in self.cst.iter().enumerate() {
            // Syntax only: a rank in the middle of a huge world accepts any displacement.
            rebuild(s, self.cst_offsets[t], 1 << 31, u32::MAX, Some(0.0))?;
        }
        if self.grammar_of_rank.len() != self.nranks as usize
            || self.volumes_of_rank.len() != self.nranks as usize
        {
            return bad("rank map does not cover every rank".into());
        }
        for r in 0..self.nranks as usize {
            let (g, v) = (self.grammar_of_rank[r], self.volumes_of_rank[r]);
            if g as usize >= self.grammars.len() || v as usize >= self.volumes.len() {
                return bad(format!(
                    "rank {r} maps to grammar {g} / volume stream {v}, out of range"
                ));
            }
        }
        let takes: Vec<bool> = self.cst.iter().map(|s| takes_volume(s)).collect();
        let need: Vec<u64> = self
            .grammars
            .iter()
            .map(|g| g.weighted_len(|t| u64::from(takes[t as usize])))
            .collect();
        for r in 0..self.nranks as usize {
            let (g, v) = (self.grammar_of_rank[r], self.volumes_of_rank[r]);
            let stream = &self.volumes[v as usize];
            let have = stream.count;
            if need[g as usize].checked_add(stream.placement.count) != Some(have) {
                return bad(format!(
                    "rank {r}: its grammar has {} sleep actions and its placement {} compute \
                     actions but its volume stream {have} values",
                    need[g as usize], stream.placement.count
                ));
            }
        }
        Ok(())
    }

    /// Rank `rank`'s action stream, walking its grammar (never expanded).
    ///
    /// # Errors
    /// [`GrammarError::Replay`] if `rank` is not in the trace.
    pub fn rank_stream(self: &Arc<Self>, rank: Rank) -> Result<RankStream, GrammarError> {
        let g = *self
            .grammar_of_rank
            .get(rank as usize)
            .ok_or_else(|| GrammarError::Replay {
                rank,
                what: format!("the compressed trace has {} ranks", self.nranks),
            })?;
        Ok(RankStream {
            trace: Arc::clone(self),
            rank,
            grammar: g,
            volumes: self.volumes_of_rank[rank as usize],
            cursor: Cursor::new(0),
            volume_cursor: VolumeCursor::new(),
            placement_cursor: PlacementCursor::new(),
            next_gap: None,
            index: 0,
            world: self.nranks,
        })
    }
}

/// One rank's actions, decoded on the fly from its grammar, the CST, its compute placement
/// and its volume stream. State: a cursor stack (depth <= rule count), one decompressed
/// volume block and one placement block.
#[derive(Debug, Clone)]
pub struct RankStream {
    trace: Arc<CompressedTrace>,
    rank: Rank,
    grammar: u32,
    volumes: u32,
    cursor: Cursor,
    volume_cursor: VolumeCursor,
    placement_cursor: PlacementCursor,
    /// Grammar actions left before the next compute action; `None` before the first read
    /// (`Some(None)`: no compute left).
    next_gap: Option<Option<u64>>,
    index: u64,
    world: u32,
}

impl RankStream {
    /// The next action with its communicator id, its call site (if recorded) and its 1-based
    /// index in the rank's stream, or `None` at the end.
    ///
    /// # Errors
    /// [`GrammarError::Replay`] (peer outside the world, missing volume) or a corrupt block.
    #[allow(clippy::type_complexity)]
    pub fn next_action(&mut self) -> Result<Option<(Action, u32, Option<u32>, u64)>, GrammarError> {
        let t = &*self.trace;
        let rank = self.rank;
        let stream = &t.volumes[self.volumes as usize];
        let gap = match self.next_gap {
            Some(g) => g,
            None => read_gap(rank, &mut self.placement_cursor, stream)?,
        };
        if gap == Some(0) {
            let flops = next_volume(rank, &mut self.volume_cursor, stream, t.precision)?;
            self.next_gap = Some(read_gap(rank, &mut self.placement_cursor, stream)?);
            self.index += 1;
            return Ok(Some((Action::Compute { flops }, 0, None, self.index)));
        }
        let Some(term) = self.cursor.next(&t.grammars[self.grammar as usize]) else {
            if gap.is_some() {
                return Err(GrammarError::Replay {
                    rank: self.rank,
                    what: "a compute action placed past the end of the grammar".into(),
                });
            }
            return Ok(None);
        };
        self.next_gap = Some(gap.map(|g| g - 1));
        let sig = &t.cst[term as usize];
        let volume = if takes_volume(sig) {
            Some(next_volume(
                rank,
                &mut self.volume_cursor,
                stream,
                t.precision,
            )?)
        } else {
            None
        };
        self.index += 1;
        let (a, comm, callsite) = rebuild(
            sig,
            t.cst_offsets[term as usize],
            self.rank,
            t.nranks,
            volume,
        )
        .map_err(|e| GrammarError::Replay {
            rank: self.rank,
            what: format!("action {}: {e}", self.index),
        })?;
        Ok(Some((a, comm, callsite, self.index)))
    }

    /// World rank of this stream.
    pub fn rank(&self) -> Rank {
        self.rank
    }

    /// Actions returned so far.
    pub fn position(&self) -> u64 {
        self.index
    }

    /// Replays in a world of `nranks` ranks (default: the trace's): peers decoded from
    /// displacements are checked against it.
    pub fn set_world_size(&mut self, nranks: u32) {
        self.world = nranks;
    }
}

fn read_gap(
    rank: Rank,
    cursor: &mut PlacementCursor,
    stream: &VolumeStream,
) -> Result<Option<u64>, GrammarError> {
    cursor
        .next(&stream.placement)
        .map_err(|what| GrammarError::Replay { rank, what })
}

fn next_volume(
    rank: Rank,
    cursor: &mut VolumeCursor,
    stream: &VolumeStream,
    precision: Precision,
) -> Result<f64, GrammarError> {
    cursor
        .next(stream, precision)
        .map_err(|what| GrammarError::Replay { rank, what })?
        .ok_or_else(|| GrammarError::Replay {
            rank,
            what: "volume stream ends before the grammar".into(),
        })
}
