//! One SQLite database per profile (rusqlite with its bundled SQLite, so no system package).
//!
//! Schema (version 1; `PRAGMA application_id` = 0x544C5046, "TLPF"; `PRAGMA user_version` = 1):
//!
//! ```sql
//! CREATE TABLE run (source TEXT NOT NULL,        -- 'measured' | 'simulated'
//!                   program TEXT NOT NULL, ranks INTEGER NOT NULL,
//!                   mpi_library TEXT NOT NULL, date TEXT NOT NULL, notes TEXT NOT NULL);
//! CREATE TABLE communicators (id INTEGER PRIMARY KEY,   -- 0 is W, then creation order
//!                   name TEXT NOT NULL UNIQUE, parent TEXT, size INTEGER NOT NULL);
//! CREATE TABLE members (comm INTEGER NOT NULL, comm_rank INTEGER NOT NULL,
//!                   world_rank INTEGER NOT NULL, PRIMARY KEY (comm, comm_rank));
//! CREATE TABLE profile (comm INTEGER NOT NULL, op TEXT NOT NULL, rank INTEGER NOT NULL,
//!                   bucket INTEGER NOT NULL, calls INTEGER NOT NULL,
//!                   bytes_sent INTEGER NOT NULL, bytes_recv INTEGER NOT NULL,
//!                   time_sum REAL NOT NULL, time_min REAL NOT NULL, time_max REAL NOT NULL,
//!                   PRIMARY KEY (comm, op, rank, bucket));
//! CREATE TABLE rank_comms (rank INTEGER NOT NULL, local INTEGER NOT NULL,  -- the trace's
//!                   comm INTEGER NOT NULL, PRIMARY KEY (rank, local));   -- comm=<local>
//! ```
//!
//! Times are seconds (wall or simulated, see `run.source`), bytes are bytes, `bucket` is
//! [`crate::bucket`]'s. A database is written under a temporary name in the same directory and
//! renamed when complete, so a program that dies while writing leaves no half-written file.

use std::path::{Path, PathBuf};

use rusqlite::{params, Connection, OpenFlags};

use crate::model::{Communicator, Profile, Row, RunMeta, Source, Stats};

/// `PRAGMA application_id` of a timeless profile: "TLPF".
pub const APPLICATION_ID: i32 = 0x544C_5046;
/// `PRAGMA user_version` of this schema.
pub const SCHEMA_VERSION: i32 = 1;

/// Errors reading or writing a profile database.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// SQLite failed (corrupt file, disk full, ...).
    #[error("{path}: {source}")]
    Sqlite {
        /// The database.
        path: PathBuf,
        /// SQLite's error.
        source: rusqlite::Error,
    },
    /// The file is an SQLite database of something else, or not a database at all.
    #[error("{path}: not a timeless profile database ({why})")]
    NotAProfile {
        /// The file.
        path: PathBuf,
        /// What was found.
        why: String,
    },
    /// A profile of another schema version.
    #[error("{path}: profile schema version {found}, this timeless reads version {expected}")]
    Version {
        /// The file.
        path: PathBuf,
        /// Its `user_version`.
        found: i32,
        /// [`SCHEMA_VERSION`].
        expected: i32,
    },
    /// A row that breaks the schema's rules.
    #[error("{path}: table {table}, row {row}: {what}")]
    Invalid {
        /// The file.
        path: PathBuf,
        /// The table.
        table: &'static str,
        /// Its rowid (or index).
        row: i64,
        /// What is wrong.
        what: String,
    },
    /// Renaming the finished database into place failed.
    #[error("{path}: {source}")]
    Io {
        /// The target.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

fn sql(path: &Path) -> impl Fn(rusqlite::Error) -> StoreError + '_ {
    move |source| StoreError::Sqlite {
        path: path.to_path_buf(),
        source,
    }
}

