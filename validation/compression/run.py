#!/usr/bin/env python3
"""Compression report: structure size vs ranks and iterations, compressed size vs TI text and
gzip -9, replay speed of compressed vs text traces, effect of the default precision.

    validation/compression/run.py [--quick]

Writes results.csv and RESULTS.md next to this script (--quick: smaller runs, to work/ only).
Uses BENCH_TIMELESS_BIN if set, else builds `timeless` in release mode.
"""

import csv
import gzip
import json
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "../.."))
QUICK = "--quick" in sys.argv
WORK = os.path.join(HERE, "work")


def timeless_bin():
    b = os.environ.get("BENCH_TIMELESS_BIN")
    if b:
        return b
    subprocess.run(["cargo", "build", "--release", "-q", "-p", "timeless"], cwd=ROOT, check=True)
    target = os.environ.get("CARGO_TARGET_DIR", os.path.join(ROOT, "target"))
    return os.path.join(target, "release", "timeless")


T = timeless_bin()


def gen(kind, ranks, iters, noise=0.0):
    d = os.path.join(WORK, f"{kind}-{ranks}-{iters}-{noise}")
    if not os.path.exists(os.path.join(d, "list.txt")):
        args = [sys.executable, os.path.join(HERE, "gen.py"), kind, "--ranks", str(ranks),
                "--iters", str(iters), "--out", d]
        if noise:
            args += ["--noise", str(noise)]
        subprocess.run(args, check=True)
    return d


def compress(d, precision=None, name="t.tlg"):
    out = os.path.join(d, name)
    args = [T, "compress", os.path.join(d, "list.txt"), "-o", out]
    if precision is not None:
        args += ["--precision", str(precision)]
    subprocess.run(args, check=True, stderr=subprocess.DEVNULL)
    return out


def stats(f):
    out = subprocess.run([T, "stats", f], check=True, capture_output=True, text=True).stdout
    s = {}
    for line in out.splitlines():
        k, v = line.split(": ", 1)
        s[k] = int(v) if v.isdigit() else v
    s["structure_bytes"] = s["bytes_cst"] + s["bytes_grammar"]
    return s


def text_bytes(d):
    return sum(os.path.getsize(os.path.join(d, f)) for f in os.listdir(d) if f.startswith("rank-"))


def gzip_bytes(d, ranks):
    data = b"".join(open(os.path.join(d, f"rank-{r}.txt"), "rb").read() for r in range(ranks))
    return len(gzip.compress(data, compresslevel=9))


def simulate(d, trace):
    """Replays `trace`; returns (simulated time, best CPU seconds, best wall seconds, peak RSS KiB).
    CPU time (user + sys, from /usr/bin/time) is the robust figure on a loaded machine."""
    args = [T, "simulate", trace, "-p", os.path.join(d, "platform.xml"), "--hostfile",
            os.path.join(d, "hostfile"), "--format", "json"]
    stat = os.path.join(WORK, "time.txt")
    cpu = wall = rss = None
    for _ in range(1 if QUICK else 5):
        t0 = time.perf_counter()
        out = subprocess.run(["/usr/bin/time", "-f", "%U %S %M", "-o", stat] + args, check=True,
                             capture_output=True, text=True).stdout
        dt = time.perf_counter() - t0
        u, s_, m = open(stat).read().split()[-3:]
        c = float(u) + float(s_)
        cpu = c if cpu is None else min(cpu, c)
        wall = dt if wall is None else min(wall, dt)
        rss = int(m) if rss is None else max(rss, int(m))
    return json.loads(out)["simulated_time"], cpu, wall, rss


