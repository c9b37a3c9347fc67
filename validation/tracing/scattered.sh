#!/usr/bin/env bash
# Scattered-mode acquisition check (issue 3; seed 003 §4: a time-independent trace does not
# depend on where or how fast the ranks ran). Each program is traced twice with Open MPI over TCP
# inside a private network namespace: once on its plain loopback, once with the loopback
# throttled by a token-bucket filter (`tc qdisc ... tbf`; this kernel has no netem), so every
# message crosses a slow network. The traces must be equal: identical non-compute actions on every
# rank, compute volumes within 5 % (they are CPU-time measurements), simulated times within 5 %,
# while the instrumented wall time grows.
#
#   validation/tracing/scattered.sh        (root, iproute2 with tc; writes scattered.md here)
set -euo pipefail
HERE="$(cd "$(dirname "$0")" && pwd)"
ROOT="$(cd "$HERE/../.." && pwd)"
WORK="${SCATTER_WORK:-$HERE/work/scattered}"
RATE="${SCATTER_RATE:-4mbit}"
[ "$(id -u)" = 0 ] || { echo "scattered.sh: needs root (network namespaces)" >&2; exit 2; }
command -v tc >/dev/null || { echo "scattered.sh: needs tc (iproute2)" >&2; exit 2; }
export CARGO_TARGET_DIR="${CARGO_TARGET_DIR:-$ROOT/target}"
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
# One reference speed for every run: the start-up calibration of each run varies by up to ~8 %
# on this VM, which would hide what is compared here (the bursts' CPU time).
export TIMELESS_REF_SPEED="${TIMELESS_REF_SPEED:-1e9}"
(cd "$ROOT" && cargo build -q --release -p timeless -p timeless-preload)
TL="$CARGO_TARGET_DIR/release/timeless"
export TIMELESS_PRELOAD="$CARGO_TARGET_DIR/release/libtimeless_preload.so"
rm -rf "$WORK" && mkdir -p "$WORK"
make -s -C "$ROOT/validation/programs" BUILD="$WORK/bin"

NS="timeless-scatter-$$"
ip netns add "$NS"
trap 'ip netns del "$NS" 2>/dev/null || true' EXIT
ip netns exec "$NS" ip link set lo up mtu 1500
# Open MPI: TCP only, on the namespace's loopback.
export OMPI_MCA_btl=tcp,self OMPI_MCA_btl_tcp_if_include=lo OMPI_MCA_oob_tcp_if_include=lo

PROGRAMS=("ring 4 100000 50000000" "stencil2d 1024 30" "wavefront 384 6 3")
for p in "${PROGRAMS[@]}"; do
  name="${p%% *}"; args=(${p#"$name"})
  for net in fast slow; do
    if [ "$net" = slow ]; then
      ip netns exec "$NS" tc qdisc add dev lo root tbf rate "$RATE" burst 32kb latency 10s
    fi
    start=$(date +%s.%N)
    ip netns exec "$NS" "$TL" trace -n 4 --out "$WORK/$name-$net" -- "$WORK/bin/$name" "${args[@]}" \
      > "$WORK/$name-$net.log" 2>&1
    end=$(date +%s.%N)
    echo "$end - $start" | bc > "$WORK/$name-$net.wall"
    if [ "$net" = slow ]; then ip netns exec "$NS" tc qdisc del dev lo root; fi
    "$TL" simulate "$WORK/$name-$net/trace-list.txt" -p "$ROOT/platforms/mycluster.xml" \
      --hostfile "$HERE/hostfile-4" --format json > "$WORK/$name-$net.json"
  done
done
python3 "$HERE/compare_traces.py" --title "Scattered acquisition: loopback vs throttled loopback ($RATE), Open MPI over TCP, 4 ranks" \
  --labels "plain loopback" "throttled ($RATE)" --work "$WORK" --variants fast slow \
  --programs "${PROGRAMS[@]%% *}" > "$HERE/scattered.md"
cat "$HERE/scattered.md"
