#!/usr/bin/env bash
# Sweep speed-up: a 100-point sweep (10 bandwidth x 10 latency factors) of a 64-rank 2D stencil
# trace, serial (`-j 1`, A) against all cores (`-j 2` on the 2-core VM, B), alternated
# A B A B ... so that both see the same background load, each run timed in its own autogroup at
# the highest priority (`timed` of validation/calibration/priority.sh). Writes bench.csv (one row
# per run: label, jobs, wall seconds, load average before and after) and RESULTS.md (medians,
# ratio, machine, load).
#
#   validation/sweep/bench.sh [RUNS_PER_SIDE (default 5)] [STENCIL_ITERS (default 200)]
#
# Needs python3 and a release build (`cargo build --release -p timeless`; built if missing).
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
root="$(cd "$here/../.." && pwd)"
runs="${1:-5}"
iters="${2:-200}"
jobs="$(nproc)"
# shellcheck source=../calibration/priority.sh
. "$root/validation/calibration/priority.sh"

exe="$root/target/release/timeless"
[ -x "$exe" ] || cargo build --release -q -p timeless --manifest-path "$root/Cargo.toml"
work="$root/target/sweep-bench"
rm -rf "$work"
mkdir -p "$work"
actions="$(python3 "$root/validation/bench/stencil_gen.py" 64 "$iters" "$work/stencil" | awk '/actions/ {print $2}')"
values="0.25, 0.35, 0.5, 0.7, 1, 1.4, 2, 2.8, 4, 5.6"
cat > "$work/study.toml" <<EOF
platform = "stencil/platform.xml"
hostfile = "stencil/hostfile"
traces = ["stencil/list.txt"]
[[axis]]
name = "scale-bandwidth"
values = [$values]
[[axis]]
name = "scale-latency"
values = [$values]
EOF

load() { cut -d' ' -f1 /proc/loadavg; }
csv="$here/bench.csv"
echo "label,jobs,wall_s,load1_before,load1_after" > "$csv"
one() { # label jobs
  local out="$work/out-$1-$i" l0 t0 t1
  rm -rf "$out"
  l0="$(load)"
  t0="$(date +%s.%N)"
  timed "$exe" sweep "$work/study.toml" -o "$out" -j "$2" --no-plot > "$work/log-$1-$i.txt"
  t1="$(date +%s.%N)"
  echo "$1,$2,$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'),$l0,$(load)" >> "$csv"
  # Same bytes whatever the number of threads.
  cmp -s "$work/out-A-1/results.csv" "$out/results.csv" ||
    { echo "results.csv of $out differs from the first serial run's" >&2; exit 1; }
  grep -q "Points: 100 (100 run now" "$work/log-$1-$i.txt"
}
for i in $(seq 1 "$runs"); do
  one A 1
  one B "$jobs"
  echo "run $i: $(tail -2 "$csv" | cut -d, -f1,3 | tr '\n' ' ')" >&2
done

python3 - "$csv" "$here/RESULTS.md" "$actions" "$iters" "$jobs" <<'PY'
import csv, statistics, sys, platform, os
rows = list(csv.DictReader(open(sys.argv[1])))
out, actions, iters, jobs = sys.argv[2], int(sys.argv[3]), sys.argv[4], sys.argv[5]
a = [float(r["wall_s"]) for r in rows if r["label"] == "A"]
b = [float(r["wall_s"]) for r in rows if r["label"] == "B"]
ma, mb = statistics.median(a), statistics.median(b)
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

**B / A = {mb / ma:.3f}** (median over median; speed-up {ma / mb:.2f}x).

Load average (1 min) sampled before and after each run: min {min(loads):.2f}, median
{statistics.median(loads):.2f}, max {max(loads):.2f}.
""")
print(f"A median {ma:.2f} s, B median {mb:.2f} s, B/A {mb / ma:.3f}")
PY