fn to_i64(v: u64, path: &Path, table: &'static str, row: i64) -> Result<i64, StoreError> {
    i64::try_from(v).map_err(|_| StoreError::Invalid {
        path: path.to_path_buf(),
        table,
        row,
        what: format!("value {v} exceeds SQLite's integer range"),
    })
}

/// Writes `profile` to `path` (replacing it), atomically.
///
/// # Errors
/// [`StoreError::Sqlite`] / [`StoreError::Io`] on write failures; [`StoreError::Invalid`] for
/// a row naming a communicator the profile does not list, or a count above 2^63 - 1.
pub fn write(path: &Path, profile: &Profile) -> Result<(), StoreError> {
    let dir = path
        .parent()
        .filter(|d| !d.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    let file = path
        .file_name()
        .map_or_else(|| "profile.db".into(), |f| f.to_string_lossy().into_owned());
    let tmp = dir.join(format!(".{file}.tmp-{}", std::process::id()));
    let _ = std::fs::remove_file(&tmp);
    let result = write_at(&tmp, profile);
    if let Err(e) = result {
        let _ = std::fs::remove_file(&tmp);
        return Err(match e {
            StoreError::Sqlite { source, .. } => StoreError::Sqlite {
                path: path.to_path_buf(),
                source,
            },
            StoreError::Invalid {
                table, row, what, ..
            } => StoreError::Invalid {
                path: path.to_path_buf(),
                table,
                row,
                what,
            },
            e => e,
        });
    }
    std::fs::rename(&tmp, path).map_err(|source| {
        let _ = std::fs::remove_file(&tmp);
        StoreError::Io {
            path: path.to_path_buf(),
            source,
        }
    })
}

fn write_at(path: &Path, p: &Profile) -> Result<(), StoreError> {
    let e = sql(path);
    // Built in memory and written out in one pass (`VACUUM INTO`): a few large writes instead
    // of one per page as the tables grow (3.8 -> 0.8 ms for a small profile on this VM).
    let mut conn = Connection::open_in_memory().map_err(&e)?;
    conn.execute_batch(&format!(
        "PRAGMA application_id = {APPLICATION_ID};
         PRAGMA user_version = {SCHEMA_VERSION};
         PRAGMA journal_mode = OFF;
         PRAGMA synchronous = OFF;
         CREATE TABLE run (source TEXT NOT NULL, program TEXT NOT NULL, ranks INTEGER NOT NULL,
             mpi_library TEXT NOT NULL, date TEXT NOT NULL, notes TEXT NOT NULL);
         CREATE TABLE communicators (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE,
             parent TEXT, size INTEGER NOT NULL);
         CREATE TABLE members (comm INTEGER NOT NULL, comm_rank INTEGER NOT NULL,
             world_rank INTEGER NOT NULL, PRIMARY KEY (comm, comm_rank));
         CREATE TABLE profile (comm INTEGER NOT NULL, op TEXT NOT NULL, rank INTEGER NOT NULL,
             bucket INTEGER NOT NULL, calls INTEGER NOT NULL, bytes_sent INTEGER NOT NULL,
             bytes_recv INTEGER NOT NULL, time_sum REAL NOT NULL, time_min REAL NOT NULL,
             time_max REAL NOT NULL, PRIMARY KEY (comm, op, rank, bucket));
         CREATE TABLE rank_comms (rank INTEGER NOT NULL, local INTEGER NOT NULL,
             comm INTEGER NOT NULL, PRIMARY KEY (rank, local));"
    ))
    .map_err(&e)?;
    let tx = conn.transaction().map_err(&e)?;
    {
        let m = &p.meta;
        tx.execute(
            "INSERT INTO run VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                m.source.as_str(),
                m.program,
                m.ranks,
                m.mpi_library,
                m.date,
                m.notes
            ],
        )
        .map_err(&e)?;
        let mut ids = std::collections::HashMap::new();
        let mut c_stmt = tx
            .prepare("INSERT INTO communicators VALUES (?1, ?2, ?3, ?4)")
            .map_err(&e)?;
        let mut m_stmt = tx
            .prepare("INSERT INTO members VALUES (?1, ?2, ?3)")
            .map_err(&e)?;
        for (i, c) in p.comms.iter().enumerate() {
            c_stmt
                .execute(params![i as i64, c.name, c.parent, c.size()])
                .map_err(&e)?;
            for (k, w) in c.members.iter().enumerate() {
                m_stmt.execute(params![i as i64, k as i64, w]).map_err(&e)?;
            }
            ids.insert(c.name.as_str(), i as i64);
        }
        let mut r_stmt = tx
            .prepare("INSERT INTO profile VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)")
            .map_err(&e)?;
        for (i, r) in p.rows.iter().enumerate() {
            let Some(&comm) = ids.get(r.comm.as_str()) else {
                return Err(StoreError::Invalid {
                    path: path.to_path_buf(),
                    table: "profile",
                    row: i as i64,
                    what: format!("communicator {} is not in the profile", r.comm),
                });
            };
            let s = &r.stats;
            r_stmt
                .execute(params![
                    comm,
                    r.op,
                    r.rank,
                    r.bucket,
                    to_i64(s.calls, path, "profile", i as i64)?,
                    to_i64(s.bytes_sent, path, "profile", i as i64)?,
                    to_i64(s.bytes_recv, path, "profile", i as i64)?,
                    s.time_sum_secs,
                    s.time_min_secs,
                    s.time_max_secs
                ])
                .map_err(&e)?;
        }
        let mut l_stmt = tx
            .prepare("INSERT INTO rank_comms VALUES (?1, ?2, ?3)")
            .map_err(&e)?;
        for (i, l) in p.locals.iter().enumerate() {
            let Some(&comm) = ids.get(l.comm.as_str()) else {
                return Err(StoreError::Invalid {
                    path: path.to_path_buf(),
                    table: "rank_comms",
                    row: i as i64,
                    what: format!("communicator {} is not in the profile", l.comm),
                });
            };
            l_stmt.execute(params![l.rank, l.local, comm]).map_err(&e)?;
        }
    }
    tx.commit().map_err(&e)?;
    conn.execute("VACUUM INTO ?1", params![path.to_string_lossy()])
        .map_err(&e)?;
    conn.close().map_err(|(_, err)| e(err))
}

