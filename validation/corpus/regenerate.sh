#!/usr/bin/env bash
# Re-run SimGrid 3.32 (smpirun -replay) on every corpus case and rewrite the goldens in case.toml:
#   simgrid_time   = clock of the LAST "Simulation time" line (the makespan), 12 significant digits
#   simgrid_finish = per-rank finish times (only rewritten in cases whose case.toml already has
#                    that line): the clock of each rank's last timed action, from
#                    --log=smpi_replay.thres:verbose
#
# Usage:  validation/corpus/regenerate.sh [--check] [case-name-or-prefix ...]
#   --check   do not rewrite anything; compare SimGrid with the stored goldens (rel. diff 1e-10)
# Exits non-zero, naming the cases, if SimGrid fails (or, with --check, disagrees) on any case.
set -euo pipefail
CORPUS="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
SMPIRUN="${SMPIRUN:-smpirun}"
if ! command -v "$SMPIRUN" >/dev/null 2>&1; then
  echo "regenerate.sh: '$SMPIRUN' not found (install SimGrid 3.32, e.g. Debian libsimgrid-dev)" >&2
  exit 2
fi
exec python3 - "$CORPUS" "$SMPIRUN" "$@" <<'PYEOF'
import os, re, subprocess, sys, tomllib

corpus, smpirun, args = sys.argv[1], sys.argv[2], sys.argv[3:]
check = "--check" in args
sel = [a.rstrip("/") for a in args if a != "--check"]

LOGFMT = "--log=root.fmt:[%.17r][%P][%c]%e%m%n"
LINE = re.compile(r"^\[([0-9.eE+-]+)\]\[([^\]]*)\]\[([^\]]*)\] (.*)$")

cases = sorted(d for d in os.listdir(corpus)
               if os.path.isfile(os.path.join(corpus, d, "case.toml")))
if sel:
    cases = [d for d in cases if any(d == s or d.startswith(s) for s in sel)]
    if not cases:
        sys.exit("regenerate.sh: no case matches %s" % " ".join(sel))

failed = []
for name in cases:
    cdir = os.path.join(corpus, name)
    tpath = os.path.join(cdir, "case.toml")
    with open(tpath, "rb") as f:
        spec = tomllib.load(f)
    np = int(spec["np"])
    cmd = [smpirun, "-np", str(np), "-platform", spec.get("platform", "platform.xml"),
           "-hostfile", spec.get("hostfile", "hostfile"), "-replay", spec.get("traces", "traces.txt")]
    cmd += ["--cfg=" + c for c in spec.get("cfg", [])]
    cmd += [LOGFMT, "--log=smpi_replay.thres:verbose"]
    try:
        p = subprocess.run(cmd, cwd=cdir, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           text=True, timeout=1800)
        out, rc = p.stdout, p.returncode
    except subprocess.TimeoutExpired:
        out, rc = "", "timeout"
    makespan = None
    finish = [0.0] * np
    for line in out.splitlines():
        m = LINE.match(line)
        if not m:
            continue
        clock, actor, cat, msg = float(m.group(1)), m.group(2), m.group(3), m.group(4)
        if msg.startswith("Simulation time "):
            makespan = clock
        elif cat.startswith("smpi_replay") and actor.isdigit() and int(actor) < np:
            finish[int(actor)] = max(finish[int(actor)], clock)
    if rc != 0 or makespan is None:
        tail = "\n    ".join(out.splitlines()[-8:])
        print("FAIL %s: smpirun exit %s%s\n    %s" % (name, rc, "" if makespan is not None else
                                                    ", no 'Simulation time' line", tail))
        failed.append(name)
        continue
    tstr = "%.12g" % makespan
    fstr = "[" + ", ".join("%.12g" % x for x in finish) + "]"
    text = open(tpath).read()
    has_finish = re.search(r"^simgrid_finish\s*=", text, re.M) is not None
    if check:
        old = spec.get("simgrid_time")
        ok = old is not None and abs(old - makespan) <= 1e-10 * max(abs(makespan), 1e-300)
        if has_finish:
            of = spec.get("simgrid_finish", [])
            ok = ok and len(of) == np and all(abs(a - b) <= 1e-10 * max(abs(b), 1e-9)
                                               for a, b in zip(of, finish))
        print("%s %-45s simgrid_time = %s (stored %s)" % ("ok  " if ok else "DIFF", name, tstr, old))
        if not ok:
            failed.append(name)
        continue
    if re.search(r"^simgrid_time\s*=.*$", text, re.M):
        text = re.sub(r"^simgrid_time\s*=.*$", "simgrid_time = " + tstr, text, count=1, flags=re.M)
    else:
        text = text.rstrip("\n") + "\nsimgrid_time = " + tstr + "\n"
    if has_finish:
        text = re.sub(r"^simgrid_finish\s*=.*$", "simgrid_finish = " + fstr, text, count=1, flags=re.M)
    with open(tpath, "w") as f:
        f.write(text)
    print("ok   %-45s simgrid_time = %s" % (name, tstr))

if failed:
    print("regenerate.sh: SimGrid %s on %d case(s): %s"
          % ("disagrees" if check else "failed", len(failed), " ".join(failed)), file=sys.stderr)
    sys.exit(1)
PYEOF
