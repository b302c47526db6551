"""Metrics of a routing on the analyzer's model (osmoffset.model).

The functions take `an`, a FabricModel with a rank order (in practice
osmoffset.analyze.Analysis, which calls them in order and keeps what they
set on it):

  validate(an)       host-pair reachability from every leaf (used, ok,
                     hops, leaves, unreachable_pairs, problems) and the
                     check of every LFT entry for every LID (lft_entries)
  build_paths(an)    egress-link paths from every leaf to every column
  shift(an, spread)  per-round max link load of a shift alltoall
  eff(maxloads)      efficiency of those rounds: mean of min(1, 1/load)
  leaf_bound(an)     the same bound from leaf up-link counts alone
  bisection(an, spread)  mean delivered rate of random bisections
  balance(an)        per-switch port counts, imbalance among minimum-hop
                     candidate ports, non-minimal routes
  credit_loops(an[, scope])  one cycle of the channel dependency graph, or None
  diversity(an)      sharing among the 2^LMC paths of host pairs
  shift_by_order(topo, lfts, orders, ...)  shift figures in several
                     rank orders
"""

from __future__ import annotations

import numpy as np

from .fabric import InputError
from .model import K_HOST, K_NOENTRY, K_SWITCH, KIND_TEXT
from .validity import AllEntries, settle, spread as _spread, walk_loop

__all__ = ["validate", "build_paths", "load_batch", "shift", "eff",
           "leaf_bound", "bisection", "balance", "credit_loops",
           "diversity", "shift_by_order", "route_counts"]


def validate(an):
    """Reachability of every host LID from every host's leaf, then of
    every LID from every switch (an.lft_entries)."""
    S, C, N = an.S, an.C, an.N
    kind, nxt = an.kind, an.nxt
    an.progress.stage("validity")
    # used[s, c]: some CA source's packet for column c reaches switch s
    leaf_count = np.bincount(an.host_leaf, minlength=S)
    used = np.zeros((S, C), dtype=bool)
    leaves = np.nonzero(leaf_count)[0]
    an.leaves = leaves
    others = leaf_count[leaves][:, None] - \
        (an.col_leaf[None, :] == leaves[:, None])
    used[leaves] = others > 0
    an.lane_used = lane_sources(an, used)
    _spread(used, nxt)
    an.used = used
    # resolve outcome
    good = (kind == K_HOST) & (an.ridx == an.col_host[None, :])
    ok, settled, hops = settle(kind == K_SWITCH, good, nxt)
    an.ok = ok
    an.hops = hops
    an.H = int(hops[used].max()) if used.any() else 1
    # problems at used entries
    bad = used & ~good & (kind != K_SWITCH)
    bs, bc = np.nonzero(bad)
    order = np.lexsort((bc, bs))
    for s, c in zip(bs[order][:200], bc[order][:200]):
        k = int(kind[s, c])
        port = int(an.lft[s, c])
        if k == K_HOST:
            wrong = an.hosts[int(an.ridx[s, c])]
            an.problem(f"{an.swname(s)}: {an.lidname(c)} is "
                       f"routed out of port {port} to the wrong CA "
                       f"'{wrong.desc}'")
        elif k == K_NOENTRY:
            what = " (switch missing from the LFT dump)" \
                if s in an.missing_lft else ""
            an.problem(f"{an.swname(s)}: {an.lidname(c)} has no "
                       f"LFT entry{what} (dead end)")
        else:
            an.problem(f"{an.swname(s)}: {an.lidname(c)} is "
                       f"routed out of port {port}, "
                       f"{KIND_TEXT[k]} (dead end)")
    extra = int(bad.sum()) - min(int(bad.sum()), 200)
    if extra:
        an._nproblems += extra
    loops = used & ~settled
    an.loop_entries = int(loops.sum())
    if loops.any():
        ls, lc = np.nonzero(loops)
        reported = set()
        for s, c in zip(ls[:2000], lc[:2000]):
            cyc = walk_loop(nxt, int(s), int(c))
            key = (frozenset(cyc), int(c))
            if key in reported:
                continue
            reported.add(key)
            names = " -> ".join(f"'{an.sw_nodes[x].desc}'"
                                f"[{int(an.lft[x, c])}]" for x in cyc)
            an.problem(f"routing loop for {an.lidname(int(c))}: "
                       f"{names} -> '{an.sw_nodes[cyc[0]].desc}'")
            if len(reported) >= 10:
                break
    # every other LFT entry: faults no host route meets today
    allent = AllEntries(an, used=used, settled=settled)
    used_rows = set(np.nonzero(used.any(axis=1))[0].tolist())
    msgs = allent.messages(used_rows)
    for text in msgs[:200]:
        an.problem(text)
    an._nproblems += max(0, len(msgs) - 200)
    an.lft_entries = {"lids": allent.lids, "switches": S,
                      "faults": allent.fault_entries,
                      "unrouted": allent.unrouted,
                      "unrouted_ca": allent.unrouted_ca}
    # pairs
    leafpos = np.full(S, -1, dtype=np.int64)
    leafpos[leaves] = np.arange(leaves.size)
    an.leafpos = leafpos
    okl = an.ok[leaves]                          # (nleaves, C)
    src_ok = okl[leafpos[an.host_leaf]]          # (N, C)
    src_ok[an.col_host[None, :] == np.arange(N)[:, None]] = True
    an.unreachable_pairs = int((~src_ok).sum())
    an.valid = (an.unreachable_pairs == 0 and an._nproblems == 0)
    an.progress.done()


