//! The compressed trace file (`.tlg`): one binary file, little-endian, documented in the
//! README's "Compressed traces" section.
//!
//! ```text
//! 0   magic      89 54 4C 47 0D 0A 1A 0A   ("\x89TLG\r\n\x1a\n": catches text-mode mangling)
//! 8   version    u16 = 3, or 4 with a `CALLSITES` section
//! 10  byte order u16 = 0x0102, stored 02 01 (a big-endian writer would store 01 02)
//! 12  sections   u32 = n
//! 16  table      n × { kind u32, reserved u32 = 0, offset u64, length u64 }  (24 bytes each)
//! ..  sections   at their offsets, each read with a bounds-checked reader
//! ```
//! Sections (all integers LEB128 varints unless stated):
//! - 1 `META`: nranks, precision (f64 bits, u64 LE; 0 = lossless), unique grammars,
//!   words of the concatenated unique grammars, unique volume streams.
//! - 2 `CST`: count, then per terminal: length, signature bytes ([`crate::signature`]).
//! - 3 `GRAMMAR`: the final-pass grammar over the unique grammars' words: rule count, then per
//!   rule: body length, then per symbol: code (2·t terminal, 2·r+1 rule), exponent.
//! - 4 `RANKS`: per rank: grammar index, volume stream index.
//! - 5 `VOLUMES`: count, then per stream: value count, block count, per block: length, bytes
//!   (lossless: zstd of the f64 bits; binned: a histogram-coded block, [`crate::histogram`]).
//! - 6 `TRACER_META` (optional): the bytes of the tracer's `trace-meta.json` (what overhead
//!   compensation reads) in one zstd frame (level 19), so a compressed trace replays like its
//!   text; at most [`MAX_TRACER_META_BYTES`] once decompressed.
//! - 7 `PLACEMENT`: per volume stream, in the order of `VOLUMES`: gap count (the rank's
//!   `compute` actions, which are not in the grammar), block count, per block: length, zstd
//!   bytes of varint gaps ([`crate::placement`]).
//! - 8 `CALLSITES` (optional, version 4): the trace's call-site table (`callsites.txt`, see
//!   `timeless_trace::callsites`) in one zstd frame, at most [`MAX_TRACER_META_BYTES`] once
//!   decompressed. The call sites themselves end the call signatures ([`crate::signature`]).
//!
//! Version 2 took `compute` out of the grammar (version 1 had it as a terminal and no
//! `PLACEMENT`); version 3 histogram-codes binned volume blocks (version 2: zstd of varint
//! bins); version 4 is version 3 with a `CALLSITES` section, written only when there is one
//! (so a trace without call sites gives the bytes it gave before). Older files are refused with a
//! message naming both versions.
//!
//! Unknown section kinds are skipped (later versions may add sections). Every decoding error
//! names the byte offset where it was found; no input makes the decoder panic.

use crate::error::{corrupt, GrammarError};
use crate::grammar::{Grammar, Symbol};
use crate::placement::PlacementStream;
use crate::trace::CompressedTrace;
use crate::varint::{put_u64, Reader};
use crate::volume::{Precision, VolumeStream};

/// The file's first eight bytes.
pub const MAGIC: [u8; 8] = [0x89, b'T', b'L', b'G', b'\r', b'\n', 0x1a, b'\n'];
/// Format version written without call sites, and the oldest read.
pub const VERSION: u16 = 3;
/// Format version written with a call-site table, and the newest read.
pub const VERSION_CALLSITES: u16 = 4;
const BYTE_ORDER: u16 = 0x0102;
/// Largest word count of the unique grammars accepted when reading (a guard against a tiny
/// corrupt grammar that expands to an enormous one): 2^27 words.
pub const MAX_META_WORDS: u64 = 1 << 27;

const META: u32 = 1;
const CST: u32 = 2;
const GRAMMAR: u32 = 3;
const RANKS: u32 = 4;
const VOLUMES: u32 = 5;
const TRACER_META: u32 = 6;
/// Largest decompressed `TRACER_META` accepted when reading: 16 MiB.
pub const MAX_TRACER_META_BYTES: u64 = 16 << 20;
const PLACEMENT: u32 = 7;
const CALLSITES: u32 = 8;

