"""Rank orders of the hosts of a fabric, and hostfiles that name them.

The hosts of a topology are its CA ports that are cabled to a switch.  An
order is a list of those hosts, rank 0 first:

  leaf    routing order: hosts grouped by the switch they hang off, the
          leaves in the order of their names (node descriptions, natural
          sort, so IBLEAF-2 < IBLEAF-10), leaves of one name in the order
          of the first host name behind them, hosts of one switch by switch
          port number; management HCAs on spines first, SHARP aggregation
          nodes last, as lft-analyze ranks them (routing_order_key()).
          osmoffset's coordinated rule spreads the destinations in this
          order, so a shift alltoall in it is free of link contention on a
          full fat tree.
  random  the hosts shuffled by Python's random.Random(seed).
  leaf-shuffled
          the hosts grouped by leaf as in leaf, the leaves in an order
          shuffled by Python's random.Random(seed) (shuffle_leaves()): a
          scheduler or analyzer that keeps each leaf's hosts together but
          takes the leaves in an order of its own (the dump's, the
          switches' GUIDs').  The routing's leaf order is one of many.
  guid    by port GUID: what a scheduler that sorts by GUID or LID gives.
  file    the hosts grouped by leaf and by port as in leaf, the leaves in
          the order the topology file first lists their switches (an
          ibnetdiscover dump's, OpenSM's subnet.lst's): an analyzer or
          scheduler that walks the file.

read_hostfile() reads an MPI hostfile into a rank order (see its text for
the rule every osmoffset tool follows).
"""

from __future__ import annotations

import random
import re
from typing import Dict, List, Optional

from .fabric import InputError, Topology
from .leaves import is_aggregation_node, off_leaf_switches

__all__ = ["ORDERS", "Host", "hosts_of", "job_hosts", "order_hosts",
           "read_hostfile", "routing_order_key", "shuffle_leaves",
           "host_name", "format_order", "natural_key", "natural_shuffle"]

ORDERS = ("leaf", "random", "leaf-shuffled", "guid", "file")


def natural_key(text):
    return [(0, int(t), "") if t.isdigit() else (1, 0, t)
            for t in re.split(r"(\d+)", text) if t != ""]


def natural_shuffle(items, seed, name=str):
    """items in the natural order of their names (name(item); a stable
    sort), then shuffled by Python's random.Random(seed): bench-quality's
    random rank order, whose hostfiles list the host names so."""
    out = sorted(items, key=lambda x: natural_key(name(x)))
    random.Random(seed).shuffle(out)
    return out


def routing_order_key(hosts, switch_name, switch_rank, off_leaf):
    """Sort key of the routing order (the plugin's, order 'leaf') over
    hosts, objects with .desc, .leaf and .leaf_port: grouped by switch,
    the leaves by their names (switch_name(h.leaf), natural sort), leaves
    of one name by the first host name behind them (SHARP aggregation
    nodes name none), then by switch_rank(h.leaf); before the leaves the
    switches that are none (off_leaf(h.leaf): management HCAs on spines
    or cores), by their first host name; hosts of one switch by port;
    SHARP aggregation nodes last."""
    first: Dict[object, list] = {}
    for h in hosts:
        if is_aggregation_node(h.desc):
            continue
        k = natural_key(h.desc)
        if h.leaf not in first or k < first[h.leaf]:
            first[h.leaf] = k

    def key(h):
        agg, off = is_aggregation_node(h.desc), off_leaf(h.leaf)
        return (agg, not off,
                [] if agg or off else natural_key(switch_name(h.leaf)),
                first.get(h.leaf, natural_key(h.desc)),
                switch_rank(h.leaf), h.leaf_port)
    return key


class Host:
    """One CA port cabled to a switch."""
    __slots__ = ("guid", "node_guid", "port", "desc", "leaf", "leaf_port",
                 "lid", "leaf_pos")

    def __init__(self, guid, node_guid, port, desc, leaf, leaf_port, lid):
        self.guid, self.node_guid, self.port = guid, node_guid, port
        self.desc, self.leaf, self.leaf_port = desc, leaf, leaf_port
        self.lid = lid
        self.leaf_pos = 0   # its switch's place in the topology file

    def __repr__(self):
        return "Host(%r, 0x%016x)" % (self.desc, self.guid)


