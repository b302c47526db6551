"""The best shift-alltoall efficiency any destination-based routing can
reach on a 2-level fat tree, by integer programming (route-optimum).

A leaf routes each LID of each remote host up to one spine linked to both
leaves (the only up/down paths of a 2-level tree); the spine takes it
down.  For every round k of a shift alltoall (rank i sends to rank i+k, as
lft-analyze counts it) the heaviest link sets the round's efficiency
min(1, 1 / load); the program maximises the mean over all rounds, exactly,
with SciPy's HiGHS solver.  The answer is what no routing of OpenSM or
osmoffset can beat for that rank order: when a routing misses a goal that
the optimum misses too, the goal is out of reach on that fabric.

Fabrics with parallel links are solved with each leaf-spine bundle as one
link of that many times the capacity: the figure is then an upper bound.

The optimum is the best for one rank order.  The routing the solver finds
for it may do worse than others in other orders: solve(..., random_orders=N)
also measures it in the N random rank orders bench-quality re-measures in
(random_ranks()), so a table can set its figure beside a routing's that
was not fitted to the one order.  solve(..., groups=...) solves for the
best mean over several groups of orders instead (the order, jobs on its
quarters and halves, random orders: order_groups()), the mix a stock
guard scores a routing on.

At LMC > 0 the optimum may put several LIDs of one host on one spine
from a leaf that shares more with that host's leaf: striped traffic
then takes fewer paths than it has LIDs, which a round of the one rank
order may reward and other orders punish.  solve(..., apart=True) asks
for each flow's LIDs on different spines, as port offsetting routes
them: from each leaf, at most ceil(2^LMC / spines shared) LIDs of a
host over one spine (lids_per_spine()).  The result counts the flows
(leaf, host) of the routing found that put more there ("shared").

  TwoLevel(topo)                 leaves, spines, hosts in topology order
  read_ranks(fab, hostfile)      rank order from a hostfile
  random_ranks(fab, seed)        bench-quality's random rank order
  solve(fab, ranks, lmc, limit)  the integer program -> result dict
  lids_per_spine(nl, shared)     the most LIDs of a flow on one spine, apart
  evaluate(fab, ranks, nl, choice)  efficiency of one routing
  order_groups(fab, ranks, words)  rank orders to solve over together
  round_loads(fab, ranks, nl, choice)  the busiest link of each round
  round_efficiencies(...)        each round's min(1, 1 / that load)
  routes_of_lfts(fab, topo, lfts, nl)  an LFT dump's routing, as solve's
  write_routes(fab, choice, path, title)  a routing as a text file

A routing is a dict (source leaf, destination host, LID offset) -> spine,
all indices into TwoLevel's lists: solve() finds one, routes_of_lfts()
reads OpenSM's (or any) tables into one, so that the two can be set side
by side (route-optimum --lfts, --routes).
"""

import os

from .fabric import InputError, load_lfts, load_topology
from .rankorder import natural_key, natural_shuffle, read_hostfile

__all__ = ["NoSolver", "TwoLevel", "read_ranks", "random_ranks",
           "round_flows", "solve", "evaluate", "lids_per_spine",
           "shared_flows", "round_loads", "round_efficiencies",
           "routes_of_lfts", "write_routes", "compare_lfts", "optimum_of",
           "order_groups", "order_word_ok", "mean_of", "group_figures",
           "ORDER_WORDS"]


class NoSolver(Exception):
    """SciPy's MILP solver is not available."""


