"""The fabric as the analyzer sees it: dense numpy arrays of switches,
hosts, LIDs and forwarding tables, and the MPI rank order.

  S switches (index order: natural sort of the description), ports 0..P,
  W = P + 1 port slots per switch.
  C destination columns = every LID of every host (host h, path j ->
  column h * 2**lmc + j; column h * 2**lmc is the base LID).
  M switch-LID columns = every LID a switch answers to (its port 0).

  lft[s, c]     output port of switch s for column c (-1: no entry)
  kind[s, c]    what that port leads to (see K_* below)
  nxt[s, c]     next switch index, or -1
  ridx[s, c]    index of the switch or host behind that port, or -1
  link[s, c]    directed link number of that egress, or -1
  sw_lft[s, j]  output port of switch s for switch-LID column j

Directed links are numbered: switch s egress port p -> s * W + p, host h
uplink -> S * W + h.

Hosts are the CA ports cabled to a switch, SHARP aggregation nodes
included (they are routed and checked but run no MPI rank).  The rank
order (set_ranks) is a list of host indices: the topology order, that
order shuffled, or a hostfile (osmoffset.rankorder.read_hostfile, the one
hostfile rule), optionally cut to one job.
"""

from __future__ import annotations

from typing import List, Optional

import numpy as np

from .fabric import InputError, Lfts, Topology
from .leaves import is_aggregation_node, off_leaf_switches
from .progress import Progress
from .rankorder import (natural_key, read_hostfile, routing_order_key,
                        shuffle_leaves)

__all__ = ["ORDERS", "JOBS", "K_UNLINKED", "K_SWITCH", "K_HOST", "K_DOWN",
           "K_PORT0", "K_NOENTRY", "KIND_TEXT", "DROP_PORT",
           "is_aggregation_node", "natural_key", "Host", "FabricModel"]

# rank orders (set_ranks): the host order before any job is cut from it
ORDERS = ("leaf", "random", "leaf-shuffled", "file")
# jobs: the fraction of the hosts a job takes
JOBS = {"quarter": 4, "half": 2}

K_UNLINKED, K_SWITCH, K_HOST, K_DOWN, K_PORT0, K_NOENTRY = 0, 1, 2, 3, 4, 5
KIND_TEXT = {
    K_UNLINKED: "an unlinked port", K_DOWN: "a down port",
    K_PORT0: "the switch itself", K_NOENTRY: "no LFT entry",
}
DROP_PORT = 255     # OpenSM's "no route" LFT entry


class Host:
    __slots__ = ("idx", "guid", "desc", "leaf", "leaf_port", "lid", "node")

    def __init__(self, guid, desc, leaf, leaf_port, node):
        self.guid, self.desc, self.leaf, self.leaf_port = (guid, desc, leaf,
                                                           leaf_port)
        self.node = node
        self.lid = None
        self.idx = -1

    @property
    def node_guid(self):
        return self.node.node_guid


