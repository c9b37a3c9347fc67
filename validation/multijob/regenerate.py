#!/usr/bin/env python3
"""Golden per-rank times of the multi-job cases from SimGrid 3.32 (issue 16, item 3).

    validation/multijob/regenerate.py [--cases DIR]

Needs libsimgrid-dev 3.32 (g++ -lsimgrid). Builds driver.cpp (our replay_multiple-style driver:
instances registered with SMPI_app_instance_register, one actor per rank running
smpi_replay_init/smpi_replay_main) and, for every case directory holding a `description`,
replays it with smpirun's settings (network/model:SMPI, surf/precision:1e-9) and writes
`golden.txt`: `instance rank start end` per rank (start = after the start delay), then
`makespan`, then `alone <instance> <time>` per job: the job replayed without the others on
the same hosts with the same delay, its time being its last rank's end minus that rank's
start (the baseline of its slowdown). A case places its ranks with a committed `deployment.xml` or, from its
`hostfile`, with a deployment generated here in generate_multiple_deployment.sh's order
(the k-th rank overall on host k % hosts). Trace paths are relative to the case directory.
"""

import argparse
import os
import subprocess
import sys
import tempfile
import xml.etree.ElementTree as ET

HERE = os.path.dirname(os.path.abspath(__file__))
SMPIRUN_CFG = ["--cfg=network/model:SMPI", "--cfg=surf/precision:1e-9", "--log=root.thres:warning"]


def build_driver(tmp):
    exe = os.path.join(tmp, "driver")
    subprocess.run(["g++", "-O1", "-std=c++17", "-o", exe, os.path.join(HERE, "driver.cpp"),
                    "-lsimgrid"], check=True)
    return exe


def list_entries(path):
    with open(path) as f:
        return [l.strip() for l in f if l.strip() and not l.strip().startswith("#")]


def description(case):
    jobs = []
    for line in open(os.path.join(case, "description")):
        f = line.split()
        if f and not f[0].startswith("#"):
            jobs.append((f[0], f[1], int(f[2]), f[3] if len(f) > 3 else "0"))
    return jobs


def deployment_from_hostfile(case, out):
    hosts = [l.strip() for l in open(os.path.join(case, "hostfile")) if l.strip()]
    actors, k = [], 0
    for inst, lst, n, delay in description(case):
        base = os.path.dirname(lst)
        files = list_entries(os.path.join(case, lst))
        for r in range(n):
            trace = os.path.join(base, files[r] if len(files) > 1 else files[0])
            actors.append(f'  <actor host="{hosts[k % len(hosts)]}" function="{inst}">\n'
                          f'    <argument value="{inst}"/>\n    <argument value="{r}"/>\n'
                          f'    <argument value="{trace}"/>\n    <argument value="{delay}"/>\n'
                          '  </actor>')
            k += 1
    with open(out, "w") as f:
        f.write("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                "<platform version=\"4.1\">\n" + "\n".join(actors) + "\n</platform>\n")


def replay(driver, case, description, platform, dep):
    p = subprocess.run([driver, description, platform, dep] + SMPIRUN_CFG, cwd=case,
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if p.returncode != 0:
        sys.exit(f"{case}: SimGrid failed ({p.returncode})\n{p.stderr}")
    return p.stdout


def alone(driver, case, platform, dep, tmp, inst, line):
    """The time of job `inst` replayed alone on its hosts of `dep`."""
    desc = os.path.join(case, f".alone-{inst}")
    with open(desc, "w") as f:
        f.write(line)
    root = ET.parse(dep).getroot()
    for actor in list(root):
        if actor.find("argument").get("value") != inst:
            root.remove(actor)
    mine = os.path.join(tmp, f"alone-{inst}.xml")
    with open(mine, "w") as f:
        f.write("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
                + ET.tostring(root, encoding="unicode") + "\n")
    try:
        out = replay(driver, case, os.path.basename(desc), platform, mine)
    finally:
        os.remove(desc)
    ranks = [l.split() for l in out.splitlines() if not l.startswith("makespan")]
    last = max(ranks, key=lambda f: float(f[3]))
    return float(last[3]) - float(last[2])


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--cases", default=os.path.join(HERE, "cases"))
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        driver = build_driver(tmp)
        platform = os.path.join(args.cases, "platform.xml")
        for name in sorted(os.listdir(args.cases)):
            case = os.path.join(args.cases, name)
            if not os.path.exists(os.path.join(case, "description")):
                continue
            dep = os.path.join(case, "deployment.xml")
            if not os.path.exists(dep):
                dep = os.path.join(tmp, f"{name}.xml")
                deployment_from_hostfile(case, dep)
            out = replay(driver, case, "description", platform, dep)
            lines = [l for l in open(os.path.join(case, "description"))
                     if l.split() and not l.startswith("#")]
            for line in lines:
                inst = line.split()[0]
                out += f"alone {inst} {alone(driver, case, platform, dep, tmp, inst, line):.12f}\n"
            with open(os.path.join(case, "golden.txt"), "w") as f:
                f.write(f"# SimGrid 3.32 (validation/multijob/driver.cpp via regenerate.py)\n{out}")
            print(f"{name}:\n{out}")


if __name__ == "__main__":
    main()
