"""Which switches are leaves, as the plugin's tree ranking finds them.

Leaves are the switches with hosts, less those that look like spines or
cores with a few hosts on them (management HCAs): a switch with more
cables to other host switches than hosts; one with a quarter of a
typical leaf's hosts or fewer (the median of the host switches) and at
least as many cables to switches with more than that as hosts (a line
ASIC of a small director with one HCA over one edge); or one with a
quarter of a typical leaf's hosts or fewer, fewer hosts than switch
cables, whose neighbours lead down to several groups of leaves (a core
switch of a three-level tree).  The plugin ranks its tree
from these leaves and gives a CA on another switch no leaf slot
(oo_rank_leaves() in opensm/osm_offset_rank.c; this is the same rule for
the tools): the hosts of the leaves are the compute nodes, in the order
its coordinated rule spreads, the ranks of its stock guard's orders and
of lft-analyze's and rank-order's.  SHARP aggregation nodes are no hosts here.

  is_aggregation_node(desc)     a SHARP aggregation node's CA
  leaf_switches(links, hosts)   the rule over a switch graph
  off_leaf_switches(topo)       switches whose CAs hang off no leaf
"""

from typing import Dict, List, Sequence, Set

__all__ = ["is_aggregation_node", "leaf_switches", "off_leaf_switches"]


def is_aggregation_node(desc):
    """A SHARP aggregation node: a CA on a switch ASIC that runs no job."""
    return "aggregation node" in (desc or "").lower()


def _looks_like_spine(links, hosts, s):
    """More cables to host switches than hosts."""
    return sum(1 for t in links[s] if hosts[t]) > hosts[s]


def _spine_with_hosts(links, hosts, s, typical):
    """A quarter of a typical leaf's hosts or fewer, and at least as many
    cables to switches with more than that as hosts."""
    if hosts[s] * 4 > typical:
        return False
    return sum(1 for t in links[s] if hosts[t] * 4 > typical) >= hosts[s]


def _typical_hosts(hosts):
    """The median host count of the switches with hosts (0 if none)."""
    counts = sorted(h for h in hosts if h)
    return counts[len(counts) // 2] if counts else 0


def _spans_groups(links, hosts, s, full):
    """More full leaves two hops from s, all neighbours together, than
    behind the best-connected neighbour."""
    seen: Set[int] = set()
    most = 0
    for p in links[s]:
        own = 0
        for c in links[p]:
            if c == s or not full[c]:
                continue
            own += 1
            seen.add(c)
        most = max(most, own)
    return len(seen) > most


def leaf_switches(links: Sequence[Sequence[int]],
                  hosts: Sequence[int]) -> List[bool]:
    """links[s]: the switch behind each cable of switch s to another switch
    (a doubled cable twice); hosts[s]: its hosts.  Returns leaf[s]."""
    n = len(hosts)
    typical = _typical_hosts(hosts)
    spine = [_looks_like_spine(links, hosts, s) for s in range(n)]
    full = [bool(hosts[s]) and hosts[s] * 4 > typical and not spine[s]
            for s in range(n)]
    out = []
    for s in range(n):
        core = hosts[s] * 4 <= typical and hosts[s] < len(links[s]) and \
            _spans_groups(links, hosts, s, full)
        out.append(bool(hosts[s]) and not spine[s] and not core and
                   not _spine_with_hosts(links, hosts, s, typical))
    return out


def off_leaf_switches(topo) -> Set[int]:
    """GUIDs of the switches of topo (a fabric.Topology) with hosts that
    are no leaves: the CAs on them hang off spines or cores.  None where
    fewer than two leaves have hosts (a job on those would not cross the
    fabric: two switches joined by a trunk, one host on the one the
    ranking takes for a spine)."""
    sws = [n.guid for n in topo.switches()]
    index: Dict[int, int] = {g: i for i, g in enumerate(sws)}
    links: List[List[int]] = [[] for _ in sws]
    hosts = [0] * len(sws)
    for (g, _p), (rg, _rp) in topo.links.items():
        if g not in index:
            continue
        if rg in index:
            if rg != g:
                links[index[g]].append(index[rg])
        elif not is_aggregation_node(topo.nodes[rg].desc):
            hosts[index[g]] += 1
    leaf = leaf_switches(links, hosts)
    if sum(1 for i in range(len(sws)) if hosts[i] and leaf[i]) < 2:
        return set()
    return {sws[i] for i in range(len(sws)) if hosts[i] and not leaf[i]}
