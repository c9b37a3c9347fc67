#!/usr/bin/env python3
"""Where a pinned folded run's time goes, core by core: measured and replayed.

Usage: coretime.py TRACE_DIR CORES [TIMELINE_CSV]

TRACE_DIR is a trace kept by `timeless validate` (or written by `timeless trace --pin
--timestamps`): its `rank-<r>.timed.txt` files give the enter and exit of every traced call.
Rank r ran pinned on core r mod CORES (`timeless trace --pin`). A core is *busy* while at least
one of its ranks is outside MPI (computing, or the tracer's own work between calls) and *idle*
while all its ranks are inside MPI calls. For each core the script prints the busy and idle
time of the traced run, the idle periods by length, and the calls its ranks were in during the
idle periods of 100 us or more (rank-seconds); then the time when no core computes.

TIMELINE_CSV is `timeless simulate --timeline` of the same trace (pinned:
`--cfg timeless/pin-ranks:yes`): the same split of the replay, a core being busy while one of
its ranks is in a `compute` action.

Worked example (run 9's miniFE on 8 ranks, trace 1, rate counted per core): measured core 0
busy 3.949 s, idle 0.579 s (0.35 s of it in 132 periods of 1-10 ms, ranks in `allreduce` and
`send`); replayed busy 3.938 s, idle 0.156 s. The compute is right; the missing 0.42 s per core
is waiting while the other core computes (no core computes for only 0.075 s measured).
"""
import collections
import csv
import glob
import os
import sys

BINS = [(1e-5, "<10us"), (1e-4, "10-100us"), (1e-3, "0.1-1ms"), (1e-2, "1-10ms"), (float("inf"), ">=10ms")]


def read_calls(trace_dir):
    """Per rank: [(enter_s, exit_s, keyword)] in trace order."""
    ranks = {}
    for f in glob.glob(os.path.join(trace_dir, "rank-*.timed.txt")):
        r = int(os.path.basename(f).split("-")[1].split(".")[0])
        calls = []
        with open(f) as fh:
            for line in fh:
                p = line.split()
                if len(p) >= 4 and not p[0].startswith("#"):
                    calls.append((float(p[1]), float(p[2]), p[3]))
        ranks[r] = calls
    if not ranks:
        sys.exit(f"coretime.py: no rank-*.timed.txt in {trace_dir} (trace with --timestamps)")
    return ranks


def idle_periods(intervals, t0, t1):
    """The gaps of [t0, t1] not covered by any interval, as (start, end)."""
    ev = sorted([(s, 1) for s, _ in intervals] + [(e, -1) for _, e in intervals])
    k, last, out = 0, t0, []
    for t, d in ev:
        if k == 0 and t > last:
            out.append((last, t))
        k += d
        last = t
    if t1 > last:
        out.append((last, t1))
    return out


def histogram(periods):
    count, secs = collections.Counter(), collections.Counter()
    for a, b in periods:
        name = next(n for limit, n in BINS if b - a < limit)
        count[name] += 1
        secs[name] += b - a
    return ", ".join(f"{n}: {count[n]} ({secs[n]:.3f} s)" for _, n in BINS if count[n])


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    trace_dir, cores = sys.argv[1], int(sys.argv[2])
    ranks = read_calls(trace_dir)
    t0 = min(c[0][0] for c in ranks.values())
    t1 = max(c[-1][1] for c in ranks.values())
    outside = {r: [(a[1], b[0]) for a, b in zip(c, c[1:]) if b[0] > a[1]] for r, c in ranks.items()}
    print(f"{trace_dir}: {len(ranks)} ranks on {cores} cores, traced run {t1 - t0:.3f} s (first enter to last exit)")
    replayed = None
    if len(sys.argv) > 3:
        replayed, end = collections.defaultdict(list), 0.0
        with open(sys.argv[3]) as fh:
            for row in csv.DictReader(fh):
                s, e = float(row["start_s"]), float(row["end_s"])
                end = max(end, e)
                if row["action"] == "compute" and e > s:
                    replayed[int(row["rank"])].append((s, e))
    for core in range(cores):
        mates = sorted(r for r in ranks if r % cores == core)
        busy_iv = [iv for r in mates for iv in outside[r]]
        idle = idle_periods(busy_iv, t0, t1)
        idle_secs = sum(b - a for a, b in idle)
        calls = collections.Counter()
        for a, b in idle:
            if b - a < 1e-4:
                continue
            for r in mates:
                for enter, exit_, kw in ranks[r]:
                    if enter <= a < exit_:
                        calls[kw] += b - a
                        break
        print(f"  core {core} (ranks {' '.join(map(str, mates))}): measured busy {t1 - t0 - idle_secs:.3f} s, idle {idle_secs:.3f} s")
        print(f"    idle periods: {histogram(idle)}")
        if calls:
            print("    rank-seconds of the idle periods of 100 us or more, by call: "
                  + ", ".join(f"{k} {v:.3f}" for k, v in calls.most_common(6)))
        if replayed is not None:
            r_idle = idle_periods([iv for r in mates for iv in replayed[r]], 0.0, end)
            r_secs = sum(b - a for a, b in r_idle)
            print(f"    replayed busy {end - r_secs:.3f} s, idle {r_secs:.3f} s of {end:.3f} s; idle periods: {histogram(r_idle)}")
    none = idle_periods([iv for r in ranks for iv in outside[r]], t0, t1)
    print(f"  no core computing: measured {sum(b - a for a, b in none):.3f} s ({histogram(none)})")
    if replayed is not None:
        r_none = idle_periods([iv for r in replayed for iv in replayed[r]], 0.0, end)
        print(f"  no core computing: replayed {sum(b - a for a, b in r_none):.3f} s ({histogram(r_none)})")


if __name__ == "__main__":
    main()