def hosts_of(topo: Topology) -> List[Host]:
    """Every CA port of topo that is cabled to a switch, in leaf order."""
    out = []
    pos = {g: i for i, g in enumerate(topo.nodes)}
    for n in topo.cas():
        r = topo.links.get((n.guid, n.port)) if n.port else None
        if r is None:
            nb = topo.neighbors(n.guid)
            r = (nb[0][1], nb[0][2]) if nb else None
        if r is None or r[0] not in topo.nodes or \
                topo.nodes[r[0]].kind != "SW":
            continue
        out.append(Host(n.guid, n.node_guid, n.port or 1, n.desc, r[0], r[1],
                        n.lid))
        out[-1].leaf_pos = pos[r[0]]
    if not out:
        raise InputError(topo.path, 0, "no host (CA port cabled to a "
                         "switch) in the topology")
    off = off_leaf_switches(topo)
    key = routing_order_key(out, lambda s: topo.nodes[s].desc,
                            lambda s: s, lambda s: s in off)
    out.sort(key=lambda h: (key(h), h.guid))
    return out


def job_hosts(topo: Topology, hosts: List[Host], spine_cas: bool = False):
    """The hosts (of hosts_of(topo)) that run MPI ranks, and those left
    out: SHARP aggregation nodes and, unless spine_cas, the CAs cabled to
    spines or cores (management HCAs: on switches the plugin's tree
    ranking takes for no leaf, see osmoffset.leaves), as lft-analyze and
    the plugin's stock guard leave them out.  Where fewer than two would
    run ranks, all do."""
    off = set() if spine_cas else off_leaf_switches(topo)
    kept = [h for h in hosts
            if not is_aggregation_node(h.desc) and h.leaf not in off]
    if len(kept) < 2:
        kept = list(hosts)
    ids = {id(h) for h in kept}
    return kept, [h for h in hosts if id(h) not in ids]


def shuffle_leaves(items, leaf, seed):
    """items (in leaf order) with the runs of one leaf (leaf(item)) kept
    together and in their order, the leaves shuffled by Python's
    random.Random(seed): the order 'leaf-shuffled', as rank-order writes
    it and lft-analyze ranks it."""
    runs: Dict[object, list] = {}
    for x in items:
        runs.setdefault(leaf(x), []).append(x)
    keys = list(runs)
    random.Random(seed).shuffle(keys)
    return [x for k in keys for x in runs[k]]


def order_hosts(hosts: List[Host], how: str, seed: int = 1) -> List[Host]:
    """hosts (leaf order, from hosts_of) in order `how` (see ORDERS)."""
    if how == "leaf":
        return list(hosts)
    if how == "leaf-shuffled":
        return shuffle_leaves(hosts, lambda h: h.leaf, seed)
    if how == "guid":
        return sorted(hosts, key=lambda h: h.guid)
    if how == "file":
        return sorted(hosts, key=lambda h: (h.leaf_pos, h.leaf_port,
                                            h.guid))
    if how == "random":
        out = list(hosts)
        random.Random(seed).shuffle(out)
        return out
    raise ValueError("unknown order %r (one of %s)" % (how, ", ".join(ORDERS)))


def host_name(h: Host, names: str = "host") -> str:
    """The name of h in a hostfile: 'host' = first word of the node
    description, 'desc' = the whole description, 'guid' = port GUID."""
    if names == "guid":
        return "0x%016x" % h.guid
    if names == "desc":
        return h.desc
    w = h.desc.split()
    return w[0] if w else "0x%016x" % h.guid


def format_order(order: List[Host], fmt: str = "hostfile",
                 names: str = "host") -> str:
    """Text of a hostfile (one name a line) or of a Slurm node list (one
    comma-separated line).  Repeated names (several ports of one node) are
    kept once, at their first place."""
    seen, out = set(), []
    for h in order:
        n = host_name(h, names)
        if n not in seen:
            seen.add(n)
            out.append(n)
    if fmt == "slurm":
        return ",".join(out) + "\n"
    if fmt == "hostfile":
        return "".join(n + "\n" for n in out)
    raise ValueError("unknown format %r" % fmt)


_COUNT_KEYS = ("slots", "max_slots", "max-slots", "count")


