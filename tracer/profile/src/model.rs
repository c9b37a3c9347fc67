//! What a profile holds: run metadata, communicators, and one statistics row per
//! (communicator, operation, rank, size bucket).

use serde::Serialize;

use crate::op::OpClass;

/// Where a profile's times come from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum Source {
    /// Measured by the tracer: wall seconds inside each call.
    Measured,
    /// Predicted by a replay: simulated seconds inside each action.
    Simulated,
}

impl Source {
    /// `measured` or `simulated`, as stored.
    pub fn as_str(self) -> &'static str {
        match self {
            Source::Measured => "measured",
            Source::Simulated => "simulated",
        }
    }

    /// The inverse of [`Source::as_str`].
    pub fn parse(s: &str) -> Option<Source> {
        match s {
            "measured" => Some(Source::Measured),
            "simulated" => Some(Source::Simulated),
            _ => None,
        }
    }
}

/// Run metadata (table `run` of the database).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct RunMeta {
    /// Measured or simulated.
    pub source: Source,
    /// The program's command line (measured) or the trace list (simulated).
    pub program: String,
    /// Ranks in `MPI_COMM_WORLD`.
    pub ranks: u32,
    /// The MPI library's version string (measured), or the platform file (simulated).
    pub mpi_library: String,
    /// When the profile was measured, RFC 3339 UTC; empty for a simulated profile (its bytes
    /// depend only on its inputs).
    pub date: String,
    /// Free-form notes: configuration (`--cfg` items) of a simulated run, ...
    pub notes: String,
}

/// A communicator named with mpisee's scheme (`001_*` §III-A, see [`crate::naming`]).
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Communicator {
    /// Its name, identical on every member (`W`, `W_a1`, `W_s2.0`, ...).
    pub name: String,
    /// The name of the communicator used in the call that created it; `None` for `W` and for
    /// communicators whose creation was not seen (`MPI_COMM_SELF`, ...).
    pub parent: Option<String>,
    /// World rank of each member, in communicator rank order (the remote group follows the
    /// local one for an intercommunicator).
    pub members: Vec<u32>,
}

impl Communicator {
    /// Number of members.
    pub fn size(&self) -> u32 {
        self.members.len() as u32
    }
}

/// Statistics of the calls of one operation on one communicator by one rank, in one size
/// bucket. Times in seconds (wall seconds measured, simulated seconds predicted).
#[derive(Debug, Clone, Copy, PartialEq, Serialize)]
pub struct Stats {
    /// Calls.
    pub calls: u64,
    /// Bytes sent (point-to-point) or the rank's collective volume contribution
    /// ([`crate::volume`]), bytes.
    pub bytes_sent: u64,
    /// Bytes received (point-to-point receives), bytes.
    pub bytes_recv: u64,
    /// Total time inside the calls, s.
    pub time_sum_secs: f64,
    /// Shortest call, s.
    pub time_min_secs: f64,
    /// Longest call, s.
    pub time_max_secs: f64,
}

impl Stats {
    /// One call.
    pub fn one(bytes_sent: u64, bytes_recv: u64, secs: f64) -> Stats {
        Stats {
            calls: 1,
            bytes_sent,
            bytes_recv,
            time_sum_secs: secs,
            time_min_secs: secs,
            time_max_secs: secs,
        }
    }

    /// Adds one call.
    pub fn add(&mut self, bytes_sent: u64, bytes_recv: u64, secs: f64) {
        self.merge(&Stats::one(bytes_sent, bytes_recv, secs));
    }

    /// Adds the calls of `o`.
    pub fn merge(&mut self, o: &Stats) {
        if self.calls == 0 {
            *self = *o;
            return;
        }
        self.calls += o.calls;
        self.bytes_sent += o.bytes_sent;
        self.bytes_recv += o.bytes_recv;
        self.time_sum_secs += o.time_sum_secs;
        self.time_min_secs = self.time_min_secs.min(o.time_min_secs);
        self.time_max_secs = self.time_max_secs.max(o.time_max_secs);
    }
}