def build_paths(an):
    """Egress-link paths from every leaf to every column."""
    leaves, H, W = an.leaves, an.H, an.W
    nlv = leaves.size
    pad = an.S * W + an.N          # a dummy link id
    an.L = pad
    paths = np.full((nlv, an.C, H), pad, dtype=np.int32)
    cur = np.repeat(leaves[:, None], an.C, axis=1)
    cols = np.broadcast_to(np.arange(an.C)[None, :], cur.shape)
    okl = an.ok[leaves]
    cur = np.where(okl, cur, -1)
    for h in range(H):
        a = cur >= 0
        if not a.any():
            break
        ls, lc = np.nonzero(a)
        s = cur[ls, lc]
        c = cols[ls, lc]
        paths[ls, lc, h] = an.link[s, c]
        cur[ls, lc] = an.nxt[s, c]
    an.paths = paths
    an.okl = okl

def load_batch(an, src, cols, weights, nb, rid):
    """Per-round max load. src (F,) host ids, cols (F,) columns,
    rid (F,) round index within the batch."""
    L1 = an.L + 1
    lp = an.leafpos[an.host_leaf[src]]
    ok = an.okl[lp, cols]
    p = an.paths[lp, cols]                        # (F, H)
    up = (an.S * an.W + src).astype(np.int64)
    up = np.where(ok, up, an.L)
    base = rid.astype(np.int64) * L1
    idx = np.concatenate([(p.astype(np.int64) + base[:, None]).ravel(),
                          up + base])
    w = np.concatenate([np.repeat(weights, p.shape[1]), weights])
    loads = np.bincount(idx, weights=w, minlength=nb * L1)
    loads = loads.reshape(nb, L1)[:, :an.L]
    return loads.max(axis=1)

