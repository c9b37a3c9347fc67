//! The cases of `timeless validate`: a program, its arguments and its rank count, and how its
//! runs are laid out. Either one program on every `-n` count (`-- PROGRAM ARGS`), or a cases
//! file (`--cases FILE`) giving each program its own arguments per rank count, so that every
//! run lasts long enough for the launch noise not to matter.
//!
//! Cases file: one case per line, `#` starts a comment, fields separated by blanks:
//!
//! ```text
//! <label> <ranks> [fold=K] [trace-fold=K] [reps=R] <program> [args...]
//! ```
//!
//! * `fold=K`: both the untraced and the traced runs are folded K ranks per core (default: as
//!   `timeless trace` does, folded only with more ranks than cores);
//! * `trace-fold=K`: only the traced run is folded K per core (on ⌈ranks/K⌉ cores): another
//!   acquisition mode for the same prediction (seed 003 §4.1);
//! * `reps=R`: untraced runs of this case (default `--reps`; 0: prediction only);
//! * `program`: a path, or a bare name looked up in `--bin-dir` when given.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

/// One program at one rank count.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Case {
    /// Name of the program in tables and plots.
    pub label: String,
    /// MPI ranks.
    pub np: usize,
    /// Ranks per core of the untraced and traced runs (`None`: automatic).
    pub fold: Option<usize>,
    /// Ranks per core of the traced run only.
    pub trace_fold: Option<usize>,
    /// Untraced runs (`None`: the `--reps` default).
    pub reps: Option<usize>,
    /// Program and arguments.
    pub command: Vec<OsString>,
}

impl Case {
    /// A directory name for this case's trace: `<label>-n<np>[-f<K>][-tf<K>]`, with characters
    /// other than letters, digits, `-`, `_` and `.` replaced by `_`.
    pub fn dir_name(&self) -> String {
        let mut s: String = self
            .label
            .chars()
            .map(|c| {
                if c.is_ascii_alphanumeric() || "-_.".contains(c) {
                    c
                } else {
                    '_'
                }
            })
            .collect();
        s.push_str(&format!("-n{}", self.np));
        if let Some(k) = self.fold {
            s.push_str(&format!("-f{k}"));
        }
        if let Some(k) = self.trace_fold {
            s.push_str(&format!("-tf{k}"));
        }
        s
    }
}

/// The cases of `-n` counts × one command (label: the program's file name).
pub fn from_command(np: &[usize], fold: Option<usize>, command: &[OsString]) -> Vec<Case> {
    let label = Path::new(&command[0])
        .file_name()
        .map_or_else(|| "program".into(), |n| n.to_string_lossy().to_string());
    np.iter()
        .map(|&np| Case {
            label: label.clone(),
            np,
            fold,
            trace_fold: None,
            reps: None,
            command: command.to_vec(),
        })
        .collect()
}

/// Parses a cases file's text; `origin` names it in errors, `bin_dir` resolves bare program
/// names.
///
/// # Errors
/// `origin:line: what was expected`, for a missing field, a rank count or K that is not a
/// number >= 1, an unknown `key=value` option, or a file without any case.
pub fn parse(text: &str, origin: &str, bin_dir: Option<&Path>) -> Result<Vec<Case>, String> {
    let mut cases = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let at = |what: String| format!("{origin}:{}: {what}", i + 1);
        let line = line.split('#').next().unwrap_or("").trim();
        if line.is_empty() {
            continue;
        }
        let mut f = line.split_whitespace();
        let label = f.next().expect("non-empty line").to_string();
        let np = f
            .next()
            .and_then(|v| v.parse::<usize>().ok())
            .filter(|&n| n >= 1)
            .ok_or_else(|| at("expected '<label> <ranks> [fold=K] [trace-fold=K] [reps=R] <program> [args...]' with ranks >= 1".into()))?;
        let mut case = Case {
            label,
            np,
            fold: None,
            trace_fold: None,
            reps: None,
            command: Vec::new(),
        };
        let mut rest: Vec<&str> = f.collect();
        while let Some((key, value)) = rest.first().and_then(|w| w.split_once('=')) {
            let min = if key == "reps" { 0 } else { 1 };
            let v = value
                .parse::<usize>()
                .ok()
                .filter(|&v| v >= min)
                .ok_or_else(|| at(format!("{key}: '{value}' is not a number >= {min}")))?;
            match key {
                "fold" => case.fold = Some(v),
                "trace-fold" => case.trace_fold = Some(v),
                "reps" => case.reps = Some(v),
                _ => {
                    return Err(at(format!(
                        "unknown option '{key}' (expected fold=, trace-fold= or reps=)"
                    )))
                }
            }
            rest.remove(0);
        }
        let Some((program, args)) = rest.split_first() else {
            return Err(at("no program after the rank count".into()));
        };
        let program = match bin_dir {
            Some(d) if !program.contains('/') => d.join(program).into_os_string(),
            _ => OsString::from(program),
        };
        case.command = std::iter::once(program)
            .chain(args.iter().map(OsString::from))
            .collect();
        cases.push(case);
    }
    if cases.is_empty() {
        return Err(format!(
            "{origin}: no case (expected lines '<label> <ranks> <program> [args...]')"
        ));
    }
    Ok(cases)
}

