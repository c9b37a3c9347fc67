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
from dataclasses import dataclass

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


@dataclass
class Case:
    """One trace to measure: its label and origin, rank count, list file, and where to replay it."""
    label: str
    origin: str
    ranks: int
    list_path: str
    platform: str
    hostfile: str = None

    @property
    def base(self):
        return os.path.splitext(self.list_path)[0]


def build_tools(work):
    """Builds timeless, the tracer and the validation programs; returns (timeless, programs dir)."""
    sh(["cargo", "build", "--release", "-p", "timeless", "-p", "timeless-preload"], cwd=ROOT)
    shutil.rmtree(work, ignore_errors=True)
    build = os.path.join(work, "programs")
    sh(["make", "-C", os.path.join(ROOT, "validation", "programs"), f"BUILD={build}"])
    return os.path.join(ROOT, "target", "release", "timeless"), build


def traced(timeless, out, n, argv):
    """Runs `argv` under `timeless trace` on `n` ranks into `out`; returns its list file."""
    sh([timeless, "trace", "-n", str(n), "--ref-speed", "1e9", "-o", out, "--"] + argv)
    return os.path.join(out, "trace-list.txt")


def program_cases(timeless, build, work, platform):
    """The validation programs at 2 and 4 ranks."""
    for name, pargs in PROGRAMS:
        for n in (2, 4):
            lst = traced(timeless, os.path.join(work, f"{name}-{n}"), n, [os.path.join(build, name)] + pargs)
            yield Case(f"{name} {' '.join(pargs)}", "validation", n, lst, platform)


def npb_cases(timeless, npb, work, platform):
    """NPB CG, FT and MG class S at 2 and 4 ranks (built in `npb` when missing)."""
    for b in ("cg", "ft", "mg"):
        exe = os.path.join(npb, "bin", f"{b}.S.x")
        if not os.path.exists(exe):
            sh(["make", b, "CLASS=S"], cwd=npb)
        for n in (2, 4):
            lst = traced(timeless, os.path.join(work, f"npb-{b}-{n}"), n, [exe])
            yield Case(f"NPB {b.upper()} class S", "NPB3.4-MPI", n, lst, platform)


def stencil_case(work):
    """A generated 64-rank periodic stencil with its own platform and hostfile."""
    st = os.path.join(work, "stencil64")
    sh([sys.executable, os.path.join(ROOT, "validation", "bench", "stencil_gen.py"), "64", "100", st])
    return Case("periodic stencil (generated), 100 iterations", "stencil_gen.py", 64,
                os.path.join(st, "list.txt"), os.path.join(st, "platform.xml"),
                os.path.join(st, "hostfile"))


def summary_count(summary, word):
    """The number before `word` in `timeless flowgraph`'s summary line."""
    return int(summary.split(f" {word}")[0].split(", ")[-1])


def measure(timeless, case):
    """Sizes of one trace's representations and whether its reconstruction replays bit for bit."""
    text = b"".join(open(f, "rb").read() for f in trace_files(case.list_path))
    tlg = case.base + ".tlg"
    sh([timeless, "compress", case.list_path, "-o", tlg])
    tfg = case.base + ".tfg"
    summary = sh([timeless, "flowgraph", case.list_path, "-o", tfg])
    re_dir = case.base + "-rebuilt"
    sh([timeless, "flowgraph", "--reconstruct", tfg, "-o", re_dir])
    a = simulated(timeless, case.list_path, case.platform, case.hostfile)
    b = simulated(timeless, os.path.join(re_dir, "trace-list.txt"), case.platform, case.hostfile)
    return {"trace": case.label, "origin": case.origin, "ranks": case.ranks,
            "events": summary_count(summary, "events"),
            "distinct_graphs": summary_count(summary, "distinct graphs"),
            "nodes": summary_count(summary, "nodes"), "text_bytes": len(text),
            "gzip9_bytes": len(gzip.compress(text, 9)), "tlg_bytes": os.path.getsize(tlg),
            "tfg_bytes": os.path.getsize(tfg), "simulated_s": repr(a),
            "rebuilt_simulated_s": repr(b), "bit_identical": a == b}


def draw_picture(timeless, case, out):
    """An SVG (Graphviz `dot`) of the 4-rank graph of the programs in PICTURES."""
    short = case.label.split()[0]
    if case.ranks == 4 and short in PICTURES:
        dot = case.base + ".dot"
        sh([timeless, "flowgraph", case.list_path, "-o", dot, "--format", "dot"])
        sh(["dot", "-Tsvg", dot, "-o", os.path.join(out, f"{short}-4.svg")])


def write_csv(rows, out):
    with open(os.path.join(out, "flowgraph.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()))
        w.writeheader()
        w.writerows(rows)


def markdown(rows, npb, npb_origin):
    """FLOWGRAPH.md's text."""
    git = sh(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT).strip()
    lines = ["# Event flow graphs (issue 14)", "",
             f"Generated by `validation/flowgraph/report.py` at timeless {git}, "
             f"{time.strftime('%Y-%m-%d')}. Validation programs traced with `timeless trace` "
             "(`--ref-speed 1e9`) at 2 and 4 ranks"
             + (f"; NAS Parallel Benchmarks 3.4.1 MPI ({npb_origin or npb}) class S" if npb else "")
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
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--npb", help="NPB3.4-MPI source tree (built outside the repository)")
    ap.add_argument("--npb-origin", default="")
    ap.add_argument("--out", default=os.path.join(ROOT, "validation", "flowgraph"))
    ap.add_argument("--work", default="/tmp/timeless-flowgraph-report")
    args = ap.parse_args()
    timeless, build = build_tools(args.work)
    platform = os.path.join(ROOT, "platforms", "mycluster.xml")
    os.makedirs(args.out, exist_ok=True)

    cases = list(program_cases(timeless, build, args.work, platform))
    if args.npb:
        cases += npb_cases(timeless, args.npb, args.work, platform)
    cases.append(stencil_case(args.work))

    rows = []
    for case in cases:
        rows.append(measure(timeless, case))
        print(rows[-1], flush=True)
        draw_picture(timeless, case, args.out)

    write_csv(rows, args.out)
    text = markdown(rows, args.npb, args.npb_origin)
    with open(os.path.join(args.out, "FLOWGRAPH.md"), "w") as f:
        f.write(text)
    print(text)
    if not all(r["bit_identical"] for r in rows):
        sys.exit("a rebuilt trace replays differently")


if __name__ == "__main__":
    main()
