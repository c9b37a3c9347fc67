//! The results directory: `results.csv`, `results.db` and `wall.csv`.
//!
//! Results are written as points finish (completion order), so a killed sweep keeps what it
//! did; [`Store::finish`] then rewrites `results.csv` and `results.db` in *canonical form*:
//! the header, then one row per finished point in [`crate::points`]' order, and a database
//! built afresh by inserting those rows in that order. Both files hold only what the inputs
//! determine (key, trace, axis values, simulated time, action count), so the same study gives
//! the same bytes whatever the number of threads or MPI ranks and whatever the completion
//! order. The wall-clock time of each replay, which varies from run to run, goes to
//! `wall.csv` (`key,wall_s`, completion order, a retried point's last time wins).
//!
//! Write order per point: `wall.csv`, `results.csv`, `results.db`. `results.csv` is the
//! reference on reopening: a torn last line (a kill mid-write) is cut off, a row missing from
//! the database is put back.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::{Read, Seek, SeekFrom};
use std::path::{Path, PathBuf};

use crate::{summary, Point, PointResult, Spec, Summary, SweepError};

/// The CSV results file in the results directory.
pub const CSV_FILE: &str = "results.csv";
/// The SQLite results file.
pub const DB_FILE: &str = "results.db";
/// The wall-clock times (`key,wall_s`), not deterministic.
pub const WALL_FILE: &str = "wall.csv";

/// The CSV header of a study: `key`, `trace`, one column per axis, `simulated_time_s`,
/// `actions`.
pub fn csv_header(spec: &Spec) -> Vec<String> {
    let mut h = vec!["key".to_string(), "trace".to_string()];
    h.extend(spec.axes.iter().map(|a| a.name.clone()));
    h.extend(["simulated_time_s", "actions"].map(String::from));
    h
}

/// An open results directory: the results known so far and the files new ones are appended to.
pub struct Store {
    csv: csv::Writer<File>,
    wall: csv::Writer<File>,
    db: rusqlite::Connection,
    csv_path: PathBuf,
    db_path: PathBuf,
    wall_path: PathBuf,
    done: HashMap<String, PointResult>,
    skipped: usize,
}

impl std::fmt::Debug for Store {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("csv", &self.csv_path)
            .field("done", &self.done.len())
            .finish()
    }
}

fn write_err(path: &Path) -> impl Fn(std::io::Error) -> SweepError + '_ {
    move |source| SweepError::Write {
        path: path.into(),
        source,
    }
}

fn csv_err(path: &Path) -> impl Fn(csv::Error) -> SweepError + '_ {
    move |source| SweepError::Csv {
        path: path.into(),
        source,
    }
}

fn db_err(path: &Path) -> impl Fn(rusqlite::Error) -> SweepError + '_ {
    move |source| SweepError::Db {
        path: path.into(),
        source,
    }
}

/// The complete lines of a CSV file (a missing file: none); a torn last line is cut off the
/// file too.
fn read_complete(path: &Path) -> Result<Vec<u8>, SweepError> {
    let mut file = match OpenOptions::new().read(true).write(true).open(path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(source) => {
            return Err(SweepError::Read {
                path: path.into(),
                source,
            })
        }
    };
    let rd = |source| SweepError::Read {
        path: path.into(),
        source,
    };
    let mut bytes = Vec::new();
    file.read_to_end(&mut bytes).map_err(rd)?;
    if !bytes.is_empty() && !bytes.ends_with(b"\n") {
        let keep = bytes.iter().rposition(|&b| b == b'\n').map_or(0, |i| i + 1);
        bytes.truncate(keep);
        file.set_len(keep as u64).map_err(rd)?;
        file.seek(SeekFrom::End(0)).map_err(rd)?;
    }
    Ok(bytes)
}

/// Reads the results already in `results.csv` (wall times from `wall.csv`, NaN when absent).
fn read_results(
    path: &Path,
    wall_path: &Path,
    header: &[String],
) -> Result<HashMap<String, PointResult>, SweepError> {
    let mut done = HashMap::new();
    let bytes = read_complete(path)?;
    if bytes.is_empty() {
        return Ok(done);
    }
    let mut r = csv::ReaderBuilder::new().from_reader(bytes.as_slice());
    let found: Vec<String> = r
        .headers()
        .map_err(csv_err(path))?
        .iter()
        .map(String::from)
        .collect();
    if found != header {
        return Err(SweepError::Mismatch {
            path: path.into(),
            found,
            expected: header.to_vec(),
        });
    }
    let mut wall = HashMap::new();
    let wall_bytes = read_complete(wall_path)?;
    let mut w = csv::ReaderBuilder::new()
        .has_headers(true)
        .from_reader(wall_bytes.as_slice());
    for rec in w.records().flatten() {
        if let (Some(k), Some(Ok(s))) = (rec.get(0), rec.get(1).map(str::parse::<f64>)) {
            wall.insert(k.to_string(), s);
        }
    }
    let n = header.len();
    for rec in r.records() {
        let rec = rec.map_err(csv_err(path))?;
        let parsed = (|| {
            let key = rec.get(0)?.to_string();
            Some(PointResult {
                wall_secs: wall.get(&key).copied().unwrap_or(f64::NAN),
                key,
                simulated_secs: rec.get(n - 2)?.parse().ok()?,
                actions: rec.get(n - 1)?.parse().ok()?,
            })
        })();
        if let Some(p) = parsed {
            done.insert(p.key.clone(), p);
        }
    }
    Ok(done)
}

