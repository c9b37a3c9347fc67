#!/usr/bin/env bash
# Replay benchmark: SimGrid 3.32 `smpirun -replay` against `timeless simulate` on two generated
# workloads (a 16-rank ring and a 64-rank 8x8 stencil). Measures wall time, peak RSS and the
# simulated time of each, and checks timeless's memory use does not grow with trace length.
# See README.md in this directory.
#
#   validation/bench/run.sh [--quick] [--no-simgrid] [--no-timeless] [--keep]
set -euo pipefail

usage() {
  cat <<'EOF'
Usage: validation/bench/run.sh [OPTIONS]
  --quick        10x fewer iterations (smoke run); results go to work/ instead of results.csv/RESULTS.md
  --no-simgrid   do not run SimGrid (also automatic, with a notice, if smpirun is missing)
  --no-timeless  do not build nor run timeless
  --keep         keep the generated traces in work/ (they are deleted at the end otherwise)
  -h, --help     this help
Environment: BENCH_TIMEOUT (seconds per run, default 1800), BENCH_WORK (work dir, default
validation/bench/work), BENCH_TIMELESS_BIN (use this timeless binary instead of building one).
EOF
}

HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
QUICK=0 SIMGRID=1 TIMELESS=1 KEEP=0
for a in "$@"; do
  case "$a" in
    --quick) QUICK=1 ;;
    --no-simgrid) SIMGRID=0 ;;
    --no-timeless) TIMELESS=0 ;;
    --keep) KEEP=1 ;;
    -h|--help) usage; exit 0 ;;
    *) echo "run.sh: unknown option $a" >&2; usage >&2; exit 2 ;;
  esac
done

RING_ITERS=20000     # 16 ranks x (3 x 20000 + 2) = 960,032 actions
STENCIL_ITERS=1111   # 576 actions per iteration over 64 ranks: 1111 -> 640,064 actions
MODE=full
if [ "$QUICK" = 1 ]; then
  RING_ITERS=$((RING_ITERS / 10)); STENCIL_ITERS=$((STENCIL_ITERS / 10)); MODE=quick
fi
MEM_ITERS=$((RING_ITERS / 10))   # the short ring of the memory check
TIMEOUT="${BENCH_TIMEOUT:-1800}"
WORK="${BENCH_WORK:-$HERE/work}"
if [ "$MODE" = full ]; then
  CSV_OUT="$HERE/results.csv" MD_OUT="$HERE/RESULTS.md"
else
  CSV_OUT="$WORK/results-quick.csv" MD_OUT="$WORK/RESULTS-quick.md"
fi

command -v python3 >/dev/null || { echo "run.sh: python3 is required" >&2; exit 2; }
if [ ! -x /usr/bin/time ]; then
  echo "== /usr/bin/time missing: installing the Debian package 'time'"
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time
  else
    sudo apt-get update -qq && sudo DEBIAN_FRONTEND=noninteractive apt-get install -y -qq time
  fi
fi
if [ "$SIMGRID" = 1 ] && ! command -v smpirun >/dev/null 2>&1; then
  echo "NOTICE: smpirun not found: SimGrid half skipped (install libsimgrid-dev / simgrid 3.32)"
  SIMGRID=0
fi
[ "$SIMGRID" = 0 ] && echo "NOTICE: SimGrid is not run; speed-up and agreement checks will be SKIP"

mkdir -p "$WORK"
RUNS="$WORK/runs.tsv"
printf 'workload\trole\ttool\titerations\tactions\tstatus\twall_s\trss_kib\tsim_time_s\n' > "$RUNS"

# ---- timeless build ----------------------------------------------------------------------------
TL_BIN="${BENCH_TIMELESS_BIN:-$ROOT/target/release/timeless}"
if [ "$TIMELESS" = 1 ] && [ -n "${BENCH_TIMELESS_BIN:-}" ]; then
  echo "== using BENCH_TIMELESS_BIN=$TL_BIN (no build)"
  [ -x "$TL_BIN" ] || { echo "NOTICE: $TL_BIN is not executable; timeless half skipped"; TIMELESS=0; }
elif [ "$TIMELESS" = 1 ]; then
  echo "== cargo build --release -p timeless"
  if (cd "$ROOT" && env -u CARGO_TARGET_DIR cargo build --release -p timeless) > "$WORK/build.log" 2>&1 \
     && [ -x "$TL_BIN" ]; then
    echo "   built $TL_BIN"
  else
    echo "NOTICE: timeless does not build; timeless half skipped. Last lines of $WORK/build.log:"
    tail -n 15 "$WORK/build.log" | sed 's/^/   /'
    TIMELESS=0
  fi
fi

# ---- measurement helpers -----------------------------------------------------------------------
now_ns() { date +%s%N; }

# measure DIR LOGPREFIX cmd... : runs cmd in DIR under /usr/bin/time, stdout to LOGPREFIX.out,
# stderr to LOGPREFIX.err; sets M_STATUS (ok|failed), M_RC, M_WALL (s, from a nanosecond clock
# around the command: /usr/bin/time's %e has only 10 ms resolution; %e is kept in LOGPREFIX.time)
# and M_RSS (KiB, %M).
measure() {
  local dir="$1" p="$2"; shift 2
  local t0 t1 rc=0
  t0=$(now_ns)
  (cd "$dir" && /usr/bin/time -o "$p.time" -f "%e %M" timeout "$TIMEOUT" "$@" > "$p.out" 2> "$p.err") || rc=$?
  t1=$(now_ns)
  M_WALL=$(python3 -c "print(($t1 - $t0) / 1e9)")
  # On failure /usr/bin/time writes a "Command exited with non-zero status" line first.
  M_RSS=$(tail -n 1 "$p.time" 2>/dev/null | awk '{print $2}')
  M_RC=$rc
  if [ "$rc" = 0 ]; then M_STATUS=ok; else M_STATUS=failed; fi
}