/// Byte sizes of a file's parts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct PartSizes {
    /// Header and section table.
    pub header: usize,
    /// `META` section.
    pub meta: usize,
    /// `CST` section.
    pub cst: usize,
    /// `GRAMMAR` section.
    pub grammar: usize,
    /// `RANKS` section.
    pub ranks: usize,
    /// `VOLUMES` section.
    pub volumes: usize,
    /// `TRACER_META` section (0 when absent).
    pub tracer_meta: usize,
    /// `PLACEMENT` section.
    pub placement: usize,
    /// `CALLSITES` section (0 when absent).
    pub callsites: usize,
}

impl PartSizes {
    /// Whole file.
    pub fn total(&self) -> usize {
        self.header
            + self.meta
            + self.cst
            + self.grammar
            + self.ranks
            + self.volumes
            + self.tracer_meta
            + self.placement
            + self.callsites
    }
}

/// True if `bytes` starts with the format's magic number.
pub fn is_compressed(bytes: &[u8]) -> bool {
    bytes.starts_with(&MAGIC)
}

fn grammar_bytes(g: &Grammar, out: &mut Vec<u8>) {
    put_u64(out, g.rule_count() as u64);
    for r in 0..g.rule_count() as u32 {
        let body = g.body(r);
        put_u64(out, body.len() as u64);
        for &(s, e) in body {
            put_u64(
                out,
                match s {
                    Symbol::Terminal(t) => t << 1,
                    Symbol::Rule(q) => (u64::from(q) << 1) | 1,
                },
            );
            put_u64(out, e);
        }
    }
}

/// Serialises `trace`; returns the bytes and the size of each part.
pub fn write(trace: &CompressedTrace) -> (Vec<u8>, PartSizes) {
    let words: u64 = trace
        .grammars
        .iter()
        .map(|g| g.to_words().len() as u64)
        .sum();
    let mut meta = Vec::new();
    put_u64(&mut meta, u64::from(trace.nranks));
    meta.extend_from_slice(&trace.precision.as_f64().to_bits().to_le_bytes());
    put_u64(&mut meta, trace.grammars.len() as u64);
    put_u64(&mut meta, words);
    put_u64(&mut meta, trace.volumes.len() as u64);

    let mut cst = Vec::new();
    put_u64(&mut cst, trace.cst.len() as u64);
    for s in &trace.cst {
        put_u64(&mut cst, s.len() as u64);
        cst.extend_from_slice(s);
    }

    let mut grammar = Vec::new();
    grammar_bytes(&trace.meta, &mut grammar);

    let mut ranks = Vec::new();
    for r in 0..trace.nranks as usize {
        put_u64(&mut ranks, u64::from(trace.grammar_of_rank[r]));
        put_u64(&mut ranks, u64::from(trace.volumes_of_rank[r]));
    }

    let mut volumes = Vec::new();
    put_u64(&mut volumes, trace.volumes.len() as u64);
    for v in &trace.volumes {
        put_u64(&mut volumes, v.count);
        put_u64(&mut volumes, v.blocks.len() as u64);
        for b in &v.blocks {
            put_u64(&mut volumes, b.len() as u64);
            volumes.extend_from_slice(b);
        }
    }

    let mut placement = Vec::new();
    for v in &trace.volumes {
        let p = &v.placement;
        put_u64(&mut placement, p.count);
        put_u64(&mut placement, p.blocks.len() as u64);
        for b in &p.blocks {
            put_u64(&mut placement, b.len() as u64);
            placement.extend_from_slice(b);
        }
    }

    let mut sections = vec![
        (META, meta),
        (CST, cst),
        (GRAMMAR, grammar),
        (RANKS, ranks),
        (VOLUMES, volumes),
        (PLACEMENT, placement),
    ];
    if let Some(m) = &trace.tracer_meta {
        let z = zstd::bulk::compress(m, 19).expect("zstd compression of a memory buffer");
        sections.push((TRACER_META, z));
    }
    if let Some(c) = &trace.callsites {
        let z = zstd::bulk::compress(c, 19).expect("zstd compression of a memory buffer");
        sections.push((CALLSITES, z));
    }
    let version = if trace.callsites.is_some() {
        VERSION_CALLSITES
    } else {
        VERSION
    };
    let header = 16 + 24 * sections.len();
    let mut out = Vec::with_capacity(header + sections.iter().map(|s| s.1.len()).sum::<usize>());
    out.extend_from_slice(&MAGIC);
    out.extend_from_slice(&version.to_le_bytes());
    out.extend_from_slice(&BYTE_ORDER.to_le_bytes());
    out.extend_from_slice(&(sections.len() as u32).to_le_bytes());
    let mut offset = header as u64;
    for (kind, body) in &sections {
        out.extend_from_slice(&kind.to_le_bytes());
        out.extend_from_slice(&0u32.to_le_bytes());
        out.extend_from_slice(&offset.to_le_bytes());
        out.extend_from_slice(&(body.len() as u64).to_le_bytes());
        offset += body.len() as u64;
    }
    for (_, body) in &sections {
        out.extend_from_slice(body);
    }
    let sizes = PartSizes {
        header,
        meta: sections[0].1.len(),
        cst: sections[1].1.len(),
        grammar: sections[2].1.len(),
        ranks: sections[3].1.len(),
        volumes: sections[4].1.len(),
        placement: sections[5].1.len(),
        tracer_meta: sections
            .iter()
            .find(|s| s.0 == TRACER_META)
            .map_or(0, |s| s.1.len()),
        callsites: sections
            .iter()
            .find(|s| s.0 == CALLSITES)
            .map_or(0, |s| s.1.len()),
    };
    (out, sizes)
}

