"""Degrade a fabric of one's own: take random inter-switch cables out of an
ibsim net file (gen-fabric's, or osm-sim's conversion of an ibnetdiscover
dump), so that an admin can see what offsetting does on their fabric when
cables fail, not only on the fabric as it stands today.

The file is read by osmoffset.fabric (the one reader of the format: a bad
file is an InputError "FILE:LINE: message"); here only the lines of the
cables taken out go, both ends, and every other line stays as written
(rates, node descriptions, comments).  A cable whose removal would cut
the fabric in two stays, and the next one drawn is tried, as gen-fabric
--remove-links does on the fabrics it generates.  Chassis-internal cables
of a director (line to fabric ASIC) are cables like any other here: a
dump does not say which they are.
"""

import random

from osmoffset import fabric

__all__ = ["DegradeError", "cables", "degrade_text"]


class DegradeError(Exception):
    """A request the file cannot meet (one line, names the file)."""


def _all_cables(topo):
    """Every cable of a net file's records, each once: [((node id, port),
    (node id, port), [line, ...])] in file order; the lines are those that
    list the cable (one end or both)."""
    seen = {}
    out = []
    for rec in topo.records:
        for lp in sorted(rec["ports"]):
            info = rec["ports"][lp]
            a, b = (rec["id"], lp), (info["remote"], info["rport"])
            key = (a, b) if a <= b else (b, a)
            if key in seen:
                seen[key][2].append(info["line"])
                continue
            seen[key] = (a, b, [info["line"]])
            out.append(seen[key])
    return out


def cables(topo, every=None):
    """The inter-switch cables of every (default _all_cables(topo)), in
    file order."""
    kind = {r["id"]: r["kind"] for r in topo.records}
    return [c for c in (every if every is not None else _all_cables(topo))
            if kind.get(c[0][0]) == kind.get(c[1][0]) == "SW"]


def _adjacency(topo, every):
    """node id -> {neighbour id: cables between them}, of every cable
    (_all_cables(topo))."""
    adj = {r["id"]: {} for r in topo.records}
    for (a, _pa), (b, _pb), _lines in every:
        if b not in adj:
            continue
        adj[a][b] = adj[a].get(b, 0) + 1
        adj[b][a] = adj[b].get(a, 0) + 1
    return adj


def _joined(adj, a, b):
    """Whether a still reaches b over the cables left."""
    seen = {a}
    stack = [a]
    while stack:
        n = stack.pop()
        for m, k in adj[n].items():
            if k and m not in seen:
                if m == b:
                    return True
                seen.add(m)
                stack.append(m)
    return False


def degrade_text(text, path, fraction, seed):
    """text (a net file, read from path) without round(fraction x its
    inter-switch cables), drawn with random.Random(seed), none whose
    loss would cut a part of the fabric off the rest.  Returns (the new
    text, the cables taken out as 'A[p] - B[q]' in file order).  Raises
    fabric.InputError for a bad file, DegradeError when too few cables
    can go."""
    if not 0 <= fraction < 1:
        raise DegradeError("--remove-links must be in [0, 1) (got %g)"
                           % fraction)
    topo = fabric.parse_topology_text(text, str(path))
    if topo.fmt not in ("ibsim-net", "ibnetdiscover"):
        raise DegradeError("%s: not a net file (%s)" % (path, topo.fmt))
    every = _all_cables(topo)
    isl = cables(topo, every)
    want = int(round(fraction * len(isl)))
    adj = _adjacency(topo, every)
    order = list(range(len(isl)))
    random.Random(seed).shuffle(order)
    gone = []
    for i in order:
        if len(gone) == want:
            break
        (a, _pa), (b, _pb), _lines = isl[i]
        adj[a][b] -= 1
        adj[b][a] -= 1
        if adj[a][b] or _joined(adj, a, b):
            gone.append(i)
            continue
        adj[a][b] += 1
        adj[b][a] += 1
    if len(gone) < want:
        raise DegradeError("%s: could take out only %d of the %d "
                           "inter-switch cables asked for and keep the "
                           "fabric connected" % (path, len(gone), want))
    drop = {ln for i in gone for ln in isl[i][2]}
    lines = text.splitlines(keepends=True)
    kept = [l for n, l in enumerate(lines, 1) if n not in drop]
    names = ["%s[%d] - %s[%d]" % (isl[i][0] + isl[i][1])
             for i in sorted(gone)]
    return "".join(kept), names
