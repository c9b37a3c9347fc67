//! SimGrid's unit tables for speeds, bandwidths, times and sizes.
//!
//! Source: `src/xbt/xbt_parse_units.cpp` of SimGrid 3.32 (`xbt_parse_get_speed`,
//! `xbt_parse_get_bandwidth`, `xbt_parse_get_time`, `xbt_parse_get_size`).
//!
//! A value is a number as read by C's `strtod` (leading blanks, a sign, decimals, an exponent,
//! `inf`, `nan`), immediately followed by a unit taken from a fixed table. The whole rest of the
//! string must be a unit of the table: there is no blank allowed between the number and the unit,
//! and no generic prefix rule.
//!
//! * A missing unit means the default unit (`f`, `Bps`, `s`, `B`). SimGrid warns
//!   ("Deprecated unit-less value") unless the value is 0; [`Quantity::unit_given`] reports it.
//! * An unknown unit is an error ("unknown unit").
//! * `strtod` reporting `ERANGE` (overflow, or an underflow to zero or to a subnormal) is an
//!   error ("value out of range").
//!
//! The tables are generated like SimGrid's `unit_scale`: for a base unit `u` of value `v`,
//! the decimal prefixes `k M G T P E Z Y` multiply by 1000 each, the binary prefixes
//! `Ki Mi Gi Ti Pi Ei Zi Yi` by 1024 each, and the spelled-out prefixes
//! (`kilo mega giga tera peta exa zeta yotta`, note SimGrid's spelling `zeta`) by 1000 each.
//! The scale of each unit is computed by repeated multiplication in that order, and the result is
//! `number × scale`, exactly as SimGrid computes it, so that `10Gbps` is `10 × (0.125 × 1000³)`.
//!
//! | kind      | default | units |
//! |-----------|---------|-------|
//! | speed     | `f`     | `f kf Mf Gf Tf Pf Ef Zf Yf`, `flops kiloflops megaflops ... yottaflops` |
//! | bandwidth | `Bps`   | `Bps kBps MBps ... YBps`, `KiBps MiBps ... YiBps`, and the same with `bps` (bits: ×0.125) |
//! | time      | `s`     | `w d h m s ms us ns ps` |
//! | size      | `B`     | `B kB MB ... YB`, `KiB ... YiB`, and the same with `b` (bits: ×0.125) |
//!
//! Note that the kilo prefix is a lower-case `k` while the kibi prefix is `Ki`: `KBps` is an
//! unknown unit.

use std::sync::OnceLock;

/// The kind of a quantity, which selects the unit table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum UnitKind {
    /// Computing speed in flop/s (default unit `f`).
    Speed,
    /// Bandwidth in bytes per second (default unit `Bps`).
    Bandwidth,
    /// Duration in seconds (default unit `s`).
    Time,
    /// Size in bytes (default unit `B`).
    Size,
}

