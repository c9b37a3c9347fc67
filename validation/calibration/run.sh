#!/bin/sh
# Calibrates this machine for timeless: ping-pong between 2 ranks (Open MPI, shared memory on
# one host), piecewise-linear fit, platform + SMPI configuration, plot; then the host speed.
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
# The same measurements with 4 segments, to see what the cache-size cliff costs the 3-segment fit.
"$target/release/timeless" calibrate network --from-csv "$out/pingpong.csv" --segments 4 \
    --out "$out/segments4" --speed "$(sed -n 's/.*speed="\([^"]*\)f".*/\1/p' "$out/platform.xml")"
rm "$out/segments4/pingpong.csv" # the same samples as "$out/pingpong.csv"
timed "$target/release/timeless" calibrate compute --runs 5 | tee "$out/compute.txt"
