//! The kinds of the paths a list file names (missing, a file, a directory), found without a
//! `stat` per path where many share a directory.
//!
//! [`TraceSource::open`](crate::TraceSource::open) checks every entry of a list before a replay
//! starts, so that a missing trace is named with its list line. One `stat` per entry is one path
//! lookup per entry: 4,096 entries took 12-14 ms on the 2-core VM of `validation/bench` (about a
//! twentieth of the 4,096-rank ring's replay, on the replay's own thread). Entries of a list
//! mostly share one directory, so once a directory holds [`LISTING_FROM`] entries, its listing
//! is read once (`read_dir`, whose entries carry their kind on Linux file systems: `d_type`) and
//! the entries there are looked up in it by name. A name the listing does not type (a symbolic
//! link, which `stat` follows; a file system without `d_type`), a path whose last component is
//! not a plain name, a directory that cannot be listed and one much larger than its share of
//! the list (more than [`LISTING_RATIO`] names per entry) keep the `stat`.
//!
//! Example: a list of `rank-0.txt` .. `rank-4095.txt` in `/tmp/t` reads `/tmp/t` once (4,098
//! names, a few `getdents64` calls) and answers the 4,096 entries from it; a list of 3 entries
//! stats each.

use std::ffi::OsString;
use std::fs;
use std::path::{Component, Path, PathBuf};

use rustc_hash::FxHashMap as HashMap;

/// A directory with at least this many entries of the list is listed rather than stat'ed
/// entry by entry.
pub const LISTING_FROM: usize = 16;
/// A listing stops (and its entries are stat'ed) beyond this many names per list entry there.
pub const LISTING_RATIO: usize = 64;

/// What a path is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// Nothing there (or it cannot be reached).
    Missing,
    /// A file (anything but a directory, as `stat` follows links).
    File,
    /// A directory.
    Dir,
}

/// What a listing says of a name.
#[derive(Debug, Clone, Copy)]
enum Typed {
    File,
    Dir,
    /// Not said (a symbolic link, or no `d_type`): `stat` it.
    Ask,
}

/// The kinds of a list's paths, `paths` all known in advance (see the module doc).
#[derive(Debug, Default)]
pub struct Kinds {
    /// Listings by directory; `None`: the directory is not listed (few entries, unreadable,
    /// or too large).
    listings: HashMap<PathBuf, Option<HashMap<OsString, Typed>>>,
}

impl Kinds {
    /// Prepares the lookup of `paths`: lists each directory holding at least
    /// [`LISTING_FROM`] of them.
    pub fn new<'a>(paths: impl IntoIterator<Item = &'a Path>) -> Kinds {
        let mut counts: HashMap<PathBuf, usize> = HashMap::default();
        for p in paths {
            if let Some((dir, _)) = split(p) {
                *counts.entry(dir.to_path_buf()).or_default() += 1;
            }
        }
        let listings = counts
            .into_iter()
            .filter(|&(_, n)| n >= LISTING_FROM)
            .map(|(dir, n)| {
                let listing = list(&dir, n.saturating_mul(LISTING_RATIO));
                (dir, listing)
            })
            .collect();
        Kinds { listings }
    }

    /// The kind of `path`: from its directory's listing if there is one, else by `stat`.
    pub fn kind(&self, path: &Path) -> Kind {
        if let Some((dir, name)) = split(path) {
            if let Some(Some(listing)) = self.listings.get(dir) {
                match listing.get(name) {
                    None => return Kind::Missing,
                    Some(Typed::File) => return Kind::File,
                    Some(Typed::Dir) => return Kind::Dir,
                    Some(Typed::Ask) => {}
                }
            }
        }
        stat(path)
    }
}

/// `path`'s kind by `stat` (following links).
pub fn stat(path: &Path) -> Kind {
    match fs::metadata(path) {
        Ok(m) if m.is_dir() => Kind::Dir,
        Ok(_) => Kind::File,
        Err(_) => Kind::Missing,
    }
}

/// `path` as (directory, plain last name), the directory `.` for a bare name; `None` where a
/// listing could not answer as `stat` would: a last component that is not a plain name (`..`,
/// `/`) or a path written with a trailing `/` or `/.` (which `stat` requires to be a directory).
fn split(path: &Path) -> Option<(&Path, &std::ffi::OsStr)> {
    let raw = path.as_os_str().as_encoded_bytes();
    if raw.ends_with(b"/") || raw.ends_with(b"/.") {
        return None;
    }
    let Some(Component::Normal(name)) = path.components().next_back() else {
        return None;
    };
    let dir = match path.parent() {
        Some(d) if !d.as_os_str().is_empty() => d,
        _ => Path::new("."),
    };
    Some((dir, name))
}