/// Opens (creating the tables of) a results database. `durable: false` (the database written
/// point by point while the sweep runs) skips the fsyncs of each commit: a killed process
/// loses nothing SQLite has been handed, and `results.csv` is the reference anyway; one fsync
/// per point would serialise the workers on the disk (18 ms a point on the benchmark's VM).
fn open_db(path: &Path, durable: bool) -> Result<rusqlite::Connection, SweepError> {
    let db = rusqlite::Connection::open(path).map_err(db_err(path))?;
    if !durable {
        db.execute_batch("PRAGMA synchronous = OFF;")
            .map_err(db_err(path))?;
    }
    db.execute_batch(
        "CREATE TABLE IF NOT EXISTS points (key TEXT PRIMARY KEY, trace TEXT NOT NULL, \
         simulated_time_s REAL NOT NULL, actions INTEGER NOT NULL);
         CREATE TABLE IF NOT EXISTS point_axes (key TEXT NOT NULL, axis TEXT NOT NULL, \
         value TEXT, PRIMARY KEY (key, axis));",
    )
    .map_err(db_err(path))?;
    Ok(db)
}

/// Inserts (or replaces) a point's rows in the database, in one transaction.
fn insert(
    db: &mut rusqlite::Connection,
    db_path: &Path,
    spec: &Spec,
    point: &Point,
    r: &PointResult,
) -> Result<(), SweepError> {
    let tx = db.transaction().map_err(db_err(db_path))?;
    insert_rows(&tx, spec, point, r).map_err(db_err(db_path))?;
    tx.commit().map_err(db_err(db_path))
}

fn insert_rows(
    tx: &rusqlite::Transaction<'_>,
    spec: &Spec,
    point: &Point,
    r: &PointResult,
) -> Result<(), rusqlite::Error> {
    tx.execute(
        "INSERT OR REPLACE INTO points (key, trace, simulated_time_s, actions) \
         VALUES (?1, ?2, ?3, ?4)",
        rusqlite::params![
            point.key,
            spec.traces[point.trace].label,
            r.simulated_secs,
            r.actions as i64,
        ],
    )?;
    for (a, v) in spec.axes.iter().zip(&point.values) {
        tx.execute(
            "INSERT OR REPLACE INTO point_axes (key, axis, value) VALUES (?1, ?2, ?3)",
            rusqlite::params![point.key, a.name, v],
        )?;
    }
    Ok(())
}

/// A `results.csv` row.
fn row(spec: &Spec, point: &Point, r: &PointResult) -> Vec<String> {
    let mut row = vec![point.key.clone(), spec.traces[point.trace].label.clone()];
    row.extend(point.values.iter().map(|v| v.clone().unwrap_or_default()));
    row.push(r.simulated_secs.to_string());
    row.push(r.actions.to_string());
    row
}

/// A CSV writer appending to `path`, which gets `header` first when empty or new.
fn appender(path: &Path, header: &[&str]) -> Result<csv::Writer<File>, SweepError> {
    let fresh = std::fs::metadata(path).map_or(true, |m| m.len() == 0);
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(write_err(path))?;
    let mut w = csv::WriterBuilder::new()
        .has_headers(false)
        .from_writer(file);
    if fresh {
        w.write_record(header).map_err(csv_err(path))?;
        w.flush().map_err(write_err(path))?;
    }
    Ok(w)
}

impl Store {
    /// Opens (creating it if needed) the results directory of `spec`: reads the results
    /// already in `results.csv` (those of points no longer in the study are ignored) and puts
    /// back into `results.db` any row missing there.
    ///
    /// # Errors
    /// A results file that cannot be read or written ([`SweepError::Read`],
    /// [`SweepError::Write`], [`SweepError::Csv`], [`SweepError::Db`]) or a `results.csv` of
    /// another study ([`SweepError::Mismatch`]).
    pub fn open(spec: &Spec, dir: &Path, all: &[Point]) -> Result<Store, SweepError> {
        std::fs::create_dir_all(dir).map_err(write_err(dir))?;
        let csv_path = dir.join(CSV_FILE);
        let db_path = dir.join(DB_FILE);
        let wall_path = dir.join(WALL_FILE);
        let header = csv_header(spec);
        let mut done = read_results(&csv_path, &wall_path, &header)?;
        let keys: std::collections::HashSet<&str> = all.iter().map(|p| p.key.as_str()).collect();
        done.retain(|k, _| keys.contains(k.as_str()));
        let hdr: Vec<&str> = header.iter().map(String::as_str).collect();
        let csv = appender(&csv_path, &hdr)?;
        let wall = appender(&wall_path, &["key", "wall_s"])?;
        let mut db = open_db(&db_path, false)?;
        // A sweep killed between its CSV and database writes: the CSV is the reference.
        let mut in_db = std::collections::HashSet::new();
        {
            let mut q = db
                .prepare("SELECT key FROM points")
                .map_err(db_err(&db_path))?;
            let rows = q
                .query_map([], |r| r.get::<_, String>(0))
                .map_err(db_err(&db_path))?;
            for k in rows {
                in_db.insert(k.map_err(db_err(&db_path))?);
            }
        }
        for p in all {
            if let Some(r) = done.get(&p.key) {
                if !in_db.contains(&p.key) {
                    insert(&mut db, &db_path, spec, p, r)?;
                }
            }
        }
        Ok(Store {
            csv,
            wall,
            db,
            csv_path,
            db_path,
            wall_path,
            skipped: done.len(),
            done,
        })
    }

