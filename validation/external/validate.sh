#!/bin/sh
# Predicted vs measured run times of the external applications (cases.txt, built by build.sh)
# with this machine's calibration (validation/calibration/run.sh's output): runs
# validation/calibration/validate.sh on cases.txt (under its lock and priority), the traces and
# the applications' own output files kept outside the repository, then copies the tables and
# the plot (validate.txt, validate.csv, validate.png/.svg) to validation/external/<hostname>/.
# Usage: validation/external/validate.sh [CALDIR]
#   CALDIR: the calibration (default validation/calibration/<hostname>)
#   EXT_BUILD: build.sh's output directory (default /work/ext-build): programs in bin/, the
#   validation's traces in validate/, the runs' working directory run/
#   VALIDATE_ARGS: extra arguments for `timeless validate` (e.g. "--reps 3")
#   EXT_PIN: 0 to leave the folded runs unbound (default: pinned, --pin)
#   EXT_RESULTS: where the tables go (default validation/external/<hostname>)
set -eu
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
ext=${EXT_BUILD:-/work/ext-build}
results=${EXT_RESULTS:-$here/$(hostname)}
[ -x "$ext/bin/comd" ] || { echo "validate.sh: no $ext/bin: run build.sh first" >&2; exit 2; }
# Folded cases pinned (--pin, rank r on core r mod C, replayed with timeless/pin-ranks) unless
# EXT_PIN=0: unbound folded runs leave cores idle beside busy ones (README, run 5).
pin="--pin"
[ "${EXT_PIN:-1}" = 0 ] && pin=""
VALIDATE_CASES=$here/cases.txt VALIDATE_BIN_DIR=$ext/bin VALIDATE_OUT=$ext/validate \
    VALIDATE_RUN_DIR=$ext/run VALIDATE_ARGS="${VALIDATE_ARGS:-} $pin" \
    "$root/validation/calibration/validate.sh" "$@"
mkdir -p "$results"
for f in validate.txt validate.csv validate.png validate.svg; do
    cp "$ext/validate/$f" "$results/"
done
echo "validate.sh: results in $results (load average now: $(cut -d' ' -f1-3 /proc/loadavg))"
