"""Route checks on forwarding tables, and verdicts read from an OpenSM log.

Route checks take a Topology and Lfts from osmoffset.fabric:

  reachability(topo, lfts, lmc)   -> list of problem strings ([] = good)
  candidate_groups(topo)          -> per switch: minimum-hop port set ->
                                     destination CA ports
  base_lid_spread(topo, lfts, lmc) -> per switch and candidate group (of
                                     more than one port): base LIDs per port
  laminar_switches(groups)        -> switches whose candidate port sets are
                                     pairwise equal or disjoint
  load_lid_matrix(path), candidate_groups_from_lid_matrix(topo, matrix)
                                  -> the same groups from the hop counts
                                     OpenSM's engine used

Log verdicts take the text of an OpenSM log (-D 0x43 or more):

  osm_log_summary(text)           -> engine used, failed engines, ...
  plugin_log_problems(text, mode) -> list of problem strings ([] = good)
"""

import re
from collections import deque

__all__ = [
    "reachability", "candidate_groups", "base_lid_spread", "laminar_switches",
    "ca_lids", "leaf_switches", "load_lid_matrix",
    "candidate_groups_from_lid_matrix", "osm_log_summary",
    "plugin_log_problems",
]

DROP_PORT = 255     # OpenSM's "no route" LFT entry


def _name(topo, guid):
    n = topo.nodes.get(guid)
    if n is not None and n.desc:
        return "%s (0x%016x)" % (n.desc, guid)
    return "0x%016x" % guid


def _lmc(topo, lfts, lmc):
    if lmc is not None:
        return lmc
    for v in (getattr(lfts, "lmc", None), getattr(topo, "lmc", None)):
        if v is not None:
            return v
    return 0


def ca_lids(topo, lmc):
    """{LID: CA port GUID} for every LID (base and LMC) of every CA port."""
    out = {}
    for ca in topo.cas():
        if ca.lid:
            for k in range(1 << lmc):
                out[ca.lid + k] = ca.guid
    return out


# ----------------------------------------------------------------------
# Reachability
# ----------------------------------------------------------------------

def leaf_switches(topo):
    """GUIDs of the switches that have at least one CA attached."""
    out = set()
    for ca in topo.cas():
        leaf = _leaf_of(topo, ca)
        if leaf is not None:
            out.add(leaf[0])
    return out


def reachability(topo, lfts, lmc=None, include_switches=False,
                 sources=None):
    """Follow the LFTs from every switch (or only from the switch GUIDs in
    sources, e.g. leaf_switches(topo) for CA-to-CA routes) to every CA LID
    (all 2^lmc LIDs of each port) and, with include_switches, to every
    switch base LID.

    Returns a list of problems, one string each, sorted: switches of the
    topology without an LFT, missing entries (dead ends), entries out of a
    port that has no link or whose link is down, delivery to the wrong
    node, and forwarding loops.  Each (switch, LID) failure is reported
    once, at the switch where the walk goes wrong.

    This is the analyzer's engine (osmoffset.validity, numpy) with these
    texts; the LIDs and hosts are those of osmoffset.model.FabricModel
    (CA ports cabled to a switch).
    """
    from .validity import reachability as _reach
    return _reach(topo, lfts, lmc, include_switches, sources)


# ----------------------------------------------------------------------
# Candidate groups and base-LID spread
# ----------------------------------------------------------------------

def _switch_graph(topo):
    """{switch guid: [(port, remote switch guid)]} over active links."""
    graph = {}
    for sw in topo.switches():
        lst = []
        for port, rg, _rp in topo.neighbors(sw.guid):
            rn = topo.nodes.get(rg)
            if rn is not None and rn.kind == "SW" and \
                    (sw.guid, port) not in topo.down:
                lst.append((port, rg))
        graph[sw.guid] = lst
    return graph


def _hops_to(graph, dest):
    dist = {dest: 0}
    q = deque([dest])
    while q:
        g = q.popleft()
        for _p, rg in graph[g]:
            if rg not in dist:
                dist[rg] = dist[g] + 1
                q.append(rg)
    return dist


def _leaf_of(topo, ca):
    """(switch guid, switch port) the CA port hangs off, or None."""
    remote = topo.links.get((ca.guid, ca.port))
    if remote is None or (ca.guid, ca.port) in topo.down:
        return None
    node = topo.nodes.get(remote[0])
    if node is None or node.kind != "SW":
        return None
    return remote


def _cas_by_leaf(topo):
    """{leaf switch GUID: [(CA, leaf port)]} for the CAs with a LID that
    hang off a switch."""
    by_leaf = {}
    for ca in topo.cas():
        if not ca.lid:
            continue
        leaf = _leaf_of(topo, ca)
        if leaf is not None:
            by_leaf.setdefault(leaf[0], []).append((ca, leaf[1]))
    return by_leaf