    /// Whether the point's result is known.
    pub fn is_done(&self, point: &Point) -> bool {
        self.done.contains_key(&point.key)
    }

    /// The points of `all` without a result yet, in order, at most `max` of them.
    pub fn pending<'a>(&self, all: &'a [Point], max: Option<usize>) -> Vec<&'a Point> {
        let mut p: Vec<&Point> = all.iter().filter(|p| !self.is_done(p)).collect();
        if let Some(m) = max {
            p.truncate(m);
        }
        p
    }

    /// Appends a point's result to `wall.csv`, `results.csv` and `results.db` (flushed
    /// before returning, so a kill afterwards keeps it).
    ///
    /// # Errors
    /// A file that cannot be written.
    pub fn record(
        &mut self,
        spec: &Spec,
        point: &Point,
        r: &PointResult,
    ) -> Result<(), SweepError> {
        self.wall
            .write_record([point.key.as_str(), &r.wall_secs.to_string()])
            .map_err(csv_err(&self.wall_path))?;
        self.wall.flush().map_err(write_err(&self.wall_path))?;
        self.csv
            .write_record(row(spec, point, r))
            .map_err(csv_err(&self.csv_path))?;
        self.csv.flush().map_err(write_err(&self.csv_path))?;
        insert(&mut self.db, &self.db_path, spec, point, r)?;
        self.done.insert(point.key.clone(), r.clone());
        Ok(())
    }

    /// Rewrites `results.csv` and `results.db` in canonical form (module doc) and summarises.
    /// `ran` and `failed` are what this run did.
    ///
    /// # Errors
    /// A file that cannot be written.
    pub fn finish(
        self,
        spec: &Spec,
        all: &[Point],
        ran: usize,
        failed: Vec<(String, String)>,
    ) -> Result<Summary, SweepError> {
        let Store {
            csv,
            wall,
            db,
            csv_path,
            db_path,
            skipped,
            done,
            ..
        } = self;
        drop((csv, wall));
        db.close().map_err(|(_, e)| db_err(&db_path)(e))?;
        canonical_csv(spec, all, &done, &csv_path)?;
        canonical_db(spec, all, &done, &db_path)?;
        Ok(summary::summarize(
            spec, all, done, skipped, ran, failed, csv_path, db_path,
        ))
    }
}

/// `path` + `suffix`, a temporary file renamed over `path` once complete.
fn tmp_path(path: &Path, suffix: &str) -> PathBuf {
    let mut s = path.as_os_str().to_owned();
    s.push(suffix);
    PathBuf::from(s)
}

fn canonical_csv(
    spec: &Spec,
    all: &[Point],
    done: &HashMap<String, PointResult>,
    path: &Path,
) -> Result<(), SweepError> {
    let tmp = tmp_path(path, ".tmp");
    let mut w = csv::Writer::from_path(&tmp).map_err(csv_err(&tmp))?;
    w.write_record(csv_header(spec)).map_err(csv_err(&tmp))?;
    for p in all {
        if let Some(r) = done.get(&p.key) {
            w.write_record(row(spec, p, r)).map_err(csv_err(&tmp))?;
        }
    }
    w.flush().map_err(write_err(&tmp))?;
    drop(w);
    std::fs::rename(&tmp, path).map_err(write_err(path))
}

fn canonical_db(
    spec: &Spec,
    all: &[Point],
    done: &HashMap<String, PointResult>,
    path: &Path,
) -> Result<(), SweepError> {
    let tmp = tmp_path(path, ".tmp");
    match std::fs::remove_file(&tmp) {
        Err(e) if e.kind() != std::io::ErrorKind::NotFound => return Err(write_err(&tmp)(e)),
        _ => {}
    }
    let mut db = open_db(&tmp, true)?;
    let tx = db.transaction().map_err(db_err(&tmp))?;
    for p in all {
        if let Some(r) = done.get(&p.key) {
            insert_rows(&tx, spec, p, r).map_err(db_err(&tmp))?;
        }
    }
    tx.commit().map_err(db_err(&tmp))?;
    db.close().map_err(|(_, e)| db_err(&tmp)(e))?;
    std::fs::rename(&tmp, path).map_err(write_err(path))
}