def read_hostfile(path: str, hosts: List[Host]) -> List[Host]:
    """The hosts a hostfile names, in its order: the rank order.

    The one hostfile rule of the osmoffset tools (lft-analyze,
    route-optimum, alltoall-ab, bench-quality), as an MPI user writes
    hostfiles for Open MPI, MPICH or Slurm:

      * '#' starts a comment; blank lines are skipped;
      * one host a line, first word the host; after it Open MPI's
        "slots=N" / "max_slots=N" (and any other key=value word) are
        accepted and ignored; MPICH's "host:N" is the host with N
        processes; a line may also hold a comma-separated list
        "h1,h2:2,h3" (Slurm's expanded node list);
      * a host is, tried in this order: a whole node description ("node01
        HCA-1"), a host name (the first word of a node description:
        "node01", its first port in topology order), a port or node GUID
        (0x0002c903000a1b2c, or 16 hex digits);
      * every host once: the tools model one rank per host port, so the
        process counts (slots, :N) do not repeat a host; naming a host
        twice is an error (Open MPI would add the slots);
      * at least two hosts.

    hosts: objects with desc, guid and node_guid (rankorder.Host or the
    analyzer's model.Host).  Errors raise InputError naming path:line: an
    unknown host, a word that is neither host nor key=value, a bad count,
    a repeated host; a last line without a newline that does not parse
    says "truncated?".
    """
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as e:
        raise InputError(path, 0, "cannot read: %s" % e.strerror) from None
    lines = text.splitlines()
    cut = bool(text) and not text.endswith(("\n", "\r"))
    by_name: Dict[str, object] = {}
    by_guid: Dict[int, object] = {}
    for h in hosts:
        by_name.setdefault(h.desc, h)
    for h in hosts:
        w = h.desc.split()
        if w:
            by_name.setdefault(w[0], h)
        by_guid.setdefault(h.guid, h)
        if h.node_guid is not None:
            by_guid.setdefault(h.node_guid, h)
    out, used = [], {}
    for i, line in enumerate(lines, 1):
        try:
            for name, h in _hostfile_line(line, by_name, by_guid):
                if h.guid in used:
                    raise ValueError("host '%s' listed twice (first on line "
                                     "%d)" % (name, used[h.guid]))
                used[h.guid] = i
                out.append(h)
        except ValueError as e:
            msg = str(e)
            if cut and i == len(lines):
                msg += " (the file ends mid-line: truncated?)"
            raise InputError(path, i, msg) from None
    if len(out) < 2:
        raise InputError(path, max(len(lines), 1), "hostfile names fewer "
                         "than two hosts")
    return out


def _hostfile_line(line, by_name, by_guid):
    """[(name, host)] of one hostfile line; ValueError with the message."""
    s = line.split("#", 1)[0].strip()
    if not s:
        return []
    h = by_name.get(s)
    if h is not None:
        return [(s, h)]
    if "," in s:
        toks = [t.strip() for t in s.split(",")]
        if any(not t or " " in t or "\t" in t for t in toks):
            raise ValueError("bad host list %r (expected h1,h2,...)" % s)
        words = []
    else:
        toks = s.split()[:1]
        words = s.split()[1:]
    for w in words:
        key, eq, val = w.partition("=")
        if not eq or not key:
            raise ValueError("unknown host '%s' (not a node description, "
                             "host name or GUID of the topology; after a "
                             "host only key=value words such as slots=N may "
                             "follow)" % s)
        if key in _COUNT_KEYS and not val.isdigit():
            raise ValueError("bad %s value %r (expected a number)"
                             % (key, val))
    out = []
    for tok in toks:
        name, colon, n = tok.partition(":")
        if colon and not n.isdigit():
            name, n = tok, ""
        if colon and n and int(n) < 1:
            raise ValueError("bad process count in '%s'" % tok)
        h = by_name.get(tok) or by_name.get(name)
        if h is None:
            h = by_guid.get(_guid(name))
        if h is None:
            raise ValueError("unknown host '%s' (not a node description, "
                             "host name or GUID of the topology)" % name)
        out.append((name, h))
    return out


def _guid(text) -> Optional[int]:
    try:
        if re.fullmatch(r"[0-9a-fA-F]{16}", text):
            return int(text, 16)
        return int(text, 0)
    except ValueError:
        return None


def resolve_order(spec: str, hosts: List[Host], seed: int = 1, topo=None):
    """(label, hosts in rank order) for an order name of ORDERS or a
    hostfile path; with topo (that of hosts), an order name takes the
    hosts that run jobs only (job_hosts(): no SHARP aggregation node, no
    CA on a spine or core), as rank-order writes it."""
    if spec in ORDERS:
        label = "random (seed %d)" % seed if spec == "random" else spec
        if topo is not None:
            hosts = job_hosts(topo, hosts)[0]
        return label, order_hosts(hosts, spec, seed)
    return "hostfile %s" % spec, read_hostfile(spec, hosts)
