#!/usr/bin/env python3
"""Random SimGrid platform generator for differential testing against SimGrid 3.32.

Usage: gen_platform.py SEED [connected] > platform.xml

The platforms mix Full/Floyd/Dijkstra/Cluster zones, nested zones with zoneRoutes, bypass
routes, split-duplex and fatpipe links, asymmetric routes, and clusters of every topology,
with sizes kept small so that SimGrid's all-pairs route dump stays fast. Some generated files
are invalid on purpose (duplicate routes, missing zone routes...): both sides must then fail.
"""
import random
import sys

rng = random.Random(int(sys.argv[1]))
out = []
counter = {"link": 0, "host": 0, "router": 0, "zone": 0}


def fresh(kind):
    counter[kind] += 1
    return f"{kind[0]}{counter[kind]}"


def bw():
    return rng.choice(["1GBps", "125MBps", "10Gbps", "1Mibps", "3.5kBps", "100MBps"])


def lat():
    return rng.choice(["0", "50us", "1ms", "16.67e-6s", "0.3ms", "10us", "1e-4s"])


def links_block(n, indent):
    """Declares n links; returns [(name, is_split)]."""
    made = []
    for _ in range(n):
        name = fresh("link")
        pol = rng.choice(["SHARED", "SHARED", "FATPIPE", "SPLITDUPLEX"])
        out.append(f'{indent}<link id="{name}" bandwidth="{bw()}" latency="{lat()}" sharing_policy="{pol}"/>')
        made.append((name, pol == "SPLITDUPLEX"))
    return made


def link_ctns(links, indent, kmax=3):
    chosen = [rng.choice(links) for _ in range(rng.randint(1, kmax))]
    res = []
    for name, split in chosen:
        if split:
            res.append(f'{indent}<link_ctn id="{name}" direction="{rng.choice(["UP", "DOWN"])}"/>')
        else:
            res.append(f'{indent}<link_ctn id="{name}"/>')
    return res


def leaf_zone(indent, kind=None):
    """A zone with hosts, routers, links and routes. Returns (zone id, [netpoint names])."""
    zid = fresh("zone")
    kind = kind or rng.choice(["Full", "Floyd", "Dijkstra", "DijkstraCache", "Cluster"])
    out.append(f'{indent}<zone id="{zid}" routing="{kind}">')
    ind = indent + "  "
    hosts = []
    for _ in range(rng.randint(1, 5)):
        h = fresh("host")
        out.append(f'{ind}<host id="{h}" speed="1Gf"/>')
        hosts.append(h)
    routers = []
    for _ in range(rng.randint(0, 2)):
        r = fresh("router")
        out.append(f'{ind}<router id="{r}"/>')
        routers.append(r)
    links = links_block(rng.randint(1, 6), ind)
    nodes = hosts + routers
    if kind == "Cluster":
        plain = [l for l in links if not l[1]]
        if rng.random() < 0.5 and plain:
            bb = fresh("link")
            out.append(f'{ind}<backbone id="{bb}" bandwidth="{bw()}" latency="{lat()}"/>')
        for h in hosts:
            if rng.random() < 0.9:
                # host_link names concrete links (halves of split links are allowed)
                def pick():
                    name, split = rng.choice(links)
                    return name + rng.choice(["_UP", "_DOWN"]) if split else name
                out.append(f'{ind}<host_link id="{h}" up="{pick()}" down="{pick()}"/>')
        if rng.random() < 0.3:
            c = fresh("zone")
            out.append(f'{ind}<cabinet id="{c}" prefix="{c}-" suffix=".x" radical="0-{rng.randint(0, 2)}" speed="1Gf" bw="{bw()}" lat="{lat()}"/>')
        out.append(f"{indent}</zone>")
        return zid, hosts
    declared = set()
    for _ in range(rng.randint(0, 3 * len(nodes))):
        s, d = rng.choice(nodes), rng.choice(nodes)
        sym = rng.random() < 0.6
        if s == d:
            sym = False
            if rng.random() < 0.7:
                continue
        if (s, d) in declared or (sym and (d, s) in declared):
            if rng.random() < 0.95:
                continue
        declared.add((s, d))
        if sym:
            declared.add((d, s))
        out.append(f'{ind}<route src="{s}" dst="{d}" symmetrical="{"YES" if sym else "NO"}">')
        out.extend(link_ctns(links, ind + "  "))
        out.append(f"{ind}</route>")
    if rng.random() < 0.3 and len(hosts) >= 2:
        s, d = rng.sample(hosts, 2)
        out.append(f'{ind}<bypassRoute src="{s}" dst="{d}">')
        out.extend(link_ctns(links, ind + "  "))
        out.append(f"{ind}</bypassRoute>")
    out.append(f"{indent}</zone>")
    return zid, nodes


