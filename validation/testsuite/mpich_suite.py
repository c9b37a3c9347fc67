#!/usr/bin/env python3
"""Runs a chosen part of MPICH's MPI test suite (`test/mpi`) untraced and under `timeless trace`.

Usage:
  mpich_suite.py SUITE_DIR --mpi openmpi|mpich [--out DIR] [--build DIR] [--dirs a,b,...]
                 [--timeout SECS] [--max-ranks N] [--limit N]

SUITE_DIR is the suite's source directory (`test/mpi` of a pmodels/mpich checkout). Nothing is
written into it: it is copied into the build directory, where the suite's own
`maint/f77tof90` derives the `use mpi` (f90) tests from the f77 ones, as its autogen.sh does.

The suite is not configured: each test directory's `Makefile.am` gives the programs and their
sources (`noinst_PROGRAMS`, `X_SOURCES`, `X_LDADD`), each is compiled directly with the MPI
library's wrappers (`mpicc`/`mpifort` for Open MPI, `mpicc.mpich`/`mpifort.mpich` for MPICH),
linked with the suite's `util/mtest.c` (C) or `mtest_f77.f`/`mtest_f90.f90` (Fortran), with a
small `mpitestconf.h` written here (strict MPI: no MPIX extensions, so both libraries build the
same tests). `testlist` files give each test's ranks, arguments and environment; a test is run
once untraced (`mpirun -n N`) and once traced (`timeless trace -n N`), each with a timeout.

A run passes, as with the suite's `runtests`, when it exits 0 and prints `No Errors`. For the
traced run `timeless trace` must also exit 0 (every rank's trace complete). Results go to
`<out>/<mpi>.csv`, one row per test instance.
"""

import argparse
import csv
import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# The test directories run by default, with the language each is counted under.
DEFAULT_DIRS = [
    "pt2pt", "coll", "comm", "group", "datatype", "init", "topo",
    "f77/pt2pt", "f77/coll", "f77/comm", "f77/datatype", "f77/topo", "f77/init",
    "f90/pt2pt", "f90/coll", "f90/comm", "f90/datatype", "f90/topo", "f90/init",
]

TOOLS = {
    "openmpi": {"cc": "mpicc.openmpi", "fc": "mpifort.openmpi", "run": "mpirun.openmpi",
                "run_args": ["--oversubscribe", "--bind-to", "none"]},
    "mpich": {"cc": "mpicc.mpich", "fc": "mpifort.mpich", "run": "mpirun.mpich", "run_args": []},
}

CONF_H = """/* Written by timeless's validation/testsuite/mpich_suite.py instead of configure. */
#define HAVE_STDLIB_H 1
#define HAVE_STRING_H 1
#define HAVE_STDARG_H 1
#define HAVE_UNISTD_H 1
#define HAVE_STDINT_H 1
#define HAVE_SYS_TIME_H 1
#define HAVE_SYS_RESOURCE_H 1
#define HAVE_GETRUSAGE 1
#define HAVE_LONG_DOUBLE 1
#define HAVE_LONG_LONG 1
#define HAVE_LONG_LONG_INT 1
#define HAVE__BOOL 1
#define HAVE_FLOAT__COMPLEX 1
#define HAVE_DOUBLE__COMPLEX 1
#define HAVE_LONG_DOUBLE__COMPLEX 1
#define HAVE_MPI_WIN_CREATE 1
#define HAVE_MPI_INIT_THREAD 1
#define HAVE_MPI_TYPE_CREATE_STRUCT 1
#define HAVE_MPI2_COMBINERS 1
#define HAVE_MPI_IO 1
#define USE_STRICT_MPI 1
#define HAVE_MIN_MPI_VERSION 1
#define THREAD_PACKAGE_NAME THREAD_PACKAGE_POSIX
"""

# Substitutions for the Fortran `.h.in` files (what configure writes on x86_64).
FORTRAN_SUBST = {
    "F77_MPI_ADDRESS": "integer*8",
    "F77_MPI_OFFSET": "integer*8",
    "F90_MPI_ADDRESS": "integer*8",
    "F90_MPI_OFFSET": "integer*8",
}


def language(d):
    return "f77" if d.startswith("f77/") else "f90" if d.startswith("f90/") else "c"


