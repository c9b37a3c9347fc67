#!/usr/bin/env python3
"""RESULTS.md of bench.sh from its bench.csv.

    report.py BENCH_CSV OUT_MD ACTIONS STENCIL_ITERS JOBS
"""

import csv, statistics, sys, platform, os
rows = list(csv.DictReader(open(sys.argv[1])))
out, actions, iters, jobs = sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
a = [float(r["wall_s"]) for r in rows if r["label"] == "A"]
b = [float(r["wall_s"]) for r in rows if r["label"] == "B"]
pa = statistics.median(float(r["points_wall_s"]) for r in rows if r["label"] == "A")
pb = statistics.median(float(r["points_wall_s"]) for r in rows if r["label"] == "B")
ma, mb = statistics.median(a), statistics.median(b)
# Each B run follows its A run: the pair saw about the same background load.
pairs = [y / x for x, y in zip(a, b)]
loads = [float(r[k]) for r in rows for k in ("load1_before", "load1_after")]
cpu = next((l.split(":", 1)[1].strip() for l in open("/proc/cpuinfo") if l.startswith("model name")), "?")
with open(out, "w") as f:
    f.write(f"""# Sweep speed-up: serial vs {jobs} threads

Written by `validation/sweep/bench.sh` (raw runs: [bench.csv](bench.csv)). A 100-point sweep
(10 `scale-bandwidth` x 10 `scale-latency` factors, 0.25 to 5.6) of one 64-rank 2D stencil trace
(`validation/bench/stencil_gen.py 64 {iters}`: {actions} actions, periodic 5-point exchanges of
40 kB, an allreduce every 10 iterations) with `target/release/timeless sweep -j 1` (A) and
`-j {jobs}` (B), alternated A B A B ..., each run timed through `timed` of
`validation/calibration/priority.sh` (own session and autogroup, nice -19). Every run's
`results.csv` is checked to be the same bytes as the first serial run's.

Machine: {os.cpu_count()} logical CPUs ({cpu}), {platform.system()} {platform.release()}.

| | runs | median wall (s) | min | max |
|---|---|---|---|---|
| A: `-j 1` | {len(a)} | {ma:.2f} | {min(a):.2f} | {max(a):.2f} |
| B: `-j {jobs}` | {len(b)} | {mb:.2f} | {min(b):.2f} | {max(b):.2f} |

**B / A = {mb / ma:.3f}** (median over median; speed-up {ma / mb:.2f}x). Per alternated pair
(B_i / A_i): median {statistics.median(pairs):.3f}, min {min(pairs):.3f}, max {max(pairs):.3f}.

Load average (1 min) sampled before and after each run: min {min(loads):.2f}, median
{statistics.median(loads):.2f}, max {max(loads):.2f} (other sessions' builds and tests on the same
{os.cpu_count()} CPUs; the autogroup at nice -19 gives the timed run most, not all, of them).

Where the time goes: the points' own replay wall times (`wall.csv`) add up to a median
{pa:.2f} s in A and {pb:.2f} s in B. A spends {ma - pa:.2f} s outside the replays (start-up, trace
listing, results files, canonical rewrite); in B each replay is {100 * (pb / pa - 1):+.1f} % slower
than alone (two replays sharing caches, memory bandwidth and the loaded CPUs), and the perfect
split of B's replays would take {pb / int(jobs):.2f} s against {mb:.2f} s measured.
""")
print(f"A median {ma:.2f} s, B median {mb:.2f} s, B/A {mb / ma:.3f}")