/// Reads the profile at `path`.
///
/// # Errors
/// [`StoreError::NotAProfile`] for a file that is not a timeless profile (or not SQLite),
/// [`StoreError::Version`] for another schema version, [`StoreError::Invalid`] for rows that
/// break the schema's rules (negative counts, a row naming an unknown communicator, members
/// that do not match the size, ...), [`StoreError::Sqlite`] for a corrupt database.
pub fn read(path: &Path) -> Result<Profile, StoreError> {
    let e = sql(path);
    if !path.is_file() {
        return Err(StoreError::NotAProfile {
            path: path.to_path_buf(),
            why: "no such file".into(),
        });
    }
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY).map_err(&e)?;
    let app: i32 = conn
        .query_row("PRAGMA application_id", [], |r| r.get(0))
        .map_err(|err| StoreError::NotAProfile {
            path: path.to_path_buf(),
            why: err.to_string(),
        })?;
    if app != APPLICATION_ID {
        return Err(StoreError::NotAProfile {
            path: path.to_path_buf(),
            why: format!("application_id {app:#x}, expected {APPLICATION_ID:#x}"),
        });
    }
    let version: i32 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(&e)?;
    if version != SCHEMA_VERSION {
        return Err(StoreError::Version {
            path: path.to_path_buf(),
            found: version,
            expected: SCHEMA_VERSION,
        });
    }
    // A truncated or damaged file may still answer some queries: check its structure first.
    let check: String = conn
        .query_row("PRAGMA quick_check", [], |r| r.get(0))
        .map_err(&e)?;
    let pages: i64 = conn
        .query_row("PRAGMA page_count", [], |r| r.get(0))
        .map_err(&e)?;
    let page_size: i64 = conn
        .query_row("PRAGMA page_size", [], |r| r.get(0))
        .map_err(&e)?;
    let len = std::fs::metadata(path).map_or(0, |m| m.len());
    if u64::try_from(pages.saturating_mul(page_size)).ok() != Some(len) {
        return Err(StoreError::NotAProfile {
            path: path.to_path_buf(),
            why: format!("truncated or padded: {len} bytes for {pages} pages of {page_size} bytes"),
        });
    }
    if check != "ok" {
        return Err(StoreError::NotAProfile {
            path: path.to_path_buf(),
            why: format!("damaged database: {check}"),
        });
    }
    let invalid = |table: &'static str, row: i64, what: String| StoreError::Invalid {
        path: path.to_path_buf(),
        table,
        row,
        what,
    };
    let meta = conn
        .query_row(
            "SELECT rowid, source, program, ranks, mpi_library, date, notes FROM run",
            [],
            |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, String>(2)?,
                    r.get::<_, i64>(3)?,
                    r.get::<_, String>(4)?,
                    r.get::<_, String>(5)?,
                    r.get::<_, String>(6)?,
                ))
            },
        )
        .map_err(&e)?;
    let source = Source::parse(&meta.1)
        .ok_or_else(|| invalid("run", meta.0, format!("source {:?}", meta.1)))?;
    let ranks =
        u32::try_from(meta.3).map_err(|_| invalid("run", meta.0, format!("ranks {}", meta.3)))?;
    let meta = RunMeta {
        source,
        program: meta.2,
        ranks,
        mpi_library: meta.4,
        date: meta.5,
        notes: meta.6,
    };

    let mut comms: Vec<Communicator> = Vec::new();
    let mut sizes: Vec<usize> = Vec::new();
    {
        let mut st = conn
            .prepare("SELECT id, name, parent, size FROM communicators ORDER BY id")
            .map_err(&e)?;
        let rows = st
            .query_map([], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, String>(1)?,
                    r.get::<_, Option<String>>(2)?,
                    r.get::<_, i64>(3)?,
                ))
            })
            .map_err(&e)?;
        for row in rows {
            let (id, name, parent, size) = row.map_err(&e)?;
            if id != comms.len() as i64 {
                return Err(invalid(
                    "communicators",
                    id,
                    format!(
                        "ids must be 0, 1, 2, ...; found {id} at position {}",
                        comms.len()
                    ),
                ));
            }
            if !(1..=i64::from(ranks)).contains(&size) {
                return Err(invalid("communicators", id, format!("size {size}")));
            }
            sizes.push(size as usize);
            comms.push(Communicator {
                name,
                parent,
                members: Vec::new(),
            });
        }
    }
    {
        let mut st = conn
            .prepare(
                "SELECT rowid, comm, comm_rank, world_rank FROM members ORDER BY comm, comm_rank",
            )
            .map_err(&e)?;
        let rows = st
            .query_map([], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, i64>(3)?,
                ))
            })
            .map_err(&e)?;
        for row in rows {
            let (rowid, comm, k, w) = row.map_err(&e)?;
            let ci = usize::try_from(comm)
                .ok()
                .filter(|&c| c < comms.len())
                .ok_or_else(|| invalid("members", rowid, format!("unknown communicator {comm}")))?;
            let c = &mut comms[ci];
            if k != c.members.len() as i64 || !(0..i64::from(ranks)).contains(&w) {
                return Err(invalid(
                    "members",
                    rowid,
                    format!("comm_rank {k} / world_rank {w} out of order or range"),
                ));
            }
            if c.members.len() == sizes[ci] {
                return Err(invalid(
                    "members",
                    rowid,
                    format!("more members than communicator {}'s size", c.name),
                ));
            }
            c.members.push(w as u32);
        }
    }
    for (i, c) in comms.iter().enumerate() {
        if c.members.len() != sizes[i] {
            return Err(invalid(
                "communicators",
                i as i64,
                format!(
                    "{} lists {} members for size {}",
                    c.name,
                    c.members.len(),
                    sizes[i]
                ),
            ));
        }
    }
    let mut rows = Vec::new();
    {
        let mut st = conn
            .prepare(
                "SELECT rowid, comm, op, rank, bucket, calls, bytes_sent, bytes_recv, time_sum, \
                 time_min, time_max FROM profile ORDER BY comm, op, rank, bucket",
            )
            .map_err(&e)?;
        let it = st
            .query_map([], |r| {
                Ok((
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, String>(2)?,
                    [
                        r.get::<_, i64>(3)?,
                        r.get::<_, i64>(4)?,
                        r.get::<_, i64>(5)?,
                        r.get::<_, i64>(6)?,
                        r.get::<_, i64>(7)?,
                    ],
                    [
                        r.get::<_, f64>(8)?,
                        r.get::<_, f64>(9)?,
                        r.get::<_, f64>(10)?,
                    ],
                ))
            })
            .map_err(&e)?;
        for row in it {
            let (rowid, comm, op, [rank, bucket, calls, sent, recv], [sum, min, max]) =
                row.map_err(&e)?;
            let c = usize::try_from(comm)
                .ok()
                .and_then(|c| comms.get(c))
                .ok_or_else(|| invalid("profile", rowid, format!("unknown communicator {comm}")))?;
            if !(0..i64::from(ranks)).contains(&rank) {
                return Err(invalid("profile", rowid, format!("rank {rank}")));
            }
            if !(0..=64).contains(&bucket) {
                return Err(invalid("profile", rowid, format!("bucket {bucket}")));
            }
            if calls < 1 || sent < 0 || recv < 0 {
                return Err(invalid(
                    "profile",
                    rowid,
                    format!("calls {calls}, bytes_sent {sent}, bytes_recv {recv}"),
                ));
            }
            if !(sum.is_finite() && min.is_finite() && max.is_finite()) || min > max {
                return Err(invalid(
                    "profile",
                    rowid,
                    format!("times sum {sum}, min {min}, max {max}"),
                ));
            }
            rows.push(Row {
                comm: c.name.clone(),
                op,
                rank: rank as u32,
                bucket: bucket as u8,
                stats: Stats {
                    calls: calls as u64,
                    bytes_sent: sent as u64,
                    bytes_recv: recv as u64,
                    time_sum_secs: sum,
                    time_min_secs: min,
                    time_max_secs: max,
                },
            });
        }
    }
    let mut locals = Vec::new();
    {
        let mut st = conn
            .prepare("SELECT rowid, rank, local, comm FROM rank_comms ORDER BY rank, local")
            .map_err(&e)?;
        let it = st
            .query_map([], |r| {
                Ok([
                    r.get::<_, i64>(0)?,
                    r.get::<_, i64>(1)?,
                    r.get::<_, i64>(2)?,
                    r.get::<_, i64>(3)?,
                ])
            })
            .map_err(&e)?;
        for row in it {
            let [rowid, rank, local, comm] = row.map_err(&e)?;
            let c = usize::try_from(comm)
                .ok()
                .and_then(|c| comms.get(c))
                .ok_or_else(|| {
                    invalid("rank_comms", rowid, format!("unknown communicator {comm}"))
                })?;
            if !(0..i64::from(ranks)).contains(&rank) || u32::try_from(local).is_err() {
                return Err(invalid(
                    "rank_comms",
                    rowid,
                    format!("rank {rank}, local id {local}"),
                ));
            }
            locals.push(crate::model::LocalComm {
                rank: rank as u32,
                local: local as u32,
                comm: c.name.clone(),
            });
        }
    }
    let mut p = Profile {
        meta,
        comms,
        rows,
        locals,
    };
    p.sort_rows();
    Ok(p)
}
