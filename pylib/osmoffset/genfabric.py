"""Generators of ibsim net files (gen-fabric): two-level and three-level
fat trees, k-ary n-trees, production-style clusters (director chassis,
pods, rails, tapered and empty edges, SHARP nodes, management HCAs) and
the seed example, with seeded random GUIDs, doubled and missing cables
and removed switches.  generate(args, argv) -> (Fabric, net file text).

Reading net files back is osmoffset.fabric's job (load_topology).
"""

import random
import re
import shlex

PROG = "gen-fabric"
OUI = 0x0002C9          # vendor prefix of generated GUIDs (top 24 bits)
SEQ_SW_BASE = 0x0002C90000100000
SEQ_CA_BASE = 0x0002C90000200000
GUID_STEP = 0x10        # spacing of generated node GUIDs (CA reserves ports+1)


class FabricError(Exception):
    """Bad request or impossible fabric: reported as one line, exit 2."""


class Node:
    __slots__ = ("name", "kind", "nports", "level", "index", "guid", "ports",
                 "desc", "cable_ports")

    def __init__(self, name, kind, nports, level, index, desc=None,
                 cable_ports=None):
        self.name = name
        self.kind = kind            # "sw" or "ca"
        self.nports = nports
        self.level = level          # 0 = host, 1 = leaf switch, 2.. upper
        self.index = index          # position inside its level
        self.guid = None
        self.ports = {}             # local port -> (remote name, remote port)
        self.desc = desc            # node description (None: the name)
        # {"up": (first, last), "down": (first, last)}: the ports that
        # cables toward upper / lower switches may use (a doubled cable
        # takes the lowest free one); None: 1..nports for both
        self.cable_ports = cable_ports


class Fabric:
    def __init__(self, kind):
        self.kind = kind
        self.nodes = {}
        self.order = []             # file order (host h0000 first)
        self.top_level = 1
        self.internal = set()       # (switch, port) of chassis-internal cables

    def add(self, node):
        if node.name in self.nodes:
            raise FabricError("internal: duplicate node %s" % node.name)
        self.nodes[node.name] = node
        self.order.append(node.name)
        return node

    def connect(self, a, pa, b, pb):
        na, nb = self.nodes[a], self.nodes[b]
        for n, p in ((na, pa), (nb, pb)):
            if p < 1 or p > n.nports:
                raise FabricError(
                    "switch %s needs port %d but has only %d ports "
                    "(raise --radix)" % (n.name, p, n.nports))
            if p in n.ports:
                raise FabricError("internal: port %s[%d] used twice"
                                  % (n.name, p))
        na.ports[pa] = (b, pb)
        nb.ports[pb] = (a, pa)

    def disconnect(self, a, pa):
        b, pb = self.nodes[a].ports.pop(pa)
        del self.nodes[b].ports[pb]

    def remove_node(self, name):
        node = self.nodes[name]
        for p in list(node.ports):
            self.disconnect(name, p)
        del self.nodes[name]
        self.order.remove(name)

    def switches(self):
        return [self.nodes[n] for n in self.order
                if self.nodes[n].kind == "sw"]

    def hosts(self):
        return [self.nodes[n] for n in self.order
                if self.nodes[n].kind == "ca"]

    def isl(self):
        """Inter-switch links, each cable once:
        (lower, lport, upper, uport)."""
        out = []
        for sw in self.switches():
            for p in sorted(sw.ports):
                r, rp = sw.ports[p]
                rn = self.nodes[r]
                if rn.kind == "sw" and ((rn.level, rn.index) >
                                        (sw.level, sw.index)):
                    out.append((sw.name, p, r, rp))
        return out

    def external_isl(self):
        """isl() without the cables inside a director chassis (those are
        never missing nor doubled)."""
        return [l for l in self.isl() if (l[0], l[1]) not in self.internal]

    def free_cable_port(self, name, direction):
        """Lowest free port of switch name for a cable going 'up' or
        'down' from it, or None."""
        n = self.nodes[name]
        lo, hi = (n.cable_ports or {}).get(direction, (1, n.nports))
        for p in range(lo, hi + 1):
            if p not in n.ports:
                return p
        return None


# ----------------------------------------------------------------- builders

def at_least_one(options):
    """FabricError for the first (option, value) pair below 1."""
    for opt, val in options:
        if val < 1:
            raise FabricError("%s must be >= 1 (got %d)" % (opt, val))


def fits_ibsim(radix):
    """FabricError when switches of this radix are too big for ibsim."""
    if radix > 254:
        raise FabricError("--radix %d: ibsim switches have at most 254 "
                          "ports" % radix)


def width(n, minimum):
    return max(minimum, len(str(max(n - 1, 0))))