def cluster(indent):
    cid = fresh("zone")
    topo = rng.choice(["FLAT", "FLAT", "TORUS", "FAT_TREE", "DRAGONFLY"])
    attrs = {
        "id": cid,
        "prefix": f"{cid}-",
        "suffix": rng.choice(["", ".me"]),
        "speed": "1Gf",
        "bw": bw(),
        "lat": lat(),
        "sharing_policy": rng.choice(["SPLITDUPLEX", "SHARED", "FATPIPE"]),
    }
    if topo == "FLAT":
        n = rng.randint(1, 5)
        attrs["radical"] = rng.choice([f"0-{n - 1}", f"0,2-{n + 1}", f"3-{n + 3}"])
        if rng.random() < 0.6:
            attrs["bb_bw"] = bw()
        if rng.random() < 0.5:
            attrs["bb_lat"] = lat()
        if rng.random() < 0.3:
            attrs["bb_sharing_policy"] = "FATPIPE"
        if rng.random() < 0.3:
            attrs["router_id"] = f"{cid}_gw"
    elif topo == "TORUS":
        dims = [rng.randint(1, 4) for _ in range(rng.randint(1, 3))]
        total = 1
        for d in dims:
            total *= d
        attrs["topo_parameters"] = ",".join(map(str, dims))
        attrs["radical"] = f"0-{total - 1 + rng.randint(0, 1)}"
    elif topo == "FAT_TREE":
        levels = rng.randint(1, 3)
        down = [rng.randint(1, 3) for _ in range(levels)]
        up = [rng.randint(1, 2) for _ in range(levels)]
        cnt = [rng.randint(1, 2) for _ in range(levels)]
        total = 1
        for d in down:
            total *= d
        attrs["topo_parameters"] = f"{levels};{','.join(map(str, down))};{','.join(map(str, up))};{','.join(map(str, cnt))}"
        attrs["radical"] = f"0-{total - 1}"
    else:
        g = rng.randint(1, 3)
        r = rng.randint(g, 3)
        c = rng.randint(1, 2)
        n = rng.randint(1, 2)
        attrs["topo_parameters"] = f"{g},{rng.randint(1, 2)};{c},{rng.randint(1, 2)};{r},{rng.randint(1, 2)};{n}"
        attrs["radical"] = f"0-{g * c * r * n - 1}"
    attrs["topology"] = topo
    if rng.random() < 0.3:
        attrs["limiter_link"] = bw()
    if rng.random() < 0.3:
        attrs["loopback_bw"] = bw()
        if rng.random() < 0.5:
            attrs["loopback_lat"] = lat()
    text = " ".join(f'{k}="{v}"' for k, v in attrs.items())
    out.append(f"{indent}<cluster {text}/>")
    return cid, topo, attrs


def hierarchical(indent, depth):
    zid = fresh("zone")
    kind = rng.choice(["Full", "Floyd", "Dijkstra"])
    out.append(f'{indent}<zone id="{zid}" routing="{kind}">')
    ind = indent + "  "
    children = []  # (zone id, gateway candidates)
    for _ in range(rng.randint(2, 4)):
        roll = rng.random()
        if roll < 0.5 or depth > 1:
            cz, nodes = leaf_zone(ind, rng.choice(["Full", "Floyd", "Dijkstra"]))
            children.append((cz, nodes))
        elif roll < 0.8:
            cid, topo, attrs = cluster(ind)
            gws = []
            if topo == "FLAT":
                gws.append(attrs.get("router_id", f'{attrs["prefix"]}{cid}_router{attrs["suffix"]}'))
            children.append((cid, gws))
        else:
            cz, _ = hierarchical(ind, depth + 1)
            children.append((cz, []))
    links = links_block(rng.randint(1, 4), ind)
    usable = [c for c in children if c[1]]
    declared = set()
    for _ in range(rng.randint(0, 2 * len(usable) * len(usable))):
        if len(usable) < 2:
            break
        (a, ga), (b, gb) = rng.sample(usable, 2)
        sym = rng.random() < 0.7
        if (a, b) in declared or (sym and (b, a) in declared):
            continue
        declared.add((a, b))
        if sym:
            declared.add((b, a))
        out.append(f'{ind}<zoneRoute src="{a}" dst="{b}" gw_src="{rng.choice(ga)}" gw_dst="{rng.choice(gb)}" symmetrical="{"YES" if sym else "NO"}">')
        out.extend(link_ctns(links, ind + "  "))
        out.append(f"{ind}</zoneRoute>")
    if rng.random() < 0.3 and len(usable) >= 2:
        (a, ga), (b, gb) = rng.sample(usable, 2)
        out.append(f'{ind}<bypassZoneRoute src="{a}" dst="{b}" gw_src="{rng.choice(ga)}" gw_dst="{rng.choice(gb)}">')
        out.extend(link_ctns(links, ind + "  "))
        out.append(f"{ind}</bypassZoneRoute>")
    out.append(f"{indent}</zone>")
    return zid, []


