#!/usr/bin/env python3
"""Where each case's error comes from: compute, communication or waiting.

For every case of a `timeless validate` output directory whose traces were kept (validate.sh
keeps them in EXT_BUILD/validate/traces), compares, per rank and averaged over the ranks:

* the **traced run** (its `rank-<r>.timed.txt`: enter and exit of every MPI call): the time in
  MPI calls (`mpi`) and between them (`gaps`: computation plus the tracer's own work), from the
  exit of `init` to the enter of `finalize`;
* the **replay** as `timeless validate` did it (same calibration, hosts at the case's speed,
  compensated), through `timeless simulate --format json`: each rank's `compute_time`,
  `comm_time` and `wait_time`.

The measured untraced time T is split in the traced run's proportions (the tracer slows the
traced run as a whole; its calls and gaps are scaled by T / traced span), so that

    predicted - T  =  (compute - gaps')  +  (comm + wait - mpi')  +  (finish - span)

per rank on average, the last term being the replay's spread of finishing times against the
mean (small). In a folded run (more ranks than cores) the split says little: a rank's time in
MPI calls is mostly time its core spent on other ranks' computation. There the telling number
is how busy the cores were with computation: in the traced run, the share of core time the
gaps between calls got (each of k concurrent gaps min(1, C/k) of a core); in the replay, the
run's flops at the replay's speed over C x the predicted time. Writes attribute.csv and attribute.txt next to validate.csv (or to --out) and
prints the table.

Usage: attribute.py VALIDATE_OUT CALDIR [--timeless BIN] [--out DIR] [--cfg KEY:VALUE ...]
"""

import argparse
import csv
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile


def timed_rank(path):
    """Per-rank sums of a timed trace: (span, mpi) seconds between init's exit and
    finalize's enter; mpi = time inside the calls in between."""
    init_end = None
    fin_start = None
    mpi = 0.0
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) < 4 or parts[0].startswith("#"):
                continue
            try:
                t0 = float(parts[1])
                t1 = float(parts[2])
            except ValueError:
                continue
            action = parts[3]
            if action == "init":
                init_end = t1
                continue
            if action == "finalize":
                fin_start = t0
                continue
            if action in ("comm_def", "location", "compute", "sleep"):
                # comm_def lines repeat the timestamps of the call that created it
                continue
            mpi += t1 - t0
    if init_end is None or fin_start is None:
        return None
    return fin_start - init_end, mpi


def gaps_and_flops(tdir, rank):
    """One rank's gaps between MPI calls (start, end) from init's exit to finalize's enter,
    and the flops of its trace."""
    flops = 0.0
    with open(os.path.join(tdir, f"rank-{rank}.txt")) as f:
        for line in f:
            p = line.split()
            if len(p) > 2 and p[1] == "compute":
                flops += float(p[2])
    gaps = []
    prev = None
    with open(os.path.join(tdir, f"rank-{rank}.timed.txt")) as f:
        for line in f:
            p = line.split()
            if len(p) < 4 or p[3] in ("comm_def", "location"):
                continue
            try:
                t0, t1 = float(p[1]), float(p[2])
            except ValueError:
                continue
            if p[3] == "init":
                prev = t1
                continue
            if prev is not None and t0 > prev:
                gaps.append((prev, t0))
            if p[3] == "finalize":
                break
            prev = t1
    return gaps, flops


def core_busy(tdir, np_, cores):
    """Share of the cores' time (`cores` of them, at most one per rank) that the traced run's
    gaps between calls got, min(1, cores / k(t)) for k gaps at once, over init-to-finalize;
    and the flops of the run."""
    events = []
    flops = 0.0
    ends = []
    for r in range(np_):
        gaps, fl = gaps_and_flops(tdir, r)
        flops += fl
        for a, b in gaps:
            events += [(a, 1), (b, -1)]
        if gaps:
            ends += [gaps[0][0], gaps[-1][1]]
    events.sort()
    c = min(cores, np_)
    k = 0
    prev = None
    busy = 0.0
    for t, d in events:
        if prev is not None and k > 0:
            busy += min(c, k) * (t - prev)
        k += d
        prev = t
    span = max(ends) - min(ends) if ends else float("nan")
    return busy / (c * span), flops


