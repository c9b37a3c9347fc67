//! The trace's list file (SimGrid's `-replay` argument) and metadata file (how the trace was
//! acquired), both written by rank 0 at start-up.

use std::fmt::Write as _;
use std::io;
use std::path::Path;

/// Name of rank `r`'s trace file inside the trace directory.
pub fn rank_file(rank: u32) -> String {
    format!("rank-{rank}.txt")
}

/// Name of the list file: one rank file per line, relative to the trace directory.
pub const LIST_FILE: &str = "trace-list.txt";

/// Name of the metadata file.
pub const META_FILE: &str = "trace-meta.json";

/// Writes the list file. Paths are relative to the directory; SimGrid opens them relative to
/// its current directory, so `smpirun -replay` runs from inside the trace directory.
pub fn write_list(dir: &Path, ranks: u32) -> io::Result<()> {
    let mut s = String::new();
    for r in 0..ranks {
        s.push_str(&rank_file(r));
        s.push('\n');
    }
    std::fs::write(dir.join(LIST_FILE), s)
}

/// A JSON value, written by hand to keep the tracer free of serialisation crates.
pub enum Json {
    Str(String),
    Num(f64),
    Int(i64),
    Bool(bool),
    Arr(Vec<Json>),
    Obj(Vec<(&'static str, Json)>),
}

impl Json {
    pub fn str(s: impl Into<String>) -> Json {
        Json::Str(s.into())
    }

    /// Pretty-printed with two-space indentation.
    pub fn render(&self) -> String {
        let mut out = String::new();
        self.write(&mut out, 0);
        out.push('\n');
        out
    }

    fn write(&self, out: &mut String, indent: usize) {
        match self {
            Json::Str(s) => escape(out, s),
            Json::Num(v) if v.is_finite() => {
                let _ = write!(out, "{v:e}");
            }
            Json::Num(_) => out.push_str("null"),
            Json::Int(v) => {
                let _ = write!(out, "{v}");
            }
            Json::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Json::Arr(items) => {
                let scalar = items
                    .iter()
                    .all(|i| !matches!(i, Json::Arr(_) | Json::Obj(_)));
                out.push('[');
                for (k, item) in items.iter().enumerate() {
                    if k > 0 {
                        out.push(',');
                    }
                    if scalar {
                        if k > 0 {
                            out.push(' ');
                        }
                    } else {
                        newline(out, indent + 1);
                    }
                    item.write(out, indent + 1);
                }
                if !scalar && !items.is_empty() {
                    newline(out, indent);
                }
                out.push(']');
            }
            Json::Obj(fields) => {
                out.push('{');
                for (k, (name, value)) in fields.iter().enumerate() {
                    if k > 0 {
                        out.push(',');
                    }
                    newline(out, indent + 1);
                    escape(out, name);
                    out.push_str(": ");
                    value.write(out, indent + 1);
                }
                if !fields.is_empty() {
                    newline(out, indent);
                }
                out.push('}');
            }
        }
    }
}

fn newline(out: &mut String, indent: usize) {
    out.push('\n');
    for _ in 0..indent {
        out.push_str("  ");
    }
}

fn escape(out: &mut String, s: &str) {
    out.push('"');
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\u{:04x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push('"');
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_nested_values_with_escapes() {
        let j = Json::Obj(vec![
            ("name", Json::str("a\"b\n")),
            ("speed", Json::Num(1.5e9)),
            ("ranks", Json::Arr(vec![Json::Int(0), Json::Int(1)])),
            (
                "hosts",
                Json::Arr(vec![Json::Obj(vec![("ok", Json::Bool(true))])]),
            ),
        ]);
        let s = j.render();
        assert!(s.contains(r#""name": "a\"b\n""#), "{s}");
        assert!(s.contains(r#""speed": 1.5e9"#), "{s}");
        assert!(s.contains(r#""ranks": [0, 1]"#), "{s}");
        assert!(s.contains(r#""ok": true"#), "{s}");
    }
}
