//! Cross-rank merge (Pilgrim `000_*` §2.5), as pure functions a tracer can also run over MPI
//! (each round's pairs exchange a [`MergedRanks`]).
//!
//! Merging group `b` into group `a`: the call signature tables are united, `b`'s terminals are
//! renumbered into `a`'s table (§2.5.1), then each of `b`'s grammars is looked up among `a`'s
//! (exact equality; identical grammars are the common case, §2.5.2) and added only if new.
//! Volume streams are deduplicated the same way. [`merge_rounds`] merges P groups pairwise in
//! ⌈log2 P⌉ rounds: in round k, group i·2^(k+1) absorbs group i·2^(k+1) + 2^k. The final
//! Sequitur pass over the concatenated unique grammars is [`crate::CompressedTrace::from_merged`].

use rustc_hash::FxHashMap;
use timeless_trace::Rank;

use crate::cst::CallSignatureTable;
use crate::encoder::RankTrace;
use crate::grammar::Grammar;
use crate::volume::VolumeStream;

/// Where one rank's trace lives in a merged group.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RankEntry {
    /// World rank.
    pub rank: Rank,
    /// Index into [`MergedRanks::grammars`].
    pub grammar: u32,
    /// Index into [`MergedRanks::volumes`].
    pub volumes: u32,
}

/// A group of ranks merged so far: one CST, unique grammars and volume streams, rank map.
#[derive(Debug, Clone, Default)]
pub struct MergedRanks {
    /// United call signature table; the grammars' terminals index it.
    pub cst: CallSignatureTable,
    /// Unique grammars, in order of first appearance.
    pub grammars: Vec<Grammar>,
    /// Unique volume streams.
    pub volumes: Vec<VolumeStream>,
    /// Ranks of the group, in the order they were merged.
    pub ranks: Vec<RankEntry>,
    grammar_index: FxHashMap<Grammar, u32>,
    volume_index: FxHashMap<VolumeStream, u32>,
}

impl MergedRanks {
    fn add_grammar(&mut self, g: Grammar) -> u32 {
        if let Some(&i) = self.grammar_index.get(&g) {
            return i;
        }
        let i = self.grammars.len() as u32;
        self.grammars.push(g.clone());
        self.grammar_index.insert(g, i);
        i
    }

    fn add_volumes(&mut self, v: VolumeStream) -> u32 {
        if let Some(&i) = self.volume_index.get(&v) {
            return i;
        }
        let i = self.volumes.len() as u32;
        self.volumes.push(v.clone());
        self.volume_index.insert(v, i);
        i
    }
}

impl From<RankTrace> for MergedRanks {
    fn from(t: RankTrace) -> Self {
        let mut m = MergedRanks {
            cst: t.cst,
            ..MergedRanks::default()
        };
        let grammar = m.add_grammar(t.grammar);
        let volumes = m.add_volumes(t.volumes);
        m.ranks.push(RankEntry {
            rank: t.rank,
            grammar,
            volumes,
        });
        m
    }
}

/// Merges `b` into `a` (CST union with renumbering, grammar and volume deduplication).
pub fn merge_pair(mut a: MergedRanks, b: MergedRanks) -> MergedRanks {
    let renumber = a.cst.union(&b.cst);
    let mut grammar_map = Vec::with_capacity(b.grammars.len());
    for mut g in b.grammars {
        g.map_terminals(|t| u64::from(renumber[t as usize]));
        grammar_map.push(a.add_grammar(g));
    }
    let volume_map: Vec<u32> = b.volumes.into_iter().map(|v| a.add_volumes(v)).collect();
    a.ranks.extend(b.ranks.into_iter().map(|e| RankEntry {
        rank: e.rank,
        grammar: grammar_map[e.grammar as usize],
        volumes: volume_map[e.volumes as usize],
    }));
    a
}

/// Merges `groups` pairwise in ⌈log2 P⌉ rounds (as P processes would, each round halving the
/// number of groups) and returns the single group left with the number of rounds, or `None`
/// for no group.
pub fn merge_rounds(groups: Vec<MergedRanks>) -> Option<(MergedRanks, u32)> {
    let mut slots: Vec<Option<MergedRanks>> = groups.into_iter().map(Some).collect();
    let n = slots.len();
    if n == 0 {
        return None;
    }
    let mut stride = 1;
    let mut rounds = 0;
    while stride < n {
        let mut i = 0;
        while i + stride < n {
            let a = slots[i].take().expect("live group");
            let b = slots[i + stride].take().expect("live group");
            slots[i] = Some(merge_pair(a, b));
            i += 2 * stride;
        }
        stride *= 2;
        rounds += 1;
    }
    slots[0].take().map(|m| (m, rounds))
}