record() {  # workload role tool iterations actions status wall rss sim
  printf '%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\t%s\n' "$@" >> "$RUNS"
}

simgrid_time() {  # the clock of the last "Simulation time" line of a SimGrid log
  python3 - "$1" <<'EOF'
import re, sys
t = None
for line in open(sys.argv[1], errors="replace"):
    m = re.match(r"\[([0-9.eE+-]+)\].*Simulation time ([0-9.eE+-]+)", line)
    if m:
        t = m.group(1)
print(t if t is not None else "")
EOF
}

timeless_time() {  # simulated_time from timeless's JSON report
  python3 -c 'import json,sys; print(repr(float(json.load(open(sys.argv[1]))["simulated_time"])))' "$1" 2>/dev/null || true
}

report_run() {  # tool-label logprefix workload role tool iterations actions sim
  local label="$1" p="$2" sim="$8"
  if [ "$M_STATUS" = ok ] && [ -z "$sim" ]; then M_STATUS=failed; fi
  if [ "$M_STATUS" != ok ]; then
    echo "   $label FAILED (exit $M_RC): see $p.err"
    tail -n 5 "$p.err" | sed 's/^/     /'
  fi
  echo "   $label: wall ${M_WALL} s, peak ${M_RSS:-?} KiB, simulated ${sim:-?} s"
  record "$3" "$4" "$5" "$6" "$7" "$M_STATUS" "$M_WALL" "${M_RSS:--}" "${sim:--}"
}

run_simgrid() {  # workload role dir iterations actions
  local w="$1" role="$2" d="$3" it="$4" n="$5" np sim p="$3/simgrid"
  np=$(grep -c . "$d/hostfile")
  echo "   SimGrid : smpirun -np $np ... -replay list.txt"
  measure "$d" "$p" smpirun -np "$np" -platform platform.xml -hostfile hostfile \
    -replay list.txt '--log=root.fmt:[%.12r]%e%m%n'
  sim=$(simgrid_time "$p.err")
  [ -n "$sim" ] || sim=$(simgrid_time "$p.out")
  report_run "SimGrid " "$p" "$w" "$role" simgrid "$it" "$n" "$sim"
}

run_timeless() {  # workload role dir iterations actions
  local w="$1" role="$2" d="$3" it="$4" n="$5" np sim p="$3/timeless"
  np=$(grep -c . "$d/hostfile")
  echo "   timeless: timeless simulate list.txt --platform platform.xml --hostfile hostfile -n $np --format json"
  measure "$d" "$p" "$TL_BIN" simulate list.txt --platform platform.xml --hostfile hostfile \
    -n "$np" --format json
  sim=$(timeless_time "$p.out")
  report_run "timeless" "$p" "$w" "$role" timeless "$it" "$n" "$sim"
}

skipped() {  # workload role tool iterations actions
  record "$1" "$2" "$3" "$4" "$5" skipped - - -
}

# ---- workloads ---------------------------------------------------------------------------------
bench() {  # workload iterations
  local w="$1" it="$2" d="$WORK/$1-$2" n
  echo "== $w, $it iterations: generating into $d"
  rm -rf "$d"
  n=$(python3 "$HERE/gen.py" "$w" --iters "$it" --out "$d" | awk '/^actions/ {print $2}')
  echo "   $n actions"
  if [ "$SIMGRID" = 1 ]; then run_simgrid "$w" main "$d" "$it" "$n"; else skipped "$w" main simgrid "$it" "$n"; fi
  if [ "$TIMELESS" = 1 ]; then run_timeless "$w" main "$d" "$it" "$n"; else skipped "$w" main timeless "$it" "$n"; fi
  [ "$KEEP" = 1 ] || rm -f "$d"/rank-*.txt
}

bench ring "$RING_ITERS"
bench stencil "$STENCIL_ITERS"

# Memory check: timeless on the ring at a tenth of the iterations (the full-length ring's peak RSS
# is the one measured above).
d="$WORK/ring-$MEM_ITERS"
echo "== memory check: ring, $MEM_ITERS iterations (timeless only)"
rm -rf "$d"
n=$(python3 "$HERE/gen.py" ring --iters "$MEM_ITERS" --out "$d" | awk '/^actions/ {print $2}')
if [ "$TIMELESS" = 1 ]; then run_timeless ring mem "$d" "$MEM_ITERS" "$n"; else skipped ring mem timeless "$MEM_ITERS" "$n"; fi
[ "$KEEP" = 1 ] || rm -f "$d"/rank-*.txt

# ---- report ------------------------------------------------------------------------------------
echo
rc=0
python3 "$HERE/report.py" "$RUNS" "$CSV_OUT" "$MD_OUT" "$MODE" || rc=$?
echo
echo "written: $CSV_OUT, $MD_OUT (raw runs: $RUNS)"
exit $rc