def makefile_programs(path):
    """(programs, {program: sources}, {program: extra libs}, {program: preprocessor flags}) from
    a Makefile.am (`X_CPPFLAGS` without `$(AM_CPPFLAGS)`, e.g. `-DMULT_INIT`)."""
    text = path.read_text().replace("\\\n", " ")
    progs, sources, ldadd, cppflags = [], {}, {}, {}
    for line in text.splitlines():
        m = re.match(r"\s*noinst_PROGRAMS\s*\+?=\s*(.*)", line)
        if m:
            progs += m.group(1).split()
        m = re.match(r"\s*(\w+)_SOURCES\s*=\s*(.*)", line)
        if m:
            sources[m.group(1)] = m.group(2).split()
        m = re.match(r"\s*(\w+)_LDADD\s*=\s*(.*)", line)
        if m:
            ldadd[m.group(1)] = m.group(2).split()
        m = re.match(r"\s*(\w+)_CPPFLAGS\s*=\s*(.*)", line)
        if m and m.group(1) != "AM":
            cppflags[m.group(1)] = [f for f in m.group(2).split() if not f.startswith("$")]
    return [p for p in progs if not p.startswith("$")], sources, ldadd, cppflags


def testlist_entries(d):
    """(name, ranks, args, env, time limit) per runnable line of the directory's testlist."""
    f = d / "testlist.in" if (d / "testlist.in").exists() else d / "testlist"
    out = []
    for line in f.read_text().splitlines():
        line = line.strip()
        if not line or line.startswith("#") or "@" in line:
            continue
        words = line.split()
        if len(words) < 2 or not words[1].isdigit():
            continue
        args, env, limit, skip = [], {}, None, False
        for w in words[2:]:
            key, _, val = w.partition("=")
            if key == "arg":
                args.append(val)
            elif key == "env":
                k, _, v = val.partition("=")
                env[k] = v
            elif key == "timeLimit":
                limit = int(val)
            elif key in ("mem", "resultTest", "mpiversion", "requiresMPIX"):
                skip = True
        if not skip:
            out.append((words[0], int(words[1]), args, env, limit))
    return out