impl MergedRanks {
    /// Wire encoding of a group, for the exchange of one merge round between two processes:
    /// varints throughout: CST (count, then length + bytes per signature), grammars (count,
    /// then word count + words of [`Grammar::to_words`] per grammar), volume streams (count,
    /// then values, blocks, and length + bytes per block; then the same for its compute
    /// placement: gaps, blocks, length + bytes per block), ranks (count, then rank, grammar,
    /// stream per rank).
    pub fn to_bytes(&self) -> Vec<u8> {
        use crate::varint::put_u64;
        let mut out = Vec::new();
        put_u64(&mut out, self.cst.len() as u64);
        for s in self.cst.signatures() {
            put_u64(&mut out, s.len() as u64);
            out.extend_from_slice(s);
        }
        put_u64(&mut out, self.grammars.len() as u64);
        for g in &self.grammars {
            let w = g.to_words();
            put_u64(&mut out, w.len() as u64);
            w.iter().for_each(|&x| put_u64(&mut out, x));
        }
        put_u64(&mut out, self.volumes.len() as u64);
        for v in &self.volumes {
            put_u64(&mut out, v.count);
            put_u64(&mut out, v.blocks.len() as u64);
            for b in &v.blocks {
                put_u64(&mut out, b.len() as u64);
                out.extend_from_slice(b);
            }
            put_u64(&mut out, v.placement.count);
            put_u64(&mut out, v.placement.blocks.len() as u64);
            for b in &v.placement.blocks {
                put_u64(&mut out, b.len() as u64);
                out.extend_from_slice(b);
            }
        }
        put_u64(&mut out, self.ranks.len() as u64);
        for e in &self.ranks {
            put_u64(&mut out, u64::from(e.rank));
            put_u64(&mut out, u64::from(e.grammar));
            put_u64(&mut out, u64::from(e.volumes));
        }
        out
    }

    /// Decodes [`MergedRanks::to_bytes`].
    ///
    /// # Errors
    /// [`crate::GrammarError::Corrupt`] with the byte offset of the first bad field, or an
    /// index (terminal, grammar, stream) out of range.
    pub fn from_bytes(bytes: &[u8]) -> Result<MergedRanks, crate::GrammarError> {
        use crate::varint::Reader;
        let mut r = Reader::new(bytes, 0);
        let mut m = MergedRanks::default();
        let n = r.count("CST entry count", 2)?;
        for _ in 0..n {
            let len = r.count("signature length", 1)?;
            m.cst.intern(r.take(len, "signature")?);
        }
        let n = r.count("grammar count", 2)?;
        for i in 0..n {
            let at = r.offset();
            let nw = r.count("grammar word count", 1)?;
            let words = (0..nw)
                .map(|_| r.varint("grammar word"))
                .collect::<Result<Vec<_>, _>>()?;
            let (g, used) = Grammar::from_words(&words)
                .map_err(|e| crate::error::corrupt(at, format!("grammar {i}: {e}")))?;
            let bad_terminal = g
                .symbols()
                .iter()
                .any(|&(s, _)| matches!(s, crate::Symbol::Terminal(t) if t >= m.cst.len() as u64));
            if used != words.len() || bad_terminal {
                return Err(crate::error::corrupt(
                    at,
                    format!("grammar {i}: trailing words or a terminal outside the CST"),
                ));
            }
            m.add_grammar(g);
        }
        let n = r.count("volume stream count", 2)?;
        for _ in 0..n {
            let blocks = |r: &mut Reader| -> Result<(u64, Vec<Vec<u8>>), crate::GrammarError> {
                let count = r.varint("value count")?;
                let nb = r.count("block count", 1)?;
                let blocks = (0..nb)
                    .map(|_| {
                        let len = r.count("block length", 1)?;
                        Ok(r.take(len, "zstd block")?.to_vec())
                    })
                    .collect::<Result<Vec<_>, crate::GrammarError>>()?;
                Ok((count, blocks))
            };
            let (count, values) = blocks(&mut r)?;
            let (gaps, placement) = blocks(&mut r)?;
            m.add_volumes(VolumeStream {
                count,
                blocks: values,
                placement: crate::placement::PlacementStream {
                    count: gaps,
                    blocks: placement,
                },
            });
        }
        let n = r.count("rank count", 3)?;
        for _ in 0..n {
            let at = r.offset();
            let e = RankEntry {
                rank: r.varint_u32("rank")?,
                grammar: r.varint_u32("grammar index")?,
                volumes: r.varint_u32("volume stream index")?,
            };
            if e.grammar as usize >= m.grammars.len() || e.volumes as usize >= m.volumes.len() {
                return Err(crate::error::corrupt(at, "rank entry index out of range"));
            }
            m.ranks.push(e);
        }
        if !r.is_empty() {
            return Err(r.error("trailing bytes after the rank entries"));
        }
        Ok(m)
    }
}
