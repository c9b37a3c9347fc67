#!/usr/bin/env python3
"""Replay at cluster scale (issue 12): timeless vs SimGrid 3.32 from 16 to 65,536 ranks.

    scaling.py [--workloads stencil,ring,alltoall,allreduce] [--platforms flat,fattree,torus]
               [--ranks 16,64,256,1024,4096,16384,65536] [--repeat 3] [--simgrid-cap 600]
               [--no-simgrid] [--timeless PATH] [--work DIR] [--keep] [--out DIR]

For every (workload, platform, ranks) point it generates the traces (one file per rank, SimGrid
3.32's TI format), then times SimGrid (`smpirun -replay`) and timeless (`timeless simulate`)
alternately, SG TL SG TL ..., `--repeat` times each, every run through
validation/calibration/priority.sh's `timed` (own autogroup at nice -19), timed by walltime.py
around the command alone (not the shell and wrappers that start it: about 9 ms a run), with
/usr/bin/time for the peak RSS and CPU time. SimGrid is skipped at a point once a smaller
point of the same workload and platform took longer than `--simgrid-cap` seconds, or after its
first run there exceeds the cap. Results:
OUT/scaling.csv (one row per point and tool: medians; points with more ranks than the
open-file limit allows are replayed by timeless from the compressed trace, `timeless compress
--precision 0`, and not by SimGrid), OUT/SCALING.md (tables, the issue's targets
as PASS/FAIL lines), OUT/scaling.svg (actions/s vs ranks, both tools; needs matplotlib, skipped
with a notice otherwise). OUT defaults to this directory; a run on a subset should use --out.

The scaling target (actions/s at 4096 ranks against 64 ranks) is a speed ratio between two
points, so it is measured as one: once a workload and platform has both points, timeless is
run on them alternately, 64 4096 64 4096 ..., `--pair-repeat` times each (5 by default), and
the ratio of the medians goes to OUT/scaling_pairs.csv. The points' own medians were taken
minutes apart, each right after a SimGrid run (or, where SimGrid is over its cap, after
another timeless run), which on a VM whose speed drifts is not one session.

Workloads (per rank and iteration; the platform has one host per rank, speed 1Gf, bw 125MBps,
lat 50us; `flat` adds a 2.25GBps / 500us backbone, `fattree` and `torus` are SimGrid
`<cluster topology=...>` as in stencil_gen.py):
  stencil   stencil_gen.py's 2D periodic stencil (4 x 40 kB exchanges, waitall, allreduce / 10)
  ring      compute 1e6; send 10000 B to r+1 and receive from r-1 (even ranks send first)
  alltoall  compute 1e6; alltoall of 1000 B per peer
  allreduce compute 1e6; allreduce of 8 doubles with 1e3 flops
Iterations are chosen per workload and rank count (ITERATIONS below) so that a point stays
within minutes; the 65,536-rank stencil runs 10 iterations, as the issue asks.
"""

import argparse
import csv
import json
import math
import os
import shutil
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, HERE)
import stencil_gen  # noqa: E402

PRIORITY = os.path.join(ROOT, "validation", "calibration", "priority.sh")
WALLTIME = os.path.join(HERE, "walltime.py")

# The points of the scaling target: actions/s at the second against the first.
PAIR_RANKS = (64, 4096)

