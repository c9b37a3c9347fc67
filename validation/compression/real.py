#!/usr/bin/env python3
"""Compression report on REAL captures (issue 4): MPI stencils traced on this machine with
`timeless trace --compress` (online compression in the tracer, merged at MPI_Finalize).

    validation/compression/real.py [--quick]

Programs (validation/programs): stencil2d (2D 5-point, non-periodic, Isend/Irecv/Waitall,
allreduce every 10 iterations; block BLOCK2D^2 doubles) at 4, 9, 16, 25, 36, 64 ranks and
stencil3d (3D 7-point, periodic, six faces by Isend/Irecv/Waitall; block BLOCK3D^3) at 8, 27,
64 ranks, at 100 and 1000 iterations (and 10 at 64 ranks for the iteration table); more ranks
than cores are folded onto the cores (`timeless trace` does it). Each run writes the TI text
and trace.tlg of the same execution, so their simulated times compare like for like. Every
configuration is traced at the default precision (1e-3) and losslessly; at 64 ranks x 1000
iterations also at 1e-2, 5e-2, 0.1 and 0.2.

Per run: `timeless stats` of trace.tlg (terminals, rules, unique grammars, bytes per part),
the TI text's bytes, gzip -9 of the concatenated rank files, and `timeless simulate` of the text
list and of trace.tlg on a cluster of one host per rank whose speed is the reference speed the
traces were converted with.

Writes real.csv and REAL.md next to this script (--quick: a few small runs, to work/ only).
Uses BENCH_TIMELESS_BIN if set (the tracer library must sit next to it, or TIMELESS_PRELOAD
name it), else builds `timeless` and the tracer in release mode.
"""

import csv
import gzip
import json
import os
import re
import shutil
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "../.."))
QUICK = "--quick" in sys.argv
WORK = os.path.join(HERE, "work", "real")
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")

BLOCK2D = "64"  # stencil2d: 64 x 64 doubles per rank
BLOCK3D = "12"  # stencil3d: 12^3 doubles per rank, faces of 144 doubles
if QUICK:
    RANKS = {"stencil2d": [4, 9, 16], "stencil3d": [8, 27]}
    ITERS = [100]
    BIG = (16, 100)
else:
    RANKS = {"stencil2d": [4, 9, 16, 25, 36, 64], "stencil3d": [8, 27, 64]}
    ITERS = [100, 1000]
    BIG = (64, 1000)
DEFAULT = 1e-3
SWEEP = [0, DEFAULT, 1e-2, 5e-2, 0.1, 0.2]


def build():
    t = os.environ.get("BENCH_TIMELESS_BIN")
    if not t:
        subprocess.run(["nice", "-n", "19", "cargo", "build", "--release", "-q", "-p", "timeless",
                        "-p", "timeless-preload"], cwd=ROOT, check=True)
        t = os.path.join(TARGET, "release", "timeless")
    progs = os.path.join(WORK, "programs")
    subprocess.run(["make", "-s", "-C", os.path.join(ROOT, "validation/programs"),
                    f"BUILD={progs}"], check=True, stdout=subprocess.DEVNULL)
    return t, progs


T = PROGS = None  # set by main()
SPEED = None  # reference speed (flop/s), measured by the first `timeless trace`, then given


def trace(kind, ranks, iters, precision):
    """One traced run; returns its directory."""
    global SPEED
    d = os.path.join(WORK, f"{kind}-{ranks}-{iters}-{precision}")
    shutil.rmtree(d, ignore_errors=True)
    block = BLOCK2D if kind == "stencil2d" else BLOCK3D
    cmd = [T, "trace", "-n", str(ranks), "--compress", "--precision", str(precision), "-o", d]
    if SPEED:
        cmd += ["--ref-speed", SPEED]
    cmd += ["--", os.path.join(PROGS, kind), block, str(iters)]
    p = subprocess.run(cmd, env=ENV, capture_output=True, text=True)
    if p.returncode != 0 or "disabled" in p.stderr:
        sys.exit(f"{' '.join(cmd)} failed:\n{p.stdout}{p.stderr}")
    if SPEED is None:
        SPEED = re.search(r"reference speed ([0-9.e+-]+) flop/s", p.stderr).group(1)
    return d


