"""The one reachability check: follow every LFT entry of a FabricModel.

For every destination column (every LID of every host, and every switch
LID) and every switch, an entry either forwards to the next switch, or
ends the walk: delivered (to the right CA port, or at port 0 of the
switch that owns the LID) or broken (no entry, a switch missing from the
dump, port 0 of another switch, a down or unlinked port, the wrong CA, a
switch's own LID sent away).  Walks that never end are loops.

  settle(fwd, good, nxt)     -> (ok, settled, hops) for all entries
  spread(used, nxt)          -> the entries walks from `used` pass through
  fed_by(fwd, nxt)           -> entries some other switch forwards into
  Columns                    -> fwd / good / kind / ridx of one column set
  reachability(topo, lfts, lmc, include_switches, sources)
                             -> problem strings of osmoffset.checks

Analysis.validate (osmoffset.analyze) uses the same arrays for host pairs
and for every LFT entry (see validity_of_all_entries).
"""

from __future__ import annotations

import numpy as np

from .model import (FabricModel, K_DOWN, K_HOST, K_NOENTRY, K_PORT0,
                    K_SWITCH, K_UNLINKED, KIND_TEXT)

__all__ = ["settle", "spread", "fed_by", "Columns", "walk_loop",
           "AllEntries", "reachability"]

_CHUNK = 4096       # columns at a time for fed_by


def settle(fwd, good, nxt):
    """Resolve every entry: (ok, settled, hops).  settled[s, c]: the walk
    from s for column c ends (not a loop); ok: it ends delivered; hops:
    switches on the way (1 at the last switch)."""
    settled = ~fwd
    ok = good.copy()
    hops = np.where(settled, 1, 0).astype(np.int16)
    us, uc = np.nonzero(fwd)
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
    return ok & settled, settled, hops


def spread(used, nxt):
    """used (modified in place) grown by every entry a walk from a used
    entry passes through."""
    fr_s, fr_c = np.nonzero(used)
    while fr_s.size:
        n = nxt[fr_s, fr_c]
        m = n >= 0
        n, c = n[m], fr_c[m]
        new = ~used[n, c]
        n, c = n[new], c[new]
        used[n, c] = True
        fr_s, fr_c = n, c
    return used


def fed_by(fwd, nxt):
    """fed[s, c]: some switch forwards column c into switch s."""
    S, C = fwd.shape
    fed = np.zeros((S, C), dtype=bool)
    for a in range(0, C, _CHUNK):
        fs, fc = np.nonzero(fwd[:, a:a + _CHUNK])
        fed[nxt[fs, fc + a], fc + a] = True
    return fed


def walk_loop(nxt, s, c):
    """The switches of the loop a walk from s for column c runs into."""
    seen = {}
    path = []
    while s >= 0 and s not in seen:
        seen[s] = len(path)
        path.append(s)
        s = int(nxt[s, c])
    if s < 0:
        return path
    return path[seen[s]:]


class Columns:
    """One set of destination columns of a model: the host LIDs ('host',
    the model's own arrays) or the switch LIDs ('switch').

    kind / ridx / nxt / lft: as in the model; fwd: the entry forwards to
    another switch; good: the entry delivers; bad: it ends the walk
    undelivered."""

    def __init__(self, m: FabricModel, which: str):
        self.which = which
        if which == "host":
            self.lft, self.kind, self.ridx = m.lft, m.kind, m.ridx
            self.nxt = m.nxt
            self.fwd = self.kind == K_SWITCH
            self.good = (self.kind == K_HOST) & \
                (self.ridx == m.col_host[None, :])
            self.own = None
        else:
            self.lft = m.sw_lft
            self.kind, self.ridx, _link = m.entry_arrays(m.sw_lft)
            own = np.arange(m.S)[:, None] == m.sw_owner[None, :]
            self.own = own
            self.fwd = (self.kind == K_SWITCH) & ~own
            self.nxt = np.where(self.fwd, self.ridx, -1)
            self.good = own & (self.kind == K_PORT0)
        self.bad = ~self.fwd & ~self.good

    def ncols(self):
        return self.lft.shape[1]


