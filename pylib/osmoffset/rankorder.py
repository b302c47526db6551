"""Rank orders of the hosts of a fabric, and hostfiles that name them.

The hosts of a topology are its CA ports that are cabled to a switch.  An
order is a list of those hosts, rank 0 first:

  leaf    routing order: hosts grouped by the switch they hang off, those
          switches in the order of the first host name behind them (natural
          sort, so h2 < h10), hosts of one switch by switch port number.
          osmoffset's coordinated rule spreads the destinations in this
          order, so a shift alltoall in it is free of link contention on a
          full fat tree.
  random  the hosts shuffled by Python's random.Random(seed).
  guid    by port GUID: what a scheduler that sorts by GUID or LID gives.

read_hostfile() resolves a hostfile (one host a line, or comma-separated
like Slurm's node lists; '#' starts a comment; extra words such as
`slots=1` are ignored) against the topology: a name is a node description,
its first word (the host name in descriptions such as "node01 HCA-1"), or
a port or node GUID.
"""

from __future__ import annotations

import random
import re
from typing import Dict, List, Optional

from .fabric import InputError, Topology

__all__ = ["ORDERS", "Host", "hosts_of", "order_hosts", "read_hostfile",
           "host_name", "format_order", "natural_key"]

ORDERS = ("leaf", "random", "guid")


def natural_key(text):
    return [(0, int(t), "") if t.isdigit() else (1, 0, t)
            for t in re.split(r"(\d+)", text) if t != ""]


class Host:
    """One CA port cabled to a switch."""
    __slots__ = ("guid", "node_guid", "port", "desc", "leaf", "leaf_port",
                 "lid")

    def __init__(self, guid, node_guid, port, desc, leaf, leaf_port, lid):
        self.guid, self.node_guid, self.port = guid, node_guid, port
        self.desc, self.leaf, self.leaf_port = desc, leaf, leaf_port
        self.lid = lid

    def __repr__(self):
        return "Host(%r, 0x%016x)" % (self.desc, self.guid)


def hosts_of(topo: Topology) -> List[Host]:
    """Every CA port of topo that is cabled to a switch, in leaf order."""
    out = []
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
    if not out:
        raise InputError(topo.path, 0, "no host (CA port cabled to a "
                         "switch) in the topology")
    first: Dict[int, list] = {}
    for h in out:
        k = natural_key(h.desc)
        if h.leaf not in first or k < first[h.leaf]:
            first[h.leaf] = k
    out.sort(key=lambda h: (first[h.leaf], h.leaf, h.leaf_port, h.guid))
    return out


def order_hosts(hosts: List[Host], how: str, seed: int = 1) -> List[Host]:
    """hosts (leaf order, from hosts_of) in order `how` (see ORDERS)."""
    if how == "leaf":
        return list(hosts)
    if how == "guid":
        return sorted(hosts, key=lambda h: h.guid)
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


def read_hostfile(path: str, hosts: List[Host]) -> List[Host]:
    """The hosts a hostfile names, in its order (see the module text)."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise InputError(path, 0, "cannot read: %s" % e.strerror) from None
    by_name: Dict[str, Host] = {}
    by_guid: Dict[int, Host] = {}
    for h in hosts:
        by_name.setdefault(h.desc, h)
    for h in hosts:
        by_name.setdefault(host_name(h, "host"), h)
        by_guid.setdefault(h.guid, h)
        if h.node_guid is not None:
            by_guid.setdefault(h.node_guid, h)
    out, used = [], {}
    for i, line in enumerate(lines, 1):
        s = line.split("#", 1)[0].strip()
        if not s:
            continue
        toks = [t.strip() for t in s.split(",")] if "," in s else [s]
        for tok in toks:
            if not tok:
                continue
            h = by_name.get(tok)
            name = tok
            if h is None:
                name = tok.split()[0]
                h = by_name.get(name)
            if h is None:
                h = by_guid.get(_guid(name))
            if h is None:
                raise InputError(path, i, "unknown host '%s' (not a node "
                                 "description, host name or GUID of the "
                                 "topology)" % name)
            if h.guid in used:
                raise InputError(path, i, "host '%s' listed twice (first on "
                                 "line %d)" % (name, used[h.guid]))
            used[h.guid] = i
            out.append(h)
    if len(out) < 2:
        raise InputError(path, max(len(lines), 1), "hostfile names fewer "
                         "than two hosts")
    return out


def _guid(text) -> Optional[int]:
    try:
        if re.fullmatch(r"[0-9a-fA-F]{16}", text):
            return int(text, 16)
        return int(text, 0)
    except ValueError:
        return None


def resolve_order(spec: str, hosts: List[Host], seed: int = 1):
    """(label, hosts in rank order) for an order name of ORDERS or a
    hostfile path."""
    if spec in ORDERS:
        label = "random (seed %d)" % seed if spec == "random" else spec
        return label, order_hosts(hosts, spec, seed)
    return "hostfile %s" % spec, read_hostfile(spec, hosts)