def main():
    if os.path.exists(WORK):
        shutil.rmtree(WORK)
    os.makedirs(WORK)
    rows = []
    it_scale = 100
    ranks2d = [4, 9, 16, 25, 36, 49, 64, 100, 144] if not QUICK else [4, 9, 16, 25]
    ranks3d = [8, 12, 18, 27, 36, 48, 64, 125] if not QUICK else [8, 27, 36]
    for kind, ranks in (("stencil2d", ranks2d), ("stencil3d", ranks3d)):
        for p in ranks:
            d = gen(kind, p, it_scale)
            s = stats(compress(d))
            rows.append(dict(s, series="ranks", kind=kind, ranks=p, iters=it_scale))
    iters_list = [10, 100, 1000, 10000] if not QUICK else [10, 100]
    for kind in ("stencil2d", "stencil3d"):
        for n in iters_list:
            d = gen(kind, 64 if not QUICK else 16 if kind == "stencil2d" else 27, n)
            p = 64 if not QUICK else 16 if kind == "stencil2d" else 27
            s = stats(compress(d))
            rows.append(dict(s, series="iters", kind=kind, ranks=p, iters=n))
            shutil.rmtree(d)
    # Sizes and replay at 64 ranks x 1000 iterations.
    size_rows = []
    P, N = (64, 1000) if not QUICK else (16, 100)
    for kind in ("stencil2d", "stencil3d"):
        for noise in (0.0, 0.05):
            d = gen(kind, P, N, noise)
            tb, gz = text_bytes(d), gzip_bytes(d, P)
            f_def = compress(d, None, "default.tlg")
            f_ll = compress(d, 0, "lossless.tlg")
            s_def, s_ll = stats(f_def), stats(f_ll)
            t_text, cpu_text, wall_text, rss_text = simulate(d, os.path.join(d, "list.txt"))
            t_ll, cpu_ll, wall_ll, rss_ll = simulate(d, f_ll)
            t_def, cpu_def, wall_def, rss_def = simulate(d, f_def)
            size_rows.append(dict(
                kind=kind, ranks=P, iters=N, noise=noise, actions=s_ll["actions"],
                text_bytes=tb, gzip9_bytes=gz,
                default_bytes=s_def["bytes_total"], lossless_bytes=s_ll["bytes_total"],
                default_volume_bytes=s_def["bytes_volumes"], lossless_volume_bytes=s_ll["bytes_volumes"],
                gzip_over_default=round(gz / s_def["bytes_total"], 1),
                gzip_over_lossless=round(gz / s_ll["bytes_total"], 1),
                sim_text=t_text, sim_lossless=t_ll, sim_default=t_def,
                default_rel_change=abs(t_def - t_text) / t_text,
                cpu_text_secs=round(cpu_text, 2), cpu_lossless_secs=round(cpu_ll, 2),
                cpu_default_secs=round(cpu_def, 2),
                wall_text_secs=round(wall_text, 2), wall_lossless_secs=round(wall_ll, 2),
                wall_default_secs=round(wall_def, 2),
                rss_text_kib=rss_text, rss_lossless_kib=rss_ll, rss_default_kib=rss_def))
            shutil.rmtree(d)
    dest = WORK if QUICK else HERE
    with open(os.path.join(dest, "results.csv"), "w", newline="") as f:
        keys = ["series", "kind", "ranks", "iters", "actions", "terminals", "rules", "symbols",
                "unique_grammars", "final_pass_rules", "final_pass_symbols", "bytes_cst",
                "bytes_grammar", "structure_bytes", "bytes_ranks", "bytes_volumes", "bytes_total"]
        w = csv.DictWriter(f, fieldnames=keys, extrasaction="ignore")
        w.writeheader()
        w.writerows(rows)
    with open(os.path.join(dest, "sizes.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(size_rows[0].keys()))
        w.writeheader()
        w.writerows(size_rows)
    write_md(dest, rows, size_rows)
    if not QUICK:
        shutil.rmtree(WORK)


def write_md(dest, rows, size_rows):
    out = ["# Compression report (generated by `run.py`; do not edit)\n"]
    out.append(f"timeless binary: `{os.path.relpath(T, ROOT)}`; default precision: relative 1e-3.\n")
    for series, title in (("ranks", "Structure size vs ranks (100 iterations)"),
                          ("iters", "Structure size vs iterations (64 ranks)")):
        out.append(f"\n## {title}\n")
        out.append("| stencil | ranks | iters | actions | terminals | rules | symbols | unique grammars "
                   "| CST bytes | grammar bytes | CST + grammar | rank map bytes | volume bytes | file bytes |")
        out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
        for r in rows:
            if r["series"] != series:
                continue
            out.append(f"| {r['kind']} | {r['ranks']} | {r['iters']} | {r['actions']} | {r['terminals']} "
                       f"| {r['rules']} | {r['symbols']} | {r['unique_grammars']} | {r['bytes_cst']} "
                       f"| {r['bytes_grammar']} | {r['structure_bytes']} | {r['bytes_ranks']} "
                       f"| {r['bytes_volumes']} | {r['bytes_total']} |")
    out.append("\n## Sizes, replay time and precision at the largest point\n")
    out.append("| stencil | noise | actions | TI text | gzip -9 | compressed (default) | gzip/compressed "
               "| compressed (lossless) | gzip/lossless | simulated time text | default precision change "
               "|")
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in size_rows:
        same = "=" if r["sim_lossless"] == r["sim_text"] else "DIFFERENT"
        out.append(f"| {r['kind']} | {r['noise']} | {r['actions']} | {r['text_bytes']} | {r['gzip9_bytes']} "
                   f"| {r['default_bytes']} | {r['gzip_over_default']}× | {r['lossless_bytes']} "
                   f"| {r['gzip_over_lossless']}× | {r['sim_text']} (lossless {same}) "
                   f"| {r['default_rel_change']:.2e} |")
    out.append("\n## Replay cost: text vs compressed (best of 5; CPU = user + sys)\n")
    out.append("| stencil | noise | actions | CPU text (s) | CPU compressed lossless (s) | CPU compressed default (s) "
               "| wall text (s) | wall lossless (s) | wall default (s) | peak RSS text (KiB) | lossless (KiB) | default (KiB) |")
    out.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    for r in size_rows:
        out.append(f"| {r['kind']} | {r['noise']} | {r['actions']} | {r['cpu_text_secs']} | {r['cpu_lossless_secs']} "
                   f"| {r['cpu_default_secs']} | {r['wall_text_secs']} | {r['wall_lossless_secs']} "
                   f"| {r['wall_default_secs']} | {r['rss_text_kib']} | {r['rss_lossless_kib']} "
                   f"| {r['rss_default_kib']} |")
    with open(os.path.join(dest, "RESULTS.md"), "w") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main()
