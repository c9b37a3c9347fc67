#!/usr/bin/env python3
"""The scaling workload of issue 12: a 2D periodic 5-point stencil in SimGrid 3.32's TI format.

    stencil_gen.py RANKS ITERS OUT [--topology flat|torus|fattree]

RANKS must be a square. Per iteration and rank: `compute 1e6`; `irecv` then `isend` of 40000 B
from/to the four periodic neighbours (tag 0); `waitall`; every 10th iteration an
`allreduce 8 1e3`. OUT receives rank-<r>.txt (init first, finalize last), list.txt (absolute
paths), platform.xml (one <cluster> of RANKS hosts: speed 1Gf, bw 125MBps, lat 50us; `flat` adds
a backbone bb_bw 2.25GBps bb_lat 500us), hostfile (rank i on node-i.bench). Prints `actions N`.
"""

import argparse
import math
import os
import sys

TOPOLOGY = {
    "flat": 'bb_bw="2.25GBps" bb_lat="500us"',
    # 3D torus with the ranks split over three near-equal dimensions.
    "torus": 'topology="TORUS" topo_parameters="{dims}"',
    # Two-level fat tree, leaves of sqrt(RANKS) hosts, half as many top switches.
    "fattree": 'topology="FAT_TREE" topo_parameters="2;{leaf},{leaves};1,{tops};1,1"',
}


def torus_dims(n):
    """Three factors of n, as equal as possible (largest first)."""
    best = (n, 1, 1)
    for a in range(1, n + 1):
        if n % a:
            continue
        for b in range(1, n // a + 1):
            if (n // a) % b:
                continue
            c = n // a // b
            dims = tuple(sorted((a, b, c), reverse=True))
            if max(dims) - min(dims) < max(best) - min(best):
                best = dims
    return ",".join(map(str, best))


def write_platform(out, n, topology):
    """Writes OUT/platform.xml (one <cluster> of n hosts, `topology` as in TOPOLOGY; n must be a
    square for `fattree`) and OUT/hostfile (rank i on node-i.bench)."""
    side = math.isqrt(n)
    attrs = TOPOLOGY[topology].format(dims=torus_dims(n), leaf=side, leaves=side,
                                      tops=max(1, side // 2))
    with open(os.path.join(out, "platform.xml"), "w") as f:
        f.write(f"""<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="AS_scale" routing="Full">
    <cluster id="scale" prefix="node-" suffix=".bench" radical="0-{n - 1}"
             speed="1Gf" bw="125MBps" lat="50us" {attrs}/>
  </zone>
</platform>
""")
    with open(os.path.join(out, "hostfile"), "w") as f:
        f.write("".join(f"node-{r}.bench\n" for r in range(n)))


def write_list(out, paths):
    with open(os.path.join(out, "list.txt"), "w") as f:
        f.write("".join(p + "\n" for p in paths))


def write_stencil(n, iters, out, topology="flat"):
    """Writes the stencil's rank files, list, platform and hostfile into OUT; returns the number
    of actions. n must be a square, iters >= 1."""
    side = math.isqrt(n)
    out = os.path.abspath(out)
    os.makedirs(out, exist_ok=True)
    total = 0
    paths = []
    for r in range(n):
        row, col = divmod(r, side)
        nb = [((row - 1) % side) * side + col, ((row + 1) % side) * side + col,
              row * side + (col + 1) % side, row * side + (col - 1) % side]
        block = (f"{r} compute 1e6\n" + "".join(f"{r} irecv {p} 0 40000\n" for p in nb)
                 + "".join(f"{r} isend {p} 0 40000\n" for p in nb) + f"{r} waitall\n")
        path = os.path.join(out, f"rank-{r}.txt")
        with open(path, "w") as f:
            f.write(f"{r} init\n")
            for i in range(iters):
                f.write(block)
                if i % 10 == 9:
                    f.write(f"{r} allreduce 8 1e3\n")
            f.write(f"{r} finalize\n")
        total += 2 + 10 * iters + iters // 10
        paths.append(path)
    write_list(out, paths)
    write_platform(out, n, topology)
    return total


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("ranks", type=int)
    ap.add_argument("iters", type=int)
    ap.add_argument("out")
    ap.add_argument("--topology", choices=sorted(TOPOLOGY), default="flat")
    a = ap.parse_args()
    if math.isqrt(a.ranks) ** 2 != a.ranks or a.iters < 1:
        sys.exit("stencil_gen.py: RANKS must be a square and ITERS >= 1")
    print(f"actions {write_stencil(a.ranks, a.iters, a.out, a.topology)}")


if __name__ == "__main__":
    main()
