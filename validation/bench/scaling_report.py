#!/usr/bin/env python3
"""SCALING.md and scaling.svg from scaling.py's CSV.

    scaling_report.py scaling.csv OUTDIR COMMIT

Tables per workload and platform (medians of the alternated runs), the issue-12 targets as
PASS/FAIL lines, and a log-log plot of actions/s against ranks for both tools (matplotlib; a
notice instead when it is not installed).
"""

import csv
import os
import platform
import subprocess
import sys
import time
from collections import defaultdict


def cpu_model():
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def main():
    src, out, commit = sys.argv[1], sys.argv[2], sys.argv[3] if len(sys.argv) > 3 else "?"
    rows = list(csv.DictReader(open(src)))
    points = defaultdict(dict)  # (workload, platform, ranks) -> tool -> row
    for r in rows:
        points[(r["workload"], r["platform"], int(r["ranks"]))][r["tool"]] = r
    lines = [
        "# Replay at cluster scale: timeless vs SimGrid 3.32",
        "",
        f"Run {time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())} with "
        f"`validation/bench/scaling.py`, timeless commit `{commit}`; machine: "
        f"nproc {os.cpu_count()}, {cpu_model()}.",
        "",
        "Wall times are medians of runs alternated SG TL SG TL ... through `timed` (see README.md);"
        " peak RSS is the largest `/usr/bin/time %M` of those runs. ratio = SG wall / TL wall;"
        " rel diff = |TL - SG| / SG on the simulated times. TL CPU s: timeless's CPU time (user +"
        " sys, both threads; median). CPU wait: the share of each tool's wall time during which"
        " some runnable task of the machine waited for a CPU (/proc/pressure/cpu `some`, median"
        " of the runs): near 0 when the replay had both cores, high when other work took one"
        " and timeless's decoder and replay threads shared the other.",
        "",
    ]
    checks = []
    groups = defaultdict(list)
    for key in sorted(points, key=lambda k: (k[0], k[1], k[2])):
        groups[key[:2]].append(key)
    for (workload, plat), keys in groups.items():
        lines += [f"## {workload} on `{plat}`", "",
                  "| ranks | actions | SG wall s | TL wall s | ratio | SG act/s | TL act/s |"
                  " SG MiB | TL MiB | SG sim s | TL sim s | rel diff | TL CPU s | CPU wait SG / TL |",
                  "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|"]
        for key in keys:
            p = points[key]
            sg, tl = p.get("simgrid"), p.get("timeless")
            actions = (tl or sg)["actions"]
            cell = lambda r, f: r[f] if r else "n/a"  # noqa: E731
            # Columns that CSV files of runs before they were recorded lack.
            opt = lambda r, f: (r.get(f) or "n/a") if r else "n/a"  # noqa: E731
            pct = lambda r: (f"{100 * float(r['cpu_wait']):.0f} %"  # noqa: E731
                             if r and r.get("cpu_wait") else "n/a")
            ratio = rel = "n/a"
            if sg and tl:
                ratio = f"{float(sg['wall_s']) / float(tl['wall_s']):.1f}"
                a, b = float(tl["sim_time_s"]), float(sg["sim_time_s"])
                rel = f"{abs(a - b) / b:.2e}" if b else "n/a"
                checks.append(("agreement", workload, plat, key[2], abs(a - b) / b if b else 0.0))
            lines.append(
                f"| {key[2]} | {actions} | {cell(sg, 'wall_s')} | {cell(tl, 'wall_s')} | {ratio} |"
                f" {cell(sg, 'actions_per_s')} | {cell(tl, 'actions_per_s')} |"
                f" {cell(sg, 'peak_mib')} | {cell(tl, 'peak_mib')} | {cell(sg, 'sim_time_s')} |"
                f" {cell(tl, 'sim_time_s')} | {rel} | {opt(tl, 'cpu_s')} |"
                f" {pct(sg)} / {pct(tl)} |")
        lines.append("")
    lines += ["## Targets (issue 12)", ""]

    def ratio_at(w, plat, n):
        p = points.get((w, plat, n), {})
        if "simgrid" in p and "timeless" in p:
            return float(p["simgrid"]["wall_s"]) / float(p["timeless"]["wall_s"])
        return None

    def target(label, value, goal, fmt="{:.1f}x"):
        if value is None:
            lines.append(f"- **SKIP** {label}: not measured in this run")
        else:
            verdict = "PASS" if value >= goal else "FAIL"
            lines.append(f"- **{verdict}** {label}: " + fmt.format(value) + f" (target >= "
                         + fmt.format(goal) + ")")

    for _, w, plat, n, rel in checks:
        verdict = "PASS" if rel <= 1e-9 else "FAIL"
        lines.append(f"- **{verdict}** simulated times, {w} on {plat}, {n} ranks: relative "
                     f"difference {rel:.2e} (target <= 1e-9)")
    target("ring, 16 ranks, flat: speed-up over SimGrid", ratio_at("ring", "flat", 16), 20)
    target("stencil, 64 ranks, flat: speed-up over SimGrid", ratio_at("stencil", "flat", 64), 20)
    target("stencil, 1024 ranks, flat: speed-up over SimGrid", ratio_at("stencil", "flat", 1024),
           100)
    # The scaling ratio from scaling.py's alternated pass (scaling_pairs.csv next to the CSV),
    # else from the points' own medians.
    pairs = {}
    pairs_csv = os.path.join(os.path.dirname(os.path.abspath(src)), "scaling_pairs.csv")
    if os.path.exists(pairs_csv):
        for r in csv.DictReader(open(pairs_csv)):
            if r.get("ratio"):
                pairs[(r["workload"], r["platform"])] = r
    for (workload, plat), keys in groups.items():
        tl = {k[2]: points[k].get("timeless") for k in keys}
        if tl.get(64) and tl.get(4096):
            r = float(tl[4096]["actions_per_s"]) / float(tl[64]["actions_per_s"])
            pr = pairs.get((workload, plat))
            if pr:
                target(f"{workload} on {plat}: actions/s at 4096 ranks / at 64 ranks, "
                       f"{pr['runs']} runs of each alternated ({pr['small_wall_s']} / "
                       f"{pr['large_wall_s']} s; {r:.3f} from the points' own medians)",
                       float(pr["ratio"]), 0.5, "{:.3f}")
            else:
                target(f"{workload} on {plat}: actions/s at 4096 ranks / at 64 ranks", r, 0.5,
                       "{:.3f}")
    big = points.get(("stencil", "flat", 65536), {}).get("timeless")
    if big:
        mib = float(big["peak_mib"])
        verdict = "PASS" if mib < 4096 else "FAIL"
        lines.append(f"- **{verdict}** stencil, 65,536 ranks, 10 iterations: {big['wall_s']} s, "
                     f"peak {mib:.0f} MiB (target < 4096 MiB)")
    else:
        lines.append("- **SKIP** stencil, 65,536 ranks: not measured in this run")
    lines.append("")
    with open(os.path.join(out, "SCALING.md"), "w") as f:
        f.write("\n".join(lines))
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        print("NOTICE: matplotlib not installed (pip install matplotlib): no plot")
        return
    plats = sorted({k[1] for k in points})
    fig, axes = plt.subplots(1, len(plats), figsize=(5 * len(plats), 4), squeeze=False)
    workloads = sorted({k[0] for k in points})
    colour = {w: f"C{i}" for i, w in enumerate(workloads)}
    for ax, plat in zip(axes[0], plats):
        for (workload, pl), keys in groups.items():
            if pl != plat:
                continue
            for tool, style in (("timeless", "-o"), ("simgrid", "--s")):
                xs = [k[2] for k in keys if tool in points[k]]
                ys = [float(points[k][tool]["actions_per_s"]) for k in keys if tool in points[k]]
                if xs:
                    ax.plot(xs, ys, style, color=colour[workload], label=f"{workload} ({tool})")
        ax.set_xscale("log", base=2)
        ax.set_yscale("log")
        ax.set_xlabel("ranks")
        ax.set_ylabel("trace actions replayed per second")
        ax.set_title(f"platform: {plat}")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(os.path.join(out, "scaling.svg"))
    fig.savefig(os.path.join(out, "scaling.png"), dpi=80)


if __name__ == "__main__":
    main()