def candidate_groups(topo):
    """Per switch, the CA destinations grouped by their set of minimum-hop
    egress ports.

    Returns {switch guid: {tuple of ports (sorted): [CA port GUIDs sorted
    by base LID]}}.  Hop counts come from a breadth-first search over the
    switch graph toward the destination's leaf switch; the egress ports of
    a switch are those whose remote switch is one hop nearer.  On the leaf
    switch itself the set is the one port the CA hangs off.  CAs without a
    LID or without a link to a switch are left out.
    """
    graph = _switch_graph(topo)
    by_leaf = _cas_by_leaf(topo)
    groups = {g: {} for g in graph}
    for leaf, cas in by_leaf.items():
        dist = _hops_to(graph, leaf)
        for g, adj in graph.items():
            if g == leaf:
                for ca, port in cas:
                    groups[g].setdefault((port,), []).append(ca)
                continue
            if g not in dist:
                continue
            ports = tuple(sorted({p for p, rg in adj
                                  if dist.get(rg) == dist[g] - 1}))
            groups[g].setdefault(ports, []).extend(ca for ca, _p in cas)
    out = {}
    for g, gr in groups.items():
        out[g] = {ports: [ca.guid for ca in sorted(cas, key=lambda c: c.lid)]
                  for ports, cas in gr.items()}
    return out


_LM_SWITCH = re.compile(r"^Switch: guid (0x[0-9a-fA-F]+)\s*$")
_LM_ROW = re.compile(r"^0x([0-9a-fA-F]+):((?:\s+[0-9a-fA-F]{2})+)\s*(#.*)?$")


def load_lid_matrix(path):
    """Read OpenSM's opensm-lid-matrix.dump: the hop counts the routing
    engine used (up/down-constrained for updn), from every switch port to
    every switch LID.

    Returns {switch guid: {switch LID: {port: hops}}}, ports with hop
    count 0xff (no path) left out.  Raises osmoffset.fabric.InputError
    naming file and line on garbled input.
    """
    from osmoffset.fabric import InputError
    res = {}
    cur = None
    try:
        with open(path, errors="replace") as f:
            lines = f.read().splitlines()
    except OSError as exc:
        raise InputError(path, 0, "cannot read: %s" % exc.strerror)
    for i, line in enumerate(lines, 1):
        if not line.strip():
            continue
        m = _LM_SWITCH.match(line)
        if m:
            cur = res.setdefault(int(m.group(1), 16), {})
            continue
        m = _LM_ROW.match(line)
        if not m:
            raise InputError(path, i, "garbled LID matrix line: %r"
                             % line[:60])
        if cur is None:
            raise InputError(path, i, "LID matrix row before any "
                             "'Switch: guid' line")
        hops = [int(h, 16) for h in m.group(2).split()]
        cur[int(m.group(1), 16)] = {p: h for p, h in enumerate(hops)
                                    if h != 0xff}
    if not res:
        raise InputError(path, len(lines), "no 'Switch: guid' block found")
    return res


def candidate_groups_from_lid_matrix(topo, matrix):
    """Like candidate_groups, but the egress ports are those the routing
    engine itself saw as minimum-hop: the ports with the least hop count
    toward the destination's leaf switch in OpenSM's LID matrix (see
    load_lid_matrix).  For updn on a degraded fabric these differ from a
    plain breadth-first search."""
    by_leaf = _cas_by_leaf(topo)
    groups = {}
    for g in (n.guid for n in topo.switches()):
        gr = groups.setdefault(g, {})
        rows = matrix.get(g, {})
        for leaf, cas in by_leaf.items():
            if g == leaf:
                for ca, port in cas:
                    gr.setdefault((port,), []).append(ca)
                continue
            hops = {p: h for p, h in rows.get(topo.nodes[leaf].lid,
                                               {}).items() if p != 0}
            if not hops:
                continue
            least = min(hops.values())
            ports = tuple(sorted(p for p, h in hops.items() if h == least))
            gr.setdefault(ports, []).extend(ca for ca, _p in cas)
    return {g: {ports: [ca.guid for ca in sorted(cas, key=lambda c: c.lid)]
                for ports, cas in gr.items()}
            for g, gr in groups.items()}


def laminar_switches(groups):
    """Switches whose candidate port sets are pairwise equal or disjoint
    (so an even base-LID spread is achievable in every group at once)."""
    ok = set()
    for g, gr in groups.items():
        sets = [set(p) for p in gr]
        if all(a == b or not (a & b) for i, a in enumerate(sets)
               for b in sets[i + 1:]):
            ok.add(g)
    return ok


