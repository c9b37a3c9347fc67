#!/bin/sh
# Predicted vs measured run times on this machine, with the calibration written by run.sh:
# stencil2d (1024x1024, 200 iterations) and ring (50 rounds of 1 MB and 10 Mflop) on 2, 4, 8 ranks.
# Usage: validation/calibration/validate.sh [CALDIR]   (default: validation/calibration/<hostname>)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
cal=${1:-$root/validation/calibration/$(hostname)}
cd "$root"
cargo build --release -p timeless -p timeless-pingpong -p timeless-preload
build=$(mktemp -d)
make -s -C validation/programs BUILD="$build" "$build/stencil2d" "$build/ring"
if [ "$(id -u)" = 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
"$target/release/timeless" validate -n 2,4,8 --reps 3 --calibration "$cal" \
    --out "$cal/validate-stencil2d" -- "$build/stencil2d" 1024 200
"$target/release/timeless" validate -n 2,4,8 --reps 3 --calibration "$cal" \
    --out "$cal/validate-ring" -- "$build/ring" 50 1000000 10000000
# The traces are not kept in the repository.
rm -rf "$cal"/validate-*/trace-n* "$build"