/// Why [`load`] could not load a compressed trace file.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum LoadError {
    /// The file cannot be read (missing, unreadable); the I/O error is the source.
    #[error("cannot read {}", path.display())]
    Read {
        /// The file.
        path: std::path::PathBuf,
        /// What the operating system said.
        #[source]
        source: std::io::Error,
    },
    /// The bytes are not a valid compressed trace ([`read`]'s error, shown after the path).
    #[error("{}: {error}", path.display())]
    Format {
        /// The file.
        path: std::path::PathBuf,
        /// What is wrong with its bytes.
        error: GrammarError,
    },
}

/// Reads and decodes the compressed trace file at `path` ([`read`] on its bytes).
///
/// # Errors
/// [`LoadError::Read`] when the file cannot be read, [`LoadError::Format`] when its bytes do
/// not decode.
pub fn load(path: &std::path::Path) -> Result<(CompressedTrace, PartSizes), LoadError> {
    let bytes = std::fs::read(path).map_err(|source| LoadError::Read {
        path: path.to_path_buf(),
        source,
    })?;
    read(&bytes).map_err(|error| LoadError::Format {
        path: path.to_path_buf(),
        error,
    })
}

/// Decodes a file.
///
/// # Errors
/// [`GrammarError::Corrupt`] with the byte offset of the first field that does not decode, or
/// [`GrammarError::Invalid`] for well-formed bytes describing an inconsistent trace.
pub fn read(bytes: &[u8]) -> Result<(CompressedTrace, PartSizes), GrammarError> {
    let mut h = Reader::new(bytes, 0);
    let magic = h.take(8, "magic number")?;
    if magic != MAGIC {
        return Err(corrupt(
            0,
            "not a timeless compressed trace (bad magic number)",
        ));
    }
    let version = h.u16_le("version")?;
    if !(VERSION..=VERSION_CALLSITES).contains(&version) {
        let hint = if version < VERSION {
            " (compress the text trace again)"
        } else {
            ""
        };
        return Err(corrupt(
            8,
            format!(
                "format version {version}, this build reads versions \
                 {VERSION}..={VERSION_CALLSITES}{hint}"
            ),
        ));
    }
    let bom = h.u16_le("byte order mark")?;
    if bom != BYTE_ORDER {
        return Err(corrupt(
            10,
            format!("byte order mark {bom:#06x}, expected 0x0102 (little-endian)"),
        ));
    }
    let n = h.u32_le("section count")? as usize;
    if n > h.remaining() / 24 {
        return Err(corrupt(12, format!("{n} sections do not fit the file")));
    }
    let mut found: [Option<(usize, usize)>; 9] = [None; 9];
    for i in 0..n {
        let at = h.offset();
        let kind = h.u32_le("section kind")?;
        h.u32_le("reserved")?;
        let offset = h.u64_le("section offset")?;
        let length = h.u64_le("section length")?;
        let end = offset.checked_add(length);
        if !matches!(end, Some(e) if e <= bytes.len() as u64) {
            return Err(corrupt(at, format!("section {i} (kind {kind}) spans {offset}+{length}, past the end of the {}-byte file", bytes.len())));
        }
        if let Some(slot) = found.get_mut(kind as usize) {
            if kind != 0 {
                if slot.is_some() {
                    return Err(corrupt(at, format!("section kind {kind} appears twice")));
                }
                *slot = Some((offset as usize, length as usize));
            }
        }
    }
    let header = h.offset();
    let section = |kind: u32, name: &str| -> Result<Reader<'_>, GrammarError> {
        let (off, len) = found[kind as usize]
            .ok_or_else(|| corrupt(12, format!("section {name} (kind {kind}) missing")))?;
        Ok(Reader::new(&bytes[off..off + len], off))
    };
    let size = |kind: u32| found[kind as usize].map_or(0, |s| s.1);

    let mut m = section(META, "META")?;
    let nranks = m.varint_u32("rank count")?;
    let at = m.offset();
    let precision = Precision::from_f64(f64::from_bits(m.u64_le("precision")?))
        .ok_or_else(|| corrupt(at, "precision must be 0 (lossless) or in [1e-9, 0.5]"))?;
    let at = m.offset();
    let unique = m.varint("unique grammar count")?;
    let words = m.varint("grammar word count")?;
    if words > MAX_META_WORDS {
        return Err(corrupt(
            at,
            format!("{words} grammar words exceed the reader's limit {MAX_META_WORDS}"),
        ));
    }
    let unique_volumes = m.varint("unique volume stream count")?;

    let mut c = section(CST, "CST")?;
    let ncst = c.count("CST entry count", 2)?;
    let mut cst = Vec::with_capacity(ncst);
    let mut cst_offsets = Vec::with_capacity(ncst);
    for _ in 0..ncst {
        let len = c.count("signature length", 1)?;
        cst_offsets.push(c.offset());
        cst.push(Box::<[u8]>::from(c.take(len, "signature")?));
    }

    let mut g = section(GRAMMAR, "GRAMMAR")?;
    let gat = g.offset();
    let nrules = g.count("rule count", 1)?;
    let mut body = Vec::new();
    let mut starts = vec![0u32];
    for _ in 0..nrules {
        let len = g.count("body length", 2)?;
        for _ in 0..len {
            let at = g.offset();
            let code = g.varint("symbol")?;
            let exp = g.varint("exponent")?;
            let sym = if code & 1 == 0 {
                Symbol::Terminal(code >> 1)
            } else {
                Symbol::Rule(
                    u32::try_from(code >> 1).map_err(|_| corrupt(at, "rule id exceeds 32 bits"))?,
                )
            };
            body.push((sym, exp));
        }
        starts.push(body.len() as u32);
    }
    let meta = Grammar::from_parts(body, starts).map_err(|e| corrupt(gat, e.to_string()))?;
    if meta.expanded_len() != words {
        return Err(corrupt(
            gat,
            format!(
                "the grammar expands to {} words, META says {words}",
                meta.expanded_len()
            ),
        ));
    }
    let all: Vec<u64> = meta.expand().collect();
    let mut grammars = Vec::new();
    let mut pos = 0usize;
    for i in 0..unique {
        let (gr, used) = Grammar::from_words(&all[pos..])
            .map_err(|e| corrupt(gat, format!("unique grammar {i}: {e}")))?;
        grammars.push(gr);
        pos += used;
    }
    if pos != all.len() {
        return Err(corrupt(
            gat,
            format!(
                "{} grammar words left after {unique} grammars",
                all.len() - pos
            ),
        ));
    }

    let mut r = section(RANKS, "RANKS")?;
    let mut grammar_of_rank = Vec::new();
    let mut volumes_of_rank = Vec::new();
    for _ in 0..nranks {
        grammar_of_rank.push(r.varint_u32("grammar index")?);
        volumes_of_rank.push(r.varint_u32("volume stream index")?);
    }

    let mut v = section(VOLUMES, "VOLUMES")?;
    let vat = v.offset();
    let nv = v.count("volume stream count", 2)?;
    if nv as u64 != unique_volumes {
        return Err(corrupt(
            vat,
            format!("{nv} volume streams, META says {unique_volumes}"),
        ));
    }
    let mut volumes = Vec::with_capacity(nv);
    for _ in 0..nv {
        let at = v.offset();
        let count = v.varint("value count")?;
        let nblocks = v.count("block count", 1)?;
        if count.div_ceil(crate::volume::BLOCK_VALUES as u64) != nblocks as u64 {
            return Err(corrupt(
                at,
                format!(
                    "{count} values need {} blocks, found {nblocks}",
                    count.div_ceil(crate::volume::BLOCK_VALUES as u64)
                ),
            ));
        }
        let mut blocks = Vec::with_capacity(nblocks);
        for _ in 0..nblocks {
            let len = v.count("block length", 1)?;
            blocks.push(v.take(len, "zstd block")?.to_vec());
        }
        volumes.push(VolumeStream {
            count,
            blocks,
            placement: PlacementStream::default(),
        });
    }

    let mut p = section(PLACEMENT, "PLACEMENT")?;
    for v in &mut volumes {
        let at = p.offset();
        let count = p.varint("gap count")?;
        let nblocks = p.count("block count", 1)?;
        let need = count.div_ceil(crate::volume::BLOCK_VALUES as u64);
        if need != nblocks as u64 {
            return Err(corrupt(
                at,
                format!("{count} gaps need {need} blocks, found {nblocks}"),
            ));
        }
        let mut blocks = Vec::with_capacity(nblocks);
        for _ in 0..nblocks {
            let len = p.count("block length", 1)?;
            blocks.push(p.take(len, "zstd block")?.to_vec());
        }
        v.placement = PlacementStream { count, blocks };
    }
    if !p.is_empty() {
        return Err(p.error("trailing bytes after the placement streams"));
    }

    let zstd_section = |kind: u32, name: &str| -> Result<Option<Vec<u8>>, GrammarError> {
        match found[kind as usize] {
            None => Ok(None),
            Some((off, len)) => {
                use std::io::Read;
                let mut out = Vec::new();
                let read = zstd::stream::read::Decoder::new(&bytes[off..off + len])
                    .and_then(|d| d.take(MAX_TRACER_META_BYTES + 1).read_to_end(&mut out));
                match read {
                    Err(e) => Err(corrupt(off, format!("{name}: {e}"))),
                    Ok(n) if n as u64 > MAX_TRACER_META_BYTES => Err(corrupt(
                        off,
                        format!("{name} exceeds {MAX_TRACER_META_BYTES} bytes"),
                    )),
                    Ok(_) => Ok(Some(out)),
                }
            }
        }
    };
    let tracer_meta = zstd_section(TRACER_META, "TRACER_META")?;
    let callsites = zstd_section(CALLSITES, "CALLSITES")?;
    let trace = CompressedTrace {
        tracer_meta,
        callsites,
        nranks,
        precision,
        cst,
        cst_offsets,
        grammars,
        meta,
        grammar_of_rank,
        volumes,
        volumes_of_rank,
    };
    trace.validate()?;
    let sizes = PartSizes {
        header,
        meta: size(META),
        cst: size(CST),
        grammar: size(GRAMMAR),
        ranks: size(RANKS),
        volumes: size(VOLUMES),
        tracer_meta: size(TRACER_META),
        placement: size(PLACEMENT),
        callsites: size(CALLSITES),
    };
    Ok((trace, sizes))
}