/// The names in `dir` with their kinds, `None` if it cannot be read or holds more than `cap`.
fn list(dir: &Path, cap: usize) -> Option<HashMap<OsString, Typed>> {
    let mut names = HashMap::default();
    for entry in fs::read_dir(dir).ok()? {
        let entry = entry.ok()?;
        if names.len() >= cap {
            return None;
        }
        // `DirEntry::file_type` answers from `d_type` where the file system gives it.
        let typed = match entry.file_type() {
            Ok(t) if t.is_file() => Typed::File,
            Ok(t) if t.is_dir() => Typed::Dir,
            _ => Typed::Ask,
        };
        names.insert(entry.file_name(), typed);
    }
    Some(names)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn scratch(tag: &str) -> PathBuf {
        let d = std::env::temp_dir().join(format!("timeless-listed-{tag}-{}", std::process::id()));
        let _ = fs::remove_dir_all(&d);
        fs::create_dir_all(&d).unwrap();
        d
    }

    /// Creates the files `names` in `d`, each holding `text`.
    fn files(d: &Path, names: impl IntoIterator<Item = String>, text: &str) {
        for name in names {
            fs::write(d.join(name), text).unwrap();
        }
    }

    /// Every answer from a listing equals `stat`'s: files, a directory, missing names, a
    /// symbolic link to a file and one to a directory, a trailing `/` and `..`.
    #[test]
    fn listing_answers_as_stat_does() {
        let d = scratch("same");
        files(&d, (0..20).map(|i| format!("rank-{i}.txt")), "0 init\n");
        fs::create_dir(d.join("sub")).unwrap();
        #[cfg(unix)]
        {
            std::os::unix::fs::symlink(d.join("rank-0.txt"), d.join("link-file")).unwrap();
            std::os::unix::fs::symlink(d.join("sub"), d.join("link-dir")).unwrap();
            std::os::unix::fs::symlink(d.join("nowhere"), d.join("link-broken")).unwrap();
        }
        let mut paths: Vec<PathBuf> = (0..24).map(|i| d.join(format!("rank-{i}.txt"))).collect();
        for extra in [
            "sub",
            "link-file",
            "link-dir",
            "link-broken",
            "rank-0.txt/",
            "sub/..",
        ] {
            paths.push(d.join(extra));
        }
        let kinds = Kinds::new(paths.iter().map(PathBuf::as_path));
        // The directory holds 24 of the entries, so it was listed.
        assert!(matches!(kinds.listings.get(d.as_path()), Some(Some(_))));
        for p in &paths {
            assert_eq!(kinds.kind(p), stat(p), "{}", p.display());
        }
        // Hand-checked kinds: 20 files exist, 4 do not; `sub` is a directory; the links
        // follow their targets; `rank-0.txt/` is not a directory, so nothing is there.
        assert_eq!(kinds.kind(&d.join("rank-19.txt")), Kind::File);
        assert_eq!(kinds.kind(&d.join("rank-20.txt")), Kind::Missing);
        assert_eq!(kinds.kind(&d.join("sub")), Kind::Dir);
        #[cfg(unix)]
        {
            assert_eq!(kinds.kind(&d.join("link-file")), Kind::File);
            assert_eq!(kinds.kind(&d.join("link-dir")), Kind::Dir);
            assert_eq!(kinds.kind(&d.join("link-broken")), Kind::Missing);
        }
        assert_eq!(kinds.kind(&d.join("rank-0.txt/")), Kind::Missing);
        assert_eq!(kinds.kind(&d.join("sub/..")), Kind::Dir);
        fs::remove_dir_all(&d).unwrap();
    }

    /// Few entries in a directory, or a directory far larger than its share of the list, are
    /// not listed.
    #[test]
    fn small_shares_are_stat_ed() {
        let d = scratch("few");
        files(&d, (0..3).map(|i| format!("r{i}")), "");
        let paths: Vec<PathBuf> = (0..3).map(|i| d.join(format!("r{i}"))).collect();
        let kinds = Kinds::new(paths.iter().map(PathBuf::as_path));
        assert!(kinds.listings.is_empty());
        assert_eq!(kinds.kind(&paths[2]), Kind::File);
        // 16 entries in a directory of 16 * 64 + 1 names: too large, stat'ed.
        let big = scratch("big");
        files(
            &big,
            (0..=LISTING_FROM * LISTING_RATIO).map(|i| format!("f{i}")),
            "",
        );
        let paths: Vec<PathBuf> = (0..LISTING_FROM)
            .map(|i| big.join(format!("f{i}")))
            .collect();
        let kinds = Kinds::new(paths.iter().map(PathBuf::as_path));
        assert!(matches!(kinds.listings.get(big.as_path()), Some(None)));
        assert_eq!(kinds.kind(&paths[0]), Kind::File);
        fs::remove_dir_all(&d).unwrap();
        fs::remove_dir_all(&big).unwrap();
    }
}