def connected_leaf(indent):
    """A leaf zone in which every pair of nodes has a route."""
    zid = fresh("zone")
    kind = rng.choice(["Full", "Floyd", "Dijkstra"])
    out.append(f'{indent}<zone id="{zid}" routing="{kind}">')
    ind = indent + "  "
    nodes = []
    for _ in range(rng.randint(1, 3)):
        h = fresh("host")
        out.append(f'{ind}<host id="{h}" speed="1Gf"/>')
        nodes.append(h)
    for _ in range(rng.randint(1, 2)):
        r = fresh("router")
        out.append(f'{ind}<router id="{r}"/>')
        nodes.append(r)
    links = links_block(rng.randint(1, 4), ind)
    if kind == "Full":
        pairs = [(a, b) for i, a in enumerate(nodes) for b in nodes[i + 1:]]
    else:
        hub = nodes[-1]
        pairs = [(a, hub) for a in nodes[:-1]]
    for a, b in pairs:
        out.append(f'{ind}<route src="{a}" dst="{b}">')
        out.extend(link_ctns(links, ind + "  ", 2))
        out.append(f"{ind}</route>")
    out.append(f"{indent}</zone>")
    return zid, nodes


def connected(indent, depth=0):
    """A zone of connected leaf zones; returns (id, gateway candidates, descendant leaves)."""
    zid = fresh("zone")
    kind = rng.choice(["Full", "Floyd", "Dijkstra"])
    out.append(f'{indent}<zone id="{zid}" routing="{kind}">')
    ind = indent + "  "
    children = []
    leaves = []  # (child index, leaf zone id, nodes)
    for index in range(rng.randint(2, 4)):
        if depth == 0 and rng.random() < 0.25:
            cz, nodes, sub = connected(ind, depth + 1)
            leaves.extend((index, z, n) for _, z, n in sub)
        else:
            cz, nodes = connected_leaf(ind)
            leaves.append((index, cz, nodes))
        children.append((cz, nodes))
    links = links_block(rng.randint(1, 3), ind)
    pairs = [(a, b) for i, a in enumerate(children) for b in children[i + 1:]]
    rng.shuffle(pairs)
    if kind == "Full":
        chosen = pairs
    else:
        chosen = pairs[: rng.randint(len(children) - 1, len(pairs))]
    for (a, ga), (b, gb) in chosen:
        if rng.random() < 0.5:
            a, ga, b, gb = b, gb, a, ga
        out.append(f'{ind}<zoneRoute src="{a}" dst="{b}" gw_src="{rng.choice(ga)}" gw_dst="{rng.choice(gb)}">')
        out.extend(link_ctns(links, ind + "  ", 2))
        out.append(f"{ind}</zoneRoute>")
    declared = set()
    for _ in range(rng.choice([0, 0, 1, 2])):
        (ia, za, na), (ib, zb, nb) = rng.sample(leaves, 2)
        if ia == ib or (za, zb) in declared:
            continue
        declared.add((za, zb))
        out.append(f'{ind}<bypassZoneRoute src="{za}" dst="{zb}" gw_src="{rng.choice(na)}" gw_dst="{rng.choice(nb)}">')
        out.extend(link_ctns(links, ind + "  ", 2))
        out.append(f"{ind}</bypassZoneRoute>")
    out.append(f"{indent}</zone>")
    # nodes usable as gateways of this zone from its parent: those of its first child
    return zid, children[0][1], leaves


print("<?xml version='1.0'?>")
print('<!DOCTYPE platform SYSTEM "https://simgrid.org/simgrid.dtd">')
print('<platform version="4.1">')
family = rng.random()
if len(sys.argv) > 2 and sys.argv[2] == "connected":
    connected("  ")
elif family < 0.35:
    leaf_zone("  ", rng.choice(["Full", "Floyd", "Dijkstra", "DijkstraCache"]))
elif family < 0.55:
    out.append('  <zone id="root" routing="Full">')
    cluster("    ")
    out.append("  </zone>")
else:
    hierarchical("  ", 0)
print("\n".join(out))
print("</platform>")
