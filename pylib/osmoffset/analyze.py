"""Analysis of unicast routing (LFTs) on a fabric.

Everything is computed on dense numpy arrays:

  S switches (index order: natural sort of the description), ports 0..P,
  C destination columns = every LID of every host (host h, path j ->
  column h * 2**lmc + j; column h * 2**lmc is the base LID).

  lft[s, c]     output port of switch s for column c (-1: no entry)
  kind[s, c]    what that port leads to (see K_* below)
  nxt[s, c]     next switch index, or -1
  ok[s, c]      a packet for c entering switch s is delivered to its owner

Directed links are numbered: switch s egress port p -> s * (P + 1) + p,
host h uplink -> S * (P + 1) + h.  The path of a (leaf switch, column) is
the list of egress links from that leaf to the destination host.
"""

from __future__ import annotations

import re
import sys
import time
from typing import Dict, List, Optional

import numpy as np

from .fabric import InputError, Lfts, Topology

# rank orders (set_ranks): the host order before any job is cut from it
ORDERS = ("leaf", "random")
# jobs: the fraction of the hosts a job takes
JOBS = {"quarter": 4, "half": 2}

K_UNLINKED, K_SWITCH, K_HOST, K_DOWN, K_PORT0, K_NOENTRY = 0, 1, 2, 3, 4, 5
_KIND_TEXT = {
    K_UNLINKED: "an unlinked port", K_DOWN: "a down port",
    K_PORT0: "the switch itself", K_NOENTRY: "no LFT entry",
}


def is_aggregation_node(desc):
    """A SHARP aggregation node: a CA on a switch ASIC that runs no job."""
    return "aggregation node" in (desc or "").lower()


def natural_key(text):
    return [(0, int(t), "") if t.isdigit() else (1, 0, t)
            for t in re.split(r"(\d+)", text) if t != ""]


class Progress:
    """A one-line progress indicator on stderr (only when enabled)."""

    def __init__(self, enabled):
        self.enabled = enabled
        self.label = ""
        self.t0 = time.time()
        self.last = 0.0

    def stage(self, label):
        self.label = label
        self.last = 0.0
        self.update(0, 1)

    def update(self, done, total):
        if not self.enabled:
            return
        now = time.time()
        if now - self.last < 0.2 and done < total:
            return
        self.last = now
        frac = done / total if total else 1.0
        bar = "#" * int(frac * 30)
        sys.stderr.write(f"\r{self.label:<22} [{bar:<30}] {frac * 100:5.1f}%"
                         f" {time.time() - self.t0:6.1f}s")
        sys.stderr.flush()

    def done(self):
        if self.enabled:
            sys.stderr.write("\r" + " " * 75 + "\r")
            sys.stderr.flush()


class Host:
    __slots__ = ("idx", "guid", "desc", "leaf", "leaf_port", "lid", "node")

    def __init__(self, guid, desc, leaf, leaf_port, node):
        self.guid, self.desc, self.leaf, self.leaf_port = (guid, desc, leaf,
                                                           leaf_port)
        self.node = node
        self.lid = None
        self.idx = -1


