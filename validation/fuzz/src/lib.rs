//! Fuzz targets for every parser of untrusted input, and a driver that runs them on the stable
//! toolchain.
//!
//! # Why not cargo-fuzz
//! cargo-fuzz needs nightly Rust and libFuzzer; CI has only the stable toolchain. So each target
//! is a plain function `fn(&[u8]) -> Outcome` ([`Target`]), which [`campaign::run`] feeds
//! with mutations ([`mutate::Mutator`]) of a committed seed corpus (`corpus/<target>/`) for a
//! bounded time, and which a cargo-fuzz wrapper can call as well (`fuzz/`, nightly).
//!
//! # What a target checks
//! A target must return, never panic, abort or hang: any bytes give `Ok` or one typed error
//! (the libraries' contract, README "Robustness"). Some also check a property of an accepted
//! input (a compressed trace written back reads back the same; a parsed platform routes between
//! its hosts). An error message must not be empty.
//!
//! # Feedback without coverage
//! Without compiler instrumentation the driver cannot see new code paths, so it uses the
//! outcome instead: an input whose outcome text (the error message without digits and quoted
//! text) was not seen before joins the pool that later mutations start from. Error messages
//! name what was expected, so a new message is a good proxy for a new branch of the parser.
//!
//! Targets are deterministic; the driver's mutations come from a seeded generator, so a run is
//! reproducible from its seed.

pub mod campaign;
pub mod mutate;
pub mod targets;

/// What a target returns: `Ok` for an accepted input, else the error's message.
pub type Outcome = Result<(), String>;

/// One fuzz target: a parser of one kind of user file, run on arbitrary bytes.
#[derive(Clone, Copy)]
pub struct Target {
    /// Its name: the `corpus/` subdirectory and the command-line name.
    pub name: &'static str,
    /// What it reads.
    pub about: &'static str,
    /// The function under test.
    pub run: fn(&[u8]) -> Outcome,
    /// Words worth inserting into its inputs (keywords of the format).
    pub dictionary: &'static [&'static str],
}

/// Every target, in the order the driver runs them.
pub const TARGETS: &[Target] = targets::ALL;

/// The target called `name`.
pub fn find(name: &str) -> Option<&'static Target> {
    TARGETS.iter().find(|t| t.name == name)
}

/// The directory of the committed seed corpus (`corpus/<target>/`).
pub fn corpus_dir() -> std::path::PathBuf {
    std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("corpus")
}

/// The seed inputs of `target`: every file of `corpus/<target>/` and of `regressions/<target>/`
/// (inputs that once crashed), in name order.
pub fn seeds(target: &str) -> Vec<Vec<u8>> {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in [
        root.join("corpus").join(target),
        root.join("regressions").join(target),
    ] {
        if let Ok(entries) = std::fs::read_dir(&dir) {
            files.extend(entries.flatten().map(|e| e.path()).filter(|p| p.is_file()));
        }
    }
    files.sort();
    files.iter().filter_map(|p| std::fs::read(p).ok()).collect()
}