def stats(tlg):
    out = subprocess.run([T, "stats", tlg], check=True, capture_output=True, text=True).stdout
    s = {}
    for line in out.splitlines():
        k, v = line.split(": ", 1)
        s[k] = int(v) if v.isdigit() else v
    s["structure_bytes"] = s["bytes_cst"] + s["bytes_grammar"]
    s["timing_bytes"] = s["bytes_volumes"] + s["bytes_placement"]
    return s


def rank_files(d, ranks):
    return [os.path.join(d, f"rank-{r}.txt") for r in range(ranks)]


def platform(d, ranks, speed=None):
    """A cluster of `ranks` hosts at `speed` flop/s (default: the reference speed of this
    script's runs; gen.py's links), and its hostfile."""
    p = os.path.join(d, "platform.xml")
    with open(p, "w") as f:
        f.write(f"""<?xml version='1.0'?>
<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">
<platform version="4.1">
  <zone id="AS_real" routing="Full">
    <cluster id="real" prefix="node-" suffix=".real" radical="0-{ranks - 1}"
             speed="{float(SPEED if speed is None else speed):.6e}f" bw="125MBps" lat="50us" bb_bw="2.25GBps" bb_lat="500us"/>
  </zone>
</platform>
""")
    h = os.path.join(d, "hostfile")
    with open(h, "w") as f:
        f.write("".join(f"node-{r}.real\n" for r in range(ranks)))
    return p, h


def simulate(trace_file, plat, hosts):
    out = subprocess.run([T, "simulate", trace_file, "-p", plat, "--hostfile", hosts, "--format",
                          "json"], check=True, capture_output=True, text=True).stdout
    return json.loads(out)["simulated_time"]


def measure(kind, ranks, iters, precision, series):
    d = trace(kind, ranks, iters, precision)
    s = stats(os.path.join(d, "trace.tlg"))
    files = rank_files(d, ranks)
    text = b"".join(open(f, "rb").read() for f in files)
    plat, hosts = platform(d, ranks)
    sim_text = simulate(os.path.join(d, "trace-list.txt"), plat, hosts)
    sim_tlg = simulate(os.path.join(d, "trace.tlg"), plat, hosts)
    gz = len(gzip.compress(text, compresslevel=9))
    row = dict(s, series=series, kind=kind, ranks=ranks, iters=iters, precision=precision,
               text_bytes=len(text), gzip9_bytes=gz,
               gzip_over_file=round(gz / s["bytes_total"], 2),
               gzip_over_structure=round(gz / s["structure_bytes"], 1),
               text_over_file=round(len(text) / s["bytes_total"], 1),
               sim_text_secs=sim_text, sim_tlg_secs=sim_tlg,
               sim_rel_change=abs(sim_tlg - sim_text) / sim_text)
    print(f"{kind} {ranks} x {iters} at {precision}: {s['unique_grammars']} grammars, "
          f"structure {s['structure_bytes']} B, timing {s['timing_bytes']} B, file "
          f"{s['bytes_total']} B, gzip -9 {gz} B; simulated {sim_text:.6f} s text, "
          f"{sim_tlg:.6f} s tlg", flush=True)
    if not (series == "sweep" or (ranks, iters) == BIG):
        shutil.rmtree(d)
    return row


