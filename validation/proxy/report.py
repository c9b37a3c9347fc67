#!/usr/bin/env python3
"""Issue 15's measured report on `timeless proxy`: proxy size, calls and wall time.

    report.py --npb DIR --npb-origin OWNER/REPO@COMMIT [--ranks 2,4] [--reps 3]
              [--work /tmp/proxy-report] [--only NAME,...] [--out validation/proxy]

1. Size: validation/bench/stencil_gen.py's 64-rank periodic stencil at 100 and 1000
   iterations, `timeless proxy` on each, the bytes of proxy.c (< 20 KB, not growing).
2. Calls and time, per case (validation programs and the NAS Parallel Benchmarks built in
   --npb DIR/bin) and rank count: trace the program, generate its proxy (`--compute busy`),
   build it with `CFLAGS=-O2 -Wall -Wextra -Werror`, trace the proxy and compare every rank's
   normalised call sequence with the original's (the normalisation of
   simulator/cli/tests/proxy_mpi.rs's `calls()`), then time the original and the proxy
   untraced with mpirun, alternated A B A B ..., through priority.sh's `timed`, medians.
3. Writes OUT/proxy.csv and OUT/PROXY.md.

Needs target/release/timeless and libtimeless_preload.so (cargo build --release -p timeless
-p timeless-preload), mpicc/mpirun (Open MPI), make. Python standard library only.
"""

import argparse
import csv
import datetime
import os
import re
import shlex
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TIMELESS = ROOT / "target" / "release" / "timeless"
PRIORITY = ROOT / "validation" / "calibration" / "priority.sh"
STENCIL_GEN = ROOT / "validation" / "bench" / "stencil_gen.py"
CFLAGS = "-O2 -Wall -Wextra -Werror"
LIMIT_BYTES = 20 * 1024
CRITERION = 0.10

# Open MPI as root, and more ranks than cores (the traced runs' mpirun too).
MPI_ENV = {
    "OMPI_ALLOW_RUN_AS_ROOT": "1",
    "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1",
    "OMPI_MCA_rmaps_base_oversubscribe": "1",
}
# --pin (the default): rank r on core r mod C in every run, traced or timed (Open MPI's
# `--map-by core --bind-to core:overload-allowed`). Unpinned, a run with more ranks than cores
# lets the kernel's load balancer place the ranks anew each time, and a program that balances
# its work dynamically (pi_mc's master serves whichever worker asks first) adapts to whatever
# placement it meets while its proxy replays the assignment of the traced run: the same
# placement in the traced run and in both timed runs is what makes them comparable.
PIN_ENV = {
    "OMPI_MCA_rmaps_base_mapping_policy": "core",
    "OMPI_MCA_hwloc_base_binding_policy": "core:overload-allowed",
}


# ---------------------------------------------------------------------------------------------
# Cases


# Where the external applications come from (validation/external/README.md: build.sh builds
# them outside this repository from these commits).
EXTERNAL_ORIGIN = {
    "comd": "exmatex/CoMD@3d48396",
    "minife": "Mantevo/miniFE@c79e0f7",
    "hpcg": "hpcg-benchmark/hpcg@114602d",
    "miniamr": "Mantevo/miniAMR@635fef2",
    "cloverleaf": "UK-MAC/CloverLeaf_ref@0fdb917",
    "tealeaf": "UK-MAC/TeaLeaf_ref@019aa2f",
    "snap": "lanl/SNAP@e7ab43d",
}
EXTERNAL_CASES = ROOT / "validation" / "external" / "cases.txt"
# Open MPI 4.1's treematch topology component fails on graph communicators with more ranks
# than cores (the proxy tests and profile tests set the same).
TOPO_BASIC = {"OMPI_MCA_topo": "basic"}


