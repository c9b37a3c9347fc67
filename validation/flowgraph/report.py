#!/usr/bin/env python3
"""Event flow graphs (issue 14): graph sizes against the TI text, gzip -9 of it and the
compressed trace (.tlg), exactness of the reconstruction, and pictures.

    validation/flowgraph/report.py [--npb DIR] [--npb-origin owner/repo@commit] [--out DIR]

Traces: the validation programs traced with `timeless trace` at 2 and 4 ranks, a generated
64-rank periodic stencil (validation/bench/stencil_gen.py), and with `--npb` the NAS Parallel
Benchmarks CG, FT and MG class S (an NPB3.4-MPI tree built outside the repository). For each:
`timeless flowgraph` -> `.tfg`; `timeless flowgraph --reconstruct`; both traces replayed with
`timeless simulate --no-compensation` on platforms/mycluster.xml (the bench platform for the
stencil) must give the same simulated time bit for bit. Writes FLOWGRAPH.md, flowgraph.csv and
SVG pictures (Graphviz `dot`) of three programs into `--out`.
"""

import argparse
import csv
import gzip
import json
import os
import shutil
import subprocess
import sys
import time

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
PROGRAMS = [("ring", ["4", "1000", "1000000"]), ("stencil2d", ["64", "50"]),
            ("wavefront", ["64", "8", "4"]), ("commsplit", ["10"]), ("pi_mc", ["8", "20000"])]
PICTURES = ["ring", "wavefront", "commsplit"]


def sh(cmd, **kw):
    env = dict(os.environ)
    if os.geteuid() == 0:
        env["OMPI_ALLOW_RUN_AS_ROOT"] = "1"
        env["OMPI_ALLOW_RUN_AS_ROOT_CONFIRM"] = "1"
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, **kw)
    if p.returncode != 0:
        sys.exit(f"failed ({p.returncode}): {' '.join(cmd)}\n{p.stdout}{p.stderr}")
    return p.stdout


def trace_files(list_path):
    d = os.path.dirname(list_path)
    with open(list_path) as f:
        names = [l.strip() for l in f if l.strip()]
    return [n if os.path.isabs(n) else os.path.join(d, n) for n in names]