def shift(an, spread):
    ranks = an.ranks
    R = ranks.size
    nl = an.nl if spread else 1
    per = max(1, int(3_000_000 // max(1, R * nl * (an.H + 1))))
    out = np.zeros(R - 1)
    an.progress.stage("shift " + ("spread" if spread else "base"))
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
            cols = (dst[:, None] * an.nl +
                    np.arange(nl)[None, :]).ravel()
            w = np.full(src.size, 1.0 / nl)
        else:
            cols = dst * an.nl
            w = np.ones(src.size)
        out[k - 1:k - 1 + nb] = load_batch(an, src, cols, w, nb, rid)
        k += nb
        an.progress.update(k - 1, R - 1)
    an.progress.done()
    return out

@staticmethod
def eff(maxloads):
    ml = np.where(maxloads <= 0, 1.0, maxloads)
    return float(np.mean(np.minimum(1.0, 1.0 / ml))) if ml.size else 1.0

def leaf_bound(an):
    ranks = an.ranks
    R = ranks.size
    S = an.S
    up = (an.rkind == K_SWITCH).sum(axis=1).astype(float)
    rl = an.host_leaf[ranks]
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

def bisection(an, spread):
    rng = np.random.default_rng(an.seed)
    hosts = np.unique(an.ranks)
    n = hosts.size // 2
    nl = an.nl if spread else 1
    if n == 0 or an.bisections <= 0:
        return None
    rates = []
    for _ in range(an.bisections):
        perm = rng.permutation(hosts)
        a, b = perm[:n], perm[n:2 * n]
        src = np.concatenate([a, b])
        dst = np.concatenate([b, a])
        src = np.repeat(src, nl)
        cols = (dst[:, None] * an.nl + np.arange(nl)[None, :]).ravel()
        w = np.full(src.size, 1.0 / nl)
        lp = an.leafpos[an.host_leaf[src]]
        ok = an.okl[lp, cols]
        p = an.paths[lp, cols].astype(np.int64)
        upl = np.where(ok, an.S * an.W + src, an.L)
        loads = np.bincount(np.concatenate([p.ravel(), upl]),
                            weights=np.concatenate(
                                [np.repeat(w, p.shape[1]), w]),
                            minlength=an.L + 1)
        loads[an.L] = 0.0
        worst = np.maximum(loads[p].max(axis=1), loads[upl])
        r = np.where(ok, w * np.minimum(1.0, 1.0 / np.maximum(worst,
                                                              1e-12)),
                     0.0)
        rates.append(r.sum() / (2 * n))
    return float(np.mean(rates))

def balance(an):
    """Per-switch port counts and imbalance among candidate ports."""
    S, W, nl = an.S, an.W, an.nl
    an.progress.stage("balance")
    A = (an.rkind == K_SWITCH)
    adj = np.zeros((S, S), dtype=np.float32)
    ss, pp = np.nonzero(A)
    adj[ss, an.rindex[ss, pp]] = 1.0
    leaves = an.leaves
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
    an.D = D
    col_lp = an.leafpos[an.col_leaf]
    base_cols = np.zeros(an.C, dtype=bool)
    base_cols[::nl] = True
    an.port_base = np.zeros((S, W), dtype=np.int64)
    an.port_all = np.zeros((S, W), dtype=np.int64)
    an.imb_base = np.zeros(S, dtype=np.int64)
    an.imb_all = np.zeros(S, dtype=np.int64)
    an.nonminimal = np.zeros(S, dtype=np.int64)
    for s in range(S):
        row = an.lft[s].astype(np.int64)
        has = row >= 0
        an.port_base[s] = np.bincount(row[has & base_cols],
                                        minlength=W)[:W]
        an.port_all[s] = np.bincount(row[has], minlength=W)[:W]
        ports = np.nonzero(A[s])[0]
        if ports.size == 0:
            continue
        rem = an.rindex[s, ports]
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
            for sub, dst in ((sub_b, an.imb_base),
                             (sub_a, an.imb_all)):
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
        an.nonminimal[s] = int((r_sw & ~inc[cg, np.where(has, row, 0)])
                                 .sum())
        an.progress.update(s + 1, S)
    an.progress.done()

def route_counts(an):
    """Per switch port (switch * W + port): the routes from every rank to
    every other rank's base LID, and to its LIDs of every offset, that
    cross the link out of it.  A random rank order loads each link in
    proportion to these counts, where LIDs per port count every LID alike
    whoever sends to it.  Routes that lead nowhere count on the links
    they cross before."""
    n = an.S * an.W
    per_leaf = np.bincount(an.leafpos[an.host_leaf[an.ranks]],
                           minlength=an.leaves.size)
    is_rank = np.zeros(an.N, dtype=bool)
    is_rank[an.ranks] = True
    cols = np.nonzero(is_rank[an.col_host])[0]
    col_lp = an.leafpos[an.col_leaf[cols]]
    is_base = (cols % an.nl == 0)[:, None]
    base = np.zeros(n, dtype=np.int64)
    every = np.zeros(n, dtype=np.int64)
    for lp in np.nonzero(per_leaf)[0]:            # a leaf at a time
        links = an.paths[lp, cols, :]             # (cols, H)
        # a rank sends to no LID of its own
        w = np.broadcast_to((per_leaf[lp] - (col_lp == lp))[:, None],
                            links.shape)
        ok = links < n
        every += np.bincount(links[ok], weights=w[ok],
                             minlength=n)[:n].astype(np.int64)
        ok &= is_base
        base += np.bincount(links[ok], weights=w[ok],
                            minlength=n)[:n].astype(np.int64)
    return base, every

def lane_sources(an, used_from):
    """Per virtual lane, the (switch, column) sources of used_from whose
    routes travel on it: {lane: bool array}; None without path SLs
    (an.path_sls None or empty: every route on VL0)."""
    sls = getattr(an, "path_sls", None)
    if sls is None or not sls.routes:
        return None
    lane = np.zeros(used_from.shape, dtype=np.int64)
    maxlid = an.lid2col.size - 1
    for guid, lid, sl, line in sls.routes:
        s = an.sidx.get(guid)
        if s is None:
            raise InputError(sls.path, line, f"switch 0x{guid:016x} is "
                             "not in the topology")
        c = int(an.lid2col[lid]) if lid <= maxlid else -1
        if c < 0:
            raise InputError(sls.path, line, f"LID {lid} is not a CA LID "
                             "of the topology")
        lane[s, c] = sl
    return {int(k): used_from & (lane == k) for k in np.unique(lane)}


def _dependencies(an, kind, nxt, link, used):
    """Codes e1 * S * W + e2 of the channel dependencies of the entries in
    used: a packet that crossed link e1 into a switch waits there for link
    e2 out of it."""
    used = used & (kind == K_SWITCH)
    s, c = np.nonzero(used)
    n = nxt[s, c]
    m = kind[n, c] == K_SWITCH
    e1 = link[s[m], c[m]].astype(np.int64)
    e2 = link[n[m], c[m]].astype(np.int64)
    return e1 * (an.S * an.W) + e2


def _cycle(an, codes):
    """One cycle of the channel dependencies codes (_dependencies()), or
    None; adds the dependencies to an.cdg_edges."""
    M = an.S * an.W
    codes = np.unique(codes)
    e1, e2 = codes // M, codes % M
    an.cdg_edges += int(codes.size)
    alive = np.ones(codes.size, dtype=bool)
    while True:
        a1, a2 = e1[alive], e2[alive]
        indeg = np.bincount(a2, minlength=M)
        outdeg = np.bincount(a1, minlength=M)
        keep = (indeg[e1] > 0) & (outdeg[e2] > 0) & alive
        if keep.sum() == alive.sum():
            break
        alive = keep
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
    return [(an.sw_nodes[ch // an.W], ch % an.W) for ch in cyc]


def _every_entry_dependencies(an):
    """The dependencies of every LFT entry that leads to another switch,
    for every LID: the host LIDs' and the switch LIDs' (management
    traffic to switches, an SM's or a monitor's, takes those)."""
    host = _dependencies(an, an.kind, an.nxt, an.link, an.kind == K_SWITCH)
    kind, ridx, link = an.entry_arrays(an.sw_lft)
    nxt = np.where(kind == K_SWITCH, ridx, -1)
    sw = _dependencies(an, kind, nxt, link, kind == K_SWITCH)
    return np.concatenate([host, sw])


def credit_loops(an, scope=None):
    """One cycle of the channel dependency graph of a virtual lane, or
    None; the lane in an.credit_lane.  Each lane carries the routes its
    path SL puts on it (an.path_sls; all on VL0 without them).  With
    scope (default an.credit_scope) 'every-entry': the dependencies of
    every LFT entry, switch LIDs too, on one lane."""
    an.progress.stage("credit loops")
    an.cdg_edges = 0
    an.credit_lane = None
    if (scope or an.credit_scope) == "every-entry":
        cyc = _cycle(an, _every_entry_dependencies(an))
        if cyc:
            an.credit_lane = 0
        an.progress.done()
        return cyc
    cyc = None
    lanes = an.lane_used or {0: None}
    for k, seeds in sorted(lanes.items()):
        if seeds is None:
            used = an.used
        else:
            used = seeds.copy()
            _spread(used, an.nxt)
        cyc = _cycle(an, _dependencies(an, an.kind, an.nxt, an.link, used))
        if cyc:
            an.credit_lane = k
            break
    an.progress.done()
    return cyc


def diversity(an):
    """For host pairs on different leaves: how many of the 2^LMC paths
    share a switch-to-switch link / an intermediate switch with another
    path of the same pair."""
    nl = an.nl
    if nl < 2:
        return None
    an.progress.stage("path diversity")
    leaves = an.leaves
    lp_all = np.repeat(np.arange(leaves.size), an.N)
    h_all = np.tile(np.arange(an.N), leaves.size)
    m = leaves[lp_all] != an.host_leaf[h_all]
    lp_all, h_all = lp_all[m], h_all[m]
    weight = np.bincount(an.leafpos[an.host_leaf],
                         minlength=leaves.size)[lp_all].astype(float)
    sampled = False
    if lp_all.size > an.diversity_samples:
        rng = np.random.default_rng(an.seed + 1)
        sel = rng.choice(lp_all.size, an.diversity_samples,
                         replace=False)
        lp_all, h_all, weight = lp_all[sel], h_all[sel], weight[sel]
        sampled = True
    cols = h_all[:, None] * nl + np.arange(nl)[None, :]
    p = an.paths[lp_all[:, None], cols].astype(np.int64)  # (F, nl, H)
    ok = an.okl[lp_all[:, None], cols].all(axis=1)
    p, weight = p[ok], weight[ok]
    pad = an.L
    # drop the last real hop (egress to the destination host)
    length = (p != pad).sum(axis=2)                          # (F, nl)
    pos = np.arange(p.shape[2])[None, None, :]
    lk = np.where(pos < (length - 1)[:, :, None], p, -1)
    sw = np.where((pos >= 1) & (pos < (length - 1)[:, :, None]),
                  p // an.W, -1)
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
    an.progress.done()
    return res



def shift_by_order(topo, lfts, orders, lmc=None, seed=1, path_sls=None):
    """Shift-alltoall figures of one set of LFTs in several rank orders.

    orders: {name: (order, job, job_index)} as for Analysis.set_ranks.
    Validity and credit loops are checked once.  Returns {"valid",
    "unreachable_pairs", "credit_loop", "credit_loop_every_entry" (among
    the dependencies of every LFT entry; None with path_sls), "hosts",
    "lmc", "problems",
    "orders": {name: {"ranks", "rank_order", "base", "spread"}}} with the
    efficiencies (spread None at LMC 0; both None, ranks 0 and the reason
    as rank_order for a job of fewer than two ranks).  path_sls: the
    plugin's osmoffset-path-sl.dump (credit loops per lane)."""
    from .analyze import Analysis
    an = Analysis(topo, lfts, lmc=lmc, seed=seed, bisections=0,
                  path_sls=path_sls)
    an.validate()
    an.build_paths()
    cyc = an.credit_loops()
    every = None
    if path_sls is None:
        every = credit_loops(an, "every-entry") is not None
    res = {"valid": bool(an.valid), "unreachable_pairs":
           an.unreachable_pairs, "credit_loop": cyc is not None,
           "credit_loop_every_entry": every,
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
        base = eff(shift(an, False))
        sp = eff(shift(an, True)) if an.nl > 1 else None
        res["orders"][name] = {"ranks": int(an.ranks.size),
                               "rank_order": an.rank_source,
                               "base": base, "spread": sp}
    return res


def shift_random_seeds(topo, lfts, seeds, lmc=None):
    """Shift figures of one set of LFTs in the random rank orders of seeds
    1..seeds (as lft-analyze --order random --seed S): a list of (base,
    spread) per seed, spread None at LMC 0.  One shuffle is luck: a
    routing's standing in random placement shows over many."""
    from .analyze import Analysis
    an = Analysis(topo, lfts, lmc=lmc, bisections=0)
    an.validate()
    an.build_paths()
    out = []
    for seed in range(1, seeds + 1):
        an.seed = seed
        an.set_ranks(None, "random", None, 0)
        out.append((eff(shift(an, False)),
                    eff(shift(an, True)) if an.nl > 1 else None))
    return out
