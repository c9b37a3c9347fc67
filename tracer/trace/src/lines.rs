//! Lines of a text file read a block at a time, validated as UTF-8 once per block.
//!
//! A TI trace line is short (`0 compute 1e6`, 14 bytes) and a replay decodes millions of them.
//! `BufRead::read_until` copies each line into a buffer and `str::from_utf8` then validates it on
//! its own: for lines this short both cost more than decoding the action (a fifth of the decoder
//! thread's time on the 16-rank ring of `validation/bench`). [`LineReader`] instead reads a block
//! of the file into a `String` (validated in one pass by `String::from_utf8`, which is fast on
//! long ASCII runs) and hands out `&str` slices of it, found by a word-at-a-time scan
//! (`find_newline`); nothing is copied per line.
//!
//! Example: with a 16-byte block, the file `0 init\n0 compute 1e6\n` is read as the block
//! `0 init\n0 compute` (valid, one line: `0 init\n`), then the unread ` 0 compute` is moved to the
//! front and the next read appends ` 1e6\n`: the second line is `0 compute 1e6\n`. A block whose
//! last bytes are the start of a multi-byte character keeps them aside until the next read
//! completes it. An invalid byte ends the text where it lies: the lines before it are returned,
//! and the line holding it is reported as [`TraceErrorKind::NotUtf8`] with the byte's offset in
//! the file, as a line-by-line validation would.

use std::io::{ErrorKind, Read};

use crate::error::TraceErrorKind;

/// A line reader over `R`, a block of at most `block` bytes read at a time.
#[derive(Debug)]
pub struct LineReader<R> {
    inner: R,
    /// Validated text read so far; `text[pos..]` is not handed out yet.
    text: String,
    pos: usize,
    /// Bytes after `pos` already searched for a newline (none found).
    searched: usize,
    /// File offset of `text[0]`.
    text_offset: u64,
    /// Bytes that start a multi-byte character not complete yet (at most 3).
    carry: Vec<u8>,
    /// The buffer's length at a read: the carried bytes of a partial line, then as many read
    /// as fill it (at least as many as are carried).
    block: usize,
    /// `inner` returned end of file.
    eof: bool,
    /// The first byte that is not UTF-8 and its file offset: `text` ends just before it.
    bad: Option<(u8, u64)>,
}

impl<R: Read> LineReader<R> {
    /// A reader of `inner` reading `block` bytes at a time (at least 1).
    pub fn new(inner: R, block: usize) -> Self {
        LineReader {
            inner,
            text: String::new(),
            pos: 0,
            searched: 0,
            text_offset: 0,
            carry: Vec::new(),
            block: block.max(1),
            eof: false,
            bad: None,
        }
    }

    /// The next line with its newline (the last line may have none), or `None` at the end.
    ///
    /// # Errors
    /// [`TraceErrorKind::Io`] from `inner`, or [`TraceErrorKind::NotUtf8`] for the line holding a
    /// byte that is not UTF-8 (with that byte and its 0-based file offset).
    pub fn next_line(&mut self) -> Result<Option<&str>, TraceErrorKind> {
        loop {
            let from = self.pos + self.searched;
            if let Some(i) = find_newline(&self.text.as_bytes()[from..]) {
                let start = self.pos;
                self.pos = from + i + 1;
                self.searched = 0;
                return Ok(Some(&self.text[start..self.pos]));
            }
            // A line longer than a block is searched once, not again after each read.
            self.searched = self.text.len() - self.pos;
            if let Some((byte, offset)) = self.bad {
                return Err(TraceErrorKind::NotUtf8 { byte, offset });
            }
            if self.eof {
                // (A file ending inside a multi-byte character set `bad` in `fill`.)
                if self.pos == self.text.len() {
                    return Ok(None);
                }
                let start = self.pos;
                self.pos = self.text.len();
                self.searched = 0;
                return Ok(Some(&self.text[start..]));
            }
            self.fill()?;
        }
    }

