#!/usr/bin/env python3
"""Overhead of communicator-centric profiles (issue 13): `--profile-only` and `--profile` next to
tracing alone and to the untraced program, on the validation programs and on real applications
(NAS Parallel Benchmarks MPI, built outside the repository), plus a measured-vs-simulated profile
of one application.

    validation/profile/overhead.py [--npb DIR] [--repeat 5] [--ranks 2] [--out validation/profile]

`--ranks` defaults to 2, one rank per core of this machine: more ranks than cores make every
message hop wait for a context switch, which is not what a profiler's overhead is about.

`--npb` is an NPB3.4-MPI source tree (with `config/make.def`); its CG, FT, MG, IS and LU class A
binaries are built there with `make <bench> CLASS=A` (`bin/` must exist). The repository and
commit the tree came from go into the report with `--npb-origin "owner/repo@commit"`.

Every configuration runs through `validation/calibration/priority.sh`'s `timed` (own autogroup at
nice -19), the four configurations alternating (plain, trace, profile, profile-only, plain, ...),
`--repeat` rounds; the report gives medians. Per-call CPU cost comes from `callcost` on one rank
(median of the rounds). Writes OVERHEAD.md and overhead.csv into `--out`.
"""

import argparse
import csv
import os
import re
import shutil
import statistics
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PRIORITY = os.path.join(ROOT, "validation", "calibration", "priority.sh")

# (name, arguments): the programs of validation/tracing/run.py's overhead section.
PROGRAMS = [
    ("ring", ["1", "8", "0"]),  # start-up and MPI_Finalize only: the fixed cost
    ("ring", ["20000", "8", "0"]),  # latency-bound: calls 1-2 µs apart
    ("ring", ["20000", "8", "20000"]),  # 20 kflop between calls: about 10 µs apart
    ("stencil2d", ["256", "40"]),
    ("wavefront", ["160", "8", "4"]),
    ("commsplit", ["50"]),
    ("pi_mc", ["48", "200000"]),
]
NPB = ["cg", "ft", "mg", "is", "lu"]
CONFIGS = ["plain", "trace", "profile", "profile-only"]


