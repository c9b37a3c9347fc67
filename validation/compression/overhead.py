#!/usr/bin/env python3
"""Tracer overhead with online compression on vs off (issue 4).

    validation/compression/overhead.py [--quick]

For each program and rank count, the wall time of `mpirun` (best of 5, under
validation/calibration/priority.sh's `timed`) in four modes, interleaved run by run so that
load drifts hit every mode alike:
  untraced      the program alone
  text          the tracer, TI text only (what `timeless trace` does)
  text+tlg      the tracer with online compression, text too (`timeless trace --compress`)
  tlg only      online compression without text (`timeless trace --compress --no-text`)
plus, from the tracer's TIMELESS_COMPRESS_VERBOSE lines, the wall time each rank spent in its
online encoder (decoding its record lines, CST, Sequitur, volume blocks), the MPI_Finalize
agreement (the wait for the last rank to reach MPI_Finalize) and the merge + file time on rank
0, and the sizes of the text trace, of its gzip -9 and of trace.tlg.

Writes overhead.csv and OVERHEAD.md next to this script (--quick: 2 runs, to work/ only).
Uses BENCH_PRELOAD if set, else builds the tracer in release mode; BENCH_TIMELESS_BIN, else
builds `timeless` (debug: it only reads the trace's statistics here).
"""

import csv
import gzip
import os
import re
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "../.."))
QUICK = "--quick" in sys.argv
WORK = os.path.join(HERE, "work", "overhead")
REPS = 2 if QUICK else 5
TARGET = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))

CONFIGS = [
    # (program, args, ranks)
    ("ring", ["20000", "8", "0"], 2),
    ("ring", ["20000", "8", "0"], 4),
    ("ring", ["200000", "8", "0"], 2),
    ("stencil2d", ["64", "2000"], 2),
    ("stencil2d", ["64", "2000"], 4),
    ("stencil2d", ["64", "20000"], 2),
]
MODES = ["untraced", "text", "text+tlg", "tlg only"]


def build():
    pre = os.environ.get("BENCH_PRELOAD")
    if not pre:
        subprocess.run(["nice", "-n", "19", "cargo", "build", "--release", "-q", "-p",
                        "timeless-preload"], cwd=ROOT, check=True)
        pre = os.path.join(TARGET, "release", "libtimeless_preload.so")
    t = os.environ.get("BENCH_TIMELESS_BIN")
    if not t:
        subprocess.run(["nice", "-n", "19", "cargo", "build", "-q", "-p", "timeless"],
                       cwd=ROOT, check=True)
        t = os.path.join(TARGET, "debug", "timeless")
    progs = os.path.join(WORK, "programs")
    subprocess.run(["make", "-s", "-C", os.path.join(ROOT, "validation/programs"),
                    f"BUILD={progs}"], check=True, stdout=subprocess.DEVNULL)
    return pre, t, progs


PRELOAD, TIMELESS, PROGS = build()
CORES = os.cpu_count() or 1
ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
VERBOSE = re.compile(r"agreement ([0-9.e-]+) s .* file in ([0-9.e-]+) s")
ENCODER = re.compile(r"online encoder: ([0-9]+) actions in ([0-9.e-]+) s")


# Every timed run goes through validation/calibration/priority.sh's `timed`: its own session
# whose autogroup is at nice -19, and nice -19 inside it.
PRIORITY_SH = os.path.join(ROOT, "validation", "calibration", "priority.sh")
TIMED = ["sh", "-c", '. "$0"; timed "$@"', PRIORITY_SH]


def run(program, args, np, mode, out):
    cmd = TIMED + ["mpirun", "-np", str(np)]
    if np > CORES:
        cmd += ["--oversubscribe", "--bind-to", "none", "--mca", "mpi_yield_when_idle", "1"]
    if mode != "untraced":
        shutil.rmtree(out, ignore_errors=True)
        # A given reference speed (as `timeless trace` passes the one it measured once): no
        # calibration kernel at start-up, so the traced modes differ by their records only.
        cmd += ["-x", f"LD_PRELOAD={PRELOAD}", "-x", f"TIMELESS_OUT={out}",
                "-x", "TIMELESS_REF_SPEED=1e9"]
    if mode in ("text+tlg", "tlg only"):
        cmd += ["-x", "TIMELESS_COMPRESS=1", "-x", "TIMELESS_COMPRESS_VERBOSE=1"]
    if mode == "tlg only":
        cmd += ["-x", "TIMELESS_TEXT=0"]
    cmd += [os.path.join(PROGS, program)] + args
    t0 = time.perf_counter()
    p = subprocess.run(cmd, env=ENV, capture_output=True, text=True)
    wall = time.perf_counter() - t0
    if p.returncode != 0 or "disabled" in p.stderr:
        sys.exit(f"{' '.join(cmd)} failed:\n{p.stdout}{p.stderr}")
    m = VERBOSE.search(p.stderr)
    enc = [(int(a), float(t)) for a, t in ENCODER.findall(p.stderr)]
    if m:
        # (agreement, merge + file, encoder seconds summed over ranks, actions)
        return wall, (float(m.group(1)), float(m.group(2)), sum(t for _, t in enc),
                      sum(a for a, _ in enc))
    return wall, None


def stats(tlg):
    out = subprocess.run([TIMELESS, "stats", tlg], check=True, capture_output=True,
                         text=True).stdout
    return dict(line.split(": ", 1) for line in out.splitlines())


