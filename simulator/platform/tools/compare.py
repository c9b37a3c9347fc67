#!/usr/bin/env python3
"""Compares the output of tools/route_oracle (SimGrid 3.32) with examples/routes (timeless).

Usage: compare.py [--oracle-crashed] ORACLE_OUTPUT TIMELESS_OUTPUT
Hosts, links and routes must match exactly: names, link order, and latencies as doubles.
Errors only need to be errors on both sides. Exit status 1 on any difference.
With --oracle-crashed (SimGrid aborted in the middle of the dump), the first route missing
from the oracle output must be an error on the timeless side, and later ones are ignored.
"""
import sys


def load(path):
    data = {"HOST": {}, "LINK": {}, "ROUTE": {}, "LOADERROR": None, "ORDER": [], "LOADED": False}
    for line in open(path, encoding="utf-8", errors="replace"):
        line = line.rstrip("\n")
        if line == "LOADED":
            data["LOADED"] = True
        elif line.startswith("LOADERROR"):
            data["LOADERROR"] = line
        elif line.startswith("HOST "):
            name = line.split(" ")[1]
            fields = dict(f.split("=", 1) for f in line.split(" ")[2:] if "=" in f)
            data["HOST"][name] = fields
        elif line.startswith("LINK "):
            parts = line.split(" ")
            data["LINK"][parts[1]] = dict(f.split("=", 1) for f in parts[2:])
        elif line.startswith("ROUTE "):
            head, rest = line[6:].split(" | ", 1)
            data["ORDER"].append(head)
            if rest.startswith("ERROR"):
                data["ROUTE"][head] = "ERROR"
            else:
                lat, links = rest.split(" |", 1)
                data["ROUTE"][head] = (float(lat), links.strip())
    return data


def main():
    args = sys.argv[1:]
    crashed = "--oracle-crashed" in args
    args = [x for x in args if x != "--oracle-crashed"]
    a, b = load(args[0]), load(args[1])
    bad = 0
    if crashed and not a["LOADED"]:
        a["LOADERROR"] = "LOADERROR (SimGrid aborted while loading)"
    if crashed and a["LOADERROR"] is None:
        missing = [k for k in b["ORDER"] if k not in a["ROUTE"]]
        if missing and b["ROUTE"][missing[0]] != "ERROR":
            print(f"SimGrid crashed at {missing[0]} but timeless gives {b['ROUTE'][missing[0]]}")
            bad += 1
        for k in missing:
            del b["ROUTE"][k]
    if (a["LOADERROR"] is None) != (b["LOADERROR"] is None):
        print("load:", a["LOADERROR"], "vs", b["LOADERROR"])
        return 1
    for kind in ("HOST", "LINK", "ROUTE"):
        keys = set(a[kind]) | set(b[kind])
        for k in sorted(keys):
            va, vb = a[kind].get(k), b[kind].get(k)
            if kind == "HOST" and va and vb:
                same = float(va["speed"]) == float(vb["speed"]) and va["cores"] == vb["cores"]
            elif kind == "LINK" and va and vb:
                same = all(float(va[f]) == float(vb[f]) for f in ("bw", "lat")) and va["policy"] == vb["policy"]
            else:
                same = va == vb
            if not same:
                bad += 1
                if bad <= 20:
                    print(f"{kind} {k}:\n  simgrid:  {va}\n  timeless: {vb}")
    print(f"{bad} differences")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
