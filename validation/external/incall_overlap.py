#!/usr/bin/env python3
"""How much of each rank's CPU time inside MPI calls took its core from a computing core-mate.

Usage: incall_overlap.py TRACE_DIR [--scale]

TRACE_DIR is a trace of `timeless trace --timestamps` of a pinned folded run (the tracer's
`in-call-times.csv`, the ranks' `rank-<r>.timed.txt`, `trace-meta.json` whose
`per_rank_bound_cpu` names each rank's core). For each rank: the share of its in-call wall time
during which at least one other rank of its core was between two calls (computing), and its
in-call CPU time times that share: the CPU time its calls took from computing core-mates,
assuming the rank's in-call CPU is spread evenly over its in-call wall time. A poller that
spins while every rank of its core waits takes nothing from anyone (the calibration corpus's
fortran_mix: 28-41 %; the external mini-apps: 67-97 %; validation/external/README.md, session
39). Prints one line per rank and the total. With --scale it rewrites in-call-times.csv with
each rank's CPU time so scaled (on a copy of the trace: an experiment, for
`timeless validate --from ... --cfg timeless/poll-cpu-from-trace:yes`).
"""
import bisect
import json
import sys


def calls_of(path):
    """(enter, exit) wall seconds of every stamped call of a rank, in file order."""
    out = []
    with open(path) as f:
        for no, line in enumerate(f, 1):
            fields = line.split()
            if len(fields) < 4 or line.startswith("#"):
                continue
            try:
                enter, exit_ = float(fields[1]), float(fields[2])
            except ValueError:
                continue  # an unstamped comm_def line
            if exit_ < enter:
                sys.exit(f"{path}:{no}: exit {exit_} before enter {enter}")
            out.append((enter, exit_))
    return out


def union(intervals):
    merged = []
    for a, b in sorted(intervals):
        if merged and a <= merged[-1][1]:
            merged[-1][1] = max(merged[-1][1], b)
        else:
            merged.append([a, b])
    return merged


def overlap(intervals, merged):
    """Total length of `intervals` inside the disjoint sorted `merged`."""
    starts = [m[0] for m in merged]
    total = 0.0
    for a, b in intervals:
        i = max(bisect.bisect_right(starts, a) - 1, 0)
        while i < len(merged) and merged[i][0] < b:
            lo, hi = max(a, merged[i][0]), min(b, merged[i][1])
            if hi > lo:
                total += hi - lo
            i += 1
    return total


def main():
    if len(sys.argv) < 2 or sys.argv[1].startswith("-"):
        sys.exit(__doc__)
    d = sys.argv[1]
    scale = "--scale" in sys.argv[2:]
    meta = json.load(open(f"{d}/trace-meta.json"))
    n = meta["ranks"]
    core = meta.get("per_rank_bound_cpu") or [-1] * n
    if min(core) < 0:
        sys.exit(f"{d}/trace-meta.json: per_rank_bound_cpu: not a pinned run")
    calls = {r: calls_of(f"{d}/rank-{r}.timed.txt") for r in range(n)}
    gaps = {
        r: [(c[i][1], c[i + 1][0]) for i in range(len(c) - 1) if c[i + 1][0] > c[i][1]]
        for r, c in calls.items()
    }
    lines = open(f"{d}/in-call-times.csv").read().splitlines()
    out, tot_cpu, tot_taken = [lines[0]], 0.0, 0.0
    for line in lines[1:]:
        f = line.split(",")
        r = int(f[0])
        if f[3] == "":
            out.append(line)
            continue
        mates = [q for q in range(n) if q != r and core[q] == core[r]]
        busy = union([g for q in mates for g in gaps[q]])
        wall = sum(b - a for a, b in calls[r])
        share = overlap(calls[r], busy) / wall if wall > 0 and mates else 0.0
        cpu = float(f[3])
        tot_cpu += cpu
        tot_taken += cpu * share
        print(f"rank {r}: in-call CPU {cpu:.3f} s, a core-mate computing {100 * share:.0f} % "
              f"of its in-call time: {cpu * share:.3f} s taken")
        out.append(f"{f[0]},{f[1]},{f[2]},{cpu * share:.9f}")
    print(f"total: in-call CPU {tot_cpu:.3f} s, {tot_taken:.3f} s taken from computing "
          f"core-mates ({100 * tot_taken / max(tot_cpu, 1e-12):.0f} %)")
    if scale:
        open(f"{d}/in-call-times.csv", "w").write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
