#!/usr/bin/env python3
"""Summarises mpich_suite.py's CSV files into a markdown table (printed; RESULTS.md quotes it).

Usage: report.py [DIR]   (DIR holds openmpi.csv and/or mpich.csv; default: this directory)

Per MPI library and language: tests run, untraced passes, traced passes, tests whose result
differs, and every difference (a test passing one way and failing the other) by name, with the
note the driver recorded (last lines of each run's output).
"""

import csv
import sys
from pathlib import Path


def main():
    d = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent
    for mpi in ["openmpi", "mpich"]:
        f = d / f"{mpi}.csv"
        if not f.exists():
            continue
        rows = list(csv.DictReader(open(f)))
        built = [r for r in rows if r["built"] == "yes"]
        print(f"\n### {mpi}\n")
        print("| language | instances listed | built and run | untraced pass | traced pass | "
              "differ | same output |")
        print("|---|---|---|---|---|---|---|")
        for lang in ["c", "f77", "f90", "all"]:
            sel = [r for r in rows if lang == "all" or r["language"] == lang]
            run = [r for r in sel if r["built"] == "yes"]
            up = sum(r["untraced"] == "pass" for r in run)
            tp = sum(r["traced"] == "pass" for r in run)
            diff = sum(r["untraced"] != r["traced"] for r in run)
            same = sum(r["same_output"] == "yes" for r in run)
            name = "**all**" if lang == "all" else lang
            print(f"| {name} | {len(sel)} | {len(run)} | {up} | {tp} | {diff} | {same} |")
        diffs = [r for r in built if r["untraced"] != r["traced"]]
        both = [r for r in built if r["untraced"] == "fail" and r["traced"] == "fail"]
        if diffs:
            print("\nDifferences (untraced vs traced):\n")
            for r in diffs:
                print(f"- `{r['dir']}/{r['test']}` -n {r['ranks']} {r['args']}: untraced "
                      f"{r['untraced']}, traced {r['traced']} — {r['note'][:300]}")
        if both:
            print("\nFailing both untraced and traced (the MPI library, not the tracer):\n")
            def why(r):
                if r.get("untraced_exit"):
                    return f"exit {r['untraced_exit']} / {r['traced_exit']}"
                return "timeout" if float(r["untraced_secs"]) >= 44 else "failed"
            print(", ".join(f"`{r['dir']}/{r['test']}` ({why(r)})" for r in both))
        notes = [r for r in built if r["untraced"] == r["traced"] == "pass"
                 and r["same_output"] != "yes"]
        if notes:
            print("\nPassing both ways with different output lines:\n")
            for r in notes:
                print(f"- `{r['dir']}/{r['test']}`: {r['note'][:300]}")


if __name__ == "__main__":
    main()
