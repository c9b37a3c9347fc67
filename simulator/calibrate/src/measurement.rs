//! The measurement model: timed samples of MPI operations by message size, reduced to medians.
//!
//! A [`Measurements`] set holds raw samples `(op, size_bytes, time_secs)`, in input order. The
//! calibration only ever looks at per-size medians ([`Measurements::medians`]), which are robust
//! to the scheduling outliers of a shared machine.

use std::collections::BTreeMap;
use std::fmt;

use crate::CalibrateError;

/// A timed MPI operation of the ping-pong benchmark (`validation/pingpong`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Op {
    /// Round trip of an `MPI_Send` + `MPI_Recv` ping-pong, measured on rank 0 (SKaMPI's
    /// `Pingpong_Send_Recv`; seed 003 §5).
    PingPong,
    /// Time of one bidirectional exchange, measured on rank 0: both ranks post `MPI_Irecv` and
    /// `MPI_Isend` of the same size to each other and wait for both (two concurrent flows in
    /// opposite directions; [`crate::network::fit_flow_sharing`]).
    Exchange,
    /// How many ranks exchanged at once in the [`Op::Exchange`] test (one row, whose *size* is
    /// that count and time 0): each sends one message, so that many flows ran concurrently.
    /// Absent: 2 (one pair).
    ExchangeRanks,
    /// Duration of `MPI_Send` while the receiver posts its receive late: the send overhead
    /// `smpi/os` for eager (detached) sizes; for rendezvous sizes the call waits for the receiver.
    Send,
    /// Mean duration of back-to-back `MPI_Send` calls following a first one, receiver late: the
    /// steady-state send overhead `smpi/os` (preferred over [`Op::Send`] when present).
    SendBurst,
    /// Duration of the `MPI_Isend` call: `smpi/ois`.
    Isend,
    /// Duration of `MPI_Recv` of a message that has already arrived: `smpi/or` for eager sizes.
    Recv,
    /// Mean duration of back-to-back `MPI_Recv` calls of already-arrived messages: the
    /// steady-state `smpi/or` (preferred over [`Op::Recv`] when present).
    RecvBurst,
    /// How late the receiver posted in the [`Op::Send`] test (one row, size 0): a send that takes
    /// more than half of it waited for the receiver (rendezvous).
    Late,
    /// An `MPI_Allreduce` of one double right after each rank streamed through *size* bytes of
    /// its own memory, timed on the rank that arrived last: warm at the smallest size, cold
    /// (the MPI library's shared state out of the caches) at the largest
    /// ([`crate::network::cold_call_secs`]).
    ColdAllreduce,
}

impl Op {
    /// Every operation, in CSV order.
    pub const ALL: [Op; 10] = [
        Op::PingPong,
        Op::Exchange,
        Op::ExchangeRanks,
        Op::Send,
        Op::SendBurst,
        Op::Isend,
        Op::Recv,
        Op::RecvBurst,
        Op::Late,
        Op::ColdAllreduce,
    ];

    /// Name used in the CSV `op` column.
    pub fn name(self) -> &'static str {
        match self {
            Op::PingPong => "pingpong",
            Op::Exchange => "exchange",
            Op::ExchangeRanks => "exchange_ranks",
            Op::Send => "send",
            Op::SendBurst => "send_burst",
            Op::Isend => "isend",
            Op::Recv => "recv",
            Op::RecvBurst => "recv_burst",
            Op::Late => "late",
            Op::ColdAllreduce => "cold_allreduce",
        }
    }

    /// Inverse of [`Op::name`].
    pub fn from_name(name: &str) -> Option<Op> {
        Op::ALL.into_iter().find(|op| op.name() == name)
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// One timed call (or round trip).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Sample {
    /// What was timed.
    pub op: Op,
    /// Message size S in bytes (the MPI payload, without SimGrid's 16-byte envelope).
    pub size_bytes: u64,
    /// Measured duration in seconds (finite, >= 0).
    pub time_secs: f64,
}

/// Median of the samples of one operation at one size.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct MedianPoint {
    /// Message size S in bytes.
    pub size_bytes: u64,
    /// Median duration in seconds (mean of the two middle samples for an even count).
    pub time_secs: f64,
    /// Smallest sample in seconds.
    pub min_secs: f64,
    /// Largest sample in seconds.
    pub max_secs: f64,
    /// Number of samples.
    pub samples: usize,
}

/// A set of samples.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Measurements {
    /// Samples in input order.
    pub samples: Vec<Sample>,
}

/// Median of a non-empty slice (mean of the two middle values for an even length); `None` when
/// empty.
pub fn median(values: &[f64]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let mut v = values.to_vec();
    v.sort_by(f64::total_cmp);
    let n = v.len();
    Some(if n % 2 == 1 {
        v[n / 2]
    } else {
        (v[n / 2 - 1] + v[n / 2]) / 2.0
    })
}