def median(v):
    v = sorted(v)
    return v[len(v) // 2] if v else float("nan")


def main():
    os.makedirs(WORK, exist_ok=True)
    load_start = os.getloadavg()
    print(f"load average at start: {load_start[0]:.2f} {load_start[1]:.2f} {load_start[2]:.2f}")
    rows = []
    for program, args, np in CONFIGS:
        name = f"{program} {' '.join(args)} -n {np}"
        walls = {m: [] for m in MODES}
        merges = []
        dirs = {m: os.path.join(WORK, f"{program}-{'-'.join(args)}-{np}-{m.replace(' ', '')}")
                for m in MODES}
        load = os.getloadavg()[0]
        for _ in range(REPS):
            for m in MODES:
                w, mg = run(program, args, np, m, dirs[m])
                walls[m].append(w)
                if mg:
                    merges.append(mg)
        d = dirs["text+tlg"]
        text_files = [os.path.join(d, f"rank-{r}.txt") for r in range(np)]
        text_bytes = sum(os.path.getsize(f) for f in text_files)
        gz = 0
        for f in text_files:
            with open(f, "rb") as fh:
                gz += len(gzip.compress(fh.read(), 9))
        tlg = os.path.join(d, "trace.tlg")
        st = stats(tlg)
        actions = int(st["actions"])
        best = {m: min(walls[m]) for m in MODES}
        per_rank = actions / np
        row = {
            "config": name,
            "ranks": np,
            "load_1min": round(load, 2),
            "actions": actions,
            **{f"best_{m}_secs": round(best[m], 4) for m in MODES},
            "tracer_overhead_secs": round(best["text"] - best["untraced"], 4),
            "compression_delta_secs": round(best["text+tlg"] - best["text"], 4),
            "tlg_only_delta_secs": round(best["tlg only"] - best["text"], 4),
            "compression_delta_us_per_record": round(
                (best["text+tlg"] - best["text"]) / per_rank * 1e6, 3),
            "encoder_ns_per_action_median": round(
                median([e / max(n, 1) * 1e9 for _, _, e, n in merges]), 1),
            "agreement_secs_median": round(median([m[0] for m in merges]), 6),
            "merge_and_write_secs_median": round(median([m[1] for m in merges]), 6),
            "text_bytes": text_bytes,
            "gzip9_bytes": gz,
            "tlg_bytes": int(st["bytes_total"]),
            "tlg_volume_bytes": int(st["bytes_volumes"]),
        }
        rows.append(row)
        print(f"{name}: " + ", ".join(f"{m} {best[m]:.3f} s" for m in MODES)
              + f"; merge {row['merge_and_write_secs_median']:.4f} s; "
              f"text {text_bytes} B, tlg {row['tlg_bytes']} B")
    load_end = os.getloadavg()
    print(f"load average at end: {load_end[0]:.2f} {load_end[1]:.2f} {load_end[2]:.2f}")
    if QUICK:
        return
    with open(os.path.join(HERE, "overhead.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    write_md(rows, load_start, load_end)


def write_md(rows, load_start, load_end):
    L = ["# Tracer overhead with online compression (generated by `overhead.py`; do not edit)",
         "",
         f"{CORES} cores; best of {REPS} runs per mode, modes interleaved run by run, every run "
         "under priority.sh's `timed` (own autogroup at nice -19); tracer built in release "
         "mode. Load average (1, 5, 15 min) at "
         f"start {load_start[0]:.2f} {load_start[1]:.2f} {load_start[2]:.2f}, at end "
         f"{load_end[0]:.2f} {load_end[1]:.2f} {load_end[2]:.2f}. Wall times include "
         "`mpirun` start-up and the tracer's start-up (reference speed given, "
         "`TIMELESS_REF_SPEED`, as `timeless trace` does). More ranks than cores: "
         "`--oversubscribe --bind-to none --mca mpi_yield_when_idle 1`.",
         "",
         "## Wall time (s)",
         "",
         "| program | ranks | load | actions | untraced | text | text + tlg | tlg only | "
         "tracer overhead | compression on − off | per record (µs/rank) | tlg only − text | "
         "encoder (ns/action) |",
         "|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        L.append(f"| {r['config']} | {r['ranks']} | {r['load_1min']} | {r['actions']} | "
                 f"{r['best_untraced_secs']:.3f} | {r['best_text_secs']:.3f} | "
                 f"{r['best_text+tlg_secs']:.3f} | {r['best_tlg only_secs']:.3f} | "
                 f"{r['tracer_overhead_secs']:+.3f} | {r['compression_delta_secs']:+.3f} | "
                 f"{r['compression_delta_us_per_record']:+.2f} | {r['tlg_only_delta_secs']:+.3f} | "
                 f"{r['encoder_ns_per_action_median']:.0f} |")
    L += ["",
          "## MPI_Finalize merge on rank 0 and sizes",
          "",
          "| program | ranks | agreement (s, median) | merge rounds + file (s, median) | "
          "TI text (B) | gzip -9 (B) | trace.tlg (B) | of which volumes (B) | text / tlg |",
          "|---|---:|---:|---:|---:|---:|---:|---:|---:|"]
    for r in rows:
        L.append(f"| {r['config']} | {r['ranks']} | {r['agreement_secs_median']:.6f} | "
                 f"{r['merge_and_write_secs_median']:.6f} | {r['text_bytes']} | "
                 f"{r['gzip9_bytes']} | {r['tlg_bytes']} | {r['tlg_volume_bytes']} | "
                 f"{r['text_bytes'] / r['tlg_bytes']:.0f}× |")
    L.append("")
    with open(os.path.join(HERE, "OVERHEAD.md"), "w") as f:
        f.write("\n".join(L))


if __name__ == "__main__":
    main()
