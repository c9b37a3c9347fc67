#!/bin/sh
# The folded-run lab: builds foldbsp.c outside the repository and validates cases.txt with
# the committed calibration, unbound (as `timeless trace` folds) and pinned (--pin), each
# with its traces kept for `timeless validate --from`.
# Usage: validation/external/foldlab/run.sh [OUT]   (default /work/ext-build/foldlab)
#   VALIDATE_ARGS: extra arguments for both validations (default "--reps 5")
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../../.." && pwd)
out=${1:-/work/ext-build/foldlab}
mkdir -p "$out/bin" "$out/run"
mpicc -O2 -o "$out/bin/foldbsp" "$here/foldbsp.c"
for variant in unbound pinned; do
    extra=""
    [ "$variant" = pinned ] && extra="--pin"
    VALIDATE_CASES=$here/cases.txt VALIDATE_BIN_DIR=$out/bin VALIDATE_OUT=$out/$variant \
        VALIDATE_RUN_DIR=$out/run VALIDATE_ARGS="${VALIDATE_ARGS:---reps 5} $extra" \
        "$root/validation/calibration/validate.sh" "$root/validation/calibration/vm"
    mkdir -p "$here/vm/$variant"
    cp "$out/$variant/validate.txt" "$out/$variant/validate.csv" "$here/vm/$variant/"
done