def cases(programs, npb, ranks, external=None):
    """(name, origin, executable, arguments, rank counts, extra environment): every validation
    program that ends normally, with arguments that make it run a few seconds at 2 ranks where
    it takes any; the NPB kernels found in NPB/bin; the external applications of
    validation/external/cases.txt built in EXTERNAL/bin, at their 2- and 4-rank sizes."""
    four = [n for n in ranks if n <= 4]
    only4 = [n for n in ranks if n == 4]
    two = [n for n in ranks if n <= 2]
    v = "validation"
    out = [
        ("ring", v, programs / "ring", ["100", "1000000", "10000000"], four, {}),
        ("stencil2d", v, programs / "stencil2d", ["768", "3000"], four, {}),
        ("stencil3d", v, programs / "stencil3d", ["96", "400"], four, {}),
        ("wavefront", v, programs / "wavefront", ["128", "32", "600"], four, {}),
        ("commsplit", v, programs / "commsplit", ["150000"], four, {}),
        ("pi_mc", v, programs / "pi_mc", ["96", "2000000"], four, {}),
        ("coverage", v, programs / "coverage", [], four, {}),
        ("persistent", v, programs / "persistent", ["20000", "10000"], four, {}),
        ("callsites", v, programs / "callsites", ["300000"], four, {}),
        ("callcost", v, programs / "callcost", ["2000000"], four, {}),
        # Heavy phases 0: two of them run with tracing switched off (the program's purpose), so
        # neither its trace nor its proxy has them; without them the runs compare.
        ("tracing_control", v, programs / "tracing_control", ["0"], four, {}),
        ("commfig1", v, programs / "commfig1", [], only4, TOPO_BASIC),
        ("commkinds", v, programs / "commkinds", [], only4, TOPO_BASIC),
        ("commkinds_f", v, programs / "commkinds_f", [], only4, TOPO_BASIC),
        ("fortran_control", v, programs / "fortran_control", ["0"], four, {}),
        ("fortran_f08", v, programs / "fortran_f08", [], four, {}),
        ("fortran_mix", v, programs / "fortran_mix", ["1500"], four, {}),
        ("callsites_f", v, programs / "callsites_f", [], four, {}),
    ]
    if npb:
        # Class A runs 1.3-3.3 s at 2 ranks here; LU class A 14 s, so LU in class W.
        for kernel, klass, nr in [
            ("cg", "A", ranks),
            ("mg", "A", ranks),
            ("ft", "A", ranks),
            ("is", "A", ranks),
            ("ep", "A", ranks),
            ("lu", "W", two),
        ]:
            exe = npb / "bin" / f"{kernel}.{klass}.x"
            if exe.exists():
                out.append((f"NPB {kernel.upper()}.{klass}", "NPB 3.4.1", exe, [], nr, {}))
            else:
                print(f"note: {exe} not built, skipped", file=sys.stderr)
    if external:
        for line in EXTERNAL_CASES.read_text().splitlines():
            tok = line.split()
            if not tok or tok[0].startswith("#"):
                continue
            label, n, program, args = tok[0], int(tok[1]), tok[2], tok[3:]
            exe = external / "bin" / program
            if n not in four:
                continue
            if not exe.exists():
                print(f"note: {exe} not built, skipped", file=sys.stderr)
                continue
            out.append((label, EXTERNAL_ORIGIN.get(label, "external"), exe, args, [n], {}))
    return out


def env(extra=None):
    e = dict(os.environ)
    e.update(MPI_ENV)
    e.update(extra or {})
    return e


