#!/bin/sh
# Predicted vs measured run times on this machine, with the calibration written by run.sh:
# every case of cases.txt (7 programs of validation/programs at 2, 4 and 8 ranks, 5 untraced
# runs each) into CALDIR/validate/, then the acquisition-mode check of cases-acquisition.txt
# (the same runs traced regular and folded) into CALDIR/acquisition/. Each directory gets
# validate.txt (table and summary), validate.csv and validate.png/.svg.
# Usage: validation/calibration/validate.sh [CALDIR]   (default: validation/calibration/<hostname>)
# Extra arguments for `timeless validate` can be given in VALIDATE_ARGS (e.g. "--reps 3").
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
cal=${1:-$root/validation/calibration/$(hostname)}
here=$root/validation/calibration
cd "$root"
nice -n 19 cargo build --release -p timeless -p timeless-pingpong -p timeless-preload
build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
nice -n 19 make -s -C validation/programs BUILD="$build"
if [ "$(id -u)" = 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi

. "$here/priority.sh"

validate="$target/release/timeless validate --calibration $cal --bin-dir $build ${VALIDATE_ARGS:-}"
timed $validate --cases "$here/cases.txt" --out "$cal/validate"
timed $validate --cases "$here/cases-acquisition.txt" --out "$cal/acquisition"
# The traces (up to 0.8 GB per case) are not kept in the repository.
rm -rf "$cal/validate/traces" "$cal/acquisition/traces"