def build_2level(a):
    L, S, H, T, R = a.leaves, a.spines, a.hosts_per_leaf, a.trunk, a.radix
    at_least_one((("--leaves", L), ("--spines", S), ("--trunk", T),
                  ("--radix", R), ("--hosts-per-leaf", H)))
    fits_ibsim(R)
    if H + S * T > R:
        raise FabricError("a leaf needs %d ports (%d hosts + %d spines x %d "
                          "trunk) but --radix is %d"
                          % (H + S * T, H, S, T, R))
    if L * T > R:
        raise FabricError("a spine needs %d ports (%d leaves x %d trunk) but "
                          "--radix is %d" % (L * T, L, T, R))
    f = Fabric("2level")
    f.top_level = 2
    hw, lw, sw_ = width(L * H, 4), width(L, 3), width(S, 2)
    hname = lambda i: "h%0*d" % (hw, i)
    lname = lambda i: "leaf-%0*d" % (lw, i)
    sname = lambda i: "spine-%0*d" % (sw_, i)
    for i in range(L * H):
        f.add(Node(hname(i), "ca", 1, 0, i))
    for l in range(L):
        f.add(Node(lname(l), "sw", R, 1, l))
    for s in range(S):
        f.add(Node(sname(s), "sw", R, 2, s))
    for l in range(L):
        for h in range(H):
            f.connect(lname(l), 1 + h, hname(l * H + h), 1)
    # leaf uplinks after the host ports, grouped by spine (parallel links of
    # one leaf-spine pair on consecutive ports); spine port per leaf likewise
    for l in range(L):
        for s in range(S):
            for t in range(T):
                f.connect(lname(l), H + 1 + s * T + t,
                          sname(s), 1 + l * T + t)
    return f


def build_dragonfly(a):
    """Groups of --leaves leaves (hosts first, then one cable to each
    spine of the group) under --spines spines; spine k of every group is
    cabled to spine k of every other group (the global cables, after the
    leaf ports).  Spines are level 2, like a two-level tree's."""
    G, L, S, H, R = a.groups, a.leaves, a.spines, a.hosts_per_leaf, a.radix
    at_least_one((("--groups", G), ("--leaves", L), ("--spines", S),
                  ("--hosts-per-leaf", H), ("--radix", R)))
    if G < 2:
        raise FabricError("--groups must be >= 2 (got %d)" % G)
    fits_ibsim(R)
    if H + S > R:
        raise FabricError("a leaf needs %d ports (%d hosts + %d spines) but "
                          "--radix is %d" % (H + S, H, S, R))
    if L + G - 1 > R:
        raise FabricError("a spine needs %d ports (%d leaves + %d other "
                          "groups) but --radix is %d"
                          % (L + G - 1, L, G - 1, R))
    f = Fabric("dragonfly")
    f.top_level = 2
    hw, gw = width(G * L * H, 4), width(G, 2)
    hname = lambda i: "h%0*d" % (hw, i)
    lname = lambda g, l: "g%0*d-leaf-%d" % (gw, g, l)
    sname = lambda g, k: "g%0*d-spine-%d" % (gw, g, k)
    for i in range(G * L * H):
        f.add(Node(hname(i), "ca", 1, 0, i))
    for g in range(G):
        for l in range(L):
            f.add(Node(lname(g, l), "sw", R, 1, g * L + l))
    for g in range(G):
        for k in range(S):
            f.add(Node(sname(g, k), "sw", R, 2, g * S + k))
    for g in range(G):
        for l in range(L):
            for h in range(H):
                f.connect(lname(g, l), 1 + h, hname((g * L + l) * H + h), 1)
            for k in range(S):
                f.connect(lname(g, l), H + 1 + k, sname(g, k), 1 + l)
    # global cables: spine k of group g, port L + 1 + (index of the other
    # group among the G - 1 others)
    for g in range(G):
        for o in range(g + 1, G):
            for k in range(S):
                f.connect(sname(g, k), L + o, sname(o, k), L + 1 + g)
    return f


def kary_digits(value, k, n):
    """value as n base-k digits, most significant first."""
    d = []
    for _ in range(n):
        d.append(value % k)
        value //= k
    return d[::-1]


def kary_value(digits, k):
    v = 0
    for x in digits:
        v = v * k + x
    return v