class TwoLevel:
    """Leaves (switches with hosts), spines and the hosts in rank order."""

    def __init__(self, topo):
        self.path = topo.path
        sws = {n.guid: n for n in topo.switches()}
        host_leaf = {}
        for ca in topo.cas():
            peer = topo.links.get((ca.guid, ca.port or 1))
            if peer is not None and peer[0] in sws:
                host_leaf[ca.guid] = peer
        leaves = {g for g, _p in host_leaf.values()}
        order = sorted(sws.values(), key=lambda n: (natural_key(n.desc),
                                                    n.guid))
        self.leaves = [n.guid for n in order if n.guid in leaves]
        self.spines = [n.guid for n in order if n.guid not in leaves]
        li = {g: i for i, g in enumerate(self.leaves)}
        si = {g: i for i, g in enumerate(self.spines)}
        self.width = {}
        for (g, _p), (rg, _rp) in topo.links.items():
            if g not in sws or rg not in sws or g == rg:
                continue
            if g in li and rg in si:
                key = (li[g], si[rg])
                self.width[key] = self.width.get(key, 0) + 1
            elif g in li and rg in li:
                raise InputError(topo.path, 0, "not a 2-level fat tree: "
                                 "leaves '%s' and '%s' are linked"
                                 % (sws[g].desc, sws[rg].desc))
            elif g in si and rg in si:
                raise InputError(topo.path, 0, "not a 2-level fat tree: "
                                 "switches '%s' and '%s' without hosts are "
                                 "linked" % (sws[g].desc, sws[rg].desc))
        if not self.leaves:
            raise InputError(topo.path, 0, "no switch with hosts")
        hosts = sorted(host_leaf.items(),
                       key=lambda h: (li[h[1][0]], h[1][1]))
        self.hosts = [g for g, _peer in hosts]
        self.desc = {g: topo.nodes[g].desc for g in self.hosts}
        self.nodes = {g: topo.nodes[g] for g in self.hosts}
        self.leaf_desc = [sws[g].desc for g in self.leaves]
        self.spine_desc = [sws[g].desc for g in self.spines]
        self.leaf_of = [li[host_leaf[g][0]] for g in self.hosts]
        self.trunks = any(w > 1 for w in self.width.values())

    def usable(self, a, d):
        """Spines linked to leaf a and to the leaf of host index d."""
        b = self.leaf_of[d]
        return [s for s in range(len(self.spines))
                if (a, s) in self.width and (b, s) in self.width]


def read_ranks(fab, path):
    """Host indices of fab in the order of the hostfile at path (the
    hostfile rule of osmoffset.rankorder.read_hostfile)."""
    index = {g: i for i, g in enumerate(fab.hosts)}
    named = read_hostfile(path, [fab.nodes[g] for g in fab.hosts])
    return [index[n.guid] for n in named]


def random_ranks(fab, seed):
    """Host indices of fab in bench-quality's random rank order of seed:
    the host names in natural order (its hostfile's lines) shuffled by
    Python's random.Random(seed)."""
    return natural_shuffle(range(len(fab.hosts)), seed,
                           lambda i: fab.desc[fab.hosts[i]])


def round_flows(fab, ranks):
    """Per shift round: (source leaf, destination host) of every flow
    between two leaves."""
    R = len(ranks)
    for k in range(1, R):
        flows = []
        for i in range(R):
            src, dst = ranks[i], ranks[(i + k) % R]
            if fab.leaf_of[src] != fab.leaf_of[dst]:
                flows.append((fab.leaf_of[src], dst))
        yield flows


