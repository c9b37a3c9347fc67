#!/usr/bin/env python3
"""Generator of the timeless differential test corpus (validation/corpus/<NN-name>/).

The case directories are the artefact; this script is how they were written and can re-create
them (platform.xml, hostfile, deployment.xml, rank*.txt / shared trace, traces.txt, case.toml).
It keeps the golden `simgrid_time` / `simgrid_finish` lines of an existing case.toml, so running it
does not lose the goldens; run ./regenerate.sh afterwards to refresh them from SimGrid.

    python3 generate_cases.py            # (re)write every case
    python3 generate_cases.py 07 12      # only the cases whose name starts with these prefixes

The closed-form predictions quoted in the descriptions use reference §6.2:
    T(S) = latf(P)*Lraw + P / (bwf(P) * min(B_i / w_i, B_i, gamma/(2 Lraw))),  P = S + 16
"""
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

# ----------------------------------------------------------------------------------------------
# Closed-form helper (reference §6.1/§6.2) used to write the derivations into the descriptions.
BWF = [(65472, 0.940694), (15424, 0.697866), (9376, 0.58729), (5776, 1.08739), (3484, 0.77493),
       (1426, 0.608902), (732, 0.341987), (257, 0.338112), (0, 0.812084)]
LATF = [(65472, 11.6436), (15424, 3.48845), (9376, 2.59299), (5776, 2.18796), (3484, 1.88101),
        (1426, 1.61075), (732, 1.9503), (257, 1.95341), (0, 2.01467)]


def factor(table, p):
    best = None
    for thr, val in table:
        if thr < p and (best is None or thr > best[0]):
            best = (thr, val)
    return 1.0 if best is None else best[1]


def T(S, links, gamma=4194304.0, bwf=BWF, latf=LATF):
    """links: list of (bandwidth B/s, latency s, summed weight w)."""
    P = S + 16
    lraw = sum(l for _, l, _ in links)
    bound = min(min(b / w for b, _, w in links), min(b for b, _, _ in links))
    if lraw > 0:
        bound = min(bound, gamma / (2 * lraw))
    return factor(latf, P) * lraw + P / (factor(bwf, P) * bound)


def g(x):
    return "%.12g" % x


# ----------------------------------------------------------------------------------------------
# Platform helpers
HDR = ("<?xml version='1.0'?>\n<!DOCTYPE platform SYSTEM \"https://simgrid.org/simgrid.dtd\">\n"
       "<platform version=\"4.1\">\n")


def platform(body):
    return HDR + body.rstrip("\n") + "\n</platform>\n"


def fig5_cluster(n=4):
    """The seed's Figure 5 cluster, DTD 4.1 form."""
    return platform(
        '  <zone id="AS_mysite" routing="Full">\n'
        '    <cluster id="AS_mycluster" prefix="mycluster-" suffix=".mysite.fr" radical="0-%d" '
        'speed="1.17Gf" bw="125MBps" lat="16.67us" bb_bw="1.25GBps" bb_lat="16.67us"/>\n'
        '  </zone>' % (n - 1))


def fig5_hosts(n):
    return ["mycluster-%d.mysite.fr" % i for i in range(n)]


def pair_platform(bw="125MBps", lat="50us", policy="SHARED", speed="1Gf", names=("alpha", "beta"),
                  direction=None):
    """Two hosts, one link, route alpha->beta = [link]."""
    d = ' direction="%s"' % direction if direction else ""
    return platform(
        '  <zone id="duo" routing="Full">\n'
        '    <host id="%s" speed="%s"/>\n'
        '    <host id="%s" speed="%s"/>\n'
        '    <link id="wire" bandwidth="%s" latency="%s" sharing_policy="%s"/>\n'
        '    <route src="%s" dst="%s"><link_ctn id="wire"%s/></route>\n'
        '  </zone>' % (names[0], speed, names[1], speed, bw, lat, policy, names[0], names[1], d))


def star_platform(n, bws, lats, core=None, speeds=None, prefix="s", policy="SHARED", zone="star"):
    """Full zone, host i has a private SHARED link nic<i>; route i->j = [nic_i, (core), nic_j]."""
    speeds = speeds or ["1Gf"] * n
    lines = ['  <zone id="%s" routing="Full">' % zone]
    for i in range(n):
        lines.append('    <host id="%s%d" speed="%s"/>' % (prefix, i, speeds[i]))
    for i in range(n):
        lines.append('    <link id="nic%d" bandwidth="%s" latency="%s" sharing_policy="%s"/>'
                     % (i, bws[i], lats[i], policy))
    if core:
        lines.append('    <link id="core" bandwidth="%s" latency="%s"/>' % core)
    for i in range(n):
        for j in range(i + 1, n):
            mid = '<link_ctn id="core"/>' if core else ""
            lines.append('    <route src="%s%d" dst="%s%d"><link_ctn id="nic%d"/>%s<link_ctn id="nic%d"/></route>'
                         % (prefix, i, prefix, j, i, mid, j))
    lines.append('  </zone>')
    return platform("\n".join(lines))


def cluster_platform(cid, prefix, suffix, n, speed="1Gf", bw="125MBps", lat="20us", extra="",
                     zone="world"):
    return platform(
        '  <zone id="%s" routing="Full">\n'
        '    <cluster id="%s" prefix="%s" suffix="%s" radical="0-%d" speed="%s" bw="%s" lat="%s"%s/>\n'
        '  </zone>' % (zone, cid, prefix, suffix, n - 1, speed, bw, lat, extra))


# ----------------------------------------------------------------------------------------------
CASES = []


def case(name, desc, np, plat, hosts, traces, cfg=(), hostfile=None, shared=False, finish=True):
    """traces: dict rank -> list of action strings (without the rank prefix); `init` and `finalize`
    are NOT added automatically.  hosts: host of each rank (deployment.xml).  hostfile: text of the
    hostfile if it must differ from one line per rank."""
    assert len(hosts) == np, name
    assert sorted(traces) == list(range(np)), name
    CASES.append(dict(name=name, desc=desc, np=np, plat=plat, hosts=hosts, traces=traces,
                      cfg=list(cfg), hostfile=hostfile, shared=shared, finish=finish))


def wrap(lines):
    return ["init"] + lines + ["finalize"]


def toml_str(s):
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"') + '"'


def write_case(c):
    d = os.path.join(HERE, c["name"])
    os.makedirs(d, exist_ok=True)
    old = {}
    tpath = os.path.join(d, "case.toml")
    if os.path.exists(tpath):
        for line in open(tpath):
            m = re.match(r"^(simgrid_time|simgrid_finish)\s*=", line)
            if m:
                old[m.group(1)] = line.rstrip("\n")
    for f in os.listdir(d):
        if re.match(r"^(rank\d+\.txt|shared\.txt)$", f):
            os.remove(os.path.join(d, f))
    with open(os.path.join(d, "platform.xml"), "w") as f:
        f.write(c["plat"])
    with open(os.path.join(d, "hostfile"), "w") as f:
        f.write(c["hostfile"] if c["hostfile"] is not None else "".join(h + "\n" for h in c["hosts"]))
    with open(os.path.join(d, "deployment.xml"), "w") as f:
        f.write(HDR)
        for r, h in enumerate(c["hosts"]):
            f.write('  <actor host="%s" function="%d"/>\n' % (h, r))
        f.write("</platform>\n")
    np = c["np"]
    if c["shared"]:
        # interleave the ranks' lines round-robin, one action at a time, like a merged trace
        out = []
        k = 0
        while any(k < len(c["traces"][r]) for r in range(np)):
            for r in range(np):
                if k < len(c["traces"][r]):
                    out.append("%d %s" % (r, c["traces"][r][k]))
            k += 1
        with open(os.path.join(d, "shared.txt"), "w") as f:
            f.write("\n".join(out) + "\n")
        with open(os.path.join(d, "traces.txt"), "w") as f:
            f.write("shared.txt\n")
    else:
        for r in range(np):
            with open(os.path.join(d, "rank%d.txt" % r), "w") as f:
                f.write("".join("%d %s\n" % (r, a) for a in c["traces"][r]))
        with open(os.path.join(d, "traces.txt"), "w") as f:
            f.write("".join("rank%d.txt\n" % r for r in range(np)))
    lines = [
        "description = " + toml_str(c["desc"]),
        "np = %d" % np,
        'platform = "platform.xml"',
        'hostfile = "hostfile"',
        'deployment = "deployment.xml"',
        'traces = "traces.txt"',
        "cfg = [" + ", ".join(toml_str(x) for x in c["cfg"]) + "]",
        old.get("simgrid_time", "simgrid_time = 0.0"),
    ]
    if c["finish"]:
        lines.append(old.get("simgrid_finish", "simgrid_finish = []"))
    with open(tpath, "w") as f:
        f.write("\n".join(lines) + "\n")


# ==============================================================================================
# Reusable numbers
MB = 1e6
P1 = [(125e6, 50e-6, 1.05)]          # one SHARED 125MBps/50us link crossed both ways (crosstraffic)
FIG5 = [(125e6, 16.67e-6, 1.0), (1.25e9, 16.67e-6, 1.05), (125e6, 16.67e-6, 1.0)]


def ring_traces(n, iters, flops, size):
    tr = {}
    for r in range(n):
        body = []
        for _ in range(iters):
            if r == 0:
                body += ["compute %g" % flops, "send 1 0 %g" % size, "recv %d 0 %g" % (n - 1, size)]
            else:
                body += ["recv %d 0 %g" % (r - 1, size), "compute %g" % flops,
                         "send %d 0 %g" % ((r + 1) % n, size)]
        tr[r] = wrap(body)
    return tr


def pingpong(sizes, dt=None, a=0, b=1, tag=0):
    """lines for rank a and rank b doing a ping-pong for each size."""
    sfx = (" %d" % dt) if dt is not None else ""
    ta, tb = [], []
    for s in sizes:
        ta += ["send %d %d %s%s" % (b, tag, s, sfx), "recv %d %d %s%s" % (b, tag, s, sfx)]
        tb += ["recv %d %d %s%s" % (a, tag, s, sfx), "send %d %d %s%s" % (a, tag, s, sfx)]
    return ta, tb


