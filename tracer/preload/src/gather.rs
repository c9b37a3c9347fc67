//! `--gather`: every rank's trace files collected onto rank 0 over MPI, at `MPI_Finalize`.
//!
//! On a cluster without a shared file system each rank writes its files to a directory local
//! to its node (`TIMELESS_OUT`); the seed gathers them onto one node with a K-nomial tree
//! (seed 003 §4.3: "a K-nomial tree reduction allowing for log(K+1) N steps"). Here the tree
//! runs inside the traced program, before `PMPI_Finalize`, on a private duplicate of
//! `MPI_COMM_WORLD` (so no message of the program can match ours), when `TIMELESS_GATHER_OUT`
//! names the directory, on rank 0's node, that receives the files.
//!
//! # The tree
//!
//! With radix `k` (`TIMELESS_GATHER_RADIX`, default [`DEFAULT_RADIX`], the seed's 4-nomial
//! tree) and `p` ranks, round `i` (stride `s = k^i`) pairs the ranks that are multiples of `s`:
//! a rank `r` with `r mod ks ≠ 0` sends everything it holds to `r - (r mod ks)` and is done; a
//! rank with `r mod ks = 0` receives from `r + js`, `j = 1 … k-1` (those below `p`). After
//! `⌈log_k p⌉` rounds rank 0 holds every file ([`schedule`]). A rank that receives in one round
//! and sends in a later one stages what it received in a subdirectory of its own trace
//! directory, so memory stays bounded whatever the trace sizes: files travel in chunks of
//! [`CHUNK_BYTES`].
//!
//! # What each rank sends
//!
//! Rank `r` contributes the regular files of its trace directory named `rank-<r>.<anything>`;
//! rank 0 also every file whose name is not of that form (the list and metadata files, and
//! whatever else the tracer writes for the whole run). Files are sent in name order.
//!
//! # Protocol (between a child and its parent, tags on the private communicator)
//!
//! `[file count: u64]` (tag 1), then per file `[name length: u64, size: u64]` (tag 2), the name
//! (tag 3) and the content in chunks of at most [`CHUNK_BYTES`] (tag 4). A sender that cannot
//! read a file it listed sends zeros in its place and says so on stderr; a receiver that cannot
//! write still receives everything, so a local failure never leaves a peer waiting.
//!
//! After a successful gather each rank deletes the files it sent from its node-local directory
//! (and the directory, if it is then empty), unless `TIMELESS_GATHER_KEEP=1`. Rank 0 adds a
//! `gather` object to the gathered `trace-meta.json` (radix, rounds, files, bytes, seconds).

use std::ffi::{c_int, c_void};
use std::fs::File;
use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use crate::meta;
use crate::mpi::{self, MPI_Comm};

/// Default radix of the tree (the seed's 4-nomial tree).
pub const DEFAULT_RADIX: u32 = 4;

/// Largest message of file content, bytes: the memory a rank needs for the gather.
pub const CHUNK_BYTES: usize = 1 << 20;

const TAG_COUNT: c_int = 1;
const TAG_HEADER: c_int = 2;
const TAG_NAME: c_int = 3;
const TAG_DATA: c_int = 4;

/// What a rank does in one round of the tree.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Step {
    /// Receive, in this order, everything these ranks hold.
    Receive(Vec<u32>),
    /// Send everything held to this rank; the rank's last step.
    Send(u32),
}

/// The rank's steps in a k-nomial gather of `size` ranks onto rank 0 (module documentation),
/// each with its round (0-based). A round where the rank has nothing to do is left out;
/// `radix` below 2 counts as 2.
pub fn schedule(rank: u32, size: u32, radix: u32) -> Vec<(u32, Step)> {
    let k = u64::from(radix.max(2));
    let (rank, size) = (u64::from(rank), u64::from(size));
    let mut steps = Vec::new();
    let (mut round, mut stride) = (0u32, 1u64);
    while stride < size {
        let span = stride * k;
        let offset = rank % span;
        if offset != 0 {
            steps.push((round, Step::Send((rank - offset) as u32)));
            break;
        }
        let children: Vec<u32> = (1..k)
            .map(|j| rank + j * stride)
            .filter(|&c| c < size)
            .map(|c| c as u32)
            .collect();
        if !children.is_empty() {
            steps.push((round, Step::Receive(children)));
        }
        stride = span;
        round += 1;
    }
    steps
}