def stencil_iterations(n):
    """Stencil iterations: 65536/n up to 1024 ranks, 100 at 1024, 50 at 4096, 10 above."""
    if n >= 16384:
        return 10
    if n >= 4096:
        return 50
    if n >= 1024:
        return 100
    return max(100, 65536 // n)


# iterations[workload](ranks): about 0.5-2 M actions up to 4096 ranks for the point-to-point
# workloads; collectives expand to O(N log N) (allreduce) or O(N^2) (alltoall) messages.
ITERATIONS = {
    "stencil": stencil_iterations,
    "ring": lambda n: max(10, 1_000_000 // (3 * n)),
    "alltoall": lambda n: max(2, min(200, 4_000_000 // (n * n))),
    "allreduce": lambda n: max(10, 500_000 // (2 * n)),
}


def generate(workload, n, iters, out, topology):
    """Writes the point's traces, list, platform and hostfile; returns the action count."""
    if workload == "stencil":
        return stencil_gen.write_stencil(n, iters, out, topology)
    os.makedirs(out, exist_ok=True)
    total = 0
    paths = []
    for r in range(n):
        if workload == "ring":
            send = f"{r} send {(r + 1) % n} 0 10000\n"
            recv = f"{r} recv {(r - 1) % n} 0 10000\n"
            block = f"{r} compute 1e6\n" + (send + recv if r % 2 == 0 else recv + send)
        elif workload == "alltoall":
            block = f"{r} compute 1e6\n{r} alltoall 1000 1000\n"
        else:
            block = f"{r} compute 1e6\n{r} allreduce 8 1e3\n"
        path = os.path.join(out, f"rank-{r}.txt")
        with open(path, "w") as f:
            f.write(f"{r} init\n" + block * iters + f"{r} finalize\n")
        total += 2 + block.count("\n") * iters
        paths.append(path)
    stencil_gen.write_list(out, paths)
    stencil_gen.write_platform(out, n, topology)
    return total


def cpu_pressure_us():
    """The machine's cumulated CPU pressure, µs: the time during which at least one runnable
    task waited for a CPU (`/proc/pressure/cpu`, line `some`, field `total`; Linux PSI). None
    where the kernel does not provide it."""
    try:
        for line in open("/proc/pressure/cpu"):
            if line.startswith("some"):
                return int(line.split("total=")[1])
    except (OSError, ValueError, IndexError):
        pass
    return None


def timed_run(cmd, cwd, log, timeout):
    """Runs cmd through `timed` under /usr/bin/time; returns (wall s, peak KiB, stdout, stderr,
    ok, usage), usage a dict of the run's CPU time `cpu_s` (user + sys, s, all threads) and
    `cpu_wait` (the share of its wall time during which some runnable task of the machine
    waited for a CPU, from /proc/pressure/cpu; None without PSI). On a 2-core VM shared with
    other work a replay's two threads (decoder and replay) then share one core: the runs whose
    `cpu_wait` is high measured that, not the code."""
    tfile, wfile = log + ".time", log + ".wall"
    for f in (tfile, wfile):
        if os.path.exists(f):
            os.remove(f)
    # The clock is walltime.py's, around the command alone (its doc: the shell, `timed` and
    # the interpreter start before it); it signals the command's whole session at the
    # deadline, so SimGrid's smpimain (a grandchild of smpirun) dies with it; python's own
    # timeout below is a last resort.
    shell = (f'. "{PRIORITY}"; timed "{sys.executable}" "{WALLTIME}" "{wfile}" {int(timeout)} '
             f'/usr/bin/time -o "{tfile}" -f "%M %U %S" ' + " ".join(f"'{c}'" for c in cmd))
    psi0 = cpu_pressure_us()
    t0 = time.perf_counter()
    try:
        p = subprocess.run(["bash", "-c", shell], cwd=cwd, capture_output=True, text=True,
                           timeout=timeout + 60)
        ok = p.returncode == 0
        out, err = p.stdout, p.stderr
    except subprocess.TimeoutExpired as e:
        ok, out, err = False, "", f"timeout after {timeout} s\n{e.stderr or ''}"
    outer = time.perf_counter() - t0
    psi1 = cpu_pressure_us()
    try:
        wall = float(json.load(open(wfile))["wall_s"])
    except (OSError, ValueError, KeyError, TypeError):
        wall = outer  # the timer did not report (a failed start): the outer clock
    usage = {"cpu_s": None, "cpu_wait": None}
    if psi0 is not None and psi1 is not None and outer > 0:
        usage["cpu_wait"] = (psi1 - psi0) / 1e6 / outer
    rss = None
    try:
        fields = open(tfile).read().split()
        rss = int(fields[-3])
        usage["cpu_s"] = float(fields[-2]) + float(fields[-1])
    except (OSError, ValueError, IndexError):
        pass
    with open(log, "w") as f:
        f.write(out + "\n---- stderr ----\n" + (err if isinstance(err, str) else ""))
    return wall, rss, out, err if isinstance(err, str) else "", ok, usage


def median_of(values):
    """The median of the values that are not None, or None."""
    known = [v for v in values if v is not None]
    return statistics.median(known) if known else None


def simgrid_time(err):
    t = None
    for line in err.splitlines():
        if "Simulation time" in line and line.startswith("["):
            t = line[1:line.index("]")]
    return t


def timeless_time(out):
    for line in out.splitlines():
        if line.startswith("Simulated time:"):
            return line.split()[2]
    return None


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--workloads", default="stencil,ring,alltoall,allreduce")
    ap.add_argument("--platforms", default="flat,fattree,torus")
    ap.add_argument("--ranks", default="16,64,256,1024,4096,16384,65536")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--simgrid-cap", type=float, default=600.0)
    ap.add_argument("--timeless-cap", type=float, default=3600.0)
    ap.add_argument("--no-simgrid", action="store_true")
    ap.add_argument("--timeless", default=os.path.join(ROOT, "target", "release", "timeless"))
    ap.add_argument("--work", default=os.path.join(HERE, "work", "scaling"))
    ap.add_argument("--out", default=HERE)
    ap.add_argument("--keep", action="store_true")
    ap.add_argument("--pair-repeat", type=int, default=5,
                    help="alternated timeless runs per point for the 4096/64 ratio (0: none)")
    a = ap.parse_args()
    if not os.access(a.timeless, os.X_OK):
        sys.exit(f"scaling.py: {a.timeless} is not executable: cargo build --release first")
    simgrid = not a.no_simgrid and shutil.which("smpirun") is not None
    if not a.no_simgrid and not simgrid:
        print("NOTICE: smpirun not found: SimGrid columns skipped")
    # 65,536 per-rank files are opened at once by SimGrid and timeless.
    fd_limit = 1024
    try:
        import resource
        soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
        fd_limit = hard if hard != resource.RLIM_INFINITY else 1 << 20
        resource.setrlimit(resource.RLIMIT_NOFILE, (fd_limit, hard))
    except (ValueError, OSError) as e:
        print(f"NOTICE: could not raise the open-file limit ({e}); large points may fail")
    commit = subprocess.run(["git", "-C", ROOT, "rev-parse", "--short", "HEAD"],
                            capture_output=True, text=True).stdout.strip()
    rows = []
    pairs = []
    write_pairs(pairs, a.out)  # no stale ratios from an earlier run in OUT
    for workload in a.workloads.split(","):
        for platform in a.platforms.split(","):
            sg_over_cap = not simgrid
            pair = {}  # ranks -> (dir, timeless command, actions) for PAIR_RANKS
            for n in map(int, a.ranks.split(",")):
                if workload == "stencil" and math.isqrt(n) ** 2 != n:
                    continue
                iters = ITERATIONS[workload](n)
                d = os.path.join(a.work, f"{workload}-{platform}-{n}")
                shutil.rmtree(d, ignore_errors=True)
                actions = generate(workload, n, iters, d, platform)
                print(f"== {workload} {platform} {n} ranks, {iters} iterations, {actions} actions",
                      flush=True)
                trace = "list.txt"
                if n > fd_limit - 256:
                    # Both tools open every rank file at once: beyond the open-file limit,
                    # timeless replays the compressed trace (one file) and SimGrid cannot run.
                    subprocess.run([a.timeless, "compress", "list.txt", "-o", "trace.tlg",
                                    "--precision", "0"], cwd=d, check=True,
                                   capture_output=True)
                    trace = "trace.tlg"
                    print(f"   {n} rank files exceed the open-file limit ({fd_limit}): timeless "
                          "replays trace.tlg (`timeless compress --precision 0`), SimGrid is "
                          "not run", flush=True)
                    sg_over_cap = True
                tl_cmd = [a.timeless, "simulate", trace, "--platform", "platform.xml",
                          "--hostfile", "hostfile", "-n", str(n)]
                sg_cmd = ["smpirun", "-np", str(n), "-platform", "platform.xml", "-hostfile",
                          "hostfile", "-replay", "list.txt", "--log=root.fmt:[%.12r]%e%m%n"]
                runs = {"simgrid": [], "timeless": []}
                sims = {"simgrid": None, "timeless": None}

                def run(tool, cmd, cap, read_time, i):
                    """One timed run; records it and returns whether it succeeded in time."""
                    w, rss, out, err, ok, use = timed_run(
                        cmd, d, os.path.join(d, f"{tool}{i}.log"), cap)
                    t = read_time(out, err) if ok else None
                    if ok and t and w <= cap:
                        runs[tool].append((w, rss, use["cpu_s"], use["cpu_wait"]))
                        sims[tool] = t
                        return True
                    return False

                for i in range(a.repeat):
                    if not sg_over_cap and not run("simgrid", sg_cmd, a.simgrid_cap,
                                                   lambda o, e: simgrid_time(e), i):
                        print(f"   SimGrid over the cap ({a.simgrid_cap:.0f} s) or failed:"
                              " not run at larger points", flush=True)
                        sg_over_cap = True
                    if not run("timeless", tl_cmd, a.timeless_cap,
                               lambda o, e: timeless_time(o), i):
                        print(f"   timeless failed: see {d}/timeless{i}.log", flush=True)
                        break
                for tool in ("simgrid", "timeless"):
                    if not runs[tool]:
                        continue
                    wall = statistics.median(r[0] for r in runs[tool])
                    rss = max((r[1] or 0) for r in runs[tool])
                    cpu = median_of(r[2] for r in runs[tool])
                    wait = median_of(r[3] for r in runs[tool])
                    rows.append({
                        "workload": workload, "platform": platform, "ranks": n,
                        "iterations": iters, "actions": actions, "tool": tool,
                        "runs": len(runs[tool]), "wall_s": f"{wall:.4f}",
                        "actions_per_s": f"{actions / wall:.0f}",
                        "peak_mib": f"{rss / 1024:.1f}", "sim_time_s": sims[tool],
                        "cpu_s": "" if cpu is None else f"{cpu:.4f}",
                        "cpu_wait": "" if wait is None else f"{wait:.3f}",
                    })
                    print(f"   {tool:8s}: median {wall:.3f} s over {len(runs[tool])} runs, "
                          f"{actions / wall:,.0f} actions/s, peak {rss / 1024:.0f} MiB, "
                          f"simulated {sims[tool]} s"
                          + ("" if cpu is None else f", CPU {cpu:.3f} s")
                          + ("" if wait is None else f", CPU wait {100 * wait:.0f} %"),
                          flush=True)
                if n in PAIR_RANKS and runs["timeless"]:
                    pair[n] = (d, tl_cmd, actions)
                elif not a.keep:
                    shutil.rmtree(d, ignore_errors=True)
                write_outputs(rows, a.out, commit)
            if len(pair) == len(PAIR_RANKS) and a.pair_repeat > 0:
                pairs.append(scaling_pair(workload, platform, pair, a))
                write_pairs(pairs, a.out)
            if not a.keep:
                for d, _, _ in pair.values():
                    shutil.rmtree(d, ignore_errors=True)
    write_outputs(rows, a.out, commit, final=True)


def scaling_pair(workload, platform, pair, a):
    """Times timeless on the PAIR_RANKS points alternately (module doc); returns the CSV row."""
    walls = {n: [] for n in PAIR_RANKS}
    waits = {n: [] for n in PAIR_RANKS}
    for i in range(a.pair_repeat):
        for n in PAIR_RANKS:
            d, cmd, _ = pair[n]
            w, _, out, _, ok, use = timed_run(cmd, d, os.path.join(d, f"pair{i}.log"),
                                              a.timeless_cap)
            if ok and timeless_time(out):
                walls[n].append(w)
                waits[n].append(use["cpu_wait"])
    small, large = PAIR_RANKS
    row = {"workload": workload, "platform": platform, "small_ranks": small,
           "large_ranks": large, "runs": min(len(walls[small]), len(walls[large]))}
    if row["runs"]:
        ws, wl = statistics.median(walls[small]), statistics.median(walls[large])
        ratio = (pair[large][2] / wl) / (pair[small][2] / ws)
        row.update({"small_wall_s": f"{ws:.4f}", "large_wall_s": f"{wl:.4f}",
                    "small_actions": pair[small][2], "large_actions": pair[large][2],
                    "ratio": f"{ratio:.3f}",
                    "small_runs_s": " ".join(f"{x:.3f}" for x in walls[small]),
                    "large_runs_s": " ".join(f"{x:.3f}" for x in walls[large]),
                    "small_cpu_wait": " ".join("" if x is None else f"{x:.2f}"
                                               for x in waits[small]),
                    "large_cpu_wait": " ".join("" if x is None else f"{x:.2f}"
                                               for x in waits[large])})
        print(f"== {workload} {platform}: {small} and {large} ranks alternated {row['runs']} "
              f"times: medians {ws:.3f} / {wl:.3f} s, actions/s ratio {ratio:.3f}", flush=True)
    return row


def write_pairs(pairs, out):
    os.makedirs(out, exist_ok=True)
    fields = ["workload", "platform", "small_ranks", "large_ranks", "runs", "small_actions",
              "large_actions", "small_wall_s", "large_wall_s", "ratio", "small_runs_s",
              "large_runs_s", "small_cpu_wait", "large_cpu_wait"]
    with open(os.path.join(out, "scaling_pairs.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(pairs)


def write_outputs(rows, out, commit, final=False):
    os.makedirs(out, exist_ok=True)
    fields = ["workload", "platform", "ranks", "iterations", "actions", "tool", "runs", "wall_s",
              "actions_per_s", "peak_mib", "sim_time_s", "cpu_s", "cpu_wait"]
    with open(os.path.join(out, "scaling.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
    if final:
        subprocess.run([sys.executable, os.path.join(HERE, "scaling_report.py"),
                        os.path.join(out, "scaling.csv"), out, commit], check=False)


if __name__ == "__main__":
    main()
