#!/usr/bin/env bash
# Sweep speed-up: a 100-point sweep (10 bandwidth x 10 latency factors) of a 64-rank 2D stencil
# trace, serial (`-j 1`, A) against all cores (`-j 2` on the 2-core VM, B), alternated
# A B A B ... so that both see the same background load, each run timed in its own autogroup at
# the highest priority (`timed` of validation/calibration/priority.sh). Writes bench.csv (one row
# per run: label, jobs, wall seconds, sum of the points' replay wall seconds, load average before
# and after) and RESULTS.md (medians, ratio, machine, load).
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
echo "label,jobs,wall_s,points_wall_s,load1_before,load1_after" > "$csv"
one() { # label jobs
  local out="$work/out-$1-$i" l0 t0 t1
  rm -rf "$out"
  l0="$(load)"
  t0="$(date +%s.%N)"
  timed "$exe" sweep "$work/study.toml" -o "$out" -j "$2" --no-plot > "$work/log-$1-$i.txt"
  t1="$(date +%s.%N)"
  # points_wall_s: the sum of the points' own replay wall times (wall.csv).
  echo "$1,$2,$(awk -v a="$t0" -v b="$t1" 'BEGIN { printf "%.3f", b - a }'),$(awk -F, 'NR > 1 { s += $NF } END { printf "%.3f", s }' "$out/wall.csv"),$l0,$(load)" >> "$csv"
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

python3 "$here/report.py" "$csv" "$here/RESULTS.md" "$actions" "$iters" "$jobs"