    /// Reads the next block after the unread text.
    fn fill(&mut self) -> Result<(), TraceErrorKind> {
        let mut bytes = std::mem::take(&mut self.text).into_bytes();
        bytes.drain(..self.pos);
        self.text_offset += self.pos as u64;
        self.pos = 0;
        let carried = self.carry.len();
        bytes.append(&mut self.carry);
        let old = bytes.len();
        // The buffer stays one block long: the carried partial line plus what fills the rest
        // (a line longer than the block doubles it instead), so that a reader's buffer does not
        // grow to two blocks by carrying a few bytes.
        let len = self.block.max(2 * old).max(old + 1);
        bytes.resize(len, 0);
        let n = loop {
            match self.inner.read(&mut bytes[old..]) {
                Ok(n) => break n,
                Err(e) if e.kind() == ErrorKind::Interrupted => continue,
                Err(e) => {
                    // Back to the state before the read: the text, and the carried bytes aside.
                    bytes.truncate(old);
                    self.carry = bytes.split_off(old - carried);
                    self.text = String::from_utf8(bytes).unwrap_or_default();
                    return Err(TraceErrorKind::Io(e));
                }
            }
        };
        bytes.truncate(old + n);
        self.eof = n == 0;
        self.text = match String::from_utf8(bytes) {
            Ok(s) => s,
            Err(e) => {
                let valid = e.utf8_error().valid_up_to();
                let incomplete = e.utf8_error().error_len().is_none();
                let mut bytes = e.into_bytes();
                if incomplete && !self.eof {
                    self.carry = bytes.split_off(valid);
                } else {
                    self.bad = Some((bytes[valid], self.text_offset + valid as u64));
                    bytes.truncate(valid);
                }
                // The prefix up to `valid` is UTF-8: this does not fail.
                String::from_utf8(bytes).unwrap_or_default()
            }
        };
        Ok(())
    }
}

/// Bytes [`find_newline`] scans a word at a time before it hands the rest to `memchr`.
const SHORT_SCAN: usize = 32;

