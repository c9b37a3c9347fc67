#!/usr/bin/env python3
"""Simulated time of every validation program from its compressed trace, by precision (issue 4:
"the default precision must change the simulated time of every validation program by less than
0.5 % relative to lossless").

    validation/compression/precision.py [--quick]

Traces every program of validation/calibration/cases.txt at 4 ranks (2 with --quick, smaller
arguments) with `timeless trace`, plus stencil3d (the compression report's 3D stencil), then
compresses the TI text offline with `timeless compress --precision E` for E = 0 (lossless),
1e-3 (the default), 1e-2, 5e-2, 0.1 and 0.2, and replays the text and every trace.tlg with
`timeless simulate` on the calibrated platform of validation/calibration/vm (hostfile: every
rank on the machine's host, as `validate` does), compensation off (it reads the same metadata
either way). A lossless trace.tlg must give the text's time bit for bit.

Writes PRECISION.md and precision.csv next to this script (--quick: to work/ only).
Uses BENCH_TIMELESS_BIN if set (the tracer library must sit next to it), else builds
`timeless` and the tracer in release mode.
"""

import csv
import json
import os
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "../.."))
QUICK = "--quick" in sys.argv
WORK = os.path.join(HERE, "work", "precision")
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
PRECISIONS = [0, 1e-3, 1e-2, 5e-2, 0.1, 0.2]
DEFAULT = 1e-3
RANKS = 2 if QUICK else 4
PLATFORM = os.path.join(ROOT, "validation", "calibration", "vm", "platform.xml")
HOSTFILE = os.path.join(ROOT, "validation", "calibration", "vm", "hostfile")


def binary():
    t = os.environ.get("BENCH_TIMELESS_BIN")
    if t:
        return t
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "timeless", "-p",
                    "timeless-preload"], cwd=ROOT, check=True)
    return os.path.join(TARGET, "release", "timeless")


def cases():
    """(label, program, args) at RANKS ranks from cases.txt, plus stencil3d."""
    out = []
    with open(os.path.join(ROOT, "validation", "calibration", "cases.txt")) as f:
        for line in f:
            fields = line.split()
            if not fields or fields[0].startswith("#") or int(fields[1]) != RANKS:
                continue
            out.append((fields[0], fields[2], fields[3:]))
    if QUICK:
        out = [(label, prog, QUICK_ARGS.get(prog, args)) for label, prog, args in out]
    out.append(("stencil3d", "stencil3d", ["12", "100" if QUICK else "1000"]))
    return out


QUICK_ARGS = {"ring": ["4", "100000", "1000000"], "stencil2d": ["64", "50"],
              "pi_mc": ["16", "10000"], "wavefront": ["64", "4", "4"],
              "commsplit": ["200"], "persistent": ["2000", "100"], "fortran_mix": ["20"]}


def simulate(t, trace_file, hostfile):
    out = subprocess.run([t, "simulate", trace_file, "-p", PLATFORM, "--hostfile", hostfile,
                          "--no-compensation", "--format", "json"], check=True,
                         capture_output=True, text=True).stdout
    return json.loads(out)["simulated_time"]


def main():
    t = binary()
    shutil.rmtree(WORK, ignore_errors=True)
    progs = os.path.join(WORK, "programs")
    subprocess.run(["make", "-s", "-C", os.path.join(ROOT, "validation", "programs"),
                    f"BUILD={progs}"], check=True, capture_output=True)
    with open(HOSTFILE) as f:
        host = f.read().split()[0]
    hostfile = os.path.join(WORK, "hostfile")
    with open(hostfile, "w") as f:
        f.write(f"{host}\n" * RANKS)
    rows = []
    for label, prog, args in cases():
        d = os.path.join(WORK, label)
        cmd = [t, "trace", "-n", str(RANKS), "-o", d, "--", os.path.join(progs, prog)] + args
        p = subprocess.run(cmd, env=ENV, capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit(f"{' '.join(cmd)} failed:\n{p.stdout}{p.stderr}")
        lst = os.path.join(d, "trace-list.txt")
        computes = sum(1 for r in range(RANKS) for line in open(os.path.join(d, f"rank-{r}.txt"))
                       if line.split()[1:2] == ["compute"])
        text = simulate(t, lst, hostfile)
        for e in PRECISIONS:
            tlg = os.path.join(d, f"trace-{e}.tlg")
            subprocess.run([t, "compress", lst, "-o", tlg, "--precision", str(e)], check=True,
                           capture_output=True)
            sim = simulate(t, tlg, hostfile)
            rows.append({"program": label, "args": " ".join(args), "ranks": RANKS,
                         "computes": computes, "precision": e, "tlg_bytes": os.path.getsize(tlg),
                         "simulated_text_s": text, "simulated_tlg_s": sim,
                         "relative_change": (sim - text) / text})
            print(f"{label} {e}: {text:.9f} -> {sim:.9f} ({(sim - text) / text:+.2e})",
                  flush=True)
    out_dir = WORK if QUICK else HERE
    with open(os.path.join(out_dir, "precision.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    lossless_exact = all(r["simulated_tlg_s"] == r["simulated_text_s"] for r in rows
                         if r["precision"] == 0)
    worst = {e: max(abs(r["relative_change"]) for r in rows if r["precision"] == e)
             for e in PRECISIONS}
    L = ["# Simulated time by volume precision, every validation program (generated by "
         "`precision.py`; do not edit)", "",
         f"Each program of validation/calibration/cases.txt at {RANKS} ranks and stencil3d, traced "
         "once on this machine with `timeless trace`; its TI text compressed offline at each "
         "precision (`timeless compress --precision E`, 0 = lossless) and replayed with "
         "`timeless simulate` on validation/calibration/vm/platform.xml, every rank on its host, "
         "compensation off. Relative change = (simulated from trace.tlg - simulated from the "
         "text) / simulated from the text; the text is what the lossless file decodes to.", "",
         f"Lossless trace.tlg gives the text's simulated time bit for bit: "
         f"**{'yes' if lossless_exact else 'NO'}**. Largest |relative change| over the "
         "programs, by precision: " +
         ", ".join(f"{e:g}: {worst[e]:.1e}" for e in PRECISIONS) +
         f". Default ({DEFAULT:g}) under 0.5 % for every program: "
         f"**{'yes' if worst[DEFAULT] < 5e-3 else 'NO'}**.", "",
         "| program | arguments | computes | " +
         " | ".join(f"{e:g}" if e else "lossless" for e in PRECISIONS) + " | text (s) |",
         "|---|---|---:|" + "---:|" * len(PRECISIONS) + "---:|"]
    for label in dict.fromkeys(r["program"] for r in rows):
        rs = [r for r in rows if r["program"] == label]
        cells = [f"{r['relative_change']:+.1e} ({r['tlg_bytes']} B)" for r in rs]
        L.append(f"| {label} | {rs[0]['args']} | {rs[0]['computes']} | " + " | ".join(cells) +
                 f" | {rs[0]['simulated_text_s']:.6f} |")
    L += ["", "Cells: relative change of the simulated time (size of trace.tlg).", ""]
    with open(os.path.join(out_dir, "PRECISION.md"), "w") as f:
        f.write("\n".join(L))
    print("\n".join(L))


if __name__ == "__main__":
    main()
