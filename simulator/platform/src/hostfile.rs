//! SimGrid/smpirun hostfiles: which host each rank runs on.
//!
//! Sources: `smpirun` (the shell script of SimGrid 3.32, which unrolls `name:k` lines with an
//! embedded Python snippet) and `src/smpi/internals/smpi_deployment.cpp` (`smpi_get_hosts`,
//! `smpi_deployment_smpirun`).
//!
//! Rules:
//!
//! * The file is split into lines at `\n` (C++ `std::getline`); empty lines are skipped; a last
//!   line without a newline counts. Lines are **not trimmed**: `"h0 "` or `"h0\r"` names no
//!   host and is an error, as in SimGrid.
//! * If any character of the file is a `:`, smpirun first rewrites the whole file: a line
//!   `name:k` (split at its **last** `:`, `k` read by Python's `int`, so blanks around it are
//!   fine) becomes `k` lines `name` (`name` is kept as is, blanks included; `k ≤ 0` gives none);
//!   every other line is stripped of surrounding whitespace. Python reads in universal-newline
//!   mode, so `\r\n` and lone `\r` also end lines in that case. A `k` that Python cannot read
//!   is an error here (smpirun would silently drop the rest of the file).
//! * Rank `i` runs on `hosts[i % hosts.len()]`; `np` defaults to the number of hosts listed
//!   (0 also means the default, as in SimGrid). An empty list is an error.

use crate::error::PlatformError;

/// One host name of a hostfile, with the 1-based line it comes from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HostfileEntry {
    /// The host name exactly as it will be looked up.
    pub name: String,
    /// Line of the hostfile it comes from.
    pub line: u32,
}

/// Python's `int()` on a string: surrounding whitespace, a sign, digits with single `_`
/// separators.
fn python_int(text: &str) -> Option<i64> {
    let s = text.trim();
    let (negative, digits) = match s.as_bytes().first() {
        Some(b'-') => (true, &s[1..]),
        Some(b'+') => (false, &s[1..]),
        _ => (false, s),
    };
    if digits.is_empty()
        || digits.starts_with('_')
        || digits.ends_with('_')
        || digits.contains("__")
        || !digits.chars().all(|c| c.is_ascii_digit() || c == '_')
    {
        return None;
    }
    let value: i64 = digits.replace('_', "").parse().ok()?;
    Some(if negative { -value } else { value })
}

/// Expands the text of a hostfile into the list of host names, as smpirun does.
/// `origin` names the file in error messages.
pub fn parse_hostfile(text: &str, origin: &str) -> Result<Vec<HostfileEntry>, PlatformError> {
    let mut entries = Vec::new();
    if text.contains(':') {
        // Python universal newlines: \r\n, \r and \n all end a line.
        let normalized = text.replace("\r\n", "\n").replace('\r', "\n");
        for (index, line) in normalized.split('\n').enumerate() {
            let line_no = index as u32 + 1;
            match line.rfind(':') {
                Some(pos) => {
                    let (name, count) = (&line[..pos], &line[pos + 1..]);
                    let k = python_int(count).ok_or_else(|| PlatformError::Invalid {
                        path: origin.to_string(),
                        line: line_no,
                        message: format!(
                            "'{line}': the count after the last ':' must be an integer (smpirun's unrolling fails on it)"
                        ),
                    })?;
                    let total = entries.len() as i64 + k.max(0);
                    if !name.is_empty() && total > crate::deployment::MAX_RANKS as i64 {
                        return Err(PlatformError::Invalid {
                            path: origin.to_string(),
                            line: line_no,
                            message: format!(
                                "'{line}': the hostfile would place {total} ranks, more than the limit of {} (1 << 24)",
                                crate::deployment::MAX_RANKS
                            ),
                        });
                    }
                    for _ in 0..k.max(0) {
                        if !name.is_empty() {
                            entries.push(HostfileEntry {
                                name: name.to_string(),
                                line: line_no,
                            });
                        }
                    }
                }
                None => {
                    let name = line.trim();
                    if !name.is_empty() {
                        entries.push(HostfileEntry {
                            name: name.to_string(),
                            line: line_no,
                        });
                    }
                }
            }
        }
    } else {
        for (index, line) in text.split('\n').enumerate() {
            if !line.is_empty() {
                entries.push(HostfileEntry {
                    name: line.to_string(),
                    line: index as u32 + 1,
                });
            }
        }
    }
    if entries.is_empty() {
        return Err(PlatformError::Invalid {
            path: origin.to_string(),
            line: 0,
            message: format!("smpirun: the hostfile '{origin}' is empty"),
        });
    }
    Ok(entries)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(text: &str) -> Vec<String> {
        parse_hostfile(text, "h")
            .unwrap()
            .into_iter()
            .map(|e| e.name)
            .collect()
    }

    #[test]
    fn plain_lines_are_not_trimmed() {
        assert_eq!(names("a\n\nb \nc"), vec!["a", "b ", "c"]);
        assert_eq!(names("a\r\nb\r\n"), vec!["a\r", "b\r"]);
    }

    #[test]
    fn colon_lines_are_unrolled() {
        assert_eq!(names("a:2\nb\n"), vec!["a", "a", "b"]);
        assert_eq!(names("a: 3 \n  b  \r\nc:0\n"), vec!["a", "a", "a", "b"]);
        assert_eq!(names("x:y:2\n"), vec!["x:y", "x:y"]);
        assert_eq!(names("a :1\n"), vec!["a "]);
        let lines: Vec<u32> = parse_hostfile("a\nb:2\n", "h")
            .unwrap()
            .iter()
            .map(|e| e.line)
            .collect();
        assert_eq!(lines, vec![1, 2, 2]);
    }

    #[test]
    fn errors() {
        assert!(parse_hostfile("\n\n", "h").is_err());
        let err = parse_hostfile("a\nb:two\n", "hf").unwrap_err().to_string();
        assert!(err.starts_with("hf:2:"), "{err}");
    }
}