/// Reads and parses a cases file.
///
/// # Errors
/// The file cannot be read, or the errors of [`parse`].
pub fn read(path: &Path, bin_dir: Option<&PathBuf>) -> Result<Vec<Case>, String> {
    let text = std::fs::read_to_string(path)
        .map_err(|e| format!("cannot read {}: {e}", path.display()))?;
    parse(
        &text,
        &path.display().to_string(),
        bin_dir.map(PathBuf::as_path),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cases_parse_with_options_and_bin_dir() {
        let text = "# programs\nring 2 ring 50 1000000   # ring\n\nring 8 trace-fold=8 reps=0 /x/ring 5\npi 4 fold=2 ./pi_mc\n";
        let c = parse(text, "cases.txt", Some(Path::new("/b"))).unwrap();
        assert_eq!(c.len(), 3);
        assert_eq!(c[0].label, "ring");
        assert_eq!(c[0].np, 2);
        assert_eq!(
            c[0].command,
            ["/b/ring", "50", "1000000"].map(OsString::from).to_vec()
        );
        assert_eq!((c[0].fold, c[0].trace_fold, c[0].reps), (None, None, None));
        assert_eq!((c[1].trace_fold, c[1].reps), (Some(8), Some(0)));
        assert_eq!(c[1].command, ["/x/ring", "5"].map(OsString::from).to_vec());
        assert_eq!(c[2].fold, Some(2));
        assert_eq!(c[2].command, vec![OsString::from("./pi_mc")]);
        assert_eq!(c[1].dir_name(), "ring-n8-tf8");
        assert_eq!(c[2].dir_name(), "pi-n4-f2");
    }

    #[test]
    fn bad_lines_name_file_and_line() {
        let e = |t: &str| parse(t, "c.txt", None).unwrap_err();
        assert_eq!(
            e("ring 0 ring\n"),
            "c.txt:1: expected '<label> <ranks> [fold=K] [trace-fold=K] [reps=R] <program> [args...]' with ranks >= 1"
        );
        assert_eq!(e("\nring 2\n"), "c.txt:2: no program after the rank count");
        assert_eq!(
            e("ring 2 fold=0 ring\n"),
            "c.txt:1: fold: '0' is not a number >= 1"
        );
        assert_eq!(
            e("ring 2 speed=3 ring\n"),
            "c.txt:1: unknown option 'speed' (expected fold=, trace-fold= or reps=)"
        );
        assert_eq!(
            e("# nothing\n"),
            "c.txt: no case (expected lines '<label> <ranks> <program> [args...]')"
        );
    }

    #[test]
    fn command_cases_take_the_program_name() {
        let c = from_command(&[2, 4], None, &["/p/stencil2d".into(), "64".into()]);
        assert_eq!(c.len(), 2);
        assert_eq!(c[1].label, "stencil2d");
        assert_eq!(c[1].np, 4);
        assert_eq!(c[1].dir_name(), "stencil2d-n4");
    }
}