class AllEntries:
    """Every entry of every switch for every LID of the fabric, host LIDs
    (with the model's LMC) and switch LIDs.

    faults: list of (columns, s, c) broken ends: an entry that exists and
    ends undelivered, a missing entry some switch forwards into (a dead
    end), and the entries of loops (one per loop and LID in loops);
    unrouted: switch/LID pairs without an entry that no switch forwards
    into (up/down routing leaves those: one root to another; counted
    whether host routes start there or not); used:
    optional (S, C) mask of the host-column entries host routes use, whose
    faults the caller reports already (left out of faults)."""

    def __init__(self, m: FabricModel, used=None, settled=None):
        self.model = m
        self.lids = m.C + int(m.sw_lid.size)
        self.faults = []
        self.loops = []
        self.fault_entries = 0
        self.unrouted = 0
        self.unrouted_ca = 0
        missing = np.zeros(m.S, dtype=bool)
        missing[m.missing_lft] = True
        self.missing = missing
        for which in ("host", "switch"):
            col = Columns(m, which)
            if col.ncols() == 0:
                continue
            if which == "host" and settled is not None:
                st = settled
            else:
                _ok, st, _h = settle(col.fwd, col.good, col.nxt)
            fed = fed_by(col.fwd, col.nxt)
            hole = col.kind == K_NOENTRY
            bad = col.bad & (~hole | fed)
            loop = col.fwd & ~st
            bad_all = bad | loop
            self.fault_entries += int(bad_all.sum())
            holes = int((hole & ~fed & ~missing[:, None]).sum())
            self.unrouted += holes
            if which == "host":
                self.unrouted_ca = holes
            if which == "host" and used is not None:
                bad &= ~used
                loop &= ~used
            bs, bc = np.nonzero(bad)
            order = np.lexsort((bc, bs))
            self.faults.extend((col, int(s), int(c)) for s, c in
                               zip(bs[order], bc[order]))
            if loop.any():
                ls, lc = np.nonzero(loop)
                seen = set()
                for s, c in zip(ls[:2000].tolist(), lc[:2000].tolist()):
                    cyc = walk_loop(col.nxt, s, c)
                    key = (frozenset(cyc), c)
                    if key in seen:
                        continue
                    seen.add(key)
                    self.loops.append((col, cyc, c))
                    if len(seen) >= 10:
                        break
        # a switch without an LFT that no entry forwards into
        self.lone_missing = [s for s in m.missing_lft]
        self.fault_entries += len(self.lone_missing)

    def messages(self, used_rows=()):
        """Problem texts in the analyzer's words: the faults, then the
        loops, then the switches missing from the dump."""
        m = self.model
        out = []
        for col, s, c in self.faults:
            out.append(_analysis_text(m, col, s, c))
        for col, cyc, c in self.loops:
            name = m.lidname(c) if col.which == "host" else m.swlidname(c)
            names = " -> ".join(f"'{m.sw_nodes[x].desc}'"
                                f"[{int(col.lft[x, c])}]" for x in cyc)
            out.append(f"routing loop for {name}: {names} -> "
                       f"'{m.sw_nodes[cyc[0]].desc}'")
        for s in self.lone_missing:
            if s not in used_rows:
                out.append(f"{m.swname(s)}: no LFT in the dump")
        return out


_UNUSED = "no host route uses this entry"


def _analysis_text(m, col, s, c):
    k = int(col.kind[s, c])
    port = int(col.lft[s, c])
    if col.which == "host":
        name, tail = m.lidname(c), _UNUSED
    else:
        name, tail = m.swlidname(c), ""
    paren = f" ({tail})" if tail else ""
    if col.own is not None and col.own[s, c] and k != K_NOENTRY:
        return f"{m.swname(s)}: its own {name} is routed out of port {port}"
    if k == K_HOST:
        wrong = m.hosts[int(col.ridx[s, c])]
        what = "the wrong CA" if col.which == "host" else "CA"
        return (f"{m.swname(s)}: {name} is routed out of port {port} to "
                f"{what} '{wrong.desc}'{paren}")
    if k == K_NOENTRY:
        what = " (switch missing from the LFT dump)" \
            if s in m.missing_lft else ""
        return f"{m.swname(s)}: {name} has no LFT entry{what} (dead end)"
    return (f"{m.swname(s)}: {name} is routed out of port {port}, "
            f"{KIND_TEXT[k]} (dead end{'; ' + tail if tail else ''})")


