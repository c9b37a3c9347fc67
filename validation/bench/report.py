#!/usr/bin/env python3
"""Turn the measurements of run.sh into the results table, CSV, markdown and PASS/FAIL lines.

    report.py RUNS.tsv CSV_OUT MD_OUT MODE

RUNS.tsv: tab-separated, with a header line, one line per run:
    workload  role  tool  iterations  actions  status  wall_s  rss_kib  sim_time_s
where role is `main` (the SimGrid/timeless comparison) or `mem` (the extra timeless run for the
memory check), tool is `simgrid` or `timeless`, status is `ok`, `failed` or `skipped`.

Exit status: 0 if no target failed (skipped ones do not count), 1 otherwise.
"""

import csv
import datetime
import os
import platform
import subprocess
import sys

SPEEDUP_TARGET = 10.0
REL_TOL = 1e-6
# The memory check: the peak RSS of the long ring may exceed the short one's by at most this
# factor, or by at most MEM_SLACK_MIB (small processes: allocator noise dominates).
MEM_FACTOR = 1.5
MEM_SLACK_MIB = 4.0


def load(path):
    runs = {}
    with open(path) as f:
        rows = csv.DictReader(f, delimiter="\t")
        for r in rows:
            key = (r["workload"], r["role"], r["tool"])
            for k in ("wall_s", "sim_time_s"):
                r[k] = float(r[k]) if r[k] not in ("", "-") else None
            r["rss_kib"] = int(r["rss_kib"]) if r["rss_kib"] not in ("", "-") else None
            r["actions"] = int(r["actions"])
            r["iterations"] = int(r["iterations"])
            runs[key] = r
    return runs


def ok(run):
    return run is not None and run["status"] == "ok"


def fmt(x, spec):
    return "n/a" if x is None else format(x, spec)


