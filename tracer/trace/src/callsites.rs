//! Call-site tables (timeless extension, README "Call sites"): what the `@cs=<id>` field of a
//! trace line stands for.
//!
//! The tracer (`timeless trace --callsites`) ends each action record of an MPI call with
//! `@cs=<id>`, the place in the program that made the call: the return address into the
//! application. The trace directory's `callsites.txt` maps each id to that address as a module
//! and an offset in it (ASLR-free: the address minus the module's load bias, what `addr2line`
//! and `nm` take), and, once symbolised, to the function, source file and line:
//!
//! ```text
//! (fields separated by tabs)
//! # timeless call sites: id <TAB> module <TAB> offset <TAB> function <TAB> file <TAB> line
//! 2596441981 /home/u/ring 0x12a9 main /home/u/ring.c 14
//! 40213 /usr/lib/libfoo.so 0x88f0 - - 0
//! ```
//!
//! `-` and line 0 mean unknown (no debug information). An id is [`id_of`] the module's file name
//! and the offset, so every rank of a run, whatever its address-space layout, gives one call
//! site the same id, and the graphs and grammars of SPMD ranks stay equal.

use std::fmt::Write as _;
use std::path::Path;

use crate::error::TraceError;

/// Name of the table inside a trace directory.
pub const FILE: &str = "callsites.txt";

/// First line of a table.
pub const HEADER: &str =
    "# timeless call sites: id <TAB> module <TAB> offset <TAB> function <TAB> file <TAB> line";

/// One call site.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CallSite {
    /// The id of the trace's `@cs=<id>` fields.
    pub id: u32,
    /// Path of the executable or shared library holding the return address.
    pub module: String,
    /// The return address minus the module's load bias.
    pub offset: u64,
    /// Function of the call, when symbolised.
    pub function: Option<String>,
    /// Source file of the call, when the module has debug information.
    pub file: Option<String>,
    /// Source line of the call (0: unknown).
    pub line: u32,
}

impl CallSite {
    /// A short label: `function (file:line)`, `function`, or `module+0xoffset`.
    pub fn label(&self) -> String {
        let base = |p: &str| {
            Path::new(p)
                .file_name()
                .map_or_else(|| p.to_string(), |f| f.to_string_lossy().into_owned())
        };
        match (&self.function, &self.file) {
            (Some(f), Some(file)) if self.line > 0 => {
                format!("{f} ({}:{})", base(file), self.line)
            }
            (Some(f), _) => f.clone(),
            (None, Some(file)) if self.line > 0 => format!("{}:{}", base(file), self.line),
            _ => format!("{}+{:#x}", base(&self.module), self.offset),
        }
    }
}