def build_kary(a):
    k, n = a.k, a.levels
    if k < 2:
        raise FabricError("--k must be >= 2 (got %d)" % k)
    if n < 2:
        raise FabricError("--levels must be >= 2 (got %d)" % n)
    R = a.radix if a.radix is not None else 2 * k
    if R < 2 * k:
        raise FabricError("a k-ary n-tree switch needs 2k = %d ports but "
                          "--radix is %d" % (2 * k, R))
    fits_ibsim(R)
    nsw = k ** (n - 1)          # switches per level
    nhosts = k ** n
    f = Fabric("kary")
    f.top_level = n
    hw, sww = width(nhosts, 4), width(nsw, 4)
    hname = lambda i: "h%0*d" % (hw, i)
    # our level lv = 1 (leaves) .. n (top); Petrini level = n - lv
    swname = lambda lv, i: "sw-l%d-%0*d" % (lv, sww, i)
    for i in range(nhosts):
        f.add(Node(hname(i), "ca", 1, 0, i))
    for lv in range(1, n + 1):
        for i in range(nsw):
            f.add(Node(swname(lv, i), "sw", R, lv, i))
    # hosts: host p (n digits) hangs off leaf (p0..p_{n-2}) at port 1+p_{n-1}
    for h in range(nhosts):
        f.connect(swname(1, h // k), 1 + h % k, hname(h), 1)
    # switch <w, P> (Petrini level P, w = n-1 digits) connects to
    # <w', P+1> iff w and w' agree on every digit but digit P.
    # down port of the upper switch: 1 + w'[P]; up port of the lower
    # switch: k + 1 + w[P].
    for lv in range(1, n):                  # lower switch level
        P_up = n - lv - 1                   # Petrini level of upper switch
        for i in range(nsw):
            w = kary_digits(i, k, n - 1)
            for x in range(k):
                wu = list(w)
                wu[P_up] = x
                j = kary_value(wu, k)
                f.connect(swname(lv, i), k + 1 + x,
                          swname(lv + 1, j), 1 + w[P_up])
    return f


def build_ft3(a):
    """Three-level fat tree of radix-R switches.  Pod p (0..R-1) has leaves
    leaf-p-l and middle switches mid-p-j (l, j in 0..R/2-1), every leaf
    cabled to every middle switch of its pod; top switches top-j-t form
    R/2 groups of R/2, and middle switch j of every pod is cabled to each
    top switch of group j.  Ports: leaf 1..R/2 hosts, R/2+1+j to mid j;
    mid 1+l to leaf l, R/2+1+t to top t of its group; top 1+p to pod p."""
    R = a.radix
    if R < 2 or R % 2:
        raise FabricError("--radix must be even and >= 2 (got %d)" % R)
    fits_ibsim(R)
    h = R // 2
    nhosts = R * h * h
    f = Fabric("ft3")
    f.top_level = 3
    hw, pw, iw = width(nhosts, 4), width(R, 2), width(h, 2)
    hname = lambda i: "h%0*d" % (hw, i)
    lname = lambda p, l: "leaf-%0*d-%0*d" % (pw, p, iw, l)
    mname = lambda p, j: "mid-%0*d-%0*d" % (pw, p, iw, j)
    tname = lambda j, t: "top-%0*d-%0*d" % (iw, j, iw, t)
    for i in range(nhosts):
        f.add(Node(hname(i), "ca", 1, 0, i))
    for p in range(R):
        for l in range(h):
            f.add(Node(lname(p, l), "sw", R, 1, p * h + l))
    for p in range(R):
        for j in range(h):
            f.add(Node(mname(p, j), "sw", R, 2, p * h + j))
    for j in range(h):
        for t in range(h):
            f.add(Node(tname(j, t), "sw", R, 3, j * h + t))
    for p in range(R):
        for l in range(h):
            leaf = lname(p, l)
            for x in range(h):
                f.connect(leaf, 1 + x, hname((p * h + l) * h + x), 1)
            for j in range(h):
                f.connect(leaf, h + 1 + j, mname(p, j), 1 + l)
        for j in range(h):
            for t in range(h):
                f.connect(mname(p, j), h + 1 + t, tname(j, t), 1 + p)
    return f


# 1U switch and director chassis model names by radix, as ibnetdiscover
# shows them in node descriptions ("MF0;<host>:<model>/U1")
SWITCH_MODELS = {36: ("MSB7800", "CS7520"), 40: ("MQM8700", "CS8500"),
                 64: ("MQM9700", "CS9500")}
SHARP_DESC = "Mellanox Technologies Aggregation Node"


def models(radix):
    return SWITCH_MODELS.get(radix, ("SW%d" % radix, "DIR%d" % radix))


def cluster_edges(a):
    """The edge switches of a cluster, in file order: a list of
    (pod, su, rail) with su = None for an edge without hosts.  Pods are
    consecutive; inside a pod the host edges come first, in scalable units
    of --rails edges (edge r of a unit carries rail r), then the empty
    edges."""
    P = a.pods or 1
    E, K, R = a.edges, a.empty_edges, a.rails
    if E % P or K % P:
        raise FabricError("--edges %d and --empty-edges %d must both be "
                          "multiples of --pods %d" % (E, K, P))
    if (E // P) % R:
        raise FabricError("the %d host edges per pod must be a multiple of "
                          "--rails %d (one edge per rail in each scalable "
                          "unit)" % (E // P, R))
    out = []
    su = 0
    for p in range(P):
        for i in range(E // P):
            out.append((p, su + i // R, i % R))
        su += E // P // R
        out += [(p, None, None)] * (K // P)
    if a.only_rail is not None:
        out = [e for e in out if e[2] is None or e[2] == a.only_rail]
    return out


def build_cluster(a):
    """Production-style cluster: 1U edge switches (hosts, taper, empty
    edges, rails) cabled into a core of 1U spines or director chassis
    (line and fabric ASICs as separate switches), optionally through pods
    of 1U pod spines; management HCAs on the core."""
    R, H, U = a.radix, a.hosts_per_edge, a.uplinks
    if U is None:
        U = H
    at_least_one((("--edges", a.edges), ("--radix", R), ("--uplinks", U),
                  ("--rails", a.rails)))
    for opt, val in (("--hosts-per-edge", H), ("--empty-edges", a.empty_edges),
                     ("--core-hosts", a.core_hosts), ("--pods", a.pods)):
        if val < 0:
            raise FabricError("%s must be >= 0 (got %d)" % (opt, val))
    if R > 253:
        raise FabricError("--radix %d: ibsim switches have at most 254 ports "
                          "(one more for a SHARP node)" % R)
    if R % 2:
        raise FabricError("--radix must be even (got %d)" % R)
    if H + U > R:
        raise FabricError("an edge needs %d ports (%d hosts + %d uplinks) "
                          "but --radix is %d" % (H + U, H, U, R))
    if (a.spines is None) == (a.directors is None):
        raise FabricError("give exactly one core: --spines S or "
                          "--directors D")
    if a.only_rail is not None and not 0 <= a.only_rail < a.rails:
        raise FabricError("--only-rail must be in 0..%d (got %d)"
                          % (a.rails - 1, a.only_rail))
    half = R // 2
    edges = cluster_edges(a)
    pods = a.pods or 0
    edge_model, dir_model = models(R)
    f = Fabric("cluster")
    lc = 3 if pods else 2                       # level of spines / lines
    f.top_level = lc + (1 if a.directors else 0)

    # hosts first (h0000 carries the SM), in edge order
    nodes_total = sum(1 for e in edges if e[1] is not None) * H
    nw = width(max(e[1] for e in edges if e[1] is not None) * H + H
               if nodes_total else 1, 3)
    hw = width(nodes_total + a.core_hosts, 4)
    host_of = {}
    hi = 0
    for ei, (pod, su, rail) in enumerate(edges):
        if su is None:
            continue
        for i in range(H):
            name = "h%0*d" % (hw, hi)
            f.add(Node(name, "ca", 1, 0, hi, desc="node%0*d HCA-%d"
                       % (nw, su * H + i, rail + 1)))
            host_of[(ei, i)] = name
            hi += 1
    if not f.order:
        raise FabricError("the fabric has no host: give --hosts-per-edge >= 1")
    mgmt = []
    for k in range(a.core_hosts):
        name = "h%0*d" % (hw, hi)
        f.add(Node(name, "ca", 1, 0, hi, desc="mgmt%02d HCA-1" % (k + 1)))
        mgmt.append(name)
        hi += 1

    # switches
    ew = width(len(edges), 3)
    ename = []
    for ei in range(len(edges)):
        name = "edge-%0*d" % (ew, ei)
        f.add(Node(name, "sw", R, 1, ei,
                   desc="MF0;edge%0*d:%s/U1" % (ew, ei, edge_model),
                   cable_ports={"up": (H + 1, R), "down": (1, 0)}))
        ename.append(name)
    pod_spines = []                     # per pod: list of names
    if pods:
        Sp = a.pod_spines
        if not Sp or Sp < 1:
            raise FabricError("--pods needs --pod-spines >= 1")
        for p in range(pods):
            row = []
            for j in range(Sp):
                name = "pspine-%d-%02d" % (p, j)
                f.add(Node(name, "sw", R, 2, p * Sp + j,
                           desc="MF0;pod%d-spine%02d:%s/U1"
                           % (p + 1, j + 1, edge_model),
                           cable_ports={"up": (half + 1, R),
                                        "down": (1, half)}))
                row.append(name)
            pod_spines.append(row)
    core = []                           # switches edges / pod spines cable to
    if a.spines is not None:
        if a.spines < 1:
            raise FabricError("--spines must be >= 1 (got %d)" % a.spines)
        for s_ in range(a.spines):
            name = "spine-%02d" % s_
            f.add(Node(name, "sw", R, lc, s_,
                       desc="MF0;spine%02d:%s/U1" % (s_ + 1, edge_model),
                       cable_ports={"up": (1, 0), "down": (1, R)}))
            core.append(name)
    else:
        D, N, M = a.directors, a.lines, a.fabrics
        for opt, val in (("--directors", D), ("--lines", N),
                         ("--fabrics", M)):
            if val is None or val < 1:
                raise FabricError("%s must be >= 1 (got %s)" % (opt, val))
        lines = [["dir%d-L%02d" % (d + 1, l + 1) for l in range(N)]
                 for d in range(D)]
        for d in range(D):
            for l in range(N):
                f.add(Node(lines[d][l], "sw", R, lc, d * N + l,
                           desc="MF0;dir%d:%s/L%02d/U1"
                           % (d + 1, dir_model, l + 1),
                           cable_ports={"up": (1, 0), "down": (1, half)}))
        for d in range(D):
            for m in range(M):
                f.add(Node("dir%d-S%02d" % (d + 1, m + 1), "sw", R, lc + 1,
                           d * M + m, desc="MF0;dir%d:%s/S%02d/U1"
                           % (d + 1, dir_model, m + 1),
                           cable_ports={"up": (1, 0), "down": (1, 0)}))
        # line ASIC: front-panel ports 1..R/2, ports R/2+1..R to the fabric
        # ASICs of its chassis in turn, each line starting where the last
        # one stopped, so every fabric ASIC gets N * R/2 / M links or one
        # more
        for d in range(D):
            for l in range(N):
                for k in range(half):
                    fab = "dir%d-S%02d" % (d + 1, (l * half + k) % M + 1)
                    fp = next((p for p in range(1, R + 1)
                               if p not in f.nodes[fab].ports), None)
                    if fp is None:
                        raise FabricError(
                            "a director fabric ASIC would need %d ports "
                            "(%d line ASICs x %d internal links / %d fabric "
                            "ASICs) but --radix is %d: raise --fabrics or "
                            "lower --lines" % (-(-N * half // M), N, half, M,
                                               R))
                    f.connect(lines[d][l], half + 1 + k, fab, fp)
                    f.internal.add((lines[d][l], half + 1 + k))
                    f.internal.add((fab, fp))
        # interleave the chassis: an edge's uplinks alternate directors
        core = [lines[d][l] for l in range(N) for d in range(D)]

    def cable_up(lower, lport, upper, what):
        up = f.free_cable_port(upper, "down")
        if up is None:
            raise FabricError("%s %s has no free port left for %s: use "
                              "fewer --uplinks or a larger core"
                              % ("switch", upper, what))
        f.connect(lower, lport, upper, up)

    # edge uplinks: edge number i of its group (pod, or the whole fabric)
    # sends uplink j to target (i*U + j) mod #targets, so consecutive edges
    # use rotating subsets of the targets when U < #targets
    groups = {}
    for ei, (pod, su, rail) in enumerate(edges):
        groups.setdefault(pod if pods else 0, []).append(ei)
    for g, members in sorted(groups.items()):
        targets = pod_spines[g] if pods else core
        for i, ei in enumerate(members):
            if edges[ei][1] is not None:
                for x in range(H):
                    f.connect(ename[ei], 1 + x, host_of[(ei, x)], 1)
            for j in range(U):
                cable_up(ename[ei], H + 1 + j,
                         targets[(i * U + j) % len(targets)],
                         "%s uplink %d" % (ename[ei], j + 1))
    if pods:
        for p in range(pods):
            for j, ps in enumerate(pod_spines[p]):
                down = sum(1 for q in f.nodes[ps].ports if q <= half)
                up = a.pod_uplinks if a.pod_uplinks is not None else down
                if up < 1 or half + up > R:
                    raise FabricError("a pod spine has %d up ports (radix "
                                      "%d); --pod-uplinks %d does not fit"
                                      % (R - half, R, up))
                for k in range(up):
                    cable_up(ps, half + 1 + k,
                             core[(j * up + k) % len(core)],
                             "%s uplink %d" % (ps, k + 1))
    idle = [sw.name for sw in f.switches()
            if not any(f.nodes[r].kind == "sw" for r, _ in sw.ports.values())]
    if idle:
        raise FabricError("%s would have no cable to another switch: the "
                          "%s reach only %d of the %d core switches (give "
                          "fewer --spines, or more %s)"
                          % (", ".join(idle[:3]) +
                             (" and %d more" % (len(idle) - 3)
                              if len(idle) > 3 else ""),
                             "pod spines' uplinks" if pods else
                             "edges' uplinks", len(core) - len(idle),
                             len(core), "--pod-uplinks or --pod-spines"
                             if pods else "--edges or --uplinks"))
    for k, h in enumerate(mgmt):
        for t in range(len(core)):
            sw = core[(k + t) % len(core)]
            p = f.free_cable_port(sw, "down")
            if p is not None:
                f.connect(sw, p, h, 1)
                break
        else:
            raise FabricError("no free core port for management HCA %d of "
                              "--core-hosts %d" % (k + 1, a.core_hosts))
    ids = {s.name: i for i, s in enumerate(f.switches())}
    prob, _ = routable_problem(f, ids)
    if prob:
        raise FabricError("the fabric is not up/down routable: %s (give "
                          "every edge uplinks to targets it shares with "
                          "every other edge)" % prob)
    return f


def build_seed(a):
    T, H, N, R = a.trunk, a.hosts, a.near_hosts, a.radix
    at_least_one((("--trunk", T), ("--hosts", H), ("--near-hosts", N)))
    fits_ibsim(R)
    if N + T > R or H + T > R:
        raise FabricError("a switch needs %d ports but --radix is %d"
                          % (max(N + T, H + T), R))
    f = Fabric("seed-example")
    f.top_level = 1
    hw = width(N + H, 4)
    hname = lambda i: "h%0*d" % (hw, i)
    for i in range(N + H):
        f.add(Node(hname(i), "ca", 1, 0, i))
    f.add(Node("sw-near", "sw", R, 1, 0))
    f.add(Node("sw-far", "sw", R, 1, 1))
    for i in range(N):
        f.connect("sw-near", 1 + i, hname(i), 1)
    for i in range(H):
        f.connect("sw-far", 1 + i, hname(N + i), 1)
    for t in range(T):
        f.connect("sw-near", N + 1 + t, "sw-far", H + 1 + t)
    return f


# ------------------------------------------------------------ degradation

def up_sets(f, ids):
    """For every switch: bitmask of the switches reachable by up-moves only
    (itself included), following the remaining links."""
    sws = sorted(f.switches(), key=lambda s: -s.level)
    up = {}
    for sw in sws:
        m = 1 << ids[sw.name]
        for p, (r, _) in sw.ports.items():
            rn = f.nodes[r]
            if rn.kind == "sw" and rn.level > sw.level:
                m |= up[r]
        up[sw.name] = m
    return up


def routable_problem(f, ids, changed=None, prev_up=None):
    """Return None if the fabric is up/down-routable among its leaves:
    every non-top switch keeps an uplink and every pair of leaves has a
    common ancestor reachable by up-moves (then opensm's updn ranks equal
    our levels and every host pair has an up*/down* path).  Otherwise a
    short description.  Also returns the up sets."""
    up = up_sets(f, ids)
    for sw in f.switches():
        if sw.level < f.top_level and not any(
                f.nodes[r].kind == "sw" and f.nodes[r].level > sw.level
                for r, _ in sw.ports.values()):
            return "%s would lose all its uplinks" % sw.name, up
    leaves = [s.name for s in f.switches() if s.level == 1]
    if changed is None:
        check = leaves
    else:
        check = [l for l in leaves if up[l] != prev_up.get(l)]
    for a in check:
        ua = up[a]
        for b in leaves:
            if not ua & up[b]:
                return ("%s and %s would have no common up-ancestor"
                        % (a, b)), up
    return None, up


def connected_problem(f):
    names = list(f.nodes)
    if not names:
        return "fabric is empty"
    seen = {names[0]}
    stack = [names[0]]
    while stack:
        n = stack.pop()
        for r, _ in f.nodes[n].ports.values():
            if r not in seen:
                seen.add(r)
                stack.append(r)
    if len(seen) != len(names):
        lost = sorted(set(names) - seen)
        return "%s would be disconnected" % lost[0]
    return None


def remove_links(f, fraction, rng, mode, log):
    if not 0 <= fraction < 1:
        raise FabricError("--remove-links must be in [0, 1) (got %g)"
                          % fraction)
    links = f.external_isl()
    want = int(round(fraction * len(links)))
    if want == 0:
        return []
    ids = {s.name: i for i, s in enumerate(f.switches())}
    rng.shuffle(links)
    removed = []
    _, up = routable_problem(f, ids)
    for (a, pa, b, pb) in links:
        if len(removed) == want:
            break
        f.disconnect(a, pa)
        if mode == "updn":
            prob, nup = routable_problem(f, ids, changed=True, prev_up=up)
        else:
            prob, nup = connected_problem(f), up
        if prob:
            f.connect(a, pa, b, pb)      # keep it
            continue
        up = nup
        removed.append((a, pa, b, pb))
    if len(removed) < want:
        raise FabricError("could remove only %d of the %d requested "
                          "inter-switch links while keeping the fabric %s"
                          % (len(removed), want,
                             "up/down routable" if mode == "updn"
                             else "connected"))
    for (a, pa, b, pb) in sorted(removed):
        log.append("removed link %s[%d] - %s[%d]" % (a, pa, b, pb))
    return removed


def parse_switch_removal(spec, f):
    """'N' -> N random non-leaf switches; 'LEVEL:N[,LEVEL:N...]' per level."""
    spec = spec.strip()
    if re.fullmatch(r"\d+", spec):
        return [(None, int(spec))]
    out = []
    for part in spec.split(","):
        m = re.fullmatch(r"\s*(\d+)\s*:\s*(\d+)\s*", part)
        if not m:
            raise FabricError("--remove-switches: expected N or LEVEL:N[,...], "
                              "got %r" % spec)
        lv, n = int(m.group(1)), int(m.group(2))
        if lv < 2 or lv > f.top_level:
            raise FabricError("--remove-switches: level %d is not a non-leaf "
                              "switch level (2..%d)" % (lv, f.top_level))
        out.append((lv, n))
    return out


def remove_switches(f, spec, rng, mode, log):
    plan = parse_switch_removal(spec, f)
    ids = {s.name: i for i, s in enumerate(f.switches())}
    removed = []
    for lv, n in plan:
        cands = [s.name for s in f.switches()
                 if s.level >= 2 and (lv is None or s.level == lv)]
        rng.shuffle(cands)
        got = 0
        for name in cands:
            if got == n:
                break
            node = f.nodes[name]
            if any(f.nodes[r].kind == "ca" for r, _ in node.ports.values()):
                continue            # keep switches that carry HCAs
            saved = [(name, p, r, rp)
                     for p, (r, rp) in sorted(node.ports.items())]
            pos = f.order.index(name)
            f.remove_node(name)
            if mode == "updn":
                prob, _ = routable_problem(f, ids)
            else:
                prob = connected_problem(f)
            if prob:
                f.nodes[name] = node
                f.order.insert(pos, name)
                for (a, pa, b, pb) in saved:
                    f.connect(a, pa, b, pb)
                continue
            removed.append(name)
            got += 1
        if got < n:
            raise FabricError("could remove only %d of %d %s switches while "
                              "keeping the fabric %s"
                              % (got, n, "non-leaf" if lv is None
                                 else "level-%d" % lv,
                                 "up/down routable" if mode == "updn"
                                 else "connected"))
    for name in sorted(removed):
        log.append("removed switch %s" % name)
    return removed


# ------------------------------------------------------------------ GUIDs

def assign_guids(f, rand, seed, extra=()):
    """Give every node its GUID; extra = [(name, kind)] of nodes added
    later (SHARP nodes), numbered after all others so that they do not
    change the GUIDs of the rest.  Returns {name: guid} of the extra."""
    out = {}
    if not rand:
        ns = nc = 0
        items = [(n, f.nodes[n].kind) for n in f.order] + list(extra)
        for name, kind in items:
            if kind == "sw":
                g = SEQ_SW_BASE + GUID_STEP * ns
                ns += 1
            else:
                g = SEQ_CA_BASE + GUID_STEP * nc
                nc += 1
            if name in f.nodes and f.nodes[name].kind == kind:
                f.nodes[name].guid = g
            else:
                out[name] = g
        return out
    # One GUID per node, drawn from a seeded RNG of its own (so removing
    # links/switches does not change the GUIDs of the remaining nodes).
    # GUIDs are multiples of GUID_STEP below the vendor prefix: a CA uses
    # guid..guid+nports (ibsim reserves nports+1), which never reaches the
    # next multiple as nports < GUID_STEP.
    rng = random.Random("gen-fabric-guids-%d" % seed)
    used = set()
    for name in list(f.order) + [n for n, _ in extra]:
        while True:
            g = (OUI << 40) | (rng.getrandbits(36) * GUID_STEP)
            if g not in used and g & ((1 << 40) - 1):
                break
        used.add(g)
        if name in f.nodes:
            f.nodes[name].guid = g
        else:
            out[name] = g
    return out


def sharp_name(switch):
    return "an-" + switch


def add_sharp_ports(f):
    """One more port on every switch for its SHARP aggregation node (as
    real switches show it: port 37 of a 36-port, 65 of a 64-port ASIC);
    cables keep to the ports below it."""
    for sw in f.switches():
        if sw.cable_ports is None:
            sw.cable_ports = {"up": (1, sw.nports), "down": (1, sw.nports)}
        sw.nports += 1


def add_sharp_nodes(f, guids):
    """A CA "Mellanox Technologies Aggregation Node" on the last port of
    every (remaining) switch ASIC, appended to the file order."""
    for sw in f.switches():
        name = sharp_name(sw.name)
        n = f.add(Node(name, "ca", 1, 0, len(f.order), desc=SHARP_DESC))
        n.guid = guids[name]
        f.connect(sw.name, sw.nports, name, 1)


def double_links(f, fraction, rng, log):
    """Add a parallel cable next to round(fraction x cables) random
    inter-switch cables (chassis-internal ones excluded), on the lowest
    free cable port of each end."""
    if not 0 <= fraction <= 1:
        raise FabricError("--double-links must be in [0, 1] (got %g)"
                          % fraction)
    links = f.external_isl()
    want = int(round(fraction * len(links)))
    if want == 0:
        return []
    rng.shuffle(links)
    done = []
    for (a, pa, b, pb) in links:
        if len(done) == want:
            break
        qa = f.free_cable_port(a, "up")
        qb = f.free_cable_port(b, "down")
        if qa is None or qb is None:
            continue
        f.connect(a, qa, b, qb)
        done.append((a, pa, b, pb, qa, qb))
    if len(done) < want:
        raise FabricError("could double only %d of the %d requested "
                          "inter-switch links (no free ports left; raise "
                          "--radix)" % (len(done), want))
    for (a, pa, b, pb, qa, qb) in sorted(done):
        log.append("doubled link %s[%d] - %s[%d]: added %s[%d] - %s[%d]"
                   % (a, pa, b, pb, a, qa, b, qb))
    return done


# ------------------------------------------------------------------ output

def render(f, cmdline, description, log, link):
    out = []
    out.append("# generated by gen-fabric: do not edit, regenerate instead")
    out.append("# command: %s" % cmdline)
    for line in description:
        out.append("# %s" % line)
    hosts, sws = f.hosts(), f.switches()
    out.append("# hosts %d, switches %d, inter-switch links %d"
               % (len(hosts), len(sws), len(f.isl())))
    for line in log:
        out.append("# %s" % line)
    if f.kind == "seed-example":
        tops = [f.nodes["sw-near"]]     # one root suffices for updn
    else:
        tops = [s for s in sws if s.level == f.top_level]
    if True:
        for s in tops:
            out.append("# updn-root 0x%016x %s" % (s.guid, s.name))
    out.append("")
    order = list(f.order)
    # host h0000 first: it carries the SM port
    first = hosts[0].name
    order.remove(first)
    order.insert(0, first)
    for name in order:
        n = f.nodes[name]
        # a node description other than the name goes into the comment
        # after the header, where ibsim (like ibnetdiscover) reads it
        if n.kind == "sw":
            out.append("switchguid=0x%016x" % n.guid)
            out.append('Switch %d "%s"' % (n.nports, n.name) +
                       ('\t\t# "%s" enhanced port 0 lid 0 lmc 0' % n.desc
                        if n.desc else ""))
        else:
            out.append("caguid=0x%016x" % n.guid)
            out.append('Hca %d "%s"' % (n.nports, n.name) +
                       ('\t\t# "%s"' % n.desc if n.desc else ""))
        for p in sorted(n.ports):
            r, rp = n.ports[p]
            # the trailing "lid N WxSPEED" comment is what ibsim expects
            # after a port (as in ibnetdiscover output); without it ibsim
            # warns once per port line
            out.append('[%d]\t"%s"[%d]\t\t# lid 0 %s' % (p, r, rp, link))
        out.append("")
    return "\n".join(out)


def describe(f, a):
    if f.kind == "2level":
        S, T, H = a.spines, a.trunk, a.hosts_per_leaf
        up = S * T
        ratio = "%d:%d" % (H, up) if H != up else "1:1 (full bisection)"
        return ["two-level fat tree: %d leaves (leaf-*), %d spines (spine-*), "
                "%d hosts per leaf, %d parallel link(s) per leaf-spine pair"
                % (a.leaves, S, H, T),
                "switch radix %d; leaf ports 1..%d hosts, %d..%d uplinks "
                "grouped by spine; oversubscription %s"
                % (a.radix, H, H + 1, H + up, ratio)]
    if f.kind == "kary":
        k, n = a.k, a.levels
        return ["k-ary n-tree k=%d n=%d: %d hosts, %d switches (%d per level, "
                "sw-l1-* leaves .. sw-l%d-* top)"
                % (k, n, k ** n, n * k ** (n - 1), k ** (n - 1), n),
                "switch radix %d; ports 1..%d down, %d..%d up (top level: "
                "down ports only)" % (a.radix or 2 * k, k, k + 1, 2 * k)]
    if f.kind == "ft3":
        R = a.radix
        h = R // 2
        return ["three-level fat tree of radix-%d switches: %d pods of %d "
                "leaves (leaf-POD-I) and %d middle switches (mid-POD-J), "
                "%d top switches (top-J-T, %d groups of %d), %d hosts"
                % (R, R, h, h, h * h, h, h, R * h * h),
                "leaf ports 1..%d hosts, %d..%d up to mid 0..%d of the pod; "
                "mid ports 1..%d leaves, %d..%d up to top group J; top "
                "port 1+POD down" % (h, h + 1, R, h - 1, h, h + 1, R)]
    if f.kind == "cluster":
        return describe_cluster(f, a)
    if f.kind == "dragonfly":
        return ["dragonfly: %d groups of %d leaves (gGG-leaf-L, %d hosts "
                "each on ports 1..%d, spine k on port %d+k) under %d spines "
                "(gGG-spine-K, leaves on ports 1..%d); spine k of each group "
                "is cabled to spine k of every other group (ports %d..%d)"
                % (a.groups, a.leaves, a.hosts_per_leaf, a.hosts_per_leaf,
                   a.hosts_per_leaf + 1, a.spines, a.leaves, a.leaves + 1,
                   a.leaves + a.groups - 1),
                "no switch sees nearly every host at one distance: updn's "
                "root detection finds none; the updn-root lines name the "
                "spines, for a root_guid_file"]
    return ["seed example: sw-near (%d host(s), SM on h0000) joined to sw-far "
            "(%d hosts) by %d parallel links; route with LMC=2"
            % (a.near_hosts, a.hosts, a.trunk)]


def describe_cluster(f, a):
    R, H = a.radix, a.hosts_per_edge
    U = a.uplinks if a.uplinks is not None else H
    nedge = sum(1 for s in f.switches() if s.name.startswith("edge-"))
    nempty = sum(1 for s in f.switches() if s.name.startswith("edge-")
                 and not any(f.nodes[r].kind == "ca" and
                             f.nodes[r].desc != SHARP_DESC
                             for r, _ in s.ports.values()))
    out = ["cluster of radix-%d switches: %d edge switches (edge-*, %d "
           "without hosts), %d HCA ports per host edge on ports 1..%d, "
           "%d uplinks on ports %d..%d (taper %d:%d)"
           % (R, nedge, nempty, H, H, U, H + 1, H + U, H, U)]
    if a.rails > 1:
        out.append("%d rails: scalable units of %d consecutive host edges, "
                   "edge r of a unit carries HCA-(r+1) of its nodes%s"
                   % (a.rails, a.rails, "" if a.only_rail is None else
                      "; only rail %d (HCA-%d) is built, a separate tree"
                      % (a.only_rail, a.only_rail + 1)))
    if a.pods:
        out.append("%d pods of %d edges and %d pod spines (pspine-POD-J, "
                   "ports 1..%d down, %d.. up); edge i of a pod sends uplink j "
                   "to pod spine (i*%d + j) mod %d"
                   % (a.pods, nedge // a.pods, a.pod_spines, R // 2,
                      R // 2 + 1, U, a.pod_spines))
    if a.spines is not None:
        out.append("core: %d 1U spines (spine-*); %s i sends uplink j to "
                   "spine (i*%d + j) mod %d"
                   % (a.spines, "pod spine" if a.pods else "edge",
                      a.pod_uplinks or U if a.pods else U, a.spines))
    else:
        out.append("core: %d director(s), each %d line ASICs (dirD-LNN, "
                   "front ports 1..%d) fully wired to %d fabric ASICs "
                   "(dirD-SNN) by ports %d..%d; uplinks go to the line ASICs "
                   "in turn, alternating chassis"
                   % (a.directors, a.lines, R // 2, a.fabrics, R // 2 + 1, R))
    if a.core_hosts:
        out.append("%d management HCA(s) (mgmtNN HCA-1) cabled to the core"
                   % a.core_hosts)
    return out


def generate(a, argv):
    if a.fabric == "2level":
        f = build_2level(a)
    elif a.fabric == "kary":
        f = build_kary(a)
    elif a.fabric == "ft3":
        f = build_ft3(a)
    elif a.fabric == "cluster":
        f = build_cluster(a)
    elif a.fabric == "dragonfly":
        f = build_dragonfly(a)
    else:
        f = build_seed(a)
    extra = []
    if a.sharp:
        add_sharp_ports(f)
        extra = [(sharp_name(s.name), "ca") for s in f.switches()]
    # GUIDs first: removals must not change the GUIDs of remaining nodes
    sharp_guids = assign_guids(f, a.random_guids, a.seed, extra)
    log = []
    # a dragonfly's groups share no up-ancestor: removals keep it connected
    keep = "connected" if f.kind == "dragonfly" else a.keep
    if a.remove_switches:
        if f.top_level < 2:
            raise FabricError("--remove-switches needs a fabric with non-leaf "
                              "switches")
        remove_switches(f, a.remove_switches,
                        random.Random("gen-fabric-switches-%d" % a.seed),
                        keep, log)
    # doubled cables first, so that a missing cable may be one of a pair
    if a.double_links:
        double_links(f, a.double_links,
                     random.Random("gen-fabric-double-%d" % a.seed), log)
    if a.remove_links:
        remove_links(f, a.remove_links,
                     random.Random("gen-fabric-links-%d" % a.seed), keep,
                     log)
    desc = describe(f, a)
    if a.sharp:
        add_sharp_nodes(f, sharp_guids)
        desc.append("SHARP: one aggregation node (an-SWITCH, \"%s\") on the "
                    "last port of each of the %d switches"
                    % (SHARP_DESC, len(f.switches())))
    cmd = " ".join(shlex.quote(x) for x in ["gen-fabric"] + argv)
    return f, render(f, cmd, desc, log, a.link) + "\n"