def main():
    shutil.rmtree(WORK, ignore_errors=True)
    os.makedirs(WORK)
    global T, PROGS
    T, PROGS = build()
    load = os.getloadavg()
    rows = []
    for kind, ranks in RANKS.items():
        for p in ranks:
            for n in ITERS:
                for prec in (DEFAULT, 0):
                    rows.append(measure(kind, p, n, prec, "ranks"))
    for kind in RANKS:
        rows.append(measure(kind, BIG[0], 10, DEFAULT, "iters"))
        rows.append(measure(kind, BIG[0], 10, 0, "iters"))
        for prec in SWEEP[2:]:
            rows.append(measure(kind, BIG[0], BIG[1], prec, "sweep"))
    load_end = os.getloadavg()
    dest = WORK if QUICK else HERE
    keys = ["series", "kind", "ranks", "iters", "precision", "actions", "computes", "terminals",
            "rules", "symbols", "unique_grammars", "bytes_cst", "bytes_grammar", "structure_bytes",
            "bytes_ranks", "bytes_volumes", "bytes_placement", "timing_bytes",
            "bytes_tracer_meta", "bytes_total", "text_bytes", "gzip9_bytes", "gzip_over_file",
            "gzip_over_structure", "text_over_file", "sim_text_secs", "sim_tlg_secs",
            "sim_rel_change"]
    with open(os.path.join(dest, "real.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=keys, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    write_md(dest, rows, load, load_end)


def fmt_prec(p):
    return "lossless" if p == 0 else f"{p:g}"


def write_md(dest, rows, load, load_end):
    L = ["# Compression of real captures (generated by `real.py`; do not edit)", "",
         f"Traced on this machine ({os.cpu_count()} cores; ranks beyond the cores folded onto "
         f"them) with `timeless trace --compress`: stencil2d with a {BLOCK2D}² block per rank, "
         f"stencil3d with a {BLOCK3D}³ block; reference speed {float(SPEED):.4e} flop/s "
         f"(measured once, then given to every run). Load average at start "
         f"{load[0]:.2f}, at end {load_end[0]:.2f}. Structure = CST + grammar sections; timing = "
         "volume + compute placement sections; the file also holds the embedded "
         "trace-meta.json, the rank map and the header. gzip -9 is of the concatenated rank "
         "files of the same run. Simulated times: `timeless simulate` of the run's text list and "
         "of its trace.tlg, one host per rank at the reference speed.", ""]
    head = ("| stencil | ranks | iters | actions | computes | terminals | rules | unique grammars "
            "| CST + grammar (B) | rank map (B) | placement (B) | volumes (B) | meta (B) "
            "| file (B) |")
    sep = "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"

    def line(r):
        return (f"| {r['kind']} | {r['ranks']} | {r['iters']} | {r['actions']} | {r['computes']} "
                f"| {r['terminals']} | {r['rules']} | {r['unique_grammars']} "
                f"| {r['structure_bytes']} | {r['bytes_ranks']} | {r['bytes_placement']} "
                f"| {r['bytes_volumes']} | {r['bytes_tracer_meta']} | {r['bytes_total']} |")

    L += ["## Structure vs ranks (default precision 1e-3)", "", head, sep]
    L += [line(r) for r in rows if r["series"] == "ranks" and r["precision"] == DEFAULT]
    L += ["", f"## Structure vs iterations ({BIG[0]} ranks, default precision)", "", head, sep]
    its = [r for r in rows if r["ranks"] == BIG[0] and r["precision"] == DEFAULT
           and r["series"] in ("ranks", "iters")]
    L += [line(r) for r in sorted(its, key=lambda r: (r["kind"], r["iters"]))]
    L += ["", f"## Size and simulated time at {BIG[0]} ranks × {BIG[1]} iterations, by precision",
          "", "Each row is its own run (text and trace.tlg of the same execution).", "",
          "| stencil | precision | actions | TI text (B) | gzip -9 (B) | file (B) | structure (B) "
          "| timing (B) | text / file | gzip / file | gzip / structure | simulated text (s) "
          "| simulated tlg (s) | relative change |",
          "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    big = [r for r in rows if (r["ranks"], r["iters"]) == BIG]
    for r in sorted(big, key=lambda r: (r["kind"], r["precision"])):
        L.append(f"| {r['kind']} | {fmt_prec(r['precision'])} | {r['actions']} | {r['text_bytes']} "
                 f"| {r['gzip9_bytes']} | {r['bytes_total']} | {r['structure_bytes']} "
                 f"| {r['timing_bytes']} | {r['text_over_file']}× | {r['gzip_over_file']}× "
                 f"| {r['gzip_over_structure']}× | {r['sim_text_secs']:.6f} "
                 f"| {r['sim_tlg_secs']:.6f} | {r['sim_rel_change']:.2e} |")
    L += ["", "## Simulated time, text vs trace.tlg, every run", "",
          "| precision | runs | identical | largest relative change |", "|---|---:|---:|---:|"]
    for prec in SWEEP:
        rs = [r for r in rows if r["precision"] == prec]
        if rs:
            same = sum(r["sim_text_secs"] == r["sim_tlg_secs"] for r in rs)
            worst = max(r["sim_rel_change"] for r in rs)
            L.append(f"| {fmt_prec(prec)} | {len(rs)} | {same} | {worst:.2e} |")
    L.append("")
    with open(os.path.join(dest, "REAL.md"), "w") as f:
        f.write("\n".join(L))


if __name__ == "__main__":
    main()