class FabricModel:
    """Switches, hosts, LIDs and LFT arrays of one LFT dump of a fabric.

    lmc: the LMC to analyse (None: the dump's, else the topology's, else
    0).  A --lmc that disagrees with the LIDs the dump gives each CA port
    is analysed as asked, with a warning in self.warnings (also a note).
    min_hosts: fewer hosts with LIDs is an InputError.
    """

    def __init__(self, topo: Topology, lfts: Lfts, lmc: Optional[int] = None,
                 seed: int = 1, progress: Optional[Progress] = None,
                 min_hosts: int = 2):
        self.topo, self.lfts = topo, lfts
        self.seed = seed
        self.progress = progress or Progress(False)
        self.problems: List[str] = []
        self.notes: List[str] = []
        self.warnings: List[str] = []
        self._nproblems = 0
        self._switches()
        self._hosts(min_hosts)
        self._lids(lmc)
        self._port_map()
        self._lft_matrix()

    # ------------------------------------------------------------------
    def problem(self, text):
        self._nproblems += 1
        if len(self.problems) < 50:
            self.problems.append(text)

    def swname(self, s):
        n = self.sw_nodes[s]
        return f"switch '{n.desc}' (0x{n.guid:016x})"

    def lidname(self, c):
        h = self.hosts[c // self.nl]
        return f"LID {h.lid + c % self.nl} ('{h.desc}')"

    def swlidname(self, j):
        return (f"LID {int(self.sw_lid[j])} (switch "
                f"'{self.sw_nodes[int(self.sw_owner[j])].desc}')")

    # ------------------------------------------------------------------
    def _switches(self):
        topo, lfts = self.topo, self.lfts
        sws = sorted(topo.switches(), key=lambda n: (natural_key(n.desc),
                                                       n.guid))
        self.sw_nodes = sws
        S = self.S = len(sws)
        if S == 0:
            raise InputError(topo.path, 0, "topology has no switch")
        sidx = self.sidx = {n.guid: i for i, n in enumerate(sws)}
        for g, sl in lfts.switches.items():
            if g not in sidx:
                raise InputError(lfts.path, sl.lineno, f"switch 0x{g:016x} "
                                 f"('{sl.desc}') is not in topology "
                                 f"{topo.path}")
        P = 1
        for n in sws:
            P = max(P, n.nports)
        for (g, p) in topo.links:
            if g in sidx:
                P = max(P, p)
        for sl in lfts.switches.values():
            ports = [p for p in sl.lft.values() if p != DROP_PORT]
            if ports:
                P = max(P, max(ports))
        self.P = P
        self.W = P + 1

    def _hosts(self, min_hosts):
        """CA ports linked to a switch, with their LIDs, in topology
        order."""
        topo, lfts, sidx = self.topo, self.lfts, self.sidx
        hosts = []
        for n in topo.cas():
            r = topo.links.get((n.guid, n.port)) if n.port else None
            if r is None:
                cand = [x for x in topo.neighbors(n.guid)]
                r = (cand[0][1], cand[0][2]) if cand else None
            if r is None or r[0] not in sidx:
                self.notes.append(f"CA port '{n.desc}' (0x{n.guid:016x}) is "
                                  "not linked to a switch; ignored")
                continue
            hosts.append(Host(n.guid, n.desc, sidx[r[0]], r[1], n))
        hosts.sort(key=self._host_order(hosts))
        lid_owner = {}
        for lid, (g, _kind, _d) in lfts.lid_info.items():
            lid_owner.setdefault(g, []).append(lid)
        self._lid_owner = lid_owner
        for n in self.sw_nodes:
            ls = lid_owner.get(n.guid)
            if n.lid and ls and n.lid not in ls:
                raise InputError(lfts.path, lfts.lid_line.get(min(ls), 0),
                                 f"switch '{n.desc}' has LID {n.lid} in "
                                 f"{topo.path} but LID {min(ls)} here")
        kept = []
        for h in hosts:
            ls = sorted(lid_owner.get(h.guid, []))
            tl = h.node.lid
            if tl and ls and tl != ls[0]:
                raise InputError(lfts.path, lfts.lid_line.get(ls[0], 0),
                                 f"CA '{h.desc}' (0x{h.guid:016x}) has base "
                                 f"LID {tl} in {topo.path} but LID {ls[0]} "
                                 "here")
            if tl and tl in lfts.lid_info and lfts.lid_info[tl][0] != h.guid:
                g2 = lfts.lid_info[tl][0]
                raise InputError(lfts.path, lfts.lid_line.get(tl, 0),
                                 f"LID {tl} belongs to 0x{g2:016x} here but to"
                                 f" CA '{h.desc}' (0x{h.guid:016x}) in "
                                 f"{topo.path}")
            h.lid = tl or (ls[0] if ls else None)
            if h.lid is None:
                self.problem(f"CA '{h.desc}' (0x{h.guid:016x}) has no LID")
                continue
            kept.append(h)
        hosts = kept
        for i, h in enumerate(hosts):
            h.idx = i
        self.hosts = hosts
        N = self.N = len(hosts)
        if N < min_hosts:
            raise InputError(topo.path, 0, f"fewer than two hosts with LIDs "
                             f"({N})")

    def _dump_lids_per_port(self):
        """(LIDs per CA port, LMC) as the dump (else the topology) gives
        them, or None when neither says."""
        lfts, topo = self.lfts, self.topo
        if lfts.lmc is not None and lfts.lid_info:
            counts = [len(self._lid_owner.get(h.guid, ())) for h in
                      self.hosts]
            n = max(counts) if counts else 1 << lfts.lmc
            return max(n, 1), lfts.lmc
        if topo.lmc is not None:
            return 1 << topo.lmc, topo.lmc
        return None

    def _lids(self, lmc_opt):
        topo, lfts, hosts = self.topo, self.lfts, self.hosts
        if lmc_opt is not None:
            lmc = lmc_opt
        elif lfts.lmc is not None:
            lmc = lfts.lmc
        elif topo.lmc is not None:
            lmc = topo.lmc
        else:
            lmc = 0
        if lmc < 0 or lmc > 7:
            raise InputError("--lmc", 0, f"LMC {lmc} out of range 0-7")
        self.lmc = lmc
        hint = ""
        got = self._dump_lids_per_port() if lmc_opt is not None else None
        if got is not None and got[1] != lmc_opt:
            n, dlmc = got
            src = lfts.path if lfts.lmc is not None else topo.path
            hint = (f"--lmc {lmc_opt} disagrees with {src}, which gives each "
                    f"CA port {n} LID{'s' if n > 1 else ''} (LMC {dlmc})")
            self.warnings.append(hint + f"; analysed with LMC {lmc_opt}")
            self.notes.append(self.warnings[-1])
        nl = self.nl = 1 << lmc
        self.C = self.N * nl
        sw_lids = {}
        for s, n in enumerate(self.sw_nodes):
            for lid in self._lid_owner.get(n.guid, ()):
                sw_lids[lid] = s
            if n.lid:
                sw_lids.setdefault(n.lid, s)
        self.sw_lid = np.array(sorted(sw_lids), dtype=np.int64)
        self.sw_owner = np.array([sw_lids[x] for x in self.sw_lid.tolist()],
                                 dtype=np.int64)
        maxlid = max(max((h.lid for h in hosts), default=0) + nl,
                     max((max(sl.lft) for sl in lfts.switches.values()
                          if sl.lft), default=0) + 1,
                     max(sw_lids, default=0) + 1)
        lid2col = np.full(maxlid + 1, -1, dtype=np.int64)
        for h in hosts:
            for j in range(nl):
                if lid2col[h.lid + j] >= 0:
                    o = hosts[lid2col[h.lid + j] // nl]
                    raise InputError(topo.path, 0, f"LID {h.lid + j} of "
                                     f"'{h.desc}' overlaps the LIDs of "
                                     f"'{o.desc}' with LMC {lmc}" +
                                     (f" ({hint})" if hint else ""))
                lid2col[h.lid + j] = h.idx * nl + j
        self.lid2col = lid2col
        lid2sw = np.full(maxlid + 1, -1, dtype=np.int64)
        lid2sw[self.sw_lid] = np.arange(self.sw_lid.size)
        self.lid2sw = lid2sw
        self.col_lid = np.array([h.lid + j for h in hosts for j in range(nl)],
                                dtype=np.int64)
        self.col_host = np.repeat(np.arange(self.N), nl)
        self.host_leaf = np.array([h.leaf for h in hosts], dtype=np.int64)
        self.col_leaf = self.host_leaf[self.col_host]

    def _port_map(self):
        """rkind[s, p] / rindex[s, p]: what port p of switch s leads to."""
        S, W, P, sidx = self.S, self.W, self.P, self.sidx
        rkind = np.full((S, W), K_UNLINKED, dtype=np.int8)
        rindex = np.full((S, W), -1, dtype=np.int64)
        rkind[:, 0] = K_PORT0
        host_of_guid = {h.guid: h.idx for h in self.hosts}
        for (g, p), (rg, _rp) in self.topo.links.items():
            s = sidx.get(g)
            if s is None or p > P:
                continue
            if (g, p) in self.topo.down:
                rkind[s, p] = K_DOWN
            elif rg in sidx:
                rkind[s, p] = K_SWITCH
                rindex[s, p] = sidx[rg]
            elif rg in host_of_guid:
                rkind[s, p] = K_HOST
                rindex[s, p] = host_of_guid[rg]
        self.rkind, self.rindex = rkind, rindex

    def _lft_matrix(self):
        """The LFTs restricted to host LID columns (lft) and to switch LID
        columns (sw_lft), and what each entry leads to."""
        S, C = self.S, self.C
        lft = np.full((S, C), -1, dtype=np.int16)
        sw_lft = np.full((S, self.sw_lid.size), -1, dtype=np.int16)
        self.missing_lft = []
        for s, n in enumerate(self.sw_nodes):
            sl = self.lfts.switches.get(n.guid)
            if sl is None:
                self.missing_lft.append(s)
                continue
            if not sl.lft:
                continue
            lids = np.fromiter(sl.lft.keys(), dtype=np.int64)
            ports = np.fromiter(sl.lft.values(), dtype=np.int64)
            routed = ports != DROP_PORT
            lids, ports = lids[routed], ports[routed]
            cols = self.lid2col[lids]
            m = cols >= 0
            lft[s, cols[m]] = ports[m]
            cols = self.lid2sw[lids]
            m = cols >= 0
            sw_lft[s, cols[m]] = ports[m]
        self.lft = lft
        self.sw_lft = sw_lft
        self.kind, self.ridx, self.link = self.entry_arrays(lft)
        self.nxt = np.where(self.kind == K_SWITCH, self.ridx, -1)

    def entry_arrays(self, lft):
        """(kind, ridx, link) of an (S, n) array of LFT ports."""
        rows = np.arange(self.S)[:, None]
        has = lft >= 0
        safe = np.where(has, lft, 0).astype(np.int64)
        kind = np.where(has, self.rkind[rows, safe], K_NOENTRY).astype(
            np.int8)
        ridx = np.where(has, self.rindex[rows, safe], -1)
        link = np.where(has, rows * self.W + safe, -1)
        return kind, ridx, link

    # ------------------------------------------------------------------
    def _host_order(self, hosts):
        """Sort key of the topology order, the plugin's routing order: hosts
        grouped by their switch, leaves in the order of their names, then
        of the first host name behind them, hosts by port; management HCAs
        on spines or cores first, SHARP aggregation nodes last
        (rankorder.routing_order_key())."""
        off = off_leaf_switches(self.topo)
        return routing_order_key(hosts, lambda s: self.sw_nodes[s].desc,
                                 lambda s: s,
                                 lambda s: self.sw_nodes[s].guid in off)

    def set_ranks(self, hostfile=None, order="leaf", job=None, job_index=0,
                  spine_cas=False):
        """Choose the MPI ranks (self.ranks: host indices in rank order).

        order 'leaf' (default): the topology order, the plugin's routing
        order (see _host_order()); 'random': that
        order shuffled with self.seed; 'leaf-shuffled': each leaf's hosts
        together as in it, the leaves shuffled by Python's
        random.Random(self.seed) (rankorder.shuffle_leaves(), as
        rank-order writes it); 'file': each leaf's hosts together and by
        port, the leaves in the order the topology file first lists their
        switches (an ibnetdiscover dump's, OpenSM's subnet.lst's: an
        analyzer or scheduler that walks the file).  SHARP aggregation
        nodes and the
        CAs cabled to spines or cores (management HCAs: on switches the
        plugin's tree ranking takes for no leaf, see osmoffset.leaves) are
        left out of both, as the plugin's stock guard leaves them out of
        its orders: they are routed and checked, but run no ranks (the
        compute nodes, as rank-order writes them).
        hostfile: the hosts it names, in its order (no 'order' then); see
        osmoffset.rankorder.read_hostfile for what a hostfile may say.
        job 'quarter' / 'half': only the contiguous block number job_index
        (0-based) of len // 4 / len // 2 ranks of that order runs.
        spine_cas (no hostfile): the CAs on spines or cores rank too, in
        their place in the topology order: first, by their names (where
        "mgmt01" before "node001" put them when every switch went by its
        first host name)."""
        if order not in ORDERS:
            raise InputError("--order", 0, f"unknown rank order {order!r} "
                             f"(known: {', '.join(ORDERS)})")
        if hostfile and order != "leaf":
            raise InputError("--order", 0, "a hostfile gives the rank order "
                             "itself; --order takes no other value with it")
        if hostfile and spine_cas:
            raise InputError("--spine-cas", 0, "a hostfile names the hosts "
                             "itself; --spine-cas goes without it")
        if hostfile:
            named = read_hostfile(hostfile, self.hosts)
            self.ranks = np.array([h.idx for h in named], dtype=np.int64)
            self.rank_source = f"hostfile {hostfile}"
        else:
            compute = [h.idx for h in self.hosts
                       if not is_aggregation_node(h.desc)]
            skipped = self.N - len(compute)
            off = []
            if not spine_cas:
                switches = off_leaf_switches(self.topo)
                off = [i for i in compute
                       if self.sw_nodes[self.hosts[i].leaf].guid in switches]
                gone = set(off)
                compute = [i for i in compute if i not in gone]
            if len(compute) < 2:
                compute = list(range(self.N))
                skipped = 0
                off = []
            ranks = np.array(compute, dtype=np.int64)
            if order == "random":
                ranks = np.random.default_rng(self.seed).permutation(ranks)
                self.rank_source = f"random order (seed {self.seed})"
            elif order == "leaf-shuffled":
                ranks = np.array(shuffle_leaves(
                    ranks.tolist(), lambda i: self.hosts[i].leaf,
                    self.seed), dtype=np.int64)
                self.rank_source = (f"leaf order, leaves shuffled (seed "
                                    f"{self.seed})")
            elif order == "file":
                pos = {g: i for i, g in enumerate(self.topo.nodes)}
                ranks = np.array(sorted(
                    compute, key=lambda i: (
                        pos[self.sw_nodes[self.hosts[i].leaf].guid],
                        self.hosts[i].leaf_port)), dtype=np.int64)
                self.rank_source = ("leaf order, leaves in the topology "
                                    "file's order")
            else:
                self.rank_source = "topology order"
            if skipped:
                self.rank_source += (f", {skipped} SHARP aggregation "
                                     f"node{'s' if skipped > 1 else ''} "
                                     "left out")
            if off:
                self.rank_source += (f", {len(off)} CA"
                                     f"{'s' if len(off) > 1 else ''} on "
                                     "spines or cores left out")
            self.ranks = ranks
        if job is None:
            return
        if job not in JOBS:
            raise InputError("--job", 0, f"unknown job size {job!r} "
                             f"(known: {', '.join(JOBS)})")
        parts = JOBS[job]
        size = self.ranks.size // parts
        if not 0 <= job_index < parts:
            raise InputError("--job-index", 0, f"a {job} job is block 0 to "
                             f"{parts - 1}, not {job_index}")
        if size < 2:
            raise InputError("--job", 0, f"a {job} job of "
                             f"{self.ranks.size} ranks has fewer than two")
        self.ranks = self.ranks[job_index * size:(job_index + 1) * size]
        self.rank_source += (f"; {job} job {job_index}: ranks "
                             f"{job_index * size}-{(job_index + 1) * size - 1}"
                             f" ({size} hosts)")