class Analysis:
    def __init__(self, topo: Topology, lfts: Lfts, lmc: Optional[int] = None,
                 hostfile: Optional[str] = None, seed: int = 1,
                 bisections: int = 20, diversity_samples: int = 50000,
                 progress: Optional[Progress] = None, order: str = "leaf",
                 job: Optional[str] = None, job_index: int = 0):
        self.topo, self.lfts = topo, lfts
        self.seed = seed
        self.bisections = bisections
        self.diversity_samples = diversity_samples
        self.progress = progress or Progress(False)
        self.problems: List[str] = []
        self.notes: List[str] = []
        self._nproblems = 0
        self._prepare(lmc)
        self.set_ranks(hostfile, order, job, job_index)

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

    # ------------------------------------------------------------------
    def _prepare(self, lmc_opt):
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
            if sl.lft:
                P = max(P, max(sl.lft.values()))
        self.P = P
        W = self.W = P + 1

        # hosts: CA ports linked to a switch
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
        # LIDs
        lid_owner = {}
        for lid, (g, kind, _d) in lfts.lid_info.items():
            lid_owner.setdefault(g, []).append(lid)
        for n in sws:
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
        if N < 2:
            raise InputError(topo.path, 0, f"fewer than two hosts with LIDs "
                             f"({N})")
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
        nl = self.nl = 1 << lmc
        C = self.C = N * nl
        maxlid = max(max(h.lid for h in hosts) + nl,
                     max((max(sl.lft) for sl in lfts.switches.values()
                          if sl.lft), default=0) + 1)
        lid2col = np.full(maxlid + 1, -1, dtype=np.int64)
        for h in hosts:
            for j in range(nl):
                if lid2col[h.lid + j] >= 0:
                    o = hosts[lid2col[h.lid + j] // nl]
                    raise InputError(topo.path, 0, f"LID {h.lid + j} of "
                                     f"'{h.desc}' overlaps the LIDs of "
                                     f"'{o.desc}' with LMC {lmc}")
                lid2col[h.lid + j] = h.idx * nl + j
        self.col_lid = np.array([h.lid + j for h in hosts for j in range(nl)],
                                dtype=np.int64)
        self.col_host = np.repeat(np.arange(N), nl)
        self.host_leaf = np.array([h.leaf for h in hosts], dtype=np.int64)
        self.col_leaf = self.host_leaf[self.col_host]

        # port map
        rkind = np.full((S, W), K_UNLINKED, dtype=np.int8)
        rindex = np.full((S, W), -1, dtype=np.int64)
        rkind[:, 0] = K_PORT0
        host_of_guid = {h.guid: h.idx for h in hosts}
        for (g, p), (rg, rp) in topo.links.items():
            s = sidx.get(g)
            if s is None or p > P:
                continue
            if (g, p) in topo.down:
                rkind[s, p] = K_DOWN
            elif rg in sidx:
                rkind[s, p] = K_SWITCH
                rindex[s, p] = sidx[rg]
            elif rg in host_of_guid:
                rkind[s, p] = K_HOST
                rindex[s, p] = host_of_guid[rg]
        self.rkind, self.rindex = rkind, rindex

        # LFT matrix restricted to host LID columns
        lft = np.full((S, C), -1, dtype=np.int16)
        self.missing_lft = []
        for s, n in enumerate(sws):
            sl = lfts.switches.get(n.guid)
            if sl is None:
                self.missing_lft.append(s)
                continue
            if not sl.lft:
                continue
            lids = np.fromiter(sl.lft.keys(), dtype=np.int64)
            ports = np.fromiter(sl.lft.values(), dtype=np.int64)
            cols = lid2col[lids]
            m = cols >= 0
            lft[s, cols[m]] = ports[m]
        self.lft = lft
        rows = np.arange(S)[:, None]
        has = lft >= 0
        safe = np.where(has, lft, 0).astype(np.int64)
        kind = np.where(has, rkind[rows, safe], K_NOENTRY).astype(np.int8)
        ridx = np.where(has, rindex[rows, safe], -1)
        self.kind = kind
        self.nxt = np.where(kind == K_SWITCH, ridx, -1)
        self.ridx = ridx
        self.link = np.where(has, rows * W + safe, -1)

    # ------------------------------------------------------------------
    @staticmethod
    def _host_order(hosts):
        """Sort key of the topology order, the plugin's routing order: hosts
        grouped by their leaf switch, leaves in the order of the first host
        name behind them, hosts by port; SHARP aggregation nodes last."""
        first = {}
        for h in hosts:
            if is_aggregation_node(h.desc):
                continue
            k = natural_key(h.desc)
            if h.leaf not in first or k < first[h.leaf]:
                first[h.leaf] = k
        return lambda h: (is_aggregation_node(h.desc),
                          first.get(h.leaf, natural_key(h.desc)), h.leaf,
                          h.leaf_port)

    def set_ranks(self, hostfile=None, order="leaf", job=None, job_index=0):
        """Choose the MPI ranks (self.ranks: host indices in rank order).

        order 'leaf' (default): the topology order, the plugin's routing
        order (see _host_order()); 'random': that
        order shuffled with self.seed.  SHARP aggregation nodes are left
        out of both (they are routed and checked, but run no ranks).
        hostfile: the hosts it names, in its order (no 'order' then).
        job 'quarter' / 'half': only the contiguous block number job_index
        (0-based) of len // 4 / len // 2 ranks of that order runs."""
        if order not in ORDERS:
            raise InputError("--order", 0, f"unknown rank order {order!r} "
                             f"(known: {', '.join(ORDERS)})")
        if hostfile and order != "leaf":
            raise InputError("--order", 0, "a hostfile gives the rank order "
                             "itself; --order takes no other value with it")
        if hostfile:
            self._hostfile_ranks(hostfile)
        else:
            compute = [h.idx for h in self.hosts
                       if not is_aggregation_node(h.desc)]
            skipped = self.N - len(compute)
            if len(compute) < 2:
                compute = list(range(self.N))
                skipped = 0
            ranks = np.array(compute, dtype=np.int64)
            if order == "random":
                ranks = np.random.default_rng(self.seed).permutation(ranks)
                self.rank_source = f"random order (seed {self.seed})"
            else:
                self.rank_source = "topology order"
            if skipped:
                self.rank_source += (f", {skipped} SHARP aggregation "
                                     f"node{'s' if skipped > 1 else ''} "
                                     "left out")
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

    def _hostfile_ranks(self, hostfile):
        try:
            with open(hostfile, encoding="utf-8", errors="replace") as f:
                lines = f.read().splitlines()
        except OSError as e:
            raise InputError(hostfile, 0, f"cannot read: {e.strerror}") \
                from None
        by_desc: Dict[str, int] = {}
        by_guid: Dict[int, int] = {}
        for h in self.hosts:
            by_desc.setdefault(h.desc, h.idx)
            by_guid[h.guid] = h.idx
            if h.node.node_guid is not None:
                by_guid.setdefault(h.node.node_guid, h.idx)
        ranks = []
        for i, line in enumerate(lines, 1):
            s = line.split("#", 1)[0].strip()
            if not s:
                continue
            name = s.split()[0]
            if name in by_desc:
                ranks.append(by_desc[name])
                continue
            try:
                g = int(name, 16) if not name.startswith(("0x", "0X")) and \
                    re.fullmatch(r"[0-9a-fA-F]{16}", name) else int(name, 0)
            except ValueError:
                g = None
            if g is not None and g in by_guid:
                ranks.append(by_guid[g])
                continue
            raise InputError(hostfile, i, f"unknown host '{name}' (not a CA "
                             "description or GUID of the topology)")
        if len(ranks) < 2:
            raise InputError(hostfile, max(len(lines), 1),
                             "hostfile names fewer than two hosts")
        self.ranks = np.array(ranks, dtype=np.int64)
        self.rank_source = f"hostfile {hostfile}"

    # ------------------------------------------------------------------
    def validate(self):
        """Reachability of every host LID from every host's leaf."""
        S, C, N, nl = self.S, self.C, self.N, self.nl
        kind, nxt = self.kind, self.nxt
        self.progress.stage("validity")
        # used[s, c]: some CA source's packet for column c reaches switch s
        leaf_count = np.bincount(self.host_leaf, minlength=S)
        used = np.zeros((S, C), dtype=bool)
        leaves = np.nonzero(leaf_count)[0]
        self.leaves = leaves
        others = leaf_count[leaves][:, None] - \
            (self.col_leaf[None, :] == leaves[:, None])
        used[leaves] = others > 0
        fr_s, fr_c = np.nonzero(used)
        while fr_s.size:
            n = nxt[fr_s, fr_c]
            m = n >= 0
            n, c = n[m], fr_c[m]
            new = ~used[n, c]
            n, c = n[new], c[new]
            used[n, c] = True
            fr_s, fr_c = n, c
        self.used = used
        # resolve outcome
        good = (kind == K_HOST) & (self.ridx == self.col_host[None, :])
        settled = kind != K_SWITCH
        ok = good.copy()
        hops = np.where(settled, 1, 0).astype(np.int16)
        us, uc = np.nonzero(~settled)
        it = 0
        while us.size:
            n = nxt[us, uc]
            done = settled[n, uc]
            if not done.any():
                break
            ds, dc, dn = us[done], uc[done], n[done]
            ok[ds, dc] = ok[dn, dc]
            hops[ds, dc] = hops[dn, dc] + 1
            settled[ds, dc] = True
            us, uc = us[~done], uc[~done]
            it += 1
        self.ok = ok & settled
        self.hops = hops
        self.H = int(hops[used].max()) if used.any() else 1
        # problems at used entries
        bad = used & ~good & (kind != K_SWITCH)
        bs, bc = np.nonzero(bad)
        order = np.lexsort((bc, bs))
        for s, c in zip(bs[order][:200], bc[order][:200]):
            k = int(kind[s, c])
            port = int(self.lft[s, c])
            if k == K_HOST:
                wrong = self.hosts[int(self.ridx[s, c])]
                self.problem(f"{self.swname(s)}: {self.lidname(c)} is "
                             f"routed out of port {port} to the wrong CA "
                             f"'{wrong.desc}'")
            elif k == K_NOENTRY:
                what = " (switch missing from the LFT dump)" \
                    if s in self.missing_lft else ""
                self.problem(f"{self.swname(s)}: {self.lidname(c)} has no "
                             f"LFT entry{what} (dead end)")
            else:
                self.problem(f"{self.swname(s)}: {self.lidname(c)} is "
                             f"routed out of port {port}, "
                             f"{_KIND_TEXT[k]} (dead end)")
        extra = int(bad.sum()) - min(int(bad.sum()), 200)
        if extra:
            self._nproblems += extra
        loops = used & ~settled
        self.loop_entries = int(loops.sum())
        if loops.any():
            ls, lc = np.nonzero(loops)
            reported = set()
            for s, c in zip(ls[:2000], lc[:2000]):
                cyc = self._walk_loop(int(s), int(c))
                key = (frozenset(cyc), int(c))
                if key in reported:
                    continue
                reported.add(key)
                names = " -> ".join(f"'{self.sw_nodes[x].desc}'"
                                    f"[{int(self.lft[x, c])}]" for x in cyc)
                self.problem(f"routing loop for {self.lidname(int(c))}: "
                             f"{names} -> '{self.sw_nodes[cyc[0]].desc}'")
                if len(reported) >= 10:
                    break
        # pairs
        leafpos = np.full(S, -1, dtype=np.int64)
        leafpos[leaves] = np.arange(leaves.size)
        self.leafpos = leafpos
        okl = self.ok[leaves]                          # (nleaves, C)
        src_ok = okl[leafpos[self.host_leaf]]          # (N, C)
        src_ok[self.col_host[None, :] == np.arange(N)[:, None]] = True
        self.unreachable_pairs = int((~src_ok).sum())
        self.valid = (self.unreachable_pairs == 0 and self._nproblems == 0)
        self.progress.done()

    def _walk_loop(self, s, c):
        seen = {}
        path = []
        while s >= 0 and s not in seen:
            seen[s] = len(path)
            path.append(s)
            s = int(self.nxt[s, c])
        if s < 0:
            return path
        return path[seen[s]:]

    # ------------------------------------------------------------------
    def build_paths(self):
        """Egress-link paths from every leaf to every column."""
        leaves, H, W = self.leaves, self.H, self.W
        nlv = leaves.size
        pad = self.S * W + self.N          # a dummy link id
        self.L = pad
        paths = np.full((nlv, self.C, H), pad, dtype=np.int32)
        cur = np.repeat(leaves[:, None], self.C, axis=1)
        cols = np.broadcast_to(np.arange(self.C)[None, :], cur.shape)
        okl = self.ok[leaves]
        cur = np.where(okl, cur, -1)
        for h in range(H):
            a = cur >= 0
            if not a.any():
                break
            ls, lc = np.nonzero(a)
            s = cur[ls, lc]
            c = cols[ls, lc]
            paths[ls, lc, h] = self.link[s, c]
            cur[ls, lc] = self.nxt[s, c]
        self.paths = paths
        self.okl = okl

    # ------------------------------------------------------------------
    def _load_batch(self, src, cols, weights, nb, rid):
        """Per-round max load. src (F,) host ids, cols (F,) columns,
        rid (F,) round index within the batch."""
        L1 = self.L + 1
        lp = self.leafpos[self.host_leaf[src]]
        ok = self.okl[lp, cols]
        p = self.paths[lp, cols]                        # (F, H)
        up = (self.S * self.W + src).astype(np.int64)
        up = np.where(ok, up, self.L)
        base = rid.astype(np.int64) * L1
        idx = np.concatenate([(p.astype(np.int64) + base[:, None]).ravel(),
                              up + base])
        w = np.concatenate([np.repeat(weights, p.shape[1]), weights])
        loads = np.bincount(idx, weights=w, minlength=nb * L1)
        loads = loads.reshape(nb, L1)[:, :self.L]
        return loads.max(axis=1)

    def shift(self, spread):
        ranks = self.ranks
        R = ranks.size
        nl = self.nl if spread else 1
        per = max(1, int(3_000_000 // max(1, R * nl * (self.H + 1))))
        out = np.zeros(R - 1)
        self.progress.stage("shift " + ("spread" if spread else "base"))
        i = np.arange(R)
        k = 1
        while k < R:
            ks = np.arange(k, min(R, k + per))
            nb = ks.size
            src = np.tile(ranks, nb)
            dst = ranks[(i[None, :] + ks[:, None]) % R].ravel()
            rid = np.repeat(np.arange(nb), R)
            m = src != dst
            src, dst, rid = src[m], dst[m], rid[m]
            if nl > 1:
                src = np.repeat(src, nl)
                rid = np.repeat(rid, nl)
                cols = (dst[:, None] * self.nl +
                        np.arange(nl)[None, :]).ravel()
                w = np.full(src.size, 1.0 / nl)
            else:
                cols = dst * self.nl
                w = np.ones(src.size)
            out[k - 1:k - 1 + nb] = self._load_batch(src, cols, w, nb, rid)
            k += nb
            self.progress.update(k - 1, R - 1)
        self.progress.done()
        return out

    @staticmethod
    def _eff(maxloads):
        ml = np.where(maxloads <= 0, 1.0, maxloads)
        return float(np.mean(np.minimum(1.0, 1.0 / ml))) if ml.size else 1.0

    def leaf_bound(self):
        ranks = self.ranks
        R = ranks.size
        S = self.S
        up = (self.rkind == K_SWITCH).sum(axis=1).astype(float)
        rl = self.host_leaf[ranks]
        out = np.zeros(R - 1)
        for k in range(1, R):
            dl = np.roll(rl, -k)
            cross = rl != dl
            o = np.bincount(rl[cross], minlength=S).astype(float)
            n = np.bincount(dl[cross], minlength=S).astype(float)
            with np.errstate(divide="ignore", invalid="ignore"):
                r = np.where(o + n > 0, np.maximum(o, n) /
                             np.where(up > 0, up, 0), 0.0)
            r = np.nan_to_num(r, nan=0.0, posinf=np.inf)
            out[k - 1] = max(1.0, float(r.max()) if r.size else 1.0)
        return out

    def bisection(self, spread):
        rng = np.random.default_rng(self.seed)
        hosts = np.unique(self.ranks)
        n = hosts.size // 2
        nl = self.nl if spread else 1
        if n == 0 or self.bisections <= 0:
            return None
        rates = []
        for _ in range(self.bisections):
            perm = rng.permutation(hosts)
            a, b = perm[:n], perm[n:2 * n]
            src = np.concatenate([a, b])
            dst = np.concatenate([b, a])
            src = np.repeat(src, nl)
            cols = (dst[:, None] * self.nl + np.arange(nl)[None, :]).ravel()
            w = np.full(src.size, 1.0 / nl)
            lp = self.leafpos[self.host_leaf[src]]
            ok = self.okl[lp, cols]
            p = self.paths[lp, cols].astype(np.int64)
            upl = np.where(ok, self.S * self.W + src, self.L)
            loads = np.bincount(np.concatenate([p.ravel(), upl]),
                                weights=np.concatenate(
                                    [np.repeat(w, p.shape[1]), w]),
                                minlength=self.L + 1)
            loads[self.L] = 0.0
            worst = np.maximum(loads[p].max(axis=1), loads[upl])
            r = np.where(ok, w * np.minimum(1.0, 1.0 / np.maximum(worst,
                                                                  1e-12)),
                         0.0)
            rates.append(r.sum() / (2 * n))
        return float(np.mean(rates))

    # ------------------------------------------------------------------
    def balance(self):
        """Per-switch port counts and imbalance among candidate ports."""
        S, W, nl = self.S, self.W, self.nl
        self.progress.stage("balance")
        A = (self.rkind == K_SWITCH)
        adj = np.zeros((S, S), dtype=np.float32)
        ss, pp = np.nonzero(A)
        adj[ss, self.rindex[ss, pp]] = 1.0
        leaves = self.leaves
        INF = np.iinfo(np.int32).max
        D = np.full((S, leaves.size), INF, dtype=np.int64)
        D[leaves, np.arange(leaves.size)] = 0
        front = np.zeros((S, leaves.size), dtype=np.float32)
        front[leaves, np.arange(leaves.size)] = 1.0
        d = 0
        while front.any():
            d += 1
            reach = (adj @ front) > 0
            new = reach & (D == INF)
            D[new] = d
            front = new.astype(np.float32)
        self.D = D
        col_lp = self.leafpos[self.col_leaf]
        base_cols = np.zeros(self.C, dtype=bool)
        base_cols[::nl] = True
        self.port_base = np.zeros((S, W), dtype=np.int64)
        self.port_all = np.zeros((S, W), dtype=np.int64)
        self.imb_base = np.zeros(S, dtype=np.int64)
        self.imb_all = np.zeros(S, dtype=np.int64)
        self.nonminimal = np.zeros(S, dtype=np.int64)
        for s in range(S):
            row = self.lft[s].astype(np.int64)
            has = row >= 0
            self.port_base[s] = np.bincount(row[has & base_cols],
                                            minlength=W)[:W]
            self.port_all[s] = np.bincount(row[has], minlength=W)[:W]
            ports = np.nonzero(A[s])[0]
            if ports.size == 0:
                continue
            rem = self.rindex[s, ports]
            ds = D[s]
            cand = (D[rem] == (ds - 1)[None, :]) & (ds > 0)[None, :] & \
                (ds < INF)[None, :]                       # (ports, leaves)
            sig, grp = np.unique(cand.T, axis=0, return_inverse=True)
            grp = grp.ravel()
            ncand = sig.sum(axis=1)
            cg = grp[col_lp]                              # group per column
            code = cg * W + np.where(has, row, 0)
            cnt_b = np.bincount(code[has & base_cols],
                                minlength=sig.shape[0] * W).reshape(-1, W)
            cnt_a = np.bincount(code[has],
                                minlength=sig.shape[0] * W).reshape(-1, W)
            sub_b = cnt_b[:, ports]
            sub_a = cnt_a[:, ports]
            multi = ncand >= 2
            if multi.any():
                for sub, dst in ((sub_b, self.imb_base),
                                 (sub_a, self.imb_all)):
                    hi = np.where(sig, sub, -1).max(axis=1)
                    lo = np.where(sig, sub, np.iinfo(np.int64).max).min(axis=1)
                    dst[s] = int((hi - lo)[multi].max())
            # routes that use a switch port outside the candidate set
            inc = np.zeros((sig.shape[0], W), dtype=bool)
            inc[:, ports] = sig
            swp = np.zeros(W, dtype=bool)
            swp[ports] = True
            anyc = ncand > 0
            r_sw = has & swp[np.where(has, row, 0)] & anyc[cg]
            self.nonminimal[s] = int((r_sw & ~inc[cg, np.where(has, row, 0)])
                                     .sum())
            self.progress.update(s + 1, S)
        self.progress.done()

    # ------------------------------------------------------------------
    def credit_loops(self):
        """One cycle of the channel dependency graph, or None."""
        self.progress.stage("credit loops")
        used = self.used & (self.kind == K_SWITCH)
        s, c = np.nonzero(used)
        n = self.nxt[s, c]
        k2 = self.kind[n, c]
        m = k2 == K_SWITCH
        e1 = self.link[s[m], c[m]].astype(np.int64)
        e2 = self.link[n[m], c[m]].astype(np.int64)
        M = self.S * self.W
        codes = np.unique(e1 * M + e2)
        e1, e2 = codes // M, codes % M
        self.cdg_edges = int(codes.size)
        alive = np.ones(codes.size, dtype=bool)
        while True:
            a1, a2 = e1[alive], e2[alive]
            indeg = np.bincount(a2, minlength=M)
            outdeg = np.bincount(a1, minlength=M)
            keep = (indeg[e1] > 0) & (outdeg[e2] > 0) & alive
            if keep.sum() == alive.sum():
                break
            alive = keep
        self.progress.done()
        if not alive.any():
            return None
        a1, a2 = e1[alive], e2[alive]
        succ = {}
        for x, y in zip(a1.tolist(), a2.tolist()):
            succ.setdefault(x, y)
        x = int(a1[0])
        seen = {}
        seq = []
        while x not in seen:
            seen[x] = len(seq)
            seq.append(x)
            x = succ[x]
        cyc = seq[seen[x]:]
        return [(self.sw_nodes[ch // self.W], ch % self.W) for ch in cyc]

    # ------------------------------------------------------------------
    def diversity(self):
        """For host pairs on different leaves: how many of the 2^LMC paths
        share a switch-to-switch link / an intermediate switch with another
        path of the same pair."""
        nl = self.nl
        if nl < 2:
            return None
        self.progress.stage("path diversity")
        leaves = self.leaves
        lp_all = np.repeat(np.arange(leaves.size), self.N)
        h_all = np.tile(np.arange(self.N), leaves.size)
        m = leaves[lp_all] != self.host_leaf[h_all]
        lp_all, h_all = lp_all[m], h_all[m]
        weight = np.bincount(self.leafpos[self.host_leaf],
                             minlength=leaves.size)[lp_all].astype(float)
        sampled = False
        if lp_all.size > self.diversity_samples:
            rng = np.random.default_rng(self.seed + 1)
            sel = rng.choice(lp_all.size, self.diversity_samples,
                             replace=False)
            lp_all, h_all, weight = lp_all[sel], h_all[sel], weight[sel]
            sampled = True
        cols = h_all[:, None] * nl + np.arange(nl)[None, :]
        p = self.paths[lp_all[:, None], cols].astype(np.int64)  # (F, nl, H)
        ok = self.okl[lp_all[:, None], cols].all(axis=1)
        p, weight = p[ok], weight[ok]
        pad = self.L
        # drop the last real hop (egress to the destination host)
        length = (p != pad).sum(axis=2)                          # (F, nl)
        pos = np.arange(p.shape[2])[None, None, :]
        lk = np.where(pos < (length - 1)[:, :, None], p, -1)
        sw = np.where((pos >= 1) & (pos < (length - 1)[:, :, None]),
                      p // self.W, -1)
        res = {}
        for name, arr in (("links", lk), ("switches", sw)):
            shared = np.zeros(arr.shape[:2], dtype=bool)
            for a in range(nl):
                for b in range(nl):
                    if a == b:
                        continue
                    eq = (arr[:, a, :, None] == arr[:, b, None, :]) & \
                        (arr[:, a, :, None] >= 0)
                    shared[:, a] |= eq.any(axis=(1, 2))
            cnt = shared.sum(axis=1)
            hist = np.bincount(cnt, weights=weight, minlength=nl + 1)
            res[name] = {str(i): int(round(v)) for i, v in enumerate(hist)}
        res["pairs"] = int(round(weight.sum()))
        res["sampled"] = sampled
        self.progress.done()
        return res

    # ------------------------------------------------------------------
    def run(self, want_curves=True):
        t0 = time.time()
        self.validate()
        self.build_paths()
        self.balance()
        cyc = self.credit_loops()
        base = self.shift(False)
        spread = self.shift(True) if self.nl > 1 else None
        bound = self.leaf_bound()
        bis_b = self.bisection(False)
        bis_s = self.bisection(True) if self.nl > 1 else None
        div = self.diversity()
        self.curves = {"base": base, "spread": spread, "bound": bound}
        if cyc:
            self.problem("credit loop: " + " -> ".join(
                f"'{n.desc}'[{p}]" for n, p in cyc))
        self.credit_cycle = cyc
        R = self.ranks.size
        bal = []
        for s, n in enumerate(self.sw_nodes):
            bal.append({"guid": f"0x{n.guid:016x}", "desc": n.desc,
                        "base_imbalance": int(self.imb_base[s]),
                        "all_imbalance": int(self.imb_all[s]),
                        "nonminimal_lids": int(self.nonminimal[s])})
        wb = int(np.argmax(self.imb_base))
        wa = int(np.argmax(self.imb_all))

        def shift_fig(ml):
            e = self._eff(ml)
            return {"efficiency": e, "worst": float(ml.max()),
                    "worst_round": int(np.argmax(ml)) + 1,
                    "mean_max_load": float(ml.mean()),
                    "slowdown": (1.0 / e) if e > 0 else None}
        res = {
            "valid": bool(self.valid),
            "credit_loop": cyc is not None,
            "lmc": self.lmc,
            "hosts": self.N,
            "switches": self.S,
            "ranks": int(R),
            "rank_order": self.rank_source,
            "max_hops": self.H,
            "unreachable_pairs": self.unreachable_pairs,
            "shift": {"base": shift_fig(base),
                      "spread": shift_fig(spread) if spread is not None
                      else None},
            "bound": {"efficiency": self._eff(bound),
                      "worst": float(bound.max())},
            "bisection": {"base": bis_b, "spread": bis_s,
                          "patterns": self.bisections, "seed": self.seed},
            "balance": {"switches": bal,
                        "worst": {"base": int(self.imb_base[wb]),
                                  "base_switch": self.sw_nodes[wb].desc,
                                  "all": int(self.imb_all[wa]),
                                  "all_switch": self.sw_nodes[wa].desc},
                        "nonminimal_lids": int(self.nonminimal.sum())},
            "diversity": div,
            "cdg_edges": self.cdg_edges,
            "credit_cycle": [{"switch": n.desc, "guid": f"0x{n.guid:016x}",
                              "port": int(p)} for n, p in cyc] if cyc
            else None,
            "problems": self.problems + (
                [f"... and {self._nproblems - len(self.problems)} more"]
                if self._nproblems > len(self.problems) else []),
            "notes": self.notes,
            "seconds": round(time.time() - t0, 3),
        }
        self.result = res
        return res

    # ------------------------------------------------------------------
    def port_rows(self):
        """Per switch/port rows for CSV output."""
        rows = []
        for s, n in enumerate(self.sw_nodes):
            for p in range(1, self.W):
                k = int(self.rkind[s, p])
                if k == K_UNLINKED and not self.port_all[s, p]:
                    continue
                if k == K_SWITCH:
                    peer = self.sw_nodes[int(self.rindex[s, p])].desc
                    pk = "switch"
                elif k == K_HOST:
                    peer = self.hosts[int(self.rindex[s, p])].desc
                    pk = "host"
                elif k == K_DOWN:
                    peer, pk = "", "down"
                else:
                    peer, pk = "", "unlinked"
                rows.append({"switch_guid": f"0x{n.guid:016x}",
                             "switch": n.desc, "port": p, "peer_kind": pk,
                             "peer": peer,
                             "base_lids": int(self.port_base[s, p]),
                             "all_lids": int(self.port_all[s, p])})
        return rows


def shift_by_order(topo: Topology, lfts: Lfts, orders, lmc=None, seed=1):
    """Shift-alltoall figures of one set of LFTs in several rank orders.

    orders: {name: (order, job, job_index)} as for Analysis.set_ranks.
    Validity and credit loops are checked once.  Returns {"valid",
    "unreachable_pairs", "credit_loop", "hosts", "lmc", "problems",
    "orders": {name: {"ranks", "rank_order", "base", "spread"}}} with the
    efficiencies (spread None at LMC 0; both None, ranks 0 and the reason
    as rank_order for a job of fewer than two ranks)."""
    an = Analysis(topo, lfts, lmc=lmc, seed=seed, bisections=0)
    an.validate()
    an.build_paths()
    cyc = an.credit_loops()
    res = {"valid": bool(an.valid), "unreachable_pairs":
           an.unreachable_pairs, "credit_loop": cyc is not None,
           "hosts": an.N, "lmc": an.lmc, "problems": an.problems[:3],
           "orders": {}}
    for name, (order, job, k) in orders.items():
        try:
            an.set_ranks(None, order, job, k)
        except InputError as e:
            if job is None:
                raise
            # a job too small for this fabric: no figure
            res["orders"][name] = {"ranks": 0, "rank_order": e.msg,
                                   "base": None, "spread": None}
            continue
        base = an._eff(an.shift(False))
        spread = an._eff(an.shift(True)) if an.nl > 1 else None
        res["orders"][name] = {"ranks": int(an.ranks.size),
                               "rank_order": an.rank_source,
                               "base": base, "spread": spread}
    return res


def format_text(res, lfts_path="", title=None):
    """Readable report of one analysis result."""
    out = []
    if title:
        out.append(title)
    out.append(f"LFTs {lfts_path}: {res['switches']} switches, "
               f"{res['hosts']} hosts, LMC {res['lmc']}, "
               f"{res['ranks']} ranks in {res['rank_order']}")
    out.append(f"  valid routing      : {'yes' if res['valid'] else 'NO'}"
               f" ({res['unreachable_pairs']} unreachable host/LID pairs,"
               f" longest path {res['max_hops']} switch hops)")
    out.append(f"  credit loop        : "
               f"{'YES' if res['credit_loop'] else 'no'}"
               f" ({res['cdg_edges']} channel dependencies)")
    sb = res["shift"]["base"]
    out.append(f"  shift, base LID    : efficiency {sb['efficiency']:.4f}"
               f" (slowdown x{sb['slowdown']:.3f}), worst round "
               f"{sb['worst_round']} max link load {sb['worst']:g}")
    sp = res["shift"]["spread"]
    if sp:
        out.append(f"  shift, LMC spread  : efficiency {sp['efficiency']:.4f}"
                   f" (slowdown x{sp['slowdown']:.3f}), worst round "
                   f"{sp['worst_round']} max link load {sp['worst']:g}")
    out.append(f"  leaf-level bound   : efficiency "
               f"{res['bound']['efficiency']:.4f}")
    bi = res["bisection"]
    if bi["base"] is not None:
        line = f"  random bisection   : base {bi['base']:.4f}"
        if bi["spread"] is not None:
            line += f", spread {bi['spread']:.4f}"
        out.append(line + f" ({bi['patterns']} patterns, seed {bi['seed']})")
    bw = res["balance"]["worst"]
    out.append(f"  port imbalance     : base LIDs {bw['base']} "
               f"(on '{bw['base_switch']}'), all LIDs {bw['all']} "
               f"(on '{bw['all_switch']}'), non-minimal LID routes "
               f"{res['balance']['nonminimal_lids']}")
    dv = res.get("diversity")
    if dv:
        out.append(f"  LMC path diversity : {dv['pairs']} host pairs"
                   f"{' (sampled)' if dv['sampled'] else ''}; paths sharing "
                   "a link: " + ", ".join(f"{k}:{v}" for k, v in
                                          dv["links"].items()))
        out.append("                       paths sharing a switch: " +
                   ", ".join(f"{k}:{v}" for k, v in dv["switches"].items()))
    for p in res["problems"]:
        out.append(f"  problem: {p}")
    for n in res["notes"]:
        out.append(f"  note: {n}")
    return "\n".join(out)