/// Number of rounds of the tree: `⌈log_k size⌉`.
pub fn rounds(size: u32, radix: u32) -> u32 {
    let k = u64::from(radix.max(2));
    let (mut n, mut stride) = (0, 1u64);
    while stride < u64::from(size) {
        stride *= k;
        n += 1;
    }
    n
}

/// A file a rank holds for the gather.
#[derive(Debug, Clone)]
struct Held {
    name: String,
    path: PathBuf,
    bytes: u64,
    /// Received from another rank (staged), rather than written by this one.
    staged: bool,
}

/// Whether `name` is a rank file (`rank-<n>.<...>`), and of which rank.
fn rank_of(name: &str) -> Option<u32> {
    let rest = name.strip_prefix("rank-")?;
    let (num, _) = rest.split_once('.')?;
    num.parse().ok()
}

/// A file name another rank may send: one path component, not hidden.
fn safe_name(name: &str) -> bool {
    !name.is_empty() && !name.contains('/') && !name.contains('\0') && !name.starts_with('.')
}

/// The files rank `rank` contributes from its trace directory `dir`, by name.
fn own_files(dir: &Path, rank: u32) -> Vec<Held> {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return Vec::new();
    };
    let mut out: Vec<Held> = entries
        .filter_map(Result::ok)
        .filter_map(|e| {
            let meta = e.metadata().ok()?;
            let name = e.file_name().into_string().ok()?;
            let mine = match rank_of(&name) {
                Some(r) => r == rank,
                None => rank == 0,
            };
            (meta.is_file() && mine && safe_name(&name)).then(|| Held {
                path: e.path(),
                name,
                bytes: meta.len(),
                staged: false,
            })
        })
        .collect();
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out
}

/// What went wrong on this rank (reported once on stderr; the gather goes on).
#[derive(Default)]
struct Problems(Vec<String>);

impl Problems {
    fn add(&mut self, what: String) {
        if self.0.len() < 8 {
            self.0.push(what);
        }
    }
}

struct Link {
    comm: MPI_Comm,
    buf: Vec<u8>,
}

impl Link {
    fn send(&self, bytes: &[u8], dest: u32, tag: c_int) -> Result<(), String> {
        // SAFETY: `bytes` is a live slice of `len` bytes (at most CHUNK_BYTES); `comm` is the
        // gather's communicator.
        let rc = unsafe {
            mpi_sys::PMPI_Send(
                bytes.as_ptr() as *const c_void,
                bytes.len() as c_int,
                mpi_sys::RSMPI_UINT8_T,
                dest as c_int,
                tag,
                self.comm,
            )
        };
        (rc == mpi::SUCCESS)
            .then_some(())
            .ok_or_else(|| format!("MPI_Send to rank {dest} failed ({rc})"))
    }

    /// Receives exactly `len` bytes into the link's buffer.
    fn recv(&mut self, len: usize, src: u32, tag: c_int) -> Result<&[u8], String> {
        if self.buf.len() < len {
            self.buf.resize(len, 0);
        }
        let mut status = mpi::empty_status();
        // SAFETY: the buffer holds at least `len` bytes; `status` is a local.
        let rc = unsafe {
            mpi_sys::PMPI_Recv(
                self.buf.as_mut_ptr() as *mut c_void,
                len as c_int,
                mpi_sys::RSMPI_UINT8_T,
                src as c_int,
                tag,
                self.comm,
                &mut status,
            )
        };
        if rc != mpi::SUCCESS {
            return Err(format!("MPI_Recv from rank {src} failed ({rc})"));
        }
        Ok(&self.buf[..len])
    }

    fn send_u64s(&self, values: &[u64], dest: u32, tag: c_int) -> Result<(), String> {
        let bytes: Vec<u8> = values.iter().flat_map(|v| v.to_le_bytes()).collect();
        self.send(&bytes, dest, tag)
    }

    fn recv_u64s(&mut self, n: usize, src: u32, tag: c_int) -> Result<Vec<u64>, String> {
        let bytes = self.recv(8 * n, src, tag)?;
        Ok(bytes
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
            .collect())
    }