impl UnitKind {
    /// The unit assumed when a value has none.
    pub fn default_unit(self) -> &'static str {
        match self {
            UnitKind::Speed => "f",
            UnitKind::Bandwidth => "Bps",
            UnitKind::Time => "s",
            UnitKind::Size => "B",
        }
    }

    /// A one-line summary of the accepted units, for error messages.
    pub fn accepted_units(self) -> &'static str {
        match self {
            UnitKind::Speed => {
                "f, kf, Mf, Gf, Tf, Pf, Ef, Zf, Yf, flops, kiloflops, megaflops, gigaflops, teraflops, petaflops, exaflops, zetaflops, yottaflops"
            }
            UnitKind::Bandwidth => {
                "Bps, kBps, MBps, GBps, TBps, PBps, EBps, ZBps, YBps, KiBps, MiBps, GiBps, TiBps, PiBps, EiBps, ZiBps, YiBps, and the same with bps for bits (1 Bps = 8 bps)"
            }
            UnitKind::Time => "w, d, h, m, s, ms, us, ns, ps",
            UnitKind::Size => {
                "B, kB, MB, GB, TB, PB, EB, ZB, YB, KiB, MiB, GiB, TiB, PiB, EiB, ZiB, YiB, and the same with b for bits (1 B = 8 b)"
            }
        }
    }

    fn table(self) -> &'static [(String, f64)] {
        static SPEED: OnceLock<Vec<(String, f64)>> = OnceLock::new();
        static BANDWIDTH: OnceLock<Vec<(String, f64)>> = OnceLock::new();
        static TIME: OnceLock<Vec<(String, f64)>> = OnceLock::new();
        static SIZE: OnceLock<Vec<(String, f64)>> = OnceLock::new();
        match self {
            UnitKind::Speed => SPEED.get_or_init(|| {
                build_table(&[
                    ("f", 1.0, Prefixes::Decimal),
                    ("flops", 1.0, Prefixes::SpelledDecimal),
                ])
            }),
            UnitKind::Bandwidth => BANDWIDTH.get_or_init(|| {
                build_table(&[
                    ("bps", 0.125, Prefixes::Binary),
                    ("bps", 0.125, Prefixes::Decimal),
                    ("Bps", 1.0, Prefixes::Binary),
                    ("Bps", 1.0, Prefixes::Decimal),
                ])
            }),
            UnitKind::Size => SIZE.get_or_init(|| {
                build_table(&[
                    ("b", 0.125, Prefixes::Binary),
                    ("b", 0.125, Prefixes::Decimal),
                    ("B", 1.0, Prefixes::Binary),
                    ("B", 1.0, Prefixes::Decimal),
                ])
            }),
            UnitKind::Time => TIME.get_or_init(|| {
                [
                    ("w", (7 * 24 * 60 * 60) as f64),
                    ("d", (24 * 60 * 60) as f64),
                    ("h", (60 * 60) as f64),
                    ("m", 60.0),
                    ("s", 1.0),
                    ("ms", 1e-3),
                    ("us", 1e-6),
                    ("ns", 1e-9),
                    ("ps", 1e-12),
                ]
                .iter()
                .map(|(u, v)| (u.to_string(), *v))
                .collect()
            }),
        }
    }

    /// The multiplier of `unit`, or `None` if the unit is not in this kind's table.
    pub fn scale(self, unit: &str) -> Option<f64> {
        self.table()
            .iter()
            .find(|(u, _)| u == unit)
            .map(|(_, scale)| *scale)
    }
}

#[derive(Clone, Copy)]
enum Prefixes {
    Decimal,
    SpelledDecimal,
    Binary,
}

/// Mirrors `unit_scale::unit_scale` (the first insertion of a name wins, like `emplace`).
fn build_table(generators: &[(&str, f64, Prefixes)]) -> Vec<(String, f64)> {
    let mut table: Vec<(String, f64)> = Vec::new();
    let mut emplace = |name: String, value: f64| {
        if !table.iter().any(|(n, _)| *n == name) {
            table.push((name, value));
        }
    };
    for &(unit, value, prefixes) in generators {
        let (mult, names): (f64, [&str; 8]) = match prefixes {
            Prefixes::Decimal => (1000.0, ["k", "M", "G", "T", "P", "E", "Z", "Y"]),
            Prefixes::SpelledDecimal => (
                1000.0,
                [
                    "kilo", "mega", "giga", "tera", "peta", "exa", "zeta", "yotta",
                ],
            ),
            Prefixes::Binary => (1024.0, ["Ki", "Mi", "Gi", "Ti", "Pi", "Ei", "Zi", "Yi"]),
        };
        let mut scale = value;
        emplace(unit.to_string(), scale);
        for prefix in names {
            scale *= mult;
            emplace(format!("{prefix}{unit}"), scale);
        }
    }
    table
}

/// A parsed value, in the base unit of its kind (flop/s, B/s, s or B).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Quantity {
    /// The value in the base unit.
    pub value: f64,
    /// False when the text had no unit and the default one was used.
    pub unit_given: bool,
}

/// Why a value could not be parsed.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum UnitError {
    /// The text does not start with a number (after optional blanks).
    NotANumber,
    /// `strtod` would report `ERANGE`: overflow, or underflow to zero or to a subnormal.
    OutOfRange,
    /// Hexadecimal numbers (`0x...`), which `strtod` accepts, are refused here.
    Hexadecimal,
    /// The text after the number is not a unit of the table.
    UnknownUnit(String),
}

