#!/bin/sh
# Differential test of timeless-platform against SimGrid 3.32 itself.
#
#   tools/differential.sh [RANDOM_SEEDS]
#
# Needs the SimGrid 3.32 library and headers (libsimgrid-dev), g++, python3, and a git mirror
# of SimGrid ($SIMGRID_GIT, default /work/.mirror/simgrid+simgrid/repo) for the example
# platforms, which are LGPL and therefore extracted to $WORK (default /tmp/timeless-diff),
# never into this repository. Every host-to-host route of every platform is computed by
# SimGrid (tools/route_oracle.cpp) and by timeless (examples/routes.rs) and compared:
# same links in the same order, bit-identical latencies, and errors where SimGrid fails.
set -u
here=$(cd "$(dirname "$0")" && pwd)
work=${WORK:-/tmp/timeless-diff}
mirror=${SIMGRID_GIT:-/work/.mirror/simgrid+simgrid/repo}
seeds=${1:-50}
target=${CARGO_TARGET_DIR:-$here/../../../target}
mkdir -p "$work/examples/profiles" "$work/random" "$work/connected"

g++ -O1 -std=c++17 "$here/route_oracle.cpp" -o "$work/route_oracle" -lsimgrid || exit 1
(cd "$here/.." && cargo build -q --release --example routes) || exit 1
routes="$target/release/examples/routes"

for f in $(git -C "$mirror" ls-tree --name-only v3.32 examples/platforms/ examples/platforms/profiles/); do
  case $f in *.xml|*profile|*.txt) git -C "$mirror" show "v3.32:$f" > "$work/examples/${f#examples/platforms/}" ;; esac
done

failures=0
check() { # check DIR NAME
  (cd "$1" && timeout 20 "$work/route_oracle" "$2.xml" --cfg=network/model:SMPI --log=root.thres:critical > "$2.oracle") 2>/dev/null
  rc=$?
  (cd "$1" && timeout 60 "$routes" "$2.xml" > "$2.timeless" 2>/dev/null)
  flag=""; [ $rc -ne 0 ] && flag="--oracle-crashed"
  if ! python3 "$here/compare.py" $flag "$1/$2.oracle" "$1/$2.timeless" > "$1/$2.diff"; then
    echo "DIFFERENT: $1/$2 ($(tail -1 "$1/$2.diff"))"; failures=$((failures + 1))
  fi
}
for x in "$work"/examples/*.xml; do
  name=$(basename "$x" .xml)
  case $name in
    cluster_crossbar|g5k) continue ;;  # too many pairs for a quick run
    cloud|data_center|two_peers|vivaldi|wifi|wifi_energy|wifi_ns3) continue ;;  # Vivaldi/Wifi: unsupported
  esac
  check "$work/examples" "$name"
done
i=1
while [ $i -le "$seeds" ]; do
  python3 "$here/gen_platform.py" $i > "$work/random/p$i.xml"; check "$work/random" "p$i"
  python3 "$here/gen_platform.py" $i connected > "$work/connected/p$i.xml"; check "$work/connected" "p$i"
  i=$((i + 1))
done
echo "$failures platform(s) differ; details in $work/*/*.diff"
[ $failures -eq 0 ]
