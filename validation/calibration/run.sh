#!/bin/sh
# Calibrates this machine for timeless: ping-pong and bidirectional exchange between 2 ranks
# (Open MPI, shared memory on one host), piecewise-linear fit, platform + SMPI configuration,
# plot; the same folded K ranks per core into OUTDIR/fold<K>/ for every K the folded cases of
# cases.txt run with (ranks > cores: K = ceil(ranks / cores)); then the host speed.
# Usage: validation/calibration/run.sh [OUTDIR]   (default: validation/calibration/<hostname>)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
out=${1:-$root/validation/calibration/$(hostname)}
cd "$root"
nice -n 19 cargo build --release -p timeless -p timeless-pingpong
. "$root/validation/calibration/priority.sh"
if [ "$(id -u)" = 0 ]; then
    # Open MPI refuses to run as root without these.
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
timed "$target/release/timeless" calibrate network -n 2 --out "$out"
# The same measurements with 4 segments (5 with the eager/rendezvous switch), to see what one
# more break buys the 3-segment fit.
"$target/release/timeless" calibrate network --from-csv "$out/pingpong.csv" --segments 4 \
    --out "$out/segments4" --speed "$(sed -n 's/.*speed="\([^"]*\)f".*/\1/p' "$out/platform.xml")"
rm "$out/segments4/pingpong.csv" # the same samples as "$out/pingpong.csv"
# Folded (README, "Folded runs"): the unfolded lone flow with every message later by the wait
# for a core that the folded ping-pong shows (--unfolded), an extra wait per segment and how
# concurrent flows share the route fitted on the busy pairs' ping-pong and exchange (replayed as
# they ran: all pairs at once, the exchange with its slowest pair's barrier-exit skew), and a late
# receiver's wait (timeless/rendezvous-late-wait) fitted on the exchange; the same host speed and
# eager/rendezvous switch (a protocol property; a folded late receiver blurs its detection).
speed=$(sed -n 's/.*speed="\([^"]*\)f".*/\1/p' "$out/platform.xml")
thresh=$(sed -n 's/^smpi\/send-is-detached-thresh://p' "$out/smpi.cfg")
cores=$(nproc)
folds=$(awk -v c="$cores" '!/^#/ && NF >= 2 && $2 > c { print int(($2 + c - 1) / c) }' \
    "$root/validation/calibration/cases.txt" | sort -un)
for k in $folds; do
    timed "$target/release/timeless" calibrate network --fold "$k" --unfolded "$out" \
        --out "$out/fold$k" --speed "$speed" --detached-thresh "$thresh"
done
timed "$target/release/timeless" calibrate compute --runs 5 | tee "$out/compute.txt"