impl Measurements {
    /// Adds one sample.
    pub fn push(&mut self, op: Op, size_bytes: u64, time_secs: f64) {
        self.samples.push(Sample {
            op,
            size_bytes,
            time_secs,
        });
    }

    /// True when there is at least one sample of `op`.
    pub fn has(&self, op: Op) -> bool {
        self.samples.iter().any(|s| s.op == op)
    }

    /// Per-size medians of `op`, sorted by size.
    pub fn medians(&self, op: Op) -> Vec<MedianPoint> {
        let mut by_size: BTreeMap<u64, Vec<f64>> = BTreeMap::new();
        for s in self.samples.iter().filter(|s| s.op == op) {
            by_size.entry(s.size_bytes).or_default().push(s.time_secs);
        }
        by_size
            .into_iter()
            .map(|(size_bytes, times)| MedianPoint {
                size_bytes,
                time_secs: median(&times).expect("non-empty group"),
                min_secs: times.iter().copied().fold(f64::INFINITY, f64::min),
                max_secs: times.iter().copied().fold(f64::NEG_INFINITY, f64::max),
                samples: times.len(),
            })
            .collect()
    }

    /// Median of `op` at exactly `size_bytes`, if measured.
    pub fn median_at(&self, op: Op, size_bytes: u64) -> Option<f64> {
        let v: Vec<f64> = self
            .samples
            .iter()
            .filter(|s| s.op == op && s.size_bytes == size_bytes)
            .map(|s| s.time_secs)
            .collect();
        median(&v)
    }

    /// Writes the samples as CSV (`op,size_bytes,time_secs`, the format [`crate::input::parse_csv`]
    /// reads), with times printed to full precision.
    pub fn to_csv(&self) -> String {
        let mut out = String::from("op,size_bytes,time_secs\n");
        for s in &self.samples {
            out.push_str(&format!("{},{},{:e}\n", s.op, s.size_bytes, s.time_secs));
        }
        out
    }

    /// Checks that the medians of `op` do not drop by more than `tolerance` (a fraction, e.g.
    /// 0.25) from one size to the next: a larger message taking much less time means the input is
    /// mislabelled or broken.
    ///
    /// # Errors
    /// [`CalibrateError::NonMonotonic`] naming the two sizes.
    pub fn check_monotonic(&self, op: Op, tolerance: f64) -> Result<(), CalibrateError> {
        let m = self.medians(op);
        for w in m.windows(2) {
            if w[1].time_secs < w[0].time_secs * (1.0 - tolerance) {
                return Err(CalibrateError::NonMonotonic {
                    what: format!("'{op}' medians"),
                    size_a_bytes: w[0].size_bytes,
                    time_a_secs: w[0].time_secs,
                    size_b_bytes: w[1].size_bytes,
                    time_b_secs: w[1].time_secs,
                    tolerance_pct: tolerance * 100.0,
                });
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn medians_group_and_sort_by_size() {
        let mut m = Measurements::default();
        m.push(Op::PingPong, 8, 3.0);
        m.push(Op::PingPong, 1, 2.0);
        m.push(Op::PingPong, 8, 1.0);
        m.push(Op::PingPong, 8, 2.0);
        m.push(Op::Send, 1, 9.0);
        m.push(Op::PingPong, 1, 4.0);
        let med = m.medians(Op::PingPong);
        assert_eq!(med.len(), 2);
        assert_eq!((med[0].size_bytes, med[0].time_secs), (1, 3.0)); // (2+4)/2
        assert_eq!((med[1].size_bytes, med[1].time_secs), (8, 2.0));
        assert_eq!(
            (med[1].min_secs, med[1].max_secs, med[1].samples),
            (1.0, 3.0, 3)
        );
        assert_eq!(m.median_at(Op::Send, 1), Some(9.0));
        assert_eq!(m.median_at(Op::Send, 2), None);
    }

    #[test]
    fn monotonic_check_tolerates_noise_only() {
        let mut m = Measurements::default();
        m.push(Op::PingPong, 1, 10.0);
        m.push(Op::PingPong, 2, 9.0); // -10%: noise
        m.push(Op::PingPong, 4, 12.0);
        assert!(m.check_monotonic(Op::PingPong, 0.25).is_ok());
        m.push(Op::PingPong, 8, 6.0); // -50%
        let e = m.check_monotonic(Op::PingPong, 0.25).unwrap_err();
        assert!(
            e.to_string()
                .contains("1.2000e1 s at 4 B but 6.0000e0 s at 8 B"),
            "{e}"
        );
    }
}
