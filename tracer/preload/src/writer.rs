//! A rank's trace file: records are appended to memory and written out in whole lines when the
//! buffer fills, so a program that aborts leaves a valid trace up to its last write.
//!
//! A record may have to wait for information that comes later: an `MPI_Irecv` from
//! `MPI_ANY_SOURCE` is written where it was posted, but its source is known only when it
//! completes. It occupies a *hole* until then; text after a hole stays in memory (the buffer
//! grows past its limit if it must) and is written once every hole before it is filled.
//!
//! With online compression (`online`), every line is also handed to the rank's encoder as soon
//! as its place is final (no hole before it), and the writer may have no file at all
//! (`TIMELESS_TEXT=0`).
//!
//! With an online flow graph (`flowcapture`), every record, hole and fill is handed to the
//! graph as it is made (the graph keeps its own queue behind open holes), with the record's
//! typed key when it has one (`record`). When the graph is all there is (`--flowgraph-only`:
//! no file, no online encoder) the writer is *lean*: it keeps no text at all and a record is
//! formatted only if the graph has not seen its key before.

use std::fmt;
use std::fs::File;
use std::io::{self, Write};
use std::path::Path;

use crate::flowcapture::Text;
use crate::online::OnlineEncoder;
use crate::record::RecordKey;

/// Identifies a hole, in creation order.
pub type HoleId = u64;

enum Segment {
    Text(String),
    Hole(HoleId),
}

/// Buffered writer of one rank's records.
pub struct Writer {
    /// `None`: the lines only feed `online`.
    file: Option<File>,
    segments: Vec<Segment>,
    buffered_bytes: usize,
    limit_bytes: usize,
    next_hole: HoleId,
    written_bytes: u64,
    online: Option<Box<OnlineEncoder>>,
    /// The online flow graph (`flowcapture`), fed each record as it is made.
    graph: Option<Box<crate::flowcapture::GraphCapture>>,
    /// The graph is the only output: no text is kept.
    lean: bool,
    /// A lean writer's text, written anyway for a test (`TIMELESS_FLOWGRAPH_CHECK`).
    check: Option<Box<Writer>>,
    /// Segment index and byte offset up to which the text was fed to `online`.
    fed: (usize, usize),
}

impl Writer {
    /// Creates (truncates) `path`; text is written whenever `limit_bytes` are buffered.
    pub fn create(path: &Path, limit_bytes: usize) -> io::Result<Writer> {
        let mut w = Writer::discard(limit_bytes);
        w.file = Some(File::create(path)?);
        Ok(w)
    }

    /// A writer without a file: its lines only feed the online encoder.
    pub fn discard(limit_bytes: usize) -> Writer {
        Writer {
            file: None,
            segments: vec![Segment::Text(String::new())],
            buffered_bytes: 0,
            limit_bytes,
            next_hole: 0,
            written_bytes: 0,
            online: None,
            graph: None,
            lean: false,
            check: None,
            fed: (0, 0),
        }
    }

    /// Hands every record, hole and fill to the flow graph `capture` from now on (the text
    /// buffered so far first), which is handed to `flowcapture::closed` when the writer
    /// finishes. Set it before any hole is made.
    pub fn set_graph(&mut self, mut capture: crate::flowcapture::GraphCapture) {
        for seg in &self.segments {
            match seg {
                Segment::Text(s) => capture.record(None, None, Text::Str(s)),
                Segment::Hole(_) => break,
            }
        }
        self.graph = Some(Box::new(capture));
        self.lean = self.file.is_none() && self.online.is_none();
    }

    /// Also writes a lean writer's records as text to `copy` (a test's check of the graph
    /// against the same run's text trace). Set it before any record is made.
    pub fn set_check_copy(&mut self, copy: Writer) {
        self.check = Some(Box::new(copy));
    }

    /// Feeds every line, once its place is final, to `encoder`; the encoder is handed to
    /// `online::closed` when the writer finishes.
    pub fn set_online(&mut self, encoder: OnlineEncoder) {
        self.online = Some(Box::new(encoder));
        self.lean = false;
        self.feed_online();
    }

