#!/usr/bin/env bash
# Instructions per MPI call of the tracer's options, counted by callgrind (deterministic, unlike
# times on a shared machine): `callcost` (validation/programs/callcost.c, one rank sending to
# itself) run under `valgrind --tool=callgrind` for 2000 and 12000 iterations; the difference of
# the totals over the 30,000 calls in between (start-up cancels out). The clock and burst
# settings make the tracer's decisions independent of valgrind's slowdown.
# Configurations as callcost.sh: plain trace flowgraph flowgraph-only callsites.
#   validation/flowgraph/callinstr.sh [CONFIG...]      (default: plain trace flowgraph flowgraph-only)
#   LIB=/path/to/libtimeless_preload.so validation/flowgraph/callinstr.sh trace   (another build)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
configs=("$@")
[ ${#configs[@]} -gt 0 ] || configs=(plain trace flowgraph flowgraph-only)
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
command -v valgrind >/dev/null || { echo "valgrind is not installed" >&2; exit 2; }
[ -n "${LIB:-}" ] || cargo build --release -q -p timeless-preload --manifest-path "$root/Cargo.toml"
lib="${LIB:-$root/target/release/libtimeless_preload.so}"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
make -s -C "$root/validation/programs" BUILD="$work/bin" >/dev/null
total() { # CONFIG ITERATIONS -> instructions of the whole run
  local e=(TIMELESS_OUT="$work/t" TIMELESS_REF_SPEED=1e9 TIMELESS_EXACT_CPU_ABOVE_SECS=1
           TIMELESS_MIN_BURST_SECS=1 TIMELESS_MAX_CARRY_SECS=1e9)
  case $1 in
    plain) ;;
    trace) e+=(LD_PRELOAD="$lib") ;;
    flowgraph) e+=(LD_PRELOAD="$lib" TIMELESS_FLOWGRAPH="$work/g.tfg") ;;
    flowgraph-only) e+=(LD_PRELOAD="$lib" TIMELESS_FLOWGRAPH="$work/g.tfg" TIMELESS_FLOWGRAPH_ONLY=1) ;;
    callsites) e+=(LD_PRELOAD="$lib" TIMELESS_CALLSITES=1) ;;
    *) echo "unknown configuration $1" >&2; exit 2 ;;
  esac
  mpirun -np 1 -x LD_PRELOAD= env "${e[@]}" valgrind --tool=callgrind \
    --callgrind-out-file="$work/cg.out" "$work/bin/callcost" "$2" 2>"$work/err" >/dev/null
  grep -o 'Collected : [0-9]*' "$work/err" | grep -o '[0-9]*'
}
for c in "${configs[@]}"; do
  a=$(total "$c" 2000)
  b=$(total "$c" 12000)
  echo "$c: $(( (b - a) / 30000 )) instructions per call"
done