def cpu_line():
    model = None
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    try:
        nproc = subprocess.run(["nproc"], capture_output=True, text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        nproc = str(os.cpu_count())
    return f"nproc {nproc}, CPU {model or platform.processor() or 'unknown'}"


def main():
    runs_path, csv_out, md_out, mode = sys.argv[1:5]
    runs = load(runs_path)
    workloads = []
    for (w, role, _tool) in runs:
        if role == "main" and w not in workloads:
            workloads.append(w)

    header = [
        "workload", "iterations", "actions",
        "simgrid_wall_s", "timeless_wall_s", "speedup",
        "simgrid_actions_per_s", "timeless_actions_per_s",
        "simgrid_peak_mib", "timeless_peak_mib",
        "simgrid_sim_time_s", "timeless_sim_time_s", "rel_diff",
    ]
    table = []  # rows of raw values (None = not available)
    verdicts = []  # (PASS|FAIL|SKIP, text)

    for w in workloads:
        s = runs.get((w, "main", "simgrid"))
        t = runs.get((w, "main", "timeless"))
        base = s or t
        n = base["actions"]
        sw = s["wall_s"] if ok(s) else None
        tw = t["wall_s"] if ok(t) else None
        sm = s["rss_kib"] / 1024 if ok(s) else None
        tm = t["rss_kib"] / 1024 if ok(t) else None
        ss = s["sim_time_s"] if ok(s) else None
        ts = t["sim_time_s"] if ok(t) else None
        speed = sw / tw if (sw is not None and tw) else None
        rel = abs(ts - ss) / abs(ss) if (ss is not None and ts is not None and ss != 0) else None
        table.append([
            w, base["iterations"], n, sw, tw, speed,
            n / sw if sw else None, n / tw if tw else None,
            sm, tm, ss, ts, rel,
        ])
        for tool, run in (("SimGrid", s), ("timeless", t)):
            if run is not None and run["status"] == "failed":
                verdicts.append(("FAIL", f"{w}: {tool} run failed (logs in the work directory)"))
        if speed is None:
            verdicts.append(("SKIP", f"{w}: speed-up (needs both SimGrid and timeless)"))
        else:
            v = "PASS" if speed >= SPEEDUP_TARGET else "FAIL"
            verdicts.append((v, f"{w}: timeless {speed:.1f}x faster than SimGrid (target >= {SPEEDUP_TARGET:g}x)"))
        if rel is None:
            verdicts.append(("SKIP", f"{w}: simulated time agreement (needs both SimGrid and timeless)"))
        else:
            v = "PASS" if rel <= REL_TOL else "FAIL"
            verdicts.append((v, f"{w}: simulated times {ss:.12g} s (SimGrid) vs {ts:.12g} s (timeless), "
                                f"relative difference {rel:.3g} (target <= {REL_TOL:g})"))

    # Memory independence from trace length: timeless on the ring, short vs long.
    mem_rows = []
    short = next((r for (w, role, tool), r in runs.items() if role == "mem" and tool == "timeless"), None)
    long_ = runs.get(("ring", "main", "timeless"))
    if short is not None:
        for r in (short, long_):
            if r is None:
                continue
            m = r["rss_kib"] / 1024 if ok(r) else None
            wall = r["wall_s"] if ok(r) else None
            mem_rows.append([
                "ring (memory check)", r["iterations"], r["actions"], None, wall, None,
                None, r["actions"] / wall if wall else None,
                None, m, None, r["sim_time_s"] if ok(r) else None, None,
            ])
        if ok(short) and ok(long_):
            a, b = short["rss_kib"] / 1024, long_["rss_kib"] / 1024
            v = "PASS" if b <= max(a * MEM_FACTOR, a + MEM_SLACK_MIB) else "FAIL"
            verdicts.append((v, f"memory: timeless peak RSS {a:.1f} MiB at {short['iterations']} ring iterations, "
                                f"{b:.1f} MiB at {long_['iterations']} (target: about equal, "
                                f"<= max({MEM_FACTOR:g}x, +{MEM_SLACK_MIB:g} MiB))"))
        else:
            verdicts.append(("SKIP", "memory: timeless peak RSS vs trace length (a timeless run failed or was skipped)"))

    specs = ["", "d", "d", ".2f", ".3f", ".1f", ".0f", ".0f", ".1f", ".1f", ".9f", ".9f", ".2e"]

    def cells(row):
        return [str(v) if i == 0 else fmt(v, specs[i]) for i, v in enumerate(row)]

    # Console table.
    titles = ["workload", "iters", "actions", "SG wall s", "TL wall s", "speed-up",
              "SG act/s", "TL act/s", "SG MiB", "TL MiB", "SG sim s", "TL sim s", "rel diff"]
    body = [cells(r) for r in table + mem_rows]
    widths = [max(len(titles[i]), *(len(b[i]) for b in body)) for i in range(len(titles))]
    line = "  ".join(t.rjust(widths[i]) if i else t.ljust(widths[i]) for i, t in enumerate(titles))
    print(line)
    print("-" * len(line))
    for b in body:
        print("  ".join(c.rjust(widths[i]) if i else c.ljust(widths[i]) for i, c in enumerate(b)))
    print()
    for v, text in verdicts:
        print(f"{v}: {text}")

    # CSV (raw values, full precision).
    with open(csv_out, "w", newline="") as f:
        wr = csv.writer(f)
        wr.writerow(header)
        for r in table + mem_rows:
            wr.writerow(["" if v is None else (repr(v) if isinstance(v, float) else v) for v in r])

    # Markdown.
    now = datetime.datetime.now().astimezone().strftime("%Y-%m-%d %H:%M %Z")
    md = [
        "# timeless replay benchmark: results",
        "",
        f"Run {now} with `validation/bench/run.sh{' --quick' if mode == 'quick' else ''}` "
        f"({'smoke run, 10x fewer iterations' if mode == 'quick' else 'full size'}).",
        "",
        f"Machine: {cpu_line()}.",
        "",
        "SG = SimGrid 3.32 `smpirun -replay`, TL = `timeless simulate`. Wall times are one run each; "
        "peak memory is the maximum resident set size (`/usr/bin/time %M`). "
        "See README.md for what is measured.",
        "",
        "| " + " | ".join(titles) + " |",
        "|" + "|".join(["---"] + ["---:"] * (len(titles) - 1)) + "|",
    ]
    for b in body:
        md.append("| " + " | ".join(b) + " |")
    md += ["", "Targets:", ""]
    for v, text in verdicts:
        md.append(f"- **{v}** {text}")
    md.append("")
    with open(md_out, "w") as f:
        f.write("\n".join(md))

    return 1 if any(v == "FAIL" for v, _ in verdicts) else 0


if __name__ == "__main__":
    sys.exit(main())