# ----------------------------------------------------------------------
# osmoffset.checks.reachability on the same engine

def _name(topo, guid):
    n = topo.nodes.get(guid)
    if n is not None and n.desc:
        return "%s (0x%016x)" % (n.desc, guid)
    return "0x%016x" % guid


def reachability(topo, lfts, lmc=None, include_switches=False,
                 sources=None):
    """See osmoffset.checks.reachability (its texts, sorted)."""
    m = FabricModel(topo, lfts, lmc=lmc, min_hosts=0)
    problems = []
    for s in m.missing_lft:
        problems.append("switch %s: no LFT in the dump"
                        % _name(topo, m.sw_nodes[s].guid))
    origin = np.ones(m.S, dtype=bool)
    origin[m.missing_lft] = False
    if sources is not None:
        origin &= np.array([n.guid in sources for n in m.sw_nodes])
    sets = ["host"] + (["switch"] if include_switches else [])
    for which in sets:
        col = Columns(m, which)
        if col.ncols() == 0:
            continue
        if which == "host":
            target = [m.hosts[c // m.nl].guid for c in range(m.C)]
            lids = m.col_lid.tolist()
        else:
            target = [m.sw_nodes[int(o)].guid for o in m.sw_owner]
            lids = m.sw_lid.tolist()
        used = np.repeat(origin[:, None], col.ncols(), axis=1)
        spread(used, col.nxt)
        _ok, settled, _h = settle(col.fwd, col.good, col.nxt)
        bs, bc = np.nonzero(used & col.bad)
        for s, c in zip(bs.tolist(), bc.tolist()):
            problems.append(_checks_text(m, col, s, c, lids[c],
                                         _name(topo, target[c])))
        loop = used & col.fwd & ~settled
        seen = set()
        ls, lc = np.nonzero(loop)
        for s, c in zip(ls.tolist(), lc.tolist()):
            cyc = walk_loop(col.nxt, s, c)
            key = (frozenset(cyc), c)
            if key in seen:
                continue
            seen.add(key)
            problems.append("LID %d (%s): forwarding loop %s" % (
                lids[c], _name(topo, target[c]), " -> ".join(
                    _name(topo, m.sw_nodes[x].guid)
                    for x in cyc + cyc[:1])))
    problems.sort()
    return problems


def _checks_text(m, col, s, c, lid, tname):
    topo = m.topo
    g = m.sw_nodes[s].guid
    sname = _name(topo, g)
    k = int(col.kind[s, c])
    port = int(col.lft[s, c])
    if k == K_NOENTRY:
        if s in m.missing_lft:
            return ("LID %d (%s): forwarded into switch %s that has no LFT"
                    % (lid, tname, sname))
        return "switch %s: no route to LID %d (%s)" % (sname, lid, tname)
    if k == K_PORT0 and not (col.own is not None and col.own[s, c]):
        return "switch %s: LID %d (%s) sent to its own port 0" % (
            sname, lid, tname)
    if col.own is not None and col.own[s, c]:
        return "switch %s: its own LID %d sent out of port %d" % (
            sname, lid, port)
    if k == K_DOWN:
        return ("switch %s: LID %d (%s) sent out of port %d, whose link is "
                "down" % (sname, lid, tname, port))
    remote = topo.links.get((g, port))
    if k == K_UNLINKED and remote is None:
        return ("switch %s: LID %d (%s) sent out of port %d, which has no "
                "link" % (sname, lid, tname, port))
    return "switch %s: LID %d (%s) delivered out of port %d to %s" % (
        sname, lid, tname, port, _name(topo, remote[0]))
