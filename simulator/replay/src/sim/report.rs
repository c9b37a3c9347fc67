//! What a replay reports: the per-rank and per-job times at its end, or the deadlock that
//! stopped it, naming every blocked rank and what it waits for.

use super::Simulation;
use crate::comm::{comm_of, mpi_tag, Tag};
use crate::error::{BlockedRank, ReplayError};
use crate::jobs::JobReport;
use crate::rank::{Block, RankState, Step};
use crate::report::{RankReport, Report};

impl Simulation<'_> {
    pub(super) fn report(self) -> Report {
        let kernel = self.engine.stats();
        let mut last: Option<&RankState> = None;
        for r in &self.ranks {
            if last.is_none_or(|l| r.finish_secs >= l.finish_secs) {
                last = Some(r);
            }
        }
        let simulated = last.map_or(0.0, |l| l.finish_secs - l.init_secs);
        let mut warnings = self.warnings;
        let ranks = self
            .ranks
            .iter()
            .enumerate()
            .map(|(i, r)| {
                if r.reader.foreign_lines() > 0 {
                    warnings.push(format!(
                        "{}: {} line(s) naming another rank were ignored (as SimGrid does)",
                        r.reader.origin().display(),
                        r.reader.foreign_lines()
                    ));
                }
                RankReport {
                    rank: i as u32,
                    host: self.platform.hosts()[r.host as usize].name.clone(),
                    finish_secs: r.finish_secs,
                    init_secs: r.init_secs,
                    compute_secs: r.compute_secs,
                    comm_secs: r.comm_secs,
                    wait_secs: r.wait_secs,
                    sleep_secs: r.sleep_secs,
                    actions: r.actions,
                }
            })
            .collect();
        let jobs = self
            .jobs
            .iter()
            .map(|j| {
                let mine = &self.ranks[j.first_rank as usize..(j.first_rank + j.ranks) as usize];
                let mut last: Option<&RankState> = None;
                for r in mine {
                    if last.is_none_or(|l| r.finish_secs >= l.finish_secs) {
                        last = Some(r);
                    }
                }
                JobReport {
                    name: j.name.clone(),
                    first_rank: j.first_rank,
                    ranks: j.ranks,
                    start_secs: mine
                        .iter()
                        .map(|r| r.init_secs)
                        .fold(f64::INFINITY, f64::min),
                    end_secs: last.map_or(0.0, |l| l.finish_secs),
                    time_secs: last.map_or(0.0, |l| l.finish_secs - l.init_secs),
                }
            })
            .collect();
        Report {
            simulated_time_secs: simulated,
            ranks,
            actions: self.actions,
            warnings,
            jobs,
            kernel,
        }
    }

    pub(super) fn deadlock(&self) -> ReplayError {
        let mut blocked = Vec::new();
        for (r, st) in self.ranks.iter().enumerate() {
            if st.block == Block::Finished {
                continue;
            }
            let mut waits_for = Vec::new();
            for &q in &st.waiting {
                let rq = &self.mail.reqs[q as usize];
                if rq.done || rq.owner != r as u32 {
                    continue;
                }
                let tag = describe_tag(rq.tag);
                if rq.is_send {
                    waits_for.push(format!(
                        "send to rank {} ({tag}, {} bytes) to be received",
                        rq.peer, rq.bytes
                    ));
                } else if rq.bytes == u64::MAX {
                    waits_for.push(format!("recv from rank {} ({tag})", rq.peer));
                } else {
                    waits_for.push(format!(
                        "recv from rank {} ({tag}, {} bytes)",
                        rq.peer, rq.bytes
                    ));
                }
            }
            if let Some(Step::Probe { peer, tag } | Step::ProbeCheck { peer, tag, .. }) =
                st.steps.front()
            {
                waits_for.push(format!(
                    "a message from rank {peer} ({}) to probe",
                    describe_tag(*tag)
                ));
            }
            for (src, tag, bytes) in self.mail.unmatched_sends_to(r as u32) {
                waits_for.push(format!(
                    "(unreceived message from rank {src}, {}, {bytes} bytes)",
                    describe_tag(tag)
                ));
            }
            blocked.push(BlockedRank {
                at: self.loc(r as u32),
                action: st.current.map_or("(between actions)", |c| c.0),
                waits_for,
            });
        }
        ReplayError::Deadlock {
            time_secs: self.engine.now(),
            blocked,
        }
    }
}

fn describe_tag(t: Tag) -> String {
    let (tag, comm) = (mpi_tag(t), comm_of(t));
    let kind = if tag < 0 { "collective tag" } else { "tag" };
    if comm == 0 {
        format!("{kind} {tag}")
    } else {
        format!("{kind} {tag} on sub-communicator #{comm}")
    }
}