def replay(timeless, trace_dir, cal, speed, np_, extra_cfg):
    """timeless simulate of a trace directory on calibration `cal` with hosts at `speed`."""
    with open(os.path.join(cal, "platform.xml")) as f:
        xml = f.read()
    xml = re.sub(r'speed="[^"]*"', f'speed="{speed:e}f"', xml)
    with tempfile.NamedTemporaryFile("w", suffix=".xml", delete=False) as p:
        p.write(xml)
        plat = p.name
    try:
        cmd = [timeless, "simulate", os.path.join(trace_dir, "trace-list.txt"),
               "--platform", plat, "--hostfile", os.path.join(cal, "hostfile"),
               "-n", str(np_), "--cfg-file", os.path.join(cal, "smpi.cfg"),
               "--format", "json"]
        for c in extra_cfg:
            cmd += ["--cfg", c]
        out = subprocess.run(cmd, check=True, capture_output=True, text=True).stdout
    finally:
        os.unlink(plat)
    return json.loads(out)


def calibration_dir(caldir, name):
    """The directory of the calibration `validate` names `name` (`base`, `fold<K>`, either with
    `-pinned`), and the `--cfg` items it adds: a pinned one is `fold<K>-pinned/` when measured
    pinned, else the calibration itself, replayed with `timeless/pin-ranks` (as `validate`
    loads it)."""
    cfg = []
    if name.endswith("-pinned"):
        cfg = ["timeless/pin-ranks:yes"]
        own = os.path.join(caldir, name)
        if name != "base-pinned" and os.path.exists(os.path.join(own, "platform.xml")):
            return own, cfg
        name = name[:-len("-pinned")]
    return (caldir if name == "base" else os.path.join(caldir, name)), cfg


def traced_runs(tdir):
    """The traced runs of a case: `tdir` itself, or its numbered subdirectories (`validate
    --traces K` keeps each of the K runs in `traces/<case>/<i>/`)."""
    if os.path.exists(os.path.join(tdir, "trace-list.txt")):
        return [tdir]
    subs = sorted((d for d in os.listdir(tdir) if d.isdigit()), key=int)
    return [os.path.join(tdir, d) for d in subs
            if os.path.exists(os.path.join(tdir, d, "trace-list.txt"))]