    /// Hands the text between the feed cursor and the first hole to the online encoder.
    fn feed_online(&mut self) {
        if self.online.is_none() {
            return;
        }
        let (mut i, mut off) = self.fed;
        while let Some(Segment::Text(s)) = self.segments.get(i) {
            if let Some(enc) = self.online.as_mut() {
                enc.feed(&s[off..]);
            }
            if i + 1 == self.segments.len() {
                off = s.len();
                break;
            }
            i += 1;
            off = 0;
        }
        self.fed = (i, off);
    }

    /// Appends one line (`args` without its newline): a comment, or a record without a
    /// typed key.
    pub fn line(&mut self, args: fmt::Arguments<'_>) -> io::Result<()> {
        self.record(None, None, args)
    }

    /// Appends one record line (`args` without its newline) whose typed key is `key`, if any
    /// (`volume`: a `compute` record's flops, which its key leaves out).
    pub fn record(
        &mut self,
        key: Option<&RecordKey>,
        volume: Option<f64>,
        args: fmt::Arguments<'_>,
    ) -> io::Result<()> {
        if self.lean {
            if let Some(g) = self.graph.as_mut() {
                g.record(key, volume, Text::Args(args));
            }
            if let Some(c) = self.check.as_mut() {
                c.line(args)?;
            }
            return Ok(());
        }
        if !matches!(self.segments.last(), Some(Segment::Text(_))) {
            self.segments.push(Segment::Text(String::new()));
        }
        let Some(Segment::Text(tail)) = self.segments.last_mut() else {
            unreachable!("a text segment was just pushed")
        };
        let before = tail.len();
        fmt::Write::write_fmt(tail, args).map_err(|_| io::Error::other("format error"))?;
        if let Some(g) = self.graph.as_mut() {
            g.record(key, volume, Text::Str(&tail[before..]));
        }
        tail.push('\n');
        let added = tail.len() - before;
        self.buffered_bytes += added;
        self.feed_online();
        self.maybe_flush()
    }

    /// Reserves the place of a record whose text is not known yet.
    pub fn hole(&mut self) -> HoleId {
        let id = self.next_hole;
        self.next_hole += 1;
        if !self.lean {
            self.segments.push(Segment::Hole(id));
        }
        if let Some(c) = self.check.as_mut() {
            // Both number their holes in creation order.
            c.hole();
        }
        if let Some(g) = self.graph.as_mut() {
            g.hole(id);
        }
        id
    }

    /// Fills a hole with its line (without newline). Unknown ids are ignored.
    pub fn fill(&mut self, id: HoleId, args: fmt::Arguments<'_>) -> io::Result<()> {
        self.fill_record(id, None, args)
    }

    /// Fills a hole with its record line (without newline) whose typed key is `key`, if any.
    /// Unknown ids are ignored.
    pub fn fill_record(
        &mut self,
        id: HoleId,
        key: Option<&RecordKey>,
        args: fmt::Arguments<'_>,
    ) -> io::Result<()> {
        if self.lean {
            if let Some(g) = self.graph.as_mut() {
                g.fill(id, key, Text::Args(args));
            }
            if let Some(c) = self.check.as_mut() {
                c.fill(id, args)?;
            }
            return Ok(());
        }
        if let Some(seg) = self
            .segments
            .iter_mut()
            .find(|s| matches!(s, Segment::Hole(h) if *h == id))
        {
            let mut text = fmt::format(args);
            if let Some(g) = self.graph.as_mut() {
                g.fill(id, key, Text::Str(&text));
            }
            text.push('\n');
            self.buffered_bytes += text.len();
            *seg = Segment::Text(text);
        }
        self.feed_online();
        self.maybe_flush()
    }

    /// Number of holes not filled yet.
    pub fn open_holes(&self) -> usize {
        self.segments
            .iter()
            .filter(|s| matches!(s, Segment::Hole(_)))
            .count()
    }

    fn maybe_flush(&mut self) -> io::Result<()> {
        if self.buffered_bytes >= self.limit_bytes {
            self.flush_ready()?;
        }
        Ok(())
    }