def mpi_env():
    env = dict(os.environ)
    if os.geteuid() == 0:
        env["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
        env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    return env


def timed(cmd, env):
    """Runs `cmd` under priority.sh's `timed`; returns (stdout, wall seconds)."""
    wrapped = ["bash", "-c", f'source "{PRIORITY}"; timed "$@"', "timed"] + cmd
    t0 = time.perf_counter()
    p = subprocess.run(wrapped, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    wall = time.perf_counter() - t0
    if p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {' '.join(cmd)}\n{p.stdout}{p.stderr}")
    return p.stdout, wall


def run(config, exe, pargs, n, preload, work, speed):
    """One run of `exe` in `config`; the tracer writes into `work`."""
    cmd = ["mpirun", "-np", str(n), "--oversubscribe"]
    if config != "plain":
        shutil.rmtree(work, ignore_errors=True)
        os.makedirs(work, exist_ok=True)
        cmd += ["-x", f"LD_PRELOAD={preload}", "-x", f"TIMELESS_OUT={work}",
                "-x", f"TIMELESS_REF_SPEED={speed!r}"]
        if config in ("profile", "profile-only"):
            cmd += ["-x", f"TIMELESS_PROFILE={os.path.join(work, 'profile.db')}"]
        if config == "profile-only":
            cmd += ["-x", "TIMELESS_PROFILE_ONLY=1"]
    return timed(cmd + [exe] + pargs, mpi_env())


def profile_calls(timeless, db):
    """Calls in a profile database (`timeless profile --format json`)."""
    import json
    p = subprocess.run([timeless, "profile", db, "--view", "comm", "--format", "json"],
                       stdout=subprocess.PIPE, text=True, check=True)
    rows = json.loads(p.stdout)["by communicator"]
    return sum(r["calls"] for r in rows), len(rows)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--npb", help="NPB3.4-MPI source tree (built outside the repository)")
    ap.add_argument("--npb-origin", default="", help="owner/repo@commit of the NPB tree")
    ap.add_argument("--repeat", type=int, default=5)
    # One rank per core, as mpisee's measurements (and validation/tracing/run.py's overhead).
    ap.add_argument("--ranks", type=int, default=2)
    ap.add_argument("--out", default=os.path.join(ROOT, "validation", "profile"))
    ap.add_argument("--work", default="/tmp/timeless-profile-overhead")
    args = ap.parse_args()

    subprocess.run(["cargo", "build", "--release", "-p", "timeless", "-p", "timeless-preload"],
                   cwd=ROOT, check=True)
    timeless = os.path.join(ROOT, "target", "release", "timeless")
    preload = os.path.join(ROOT, "target", "release", "libtimeless_preload.so")
    build = os.path.join(args.work, "programs")
    subprocess.run(["make", "-C", os.path.join(ROOT, "validation", "programs"), f"BUILD={build}"],
                   check=True, stdout=subprocess.DEVNULL)
    p = subprocess.run([timeless, "calibrate", "compute", "--runs", "3"], stdout=subprocess.PIPE,
                       text=True, check=True)
    speed = float(re.search(r"speed: ([0-9.eE+-]+) flop/s", p.stdout).group(1))

    cases = [(name, os.path.join(build, name), pargs, "validation") for name, pargs in PROGRAMS]
    if args.npb:
        for b in NPB:
            exe = os.path.join(args.npb, "bin", f"{b}.A.x")
            if not os.path.exists(exe):
                subprocess.run(["make", b, "CLASS=A"], cwd=args.npb, check=True,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            cases.append((f"NPB {b.upper()} class A", exe, [], "NPB3.4-MPI"))

    rows = []
    for label, exe, pargs, origin in cases:
        walls = {c: [] for c in CONFIGS}
        work = os.path.join(args.work, re.sub(r"\W+", "_", label))
        for _ in range(args.repeat):
            for c in CONFIGS:
                walls[c].append(run(c, exe, pargs, args.ranks, preload, work, speed)[1])
        calls, comms = profile_calls(timeless, os.path.join(work, "profile.db"))
        med = {c: statistics.median(v) for c, v in walls.items()}
        per_rank_calls = calls / args.ranks
        gap_us = 1e6 * med["plain"] / max(per_rank_calls, 1)
        row = {"program": label, "origin": origin, "args": " ".join(pargs),
               "calls_per_rank": round(per_rank_calls), "comms": comms,
               "mean_gap_us": round(gap_us, 1)}
        for c in CONFIGS:
            row[f"{c}_s"] = round(med[c], 4)
        for c in CONFIGS[1:]:
            row[f"{c}_pct"] = round(100 * (med[c] - med["plain"]) / med["plain"], 2)
        rows.append(row)
        print(row, flush=True)

    # Per-call CPU cost, one rank sending to itself (callcost).
    cost = {}
    exe = os.path.join(build, "callcost")
    for _ in range(args.repeat):
        for c in CONFIGS:
            out, _ = run(c, exe, ["66666"], 1, preload, os.path.join(args.work, "callcost"), speed)
            cost.setdefault(c, []).append(float(re.search(r"([0-9.]+) ns CPU per call", out).group(1)))
    cost = {c: statistics.median(v) for c, v in cost.items()}

    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "overhead.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    git = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, stdout=subprocess.PIPE,
                         text=True).stdout.strip()
    cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
    lines = [
        "# Profile overhead (issue 13)", "",
        f"Generated by `validation/profile/overhead.py` at timeless {git}, {time.strftime('%Y-%m-%d')}, "
        f"{os.cpu_count()} cores ({cpu}), {args.ranks} ranks (`--oversubscribe` beyond the cores), "
        f"medians of {args.repeat} alternated rounds (plain, trace, profile, profile-only), every run "
        "through priority.sh's `timed`.",
        "",
        "* **plain**: `mpirun` without the tracer; **trace**: `LD_PRELOAD` tracer writing the TI "
        "trace; **profile**: trace + `TIMELESS_PROFILE` (`timeless trace --profile`); "
        "**profile-only**: `TIMELESS_PROFILE_ONLY=1` (`timeless trace --profile-only`), no trace file.",
        "* mean gap: the plain run's wall time divided by the MPI calls of one rank (the profile's "
        "count); mpisee's target (< 3 %) is for programs whose calls are >= 10 µs apart.",
        "* `ring 1 8 0` does nothing but start and finish: its difference is the fixed cost (the "
        "tracer's start-up; for profiles, the gather at MPI_Finalize, the naming and the SQLite "
        "write on rank 0).",
        "",
    ]
    if args.npb:
        lines += [f"NPB: NAS Parallel Benchmarks 3.4.1 MPI ({args.npb_origin or args.npb}), class A, "
                  "built with the tree's `config/make.def.template` (`mpif90 -O3 "
                  "-fallow-argument-mismatch`, `mpicc -O3`).", ""]
    lines += ["| program | args | calls/rank | comms | mean gap (µs) | plain (s) | trace | profile | "
              "profile-only |", "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        lines.append(f"| {r['program']} | {r['args']} | {r['calls_per_rank']} | {r['comms']} | "
                     f"{r['mean_gap_us']} | {r['plain_s']:.3f} | {r['trace_pct']:+.1f} % | "
                     f"{r['profile_pct']:+.1f} % | {r['profile-only_pct']:+.1f} % |")
    lines += ["", "Per-call CPU cost (`callcost`, one rank sending to itself, 66,666 iterations x 3 "
              "calls, median): " + ", ".join(f"{c} {cost[c]:.0f} ns" for c in CONFIGS) +
              f"; profile-only adds {cost['profile-only'] - cost['plain']:.0f} ns per call, "
              f"profile {cost['profile'] - cost['trace']:.0f} ns on top of tracing.", "",
              f"Load average at the end: {os.getloadavg()[0]:.1f}.", ""]
    with open(os.path.join(args.out, "OVERHEAD.md"), "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
