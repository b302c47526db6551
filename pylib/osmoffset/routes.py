"""Host-to-host routes through unicast forwarding tables.

Routes(topo, lfts) numbers the directed links of a fabric (one per cable
direction: the egress of a (node, port)) and walks, for a source host and
a destination LID, the switch-by-switch path the LFTs give: the source's
cable to its switch, then at every switch the port of the LFT entry of the
destination LID, until a CA port.  The LID of offset k of a host is its
base LID + k (LMC > 0).

Link rates come from the topology where it says (Topology.rates: subnet.lst
PHY=/SPD=, net-file or ibnetdiscover trailers such as 4xQDR), else from
default_gbps.  Rates are data rates in Gbit/s.

A route that leaves through a port without a cable, a down port or port 0,
meets a switch without an entry or a switch missing from the dump, loops,
or ends at the wrong CA raises RouteError naming the switch and the LID.
"""

from __future__ import annotations

from typing import Dict, List, Optional, Tuple

from .fabric import Lfts, Topology
from .rankorder import Host, hosts_of

__all__ = ["RouteError", "Routes"]

MAX_HOPS = 64


class RouteError(Exception):
    """The LFTs do not deliver a LID from some host."""


class Routes:
    def __init__(self, topo: Topology, lfts: Lfts,
                 default_gbps: float = 100.0, lmc: Optional[int] = None):
        self.topo, self.lfts = topo, lfts
        self.default_gbps = float(default_gbps)
        self.hosts: List[Host] = hosts_of(topo)
        port_lids = lfts.port_lids()
        for h in self.hosts:
            ls = port_lids.get(h.guid)
            if ls:
                h.lid = ls[0]
            if not h.lid:
                raise RouteError("host '%s' (0x%016x) has no LID in %s or %s"
                                 % (h.desc, h.guid, lfts.path, topo.path))
        self.lmc = lmc if lmc is not None else (
            lfts.lmc if lfts.lmc is not None else (topo.lmc or 0))
        self.by_guid = {h.guid: h for h in self.hosts}
        self.link_index: Dict[Tuple[int, int], int] = {}
        self.link_ends: List[Tuple[int, int]] = []
        self.link_gbps: List[float] = []
        self.rated = 0          # links whose rate the topology gave
        self._memo: Dict[Tuple[int, int], List[int]] = {}

    # ------------------------------------------------------------------
    def link(self, guid, port) -> int:
        """Index of the directed link leaving (guid, port)."""
        key = (guid, port)
        i = self.link_index.get(key)
        if i is None:
            i = len(self.link_ends)
            self.link_index[key] = i
            self.link_ends.append(key)
            r = self.topo.rates.get(key)
            if r is None:
                r = self.topo.rates.get(self.topo.links.get(key))
            if r:
                self.rated += 1
            self.link_gbps.append(float(r) if r else self.default_gbps)
        return i

    def link_text(self, i) -> str:
        g, p = self.link_ends[i]
        n = self.topo.nodes.get(g)
        return "%s[%d]" % (n.desc if n else "0x%016x" % g, p)

    def _swname(self, g):
        n = self.topo.nodes.get(g)
        return "switch '%s' (0x%016x)" % (n.desc if n else "?", g)

    # ------------------------------------------------------------------
    def path(self, src: Host, dst: Host, offset: int = 0) -> List[int]:
        """Link indices from src to LID dst.lid + offset."""
        if offset < 0 or offset >= (1 << self.lmc):
            raise RouteError("LID offset %d out of range for LMC %d"
                             % (offset, self.lmc))
        if src.guid == dst.guid:
            return []
        tail = self._from_switch(src.leaf, dst, dst.lid + offset)
        return [self.link(src.guid, src.port)] + tail

    def _from_switch(self, sw, dst, lid) -> List[int]:
        key = (sw, lid)
        got = self._memo.get(key)
        if got is not None:
            return got
        out, seen, cur = [], set(), sw
        for _ in range(MAX_HOPS):
            if cur in seen:
                raise RouteError("routing loop for LID %d ('%s') through %s"
                                 % (lid, dst.desc, self._swname(cur)))
            seen.add(cur)
            sl = self.lfts.switches.get(cur)
            if sl is None:
                raise RouteError("%s is missing from the LFT dump %s (LID %d,"
                                 " '%s')" % (self._swname(cur),
                                             self.lfts.path, lid, dst.desc))
            port = sl.lft.get(lid)
            if port is None:
                raise RouteError("%s has no LFT entry for LID %d ('%s')"
                                 % (self._swname(cur), lid, dst.desc))
            why = None
            if port == 0:
                why = "port 0 (the switch itself)"
            elif (cur, port) in self.topo.down:
                why = "port %d, which is down" % port
            elif (cur, port) not in self.topo.links:
                why = "port %d, which has no cable" % port
            if why:
                raise RouteError("%s sends LID %d ('%s') out of %s"
                                 % (self._swname(cur), lid, dst.desc, why))
            out.append(self.link(cur, port))
            rg, _rp = self.topo.links[(cur, port)]
            node = self.topo.nodes.get(rg)
            if node is not None and node.kind == "SW":
                cur = rg
                continue
            if rg != dst.guid:
                raise RouteError("%s sends LID %d ('%s') out of port %d to "
                                 "the wrong CA '%s'" % (
                                     self._swname(cur), lid, dst.desc, port,
                                     node.desc if node else "?"))
            self._memo[key] = out
            return out
        raise RouteError("route to LID %d ('%s') longer than %d hops"
                         % (lid, dst.desc, MAX_HOPS))

    def all_paths(self, order: List[Host], offset: int = 0):
        """paths[i][j] = link list from order[i] to order[j]."""
        return [[self.path(a, b, offset) for b in order] for a in order]