    /// Sends `files` to `dest` (protocol in the module documentation).
    fn send_files(&self, files: &[Held], dest: u32, problems: &mut Problems) -> Result<(), String> {
        self.send_u64s(&[files.len() as u64], dest, TAG_COUNT)?;
        let mut chunk = vec![0u8; CHUNK_BYTES];
        for f in files {
            self.send_u64s(&[f.name.len() as u64, f.bytes], dest, TAG_HEADER)?;
            self.send(f.name.as_bytes(), dest, TAG_NAME)?;
            let mut file = match File::open(&f.path) {
                Ok(file) => Some(file),
                Err(e) => {
                    problems.add(format!("cannot read {}: {e}", f.path.display()));
                    None
                }
            };
            let mut left = f.bytes;
            while left > 0 {
                let n = (left as usize).min(CHUNK_BYTES);
                let part = &mut chunk[..n];
                if let Some(file) = file.as_mut() {
                    if let Err(e) = file.read_exact(part) {
                        problems.add(format!("cannot read {}: {e}", f.path.display()));
                        part.fill(0);
                    }
                } else {
                    part.fill(0);
                }
                self.send(part, dest, TAG_DATA)?;
                left -= n as u64;
            }
        }
        Ok(())
    }

    /// Receives what `src` sends into files of `dir`; returns them.
    fn recv_files(
        &mut self,
        src: u32,
        dir: &Path,
        problems: &mut Problems,
    ) -> Result<Vec<Held>, String> {
        let count = self.recv_u64s(1, src, TAG_COUNT)?[0];
        let mut out = Vec::new();
        for _ in 0..count {
            let h = self.recv_u64s(2, src, TAG_HEADER)?;
            let (name_len, bytes) = (h[0] as usize, h[1]);
            let name = String::from_utf8_lossy(self.recv(name_len, src, TAG_NAME)?).into_owned();
            let path = dir.join(&name);
            let mut file = if safe_name(&name) {
                match File::create(&path) {
                    Ok(f) => Some(f),
                    Err(e) => {
                        problems.add(format!("cannot write {}: {e}", path.display()));
                        None
                    }
                }
            } else {
                problems.add(format!("rank {src} sent a file named '{name}': dropped"));
                None
            };
            let mut left = bytes;
            while left > 0 {
                let n = (left as usize).min(CHUNK_BYTES);
                let data = self.recv(n, src, TAG_DATA)?;
                if let Some(f) = file.as_mut() {
                    if let Err(e) = f.write_all(data) {
                        problems.add(format!("cannot write {}: {e}", path.display()));
                        file = None;
                    }
                }
                left -= n as u64;
            }
            if file.is_some() {
                out.push(Held {
                    name,
                    path,
                    bytes,
                    staged: true,
                });
            }
        }
        Ok(out)
    }
}

/// Gather settings from the environment: the directory on rank 0's node (`None`: no gather).
fn gather_out() -> Option<PathBuf> {
    std::env::var_os("TIMELESS_GATHER_OUT")
        .filter(|v| !v.is_empty())
        .map(PathBuf::from)
}

fn env_flag(name: &str) -> bool {
    std::env::var(name).is_ok_and(|v| !v.is_empty() && v != "0")
}

/// Whether MPI is initialised and not finalised (the gather needs a working library). A
/// sessions program's world model is never initialised: its private communicator (see
/// `session`) is usable until the tracer releases it, after the gather.
fn mpi_usable() -> bool {
    if mpi::has_session_base() {
        return true;
    }
    let (mut init, mut fin) = (0, 0);
    // SAFETY: both may be called at any time; out-parameters are locals.
    unsafe {
        mpi_sys::PMPI_Initialized(&mut init);
        mpi_sys::PMPI_Finalized(&mut fin);
    }
    init != 0 && fin == 0
}

/// The gather, on every rank, right before `PMPI_Finalize` (a no-op unless
/// `TIMELESS_GATHER_OUT` is set). Collective over `MPI_COMM_WORLD`: every rank calls it, traced
/// or not, so a rank whose tracing failed never leaves the others waiting.
pub fn at_finalize() {
    let Some(out) = gather_out() else {
        return;
    };
    if !mpi_usable() {
        return;
    }
    let world = mpi::base_comm();
    let Some((rank, size)) = mpi::rank_size(world) else {
        return;
    };
    let (rank, size) = (rank as u32, size as u32);
    let radix = std::env::var("TIMELESS_GATHER_RADIX")
        .ok()
        .and_then(|v| v.trim().parse::<u32>().ok())
        .unwrap_or(DEFAULT_RADIX)
        .max(2);
    let mut comm = mpi::comm_null();
    // SAFETY: collective duplicate of the world communicator; out-parameter is a local.
    if unsafe { mpi_sys::PMPI_Comm_dup(world, &mut comm) } != mpi::SUCCESS {
        eprintln!(
            "timeless-preload: rank {rank}: gather: MPI_Comm_dup failed; files left in place"
        );
        return;
    }
    let start = std::time::Instant::now();
    let dir = crate::setup::trace_dir(rank);
    let mut problems = Problems::default();
    let result = run(rank, size, radix, &dir, &out, comm, &mut problems);
    // SAFETY: frees the communicator duplicated above.
    unsafe { mpi_sys::PMPI_Comm_free(&mut comm) };
    match result {
        Ok(Some((files, bytes))) => {
            let secs = start.elapsed().as_secs_f64();
            if let Err(e) = note_in_meta(&out, radix, rounds(size, radix), files, bytes, secs) {
                problems.add(format!("cannot add the gather to the metadata: {e}"));
            }
        }
        Ok(None) => {}
        Err(e) => problems.add(e),
    }
    if !problems.0.is_empty() {
        eprintln!(
            "timeless-preload: rank {rank}: gather: {}",
            problems.0.join("; ")
        );
    }
}