    /// Writes every line before the first hole.
    pub fn flush_ready(&mut self) -> io::Result<()> {
        let ready = self
            .segments
            .iter()
            .position(|s| matches!(s, Segment::Hole(_)))
            .unwrap_or(self.segments.len());
        if ready == 0 {
            return Ok(());
        }
        let mut out = Vec::with_capacity(self.buffered_bytes);
        for seg in self.segments.drain(..ready) {
            if let Segment::Text(s) = seg {
                out.extend_from_slice(s.as_bytes());
            }
        }
        self.buffered_bytes -= out.len();
        // Everything drained was before the first hole, so already fed.
        self.fed = match self.fed {
            (i, _) if i < ready => (0, 0),
            (i, off) => (i - ready, off),
        };
        match &mut self.file {
            Some(f) => {
                self.written_bytes += out.len() as u64;
                f.write_all(&out)
            }
            None => Ok(()),
        }
    }

    /// Writes everything, replacing each remaining hole with `unfilled(id)` (a comment line).
    pub fn finish(&mut self, unfilled: &dyn Fn(HoleId) -> String) -> io::Result<()> {
        for seg in &mut self.segments {
            if let Segment::Hole(id) = *seg {
                let mut text = unfilled(id);
                text.push('\n');
                self.buffered_bytes += text.len();
                *seg = Segment::Text(text);
            }
        }
        self.feed_online();
        if let Some(enc) = self.online.take() {
            crate::online::closed(*enc);
        }
        if let Some(g) = self.graph.take() {
            crate::flowcapture::closed(*g);
        }
        if let Some(c) = self.check.as_mut() {
            c.finish(unfilled)?;
        }
        self.flush_ready()?;
        match &mut self.file {
            Some(f) => f.flush(),
            None => Ok(()),
        }
    }

    /// Writes the text before the first hole, then `last`, without allocating or changing
    /// the buffer (for a signal handler); the writer must not be used afterwards.
    pub fn write_on_signal(&self, last: &[u8]) {
        let Some(mut file) = self.file.as_ref() else {
            return;
        };
        for seg in &self.segments {
            match seg {
                Segment::Text(s) => {
                    if file.write_all(s.as_bytes()).is_err() {
                        return;
                    }
                }
                Segment::Hole(_) => break,
            }
        }
        let _ = file.write_all(last);
    }

    /// Bytes written to the file so far.
    pub fn written_bytes(&self) -> u64 {
        self.written_bytes
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn read(p: &Path) -> String {
        std::fs::read_to_string(p).unwrap()
    }

    #[test]
    fn a_signal_writes_the_text_before_the_first_hole_then_its_line() {
        let dir = std::env::temp_dir().join(format!("timeless-signal-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("w.txt");
        let mut w = Writer::create(&p, 1 << 20).unwrap();
        w.line(format_args!("0 init")).unwrap();
        w.line(format_args!("0 send 1 0 8 6")).unwrap();
        let _ = w.hole();
        w.line(format_args!("0 recv 1 0 8 6")).unwrap();
        assert_eq!(read(&p), "", "all buffered");
        w.write_on_signal(b"# killed\n");
        assert_eq!(read(&p), "0 init\n0 send 1 0 8 6\n# killed\n");
        std::fs::remove_dir_all(&dir).ok();
    }

    #[test]
    fn text_after_a_hole_waits_for_it() {
        let dir = std::env::temp_dir().join(format!("timeless-writer-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let p = dir.join("w.txt");
        let mut w = Writer::create(&p, 1).unwrap();
        w.line(format_args!("0 init")).unwrap();
        assert_eq!(
            read(&p),
            "0 init\n",
            "limit 1 byte: every line is written at once"
        );
        let h = w.hole();
        w.line(format_args!("0 send 1 0 8 6")).unwrap();
        assert_eq!(read(&p), "0 init\n", "held back by the hole");
        assert_eq!(w.open_holes(), 1);
        w.fill(h, format_args!("0 irecv 2 5 8 6")).unwrap();
        assert_eq!(read(&p), "0 init\n0 irecv 2 5 8 6\n0 send 1 0 8 6\n");
        let h2 = w.hole();
        w.line(format_args!("0 finalize")).unwrap();
        w.finish(&|id| format!("# unresolved {id}")).unwrap();
        assert_eq!(h2, 1);
        assert!(read(&p).ends_with("# unresolved 1\n0 finalize\n"));
        std::fs::remove_dir_all(&dir).ok();
    }
}
