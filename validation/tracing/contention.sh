#!/usr/bin/env bash
# Why a traced latency-bound loop was slow on a busy machine (validation/tracing/README.md,
# "Per-record wall cost"). Runs `ring 20000 8 0` on 2 ranks while BUSY extra processes (default
# one per core) compete for the cores, interleaving: untraced; under clockwrap.c in each mode
# (nothing / thread CPU clock / CLOCK_MONOTONIC / getppid around MPI_Send and MPI_Recv); under the
# tracer reading the real thread CPU clock at every call (TIMELESS_EXACT_CPU_ABOVE_SECS=0) and
# with its default chained clock. Prints, per variant, the median wall time and involuntary
# context switches of rank 0 over RUNS runs (default 7).
#
#   validation/tracing/contention.sh   (after cargo build --release -p timeless-preload)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
RUNS="${RUNS:-7}"
BUSY="${BUSY:-$(nproc)}"
PRELOAD="${TIMELESS_PRELOAD:-${CARGO_TARGET_DIR:-$ROOT/target}/release/libtimeless_preload.so}"
[ -f "$PRELOAD" ] || { echo "contention.sh: $PRELOAD missing (cargo build --release -p timeless-preload)" >&2; exit 2; }
WORK="$(mktemp -d)"
make -s -C "$ROOT/validation/programs" BUILD="$WORK/bin"
mpicc -O2 -shared -fPIC -o "$WORK/libclockwrap.so" "$HERE/clockwrap.c"
if [ "$(id -u)" = 0 ]; then export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1; fi

busy=()
cleanup() { [ ${#busy[@]} -gt 0 ] && kill "${busy[@]}" 2>/dev/null; rm -rf "$WORK"; }
trap cleanup EXIT
for _ in $(seq "$BUSY"); do (exec yes >/dev/null) & busy+=($!); done

VARIANTS=(untraced wrap-nothing wrap-thread-cpu-clock wrap-monotonic wrap-getppid tracer-exact-clock tracer-chained-clock)
run() {
  local v=$1 env=()
  case $v in
    wrap-nothing) env=(-x "LD_PRELOAD=$WORK/libclockwrap.so" -x CLOCKWRAP_MODE=0) ;;
    wrap-thread-cpu-clock) env=(-x "LD_PRELOAD=$WORK/libclockwrap.so" -x CLOCKWRAP_MODE=1) ;;
    wrap-monotonic) env=(-x "LD_PRELOAD=$WORK/libclockwrap.so" -x CLOCKWRAP_MODE=2) ;;
    wrap-getppid) env=(-x "LD_PRELOAD=$WORK/libclockwrap.so" -x CLOCKWRAP_MODE=3) ;;
    tracer-exact-clock) env=(-x "LD_PRELOAD=$PRELOAD" -x "TIMELESS_OUT=$WORK/t" -x TIMELESS_REF_SPEED=1e9 -x TIMELESS_EXACT_CPU_ABOVE_SECS=0) ;;
    tracer-chained-clock) env=(-x "LD_PRELOAD=$PRELOAD" -x "TIMELESS_OUT=$WORK/t" -x TIMELESS_REF_SPEED=1e9) ;;
  esac
  rm -f "$WORK/time".*
  # Each rank's time goes to a file of its own (rank 0's is read), away from the program output.
  mpirun -np 2 "${env[@]}" sh -c 'exec /usr/bin/time -o "$0.$OMPI_COMM_WORLD_RANK" -f "%e %c" "$@"' \
    "$WORK/time" "$WORK/bin/ring" 20000 8 0 >/dev/null 2>&1
  cat "$WORK/time.0"
}
for _ in $(seq "$RUNS"); do
  for v in "${VARIANTS[@]}"; do echo "$v $(run "$v")"; done
done > "$WORK/results"
echo "ring 20000 8 0, 2 ranks, $BUSY busy processes, $RUNS runs; load average $(cut -d' ' -f1 /proc/loadavg)"
echo "| variant | median wall (s) | median involuntary context switches (rank 0) |"
echo "|---|---|---|"
python3 - "$WORK/results" "${VARIANTS[@]}" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1]) if len(l.split()) == 3]
for v in sys.argv[2:]:
    wall = [float(r[1]) for r in rows if r[0] == v]
    switches = [int(r[2]) for r in rows if r[0] == v]
    print(f"| {v} | {statistics.median(wall):.2f} | {statistics.median(switches):.0f} |")
PY