def base_lid_spread(topo, lfts, lmc=None, groups=None):
    """Per switch and candidate group of more than one port, how many base
    LIDs leave through each port of the group.

    Returns a list of dicts sorted by switch description and ports:
      switch   switch node GUID        desc   its description
      ports    tuple of the group's ports
      dests    number of destinations (CA ports) in the group
      counts   {port: base LIDs routed out of that port} (every group port
               present, zeros included)
      spread   max(counts) - min(counts)
      outside  base LIDs of the group routed out of a port not in the group
               (or not routed); 0 for a minimum-hop engine
      all_counts {port: all LIDs (base and LMC)} for comparison
    """
    lmc = _lmc(topo, lfts, lmc)
    if groups is None:
        groups = candidate_groups(topo)
    res = []
    for g, gr in groups.items():
        sw = lfts.switches.get(g)
        if sw is None:
            continue
        for ports, cas in gr.items():
            if len(ports) < 2:
                continue
            counts = {p: 0 for p in ports}
            all_counts = {p: 0 for p in ports}
            outside = 0
            for cg in cas:
                base = topo.nodes[cg].lid
                p = sw.lft.get(base)
                if p in counts:
                    counts[p] += 1
                else:
                    outside += 1
                for k in range(1 << lmc):
                    p = sw.lft.get(base + k)
                    if p in all_counts:
                        all_counts[p] += 1
            res.append({
                "switch": g, "desc": topo.nodes[g].desc, "ports": ports,
                "dests": len(cas), "counts": counts,
                "spread": max(counts.values()) - min(counts.values()),
                "outside": outside, "all_counts": all_counts,
            })
    res.sort(key=lambda r: (r["desc"], r["switch"], r["ports"]))
    return res


# ----------------------------------------------------------------------
# OpenSM log verdicts
# ----------------------------------------------------------------------

_CONFIGURED = re.compile(r"(\S+) tables configured on all switches")
_ENGINE_FAIL = re.compile(r"ucast_mgr_route: (\S+): cannot build ([^\n]*)")
# the stock guard kept port offsetting's tables, or a mix, for reach
# though they score lower than stock in a cell
_REACH_FIRST = re.compile(r"stock guard: the tables that won leave \d+ CA "
                          r"LIDs without a route [^\n]*(go on, though they "
                          r"score|goes on, though it scores) lower")
_LOADED = re.compile(r"osmoffset (\S+) loaded: port_offsetting=(\S+)")


def osm_log_summary(text):
    """What an OpenSM log says about routing.

    Returns a dict: engine_used (the engine named in the last "<engine>
    tables configured on all switches" line, or None), failed_engines
    (engines that logged "cannot build ..."), no_engine (OpenSM logged that
    no routing engine could configure the switches), subnet_up,
    reach_first (the plugin's stock guard kept port offsetting's tables,
    or a mix, for reach though they score lower than stock in a cell).
    """
    used = _CONFIGURED.findall(text)
    return {
        "engine_used": used[-1] if used else None,
        "failed_engines": [m[0] for m in _ENGINE_FAIL.findall(text)],
        "no_engine": "No routing engine able to successfully configure"
                     in text,
        "subnet_up": "SUBNET UP" in text,
        "reach_first": bool(_REACH_FIRST.search(text)),
    }


def _log_line(text, needle):
    for line in text.splitlines():
        if needle in line:
            m = re.search(r"-> (.*)$", line)
            return (m.group(1) if m else line).strip()
    return None


def plugin_log_problems(text, mode):
    """Check an OpenSM log for the osmoffset plugin having loaded with the
    requested port_offsetting mode ('on', 'off' or a rule name such as
    'plain').  Returns a list of problems ([] = loaded as asked)."""
    problems = []
    for needle in ("Failed to open event plugin", "Error loading plugin",
                   "OpenSM version mismatch"):
        line = _log_line(text, needle)
        if line and line not in problems:
            problems.append(line)
    for line in text.splitlines():
        if re.search(r"ERR 9F[0-9A-F]{2}", line):
            m = re.search(r"-> (.*)$", line)
            problems.append((m.group(1) if m else line).strip())
    loaded = _LOADED.findall(text)
    if not loaded:
        problems.append("the log has no 'osmoffset ... loaded' line: the "
                        "plugin did not load")
        return problems
    rule = loaded[-1][1]
    if mode == "off" and rule != "off":
        problems.append("plugin loaded with port_offsetting=%s, not off"
                        % rule)
    elif mode == "on" and rule == "off":
        problems.append("plugin loaded with port_offsetting=off, not on")
    elif mode not in ("on", "off") and rule != mode:
        problems.append("plugin loaded with port_offsetting=%s, not %s"
                        % (rule, mode))
    return problems
