//! Mutations of byte strings, from a seeded generator (reproducible runs).
//!
//! Each mutation stacks one to four edits chosen among: flip a bit, set a byte to a
//! format-significant one, delete a range, duplicate a range, insert a dictionary word (the
//! target's keywords and numbers at the edges of every type: `-1`, `4294967296`, `1e308`,
//! `nan`...), replace a run of digits by such a number, splice two inputs, swap two lines.
//! Inputs are capped at [`MAX_LEN`] bytes.

/// The longest input a mutation produces, in bytes.
pub const MAX_LEN: usize = 1 << 16;

/// Numbers at the edges of the types parsers convert to, and other troublemakers.
pub const NUMBERS: &[&str] = &[
    "0",
    "-0",
    "1",
    "-1",
    "2",
    "255",
    "256",
    "65535",
    "65536",
    "2147483647",
    "2147483648",
    "-2147483649",
    "4294967295",
    "4294967296",
    "9223372036854775807",
    "9223372036854775808",
    "18446744073709551615",
    "18446744073709551616",
    "99999999999999999999999999",
    "1e308",
    "1e309",
    "-1e308",
    "1e-320",
    "5e-324",
    "nan",
    "NaN",
    "inf",
    "-inf",
    "infinity",
    "0x10",
    "1.",
    ".5",
    "1e",
    "+",
    "-",
    "",
    "\u{0}",
    "\u{ff}",
    "é",
    "\t",
    "\r\n",
];

/// Bytes with a meaning in the formats: separators, quotes, brackets.
const SIGNIFICANT: &[u8] = b"\n \t#:=,<>\"'/[]{}-.0129eE\x00\xff";

/// A xorshift64* generator: small, fast, and reproducible from its seed.
#[derive(Debug, Clone)]
pub struct Rng(u64);

impl Rng {
    /// A generator from `seed` (0 is replaced by a fixed non-zero state).
    pub fn new(seed: u64) -> Rng {
        Rng(if seed == 0 {
            0x9e37_79b9_7f4a_7c15
        } else {
            seed
        })
    }

    /// The next 64 random bits.
    pub fn next_u64(&mut self) -> u64 {
        self.0 ^= self.0 >> 12;
        self.0 ^= self.0 << 25;
        self.0 ^= self.0 >> 27;
        self.0.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }

    /// A number in `0..n` (`n` > 0).
    pub fn below(&mut self, n: usize) -> usize {
        (self.next_u64() % n as u64) as usize
    }
}

/// Mutates inputs for one target.
pub struct Mutator<'a> {
    rng: Rng,
    dictionary: &'a [&'a str],
}

impl<'a> Mutator<'a> {
    /// A mutator drawing from `seed`, inserting words of `dictionary` and of [`NUMBERS`].
    pub fn new(seed: u64, dictionary: &'a [&'a str]) -> Self {
        Mutator {
            rng: Rng::new(seed),
            dictionary,
        }
    }

    /// Picks an index in `0..n` (`n` > 0).
    pub fn pick(&mut self, n: usize) -> usize {
        self.rng.below(n)
    }

    /// A mutation of `input`; `other` is a second input to splice with.
    pub fn mutate(&mut self, input: &[u8], other: &[u8]) -> Vec<u8> {
        let mut v = input.to_vec();
        for _ in 0..1 + self.rng.below(4) {
            self.edit(&mut v, other);
        }
        v.truncate(MAX_LEN);
        v
    }

    fn word(&mut self) -> &'a str {
        let n = self.dictionary.len() + NUMBERS.len();
        let i = self.rng.below(n);
        if i < self.dictionary.len() {
            self.dictionary[i]
        } else {
            NUMBERS[i - self.dictionary.len()]
        }
    }

    fn edit(&mut self, v: &mut Vec<u8>, other: &[u8]) {
        let len = v.len();
        match self.rng.below(8) {
            0 if len > 0 => {
                let i = self.rng.below(len);
                v[i] ^= 1 << self.rng.below(8);
            }
            1 if len > 0 => {
                let i = self.rng.below(len);
                v[i] = SIGNIFICANT[self.rng.below(SIGNIFICANT.len())];
            }
            2 if len > 0 => {
                let i = self.rng.below(len);
                let n = 1 + self.rng.below(16.min(len - i));
                v.drain(i..i + n);
            }
            3 if len > 0 => {
                let i = self.rng.below(len);
                let n = 1 + self.rng.below(64.min(len - i));
                let chunk = v[i..i + n].to_vec();
                let at = self.rng.below(len + 1);
                v.splice(at..at, chunk);
            }
            4 => {
                let w = self.word().as_bytes().to_vec();
                let at = self.rng.below(len + 1);
                v.splice(at..at, w);
            }
            5 if len > 0 => {
                // Replace a run of digits (or insert, where there is none) by a number.
                let start = self.rng.below(len);
                let Some(i) = (start..len).find(|&i| v[i].is_ascii_digit()) else {
                    return;
                };
                let end = (i..len).find(|&j| !v[j].is_ascii_digit()).unwrap_or(len);
                let w = NUMBERS[self.rng.below(NUMBERS.len())].as_bytes().to_vec();
                v.splice(i..end, w);
            }
            6 if !other.is_empty() => {
                let cut = self.rng.below(len + 1);
                let from = self.rng.below(other.len());
                v.truncate(cut);
                v.extend_from_slice(&other[from..]);
            }
            7 => {
                let lines: Vec<&[u8]> = v.split(|&b| b == b'\n').collect();
                if lines.len() > 2 {
                    let a = self.rng.below(lines.len());
                    let b = self.rng.below(lines.len());
                    let mut l: Vec<Vec<u8>> = lines.iter().map(|s| s.to_vec()).collect();
                    l.swap(a, b);
                    *v = l.join(&b'\n');
                }
            }
            _ => {
                let w = self.word().as_bytes().to_vec();
                v.extend_from_slice(&w);
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn same_seed_same_mutations() {
        let mut a = Mutator::new(7, &["send"]);
        let mut b = Mutator::new(7, &["send"]);
        for _ in 0..100 {
            assert_eq!(
                a.mutate(b"0 send 1 1000\n", b"1 recv"),
                b.mutate(b"0 send 1 1000\n", b"1 recv")
            );
        }
    }

    #[test]
    fn mutations_are_capped() {
        let mut m = Mutator::new(1, &[]);
        let big = vec![b'x'; MAX_LEN];
        for _ in 0..20 {
            assert!(m.mutate(&big, &big).len() <= MAX_LEN);
        }
    }
}