def sh(cmd, cwd, log):
    r = subprocess.run(cmd, cwd=cwd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
    if r.returncode != 0:
        log.write(" ".join(map(str, cmd)) + "\n" + r.stdout + "\n")
    return r.returncode == 0


def prepare(suite, build, tools, log):
    """Copies the suite, derives the f90 tests, writes the configure products, builds util."""
    if not build.exists():
        shutil.copytree(suite, build)
        for leaf in ["pt2pt", "coll", "comm", "datatype", "topo", "init"]:
            (build / "f90" / leaf).mkdir(parents=True, exist_ok=True)
            sh(["perl", "maint/f77tof90", f"f77/{leaf}", f"f90/{leaf}", "Makefile.am",
                "Makefile.ap"], build, log)
        for hin in list(build.glob("f77/*/*.h.in")) + list(build.glob("f90/*/*.h.in")):
            text = re.sub(r"@(\w+)@", lambda m: FORTRAN_SUBST.get(m.group(1), ""), hin.read_text())
            hin.with_suffix("").write_text(text)
    (build / "include" / "mpitestconf.h").write_text(CONF_H)
    (build / "include" / "mtest_mpix.h").write_text("")
    objdir = build / "obj" / tools["name"]
    objdir.mkdir(parents=True, exist_ok=True)
    inc = ["-I", str(build / "include")]
    ok = True
    for src, comp in [("mtest.c", "cc"), ("mtest_common.c", "cc"), ("mtest_single.c", "cc"),
                      ("dtypes.c", "cc"),
                      ("mtest_f77.f", "fc"), ("mtest_f90.f90", "fc")]:
        obj = objdir / (src.split(".")[0] + ".o")
        ok &= sh([tools[comp], "-c", "-O1", *inc, "-o", str(obj), str(build / "util" / src)],
                 objdir, log)
    return objdir


def build_dir(build, d, tools, objdir, log):
    """Compiles every program of a test directory; returns {program: executable or None}."""
    src = build / d
    bindir = build / "bin" / tools["name"] / d
    bindir.mkdir(parents=True, exist_ok=True)
    progs, sources, ldadd, cppflags = makefile_programs(src / "Makefile.am")
    lang = language(d)
    ext = {"c": ".c", "f77": ".f", "f90": ".f90"}[lang]
    util = {"c": ["mtest.o", "mtest_common.o", "mtest_single.o"], "f77": ["mtest_f77.o"], "f90": ["mtest_f90.o"]}[lang]
    if lang != "c" and any(s.endswith(".c") for ss in sources.values() for s in ss):
        util += ["mtest.o", "mtest_common.o", "mtest_single.o"]
    built = {}
    for p in progs:
        srcs = [s for s in sources.get(p, [p + ext]) if not s.endswith(".h")]
        extra = [str(objdir / "dtypes.o")] if any("dtypes" in x for x in ldadd.get(p, [])) else []
        compiler = tools["fc"] if lang != "c" or any(s.endswith((".f", ".f90")) for s in srcs) \
            else tools["cc"]
        exe = bindir / p
        if exe.exists():  # built by an earlier run: reuse (another run may be executing it)
            built[p] = exe
            continue
        cmd = [compiler, "-O1", "-w", "-fallow-argument-mismatch", "-I", str(build / "include"),
               "-I", str(src), "-J", str(bindir)] if compiler == tools["fc"] else \
            [compiler, "-O1", "-w", "-I", str(build / "include"), "-I", str(src)]
        cmd += [*cppflags.get(p, []), "-o", str(exe), *[str(src / s) for s in srcs],
                *[str(objdir / u) for u in util], *extra, "-lm", "-lpthread"]
        built[p] = exe if sh(cmd, bindir, log) else None
    return built


def run(cmd, env, timeout, cwd):
    """(exit code or 'timeout', output, seconds)."""
    t0 = time.time()
    try:
        p = subprocess.Popen(cmd, cwd=cwd, env=env, stdout=subprocess.PIPE,
                             stderr=subprocess.STDOUT, text=True, errors="replace",
                             start_new_session=True)
    except OSError as e:
        return f"not started ({e})", "", 0.0
    try:
        out, _ = p.communicate(timeout=timeout)
        code = p.returncode
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        out, _ = p.communicate()
        code = "timeout"
    return code, out, time.time() - t0


def passed(code, out):
    return code == 0 and re.search(r"^\s*No Errors\s*$", out, re.M) is not None


def program_lines(out):
    """The program's own output: what precedes `timeless trace`'s summary, minus blank lines and
    the `timeless: ` notices of `timeless trace` (reference speed), sorted (ranks interleave)."""
    lines = []
    for line in out.splitlines():
        if re.match(r"Traced \d+ ranks? into ", line):
            break
        if line.strip() and not line.startswith("timeless: "):
            lines.append(line.strip())
    return sorted(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("suite", type=Path)
    ap.add_argument("--mpi", choices=TOOLS, required=True)
    ap.add_argument("--out", type=Path, default=Path(__file__).resolve().parent)
    ap.add_argument("--build", type=Path, default=Path("/tmp/suites/build"))
    ap.add_argument("--dirs", default=",".join(DEFAULT_DIRS))
    ap.add_argument("--timeout", type=int, default=45)
    ap.add_argument("--max-ranks", type=int, default=8)
    ap.add_argument("--limit", type=int, default=0, help="at most this many tests per directory")
    ap.add_argument("--timeless", default="timeless")
    ap.add_argument("--preload", help="the tracer library (TIMELESS_PRELOAD)")
    ap.add_argument("--only", help="only these tests, as dir/test,dir/test")
    ap.add_argument("--merge", action="store_true",
                    help="keep the rows of an existing <out>/<mpi>.csv: this run's rows replace "
                         "those of the same instance (dir, language, test, ranks, args) and "
                         "the others are added (with --only or --dirs, to rerun a part)")
    ap.add_argument("--rerun", type=int, default=3,
                    help="a test whose untraced and traced results differ runs this many more "
                         "times each way (flaky or not: counts go to the note)")
    a = ap.parse_args()

    tools = dict(TOOLS[a.mpi], name=a.mpi)
    build = a.build.resolve()
    build.parent.mkdir(parents=True, exist_ok=True)
    log = open(build.parent / f"build-{a.mpi}.log", "a")
    objdir = prepare(a.suite.resolve(), build, tools, log)
    env0 = dict(os.environ)
    if os.geteuid() == 0:
        env0.update(OMPI_ALLOW_RUN_AS_ROOT="1", OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
    if a.preload:
        env0["TIMELESS_PRELOAD"] = str(Path(a.preload).resolve())
    (build / "run").mkdir(parents=True, exist_ok=True)
    work = Path(tempfile.mkdtemp(prefix=f"{a.mpi}-", dir=build / "run"))
    a.out.mkdir(parents=True, exist_ok=True)
    rows = []
    csv_path = a.out / f"{a.mpi}.csv"
    run_path = a.out / f"{a.mpi}.run.csv" if a.merge else csv_path
    with open(run_path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(HEADER)
        for d in a.dirs.split(","):
            if not (build / d / "Makefile.am").exists():
                print(f"{d}: no such test directory", file=sys.stderr)
                continue
            built = build_dir(build, d, tools, objdir, log)
            entries = [e for e in testlist_entries(build / d) if e[1] <= a.max_ranks]
            if a.limit:
                entries = entries[:a.limit]
            if a.only:
                entries = [e for e in entries if f"{d}/{e[0]}" in a.only.split(",")]
            for name, n, args, env, limit in entries:
                exe = built.get(name)
                row = [d, language(d), name, n, " ".join(args)]
                if exe is None:
                    w.writerow(row + ["no", "", "", "", "", "", "not built" if name in built
                                      else "not in Makefile.am"])
                    continue
                e = dict(env0, **env)
                timeout = max(a.timeout, limit or 0)
                u_cmd = [tools["run"], "-n", str(n), *tools["run_args"], str(exe), *args]
                u_code, u_out, u_secs = run(u_cmd, e, timeout, work)
                tdir = work / "trace"
                t_cmd = [a.timeless, "trace", "-n", str(n), "-o", str(tdir), "--ref-speed", "1e9"]
                if a.mpi == "mpich":
                    t_cmd += ["--launcher", tools["run"]]
                t_code, t_out, t_secs = run(t_cmd + ["--", str(exe), *args], e, timeout, work)
                up, tp = passed(u_code, u_out), passed(t_code, t_out)
                same = program_lines(u_out) == program_lines(t_out)
                note = ""
                if up != tp or not same:
                    tail = lambda s: " | ".join(s.strip().splitlines()[-3:])[:300]
                    note = f"untraced exit {u_code}: {tail(u_out)} || traced exit {t_code}: " \
                           f"{tail(t_out)}"
                if up != tp and a.rerun > 0:
                    ur = sum(passed(*run(u_cmd, e, timeout, work)[:2]) for _ in range(a.rerun))
                    tr = sum(passed(*run(t_cmd + ["--", str(exe), *args], e, timeout, work)[:2])
                             for _ in range(a.rerun))
                    note = f"reruns: untraced {ur}/{a.rerun} pass, traced {tr}/{a.rerun} " \
                           f"pass; first run: {note}"
                w.writerow(row + ["yes", "pass" if up else "fail", "pass" if tp else "fail",
                                  f"{u_secs:.2f}", f"{t_secs:.2f}", "yes" if same else "no", note,
                                  u_code, t_code])
                f.flush()
                rows.append((d, name, up, tp))
                print(f"{a.mpi} {d}/{name} -n {n} {' '.join(args)}: untraced "
                      f"{'pass' if up else 'FAIL'}, traced {'pass' if tp else 'FAIL'}", flush=True)
    print(f"{a.mpi}: {sum(r[2] for r in rows)} untraced and {sum(r[3] for r in rows)} traced "
          f"passes of {len(rows)} tests")
    if a.merge:
        merge(csv_path, run_path)


HEADER = ["dir", "language", "test", "ranks", "args", "built", "untraced", "traced",
          "untraced_secs", "traced_secs", "same_output", "note", "untraced_exit", "traced_exit"]


def merge(csv_path, run_path):
    """Rewrites `csv_path` with the rows of `run_path` in place of those of the same instance
    (dir, language, test, ranks, args; the first row of an instance listed twice, as
    `session_mult_init` with and without its argument is not) and new instances appended;
    columns missing from older files are left empty. Removes `run_path`."""
    key = lambda r: (r["dir"], r["language"], r["test"], r["ranks"], r["args"])
    old = list(csv.DictReader(open(csv_path))) if csv_path.exists() else []
    new = list(csv.DictReader(open(run_path)))
    fresh = {}
    for r in new:
        fresh.setdefault(key(r), []).append(r)
    out = []
    for r in old:
        k = key(r)
        if k in fresh:
            if fresh[k]:
                out.append(fresh[k].pop(0))
        else:
            out.append(r)
    out += [r for rs in fresh.values() for r in rs]
    with open(csv_path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=HEADER, restval="")
        w.writeheader()
        w.writerows(out)
    run_path.unlink()


if __name__ == "__main__":
    main()