def run(cmd, cwd=None, timeout=900, extra_env=None):
    """Runs cmd (MPI_ENV and extra_env added to the environment); returns (returncode,
    stdout + stderr)."""
    try:
        p = subprocess.run(cmd, cwd=cwd, env=env(extra_env), stdout=subprocess.PIPE,
                           stderr=subprocess.STDOUT, text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        out = e.stdout.decode(errors="replace") if isinstance(e.stdout, bytes) else (e.stdout or "")
        return None, out + f"\n[timed out after {timeout} s]"
    return p.returncode, p.stdout


# ---------------------------------------------------------------------------------------------
# Tracing


def trace(exe, args, n, out, extra_env=None):
    """`timeless trace -n N --ref-speed 1e9 [--pin] -o OUT -- EXE ARGS`; returns (ok, log).
    Pinned (the default), the folded traced run is bound as the timed runs are (`--pin`: the
    tracer's launcher line leaves a folded run unbound otherwise, whatever the environment)."""
    pin = ["--pin"] if "OMPI_MCA_hwloc_base_binding_policy" in MPI_ENV else []
    rc, log = run([str(TIMELESS), "trace", "-n", str(n), "--ref-speed", "1e9", *pin, "-o",
                   str(out), "--", str(exe), *args], extra_env=extra_env)
    return rc == 0, log


# ---------------------------------------------------------------------------------------------
# Proxy generation and build


def generate(trace_list, out, n=None):
    """`timeless proxy TRACE -o OUT --compute busy`; returns (ok, log, bytes of proxy.c)."""
    cmd = [str(TIMELESS), "proxy", str(trace_list), "-o", str(out), "--compute", "busy"]
    if n:
        cmd += ["-n", str(n)]
    rc, log = run(cmd)
    src = Path(out) / "proxy.c"
    return rc == 0, log, (src.stat().st_size if src.exists() else None)


def build(src_dir):
    """make -C SRC with -Werror; returns (ok, compiler output)."""
    rc, log = run(["make", "-C", str(src_dir), "-B", f"CFLAGS={CFLAGS}"])
    return rc == 0, log


# ---------------------------------------------------------------------------------------------
# Call comparison


NOT_CALLS = {"compute", "sleep", "location", "comm_size", "comm_split", "comm_dup", "test"}
TAGGED = {"send": 1, "isend": 1, "recv": 1, "irecv": 1, "wait": 2}


def calls(trace_dir, n):
    """Every rank's calls as normalised text lines, as proxy_mpi.rs's `calls()`: computation,
    SimGrid's no-op records (`comm_size/comm_split/comm_dup`) and `test`s dropped,
    communicators renumbered by the order of their `comm_def`s, negative tags + 32768 (as the
    proxy sends them), call sites dropped. The signature's peers are rank-relative; within one
    rank, absolute peers compare the same."""
    out = []
    for r in range(n):
        ids = {}
        seq = []
        with open(Path(trace_dir) / f"rank-{r}.txt") as f:
            for line in f:
                tok = line.split()
                if not tok or tok[0].startswith("#"):
                    continue
                name, fields = tok[1], tok[2:]
                if name in NOT_CALLS:
                    continue
                fields = [t for t in fields if not t.startswith("@cs=")]
                if name == "comm_def":
                    fields[0] = str(ids.setdefault(fields[0], len(ids) + 1))
                fields = [f"comm={ids[t[5:]]}" if t.startswith("comm=") else t for t in fields]
                i = TAGGED.get(name)
                if i is not None and int(fields[i]) < 0:
                    fields[i] = str(int(fields[i]) + 32768)
                seq.append(" ".join([name, *fields]))
        out.append(seq)
    return out


def compare(want, got):
    """'same', or the first difference: 'rank R call I: original X, proxy Y'."""
    for r, (w, g) in enumerate(zip(want, got)):
        for i in range(max(len(w), len(g))):
            a = w[i] if i < len(w) else "(end)"
            b = g[i] if i < len(g) else "(end)"
            if a != b:
                return f"rank {r} call {i}: original `{a}`, proxy `{b}`"
    if len(want) != len(got):
        return f"{len(want)} ranks in the original, {len(got)} in the proxy"
    return "same"


# ---------------------------------------------------------------------------------------------
# Timing


def timed_run(cmd, extra_env=None):
    """Wall time of one `timed CMD` (priority.sh), or None if it failed."""
    script = f". {shlex.quote(str(PRIORITY))}; timed {' '.join(map(shlex.quote, cmd))}"
    t0 = time.perf_counter()
    rc, log = run(["bash", "-c", script], timeout=600, extra_env=extra_env)
    dt = time.perf_counter() - t0
    if rc != 0:
        print(f"  failed: {' '.join(cmd)}\n{log[-2000:]}", file=sys.stderr)
        return None, log
    return dt, log


def time_pair(a, b, reps, extra_env=None):
    """Runs A B A B ... reps times each; returns (times of A, times of B, last log of B)."""
    ta, tb, log_b = [], [], ""
    for _ in range(reps):
        t, _ = timed_run(a, extra_env)
        ta.append(t)
        t, log_b = timed_run(b, extra_env)
        tb.append(t)
    return ta, tb, log_b


def median(ts):
    ok = [t for t in ts if t is not None]
    return statistics.median(ok) if len(ok) == len(ts) and ok else None


def mpirun(n, exe, args):
    return ["mpirun", "--oversubscribe", "-n", str(n), str(exe), *args]


# ---------------------------------------------------------------------------------------------
# One case


def computation_secs(log):
    """The "X s of computation" `timeless proxy` printed, or None."""
    m = re.search(r"([0-9.]+) s of computation", log)
    return float(m.group(1)) if m else None


def one_case(name, origin, exe, args, n, work, reps, extra_env, traces=1):
    """Trace (`traces` times: the proxy is generated from the traced run whose computation is
    the median, as a time is the median of its runs), proxy, build, trace the proxy, compare,
    time. Returns the CSV row (dict)."""
    base = work / f"{re.sub(r'[^A-Za-z0-9]+', '_', name)}-{n}"
    row = {"case": name, "origin": origin, "ranks": n, "args": " ".join(args), "proxy_c_bytes": "",
           "builds": "", "mismatches": "", "calls": "", "order": "", "original_s": "",
           "proxy_s": "", "rel_diff": "", "within_10pct": "", "proxy_reported_max_s": "",
           "original_runs": "", "proxy_runs": "", "traces": traces, "traced_computation_s": ""}
    print(f"== {name} at {n} ranks", file=sys.stderr)
    candidates = []
    for k in range(traces):
        original = base / ("original" if traces == 1 else f"original-{k + 1}")
        ok, log = trace(exe, args, n, original, extra_env)
        if not ok:
            row["order"] = "original not traced: " + log.strip().splitlines()[-1][:200]
            return row
        src = base / ("src" if traces == 1 else f"src-{k + 1}")
        ok, log, size = generate(original / "trace-list.txt", src)
        candidates.append((computation_secs(log) or 0.0, k, original, src, ok, log, size))
    row["traced_computation_s"] = " ".join(f"{c[0]:.3f}" for c in candidates)
    _, _, original, src, ok, log, size = sorted(candidates)[(len(candidates) - 1) // 2]
    row["proxy_c_bytes"] = size or ""
    if not ok:
        row["order"] = "proxy not generated: " + log.strip().splitlines()[-1][:200]
        return row
    ok, log = build(src)
    warnings = len(re.findall(r"(warning|error):", log))
    row["builds"] = "yes, no warnings" if ok and not warnings else f"no ({warnings} diagnostics)"
    (base / "build.log").write_text(log)
    if not ok:
        row["order"] = "proxy does not build (see build.log)"
        return row
    replayed = base / "proxy-trace"
    ok, log = trace(src / "proxy", [], n, replayed, extra_env)
    (base / "proxy-trace.log").write_text(log)
    m = re.search(r"proxy: (\d+) size mismatches", log)
    row["mismatches"] = m.group(1) if m else "?"
    if not ok:
        row["order"] = "traced proxy failed: " + log.strip().splitlines()[-1][:200]
        return row
    want, got = calls(original, n), calls(replayed, n)
    row["calls"] = sum(len(w) for w in want)
    row["order"] = compare(want, got)
    ta, tb, log_b = time_pair(mpirun(n, exe, args), mpirun(n, src / "proxy", []), reps,
                              extra_env)
    a, b = median(ta), median(tb)
    row["original_runs"] = " ".join(f"{t:.3f}" if t else "fail" for t in ta)
    row["proxy_runs"] = " ".join(f"{t:.3f}" if t else "fail" for t in tb)
    m = re.search(r"time max ([0-9.eE+-]+) s", log_b)
    row["proxy_reported_max_s"] = m.group(1) if m else ""
    if a and b:
        rel = (b - a) / a
        row.update(original_s=f"{a:.3f}", proxy_s=f"{b:.3f}", rel_diff=f"{rel:+.1%}",
                   within_10pct="yes" if abs(rel) <= CRITERION else "no")
    return row


# ---------------------------------------------------------------------------------------------
# Size of a 64-rank stencil's proxy


def sizes(work, iterations=(100, 1000)):
    rows = []
    for it in iterations:
        d = work / f"stencil64-{it}"
        rc, log = run([sys.executable, str(STENCIL_GEN), "64", str(it), str(d / "trace")])
        if rc != 0:
            raise SystemExit(f"stencil_gen.py failed:\n{log}")
        actions = re.search(r"actions (\d+)", log)
        ok, glog, size = generate(d / "trace" / "list.txt", d / "src")
        if not ok:
            raise SystemExit(f"timeless proxy failed on the stencil:\n{glog}")
        bok, blog = build(d / "src")
        rows.append({"iterations": it, "actions": actions.group(1) if actions else "",
                     "bytes": int(size), "builds": "yes" if bok else "no",
                     "summary": next((l for l in glog.splitlines() if "bytes of C" in l),
                                     glog.strip().splitlines()[-1])})
    return rows


# ---------------------------------------------------------------------------------------------
# Rendering


COLUMNS = ["case", "origin", "ranks", "args", "proxy_c_bytes", "builds", "mismatches", "calls", "order",
           "original_s", "proxy_s", "rel_diff", "within_10pct", "proxy_reported_max_s",
           "original_runs", "proxy_runs", "traces", "traced_computation_s"]


def write_csv(path, rows, columns=COLUMNS):
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=columns)
        w.writeheader()
        w.writerows(rows)


def read_csv(path):
    if not Path(path).exists():
        return []
    with open(path, newline="") as f:
        return list(csv.DictReader(f))


def merge(old, new):
    """old rows with those of new's (case, ranks) replaced, new ones appended."""
    key = lambda r: (r["case"], str(r["ranks"]))
    fresh = {key(r): r for r in new}
    out = [fresh.pop(key(r), r) for r in old]
    return out + [r for r in new if key(r) in fresh]


def git_commit():
    rc, out = run(["git", "-C", str(ROOT), "rev-parse", "--short=12", "HEAD"])
    dirty = run(["git", "-C", str(ROOT), "status", "--porcelain", "--untracked-files=no"])[1]
    return out.strip() + (" (with uncommitted changes)" if dirty.strip() else "")


def size_table(rows):
    lines = ["| iterations | actions | proxy.c bytes | < 20 KB | builds -Werror |",
             "|---:|---:|---:|:--:|:--:|"]
    for r in rows:
        lines.append(f"| {r['iterations']} | {r['actions']} | {r['bytes']} | "
                     f"{'yes' if r['bytes'] < LIMIT_BYTES else 'no'} | {r['builds']} |")
    return "\n".join(lines)


def calls_table(rows):
    lines = ["| case | origin | ranks | args | proxy.c B | build (-Werror) | size mismatches | calls "
             "| calls and order | original s | proxy s | proxy − original | within 10 % |",
             "|---|---|---:|---|---:|---|---:|---:|---|---:|---:|---:|:--:|"]
    for r in rows:
        lines.append("| " + " | ".join(str(r[c]) for c in [
            "case", "origin", "ranks", "args", "proxy_c_bytes", "builds", "mismatches", "calls", "order",
            "original_s", "proxy_s", "rel_diff", "within_10pct"]) + " |")
    return "\n".join(lines)


def render(out, size_rows, rows, meta, findings):
    text = f"""# Proxy applications: size, calls and wall time (issue 15)

Generated by `validation/proxy/report.py` (README.md here: how to rerun) on {meta['date']}.

* timeless commit: `{meta['commit']}`
* NAS Parallel Benchmarks: `{meta['npb']}` (fetched and built outside this repository, NPB3.4-MPI,
  `make.def` from the template with `-fallow-argument-mismatch` added to FFLAGS)
* external applications: {meta['external']} (the origin column gives each one's repository and
  commit)
* machine: {meta['machine']}; Open MPI `{meta['mpi']}`; every run `mpirun --oversubscribe`;
  placement: {meta['placement']}
* traces: `timeless trace -n N --ref-speed 1e9`; proxies: `timeless proxy --compute busy`, built
  with `CFLAGS={CFLAGS}`
* timing: original and proxy untraced, alternated A B A B ..., {meta['reps']} runs each, wall time
  of the whole `mpirun` (start-up included) through `validation/calibration/priority.sh`'s
  `timed`; the tables give medians. All runs: `proxy.csv`.

## Size of a 64-rank stencil's proxy

`validation/bench/stencil_gen.py 64 ITER` (periodic 5-point stencil, 8x8 ranks, allreduce every
10th iteration), `timeless proxy` on it:

{size_table(size_rows)}

## Calls and wall time

"calls" counts the original's normalised calls over all ranks (the normalisation of
`simulator/cli/tests/proxy_mpi.rs`: computation, `comm_size/comm_split/comm_dup` and `test`
records dropped, communicators renumbered by their `comm_def`s, negative tags + 32768); "calls
and order" is `same` when every rank's sequence of the proxy's trace equals the original's, else
the first differing call.

{calls_table(rows)}

## Findings

{findings}
"""
    (out / "PROXY.md").write_text(text)


def machine():
    cores = os.cpu_count()
    model = ""
    try:
        for line in open("/proc/cpuinfo"):
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return f"{cores} cores ({model})" if model else f"{cores} cores"


def mpi_version():
    rc, out = run(["mpirun", "--version"])
    return out.strip().splitlines()[0] if out.strip() else "?"


# ---------------------------------------------------------------------------------------------


def main():
    ap = argparse.ArgumentParser(description=__doc__,
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--npb", type=Path, help="NPB3.4-MPI directory with bin/*.x built")
    ap.add_argument("--npb-origin", default="", help="owner/repo@commit, for the report")
    ap.add_argument("--programs", type=Path, default=Path("/tmp/proxy-report/programs"),
                    help="validation programs build directory (built here if missing)")
    ap.add_argument("--work", type=Path, default=Path("/tmp/proxy-report"))
    ap.add_argument("--out", type=Path, default=ROOT / "validation" / "proxy")
    ap.add_argument("--external", type=Path,
                    help="validation/external/build.sh's output directory (bin/ built)")
    ap.add_argument("--no-pin", action="store_true",
                    help="let the kernel place the ranks (default: rank r on core r mod C)")
    ap.add_argument("--ranks", default="2,4")
    ap.add_argument("--reps", type=int, default=3)
    ap.add_argument("--traces", type=int, default=1,
                    help="traced runs per case; the proxy comes from the median one (by its "
                         "total computation)")
    ap.add_argument("--only", default="", help="comma-separated case names (default: all)")
    ap.add_argument("--findings", type=Path, help="Markdown paragraph(s) for PROXY.md")
    ap.add_argument("--no-size", action="store_true",
                    help="skip the stencil size measurement (table from OUT/proxy-size.csv)")
    ap.add_argument("--merge", action="store_true",
                    help="keep OUT/proxy.csv's other rows, replace those of the cases run")
    a = ap.parse_args()
    if not a.no_pin:
        MPI_ENV.update(PIN_ENV)
    if not TIMELESS.exists():
        raise SystemExit(f"{TIMELESS} missing: cargo build --release -p timeless -p timeless-preload")
    a.work.mkdir(parents=True, exist_ok=True)
    a.out.mkdir(parents=True, exist_ok=True)
    # Programs run in the work directory (CoMD writes its YAML reports into the current one).
    for name in ("npb", "programs", "work", "out", "findings", "external"):
        if getattr(a, name) is not None:
            setattr(a, name, getattr(a, name).resolve())
    os.chdir(a.work)
    if not (a.programs / "ring").exists():
        rc, log = run(["make", "-C", str(ROOT / "validation" / "programs"), f"BUILD={a.programs}"])
        if rc != 0:
            raise SystemExit(log)
    ranks = [int(x) for x in a.ranks.split(",")]
    size_csv = a.out / "proxy-size.csv"
    if a.no_size:
        size_rows = [dict(r, bytes=int(r["bytes"])) for r in read_csv(size_csv)]
    else:
        size_rows = sizes(a.work)
        write_csv(size_csv, size_rows, ["iterations", "actions", "bytes", "builds", "summary"])
    old = read_csv(a.out / "proxy.csv") if a.merge else []
    only = set(filter(None, a.only.split(",")))
    rows = []
    # Every case at the smallest rank count first, so that an interrupted run has those.
    for n in ranks:
        for name, origin, exe, args, nr, extra in cases(a.programs, a.npb, ranks, a.external):
            if (only and name not in only) or n not in nr:
                continue
            rows.append(one_case(name, origin, exe, args, n, a.work, a.reps, extra, a.traces))
            write_csv(a.out / "proxy.csv", merge(old, rows))
            print("  " + ", ".join(f"{k}={v}" for k, v in rows[-1].items()), file=sys.stderr)
    meta = {"date": datetime.date.today().isoformat(), "commit": git_commit(),
            "external": (f"`validation/external/build.sh`'s build in `{a.external}`, cases.txt's "
                         "arguments at 2 and 4 ranks") if a.external else "not run",
            "npb": a.npb_origin or (str(a.npb) if a.npb else "not run"), "machine": machine(),
            "mpi": mpi_version(), "reps": a.reps,
            "placement": "unpinned (the kernel places the ranks)" if a.no_pin else
            "pinned, rank r on core r mod C in every traced and timed run (`OMPI_MCA_rmaps_base_mapping_policy=core`, `OMPI_MCA_hwloc_base_binding_policy=core:overload-allowed`)"}
    findings = a.findings.read_text() if a.findings else "(none written)"
    render(a.out, size_rows, merge(old, rows), meta, findings)


if __name__ == "__main__":
    main()