/// This rank's part of the gather. Rank 0 returns the number of files and bytes gathered.
fn run(
    rank: u32,
    size: u32,
    radix: u32,
    dir: &Path,
    out: &Path,
    comm: MPI_Comm,
    problems: &mut Problems,
) -> Result<Option<(usize, u64)>, String> {
    let keep = env_flag("TIMELESS_GATHER_KEEP");
    let mut link = Link {
        comm,
        buf: Vec::new(),
    };
    let mut held = own_files(dir, rank);
    // Rank 0 receives straight into the output directory; others stage what they forward.
    let dest = if rank == 0 {
        out.to_path_buf()
    } else {
        dir.join(format!(".timeless-gather-{rank}"))
    };
    let same_dir = |a: &Path, b: &Path| match (a.canonicalize(), b.canonicalize()) {
        (Ok(x), Ok(y)) => x == y,
        _ => false,
    };
    for (_, step) in schedule(rank, size, radix) {
        match step {
            Step::Receive(children) => {
                if let Err(e) = std::fs::create_dir_all(&dest) {
                    problems.add(format!("cannot create {}: {e}", dest.display()));
                }
                for c in children {
                    held.extend(link.recv_files(c, &dest, problems)?);
                }
            }
            Step::Send(parent) => {
                link.send_files(&held, parent, problems)?;
                for f in &held {
                    if f.staged || !keep {
                        let _ = std::fs::remove_file(&f.path);
                    }
                }
                let _ = std::fs::remove_dir(&dest);
                if !keep {
                    let _ = std::fs::remove_dir(dir);
                }
                return Ok(None);
            }
        }
    }
    // Rank 0: its own files join the received ones in the output directory.
    if rank != 0 {
        return Ok(None);
    }
    let in_place = same_dir(dir, out);
    let (mut files, mut bytes) = (0usize, 0u64);
    for f in &held {
        files += 1;
        bytes += f.bytes;
        if f.staged || in_place {
            continue;
        }
        match std::fs::copy(&f.path, out.join(&f.name)) {
            Ok(_) if !keep => {
                let _ = std::fs::remove_file(&f.path);
            }
            Ok(_) => {}
            Err(e) => problems.add(format!(
                "cannot copy {} into {}: {e}",
                f.name,
                out.display()
            )),
        }
    }
    if !keep && !in_place {
        let _ = std::fs::remove_dir(dir);
    }
    Ok(Some((files, bytes)))
}