/// One profile row (table `profile`).
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Row {
    /// Communicator name (a [`Communicator::name`] of the same profile).
    pub comm: String,
    /// MPI operation, as `MPI_Send` ([`crate::op`]).
    pub op: String,
    /// World rank of the caller.
    pub rank: u32,
    /// Size bucket ([`crate::bucket`]).
    pub bucket: u8,
    /// The statistics.
    #[serde(flatten)]
    pub stats: Stats,
}

impl Row {
    /// The operation's class (point-to-point send, receive, collective, ...).
    pub fn class(&self) -> OpClass {
        crate::op::class(&self.op)
    }
}

/// A rank's own id of a communicator (the `comm=<id>` of its trace records) and the name it
/// stands for: how a replay of the trace finds the measured run's names.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct LocalComm {
    /// World rank.
    pub rank: u32,
    /// The rank's id (0 is `W`).
    pub local: u32,
    /// The communicator's name.
    pub comm: String,
}

/// A whole profile: what one database holds.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Profile {
    /// Run metadata.
    pub meta: RunMeta,
    /// Every communicator, `W` first, then in creation order.
    pub comms: Vec<Communicator>,
    /// Rows sorted by (communicator index, operation, rank, bucket).
    pub rows: Vec<Row>,
    /// Each rank's ids of its communicators other than `W`, sorted by (rank, local id).
    pub locals: Vec<LocalComm>,
}

impl Profile {
    /// The communicator named `name`.
    pub fn comm(&self, name: &str) -> Option<&Communicator> {
        self.comms.iter().find(|c| c.name == name)
    }

    /// Sorts rows into their canonical order: communicators in [`Profile::comms`] order, then
    /// operation name, rank and bucket (so that equal profiles are equal byte for byte).
    pub fn sort_rows(&mut self) {
        let index: std::collections::HashMap<&str, usize> = self
            .comms
            .iter()
            .enumerate()
            .map(|(i, c)| (c.name.as_str(), i))
            .collect();
        let mut keyed: Vec<(usize, Row)> = self
            .rows
            .drain(..)
            .map(|r| (index.get(r.comm.as_str()).copied().unwrap_or(usize::MAX), r))
            .collect();
        keyed.sort_by(|(ca, a), (cb, b)| {
            ca.cmp(cb)
                .then_with(|| a.comm.cmp(&b.comm))
                .then_with(|| a.op.cmp(&b.op))
                .then(a.rank.cmp(&b.rank))
                .then(a.bucket.cmp(&b.bucket))
        });
        self.rows = keyed.into_iter().map(|(_, r)| r).collect();
        self.locals.sort_by_key(|l| (l.rank, l.local));
    }
}

/// `secs` since the Unix epoch as RFC 3339 UTC (`2026-11-25T04:12:52Z`), for
/// [`RunMeta::date`]. Days to civil date by Howard Hinnant's algorithm.
pub fn rfc3339_utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

/// Now, as [`rfc3339_utc`].
pub fn now_utc() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs());
    rfc3339_utc(secs)
}

#[cfg(test)]
mod tests {
    #[test]
    fn dates_by_hand() {
        assert_eq!(super::rfc3339_utc(0), "1970-01-01T00:00:00Z");
        // 2000-03-01 is day 11,017 after the epoch (30 years of 365 days + 7 leap days + Jan
        // 31 + Feb 29 days): 951,868,800 s.
        assert_eq!(super::rfc3339_utc(951_868_800), "2000-03-01T00:00:00Z");
        // 2026-11-25T04:12:52Z = 1,795,579,972 s (20,781 days + 15,172 s).
        assert_eq!(super::rfc3339_utc(1_795_579_972), "2026-11-25T04:12:52Z");
    }
}