/// The position of the first `\n` in `hay`. A trace line is 10-30 bytes, and `memchr`'s
/// vector search costs about 45 instructions per call before its first comparison (a third
/// of the line reader's work on the 16-rank ring of `validation/bench`), so the first
/// [`SHORT_SCAN`] bytes are tested 8 at a time in a `u64` (the zero-byte test of `w ^ 0x0a…0a`:
/// `(x - 0x01…01) & !x & 0x80…80` is non-zero iff some byte of `x` is zero, and its lowest set
/// bit is in the first such byte; a borrow can only mark bytes after a zero one), and
/// `memchr` searches the rest.
#[inline]
fn find_newline(hay: &[u8]) -> Option<usize> {
    const ONES: u64 = 0x0101_0101_0101_0101;
    const HIGHS: u64 = 0x8080_8080_8080_8080;
    const NEWLINES: u64 = ONES * b'\n' as u64;
    let short = &hay[..hay.len().min(SHORT_SCAN)];
    let mut words = short.chunks_exact(8);
    for (k, word) in words.by_ref().enumerate() {
        let x = u64::from_le_bytes(word.try_into().unwrap_or_default()) ^ NEWLINES;
        let zero = x.wrapping_sub(ONES) & !x & HIGHS;
        if zero != 0 {
            return Some(8 * k + (zero.trailing_zeros() / 8) as usize);
        }
    }
    let from = short.len() - words.remainder().len();
    memchr::memchr(b'\n', &hay[from..]).map(|i| from + i)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn lines(input: &[u8], block: usize) -> Vec<Result<String, String>> {
        let mut r = LineReader::new(input, block);
        let mut out = Vec::new();
        loop {
            match r.next_line() {
                Ok(Some(l)) => out.push(Ok(l.to_string())),
                Ok(None) => return out,
                Err(e) => {
                    out.push(Err(e.to_string()));
                    return out;
                }
            }
        }
    }

    #[test]
    fn the_word_scan_finds_the_first_newline_at_every_position() {
        // Every length up to past the word scan, the newline at every position, with
        // newlines after it and bytes 0x0a ± 1 and 0x8a before it (the zero-byte test's
        // neighbours): the answer is `iter().position`'s.
        for len in 1..=2 * SHORT_SCAN + 3 {
            for at in 0..len {
                let mut hay: Vec<u8> = (0..len)
                    .map(|i| [b'\t', b'\x0b', 0x8a, b'7'][i % 4])
                    .collect();
                hay[at] = b'\n';
                for later in hay.iter_mut().skip(at + 1).step_by(3) {
                    *later = b'\n';
                }
                assert_eq!(find_newline(&hay), Some(at), "len {len}, newline at {at}");
            }
            let none: Vec<u8> = (0..len).map(|i| [b'\t', b'\x0b', 0x8a, 0][i % 4]).collect();
            assert_eq!(find_newline(&none), None, "len {len}, no newline");
        }
        assert_eq!(find_newline(b""), None);
    }

    #[test]
    fn the_doc_example_splits_across_blocks() {
        let got = lines(b"0 init\n0 compute 1e6\n", 16);
        assert_eq!(
            got,
            vec![Ok("0 init\n".into()), Ok("0 compute 1e6\n".into())]
        );
        // One byte at a time and a block larger than the file give the same lines.
        assert_eq!(lines(b"0 init\n0 compute 1e6\n", 1), got);
        assert_eq!(lines(b"0 init\n0 compute 1e6\n", 1 << 16), got);
    }

    #[test]
    fn a_last_line_without_newline_and_blank_lines_are_kept() {
        let got = lines(b"a\n\nb", 64);
        assert_eq!(got, vec![Ok("a\n".into()), Ok("\n".into()), Ok("b".into())]);
        assert!(lines(b"", 64).is_empty());
    }

    #[test]
    fn a_long_line_grows_the_text() {
        let long = "x".repeat(1000);
        let input = format!("{long}\nend\n");
        let got = lines(input.as_bytes(), 64);
        assert_eq!(got, vec![Ok(format!("{long}\n")), Ok("end\n".into())]);
    }

    #[test]
    fn a_character_split_by_a_block_is_joined() {
        // 'é' is 0xc3 0xa9: place it across the 64-byte boundary (bytes 63 and 64).
        let mut input = "y".repeat(63).into_bytes();
        input.extend_from_slice("é\nz\n".as_bytes());
        let got = lines(&input, 64);
        assert_eq!(
            got,
            vec![Ok(format!("{}é\n", "y".repeat(63))), Ok("z\n".into())]
        );
    }

    #[test]
    fn an_invalid_byte_is_named_with_its_offset_after_the_good_lines() {
        // Line 2 starts at offset 4; its third byte (offset 6) is 0xff.
        let got = lines(b"abc\nde\xffg\nh\n", 64);
        assert_eq!(got.len(), 2);
        assert_eq!(got[0], Ok("abc\n".into()));
        let err = got[1].as_ref().unwrap_err();
        assert!(err.contains("0xff") && err.contains("offset 6"), "{err}");
        // The same with the bad byte in a later block.
        let mut input = "q\n".repeat(40).into_bytes();
        input.extend_from_slice(b"\xfe\n");
        let got = lines(&input, 64);
        assert_eq!(got.len(), 41);
        let err = got[40].as_ref().unwrap_err();
        assert!(err.contains("0xfe") && err.contains("offset 80"), "{err}");
    }

    /// Reads its parts one per call, an `Err` part as an I/O error.
    struct Parts(Vec<Result<&'static [u8], ()>>);

    impl Read for Parts {
        fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
            if self.0.is_empty() {
                return Ok(0);
            }
            match self.0.remove(0) {
                Ok(p) => {
                    buf[..p.len()].copy_from_slice(p);
                    Ok(p.len())
                }
                Err(()) => Err(std::io::Error::other("disk error")),
            }
        }
    }

    #[test]
    fn an_io_error_is_returned_and_loses_nothing_read_before() {
        // "a" and the first byte of 'é' (0xc3 0xa9) are read, then the read fails.
        let mut r = LineReader::new(Parts(vec![Ok(b"a\xc3"), Err(()), Ok(b"\xa9\n")]), 64);
        assert!(matches!(r.next_line(), Err(TraceErrorKind::Io(_))));
        assert_eq!(r.next_line().unwrap(), Some("aé\n"));
        assert_eq!(r.next_line().unwrap(), None);
    }

    #[test]
    fn a_file_ending_inside_a_character_is_an_error() {
        let got = lines(b"ok\n\xc3", 64);
        assert_eq!(got[0], Ok("ok\n".into()));
        let err = got[1].as_ref().unwrap_err();
        assert!(err.contains("0xc3") && err.contains("offset 3"), "{err}");
    }
}