/// The id of the call site at `offset` in the module `module` (a path; only its file name
/// counts): 32-bit FNV-1a of the file name, a zero byte and the offset's 8 little-endian bytes.
pub fn id_of(module: &str, offset: u64) -> u32 {
    let name = Path::new(module)
        .file_name()
        .map_or(module.as_bytes(), |f| f.as_encoded_bytes());
    let mut h: u32 = 0x811c_9dc5;
    for &b in name.iter().chain(&[0u8]).chain(&offset.to_le_bytes()) {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h
}

fn opt(s: &Option<String>) -> &str {
    s.as_deref().unwrap_or("-")
}

/// The text of a table (header, then one line per site, by id).
pub fn write_table(sites: &[CallSite]) -> String {
    let mut v: Vec<&CallSite> = sites.iter().collect();
    v.sort_by_key(|s| s.id);
    let mut out = String::from(HEADER);
    out.push('\n');
    for s in v {
        let _ = writeln!(
            out,
            "{}\t{}\t{:#x}\t{}\t{}\t{}",
            s.id,
            s.module,
            s.offset,
            opt(&s.function),
            opt(&s.file),
            s.line
        );
    }
    out
}

/// Reads a table's text; `path` names it in errors.
///
/// # Errors
/// A line that is not `id module offset function file line` (tab-separated), or an id listed
/// twice, as [`crate::error::TraceErrorKind::Malformed`] at `path:line`.
pub fn parse_table(text: &str, path: &Path) -> Result<Vec<CallSite>, TraceError> {
    let mut out: Vec<CallSite> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for (i, line) in text.lines().enumerate() {
        let bad =
            |expected: String| TraceError::malformed(path, i as u64 + 1, "call site", expected);
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let f: Vec<&str> = line.split('\t').collect();
        if f.len() != 6 {
            return Err(bad(format!(
                "6 tab-separated fields (id module offset function file line), found {}",
                f.len()
            )));
        }
        let id: u32 = f[0]
            .parse()
            .map_err(|_| bad(format!("an id in 0..2^32, found '{}'", f[0])))?;
        let offset = f[2]
            .strip_prefix("0x")
            .and_then(|h| u64::from_str_radix(h, 16).ok())
            .ok_or_else(|| bad(format!("a hexadecimal offset 0x..., found '{}'", f[2])))?;
        let line_no: u32 = f[5]
            .parse()
            .map_err(|_| bad(format!("a line number, found '{}'", f[5])))?;
        if !seen.insert(id) {
            return Err(bad(format!(
                "call site {id} listed once, it is listed again"
            )));
        }
        let some = |s: &str| (s != "-").then(|| s.to_string());
        out.push(CallSite {
            id,
            module: f[1].to_string(),
            offset,
            function: some(f[3]),
            file: some(f[4]),
            line: line_no,
        });
    }
    Ok(out)
}

/// Reads `dir/callsites.txt`; `Ok(None)` when there is none.
///
/// # Errors
/// As [`parse_table`], or the file cannot be read.
pub fn read_dir_table(dir: &Path) -> Result<Option<Vec<CallSite>>, TraceError> {
    crate::error::read_optional(&dir.join(FILE), parse_table)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_round_trip_and_bad_lines_name_file_and_line() {
        let sites = vec![
            CallSite {
                id: 7,
                module: "/a/b/app".into(),
                offset: 0x12a9,
                function: Some("main".into()),
                file: Some("/a/b/app.c".into()),
                line: 14,
            },
            CallSite {
                id: 3,
                module: "/usr/lib/libx.so".into(),
                offset: 0x88f0,
                function: None,
                file: None,
                line: 0,
            },
        ];
        let text = write_table(&sites);
        assert_eq!(
            text,
            format!("{HEADER}\n3\t/usr/lib/libx.so\t0x88f0\t-\t-\t0\n7\t/a/b/app\t0x12a9\tmain\t/a/b/app.c\t14\n")
        );
        let back = parse_table(&text, Path::new("cs.txt")).unwrap();
        assert_eq!(back, vec![sites[1].clone(), sites[0].clone()]);
        assert_eq!(back[1].label(), "main (app.c:14)");
        assert_eq!(back[0].label(), "libx.so+0x88f0");
        let e = parse_table(&format!("{text}9\tm\t12\t-\t-\t0\n"), Path::new("cs.txt"))
            .unwrap_err()
            .to_string();
        assert!(e.starts_with("cs.txt:4: "), "{e}");
        assert!(e.contains("a hexadecimal offset 0x..., found '12'"), "{e}");
        let e = parse_table(&format!("{text}3\tm\t0x1\t-\t-\t0\n"), Path::new("cs.txt"))
            .unwrap_err()
            .to_string();
        assert!(
            e.starts_with("cs.txt:4: ") && e.contains("listed again"),
            "{e}"
        );
    }

    #[test]
    fn ids_depend_on_the_module_name_and_offset_only() {
        assert_eq!(id_of("/x/app", 0x10), id_of("/y/app", 0x10));
        assert_ne!(id_of("/x/app", 0x10), id_of("/x/app", 0x11));
        assert_ne!(id_of("/x/app", 0x10), id_of("/x/lib.so", 0x10));
        // FNV-1a of "a", 0, then 8 zero bytes.
        let mut h: u32 = 0x811c_9dc5;
        for b in [b'a', 0, 0, 0, 0, 0, 0, 0, 0, 0] {
            h = (h ^ u32::from(b)).wrapping_mul(0x0100_0193);
        }
        assert_eq!(id_of("a", 0), h);
    }
}