def simulated(timeless, list_path, platform, hostfile=None):
    cmd = [timeless, "simulate", list_path, "-p", platform, "--no-compensation", "--format", "json"]
    if hostfile:
        cmd += ["--hostfile", hostfile]
    return json.loads(sh(cmd))["simulated_time"]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--npb", help="NPB3.4-MPI source tree (built outside the repository)")
    ap.add_argument("--npb-origin", default="")
    ap.add_argument("--out", default=os.path.join(ROOT, "validation", "flowgraph"))
    ap.add_argument("--work", default="/tmp/timeless-flowgraph-report")
    args = ap.parse_args()
    sh(["cargo", "build", "--release", "-p", "timeless", "-p", "timeless-preload"], cwd=ROOT)
    timeless = os.path.join(ROOT, "target", "release", "timeless")
    shutil.rmtree(args.work, ignore_errors=True)
    build = os.path.join(args.work, "programs")
    sh(["make", "-C", os.path.join(ROOT, "validation", "programs"), f"BUILD={build}"])
    platform = os.path.join(ROOT, "platforms", "mycluster.xml")

    cases = []  # (label, origin, list, platform, hostfile)
    for name, pargs in PROGRAMS:
        for n in (2, 4):
            out = os.path.join(args.work, f"{name}-{n}")
            sh([timeless, "trace", "-n", str(n), "--ref-speed", "1e9", "-o", out, "--",
                os.path.join(build, name)] + pargs)
            cases.append((f"{name} {' '.join(pargs)}", "validation", n,
                          os.path.join(out, "trace-list.txt"), platform, None))
    if args.npb:
        for b in ("cg", "ft", "mg"):
            exe = os.path.join(args.npb, "bin", f"{b}.S.x")
            if not os.path.exists(exe):
                sh(["make", b, "CLASS=S"], cwd=args.npb)
            for n in (2, 4):
                out = os.path.join(args.work, f"npb-{b}-{n}")
                sh([timeless, "trace", "-n", str(n), "--ref-speed", "1e9", "-o", out, "--", exe])
                cases.append((f"NPB {b.upper()} class S", "NPB3.4-MPI", n,
                              os.path.join(out, "trace-list.txt"), platform, None))
    st = os.path.join(args.work, "stencil64")
    sh([sys.executable, os.path.join(ROOT, "validation", "bench", "stencil_gen.py"), "64", "100", st])
    cases.append(("periodic stencil (generated), 100 iterations", "stencil_gen.py", 64,
                  os.path.join(st, "list.txt"), os.path.join(st, "platform.xml"),
                  os.path.join(st, "hostfile")))

    rows = []
    for label, origin, n, lst, plat, hostfile in cases:
        base = os.path.splitext(lst)[0]
        text = b"".join(open(f, "rb").read() for f in trace_files(lst))
        gz = len(gzip.compress(text, 9))
        tlg = base + ".tlg"
        sh([timeless, "compress", lst, "-o", tlg])
        tfg = base + ".tfg"
        summary = sh([timeless, "flowgraph", lst, "-o", tfg])
        distinct = int(summary.split(" distinct graphs")[0].split(", ")[-1])
        nodes = int(summary.split(" nodes")[0].split(", ")[-1])
        events = int(summary.split(" events")[0].split(", ")[-1])
        re_dir = base + "-rebuilt"
        sh([timeless, "flowgraph", "--reconstruct", tfg, "-o", re_dir])
        a = simulated(timeless, lst, plat, hostfile)
        b = simulated(timeless, os.path.join(re_dir, "trace-list.txt"), plat, hostfile)
        row = {"trace": label, "origin": origin, "ranks": n, "events": events,
               "distinct_graphs": distinct, "nodes": nodes, "text_bytes": len(text),
               "gzip9_bytes": gz, "tlg_bytes": os.path.getsize(tlg), "tfg_bytes": os.path.getsize(tfg),
               "simulated_s": repr(a), "rebuilt_simulated_s": repr(b), "bit_identical": a == b}
        rows.append(row)
        print(row, flush=True)
        short = label.split()[0]
        if n == 4 and short in PICTURES:
            dot = base + ".dot"
            sh([timeless, "flowgraph", lst, "-o", dot, "--format", "dot"])
            sh(["dot", "-Tsvg", dot, "-o", os.path.join(args.out, f"{short}-4.svg")])

    os.makedirs(args.out, exist_ok=True)
    with open(os.path.join(args.out, "flowgraph.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)
    git = sh(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT).strip()
    lines = ["# Event flow graphs (issue 14)", "",
             f"Generated by `validation/flowgraph/report.py` at timeless {git}, "
             f"{time.strftime('%Y-%m-%d')}. Validation programs traced with `timeless trace` "
             "(`--ref-speed 1e9`) at 2 and 4 ranks"
             + (f"; NAS Parallel Benchmarks 3.4.1 MPI ({args.npb_origin or args.npb}) class S" if args.npb else "")
             + "; a generated 64-rank periodic stencil. Sizes in bytes: the TI text (all rank "
             "files), `gzip -9` of it, `timeless compress` (.tlg), the flow graph file (.tfg). "
             "Rebuilt: `timeless flowgraph --reconstruct`, replayed with `timeless simulate "
             "--no-compensation`: `same` when its simulated time has the same bits as the "
             "original's.", "",
             "| trace | ranks | events | graphs | nodes | text | gzip -9 | .tlg | .tfg | text/.tfg | rebuilt |",
             "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|"]
    for r in rows:
        lines.append(f"| {r['trace']} | {r['ranks']} | {r['events']} | {r['distinct_graphs']} | "
                     f"{r['nodes']} | {r['text_bytes']} | {r['gzip9_bytes']} | {r['tlg_bytes']} | "
                     f"{r['tfg_bytes']} | {r['text_bytes'] / r['tfg_bytes']:.1f} | "
                     f"{'same' if r['bit_identical'] else 'DIFFERENT'} |")
    lines += ["", "Pictures (4 ranks): " + ", ".join(f"[{p}]({p}-4.svg)" for p in PICTURES), ""]
    with open(os.path.join(args.out, "FLOWGRAPH.md"), "w") as f:
        f.write("\n".join(lines))
    print("\n".join(lines))
    if not all(r["bit_identical"] for r in rows):
        sys.exit("a rebuilt trace replays differently")


if __name__ == "__main__":
    main()
