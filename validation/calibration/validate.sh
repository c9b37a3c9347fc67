#!/bin/sh
# Predicted vs measured run times on this machine, with the calibration written by run.sh:
# every case of cases.txt (7 programs of validation/programs at 2, 4 and 8 ranks, 5 untraced
# runs each) into CALDIR/validate/, then the acquisition-mode check of cases-acquisition.txt
# (the same runs traced regular and folded) into CALDIR/acquisition/. Each directory gets
# validate.txt (table and summary), validate.csv and validate.png/.svg.
# Usage: validation/calibration/validate.sh [CALDIR]   (default: validation/calibration/<hostname>)
# Extra arguments for `timeless validate` can be given in VALIDATE_ARGS (e.g. "--reps 3").
# Other cases (validation/external/validate.sh): VALIDATE_CASES=FILE with VALIDATE_BIN_DIR
# (their programs), VALIDATE_OUT (output directory, traces kept) and VALIDATE_RUN_DIR (the
# working directory of the runs) replace both sets above; validation/programs is not built.
# The runs hold /work/MEASURE.lock (VALIDATE_LOCK), so that timed measurements on a shared
# machine never overlap.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
target=${CARGO_TARGET_DIR:-$root/target}
cal=$(cd "${1:-$root/validation/calibration/$(hostname)}" && pwd)
here=$root/validation/calibration
lock=${VALIDATE_LOCK:-/work/MEASURE.lock}
cd "$root"
nice -n 19 cargo build --release -p timeless -p timeless-pingpong -p timeless-preload
if [ "$(id -u)" = 0 ]; then
    export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
fi
mkdir -p "$(dirname "$lock")"

if [ -n "${VALIDATE_CASES:-}" ]; then
    cases=$(cd "$(dirname "$VALIDATE_CASES")" && pwd)/$(basename "$VALIDATE_CASES")
    out=${VALIDATE_OUT:?VALIDATE_OUT: the output directory}
    mkdir -p "$out" "${VALIDATE_RUN_DIR:-$out}"
    out=$(cd "$out" && pwd)
    cd "${VALIDATE_RUN_DIR:-$out}"
    # shellcheck disable=SC2086
    flock "$lock" sh -c '. "$1"; shift; timed "$@"' sh "$here/priority.sh" \
        "$target/release/timeless" validate --calibration "$cal" \
        --bin-dir "${VALIDATE_BIN_DIR:?VALIDATE_BIN_DIR: the directory of the cases programs}" \
        ${VALIDATE_ARGS:-} --cases "$cases" --out "$out"
    exit
fi

build=$(mktemp -d)
trap 'rm -rf "$build"' EXIT
nice -n 19 make -s -C validation/programs BUILD="$build"

validate="$target/release/timeless validate --calibration $cal --bin-dir $build ${VALIDATE_ARGS:-}"
# shellcheck disable=SC2086
flock "$lock" sh -c '. "$1"; shift; timed "$@"' sh "$here/priority.sh" \
    $validate --cases "$here/cases.txt" --out "$cal/validate"
# shellcheck disable=SC2086
flock "$lock" sh -c '. "$1"; shift; timed "$@"' sh "$here/priority.sh" \
    $validate --cases "$here/cases-acquisition.txt" --out "$cal/acquisition"
# The traces (up to 0.8 GB per case) are not kept in the repository.
rm -rf "$cal/validate/traces" "$cal/acquisition/traces"