def lids_per_spine(nl, shared):
    """The most of nl LIDs of one host that a leaf routes over one spine
    where the two leaves share that many spines, the LIDs apart: as even
    as they go."""
    return -(-nl // shared)


def shared_flows(fab, nl, choice):
    """How many flows (source leaf, destination host) of a routing put
    more of the host's nl LIDs on one spine than lids_per_spine()."""
    n = 0
    for (a, d, o), _s in choice.items():
        if o:
            continue
        per = {}
        for oo in range(nl):
            s = choice[(a, d, oo)]
            per[s] = per.get(s, 0) + 1
        if max(per.values()) > lids_per_spine(nl, len(fab.usable(a, d))):
            n += 1
    return n


def cells_of(groups):
    """[(weight, ranks)] of groups [(name, [ranks, ...])]: each group
    weighs the same, and each rank order within it the same."""
    return [(1.0 / len(groups) / len(orders), r)
            for _name, orders in groups for r in orders]


def mean_of(fab, nl, choice, groups):
    """A routing's figure over groups: the mean over the groups of the
    mean of their rank orders' efficiencies (the program's objective)."""
    return mean_of_figures(group_figures(fab, nl, choice, groups))


def mean_of_figures(figures):
    """The mean of group_figures()' figures."""
    return sum(figures.values()) / len(figures)


def solve(fab, ranks, lmc, time_limit, random_orders=0, apart=False,
          groups=None):
    """The integer program over one rank order (ranks), or with groups
    ([(name, [rank orders])], see order_groups()) over the mean of
    several: then "best" is that mean and "groups" each group's figure
    of the routing found."""
    try:
        import numpy as np
        from scipy.optimize import Bounds, LinearConstraint, milp
        from scipy.sparse import coo_matrix
    except ImportError:
        raise NoSolver("route-optimum needs SciPy >= 1.9 "
                       "(apt-get install python3-scipy)") from None
    nl = 1 << lmc
    several = groups is not None
    if not several:
        groups = [("order", [ranks])]
    cells = cells_of(groups)
    var = {}
    for a in range(len(fab.leaves)):
        for d in sorted(set(d for _w, r in cells for d in r)):
            if fab.leaf_of[d] == a:
                continue
            spines = fab.usable(a, d)
            if not spines:
                raise InputError(fab.path, 0, "leaf '%s' has no path to "
                                 "host '%s' over one spine"
                                 % (fab.leaf_desc[a],
                                    fab.desc[fab.hosts[d]]))
            for o in range(nl):
                for s in spines:
                    var[(a, d, o, s)] = len(var)
    nx = len(var)
    # the objective in units of the first order's rounds: with one
    # order, each round's penalties as they are
    S = len(cells[0][1]) - 1
    K = sum(len(r) - 1 for _w, r in cells)
    # a link carries at most all LIDs of the hosts of one leaf: J levels
    # of one LID above a flow per link price every load exactly
    most = max(fab.leaf_of.count(a) for a in range(len(fab.leaves)))
    J = max(1, (most - 1) * nl)
    # pen[j]: what the (j+1)-th extra LID on the busiest link costs a round
    pen = [nl / (nl + j) - nl / (nl + j + 1) for j in range(J)]
    ny = K * J
    rows, cols, vals, lo, hi = [], [], [], [], []
    r = 0

    def row(entries, low, high):
        nonlocal r
        for c, v in entries:
            rows.append(r)
            cols.append(c)
            vals.append(v)
        lo.append(low)
        hi.append(high)
        r += 1

    by_lid = {}
    for (a, d, o, s), v in var.items():
        by_lid.setdefault((a, d, o), []).append(v)
    for vs in by_lid.values():
        row([(v, 1) for v in vs], 1, 1)
    if apart and nl > 1:
        for (a, d, o, s), v in var.items():
            if o == 0:
                row([(var[(a, d, oo, s)], 1) for oo in range(nl)], 0,
                    lids_per_spine(nl, len(fab.usable(a, d))))
    cost = np.zeros(nx + ny)
    k = 0
    for weight, cranks in cells:
        scale = weight * S / (len(cranks) - 1)
        for flows in round_flows(fab, cranks):
            add_round(fab, nl, var, flows, nx + k * J, J, row)
            cost[nx + k * J:nx + (k + 1) * J] = [p * scale for p in pen]
            k += 1
    n = nx + ny
    m = coo_matrix((vals, (rows, cols)), shape=(r, n)).tocsr()
    res = milp(cost, constraints=LinearConstraint(m, lo, hi),
               integrality=np.ones(n), bounds=Bounds(0, 1),
               options={"time_limit": time_limit})
    out = {"variables": n, "constraints": r, "status": res.status,
           "message": res.message, "optimal": res.status == 0}
    dual = getattr(res, "mip_dual_bound", None)
    if dual is not None and np.isfinite(dual):
        out["bound"] = 1.0 - max(0.0, dual) / S
    if res.x is not None:
        choice = {}
        for (a, d, o, s), v in var.items():
            if res.x[v] > 0.5:
                choice[(a, d, o)] = s
        figures = group_figures(fab, nl, choice, groups)
        out["best"] = mean_of_figures(figures)
        if several:
            out["groups"] = figures
        if nl > 1:
            out["shared"] = {"flows": shared_flows(fab, nl, choice),
                             "of": sum(1 for k in choice if not k[2])}
        if random_orders:
            out["random"] = random_figures(fab, nl, choice, random_orders)
        if out["optimal"]:
            out["bound"] = max(out.get("bound", 0.0), out["best"])
        out["routing"] = choice
    return out


def add_round(fab, nl, var, flows, base, J, row):
    """The rows of one round: each link's LIDs less its width times the
    round's J level variables (from base) within the link's capacity of
    one flow, and the levels taken in order."""
    links = {}
    for a, d in flows:
        b = fab.leaf_of[d]
        for o in range(nl):
            for s in fab.usable(a, d):
                v = var[(a, d, o, s)]
                links.setdefault(("up", a, s), []).append(v)
                links.setdefault(("down", s, b), []).append(v)
    for key, vs in links.items():
        w = fab.width[(key[1], key[2]) if key[0] == "up"
                      else (key[2], key[1])]
        row([(v, 1) for v in vs] + [(base + j, -w) for j in range(J)],
            -float("inf"), w * nl)
    for j in range(J - 1):
        row([(base + j, -1), (base + j + 1, 1)], -float("inf"), 0)


def random_figures(fab, nl, choice, seeds):
    """A routing in the random orders of seeds 1..seeds (random_ranks()):
    {"seeds", "each": the figures, "mean"}."""
    each = [evaluate(fab, random_ranks(fab, seed), nl, choice)
            for seed in range(1, seeds + 1)]
    return {"seeds": seeds, "each": each, "mean": sum(each) / len(each)}


def group_figures(fab, nl, choice, groups):
    """{group name: mean efficiency of the routing over its orders}."""
    return {name: sum(evaluate(fab, r, nl, choice) for r in orders)
            / len(orders) for name, orders in groups}


def round_loads(fab, ranks, nl, choice):
    """Per shift round: the load of the busiest leaf-spine link, in flows
    (a flow's nl LIDs carry 1 / nl each; bundles of parallel links share
    their load evenly); 0.0 where no flow leaves its leaf."""
    out = []
    for flows in round_flows(fab, ranks):
        load = {}
        for a, d in flows:
            b = fab.leaf_of[d]
            for o in range(nl):
                s = choice[(a, d, o)]
                for key, w in ((("up", a, s), fab.width[(a, s)]),
                               (("down", s, b), fab.width[(b, s)])):
                    load[key] = load.get(key, 0.0) + 1.0 / (nl * w)
        out.append(max(load.values()) if load else 0.0)
    return out


def round_efficiencies(fab, ranks, nl, choice):
    """Per shift round: min(1, 1 / its busiest link's load)."""
    return [min(1.0, 1.0 / worst) if worst > 0 else 1.0
            for worst in round_loads(fab, ranks, nl, choice)]


def evaluate(fab, ranks, nl, choice):
    """Mean over rounds of min(1, 1 / heaviest link) for a routing."""
    effs = round_efficiencies(fab, ranks, nl, choice)
    return sum(effs) / len(effs) if effs else 1.0


def routes_of_lfts(fab, topo, lfts, nl):
    """The routing of an LFT dump (osmoffset.fabric.load_lfts) in the
    model's terms: (source leaf, destination host, LID offset) -> spine,
    for every host of another leaf and each of its first nl LIDs.  topo is
    the fabric fab was made of (its links name the spine behind each
    port).  Raises InputError naming the dump where a leaf has no table, a
    host has fewer than nl LIDs, or an entry does not go up to a spine
    linked to the host's leaf (the model has no other route)."""
    lids = lfts.port_lids()
    si = {g: i for i, g in enumerate(fab.spines)}
    choice = {}
    for a, lg in enumerate(fab.leaves):
        sw = lfts.switches.get(lg)
        if sw is None:
            raise InputError(lfts.path, 0, "no table of leaf '%s' "
                             "(0x%016x): is it a dump of %s?"
                             % (fab.leaf_desc[a], lg, fab.path))
        for d, hg in enumerate(fab.hosts):
            b = fab.leaf_of[d]
            if b == a:
                continue
            hl = lids.get(hg, [])
            if len(hl) < nl:
                raise InputError(lfts.path, 0, "host '%s' (0x%016x) has %d "
                                 "LIDs in the dump, LMC %d needs %d"
                                 % (fab.desc[hg], hg, len(hl),
                                    nl.bit_length() - 1, nl))
            for o in range(nl):
                port = sw.lft.get(hl[0] + o)
                peer = topo.links.get((lg, port)) if port else None
                s = si.get(peer[0]) if peer else None
                if s is None or (b, s) not in fab.width:
                    raise InputError(lfts.path, sw.lineno, "leaf '%s' "
                                     "routes LID %d (host '%s') to port %s, "
                                     "not up to a spine of that host's leaf"
                                     % (fab.leaf_desc[a], hl[0] + o,
                                        fab.desc[hg], port))
                choice[(a, d, o)] = s
    return choice


def write_routes(fab, choice, path, title):
    """Write a routing as text: a '#' title line, a '#' column line, then
    one line per (source leaf, destination host, LID offset), tab
    separated: leaf GUID, host port GUID, offset, spine GUID, and the
    three node descriptions.  Raises InputError if path cannot be
    written."""
    try:
        with open(path, "w", encoding="utf-8") as f:
            f.write("# %s\n" % title)
            f.write("# leaf guid\thost port guid\tlid offset\tspine guid"
                    "\tleaf\thost\tspine\n")
            for (a, d, o), s in sorted(choice.items()):
                hg = fab.hosts[d]
                f.write("0x%016x\t0x%016x\t%d\t0x%016x\t%s\t%s\t%s\n"
                        % (fab.leaves[a], hg, o, fab.spines[s],
                           fab.leaf_desc[a], fab.desc[hg],
                           fab.spine_desc[s]))
    except OSError as e:
        raise InputError(path, 0, "cannot write: %s" % e.strerror) from None


DEFAULT_TIME_LIMIT = 300.0


ORDER_WORDS = ("order", "quarters", "halves", "random:N")


def order_word_ok(word):
    """Whether word is one of ORDER_WORDS (random:N with N 1..100)."""
    if word.startswith("random:"):
        n = word[7:]
        return n.isdigit() and 1 <= int(n) <= 100
    return word in ORDER_WORDS[:-1]


def order_groups(fab, ranks, words):
    """Groups of rank orders [(name, [ranks, ...])] for the words of
    route-optimum --orders: 'order' the rank order itself, 'quarters' and
    'halves' jobs on its 4 and 2 contiguous blocks, 'random:N'
    bench-quality's random orders of seeds 1..N (random_ranks()).
    Raises InputError naming the fabric's file on an unknown word or a
    job of fewer than 2 hosts."""
    groups = []
    n = len(ranks)
    for word in words:
        if word == "order":
            groups.append((word, [list(ranks)]))
        elif word in ("quarters", "halves"):
            parts = 4 if word == "quarters" else 2
            if n // parts < 2:
                raise InputError(fab.path, 0, "--orders %s: %d hosts make "
                                 "jobs of fewer than 2" % (word, n))
            groups.append((word, [list(ranks[i * n // parts:
                                             (i + 1) * n // parts])
                                  for i in range(parts)]))
        elif order_word_ok(word):
            groups.append((word, [random_ranks(fab, seed) for seed in
                                  range(1, int(word[7:]) + 1)]))
        else:
            raise InputError(fab.path, 0, "--orders: unknown rank order "
                             "'%s' (words: %s; N 1..100)"
                             % (word, ", ".join(ORDER_WORDS)))
    if len(set(name for name, _o in groups)) != len(groups):
        raise InputError(fab.path, 0, "--orders: a rank order named twice")
    return groups


def optimum_of(topology, lmc=0, hostfile=None, time_limit=DEFAULT_TIME_LIMIT,
               random_orders=0, apart=False, routes=None, lfts=None,
               orders=None):
    """route-optimum's answer for a topology file (net file or
    opensm-subnet.lst): the solver's result with the fabric's figures, as
    `route-optimum --json` prints it; with random_orders, the routing it
    found measured in that many random rank orders too ("random": seeds
    1..N, each figure and their mean); with apart, each flow's LIDs on
    different spines (solve()).  With orders, words of order_groups():
    the best mean over those groups of rank orders instead of the one
    order ("groups": each one's figure of the routing found).  With
    routes, a path: the routing found written there (write_routes()).
    With lfts, the path of an LFT dump of the same fabric: its routing
    measured in the model and set beside the one found ("lfts": its
    figure, the entries and rounds where they differ, compare_lfts(); with
    random_orders, its figures in those orders too).  Raises InputError or
    NoSolver."""
    topo = load_topology(topology)
    fab = TwoLevel(topo)
    ranks = read_ranks(fab, hostfile) if hostfile \
        else list(range(len(fab.hosts)))
    groups = order_groups(fab, ranks, orders or ["order"])
    nl = 1 << lmc
    if routes:
        where = os.path.dirname(os.path.abspath(routes))
        if not os.access(where, os.W_OK):
            raise InputError(routes, 0, "cannot write: directory %s is "
                             "missing or not writable" % where)
    given = None
    if lfts:
        given = routes_of_lfts(fab, topo, load_lfts(lfts), nl)
        hosts = set(d for _w, r in cells_of(groups) for d in r)
        given = {k: s for k, s in given.items() if k[1] in hosts}
    res = solve(fab, ranks, lmc, time_limit, random_orders, apart,
                groups if orders else None)
    res.update({"topology": topology, "lmc": lmc,
                "order": hostfile or "topology",
                "hosts": len(ranks), "leaves": len(fab.leaves),
                "spines": len(fab.spines),
                "exact": not fab.trunks, "lids_apart": bool(apart)})
    if orders:
        res["orders"] = [name for name, _o in groups]
    found = res.pop("routing", None)
    if given is not None:
        res["lfts"] = compare_lfts(fab, ranks, nl, given, found,
                                   groups if orders else None)
        res["lfts"]["path"] = lfts
        if random_orders:
            res["lfts"]["random"] = random_figures(fab, nl, given,
                                                   random_orders)
    if routes and found is not None:
        write_routes(fab, found, routes,
                     "route-optimum routing of %s, LMC %d, %s rank order%s"
                     "%s: shift efficiency %.4f"
                     % (topology, lmc, hostfile or "topology",
                        ", LIDs apart" if apart else "",
                        ", mean over %s" % ", ".join(res["orders"])
                        if orders else "", res["best"]))
        res["routes"] = routes
    return res


def compare_lfts(fab, ranks, nl, given, found, groups=None):
    """An LFT dump's routing (given) beside the solver's (found, or None)
    in one rank order (ranks), or with groups (order_groups()) over their
    mean, as solve() takes them: its figure in the model ("groups": each
    group's, with groups), how many (leaf, host, LID offset) entries
    differ, and in how many rounds of all the orders it scores lower and
    higher."""
    several = groups is not None
    if not several:
        groups = [("order", [ranks])]
    figures = group_figures(fab, nl, given, groups)
    out = {"efficiency": mean_of_figures(figures), "entries": len(given)}
    if several:
        out["groups"] = figures
    if found is not None:
        mine, theirs = [], []
        for _w, r in cells_of(groups):
            mine += round_efficiencies(fab, r, nl, given)
            theirs += round_efficiencies(fab, r, nl, found)
        out["differ"] = sum(1 for k, s in given.items() if found[k] != s)
        out["rounds"] = len(mine)
        out["rounds_lower"] = sum(1 for x, y in zip(mine, theirs)
                                  if x < y - 1e-9)
        out["rounds_higher"] = sum(1 for x, y in zip(mine, theirs)
                                   if x > y + 1e-9)
    return out