def mean(xs):
    return sum(xs) / len(xs) if xs else float("nan")


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("validate_out")
    ap.add_argument("caldir")
    ap.add_argument("--timeless", default=None)
    ap.add_argument("--out", default=None)
    ap.add_argument("--cfg", action="append", default=[])
    a = ap.parse_args()
    here = os.path.dirname(os.path.abspath(__file__))
    timeless = a.timeless or os.path.join(here, "..", "..", "target", "release", "timeless")
    out = a.out or a.validate_out
    os.makedirs(out, exist_ok=True)
    rows = list(csv.DictReader(open(os.path.join(a.validate_out, "validate.csv"))))
    res = []
    for r in rows:
        np_ = int(r["ranks"])
        tdir = os.path.join(a.validate_out, "traces", f"{r['program']}-n{np_}")
        if not os.path.isdir(tdir):
            print(f"{r['program']} {np_}: no traces in {tdir}", file=sys.stderr)
            continue
        cal, cfg = calibration_dir(a.caldir, r["calibration"])
        cfg = cfg + a.cfg
        speed = float(r["trace_rate_flops_per_sec"] or 0) if r["speed_source"] == "trace" else 0
        if not speed or r["predicted_secs"] != r["predicted_trace_secs"]:
            speed = float(r["kernel_speed_flops_per_sec"])
        runs = traced_runs(tdir)
        if not runs:
            print(f"{r['program']} {np_}: no trace-list.txt in {tdir}", file=sys.stderr)
            continue
        # Several traced runs (`validate --traces K`): the one whose replay is the median, as
        # validate predicts from the median of their predictions (the lower one of two).
        reps = sorted(((replay(timeless, d, cal, speed, np_, cfg), d) for d in runs),
                      key=lambda x: x[0]["simulated_time"])
        rep, tdir = reps[(len(reps) - 1) // 2]
        ranks = rep["ranks"]
        traced = [timed_rank(os.path.join(tdir, f"rank-{i}.timed.txt")) for i in range(np_)]
        if any(t is None for t in traced):
            print(f"{r['program']} {np_}: incomplete timed trace", file=sys.stderr)
            continue
        measured = float(r["measured_median_secs"])
        span = max(t[0] for t in traced)
        scale = measured / span
        gaps = mean([(t[0] - t[1]) * scale for t in traced])
        mpi = mean([t[1] * scale for t in traced])
        comp = mean([x["compute_time"] for x in ranks])
        comm = mean([x["comm_time"] for x in ranks])
        wait = mean([x["wait_time"] for x in ranks])
        finish = mean([x["finish_time"] for x in ranks])
        pred = rep["simulated_time"]
        with open(os.path.join(tdir, "trace-meta.json")) as f:
            meta = json.load(f)
        cores = meta.get("hosts", [{}])[0].get("cpus", 2) if np_ > 2 else np_
        busy_traced, flops = core_busy(tdir, np_, cores)
        busy_replay = flops / speed / (min(cores, np_) * pred)
        res.append({
            "program": r["program"], "ranks": np_, "calibration": r["calibration"],
            "measured_secs": measured, "traced_span_secs": span,
            "predicted_secs": pred, "validate_predicted_secs": float(r["predicted_secs"]),
            "error_pct": 100 * (pred - measured) / measured,
            "gaps_secs": gaps, "mpi_secs": mpi,
            "replay_compute_secs": comp, "replay_comm_secs": comm, "replay_wait_secs": wait,
            "compute_err_pct": 100 * (comp - gaps) / measured,
            "comm_wait_err_pct": 100 * (comm + wait - mpi) / measured,
            "comm_pct_of_replay": 100 * comm / max(finish, 1e-12),
            "wait_pct_of_replay": 100 * wait / max(finish, 1e-12),
            "spread_pct": 100 * (pred - finish) / measured,
            "mpi_share_traced_pct": 100 * mpi / measured,
            "core_busy_traced_pct": 100 * busy_traced,
            "core_busy_replay_pct": 100 * busy_replay,
        })
    keys = list(res[0].keys()) if res else []
    with open(os.path.join(out, "attribute.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, keys)
        w.writeheader()
        for x in res:
            w.writerow({k: (f"{v:.6f}" if isinstance(v, float) else v) for k, v in x.items()})
    lines = ["program      N  net    measured  predicted  error | traced: gaps    mpi | replay: compute   comm   wait | error from: compute  comm+wait  spread | cores busy: traced replay"]
    for x in res:
        lines.append(
            f"{x['program']:<11} {x['ranks']:>2}  {x['calibration']:<5} {x['measured_secs']:8.3f} {x['predicted_secs']:9.3f} {x['error_pct']:+6.1f}% |"
            f" {x['gaps_secs']:13.3f} {x['mpi_secs']:6.3f} | {x['replay_compute_secs']:15.3f} {x['replay_comm_secs']:6.3f} {x['replay_wait_secs']:6.3f} |"
            f" {x['compute_err_pct']:+18.1f}% {x['comm_wait_err_pct']:+9.1f}% {x['spread_pct']:+6.1f}% |"
            f" {x['core_busy_traced_pct']:19.1f}% {x['core_busy_replay_pct']:5.1f}%")
    errs = [x["error_pct"] for x in res]
    if errs:
        lines.append(
            f"median |error| {statistics.median([abs(e) for e in errs]):.2f}%, max {max(abs(e) for e in errs):.2f}%, "
            f"mean signed {mean(errs):+.2f}%; mean compute part {mean([x['compute_err_pct'] for x in res]):+.2f}%, "
            f"comm+wait part {mean([x['comm_wait_err_pct'] for x in res]):+.2f}%, spread {mean([x['spread_pct'] for x in res]):+.2f}%")
    text = "\n".join(lines) + "\n"
    open(os.path.join(out, "attribute.txt"), "w").write(text)
    print(text, end="")


if __name__ == "__main__":
    main()
