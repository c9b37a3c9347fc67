//! Other user files: flow graphs, calibration measurements, sweep studies, `--cfg` files,
//! multi-job descriptions, validate cases.

use std::path::Path;

use timeless_calibrate::input::{parse_csv, parse_skampi};
use timeless_calibrate::network::{calibrate_network, NetworkOptions};
use timeless_replay::ReplayConfig;

use super::{msg, scratch};
use crate::Outcome;

/// Header and operations of the ping-pong CSV.
pub(crate) const CSV_WORDS: &[&str] = &[
    "op,size_bytes,time_secs\n",
    "pingpong",
    "send",
    "recv",
    "isend",
    "irecv",
    "wait",
    "exchange",
    "exchange2",
    "exchange4",
    ",",
    "\n",
];

/// Words of SKaMPI's output.
pub(crate) const SKAMPI_WORDS: &[&str] = &[
    "begin result \"Pingpong_Send_Recv\"",
    "end result \"Pingpong_Send_Recv\"",
    "count= ",
    "#",
    "\n",
];

/// Keys of a sweep study.
pub(crate) const SWEEP_WORDS: &[&str] = &[
    "[study]",
    "[[axis]]",
    "[[trace]]",
    "name = \"a\"",
    "kind = \"cfg\"",
    "key = \"smpi/os\"",
    "values = [1, 2]",
    "platform = \"p.xml\"",
    "mode = \"grid\"",
    "mode = \"random\"",
    "samples = 3",
    "seed = 1",
    "path = \"t.txt\"",
    "scale",
    "bandwidth",
    "latency",
    "=",
    "[",
    "]",
];

/// Keys of `--cfg`.
pub(crate) const CFG_WORDS: &[&str] = &[
    "smpi/os:",
    "smpi/or:",
    "smpi/ois:",
    "smpi/bw-factor:",
    "smpi/lat-factor:",
    "smpi/async-small-thresh:",
    "smpi/send-is-detached-thresh:",
    "network/model:",
    "network/crosstraffic:",
    "network/TCP-gamma:",
    "network/loopback-bw:",
    "smpi/bcast:",
    "smpi/allreduce:",
    "smpi/host-speed:",
    "--cfg=",
    ";",
    ":",
    "0:1e-6:1e-9",
    "65472:11.6436",
];

/// A flow graph file; an accepted one rebuilds every rank's text (16 ranks at most).
pub(crate) fn flowgraph(data: &[u8]) -> Outcome {
    let origin = Path::new("flowgraph.tfg");
    let g = timeless_flowgraph::format::decode(data, origin).map_err(msg)?;
    for r in 0..16 {
        if g.rank_graph(r).is_none() {
            break;
        }
        g.rank_text(r, origin).map_err(msg)?;
    }
    Ok(())
}

/// A profile database (SQLite): every row read back into a profile.
pub(crate) fn profile_db(data: &[u8]) -> Outcome {
    let path = scratch().join("profile.db");
    std::fs::write(&path, data).map_err(msg)?;
    timeless_profile::store::read(&path)
        .map(|_| ())
        .map_err(msg)
}

/// Ping-pong CSV; accepted measurements go through the calibration fit.
pub(crate) fn calibrate_csv(data: &[u8]) -> Outcome {
    let m = parse_csv(&String::from_utf8_lossy(data), "pingpong.csv").map_err(msg)?;
    calibrate_network(&m, &NetworkOptions::default())
        .map(|_| ())
        .map_err(msg)
}

/// SKaMPI output; accepted measurements go through the calibration fit.
pub(crate) fn calibrate_skampi(data: &[u8]) -> Outcome {
    let m = parse_skampi(&String::from_utf8_lossy(data), "skampi.out").map_err(msg)?;
    calibrate_network(&m, &NetworkOptions::default())
        .map(|_| ())
        .map_err(msg)
}

/// A sweep study.
pub(crate) fn sweep(data: &[u8]) -> Outcome {
    timeless_sweep::Spec::parse(&String::from_utf8_lossy(data), Path::new("study.toml"))
        .map(|_| ())
        .map_err(msg)
}

/// A `--cfg-file`: every line applied to one configuration, as `timeless simulate` does.
pub(crate) fn cfg(data: &[u8]) -> Outcome {
    let path = scratch().join("cfg.txt");
    std::fs::write(&path, data).map_err(msg)?;
    let mut cfg = ReplayConfig::default();
    timeless_run::read_cfg_file(&path, &mut cfg, &mut |_| {}).map_err(msg)
}

/// A multi-job description.
pub(crate) fn jobs(data: &[u8]) -> Outcome {
    timeless_replay::jobs::description::parse_description(
        &String::from_utf8_lossy(data),
        Path::new("jobs.txt"),
    )
    .map(|_| ())
    .map_err(msg)
}

/// A validate cases file.
pub(crate) fn cases(data: &[u8]) -> Outcome {
    timeless_validate::cases::parse(&String::from_utf8_lossy(data), "cases.txt", None).map(|_| ())
}