/// Parses `text` as a quantity of `kind`, like SimGrid's `xbt_parse_get_value_with_unit`.
///
/// ```
/// use timeless_platform::units::{parse_value, UnitKind};
/// assert_eq!(parse_value(UnitKind::Bandwidth, "10Gbps").unwrap().value, 1.25e9);
/// assert_eq!(parse_value(UnitKind::Time, "50us").unwrap().value, 50.0 * 1e-6);
/// assert!(parse_value(UnitKind::Bandwidth, "1KBps").is_err());
/// ```
pub fn parse_value(kind: UnitKind, text: &str) -> Result<Quantity, UnitError> {
    let (number, consumed) = strtod_prefix(text)?;
    let rest = &text[consumed..];
    let (unit, unit_given) = if rest.is_empty() {
        (kind.default_unit(), false)
    } else {
        (rest, true)
    };
    match kind.scale(unit) {
        Some(scale) => Ok(Quantity {
            value: number * scale,
            unit_given,
        }),
        None => Err(UnitError::UnknownUnit(unit.to_string())),
    }
}

/// C's `isspace` in the "C" locale.
fn is_c_space(b: u8) -> bool {
    matches!(b, b' ' | b'\t' | b'\n' | 0x0b | 0x0c | b'\r')
}

/// Reads the longest prefix of `text` that glibc's `strtod` would read.
///
/// Returns the value and the number of bytes consumed (blanks included).
pub(crate) fn strtod_prefix(text: &str) -> Result<(f64, usize), UnitError> {
    let bytes = text.as_bytes();
    let mut i = 0;
    while i < bytes.len() && is_c_space(bytes[i]) {
        i += 1;
    }
    let start = i;
    let mut negative = false;
    if i < bytes.len() && (bytes[i] == b'+' || bytes[i] == b'-') {
        negative = bytes[i] == b'-';
        i += 1;
    }
    let rest = &text[i..];
    let lower: String = rest
        .chars()
        .take(8)
        .collect::<String>()
        .to_ascii_lowercase();
    if lower.starts_with("inf") {
        let len = if lower.starts_with("infinity") { 8 } else { 3 };
        let value = if negative {
            f64::NEG_INFINITY
        } else {
            f64::INFINITY
        };
        return Ok((value, i + len));
    }
    if lower.starts_with("nan") {
        let mut end = i + 3;
        // glibc also accepts "nan(n-char-sequence)".
        if bytes.get(end) == Some(&b'(') {
            let mut j = end + 1;
            while j < bytes.len() && (bytes[j].is_ascii_alphanumeric() || bytes[j] == b'_') {
                j += 1;
            }
            if bytes.get(j) == Some(&b')') {
                end = j + 1;
            }
        }
        return Ok((f64::NAN, end));
    }
    if lower.starts_with("0x")
        && bytes
            .get(i + 2)
            .is_some_and(|b| b.is_ascii_hexdigit() || *b == b'.')
    {
        return Err(UnitError::Hexadecimal);
    }
    let mut digits = 0;
    let mut nonzero_digit = false;
    while i < bytes.len() && bytes[i].is_ascii_digit() {
        nonzero_digit |= bytes[i] != b'0';
        digits += 1;
        i += 1;
    }
    if i < bytes.len() && bytes[i] == b'.' {
        i += 1;
        while i < bytes.len() && bytes[i].is_ascii_digit() {
            nonzero_digit |= bytes[i] != b'0';
            digits += 1;
            i += 1;
        }
    }
    if digits == 0 {
        return Err(UnitError::NotANumber);
    }
    if i < bytes.len() && (bytes[i] == b'e' || bytes[i] == b'E') {
        let mut j = i + 1;
        if j < bytes.len() && (bytes[j] == b'+' || bytes[j] == b'-') {
            j += 1;
        }
        if j < bytes.len() && bytes[j].is_ascii_digit() {
            while j < bytes.len() && bytes[j].is_ascii_digit() {
                j += 1;
            }
            i = j;
        }
    }
    let literal = &text[start..i];
    // Rust's parser is correctly rounded, like glibc's strtod. It rejects a trailing '.'
    // followed by an exponent-less end only in old versions; normalise "1." to "1.0".
    let parsed: f64 = if literal.ends_with('.') {
        format!("{literal}0").parse()
    } else {
        literal.parse()
    }
    .map_err(|_| UnitError::NotANumber)?;
    if parsed.is_infinite() || (nonzero_digit && (parsed == 0.0 || parsed.is_subnormal())) {
        return Err(UnitError::OutOfRange);
    }
    Ok((parsed, i))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(kind: UnitKind, text: &str) -> f64 {
        parse_value(kind, text).unwrap().value
    }

    #[test]
    fn bandwidth_table() {
        assert_eq!(v(UnitKind::Bandwidth, "10Gbps"), 1.25e9);
        assert_eq!(v(UnitKind::Bandwidth, "1Mibps"), 131072.0);
        assert_eq!(v(UnitKind::Bandwidth, "1Kibps"), 128.0);
        assert_eq!(v(UnitKind::Bandwidth, "1kbps"), 125.0);
        assert_eq!(v(UnitKind::Bandwidth, "125MBps"), 125e6);
        assert_eq!(v(UnitKind::Bandwidth, "2.25GBps"), 2.25e9);
        assert_eq!(v(UnitKind::Bandwidth, "1KiBps"), 1024.0);
        assert_eq!(v(UnitKind::Bandwidth, "1kBps"), 1000.0);
        assert_eq!(v(UnitKind::Bandwidth, "3YBps"), 3.0 * 1e24);
        assert_eq!(
            parse_value(UnitKind::Bandwidth, "1KBps"),
            Err(UnitError::UnknownUnit("KBps".into()))
        );
        assert_eq!(
            parse_value(UnitKind::Bandwidth, "1 MBps"),
            Err(UnitError::UnknownUnit(" MBps".into()))
        );
    }

    #[test]
    fn speed_table() {
        assert_eq!(v(UnitKind::Speed, "1Gf"), 1e9);
        assert_eq!(v(UnitKind::Speed, "1.17E9"), 1.17e9);
        assert_eq!(v(UnitKind::Speed, "2gigaflops"), 2e9);
        assert_eq!(v(UnitKind::Speed, "1zetaflops"), 1e21);
        assert!(parse_value(UnitKind::Speed, "1zettaflops").is_err());
        assert!(parse_value(UnitKind::Speed, "1GF").is_err());
        assert!(!parse_value(UnitKind::Speed, "100").unwrap().unit_given);
        assert!(parse_value(UnitKind::Speed, "100f").unwrap().unit_given);
    }

    #[test]
    fn time_table() {
        assert_eq!(v(UnitKind::Time, "50us"), 50.0 * 1e-6);
        assert_eq!(v(UnitKind::Time, "16.67E-6"), 16.67e-6);
        assert_eq!(v(UnitKind::Time, "2m"), 120.0);
        assert_eq!(v(UnitKind::Time, "1w"), 604800.0);
        assert_eq!(v(UnitKind::Time, "3ps"), 3.0 * 1e-12);
        assert!(parse_value(UnitKind::Time, "1µs").is_err());
        assert!(parse_value(UnitKind::Time, "1sec").is_err());
    }

    #[test]
    fn size_table() {
        assert_eq!(v(UnitKind::Size, "1KiB"), 1024.0);
        assert_eq!(v(UnitKind::Size, "8b"), 1.0);
        assert_eq!(v(UnitKind::Size, "1MB"), 1e6);
        assert_eq!(v(UnitKind::Size, "1Mib"), 131072.0);
    }

    #[test]
    fn strtod_like_numbers() {
        assert_eq!(v(UnitKind::Time, " 12s"), 12.0);
        assert_eq!(v(UnitKind::Time, "+.5s"), 0.5);
        assert_eq!(v(UnitKind::Time, "5."), 5.0);
        assert_eq!(v(UnitKind::Time, "-0"), 0.0);
        assert_eq!(
            parse_value(UnitKind::Time, "1e"),
            Err(UnitError::UnknownUnit("e".into()))
        );
        assert_eq!(
            parse_value(UnitKind::Time, "1.5.3"),
            Err(UnitError::UnknownUnit(".3".into()))
        );
        assert_eq!(parse_value(UnitKind::Time, ""), Err(UnitError::NotANumber));
        assert_eq!(parse_value(UnitKind::Time, "s"), Err(UnitError::NotANumber));
        assert_eq!(
            parse_value(UnitKind::Time, "1e400"),
            Err(UnitError::OutOfRange)
        );
        assert_eq!(
            parse_value(UnitKind::Time, "1e-310"),
            Err(UnitError::OutOfRange)
        );
        assert_eq!(
            parse_value(UnitKind::Time, "0x10"),
            Err(UnitError::Hexadecimal)
        );
        assert!(v(UnitKind::Time, "inf").is_infinite());
        assert!(v(UnitKind::Time, "infinitys").is_infinite());
        assert!(!parse_value(UnitKind::Time, "infinity").unwrap().unit_given);
    }
}
