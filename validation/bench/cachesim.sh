#!/bin/sh
# cachesim.sh TIMELESS TRACE_DIR RANKS [LABEL]
#
# Counts what one replay costs independently of the machine's load: the instructions executed
# and the data misses of a simulated 2 MiB, 16-way last level (the L2 of the 2-core VM this was
# written on; its L1d is 48 KiB, 12-way), under valgrind's callgrind, both threads together.
# Wall times on a shared VM vary by +-30 % at 4096 ranks from run to run (memory-bound); these
# counts repeat exactly, so they decide whether a change to the hot path helps before the
# alternated wall-time runs confirm it. TRACE_DIR is a scaling.py point
# (`generate(workload, n, iters, dir, 'flat')`: list.txt, platform.xml, hostfile). The profile is
# left in callgrind.out.LABEL in the current directory (`callgrind_annotate --show=DLmr,Ir
# --sort=DLmr` lists the functions by misses).
#
# CACHESIM_D1 and CACHESIM_LL (size,associativity,line bytes) model another machine's L1d and
# last level, e.g. CACHESIM_LL=524288,8,64 for a 512 KiB 8-way L2 (lscpu; the defaults are the
# 2 MiB machine above).
#
# Example: validation/bench/cachesim.sh target/release/timeless /tmp/b/stencil4096m 4096 head
set -eu
[ $# -ge 3 ] || { echo "usage: cachesim.sh TIMELESS TRACE_DIR RANKS [LABEL]" >&2; exit 2; }
command -v valgrind >/dev/null || { echo "cachesim.sh: valgrind is not installed (apt-get install valgrind)" >&2; exit 2; }
bin=$(readlink -f "$1"); dir=$2; n=$3; label=${4:-$(basename "$dir")}
out="$PWD/callgrind.out.$label"
log=$(mktemp)
d1=${CACHESIM_D1:-49152,12,64}; ll=${CACHESIM_LL:-2097152,16,64}
(cd "$dir" && valgrind --tool=callgrind --cache-sim=yes --D1="$d1" --LL="$ll" \
    --callgrind-out-file="$out" "$bin" simulate list.txt --platform platform.xml \
    --hostfile hostfile -n "$n" >/dev/null 2>"$log")
ir=$(sed -n 's/.*I *refs: *\([0-9,]*\).*/\1/p' "$log" | tr -d ,)
miss=$(sed -n 's/.*LLd misses: *\([0-9,]*\).*/\1/p' "$log" | tr -d ,)
rm -f "$log"
echo "$label instructions $ir l2_misses $miss"
