#!/usr/bin/env bash
# Per-call CPU cost of the tracer's options: `callcost` (one rank sending to itself,
# validation/programs/callcost.c) run in each configuration, alternated ROUNDS times (default 5)
# through priority.sh's `timed`; prints each configuration's median ns of CPU per MPI call.
# Configurations: plain (untraced), trace, flowgraph (--flowgraph), flowgraph-only, callsites
# (--callsites); default: plain trace flowgraph flowgraph-only.
#   validation/flowgraph/callcost.sh [ROUNDS [CONFIG...]]
#   validation/flowgraph/callcost.sh 5 plain trace callsites     (CALLSITES.md)
set -euo pipefail
root="$(cd "$(dirname "$0")/../.." && pwd)"
rounds="${1:-5}"
shift || true
configs=("$@")
[ ${#configs[@]} -gt 0 ] || configs=(plain trace flowgraph flowgraph-only)
source "$root/validation/calibration/priority.sh"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
cargo build --release -q -p timeless-preload --manifest-path "$root/Cargo.toml"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
make -s -C "$root/validation/programs" BUILD="$work/bin" >/dev/null
lib="$root/target/release/libtimeless_preload.so"
declare -A env=(
  [plain]=""
  [trace]="-x LD_PRELOAD=$lib"
  [flowgraph]="-x LD_PRELOAD=$lib -x TIMELESS_FLOWGRAPH=$work/g.tfg"
  [flowgraph-only]="-x LD_PRELOAD=$lib -x TIMELESS_FLOWGRAPH=$work/g.tfg -x TIMELESS_FLOWGRAPH_ONLY=1"
  [callsites]="-x LD_PRELOAD=$lib -x TIMELESS_CALLSITES=1"
)
for i in $(seq "$rounds"); do
  for c in "${configs[@]}"; do
    # shellcheck disable=SC2086
    ns=$(timed mpirun -np 1 -x TIMELESS_OUT="$work/t" -x TIMELESS_REF_SPEED=1e9 ${env[$c]} \
         "$work/bin/callcost" 66666 | grep -o '[0-9.]* ns CPU per call' | cut -d' ' -f1)
    echo "$c $ns"
  done
done | sort -k1,1 -k2,2n | awk '{v[$1]=v[$1]" "$2; n[$1]++} END {
  for (c in v) { split(substr(v[c],2), a, " "); printf "%s: median %s ns per call (%s)\n", c, a[int((n[c]+1)/2)], substr(v[c],2) } }' | sort
