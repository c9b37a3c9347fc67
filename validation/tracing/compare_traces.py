#!/usr/bin/env python3
"""Compares traces of the same programs taken in different acquisition conditions.

For each program and each pair (reference variant, other variant): whether every rank's
non-compute actions are identical, the relative difference of each rank's total compute volume
(flops) and of the simulated time, and the instrumented wall time. Prints a Markdown report and
exits 1 when a target is missed: actions differ, or the total compute volume or the simulated
time is off by more than 5 % (the per-rank difference is shown: short bursts measured as CPU time
are noisy, the seed's Table 2 compares totals too).

Inputs in --work: <program>-<variant>/rank-<r>.txt (trace), <program>-<variant>.json
(`timeless simulate --format json`), <program>-<variant>.wall (seconds).
"""
import argparse
import json
import os
import sys

TOL = 0.05


def rank_files(d):
    return sorted((f for f in os.listdir(d) if f.startswith("rank-") and f.endswith(".txt")),
                  key=lambda f: int(f[5:-4]))


def read_trace(d):
    ranks = []
    for f in rank_files(d):
        actions, flops = [], 0.0
        with open(os.path.join(d, f)) as fh:
            for line in fh:
                t = line.split()
                if not t or t[0].startswith("#"):
                    continue
                if t[1] == "compute":
                    flops += float(t[2])
                else:
                    actions.append(" ".join(t))
        ranks.append((actions, flops))
    return ranks


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--title", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--variants", nargs="+", required=True)
    ap.add_argument("--labels", nargs="+", required=True)
    ap.add_argument("--programs", nargs="+", required=True)
    a = ap.parse_args()
    ok = True
    out = [f"# {a.title}", "", f"Produced by `{os.path.basename(sys.argv[0])}`; tolerance {TOL:.0%}.", "",
           "| program | variant | wall s | actions identical | total compute diff | max per-rank compute diff | simulated s | sim diff |",
           "|---|---|---:|---|---:|---:|---:|---:|"]
    for p in a.programs:
        ref = None
        for v, label in zip(a.variants, a.labels):
            base = os.path.join(a.work, f"{p}-{v}")
            tr = read_trace(base)
            with open(base + ".json") as fh:
                sim = json.load(fh)["simulated_time"]
            with open(base + ".wall") as fh:
                wall = float(fh.read().strip())
            if ref is None:
                ref = (tr, sim)
                out.append(f"| {p} | {label} | {wall:.3f} | (reference) | | | {sim:.9f} | |")
                continue
            same = len(tr) == len(ref[0]) and all(x[0] == y[0] for x, y in zip(tr, ref[0]))
            dflops = max(abs(x[1] - y[1]) / y[1] if y[1] > 0 else abs(x[1])
                         for x, y in zip(tr, ref[0])) if same else float("nan")
            tot, rtot = sum(x[1] for x in tr), sum(y[1] for y in ref[0])
            dtot = abs(tot - rtot) / rtot if rtot > 0 else abs(tot)
            dsim = abs(sim - ref[1]) / ref[1]
            good = same and dtot <= TOL and dsim <= TOL
            ok &= good
            out.append(f"| {p} | {label} | {wall:.3f} | {'yes' if same else '**no**'} | "
                       f"{dtot:.2%} | {dflops:.2%} | {sim:.9f} | {dsim:.2%}{'' if good else ' **MISS**'} |")
    out += ["", "All targets met." if ok else "**Some targets missed** (marked above)."]
    print("\n".join(out))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