def build():
    # ------------------------------------------------------------------------------------------
    c = 1e6 / 1.17e9
    t = T(1e6, FIG5)
    case("01-fig1-ring",
         "Seed Figure 1 ring on the Figure 5 cluster (Full zone wrapping a SPLITDUPLEX cluster with "
         "a SHARED backbone): 4 ranks, compute 1e6 then a 1e6-byte rendezvous send to the next rank. "
         "Closed form: c = 1e6/1.17e9 = %s; route link_UP+backbone+link_DOWN, Lraw = 50.01us, "
         "P = 1000016 (latf 11.6436, bwf 0.940694), backbone 1.25e9/1.05 is not the bottleneck, so "
         "T = 11.6436*50.01e-6 + 1000016/(0.940694*125e6) = %s; the ring is fully serialised: "
         "4*(c+T) = %s." % (g(c), g(t), g(4 * (c + t))),
         4, fig5_cluster(4), fig5_hosts(4), ring_traces(4, 1, 1e6, 1e6))

    case("02-ring-100-iterations",
         "Seed-like long trace: the Figure 1 ring repeated 100 times (rank 0: compute, send 1, recv 3; "
         "rank i: recv i-1, compute, send i+1). Every send is rendezvous (1e6 B), the ring is serial: "
         "closed form 400*(c+T) = %s (c and T as in case 01)." % g(400 * (c + t)),
         4, fig5_cluster(4), fig5_hosts(4), ring_traces(4, 100, 1e6, 1e6))

    # ------------------------------------------------------------------------------------------
    sizes = [1, 241, 242, 716, 717, 1410, 1411, 3468, 3469, 5760, 5761, 9360, 9361, 15408, 15409,
             65456, 65457, 100000, 1000000]
    ta, tb = pingpong(sizes)
    tot = 2 * sum(T(s, P1) for s in sizes)
    case("03-p2p-factor-segments",
         "Ping-pong on one SHARED link (125MBps, 50us, w=1.05 from crosstraffic), `init` without "
         "argument (MPI_BYTE), sizes straddling every bw/lat-factor threshold (P = S+16 > thr, "
         "strict) and the 65536 detached threshold. Serial, so the time is 2*sum T(S) = %s "
         "(e.g. T(1000016 B) = 11.6436*50e-6 + 1000016*1.05/(0.940694*125e6))." % g(tot),
         2, pair_platform(), ["alpha", "beta"], {0: wrap(ta), 1: wrap(tb)})

    ta, tb = pingpong([1000000])
    one_sd = T(1000, [(125e6, 50e-6, 1.05)])
    pp = 2 * T(1e6, [(125e6, 50e-6, 1.0)])
    case("04-p2p-splitduplex",
         "SPLITDUPLEX link used with link_ctn direction=UP (reverse route uses DOWN): ping-pong 1e6 "
         "then a simultaneous sendRecv of 250 INT (dt 1, 1000 B) each way. The lone ping-pong flows "
         "have w = 1 (their crosstraffic lands on the other, idle half); during the sendRecv each "
         "half carries one flow (1) plus the other flow's crosstraffic (0.05), so B/1.05 each: "
         "2*T(1e6, w=1) + T(1000, w=1.05) = %s + %s = %s (reference: sendRecv SPLITDUPLEX "
         "0.000122470335)."
         % (g(pp), g(one_sd), g(pp + one_sd)),
         2, pair_platform(policy="SPLITDUPLEX", direction="UP"), ["alpha", "beta"],
         {0: wrap(ta + ["sendRecv 250 1 250 1 1 1"]), 1: wrap(tb + ["sendRecv 250 0 250 0 1 1"])})

    ta, tb = pingpong([1000000])
    fp = T(1000, [(125e6, 50e-6, 1.0)])
    case("05-p2p-fatpipe",
         "FATPIPE link: ping-pong 1e6 then simultaneous sendRecv 1000 B (dt 6 BYTE and 2 CHAR) "
         "each way. FATPIPE combines the crosstraffic weights by max and each flow gets B alone: "
         "2*T(1e6, w=1) + T(1000, w=1) = %s + %s = %s." % (g(pp), g(fp), g(pp + fp)),
         2, pair_platform(policy="FATPIPE"), ["alpha", "beta"],
         {0: wrap(ta + ["sendRecv 1000 1 1000 1 6 2"]), 1: wrap(tb + ["sendRecv 1000 0 1000 0 2 6"])})

    sr = 1.9503 * 50e-6 + 1016 / (0.341987 * 125e6 / 2.1)
    case("06-sendrecv-shared",
         "sendRecv on one SHARED link: first 1000 B both ways at t=0 (each flow has weight 1 on its "
         "route and 0.05 crosstraffic from the other direction: 2.1 per flow => B/2.1 each; closed "
         "form %s), then an asymmetric sendRecv (rank 0 sends 1e5 B, rank 1 sends 1e6 B: the "
         "shares change when the short flow ends) and a sendRecv with different datatypes "
         "(125 DOUBLE = 1000 B vs 500 SHORT = 1000 B)." % g(sr),
         2, pair_platform(bw="125MBps", lat="50us"), ["alpha", "beta"],
         {0: wrap(["sendRecv 1000 1 1000 1 6 6", "sendRecv 100000 1 1000000 1 6 6",
                   "sendRecv 125 1 500 1 0 3"]),
          1: wrap(["sendRecv 1000 0 1000 0 6 6", "sendRecv 1000000 0 100000 0 6 6",
                   "sendRecv 500 0 125 0 3 0"])})

    # datatypes: init with an argument => default DOUBLE
    dts = [(None, 8), (0, 8), (1, 4), (2, 1), (3, 2), (4, 8), (5, 4), (14, 16), (26, 16), (33, 8),
           (36, 16), (50, 32), (57, 1), (45, 4), (10, 2)]
    ta, tb, tot = [], [], 0.0
    link = [(100e6, 30e-6, 1.05)]
    for dt, sz in dts:
        sfx = "" if dt is None else " %d" % dt
        ta += ["send 1 7 1000%s" % sfx, "recv 1 7 1000%s" % sfx]
        tb += ["recv 0 7 1000%s" % sfx, "send 0 7 1000%s" % sfx]
        tot += 2 * T(1000 * sz, link)
    case("07-datatypes-init-arg",
         "`init 0` (any argument => default datatype MPI_DOUBLE, 8 B) on every rank, then ping-pongs "
         "of count 1000 with tag 7 and datatype ids none/0/1/2/3/4/5/14/26/33/36/50/57/45/10 "
         "(8,8,4,1,2,8,4,16,16,8,16,32,1,4,2 bytes) on a SHARED 100MBps/30us link. Closed form "
         "2*sum T(1000*size) = %s." % g(tot),
         2, pair_platform(bw="100MBps", lat="30us", names=("left", "right")), ["left", "right"],
         {0: ["init 0"] + ta + ["finalize"], 1: ["init 0"] + tb + ["finalize"]})

    # thresholds (reference "Thresholds", P1 platform)
    t1 = T(65535, P1)
    case("08-eager-65535-late-receiver",
         "Detached send just under smpi/send-is-detached-thresh: rank 0 `send 1 0 65535` then "
         "compute 1e9; rank 1 computes 1e9 first then receives. The send returns at once; the "
         "transfer starts when the recv is posted (t=1): makespan 1 + T(65535) = %s "
         "(reference: 1.001167522736)." % g(1 + t1),
         2, pair_platform(), ["alpha", "beta"],
         {0: wrap(["send 1 0 65535", "compute 1e9"]), 1: wrap(["compute 1e9", "recv 0 0 65535"])})
    t2 = T(65536, P1)
    case("09-rendezvous-65536-late-receiver",
         "Rendezvous send at the threshold: rank 0 `send 1 0 65536` then compute 1e9; rank 1 "
         "computes 1e9 then receives. The send blocks until the transfer ends at 1+T, then rank 0 "
         "computes: 2 + T(65536) = %s (reference: 2.001167531666)." % g(2 + t2),
         2, pair_platform(), ["alpha", "beta"],
         {0: wrap(["send 1 0 65536", "compute 1e9"]), 1: wrap(["compute 1e9", "recv 0 0 65536"])})

    case("10-isend-irecv-wait-thresholds",
         "isend+wait on both sides of the threshold and irecv+wait: rank 0 isend 65535 (tag 0), wait "
         "(returns at once, detached), compute 1e8, isend 65536 (tag 1), wait (blocks: rendezvous), "
         "compute 1e8. Rank 1 computes 1 s, irecv tag 0 + wait (ends 1+T1), irecv tag 1 (transfer "
         "starts then), compute 5e7, wait. Closed form: rank 0 = 1.1 + T1 + T2 = %s, rank 1 = "
         "1.05 + T1 = %s." % (g(1.1 + t1 + t2), g(1.05 + t1)),
         2, pair_platform(), ["alpha", "beta"],
         {0: wrap(["isend 1 0 65535", "wait 0 1 0", "compute 1e8", "isend 1 1 65536", "wait 0 1 1",
                   "compute 1e8"]),
          1: wrap(["compute 1e9", "irecv 0 0 65535", "wait 0 1 0", "irecv 0 1 65536", "compute 5e7",
                   "wait 0 1 1"])})

    ta_, tb_ = T(150000, P1), T(300000, P1)
    case("11-detached-thresh-cfg",
         "--cfg smpi/send-is-detached-thresh:200000: rank 0 `send 1 0 150000` (now detached: returns "
         "at once), compute 1e9, `send 1 1 300000` (still rendezvous); rank 1 compute 1e9 then both "
         "recvs. Closed form 1 + T(150000) + T(300000) = %s (with the default threshold it would be "
         "2 + T + T)." % g(1 + ta_ + tb_),
         2, pair_platform(), ["alpha", "beta"],
         {0: wrap(["send 1 0 150000", "compute 1e9", "send 1 1 300000"]),
          1: wrap(["compute 1e9", "recv 0 0 150000", "recv 0 1 300000"])},
         cfg=["smpi/send-is-detached-thresh:200000"])

    case("12-async-small-thresh",
         "--cfg smpi/async-small-thresh:10000: rank 0 sends 1000 B (tag 0, below the async "
         "threshold: goes to the receiver's 'small' mailbox and is transferred at once, before the "
         "receiver posts), then 50000 B (tag 1, above it: starts only when the receiver posts), then "
         "computes 1e8 (finishes at 0.1). Rank 1 computes 1e9 then receives both: the first recv "
         "completes at t=1 with no transfer time, the second at 1 + T(50000) = %s." % g(1 + T(50000, P1)),
         2, pair_platform(), ["alpha", "beta"],
         {0: wrap(["send 1 0 1000", "send 1 1 50000", "compute 1e8"]),
          1: wrap(["compute 1e9", "recv 0 0 1000", "recv 0 1 50000"])},
         cfg=["smpi/async-small-thresh:10000"])

    os_ = lambda s: (1e-4 + 1e-8 * s) if s <= 10000 else (2e-4 + 5e-9 * s)
    sizes = [1000, 20000, 100000]
    tot = sum(2 * T(s, P1) for s in sizes) + 2 * (os_(1000) + os_(20000))
    ta, tb = pingpong(sizes)
    case("13-overhead-os",
         "--cfg smpi/os:0:1e-4:1e-8;10000:2e-4:5e-9 (send overhead, a sleep before a blocking "
         "detached send; the segment is the one with the largest threshold strictly below S). "
         "Ping-pong 1000, 20000 and 100000 B (the last is rendezvous: no os). Closed form: "
         "2*sum T + 2*(os(1000)+os(20000)) = 2*sum T + 2*(1.1e-4 + 3e-4) = %s." % g(tot),
         2, pair_platform(), ["alpha", "beta"], {0: wrap(ta), 1: wrap(tb)},
         cfg=["smpi/os:0:1e-4:1e-8;10000:2e-4:5e-9"])

    or_ = lambda s: 5e-5 + 2e-9 * s
    sizes = [1000, 30000, 200000]
    ta, tb = pingpong(sizes)
    tot = sum(2 * T(s, P1) for s in sizes) + 2 * (or_(1000) + or_(30000))
    case("14-overhead-or",
         "--cfg smpi/or:0:5e-5:2e-9 (receive overhead: a sleep when a receive completes whose "
         "sender was detached). Ping-pong 1000, 30000, 200000 B (the last is rendezvous: no or). "
         "Closed form 2*sum T + 2*(or(1000)+or(30000)) = %s." % g(tot),
         2, pair_platform(), ["alpha", "beta"], {0: wrap(ta), 1: wrap(tb)},
         cfg=["smpi/or:0:5e-5:2e-9"])

    case("15-overhead-ois",
         "--cfg smpi/ois:0:1e-5:1e-9 (isend overhead, also paid by sendRecv and by collective "
         "sub-isends): 3 ranks on a star (nic 100MBps/10us each), isend/irecv with tags 3 and 4 and "
         "waitall, a sendRecv, then an allgather (isend-based).",
         3, star_platform(3, ["100MBps"] * 3, ["10us"] * 3), ["s0", "s1", "s2"],
         {0: wrap(["isend 1 3 5000", "isend 2 4 70000", "irecv 1 3 5000", "waitall",
                   "sendRecv 1000 1 1000 2 6 6", "allgather 2000 2000 6 6"]),
          1: wrap(["irecv 0 3 5000", "isend 0 3 5000", "waitall", "sendRecv 1000 2 1000 0 6 6",
                   "allgather 2000 2000 6 6"]),
          2: wrap(["irecv 0 4 70000", "wait 0 2 4", "sendRecv 1000 0 1000 1 6 6",
                   "allgather 2000 2000 6 6"])},
         cfg=["smpi/ois:0:1e-5:1e-9"])

    bwf = [(10000, 0.8), (0, 0.5)]
    latf = [(10000, 4.0), (0, 2.0)]
    sizes = [1000, 9984, 9985, 1000000]
    ta, tb = pingpong(sizes)
    tot = sum(2 * T(s, P1, bwf=bwf, latf=latf) for s in sizes)
    case("16-custom-bw-lat-factors",
         "Custom --cfg smpi/bw-factor:0:0.5;10000:0.8 and smpi/lat-factor:0:2;10000:4. Ping-pong "
         "1000, 9984 (P=10000: not > 10000, so the 0 segment), 9985 (P=10001: the 10000 segment), "
         "1e6 B on a SHARED 125MBps/50us link. Closed form 2*sum T = %s." % g(tot),
         2, pair_platform(), ["alpha", "beta"], {0: wrap(ta), 1: wrap(tb)},
         cfg=["smpi/bw-factor:0:0.5;10000:0.8", "smpi/lat-factor:0:2;10000:4"])

    L = [(200e6, 80e-6, 1.0)]
    pp = 2 * T(1e6, L)
    srv = 11.6436 * 80e-6 + 1000016 / (0.940694 * 100e6)
    case("17-crosstraffic-off",
         "--cfg network/crosstraffic:0 on a SHARED 200MBps/80us link: ping-pong 1e6 (w = 1, no 1.05), "
         "then a 1e6 sendRecv both ways (two flows with weight 1 on the same SHARED link: B/2 each). "
         "Closed form 2*T(1e6) + T_half = %s + %s = %s." % (g(pp), g(srv), g(pp + srv)),
         2, pair_platform(bw="200MBps", lat="80us"), ["alpha", "beta"],
         {0: wrap(["send 1 0 1e6", "recv 1 0 1e6", "sendRecv 1000000 1 1000000 1 6 6"]),
          1: wrap(["recv 0 0 1e6", "send 0 0 1e6", "sendRecv 1000000 0 1000000 0 6 6"])},
         cfg=["network/crosstraffic:0"])

    G = [(125e6, 0.1, 1.05)]
    pp = 2 * T(1e6, G)
    case("18-tcp-gamma-long-latency",
         "TCP-gamma bound: one SHARED 125MBps link with 100ms latency; ping-pong 1e6. The rate bound "
         "is gamma/(2*Lraw) = 4194304/0.2 = 20.97 MB/s < B/1.05. Closed form 2*(11.6436*0.1 + "
         "1000016/(0.940694*20971520)) = %s (reference case G: 2.430101488050)." % g(pp),
         2, pair_platform(lat="100ms"), ["alpha", "beta"],
         {0: wrap(["send 1 0 1e6", "recv 1 0 1e6"]), 1: wrap(["recv 0 0 1e6", "send 0 0 1e6"])})

    G2 = [(1.25e9, 5e-3, 1.0)]
    ta, tb = pingpong([1000, 2000000])
    tot = 2 * T(1000, G2, gamma=65536.0) + 2 * T(2000000, G2, gamma=65536.0)
    case("19-tcp-gamma-cfg",
         "--cfg network/TCP-gamma:65536 with a 10Gbps SPLITDUPLEX link of 5ms (gamma/(2L) = 6.5536 MB/s "
         "is the bound for every size). Ping-pong 1000 and 2e6 B. Closed form %s." % g(tot),
         2, pair_platform(bw="10Gbps", lat="5ms", policy="SPLITDUPLEX", direction="UP"),
         ["alpha", "beta"], {0: wrap(ta), 1: wrap(tb)}, cfg=["network/TCP-gamma:65536"])

    # contention W / Z
    def wz(two_links):
        r0 = '<link_ctn id="a"/><link_ctn id="s"/>' if two_links else '<link_ctn id="s"/>'
        return platform(
            '  <zone id="fan" routing="Full">\n'
            '    <host id="p0" speed="1Gf"/>\n    <host id="p1" speed="1Gf"/>\n'
            '    <host id="sink" speed="1Gf"/>\n'
            '    <link id="a" bandwidth="1GBps" latency="10us"/>\n'
            '    <link id="b" bandwidth="1GBps" latency="1ms"/>\n'
            '    <link id="s" bandwidth="100MBps" latency="0"/>\n'
            '    <route src="p0" dst="sink">%s</route>\n'
            '    <route src="p1" dst="sink"><link_ctn id="b"/><link_ctn id="s"/></route>\n'
            '    <route src="p0" dst="p1"><link_ctn id="a"/><link_ctn id="b"/></route>\n'
            '  </zone>' % r0)
    tr = {0: wrap(["send 2 0 1e7"]), 1: wrap(["send 2 1 1e7"]),
          2: wrap(["irecv 0 0 1e7", "irecv 1 1 1e7", "waitall"])}
    case("20-contention-penalty-weighted",
         "Reference case W: two 1e7 flows into one 100MBps bottleneck 's' with different route "
         "latencies (10us via link a, 1ms via link b): max-min shares are proportional to 1/penalty "
         "(penalty = Lraw + sum weight_S/B_i, weight_S = 8775). Reference finish times: rank 0 "
         "0.121460123306, rank 2 0.223356231300.",
         3, wz(True), ["p0", "p1", "sink"], tr)
    case("21-contention-zero-latency-route",
         "Reference case Z: as case 20 but p0->sink = [s] only (Lraw = 0 => penalty 1.0, no latency "
         "phase), so the zero-latency flow loses the share race. Reference: rank 1 0.123385891658, "
         "makespan 0.223239795300.",
         3, wz(False), ["p0", "p1", "sink"], tr)

    def bottleneck():
        return platform(
            '  <zone id="funnel" routing="Full">\n'
            '    <host id="src0" speed="2Gf"/>\n    <host id="src1" speed="2Gf"/>\n'
            '    <host id="src2" speed="2Gf"/>\n    <host id="dst" speed="2Gf"/>\n'
            '    <link id="in0" bandwidth="1GBps" latency="5us"/>\n'
            '    <link id="in1" bandwidth="1GBps" latency="200us"/>\n'
            '    <link id="in2" bandwidth="500MBps" latency="2ms"/>\n'
            '    <link id="neck" bandwidth="150MBps" latency="20us"/>\n'
            '    <route src="src0" dst="dst"><link_ctn id="in0"/><link_ctn id="neck"/></route>\n'
            '    <route src="src1" dst="dst"><link_ctn id="in1"/><link_ctn id="neck"/></route>\n'
            '    <route src="src2" dst="dst"><link_ctn id="in2"/><link_ctn id="neck"/></route>\n'
            '    <route src="src0" dst="src1"><link_ctn id="in0"/><link_ctn id="in1"/></route>\n'
            '    <route src="src0" dst="src2"><link_ctn id="in0"/><link_ctn id="in2"/></route>\n'
            '    <route src="src1" dst="src2"><link_ctn id="in1"/><link_ctn id="in2"/></route>\n'
            '  </zone>')
    tr = {0: wrap(["isend 3 0 5e6", "compute 1e6", "isend 3 1 3e6", "irecv 3 9 2e6", "waitall"]),
          1: wrap(["compute 2e6", "send 3 0 8e6"]),
          2: wrap(["compute 5e5", "send 3 0 4e6"]),
          3: wrap(["irecv 0 0 5e6", "irecv 1 0 8e6", "irecv 2 0 4e6", "irecv 0 1 3e6",
                   "compute 1e7", "isend 0 9 2e6", "waitall"])}
    case("22-bottleneck-4flows-crosstraffic",
         "Four flows (5e6, 8e6, 4e6, 3e6 B) from three sources with route latencies 25us, 220us, "
         "2.02ms into a SHARED 150MBps 'neck', started at different times (computes on 2Gf hosts), "
         "plus a 2e6 reverse flow dst->src0 that crosses 'neck' the other way (crosstraffic weight "
         "0.05 on the forward flows and vice versa). Default crosstraffic on.",
         4, bottleneck(), ["src0", "src1", "src2", "dst"], tr)
    case("23-bottleneck-4flows-no-crosstraffic",
         "Same traces and platform as case 22 with --cfg network/crosstraffic:0: the reverse flow no "
         "longer weighs on the forward flows and lone flows get the full bandwidth.",
         4, bottleneck(), ["src0", "src1", "src2", "dst"], tr, cfg=["network/crosstraffic:0"])

    # ------------------------------------------------------------------------------------------
    # routing
    full_multi = platform(
        '  <zone id="multi" routing="Full">\n'
        '    <host id="m0" speed="1.5Gf"/>\n    <host id="m1" speed="1.5Gf"/>\n'
        '    <host id="m2" speed="1.5Gf"/>\n'
        '    <link id="nic0" bandwidth="1Gbps" latency="12us" sharing_policy="SPLITDUPLEX"/>\n'
        '    <link id="nic1" bandwidth="1Gbps" latency="12us" sharing_policy="SPLITDUPLEX"/>\n'
        '    <link id="nic2" bandwidth="2Gbps" latency="8us" sharing_policy="SPLITDUPLEX"/>\n'
        '    <link id="trunk" bandwidth="100MBps" latency="100us" sharing_policy="SHARED"/>\n'
        '    <link id="fabric" bandwidth="1GBps" latency="30us" sharing_policy="FATPIPE"/>\n'
        '    <route src="m0" dst="m1"><link_ctn id="nic0" direction="UP"/><link_ctn id="trunk"/>'
        '<link_ctn id="nic1" direction="DOWN"/></route>\n'
        '    <route src="m0" dst="m2"><link_ctn id="nic0" direction="UP"/><link_ctn id="fabric"/>'
        '<link_ctn id="trunk"/><link_ctn id="nic2" direction="DOWN"/></route>\n'
        '    <route src="m1" dst="m2"><link_ctn id="nic1" direction="UP"/><link_ctn id="fabric"/>'
        '<link_ctn id="nic2" direction="DOWN"/></route>\n'
        '  </zone>')
    r01 = [(125e6, 12e-6, 1.0), (100e6, 100e-6, 1.05), (125e6, 12e-6, 1.0)]
    t01 = T(500000, r01)
    case("24-full-multilink-routes",
         "Full zone with 3- and 4-link routes mixing SPLITDUPLEX nics (direction UP/DOWN), a SHARED "
         "trunk and a FATPIPE fabric. Phase 1: a lone 5e5 ping-pong 0<->1 over nic0_UP, trunk, "
         "nic1_DOWN (Lraw 124us, trunk w=1.05 => bound 100e6/1.05): 2*T = %s. Phase 2: concurrent "
         "flows 0->2 and 1->2 sharing the FATPIPE fabric and nic2_DOWN, 0->2 also crossing the trunk "
         "that is crossed backwards by a 2->0 flow." % g(2 * t01),
         3, full_multi, ["m0", "m1", "m2"],
         {0: wrap(["send 1 0 500000", "recv 1 0 500000", "isend 2 1 2e6", "irecv 2 2 1e6", "waitall"]),
          1: wrap(["recv 0 0 500000", "send 0 0 500000", "send 2 1 3e6"]),
          2: wrap(["irecv 0 1 2e6", "irecv 1 1 3e6", "isend 0 2 1e6", "waitall"])})

    floyd = platform(
        '  <zone id="chain" routing="Floyd">\n'
        '    <host id="f0" speed="1Gf"/>\n    <host id="f1" speed="1Gf"/>\n'
        '    <host id="f2" speed="1Gf"/>\n    <host id="f3" speed="1Gf"/>\n'
        '    <router id="ra"/>\n    <router id="rb"/>\n    <router id="rc"/>\n'
        '    <link id="e0" bandwidth="100MBps" latency="10us"/>\n'
        '    <link id="e1" bandwidth="100MBps" latency="10us"/>\n'
        '    <link id="e2" bandwidth="100MBps" latency="10us"/>\n'
        '    <link id="e3" bandwidth="100MBps" latency="10us"/>\n'
        '    <link id="ab" bandwidth="50MBps" latency="150us"/>\n'
        '    <link id="bc" bandwidth="80MBps" latency="50us"/>\n'
        '    <route src="f0" dst="ra"><link_ctn id="e0"/></route>\n'
        '    <route src="f1" dst="ra"><link_ctn id="e1"/></route>\n'
        '    <route src="f2" dst="rb"><link_ctn id="e2"/></route>\n'
        '    <route src="f3" dst="rc"><link_ctn id="e3"/></route>\n'
        '    <route src="ra" dst="rb"><link_ctn id="ab"/></route>\n'
        '    <route src="rb" dst="rc"><link_ctn id="bc"/></route>\n'
        '  </zone>')
    r03 = [(100e6, 10e-6, 1.05), (50e6, 150e-6, 1.05), (80e6, 50e-6, 1.05), (100e6, 10e-6, 1.05)]
    t03 = T(200000, r03)
    case("25-floyd-routing",
         "Floyd zone: 4 hosts hung on a chain of 3 routers (ra-rb-rc); host-to-host routes are "
         "composed by Floyd over the declared router links (up to 4 links). Phase 1: lone ping-pong "
         "f0<->f3 of 2e5 over e0,ab,bc,e3 (Lraw 220us, bottleneck ab 50MBps/1.05): rank 0's recv "
         "ends at 2*T = %s. Then a barrier and phase 2: all four ranks exchange 1e6 with other ranks "
         "through the shared ab/bc links." % g(2 * t03),
         4, floyd, ["f0", "f1", "f2", "f3"],
         {0: wrap(["send 3 0 200000", "recv 3 0 200000", "barrier", "isend 2 5 1e6", "irecv 1 5 1e6", "waitall"]),
          1: wrap(["barrier", "isend 3 5 1e6", "isend 0 5 1e6", "irecv 2 5 1e6", "waitall"]),
          2: wrap(["barrier", "isend 1 5 1e6", "irecv 0 5 1e6", "irecv 3 5 1e6", "waitall"]),
          3: wrap(["recv 0 0 200000", "send 0 0 200000", "barrier", "isend 2 5 1e6", "irecv 1 5 1e6", "waitall"])})

    dij = platform(
        '  <zone id="ring" routing="Dijkstra">\n'
        '    <host id="d0" speed="1Gf"/>\n    <host id="d1" speed="1Gf"/>\n'
        '    <host id="d2" speed="1Gf"/>\n    <host id="d3" speed="1Gf"/>\n'
        '    <host id="d4" speed="1Gf"/>\n'
        '    <link id="r01" bandwidth="100MBps" latency="20us"/>\n'
        '    <link id="r12" bandwidth="100MBps" latency="20us"/>\n'
        '    <link id="r23" bandwidth="100MBps" latency="20us"/>\n'
        '    <link id="r34" bandwidth="100MBps" latency="20us"/>\n'
        '    <link id="r40" bandwidth="100MBps" latency="20us"/>\n'
        '    <link id="chord" bandwidth="20MBps" latency="1ms"/>\n'
        '    <route src="d0" dst="d1"><link_ctn id="r01"/></route>\n'
        '    <route src="d1" dst="d2"><link_ctn id="r12"/></route>\n'
        '    <route src="d2" dst="d3"><link_ctn id="r23"/></route>\n'
        '    <route src="d3" dst="d4"><link_ctn id="r34"/></route>\n'
        '    <route src="d4" dst="d0"><link_ctn id="r40"/></route>\n'
        '    <route src="d0" dst="d2"><link_ctn id="chord"/></route>\n'
        '  </zone>')
    t02 = T(100000, [(20e6, 1e-3, 1.05)])
    case("26-dijkstra-routing",
         "Dijkstra zone: a 5-host ring (100MBps/20us links) plus a slow chord d0-d2 (20MBps/1ms). "
         "Shortest paths count links, so d0->d2 takes the 1-link chord although it is slower "
         "(lone 1e5 ping-pong: 2*T = %s); d1->d3 goes d1-d2-d3 and d4->d1 goes d4-d0-d1 "
         "(unique 2-link paths; the traces avoid the tied pairs d0-d3 and d2-d4). Then a ring exchange of 5e5 to the right neighbour." % g(2 * t02),
         5, dij, ["d0", "d1", "d2", "d3", "d4"],
         {0: wrap(["send 2 0 100000", "recv 2 0 100000", "isend 1 2 5e5", "irecv 4 2 5e5",
                   "waitall"]),
          1: wrap(["compute 1e6", "send 3 1 40000", "recv 4 1 40000", "isend 2 2 5e5",
                   "irecv 0 2 5e5", "waitall"]),
          2: wrap(["recv 0 0 100000", "send 0 0 100000", "isend 3 2 5e5", "irecv 1 2 5e5", "waitall"]),
          3: wrap(["recv 1 1 40000", "isend 4 2 5e5", "irecv 2 2 5e5", "waitall"]),
          4: wrap(["send 1 1 40000", "isend 0 2 5e5", "irecv 3 2 5e5", "waitall"])})

    nobb = cluster_platform("flat", "flat-", ".lan", 4, speed="2Gf", bw="1Gbps", lat="25us")
    tnb = T(300000, [(125e6, 25e-6, 1.0), (125e6, 25e-6, 1.0)])
    case("27-cluster-no-backbone",
         "Cluster without bb_bw/bb_lat (no backbone link): route a->b = link_a_UP + link_b_DOWN "
         "(SPLITDUPLEX, 1Gbps, 25us each). Lone ping-pong 0<->1 of 3e5: 2*(11.6436*50e-6 + "
         "300016/(0.940694*125e6)) = %s; then a ring of concurrent 1e6 isends (each UP/DOWN half "
         "carries one flow) and an allgather of 50000." % g(2 * tnb),
         4, nobb, ["flat-%d.lan" % i for i in range(4)],
         {r: wrap((["send 1 0 300000", "recv 1 0 300000"] if r == 0 else
                   ["recv 0 0 300000", "send 0 0 300000"] if r == 1 else []) +
                  ["isend %d 1 1e6" % ((r + 1) % 4), "irecv %d 1 1e6" % ((r + 3) % 4), "waitall",
                   "allgather 50000 50000"]) for r in range(4)})

    lb = cluster_platform("lb", "lb-", ".site", 3, speed="1Gf", bw="1GBps", lat="10us",
                          extra=' bb_bw="10GBps" bb_lat="5us" loopback_bw="5GBps" loopback_lat="1us"'
                                ' limiter_link="200MBps"')
    hosts = ["lb-0.site", "lb-0.site", "lb-1.site", "lb-1.site", "lb-2.site"]
    tloop = T(1e6, [(5e9, 1e-6, 1.0)])
    case("28-cluster-loopback-limiter",
         "Cluster with loopback_bw/loopback_lat (FATPIPE private loopback link per node), "
         "limiter_link (SHARED per-node limiter, on both a route and its reverse => w = 1.05) and a "
         "backbone; 5 ranks, two per node on lb-0 and lb-1 (hostfile repeats the names). Same-host "
         "ping-pong 1e6 uses only the loopback (5GBps, 1us): 2*T = %s; cross-node messages go "
         "limiter+link_UP+backbone+link_DOWN+limiter; then the two co-located pairs send to lb-2 "
         "concurrently, then a bcast of 2e5 from rank 4." % g(2 * tloop),
         5, lb, hosts,
         {0: wrap(["send 1 0 1e6", "recv 1 0 1e6", "send 4 1 3e5", "bcast 200000 4"]),
          1: wrap(["recv 0 0 1e6", "send 0 0 1e6", "send 4 1 3e5", "bcast 200000 4"]),
          2: wrap(["send 4 1 3e5", "bcast 200000 4"]),
          3: wrap(["send 4 1 3e5", "bcast 200000 4"]),
          4: wrap(["irecv 0 1 3e5", "irecv 1 1 3e5", "irecv 2 1 3e5", "irecv 3 1 3e5", "waitall",
                   "bcast 200000 4"])})

    zr = platform(
        '  <zone id="campus" routing="Full">\n'
        '    <zone id="east" routing="Full">\n'
        '      <host id="e0" speed="1Gf"/>\n      <host id="e1" speed="1Gf"/>\n'
        '      <router id="east-gw"/>\n'
        '      <link id="e0-l" bandwidth="125MBps" latency="10us" sharing_policy="SPLITDUPLEX"/>\n'
        '      <link id="e1-l" bandwidth="125MBps" latency="10us" sharing_policy="SPLITDUPLEX"/>\n'
        '      <route src="e0" dst="e1"><link_ctn id="e0-l" direction="UP"/><link_ctn id="e1-l" direction="DOWN"/></route>\n'
        '      <route src="e0" dst="east-gw"><link_ctn id="e0-l" direction="UP"/></route>\n'
        '      <route src="e1" dst="east-gw"><link_ctn id="e1-l" direction="UP"/></route>\n'
        '    </zone>\n'
        '    <zone id="west" routing="Floyd">\n'
        '      <host id="w0" speed="2Gf"/>\n      <host id="w1" speed="2Gf"/>\n'
        '      <router id="west-gw"/>\n'
        '      <link id="w0-l" bandwidth="250MBps" latency="5us"/>\n'
        '      <link id="w1-l" bandwidth="250MBps" latency="5us"/>\n'
        '      <route src="w0" dst="west-gw"><link_ctn id="w0-l"/></route>\n'
        '      <route src="w1" dst="west-gw"><link_ctn id="w1-l"/></route>\n'
        '    </zone>\n'
        '    <link id="wan" bandwidth="50MBps" latency="2ms"/>\n'
        '    <zoneRoute src="east" dst="west" gw_src="east-gw" gw_dst="west-gw"><link_ctn id="wan"/></zoneRoute>\n'
        '  </zone>')
    rw = [(125e6, 10e-6, 1.0), (50e6, 2e-3, 1.05), (250e6, 5e-6, 1.05)]
    tw = T(1e6, rw)
    case("29-two-zones-zoneroute",
         "Two sub-zones (east: Full with SPLITDUPLEX nics; west: Floyd) under a Full campus zone, "
         "joined by a zoneRoute east->west through gateways east-gw/west-gw over a SHARED 'wan' "
         "(50MBps, 2ms). Lone 1e6 ping-pong e0<->w0 over e0-l_UP, wan, w0-l (Lraw 2.015ms; wan w=1.05): "
         "2*T = %s (if the reverse route is the mirror); then an allreduce of 1e5 and an alltoall "
         "of 2000 on the 4 ranks." % g(2 * tw),
         4, zr, ["e0", "e1", "w0", "w1"],
         {0: wrap(["send 2 0 1e6", "recv 2 0 1e6", "allreduce 100000 1e6", "alltoall 2000 2000"]),
          1: wrap(["allreduce 100000 1e6", "alltoall 2000 2000"]),
          2: wrap(["recv 0 0 1e6", "send 0 0 1e6", "allreduce 100000 1e6", "alltoall 2000 2000"]),
          3: wrap(["allreduce 100000 1e6", "alltoall 2000 2000"])})

    byp = platform(
        '  <zone id="detour" routing="Floyd">\n'
        '    <host id="b0" speed="1Gf"/>\n    <host id="b1" speed="1Gf"/>\n    <host id="b2" speed="1Gf"/>\n'
        '    <link id="x01" bandwidth="100MBps" latency="100us"/>\n'
        '    <link id="x12" bandwidth="100MBps" latency="100us"/>\n'
        '    <link id="express" bandwidth="400MBps" latency="10us"/>\n'
        '    <route src="b0" dst="b1"><link_ctn id="x01"/></route>\n'
        '    <route src="b1" dst="b2"><link_ctn id="x12"/></route>\n'
        '    <bypassRoute src="b0" dst="b2"><link_ctn id="express"/></bypassRoute>\n'
        '    <bypassRoute src="b2" dst="b0"><link_ctn id="express"/></bypassRoute>\n'
        '  </zone>')
    tb_ = T(1e6, [(400e6, 10e-6, 1.05)])
    case("30-bypass-route",
         "Floyd zone b0-b1-b2 (chain of 100MBps/100us links) with bypassRoutes b0->b2 and b2->b0 over "
         "an 'express' 400MBps/10us link that overrides the computed 2-link path. Lone 1e6 ping-pong "
         "b0<->b2 over express (w=1.05): 2*T = %s; then b1 sends to both ends." % g(2 * tb_),
         3, byp, ["b0", "b1", "b2"],
         {0: wrap(["send 2 0 1e6", "recv 2 0 1e6", "recv 1 0 5e5"]),
          1: wrap(["send 0 0 5e5", "send 2 0 5e5"]),
          2: wrap(["recv 0 0 1e6", "send 0 0 1e6", "recv 1 0 5e5"])})

    mc = platform(
        '  <zone id="box" routing="Full">\n'
        '    <host id="quad" speed="1Gf" core="4"/>\n'
        '    <host id="single" speed="1Gf"/>\n'
        '    <link id="cable" bandwidth="1GBps" latency="5us" sharing_policy="SPLITDUPLEX"/>\n'
        '    <route src="quad" dst="single"><link_ctn id="cable" direction="UP"/></route>\n'
        '  </zone>')
    case("31-multicore-and-shared-core",
         "CPU sharing: host 'quad' has core=4 and runs ranks 0-3 (hostfile line `quad:4`), host "
         "'single' has 1 core and runs ranks 4-5 (`single:2`). Phase 1: ranks 0-3 each compute 1e9 "
         "(4 concurrent execs on 4 cores: 1 s each) while ranks 4 and 5 each compute 1e9 on one core "
         "(shared: 2 s each). Phase 2: ranks 0-4 compute different amounts (5 execs on 4 cores "
         "then fewer) and exchange messages quad<->single and same-host (loopback 10GBps, no "
         "latency) messages.",
         6, mc, ["quad"] * 4 + ["single"] * 2,
         {0: wrap(["compute 1e9", "compute 5e8", "send 4 0 1e6", "recv 1 0 1e6"]),
          1: wrap(["compute 1e9", "compute 1e9", "send 0 0 1e6"]),
          2: wrap(["compute 1e9", "compute 2e9", "recv 5 0 2e6"]),
          3: wrap(["compute 1e9", "compute 1.5e9", "sleep 0.25", "compute 1e8"]),
          4: wrap(["compute 1e9", "recv 0 0 1e6", "compute 3e8"]),
          5: wrap(["compute 1e9", "send 2 0 2e6", "compute 1e8"])},
         hostfile="quad:4\nsingle:2\n")

    sh = platform(
        '  <zone id="pair-of-nodes" routing="Full">\n'
        '    <host id="node-a" speed="1Gf"/>\n    <host id="node-b" speed="1Gf"/>\n'
        '    <link id="lan" bandwidth="125MBps" latency="50us"/>\n'
        '    <route src="node-a" dst="node-b"><link_ctn id="lan"/></route>\n'
        '  </zone>')
    tlb = 2 * (1e7 + 16) / (0.940694 * 10e9)
    case("32-same-host-loopback-roundrobin",
         "Hostfile shorter than np: two lines (node-a, node-b) and np=4, so ranks wrap round-robin "
         "(0,2 on node-a; 1,3 on node-b). Same-host messages use the zone's implicit __loopback__ "
         "(FATPIPE 10GBps, latency 0 => penalty 1, no latency phase): lone ping-pong 0<->2 of 1e7: "
         "2*(1e7+16)/(0.940694*1e10) = %s (reference: 0.002126093289); then 1<->3 same-host and "
         "0->1 cross-host flows concurrently." % g(tlb),
         4, sh, ["node-a", "node-b", "node-a", "node-b"],
         {0: wrap(["send 2 0 1e7", "recv 2 0 1e7", "send 1 1 2e6"]),
          1: wrap(["isend 3 2 5e6", "irecv 0 1 2e6", "waitall"]),
          2: wrap(["recv 0 0 1e7", "send 0 0 1e7"]),
          3: wrap(["recv 1 2 5e6"])},
         hostfile="node-a\nnode-b\n")

    case("33-probe-negative-count",
         "recv with a negative count (probe first; the probed size becomes the count). Only rank 1 "
         "probes (the iprobe back-off counter is global in SimGrid, per rank in timeless). First "
         "message: rank 0 sends 5000 B at t=0, rank 1 `recv 0 0 -1` (message already posted). "
         "Second: rank 0 computes 3e6 (3 ms) before sending 20000 B with tag 1 while rank 1 probes "
         "with `recv 0 1 -1 1` (INT datatype: the probed byte size 20000 is used as the count, i.e. a "
         "larger-than-needed 20000-INT buffer, which is allowed), looping on iprobe with "
         "growing sleeps.",
         2, pair_platform(), ["alpha", "beta"],
         {0: wrap(["send 1 0 5000", "compute 3e6", "send 1 1 20000"]),
          1: wrap(["recv 0 0 -1", "recv 0 1 -1 1"])})

    case("34-test-single-rank",
         "test on a single rank (SimGrid's test back-off counter nsleeps is global across ranks; "
         "timeless keeps it per rank, identical here because only rank 1 calls test). Rank 1 irecvs "
         "1e6 from rank 0 (which computes 2e6 first), tests twice while it is pending (sleeps "
         "1e-4 then 2e-4 s, failures grow nsleeps), computes, then waits; then an irecv of 1000 that "
         "has completed is tested successfully (NULL marker stored) and the following wait returns "
         "at once.",
         2, pair_platform(), ["alpha", "beta"],
         {0: wrap(["compute 2e6", "send 1 0 1e6", "compute 1e6", "send 1 1 1000"]),
          1: wrap(["irecv 0 0 1e6", "test 0 1 0", "test 0 1 0", "compute 5e5", "wait 0 1 0",
                   "irecv 0 1 1000", "compute 1e7", "test 0 1 1", "wait 0 1 1"])})

    case("35-noops-sleep-location",
         "Actions with no or pure-delay cost: comm_size, comm_split, comm_dup, location, finalize, "
         "sleep (pure delay, no CPU: it does not slow a concurrent compute on a 1-core host). Rank 0 "
         "and rank 1 share host 'solo' (1 core); rank 0 sleeps 0.5 s while rank 1 computes 5e8 "
         "(0.5 s alone), then they ping-pong 1000 B (same-host loopback) and rank 2 on 'duo' "
         "receives 1e5 from rank 1.",
         3, platform(
             '  <zone id="tiny" routing="Full">\n'
             '    <host id="solo" speed="1Gf"/>\n    <host id="duo" speed="1Gf"/>\n'
             '    <link id="cord" bandwidth="10MBps" latency="1ms"/>\n'
             '    <route src="solo" dst="duo"><link_ctn id="cord"/></route>\n'
             '  </zone>'), ["solo", "solo", "duo"],
         {0: ["init", "comm_size 3", "location main.c 12", "sleep 0.5", "comm_split",
              "send 1 0 1000", "recv 1 0 1000", "comm_dup", "location main.c 40", "finalize"],
          1: ["init", "comm_size 3", "compute 5e8", "comm_split", "recv 0 0 1000", "send 0 0 1000",
              "comm_dup", "send 2 3 1e5", "finalize"],
          2: ["init", "comm_size 3", "comm_split", "sleep 1e-3", "recv 1 3 1e5", "comm_dup",
              "finalize"]})

    case("36-leftover-requests",
         "Requests still pending at the end of the trace, at most one per (src,dst,tag) key (SimGrid "
         "only waits the last request of each key; with one per key all are waited). Rank 0 isends "
         "3e5 (tag 0) and 2000 (tag 1) to rank 1 and ends; rank 1 irecvs both, computes 1e6 and ends. "
         "The makespan includes the implicit end-of-trace waits. No per-rank finish golden (the "
         "implicit waits are not logged).",
         2, pair_platform(), ["alpha", "beta"],
         {0: wrap(["isend 1 0 3e5", "isend 1 1 2000"]),
          1: wrap(["irecv 0 0 3e5", "irecv 0 1 2000", "compute 1e6"])}, finish=False)

    # ------------------------------------------------------------------------------------------
    # shared-trace mode
    sh4 = star_platform(4, ["100MBps", "100MBps", "50MBps", "200MBps"], ["10us", "20us", "30us", "5us"],
                        core=("1GBps", "50us"), prefix="t", zone="hub")
    tr = {r: ["init", "compute %g" % ((r + 1) * 1e6), "bcast 5000", "isend %d 0 7000" % ((r + 1) % 4),
              "irecv %d 0 7000" % ((r + 3) % 4), "waitall", "allreduce 1000 1e5", "barrier",
              "finalize"] for r in range(4)}
    case("37-shared-trace-mode",
         "Shared-trace mode: traces.txt lists one file (shared.txt) holding the lines of all 4 ranks "
         "interleaved; each rank keeps the lines starting with its own number. Star platform with "
         "3-link routes nic_i + core + nic_j. Compute, bcast, ring of isend/irecv + waitall, "
         "allreduce, barrier.",
         4, sh4, ["t0", "t1", "t2", "t3"], tr, shared=True)

    # ------------------------------------------------------------------------------------------
    # collectives
    c8 = cluster_platform("cl", "cl-", ".grid", 8, speed="1Gf", bw="1Gbps", lat="15us",
                          extra=' bb_bw="10Gbps" bb_lat="10us"')

    def cl(n):
        return ["cl-%d.grid" % i for i in range(n)]

    def skew(r):
        return "compute %g" % ((r * 37 % 5) * 2e5)

    case("38-barrier-bcast-np4",
         "barrier (ompi_basic_linear: 0-byte messages = 16 B) and binomial bcast at 4 ranks on an "
         "8-node cluster (SPLITDUPLEX 1Gbps/15us, backbone 10Gbps/10us): bcast 1000 (small), "
         "1e6 (large), root 2 with 70000 B, and with datatype 1 (INT) from root 3; skewed computes in "
         "between so ranks arrive at different times.",
         4, c8, cl(4),
         {r: wrap([skew(r), "barrier", "bcast 1000", skew(r + 1), "bcast 1000000", "bcast 70000 2",
                   "barrier", "bcast 500 3 1"]) for r in range(4)})

    c6s = star_platform(6, ["125MBps", "100MBps", "125MBps", "80MBps", "125MBps", "100MBps"],
                        ["10us", "30us", "10us", "50us", "20us", "10us"], core=("1GBps", "5us"),
                        speeds=["1Gf", "1Gf", "2Gf", "2Gf", "1Gf", "1Gf"])
    case("39-barrier-bcast-np5",
         "barrier and binomial bcast at 5 ranks (non power of two) on a heterogeneous star (3-link "
         "routes nic_i + core + nic_j, SHARED nics): bcast 1000, 1e6, root 3 with 2e5 B, root 4 "
         "with 100 DOUBLE (dt 0).",
         5, c6s, ["s%d" % i for i in range(5)],
         {r: wrap([skew(r), "barrier", "bcast 1000", "bcast 1000000", skew(r + 2), "bcast 200000 3",
                   "barrier", "bcast 100 4 0"]) for r in range(5)})

    case("40-reduce-allreduce-np4",
         "reduce (isends to the root, then every rank executes the flops) and allreduce (reduce to 0 "
         "+ binomial bcast + flops) at 4 ranks: reduce 1000 flops 1e6 root 0, reduce 3e5 flops 0 "
         "root 1, reduce 2000 INT (dt 1) root 3, allreduce 1000 / 1e6 B with flops.",
         4, c8, cl(4),
         {r: wrap([skew(r), "reduce 1000 1e6", "reduce 300000 0 1", skew(r + 3), "reduce 2000 5e5 3 1",
                   "allreduce 1000 2e6", "allreduce 1000000 1e7"]) for r in range(4)})

    case("41-reduce-allreduce-np6",
         "reduce and allreduce at 6 ranks on the heterogeneous star (hosts 2 and 3 are 2Gf): "
         "reduce 1000 root 0, 3e5 root 5, 500 DOUBLE root 2, allreduce 4000 and 2e6 with flops.",
         6, c6s, ["s%d" % i for i in range(6)],
         {r: wrap([skew(r), "reduce 1000 1e6", "reduce 300000 0 5", "reduce 500 2e6 2 0",
                   skew(r + 1), "allreduce 4000 1e6", "allreduce 2000000 5e6"]) for r in range(6)})

    def gs(n, r, roots):
        a = [skew(r)]
        a.append("gather 1000 1000")
        a.append("gather 100000 100000 %d" % roots[0])
        cnts = [1000 * (i + 1) for i in range(n)]
        a.append("gatherv %d %s %d" % (cnts[r], " ".join(map(str, cnts)), roots[1]))
        a.append("scatter 2000 2000")
        a.append("scatter 80000 80000 %d" % roots[0])
        sc = [5000 * (i + 1) for i in range(n)]
        a.append("scatterv %s %d %d" % (" ".join(map(str, sc)), sc[r], roots[1]))
        a.append("gather 250 250 %d 1 1" % roots[1])
        return wrap(a)

    case("42-gather-scatter-np4",
         "gather, gatherv, scatter, scatterv (linear) at 4 ranks: small and large (1e5 / 8e4) "
         "blocks, roots 0, 3 and 1, unequal v-counts, a gather with explicit INT datatypes.",
         4, c8, cl(4), {r: gs(4, r, (3, 1)) for r in range(4)})

    st3 = star_platform(3, ["100MBps", "200MBps", "50MBps"], ["20us", "10us", "40us"])
    case("43-gather-scatter-np3",
         "gather, gatherv, scatter, scatterv at 3 ranks on a 2-link star, roots 0, 2 and 1.",
         3, st3, ["s0", "s1", "s2"], {r: gs(3, r, (2, 1)) for r in range(3)})

    def ag(n, r):
        cnts = [3000 * (i + 1) for i in range(n)]
        big = [100000 + 20000 * i for i in range(n)]
        return wrap([skew(r), "allgather 1000 1000", "allgather 200000 200000",
                     "allgatherv %d %s" % (cnts[r], " ".join(map(str, cnts))),
                     "allgatherv %d %s" % (big[r], " ".join(map(str, big))),
                     "allgather 500 500 1 1"])

    case("44-allgather-allgatherv-np4",
         "allgather / allgatherv (all isends+irecvs posted at once) at 4 ranks, small (1000, 500 INT) "
         "and large (2e5) blocks, unequal v-counts (3000..12000 and 1e5..1.6e5).",
         4, c8, cl(4), {r: ag(4, r) for r in range(4)})

    case("45-allgather-allgatherv-np5",
         "allgather / allgatherv at 5 ranks on the heterogeneous star, small and large blocks.",
         5, c6s, ["s%d" % i for i in range(5)], {r: ag(5, r) for r in range(5)})

    def a2a(n, r, sizes):
        a = [skew(r)]
        for s in sizes:
            a.append("alltoall %s" % s)
        sc = [1000 * ((r + i) % n + 1) for i in range(n)]
        rc = [1000 * ((i + r) % n + 1) for i in range(n)]
        # recvcounts[i] must equal what rank i sends to r: sc_i[r] = 1000*((i+r)%n+1)
        a.append("alltoallv %d %s %d %s" % (sum(sc), " ".join(map(str, sc)), sum(rc), " ".join(map(str, rc))))
        return wrap(a)

    case("46-alltoall-np4",
         "alltoall at 4 ranks through the default ompi decision table (N<8): 1000 B and 100000 B "
         "(basic_linear), 600000 B (pair: 524288 <= d < 1048576, fine at N=4), 1500000 B "
         "(basic_linear), 200 INT (dt 1, 800 B: linear), then an alltoallv with unequal counts.",
         4, c8, cl(4), {r: a2a(4, r, ["1000 1000", "100000 100000", "600000 600000", "1500000 1500000", "200 200 1 1"]) for r in range(4)})

    case("47-alltoall-np6",
         "alltoall at 6 ranks (N<8, non power of two: sizes chosen to avoid the `pair` band "
         "[524288, 1048576) that aborts): 1000, 100000, 1200000 B (basic_linear), plus an alltoallv.",
         6, c6s, ["s%d" % i for i in range(6)],
         {r: a2a(6, r, ["1000 1000", "100000 100000", "1200000 1200000"]) for r in range(6)})

    c16 = cluster_platform("big", "big-", ".hpc", 16, speed="2Gf", bw="10Gbps", lat="2us",
                           extra=' bb_bw="40Gbps" bb_lat="3us"')
    h16 = ["big-%d.hpc" % i for i in range(16)]
    case("48-alltoall-np16-bruck",
         "alltoall at 16 ranks (16 <= N < 32): d = 2 B (basic_linear: d < 4), 100 B and 500 B "
         "(bruck: 4 <= d < 512), 1000 B and 100000 B (basic_linear); 16-node cluster 10Gbps/2us with "
         "a 40Gbps backbone.",
         16, c16, h16, {r: wrap([skew(r), "alltoall 2 2", "alltoall 100 100", "alltoall 500 500",
                                 "alltoall 1000 1000", "alltoall 100000 100000"]) for r in range(16)})

    case("49-alltoall-np2-pair-linear",
         "alltoall at 2 ranks where the ompi table alternates pair and basic_linear: d = 1 (pair), "
         "3 (lin), 10 (pair), 50 (lin), 100 (pair), 1000 (lin), 10000 (pair), 100000 (lin), "
         "2000000 (pair).",
         2, pair_platform(), ["alpha", "beta"],
         {r: wrap(["alltoall %d %d" % (s, s) for s in [1, 3, 10, 50, 100, 1000, 10000, 100000, 2000000]])
          for r in range(2)})

    def rs(n, r):
        eq = " ".join(["2000"] * n)
        uneq = " ".join(str(1000 * (i + 1)) for i in range(n))
        big = " ".join(str(150000 + 10000 * i) for i in range(n))
        return wrap([skew(r), "reducescatter %s 1e6" % eq, "reducescatter %s 5e5" % uneq,
                     "reducescatter %s 0" % big, "reducescatter %s 0 1" % " ".join(["3000"] * n),
                     "scan 1000 1e6", "exscan 1000 1e6", "scan 200000 0", "exscan 50000 0 0"])

    case("50-reducescatter-scan-np4",
         "reducescatter with equal counts (reduce to 0 + scatterv), unequal counts with sum <= 524288 "
         "(mpich recursive doubling) and with sum > 524288 (pairwise), with INT datatype; scan and "
         "exscan (linear irecvs from lower ranks, isends to higher) small and large, at 4 ranks.",
         4, c8, cl(4), {r: rs(4, r) for r in range(4)})

    case("51-reducescatter-scan-np5",
         "reducescatter (equal / unequal small / unequal large) and scan/exscan at 5 ranks on the "
         "heterogeneous star.",
         5, c6s, ["s%d" % i for i in range(5)], {r: rs(5, r) for r in range(5)})

    # alternative algorithms
    case("52-alg-bcast-flattree",
         "--cfg smpi/bcast:flattree at 5 ranks: the root isends to every other rank; bcast 1000, "
         "1e6 and 50000 from root 2.",
         5, c8, cl(5), {r: wrap([skew(r), "bcast 1000", "bcast 1000000", "bcast 50000 2"]) for r in range(5)},
         cfg=["smpi/bcast:flattree"])

    case("53-alg-allreduce-rdb",
         "--cfg smpi/allreduce:rdb (recursive doubling, with the extra fold for non power of two) "
         "at 6 ranks: allreduce 1000, 1e6 (with flops) on the heterogeneous star.",
         6, c6s, ["s%d" % i for i in range(6)],
         {r: wrap([skew(r), "allreduce 1000 1e6", "allreduce 1000000 1e7"]) for r in range(6)},
         cfg=["smpi/allreduce:rdb"])

    case("54-alg-alltoall-ring",
         "--cfg smpi/alltoall:ring at 6 ranks: alltoall 1000, 1e5 and 6e5 (a size that the default "
         "table would send to the aborting `pair` algorithm at N=6).",
         6, c8, cl(6), {r: wrap([skew(r), "alltoall 1000 1000", "alltoall 100000 100000",
                                 "alltoall 600000 600000"]) for r in range(6)},
         cfg=["smpi/alltoall:ring"])

    case("55-alg-allgather-ring",
         "--cfg smpi/allgather:ring at 5 ranks: allgather 1000 and 2e5 on the 8-node cluster.",
         5, c8, cl(5), {r: wrap([skew(r), "allgather 1000 1000", "allgather 200000 200000"]) for r in range(5)},
         cfg=["smpi/allgather:ring"])

    case("56-alg-reduce-binomial",
         "--cfg smpi/reduce:binomial at 6 ranks: reduce 1000 root 0, 5e5 root 4 (flops executed on "
         "every rank afterwards) on the heterogeneous star.",
         6, c6s, ["s%d" % i for i in range(6)],
         {r: wrap([skew(r), "reduce 1000 1e6", "reduce 500000 2e6 4"]) for r in range(6)},
         cfg=["smpi/reduce:binomial"])

    case("57-alg-barrier-recursivedoubling",
         "--cfg smpi/barrier:ompi_recursivedoubling at 6 ranks (non power of two: extra ranks fold "
         "in) with skewed computes between three barriers.",
         6, c8, cl(6), {r: wrap([skew(r), "barrier", skew(r + 1), "barrier", "compute 1e5", "barrier"])
                        for r in range(6)},
         cfg=["smpi/barrier:ompi_recursivedoubling"])

    case("58-alg-gather-binomial-scatter-binomial",
         "--cfg smpi/gather:ompi_binomial and smpi/scatter:ompi_binomial at 5 ranks: gather 1000 "
         "and 1e5 (root 0 and 3), scatter 2000 and 1e5.",
         5, c8, cl(5), {r: wrap([skew(r), "gather 1000 1000", "gather 100000 100000 3",
                                 "scatter 2000 2000", "scatter 100000 100000 2"]) for r in range(5)},
         cfg=["smpi/gather:ompi_binomial", "smpi/scatter:ompi_binomial"])

    # ------------------------------------------------------------------------------------------
    # stencil 3x3
    c9 = cluster_platform("grid", "g", "", 9, speed="1.5Gf", bw="10Gbps", lat="1us",
                          extra=' sharing_policy="SHARED" bb_bw="20Gbps" bb_lat="1us"'
                                ' bb_sharing_policy="FATPIPE"')
    st = {}
    for r in range(9):
        x, y = r % 3, r // 3
        nb = []
        for dx, dy in ((-1, 0), (1, 0), (0, -1), (0, 1)):
            if 0 <= x + dx < 3 and 0 <= y + dy < 3:
                nb.append((y + dy) * 3 + x + dx)
        body = []
        for it in range(5):
            body.append("compute %g" % (2e7 + 1e6 * ((r + it) % 3)))
            for p in nb:
                body.append("irecv %d %d %d" % (p, it, 80000 if abs(p - r) == 1 else 40000))
            for p in nb:
                body.append("isend %d %d %d" % (p, it, 80000 if abs(p - r) == 1 else 40000))
            body.append("waitall")
        body.append("allreduce 8 1e3 0")
        st[r] = wrap(body)
    case("59-stencil-3x3",
         "2D 5-point stencil on 9 ranks (3x3 grid, no wrap): 5 iterations of compute (2e7..2.2e7 "
         "flops, varying per rank and iteration), irecv from each neighbour, isend to each "
         "neighbour (80000 B east-west, 40000 B north-south: rendezvous and detached), waitall; tag = "
         "iteration; then a residual allreduce of 8 DOUBLE. 9-node cluster 10Gbps/1us with "
         "sharing_policy=SHARED private links (no UP/DOWN split: w=1.05 for a lone flow) and a "
         "bb_sharing_policy=FATPIPE backbone.",
         9, c9, ["g%d" % i for i in range(9)], st)

    # 16 ranks mixed
    m16 = {}
    for r in range(16):
        body = ["compute %g" % (1e8 + 1e6 * r), "bcast 100000", "isend %d 0 300000" % ((r + 1) % 16),
                "irecv %d 0 300000" % ((r + 15) % 16), "waitall", "allreduce 80000 1e6",
                "alltoall 256 256", "gather 4000 4000 5", "barrier", "allgather 16000 16000"]
        m16[r] = wrap(body)
    case("60-cluster16-mixed",
         "16 ranks on the 16-node cluster (10Gbps/2us, 40Gbps backbone): compute, bcast 1e5, a "
         "rendezvous ring exchange, allreduce 8e4, alltoall 256 (bruck at N=16), gather to root 5, "
         "barrier, allgather 16000.",
         16, c16, h16, m16)

    # extra point-to-point cases
    case("61-irecv-any-order-tags",
         "FIFO matching per (src, tag): rank 0 isends three messages with the same tag 4 (1000, "
         "2000, 3000 B) and one with tag 9 (62500 DOUBLE, dt 0 on both sides = 5e5 B); rank 1 posts irecvs in a different tag order and waits "
         "them one by one with `wait src dst tag` (popping the oldest request of the key), "
         "interleaved with computes.",
         2, pair_platform(bw="50MBps", lat="200us"), ["alpha", "beta"],
         {0: wrap(["isend 1 4 1000", "isend 1 9 62500 0", "isend 1 4 2000", "isend 1 4 3000",
                   "waitall"]),
          1: wrap(["irecv 0 9 62500 0", "irecv 0 4 1000", "irecv 0 4 2000", "compute 1e6",
                   "wait 0 1 4", "irecv 0 4 3000", "wait 0 1 9", "wait 0 1 4", "wait 0 1 4"])})

    case("62-send-before-recv-posted-many",
         "Many-to-one with blocking sends: ranks 1-3 send 1e5 (rendezvous) and 1000 (detached) to "
         "rank 0, which receives them in rank order after a compute, so some senders block until "
         "their turn. Fig. 5 cluster (4 nodes).",
         4, fig5_cluster(4), fig5_hosts(4),
         {0: wrap(["compute 5e6"] + ["recv %d 0 100000" % s for s in (1, 2, 3)] +
                  ["recv %d 1 1000" % s for s in (3, 2, 1)]),
          1: wrap(["send 0 0 100000", "send 0 1 1000"]),
          2: wrap(["compute 1e6", "send 0 0 100000", "send 0 1 1000"]),
          3: wrap(["send 0 0 100000", "compute 2e6", "send 0 1 1000"])})

    fpc = cluster_platform("fp", "fp-", "", 3, speed="1Gf", bw="100MBps", lat="20us",
                           extra=' sharing_policy="FATPIPE" bb_bw="1GBps" bb_lat="10us"')
    same = [(100e6, 20e-6, 1.05), (1e9, 10e-6, 1.05)]
    cross = [(100e6, 20e-6, 1.05), (1e9, 10e-6, 1.05), (100e6, 20e-6, 1.05)]
    p1_, p2_, p3_ = 2 * T(1e6, same), 2 * T(1e6, cross), 2 * T(0, cross)
    case("63-cluster-fatpipe-ignored-same-node",
         "Cluster gotchas: sharing_policy=FATPIPE on <cluster> is ignored (private links are SHARED, "
         "so a lone flow gets w=1.05 on them), and two ranks on the same node of a cluster without "
         "loopback go through the node's link and the backbone. Ranks 0,1 on fp-0, rank 2 on fp-1. "
         "Phase 1: same-node ping-pong 1e6 0<->1: the route is [fp_link_0, backbone] with the private "
         "link counted ONCE (Lraw = 20+10 = 30us, both links w=1.05): 2*T = %s. Phase 2: cross-node "
         "ping-pong 1e6 0<->2 over [fp_link_0, backbone, fp_link_1] (Lraw 50us, w=1.05): 2*T = %s. "
         "Phase 3: 0-byte ping-pong 0<->2 (P = 16 B): 2*T = %s. Total %s."
         % (g(p1_), g(p2_), g(p3_), g(p1_ + p2_ + p3_)),
         3, fpc, ["fp-0", "fp-0", "fp-1"],
         {0: wrap(["send 1 0 1e6", "recv 1 0 1e6", "send 2 0 1e6", "recv 2 0 1e6", "send 2 1 0",
                   "recv 2 1 0"]),
          1: wrap(["recv 0 0 1e6", "send 0 0 1e6"]),
          2: wrap(["recv 0 0 1e6", "send 0 0 1e6", "recv 0 1 0", "send 0 1 0"])})


    # ------------------------------------------------------------------------------------------
    # Overheads in multi-request waits. Request::waitall loops on waitany and each finish_wait
    # sleeps smpi/or for a receive whose sender was detached, right after that receive's own
    # completion; requests completing meanwhile are finished when the sleep ends. With the
    # completion dates t_1 <= .. <= t_n and the entry date t_0: e_k = max(e_{k-1}, t_k) + or_k.
    st5 = star_platform(5, ["125MBps"] * 5, ["10us"] * 5)
    s5 = ["s%d" % i for i in range(5)]
    sizes = {1: 100, 2: 1000, 3: 10000, 4: 60000}
    tr = {0: wrap(["irecv %d 0 1" % k for k in range(1, 5)] + ["waitall"] +
                  ["irecv %d 1 %d" % (k, sizes[k]) for k in range(1, 5)] + ["waitall"])}
    for k in range(1, 5):
        tr[k] = wrap(["compute %d" % (3000 * k), "send 0 0 1", "compute %d" % (40000 * k),
                      "send 0 1 %d" % sizes[k]])
    case("64-waitall-or-staggered-senders",
         "waitall over 4 detached irecvs (1 B) from 4 senders on a star (125MBps/10us NICs) whose "
         "sends are 3 us apart, with smpi/or 5 us + 1 ns/B: each or is slept right after its own "
         "completion, so the sleeps chain (e_k = max(e_{k-1}, t_k) + or_k; paying them all after "
         "the last completion is 9 us late). Then 100/1000/10000/60000 B from senders 40 us apart: "
         "the sleeps of the small ones end before the next arrival.",
         5, st5, s5, tr, cfg=["smpi/or:0:5e-6:1e-9"])

    st3 = star_platform(3, ["125MBps"] * 3, ["10us"] * 3)
    case("65-waitall-mixed-isend-irecv-rendezvous",
         "waitall over isends and irecvs of detached (1000, 500, 100, 2000 B) and rendezvous (2e5, "
         "3e5, 7e4 B) sizes on a 3-host star: the detached receives owe smpi/or (4 us + 1 ns/B) "
         "after their own completion, overlapping the rendezvous transfers still in flight; "
         "detached isends complete when posted; smpi/ois and smpi/os sleep before each send. "
         "The second waitall posts its requests in another order.",
         3, st3, ["s0", "s1", "s2"],
         {0: wrap(["irecv 1 0 1000", "irecv 2 0 200000", "isend 1 1 500", "isend 2 1 300000",
                   "waitall", "isend 2 2 100", "irecv 2 3 70000", "irecv 1 3 2000", "waitall"]),
          1: wrap(["compute 2e4", "isend 0 0 1000", "irecv 0 1 500", "waitall", "compute 1e4",
                   "send 0 3 2000"]),
          2: wrap(["send 0 0 200000", "recv 0 1 300000", "recv 0 2 100", "compute 5e4",
                   "send 0 3 70000"])},
         cfg=["smpi/or:0:4e-6:1e-9", "smpi/ois:0:1e-6:0", "smpi/os:0:2e-6:0"])

    st4 = star_platform(4, ["125MBps"] * 4, ["10us"] * 4)
    case("66-waitall-complete-at-entry",
         "Requests already complete when waitall is entered: rank 0 irecvs 1000 B from ranks 1-3 "
         "and computes 1 ms first, so waitall only sleeps the three smpi/or (50 us each) one after "
         "the other. Second round: the message of rank 1 is in at entry, rank 2's arrives during "
         "its or sleep (finished when the sleep ends), rank 3's after the sleeps (its or after "
         "its own completion).",
         4, st4, ["s0", "s1", "s2", "s3"],
         {0: wrap(["irecv 1 0 1000", "irecv 2 0 1000", "irecv 3 0 1000", "compute 1e6", "waitall",
                   "irecv 1 1 1000", "irecv 2 1 1000", "irecv 3 1 1000", "compute 2e5",
                   "waitall"]),
          1: wrap(["send 0 0 1000", "send 0 1 1000"]),
          2: wrap(["send 0 0 1000", "compute 1.37e6", "send 0 1 1000"]),
          3: wrap(["send 0 0 1000", "compute 1.6e6", "send 0 1 1000"])},
         cfg=["smpi/or:0:5e-5:0"])

    case("67-sendrecv-or",
         "sendRecv is isend + irecv + waitall: rank 0 sends 2e5 B (rendezvous) and receives 1000 B "
         "(detached), so the receive's smpi/or (30 us) is slept while its own send is still in "
         "flight and costs nothing; rank 1 pays no or (its receive is rendezvous). Then a "
         "sendRecv of two detached messages (or after the receive), and one where rank 1 "
         "receives 1000 B late.",
         2, pair_platform(), ["alpha", "beta"],
         {0: wrap(["sendRecv 200000 1 1000 1 6 6", "sendRecv 1000 1 2000 1 6 6",
                   "compute 1e5", "sendRecv 70000 1 3000 1 6 6"]),
          1: wrap(["sendRecv 1000 0 200000 0 6 6", "sendRecv 2000 0 1000 0 6 6",
                   "sendRecv 3000 0 70000 0 6 6"])},
         cfg=["smpi/or:0:3e-5:0", "smpi/ois:0:2e-6:1e-10"])

    case("68-collectives-or-ois",
         "Default collectives with smpi/or 20 us + 1 ns/B, smpi/ois 3 us and smpi/os 5 us at 4 "
         "ranks with skewed starts (8-node cluster): gather 1000 (the root's group of irecvs "
         "is one waitall: or after each completion), allgather 1000, alltoall 500 (basic linear), "
         "barrier, reduce, allreduce, scatter 2000, alltoallv, bcast (blocking recvs).",
         4, c8, cl(4),
         {r: wrap([skew(r), "gather 1000 1000", skew(3 - r), "allgather 1000 1000",
                   "alltoall 500 500", skew(r + 1), "barrier", "reduce 1000 1e5 2",
                   skew(r + 2), "allreduce 500 1e5", "scatter 2000 2000 1",
                   "alltoallv 4000 %s 4000 %s" % (" ".join(str(100 * (r + c + 1)) for c in range(4)),
                                                 " ".join(str(100 * (r + c + 1)) for c in range(4))),
                   "bcast 3000 3"]) for r in range(4)},
         cfg=["smpi/or:0:2e-5:1e-9", "smpi/ois:0:3e-6:0", "smpi/os:0:5e-6:0"])

    case("69-scan-exscan-or-posting-order",
         "scan and exscan (replay's MPI_OP_NULL takes colls::scan's non-commutative branch: "
         "Request::wait on each request in posting order, lower ranks first) at 4 ranks with "
         "smpi/or 20 us. scan: rank r starts r*100 us late, so the lower ranks' messages arrive "
         "first and each or is slept before the next arrival. exscan (after a barrier): rank r "
         "starts (3-r)*100 us late, so the first-posted receive completes last and all the or "
         "sleeps follow it (a waitall would overlap them with the later arrivals).",
         4, c8, cl(4),
         {r: wrap(["compute %g" % (r * 1e5), "scan 100 0", "barrier",
                   "compute %g" % ((3 - r) * 1e5), "exscan 1000 0"]) for r in range(4)},
         cfg=["smpi/or:0:2e-5:0"])

    case("70-test-success-or",
         "A successful test finishes the request (Request::test -> finish_wait): after the test "
         "back-off (1e-4 s) it sleeps smpi/or (20 us + 1 ns/B) for a receive whose sender was "
         "detached, and the wait on the NULL marker it leaves costs nothing. Then a test that "
         "fails (back-off 1e-4 s again: nsleeps was reset), a compute, and a wait on the request "
         "completed meanwhile, which pays its or.",
         2, pair_platform(), ["alpha", "beta"],
         {0: wrap(["send 1 0 1000", "compute 1.5e6", "send 1 1 2000"]),
          1: wrap(["irecv 0 0 1000", "irecv 0 1 2000", "compute 1e6", "test 0 1 0", "wait 0 1 0",
                   "test 0 1 1", "compute 1e6", "wait 0 1 1"])},
         cfg=["smpi/or:0:2e-5:1e-9"])

    case("71-leftover-requests-or",
         "Requests left at the end of the trace are waited by one waitall (one request per key, "
         "so SimGrid waits them all): rank 0 irecvs 100 B from ranks 1 and 2, whose sends are "
         "5 us apart, and ends; each smpi/or (20 us) follows its own completion. No per-rank "
         "finish golden (the implicit waits are not logged).",
         3, st3, ["s0", "s1", "s2"],
         {0: wrap(["irecv 1 0 100", "irecv 2 0 100"]),
          1: wrap(["compute 1e4", "send 0 0 100"]),
          2: wrap(["compute 1.5e4", "send 0 0 100"])},
         cfg=["smpi/or:0:2e-5:0"], finish=False)

def main():
    build()
    names = [c["name"] for c in CASES]
    assert len(names) == len(set(names))
    sel = sys.argv[1:]
    for c in CASES:
        if not sel or any(c["name"].startswith(s) for s in sel):
            write_case(c)
    print("%d cases" % len(CASES))


if __name__ == "__main__":
    main()