/// Adds the gather's figures to the gathered metadata file (a `gather` member appended to its
/// top-level object).
fn note_in_meta(
    out: &Path,
    radix: u32,
    rounds: u32,
    files: usize,
    bytes: u64,
    secs: f64,
) -> std::io::Result<()> {
    let path = out.join(meta::META_FILE);
    let text = std::fs::read_to_string(&path)?;
    let body = text.trim_end();
    let Some(open) = body.strip_suffix('}') else {
        return Err(std::io::Error::other("not a JSON object"));
    };
    let gather = meta::Json::Obj(vec![
        (
            "method",
            meta::Json::str("k-nomial tree over MPI at MPI_Finalize (seed 003 section 4.3)"),
        ),
        ("radix", meta::Json::Int(i64::from(radix))),
        ("rounds", meta::Json::Int(i64::from(rounds))),
        ("files", meta::Json::Int(files as i64)),
        ("bytes", meta::Json::Int(bytes as i64)),
        ("secs", meta::Json::Num(secs)),
    ]);
    let rendered = gather.render();
    let indented = rendered.trim_end().replace('\n', "\n  ");
    let merged = format!("{},\n  \"gather\": {indented}\n}}\n", open.trim_end());
    std::fs::write(&path, merged)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Every rank but 0 sends exactly once, to a rank that receives from it in the same round;
    /// the tree has ⌈log_k p⌉ rounds. Hand example, p = 10, k = 4: round 0 (stride 1): 0 ← 1 2 3,
    /// 4 ← 5 6 7, 8 ← 9; round 1 (stride 4): 0 ← 4 8.
    #[test]
    fn the_k_nomial_schedule_by_hand_and_in_general() {
        use Step::*;
        assert_eq!(
            schedule(0, 10, 4),
            vec![(0, Receive(vec![1, 2, 3])), (1, Receive(vec![4, 8]))]
        );
        assert_eq!(
            schedule(4, 10, 4),
            vec![(0, Receive(vec![5, 6, 7])), (1, Send(0))]
        );
        assert_eq!(
            schedule(8, 10, 4),
            vec![(0, Receive(vec![9])), (1, Send(0))]
        );
        assert_eq!(schedule(9, 10, 4), vec![(0, Send(8))]);
        assert_eq!(rounds(10, 4), 2);
        // Binomial: 0 ← 1, 0 ← 2, 0 ← 4 (strides 1, 2, 4); of 8, rank 6 receives from 7,
        // then sends to 4.
        assert_eq!(
            schedule(0, 5, 2),
            vec![
                (0, Receive(vec![1])),
                (1, Receive(vec![2])),
                (2, Receive(vec![4]))
            ]
        );
        assert_eq!(schedule(6, 8, 2), vec![(0, Receive(vec![7])), (1, Send(4))]);
        assert_eq!(rounds(5, 2), 3);
        assert_eq!(rounds(1, 4), 0);
        assert!(schedule(0, 1, 4).is_empty());
        for p in 1..70u32 {
            for k in 2..6u32 {
                // (child, parent, round) from the senders' side and from the receivers'.
                let (mut sent, mut received) = (Vec::new(), Vec::new());
                for r in 0..p {
                    let steps = schedule(r, p, k);
                    let sends = steps.iter().filter(|(_, s)| matches!(s, Send(_))).count();
                    assert_eq!(sends, usize::from(r != 0), "p {p} k {k} rank {r}");
                    // Sending is the last step; rounds increase.
                    assert!(steps
                        .windows(2)
                        .all(|w| w[0].0 < w[1].0 && matches!(w[0].1, Receive(_))));
                    for (round, s) in steps {
                        match s {
                            Send(parent) => sent.push((r, parent, round)),
                            Receive(children) => {
                                received.extend(children.into_iter().map(|c| (c, r, round)))
                            }
                        }
                    }
                }
                sent.sort();
                received.sort();
                assert_eq!(sent, received, "p {p} k {k}");
                let n = rounds(p, k);
                assert!(
                    k.pow(n) >= p && (n == 0 || k.pow(n - 1) < p),
                    "p {p} k {k}: {n}"
                );
                assert!(sent.iter().all(|&(_, _, round)| round < n));
            }
        }
    }

    #[test]
    fn rank_files_and_safe_names() {
        assert_eq!(rank_of("rank-12.txt"), Some(12));
        assert_eq!(rank_of("rank-3.timed.txt"), Some(3));
        assert_eq!(rank_of("trace-meta.json"), None);
        assert_eq!(rank_of("rank-x.txt"), None);
        assert!(safe_name("rank-0.txt"));
        assert!(!safe_name("../etc/passwd"));
        assert!(!safe_name(".timeless-gather-3"));
    }

    #[test]
    fn the_gather_member_is_appended_to_the_metadata_object() {
        let dir = std::env::temp_dir().join(format!("timeless-gather-meta-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join(meta::META_FILE), "{\n  \"ranks\": 4\n}\n").unwrap();
        note_in_meta(&dir, 4, 1, 6, 1234, 0.5).unwrap();
        let text = std::fs::read_to_string(dir.join(meta::META_FILE)).unwrap();
        assert_eq!(
            text,
            "{\n  \"ranks\": 4,\n  \"gather\": {\n    \"method\": \"k-nomial tree over MPI at \
             MPI_Finalize (seed 003 section 4.3)\",\n    \"radix\": 4,\n    \"rounds\": 1,\n    \
             \"files\": 6,\n    \"bytes\": 1234,\n    \"secs\": 5e-1\n  }\n}\n"
        );
        std::fs::remove_dir_all(&dir).ok();
    }
}
