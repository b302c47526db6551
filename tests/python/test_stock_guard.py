"""The stock guard (stock_guard=on, the default with port offsetting).

The plugin scores its LFTs against the ones OpenSM's own LFT stage builds,
in the rank orders a job meets (hosts grouped by leaf, each quarter and
each half of that order, the mean of twelve seeded random orders), with
base-LID and striped traffic, and in leaf order the traffic of each
further LID offset alone; the mean of the random orders, a sample, may
fall 1 % below stock's.  It keeps its own, a mix (the flows of the
job blocks it lost follow the stock routes), or the stock tables,
whichever first scores at least as well as stock everywhere.  These tests
check that claim with lft-analyze's independent analyzer, in the same
orders, and that the stock tables, when kept, are stock to the byte.
"""

import re

import numpy as np
import pytest

from conftest import (GEN_FABRIC, PLUGIN_SKIP_REASON, SimRun, e2e_fabrics,
                      fabric_id, fabric_path, plugin_dir, run_osm_sim,
                      run_script)
from osmoffset import fabric, metrics
from osmoffset.analyze import K_SWITCH, Analysis

FABRICS = e2e_fabrics()
LMCS = [0, 1, 2]
M64 = (1 << 64) - 1
# the guard's log when the polished tables replace ours
POLISHED = "port offsetting's LFTs with entries of leaves moved where that " \
    "lowers a round's busiest link, evens the route counts or raises cells " \
    "below the stock tables' score better than as built"
# the guard's slack on the mean of its random orders (relative)
RANDOM_SLACK = 0.01
# the seeds of the guard's random orders, and of those the polish holds
GUARD_SEEDS = range(5, 17)
POLISH_SEEDS = range(1, 5)


def need_plugin():
    if plugin_dir() is None:
        pytest.skip(PLUGIN_SKIP_REASON)


def guard_shuffle(order, seed):
    """oo_eval_shuffle(): xorshift64* Fisher-Yates, as the plugin does."""
    order = list(order)
    x = (seed * 0x9e3779b97f4a7c15 + 1) & M64
    for i in range(len(order), 1, -1):
        x ^= x >> 12
        x = (x ^ (x << 25)) & M64
        x ^= x >> 27
        j = (((x * 0x2545f4914f6cdd1d) & M64) >> 32) % i
        order[i - 1], order[j] = order[j], order[i - 1]
    return order


def guard_orders(an, seeds=GUARD_SEEDS):
    """The guard's rank orders over the analyzer's hosts: (name, list of
    orders), the random ones of seeds (the polish holds POLISH_SEEDS).  The leaf order is lft-analyze's topology order, which is the
    plugin's routing order: hosts grouped by switch, switches by name (then
    by the first host name behind them), hosts by port."""
    leaf = [int(r) for r in an.ranks]
    n = len(leaf)
    out = [("leaf order", [leaf])]
    if n >= 8:
        out += [("quarter job %d" % (q + 1),
                 [leaf[q * n // 4:(q + 1) * n // 4]]) for q in range(4)]
    if n >= 4:
        out += [("half job %d" % (q + 1),
                 [leaf[q * n // 2:(q + 1) * n // 2]]) for q in range(2)]
    out.append(("random orders", [guard_shuffle(leaf, s)
                                  for s in seeds]))
    return out


def scores(run, lmc, seeds=GUARD_SEEDS, sound=True, spine_cas=False):
    """{(order name, traffic): efficiency} of one run's LFTs, the random
    orders those of seeds; with sound, the LFTs must be valid and free of
    credit loops; with spine_cas, the CAs on spines or cores rank too (as
    the guard's orders do with its option spine_cas=on)."""
    an = Analysis(run.topo, run.lfts, lmc=lmc, bisections=0,
                  spine_cas=spine_cas)
    an.validate()
    an.build_paths()
    if sound:
        assert an.valid, an.problems[:5]
        assert an.credit_loops() is None, "credit loop"
    out = {}
    cells = guard_orders(an, seeds)
    for name, orders in cells:
        for spread in ([False, True] if lmc else [False]):
            effs = []
            for order in orders:
                an.ranks = np.array(order, dtype=np.int64)
                effs.append(an._eff(an.shift(spread)))
            out[(name, "spread" if spread else "base")] = float(
                np.mean(effs))
    an.ranks = np.array(cells[0][1][0], dtype=np.int64)
    for k in range(1, 1 << lmc):
        out[("leaf order", "base+%d" % k)] = offset_shift(an, k)
    return out


def offset_shift(an, k):
    """Shift efficiency of the traffic to LID offset k alone."""
    ranks, loads = an.ranks, []
    i = np.arange(ranks.size)
    for r in range(1, ranks.size):
        dst = ranks[(i + r) % ranks.size]
        m = ranks != dst
        n = int(m.sum())
        loads.append(an._load_batch(ranks[m], dst[m] * an.nl + k,
                                    np.ones(n), 1,
                                    np.zeros(n, dtype=np.int64))[0])
    return an._eff(np.array(loads))


@pytest.mark.parametrize("lmc", LMCS)
@pytest.mark.parametrize("fab", FABRICS, ids=fabric_id)
def test_guarded_offsetting_is_never_below_stock(sim_cache, fab, lmc):
    need_plugin()
    on = sim_cache.get(fab, lmc, "on").require_ok()
    stock = sim_cache.get(fab, lmc, "stock").require_ok()
    ours, theirs = scores(on, lmc), scores(stock, lmc)
    below = ["%s %s: %.4f < stock %.4f" % (k[0], k[1], ours[k], theirs[k])
             for k in ours if ours[k] < theirs[k] * (
                 1 - (RANDOM_SLACK if k[0] == "random orders" else 0)) - 1e-9]
    assert not below, "\n".join(below)


def degraded_tree(tmp_path, seed, remove="0.15", extra=()):
    """gen-fabric's 8x4 tree of seed with the fraction remove of its
    cables cut (more gen-fabric arguments in extra): its net file."""
    net = str(tmp_path / ("d%d.net" % seed))
    p = run_script(GEN_FABRIC, ["2level", "--leaves", "8", "--spines", "4",
                                "--hosts-per-leaf", "4", "--seed", str(seed),
                                "--remove-links", remove, "-o", net] +
                   list(extra))
    assert p.returncode == 0, p.stderr
    return net


def guard_lines(run):
    with open(run.path("osm.log"), errors="replace") as f:
        return [ln for ln in f if "osmoffset: stock guard:" in ln]


def reach_filled(run):
    """Entries the reach pass filled, from its log line (0 if none)."""
    with open(run.path("osm.log"), errors="replace") as f:
        for ln in f:
            m = re.search(r"osmoffset: reach: .*; (\d+) entries filled", ln)
            if m:
                return int(m.group(1))
    return 0


def run_options(tmp_path, net, lmc, name, options, engine="updn",
                sim_args=(), osm_args=()):
    """osm-sim with the plugin and options on net (more osm-sim arguments
    in sim_args, opensm's in osm_args): a SimRun."""
    out = str(tmp_path / name)
    args = ["--net", net, "--out", out, "--lmc", str(lmc), "--quiet",
            "--engine", engine, "--port-offsetting", "on",
            "--plugin-dir", plugin_dir()] + list(sim_args)
    for opt in options:
        args += ["--plugin-option", opt]
    if osm_args:
        args += ["--"] + list(osm_args)
    return SimRun(net, engine, lmc, name, out,
                  run_osm_sim(args)).require_ok()


def beside_base_won(lines, cells):
    """Whether the guard's log says the tables with the further LID offsets
    beside the base LIDs won all its cells."""
    return any("the further LID offsets of the hosts leave the switches "
               "with hosts by the neighbours beside their base LIDs': they "
               "score at least as well as the stock ones in all %d cells"
               % cells in ln for ln in lines)


def further_offset_lids(lfts):
    """The LIDs of an LFT dump that are a port's further LID offsets (all
    but its base LID, the lowest of Lfts.port_lids())."""
    return {lid for lids in lfts.port_lids().values() for lid in lids[1:]}


def test_guard_keeps_the_stock_base_lids_of_the_leaves(sim_cache, tmp_path):
    """gen-fabric's 8x4 tree, seed 12, 15 % of cables cut, LMC 2: with
    polish=off, port offsetting loses the random orders (striped traffic,
    0.532 against 0.538 on the guard's shuffles) and a mix would lose
    them too, so the stock LFTs stay, exactly as stock OpenSM builds
    them.  Then port offsetting's tables, with the stock first hops of
    the base LIDs out of the leaves and the further LID offsets beside
    those, win every cell: the leaves' entries toward the hosts' base
    LIDs are stock's to the last one, and entries toward further offsets
    moved.  (Before 46a1395 nothing won here, and the stock tables stayed
    byte for byte.)  With the polish (the default) ours go on, polished,
    and score at least as well as stock in every cell."""
    need_plugin()
    net = degraded_tree(tmp_path, 12)
    off = run_options(tmp_path, net, 2, "nopolish", ["polish=off"])
    stock = sim_cache.get(net, 2, "stock").require_ok()
    lines = guard_lines(off)
    assert any("the stock LFTs stay, as routing engine's own stage built "
               "them" in ln for ln in lines), lines
    assert beside_base_won(lines, 19), lines
    ours = fabric.load_lfts(off.path("opensm-lfts.dump"))
    theirs = fabric.load_lfts(stock.path("opensm-lfts.dump"))
    assert sorted(ours.switches) == sorted(theirs.switches)
    further = further_offset_lids(theirs)
    assert len(further) == 3 * 32
    moved = 0
    for guid, sw in theirs.switches.items():
        mine = ours.switches[guid].lft
        if sw.desc.startswith("leaf"):
            base = {lid: port for lid, port in sw.lft.items()
                    if lid not in further and
                    theirs.lid_info.get(lid, (0, ""))[1] == "CA"}
            assert base and {lid: mine.get(lid) for lid in base} == base, \
                sw.desc
        moved += sum(mine.get(lid) != port for lid, port in sw.lft.items()
                     if lid in further)
    assert moved > 0

    on = sim_cache.get(net, 2, "on").require_ok()
    lines = guard_lines(on)
    assert any(POLISHED in ln for ln in lines)
    assert any("score at least as well as the stock ones in all 19 "
               "cells; they stay" in ln for ln in lines), lines
    s_on, s_stock = scores(on, 2), scores(stock, 2)
    below = [k for k in s_on if s_on[k] < s_stock[k] * (
        1 - (RANDOM_SLACK if k[0] == "random orders" else 0)) - 1e-9]
    assert not below, below


def test_guard_mixes_where_offsetting_loses_a_job(sim_cache, tmp_path):
    """gen-fabric's 8x4 tree, seed 8, 15 % of cables cut, LMC 2: the rule
    alone loses half job 1's spread traffic to stock (0.447 against
    0.450); with polish=off the guard sends that job's flows the stock
    way (0.450 with the others' flows still ours) and keeps the rest,
    ending above both in leaf order.  With the polish (the default) ours,
    polished, need no mix."""
    need_plugin()
    fab = degraded_tree(tmp_path, 8)
    on = run_options(tmp_path, fab, 2, "nopolish", ["polish=off"])
    rule = sim_cache.get(fab, 2, "rule").require_ok()
    stock = sim_cache.get(fab, 2, "stock").require_ok()
    assert any("the flows of 1 job blocks or LID offsets where it lost, "
               "take the stock routes" in ln for ln in guard_lines(on)), \
        guard_lines(on)
    s_on, s_rule, s_stock = (scores(r, 2) for r in (on, rule, stock))
    key = ("half job 1", "spread")
    assert s_rule[key] < s_stock[key]
    assert s_on[key] >= s_stock[key] - 1e-9
    leaf = ("leaf order", "base")
    assert s_on[leaf] > s_stock[leaf] and s_on[leaf] >= s_rule[leaf]
    polished = sim_cache.get(fab, 2, "on").require_ok()
    lines = guard_lines(polished)
    assert any(POLISHED in ln for ln in lines)
    assert any("score at least as well as the stock ones in all 19 "
               "cells; they stay" in ln for ln in lines), lines


def gen_cluster(tmp_path, name, args):
    """gen-fabric cluster ARGS (random GUIDs) into NAME.net: its path."""
    net = str(tmp_path / (name + ".net"))
    p = run_script(GEN_FABRIC, ["cluster"] + args +
                   ["--random-guids", "-o", net])
    assert p.returncode == 0, p.stderr
    return net


def cluster_with_management_hcas(tmp_path):
    return gen_cluster(tmp_path, "mgmt", [
        "--radix", "12", "--spines", "3", "--edges", "8",
        "--hosts-per-edge", "6", "--uplinks", "3", "--core-hosts", "2",
        "--seed", "1"])


def run_cluster(net, out, lmc, plugin):
    args = ["--net", net, "--out", out, "--lmc", str(lmc), "--quiet",
            "--roots", "none"]
    args += ["--port-offsetting", "on", "--plugin-dir", plugin_dir()] \
        if plugin else ["--stock"]
    return SimRun(net, "updn", lmc, "on" if plugin else "stock", out,
                  run_osm_sim(args)).require_ok()


@pytest.mark.parametrize("lmc", [0, 1])
def test_guard_holds_jobs_on_the_leaves_to_stock(tmp_path, lmc):
    """gen-fabric cluster: 8 edges of 6 hosts with 3 uplinks each to 3
    spines, two management HCAs on the spines (updn's own roots, as on a
    dump).  Jobs run on the leaves' hosts: the guard's rank orders, and
    lft-analyze's, leave the management HCAs out.  Before, the guard
    scored orders that began with them ("mgmt01" sorts before "node000")
    and its polish fitted those, which left a job on the compute nodes
    below stock (leaf order 0.546 against 0.564 at LMC 0, half job 2
    0.601 against 0.630 at LMC 0 and 1)."""
    need_plugin()
    net = cluster_with_management_hcas(tmp_path)
    on = run_cluster(net, str(tmp_path / "on"), lmc, True)
    stock = run_cluster(net, str(tmp_path / "stock"), lmc, False)
    an = Analysis(on.topo, on.lfts, lmc=lmc, bisections=0)
    assert an.ranks.size == 48
    assert "2 CAs on spines or cores left out" in an.rank_source
    # stock updn leaves the HCAs on the two spines without a route to
    # each other; ours route them
    ours, theirs = scores(on, lmc), scores(stock, lmc, sound=False)
    below = ["%s %s: %.4f < stock %.4f" % (k[0], k[1], ours[k], theirs[k])
             for k in ours if ours[k] < theirs[k] * (
                 1 - (RANDOM_SLACK if k[0] == "random orders" else 0)) - 1e-9]
    assert not below, "\n".join(below)


def test_guard_off_leaves_the_rule_alone(sim_cache):
    """stock_guard=off gives the rule's own tables: on a full tree the
    guard keeps them too (contention-free, no stock build is needed)."""
    need_plugin()
    fab = "kary-4-3.net"
    on = sim_cache.get(fab, 2, "on").require_ok()
    rule = sim_cache.get(fab, 2, "rule").require_ok()
    assert on.read_bytes("opensm-lfts.dump") == \
        rule.read_bytes("opensm-lfts.dump")
    assert guard_lines(rule) == []


def test_guard_answers_to_stock_over_its_own_roots(tmp_path):
    """sharp-ft2 routed with updn's own root detection (--roots none): it
    takes 4 of the 6 spines for roots (the other two miss a cable); port
    offsetting makes those two roots as well.  With the plain rule (the
    coordinated one now beats stock updn in every cell here), the tables
    it builds over six roots, and their mix with the stock stage over the
    same six, lose a quarter job to stock updn over its own four roots
    (0.412 against 0.450 at LMC 0; the mix, which also takes the stock
    routes toward the SHARP nodes' LIDs ours leave without one, 0.396
    against 0.409 in the next quarter), so stock updn's own tables stay:
    its LFTs and its roots, byte for byte with reach_all=off (and
    polish=off: polished, the plain rule's tables beat stock here)."""
    need_plugin()
    net = fabric_path("sharp-ft2.net")
    runs = {}
    for mode in ("stock", "on"):
        out = tmp_path / mode
        args = ["--net", net, "--out", str(out), "--lmc", "0", "--quiet",
                "--roots", "none"]
        args += ["--stock"] if mode == "stock" else [
            "--port-offsetting", "plain", "--plugin-option",
            "reach_all=off", "--plugin-option", "polish=off",
            "--plugin-dir", plugin_dir()]
        p = run_osm_sim(args)
        assert p.returncode == 0, p.stderr
        runs[mode] = out
    with open(str(runs["on"] / "osm.log"), errors="replace") as f:
        log = f.read()
    assert "2 switches beside updn's roots (at their level" in log
    assert "port offsetting's LFTs score lower than the stock ones in " \
        "quarter job 3 base (0.4119" in log
    assert "a mix of both would score lower than the stock ones in " \
        "quarter job 4 base (0.3956" in log
    assert "the stock LFTs stay, as routing engine's own stage built " \
        "them, over its own roots" in log
    for dump in ("opensm-lfts.dump", "ibroute.dump",
                 "opensm-updn-roots.dump"):
        assert (runs["on"] / dump).read_bytes() == \
            (runs["stock"] / dump).read_bytes(), dump


def lft_differences(a, b):
    """(switch description, LID) of every entry two LFT dumps differ in."""
    out = []
    for guid, sw in a.lfts.switches.items():
        other = b.lfts.switches[guid].lft
        out += [(sw.desc, lid) for lid in sorted(set(sw.lft) | set(other))
                if sw.lft.get(lid) != other.get(lid)]
    return out


def test_polish_moves_leaf_entries_off_the_busiest_links(sim_cache,
                                                         tmp_path):
    """ft2-8x4-degraded at LMC 0 (3 of its 32 cables missing): three
    leaves short of a spine send the LIDs of their dead slot over a live
    one, and some rounds of leaf order then carry three flows on a link.
    The polish moves single entries of leaves to another spine where that
    lowers a round's busiest link: leaf order 0.532 (polish=off) -> 0.559
    (the exact optimum is 0.565), no cell lower (the four random orders
    the polish holds included), only entries of switches with hosts moved,
    every pair routed, no credit loop."""
    need_plugin()
    on = sim_cache.get("ft2-8x4-degraded.net", 0, "on").require_ok()
    out = str(tmp_path / "off")
    proc = run_osm_sim(["--net", fabric_path("ft2-8x4-degraded.net"),
                        "--out", out, "--lmc", "0", "--quiet",
                        "--port-offsetting", "on", "--plugin-option",
                        "polish=off", "--plugin-dir", plugin_dir()])
    off = SimRun("ft2-8x4-degraded.net", "updn", 0, "off", out,
                 proc).require_ok()
    lines = guard_lines(on)
    assert any("the polish of port offsetting's LFTs moved" in ln
               for ln in lines), lines
    assert any(POLISHED in ln
               for ln in lines), lines
    assert not any("polish" in ln for ln in guard_lines(off))
    s_on, s_off = scores(on, 0, POLISH_SEEDS), scores(off, 0, POLISH_SEEDS)
    leaf = ("leaf order", "base")
    assert s_off[leaf] == pytest.approx(0.5323, abs=1e-4)
    assert s_on[leaf] == pytest.approx(0.5591, abs=1e-4)
    lower = [k for k in s_on if s_on[k] < s_off[k] - 1e-9]
    assert not lower, lower
    hosts_on = {sw for sw, _lid in lft_differences(on, off)}
    assert hosts_on and all(d.startswith("leaf-") for d in hosts_on), \
        hosts_on


def test_base_lids_polished_alone_first_score_as_at_lmc_0(sim_cache):
    """ft2-8x4-degraded at LMC 2: the polish of every cell spends itself
    on the further LID offsets too, and alone it left the base LIDs below
    their LMC 0 figures (leaf order 0.548 against 0.559; the random order
    of seed 1 0.333, below stock updn's 0.339).  The base LIDs, all an MPI
    that ignores LMC uses, are polished alone first: every base cell of
    the leaf order and its jobs then scores as at LMC 0, and the log says
    so.  The random orders' base LIDs are no longer as at LMC 0: there
    the polish's last phase, which parts the routes a random order's
    round may run at once, moves base LIDs alone; at LMC 2 it runs over
    every LID offset after the base LIDs' polish, and the base LIDs of the
    random orders score a little below LMC 0's (0.359 against 0.362 on
    the guard's shuffles), above the stock tables' at LMC 2."""
    need_plugin()
    l0 = sim_cache.get("ft2-8x4-degraded.net", 0, "on").require_ok()
    l2 = sim_cache.get("ft2-8x4-degraded.net", 2, "on").require_ok()
    stock = sim_cache.get("ft2-8x4-degraded.net", 2, "stock").require_ok()
    assert any("the polish of port offsetting's LFTs, base LIDs first "
               "moved" in ln for ln in guard_lines(l2)), guard_lines(l2)
    assert not any("base LIDs first" in ln for ln in guard_lines(l0))
    s0, s2 = scores(l0, 0), scores(l2, 2)
    assert s2[("leaf order", "base")] == pytest.approx(0.5591, abs=1e-4)
    base = {k: (s0[k], s2[k]) for k in s0 if k[1] == "base"}
    assert len(base) == 8
    lower = {k: v for k, v in base.items() if v[1] < v[0] - 1e-9}
    random = ("random orders", "base")
    assert list(lower) in ([], [random]), lower
    assert s2[random] > scores(stock, 2)[random]


def transit(run):
    """Of a run's tables: {(switch GUID, LID)} a neighbour switch's entry
    leads into that switch and it forwards to another switch, and
    {(switch GUID, port)} such traffic leaves through."""
    topo, sws = run.topo, run.lfts.switches
    lids, ports = set(), set()
    for u, sw in sws.items():
        for lid, port in sw.lft.items():
            t = topo.links.get((u, port), (None, None))[0]
            if t not in sws or t == u:
                continue
            out = sws[t].lft.get(lid)
            if topo.links.get((t, out), (None, None))[0] in sws:
                lids.add((t, lid))
                ports.add((t, out))
    return lids, ports


def test_polish_keeps_transit_traffic_where_it_is(sim_cache, tmp_path):
    """kary-4-3-degraded routed by minhop at LMC 0: minhop sends the LIDs
    of a switch that lost a cable down through other leaves and up again,
    so leaves forward traffic from other switches.  Those routes turn at
    the first leaf of each pod they can (4 of the 16 leaves forward such
    traffic; spread over all 16 they closed credit loops with the routes
    that do not turn).  The polish moves entries of the other leaves, and
    only for LIDs no neighbour leads into them and only to ports no such
    traffic leaves through (checked here on the tables without the
    polish): no credit loop, every pair routed, no guard cell below stock
    minhop's, none below the tables without the polish (the random orders
    the polish holds), leaf order above them."""
    need_plugin()
    fab = "kary-4-3-degraded.net"
    on = sim_cache.get(fab, 0, "on", "minhop").require_ok()
    stock = sim_cache.get(fab, 0, "stock", "minhop").require_ok()
    off = run_options(tmp_path, fabric_path(fab), 0, "nopolish",
                      ["polish=off"], engine="minhop")
    lines = guard_lines(on)
    assert any(POLISHED in ln for ln in lines), lines
    lids, ports = transit(off)
    forwarders = {sw for sw, _lid in lids}
    by_desc = {sw.desc: g for g, sw in off.lfts.switches.items()}
    leaves = {g for g in forwarders
              if off.lfts.switches[g].desc.startswith("sw-l1-")}
    assert len(leaves) == 4, sorted(off.lfts.switches[g].desc
                                    for g in leaves)
    moved = lft_differences(on, off)
    assert moved
    for desc, lid in moved:
        g = by_desc[desc]
        assert (g, lid) not in lids, (desc, lid)
        assert (g, on.lfts.switches[g].lft[lid]) not in ports, (desc, lid)
    s_on, s_stock = scores(on, 0), scores(stock, 0)
    p_on, p_off = scores(on, 0, POLISH_SEEDS), scores(off, 0, POLISH_SEEDS)
    for k in s_on:
        assert p_on[k] >= p_off[k] - 1e-9, k
        assert s_on[k] >= s_stock[k] * (
            1 - (RANDOM_SLACK if k[0] == "random orders" else 0)) - 1e-9, k
    leaf = ("leaf order", "base")
    assert p_on[leaf] > p_off[leaf]


def route_counts(run):
    """Per link between two switches: the flows of every rank to every
    other rank's base LID that cross it (the loads a random rank order
    puts on links, in proportion)."""
    an = Analysis(run.topo, run.lfts, lmc=0, bisections=0)
    an.validate()
    an.build_paths()
    counts = metrics.route_counts(an)[0].reshape(an.S, an.W)
    return counts[(an.rkind == K_SWITCH) & (counts > 0)]


def test_polish_evens_route_counts(sim_cache, tmp_path):
    """dir-2level-taper at LMC 0 (a director's line and fabric ASICs under
    2:1 tapered edges): once no move lowers a round's busiest link, the
    polish moves entries where that evens the route counts and no round
    of the leaf order or its jobs gets worse.  The sum of the squared
    route counts of the links between switches drops below that of the
    tables without the polish, no cell is lower than there (the random
    orders the polish holds), every pair is routed and no credit loop
    forms (scores()).  The guard's orders rank the management HCAs on
    the director too (spine_cas=on), as when this was found: by default
    ours lose a job of the compute nodes there and a mix goes on."""
    need_plugin()
    fab = "dir-2level-taper.net"
    on = run_options(tmp_path, fabric_path(fab), 0, "polish",
                     ["spine_cas=on"])
    off = run_options(tmp_path, fabric_path(fab), 0, "nopolish",
                      ["polish=off", "spine_cas=on"])
    lines = guard_lines(on)
    evened = [int(m.group(1)) for ln in lines for m in [re.search(
        r"polish of port offsetting's LFTs moved \d+ entries .* (\d+) of "
        r"them to even the route counts", ln)] if m]
    assert evened and evened[0] > 0, lines
    assert any(POLISHED in ln for ln in lines), lines
    c_on, c_off = route_counts(on), route_counts(off)
    assert c_on.sum() == c_off.sum()
    assert (c_on ** 2).sum() < (c_off ** 2).sum()
    s_on, s_off = (scores(run, 0, POLISH_SEEDS, spine_cas=True)
                   for run in (on, off))
    lower = [k for k in s_on if s_on[k] < s_off[k] - 1e-9]
    assert not lower, lower


def test_polish_raises_a_cell_below_stock_with_the_lead_of_others(tmp_path):
    """docs/fabrics.md's var-taper3-mgmt (18 edges tapered 3:1, 3
    management HCAs on spines), updn's own roots, LMC 2: polished by both
    phases, ours still lose the first half job's striped traffic to stock
    updn's tables by a hair, while every other cell leads.  The last
    stage spends some of the others' lead and raises it to stock's: ours
    stay.  The guard's figures (its log) of that cell: ours as built
    below stock's, polished at least stock's; lft-analyze's figure of the
    polished tables the same.  Before the last stage, stock's tables,
    polished, stayed.  The guard's orders rank the management HCAs too
    (spine_cas=on), as when this was found."""
    need_plugin()
    net = gen_cluster(tmp_path, "taper3", [
        "--radix", "36", "--spines", "6", "--edges", "18",
        "--hosts-per-edge", "18", "--uplinks", "6", "--core-hosts", "3",
        "--seed", "9"])
    out = str(tmp_path / "on")
    on = SimRun(net, "updn", 2, "on", out, run_osm_sim(
        ["--net", net, "--out", out, "--lmc", "2", "--quiet", "--roots",
         "none", "--port-offsetting", "on", "--plugin-dir", plugin_dir(),
         "--plugin-option", "spine_cas=on", "--", "-D", "0x47"])).require_ok()
    lines = guard_lines(on)
    raised = [(int(m.group(1)), int(m.group(2))) for ln in lines
              for m in [re.search(r"polish of port offsetting's LFTs moved "
                                  r".* (\d+) to raise cells below the stock "
                                  r"tables' \((\d+) more taken back", ln)]
              if m]
    assert raised and raised[0][0] > 0 and raised[0][1] == 0, lines
    assert any("port offsetting's LFTs score at least as well as the stock "
               "ones in all 19 cells; they stay" in ln for ln in lines), lines

    def logged(who):
        for ln in lines:
            m = re.search(r"stock guard: %s, half job 1 spread: ([\d.]+)"
                          % who, ln)
            if m:
                return float(m.group(1))
        raise AssertionError((who, lines))
    built, stock, polished = (logged(w) for w in
                              ("offsetting", "stock", "offsetting, polished"))
    assert built < stock <= polished, (built, stock, polished)
    an = Analysis(on.topo, on.lfts, lmc=2, bisections=0, job="half",
                  job_index=0, spine_cas=True)
    an.validate()
    an.build_paths()
    assert an.valid and an.credit_loops() is None
    assert an._eff(an.shift(True)) == pytest.approx(polished, abs=5e-5)



def logged_cells(lines, who):
    """{cell name: efficiency} the guard logged for the tables it names
    who (its verbose lines "stock guard: WHO, CELL: 0.1234 (...")."""
    out = {}
    for ln in lines:
        m = re.search(r"stock guard: %s, ([a-z0-9 +]+): ([\d.]+) \("
                      % re.escape(who), ln)
        if m:
            out[m.group(1)] = float(m.group(2))
    return out


def test_offsets_beside_stock_base_lids_are_polished_alone(tmp_path):
    """docs/degraded.md's 8x4 seed 3 (5 % of the cables cut, two leaves
    cabled to 3 of the 4 spines), LMC 1: the stock tables, polished, stay
    for the base LIDs, and their further LID offsets beside the base
    LIDs' win.  Those tables lose no cell to stock, and the polish now
    moves their entries toward the further offsets alone: every cell of
    base LIDs scores as before it, the striped ones as well or better
    (leaf order 0.6774 -> 0.6935; before, they went on unpolished, 0.677
    in docs/degraded.md), and the tables are valid and free of credit
    loops."""
    need_plugin()
    net = degraded_tree(tmp_path, 3, "0.05", ["--random-guids"])
    on = run_options(tmp_path, net, 1, "on", [], sim_args=["--no-ibroute"],
                     osm_args=["-D", "0x47"])
    lines = guard_lines(on)
    assert any("the polish of the further LID offsets of the LFTs with them "
               "beside the base LIDs moved" in ln for ln in lines), lines
    assert beside_base_won(lines, 17), lines
    who = "offsetting's further LID offsets beside the base LIDs"
    before = logged_cells(lines, who)
    after = logged_cells(lines, who + ", those polished")
    assert len(before) == 17 and sorted(after) == sorted(before)
    for cell, eff in before.items():
        if cell.endswith(" base"):
            assert after[cell] == eff, cell
        else:
            assert after[cell] >= eff, cell
    assert before["leaf order spread"] == pytest.approx(0.6774)
    assert after["leaf order spread"] == pytest.approx(0.6935)
    an = Analysis(on.topo, on.lfts, bisections=0)
    r = an.run(want_curves=False)
    assert r["valid"] and not r["credit_loop"], r["problems"][:3]
    assert r["shift"]["spread"]["efficiency"] == pytest.approx(0.6935,
                                                               abs=5e-5)


def test_polish_of_offsets_that_loses_a_cell_is_taken_back(tmp_path):
    """Shape 449 of docs/shapes.md (24 edges of 6 hosts, 2 rails, 4
    spines), LMC 2, updn's own roots: port offsetting's tables with the
    stock first hops of the base LIDs and their further LID offsets
    beside those win every cell as they are.  Polished toward the further
    offsets, they would score lower in the guard's random orders (the
    polish holds orders of its own; there they even lose to stock), so
    the polish is taken back and the unpolished tables go on: leaf order
    base LIDs 0.566, where the stock tables, which stayed when the
    polished ones lost, score 0.528."""
    need_plugin()
    net = gen_cluster(tmp_path, "shape449", [
        "--radix", "36", "--edges", "24", "--hosts-per-edge", "6",
        "--uplinks", "6", "--rails", "2", "--spines", "4", "--seed",
        "856"])
    on = run_options(tmp_path, net, 2, "on", [],
                     sim_args=["--roots", "none", "--no-ibroute"])
    lines = guard_lines(on)
    assert any("the polish of the further LID offsets of the LFTs with them "
               "beside the base LIDs is taken back: after it they would "
               "score lower than before it in random orders spread"
               in ln for ln in lines), lines
    assert beside_base_won(lines, 19), lines
    an = Analysis(on.topo, on.lfts, bisections=0)
    r = an.run(want_curves=False)
    assert r["valid"] and not r["credit_loop"], r["problems"][:3]
    assert r["shift"]["base"]["efficiency"] == pytest.approx(0.566,
                                                             abs=5e-4)


def leaf_shuffled_figures(run, seeds=(1, 2, 3)):
    """lft-analyze's base-LID shift efficiency of one run's LFTs in the
    leaf order (first) and in the leaf-shuffled orders of seeds."""
    out = []
    for order, seed in [("leaf", 1)] + [("leaf-shuffled", s) for s in seeds]:
        an = Analysis(run.topo, run.lfts, bisections=0, order=order,
                      seed=seed)
        an.run()
        out.append(an.result["shift"]["base"]["efficiency"])
    return out


def test_leaf_shuffles_hold_shuffled_leaves_to_stock(tmp_path):
    """docs/fabrics.md's var-2l-12x6-degraded (12 leaves of 6 hosts, a
    spine and 5 % of the cables missing), LMC 0, roots left to updn.  By
    default the guard scores the routing's leaf order only: the tables
    that win there (ours with the stock first hops of the base LIDs,
    polished) tie stock updn in it (0.542) but fall to 0.437, 0.428 and
    0.454 where the leaves come shuffled (seeds 1-3; stock updn 0.542 in
    each).  With leaf_shuffles=on the guard scores such orders too: those
    tables lose a shuffled cell, and the stock ones stay, level with
    stock updn in every order."""
    need_plugin()
    net = str(tmp_path / "v.net")
    p = run_script(GEN_FABRIC, [
        "2level", "--leaves", "12", "--spines", "6", "--hosts-per-leaf",
        "6", "--remove-switches", "1", "--remove-links", "0.05", "--seed",
        "11", "--random-guids", "-o", net])
    assert p.returncode == 0, p.stderr
    runs = {}
    for name, extra in (("stock", ["--stock"]),
                        ("ours", ["--port-offsetting", "on"]),
                        ("shuffles", ["--port-offsetting", "on",
                                      "--plugin-option",
                                      "leaf_shuffles=on"])):
        out = str(tmp_path / name)
        args = ["--net", net, "--out", out, "--lmc", "0", "--quiet",
                "--no-ibroute", "--roots", "none"] + extra
        if name != "stock":
            args += ["--plugin-dir", plugin_dir()]
        runs[name] = SimRun(net, "updn", 0, name, out,
                            run_osm_sim(args)).require_ok()
    stock = leaf_shuffled_figures(runs["stock"])
    ours = leaf_shuffled_figures(runs["ours"])
    held = leaf_shuffled_figures(runs["shuffles"])
    assert stock == pytest.approx([77 / 142] * 4)
    assert ours == pytest.approx([77 / 142, 31 / 71, 0.428, 0.454],
                                 abs=5e-4)
    assert held == pytest.approx(stock)
    logs = {}
    for name in ("ours", "shuffles"):
        with open(runs[name].path("osm.log"), errors="replace") as f:
            logs[name] = f.read()
    assert "would score lower than the stock ones in leaves shuffled " \
        "base" in logs["shuffles"]
    assert "osmoffset: stock guard: the stock LFTs stay as they are" in \
        logs["shuffles"]
    assert "leaves shuffled" not in logs["ours"]
    an = Analysis(runs["shuffles"].topo, runs["shuffles"].lfts,
                  bisections=0)
    an.validate()
    an.build_paths()
    assert an.valid and an.credit_loops() is None


def test_leaf_shuffles_reach_first_weighs_the_mix(tmp_path):
    """docs/fabrics.md's var-dir-mgmt-taper3 (two directors under tapered
    edges, six management HCAs on line ASICs, 3 % of the cables missing),
    LMC 0, with leaf_shuffles=on.  The mix of ours and stock loses a
    shuffled cell, and the tables that then win (ours with the stock
    first hops of the base LIDs) would leave a management HCA's LID
    without a route from some CA after the reach pass (3 pairs), ours 2
    LIDs: the mix, which leaves none, goes on though it loses cells, and
    every pair is routed, loop-free."""
    need_plugin()
    net = gen_cluster(tmp_path, "taper3", [
        "--radix", "36", "--directors", "2", "--lines", "8", "--fabrics",
        "4", "--edges", "16", "--empty-edges", "4", "--hosts-per-edge",
        "18", "--uplinks", "6", "--core-hosts", "6", "--remove-links",
        "0.03", "--seed", "22"])
    out = str(tmp_path / "on")
    run = SimRun(net, "updn", 0, "on", out, run_osm_sim([
        "--net", net, "--out", out, "--lmc", "0", "--quiet",
        "--no-ibroute", "--roots", "none", "--port-offsetting", "on",
        "--plugin-option", "leaf_shuffles=on", "--plugin-dir",
        plugin_dir()])).require_ok()
    with open(run.path("osm.log"), errors="replace") as f:
        log = f.read()
    assert "osmoffset: stock guard: the tables that won leave 1 CA LIDs " \
        "without a route from some CA after the reach pass, the mix of " \
        "port offsetting's and the stock ones 0 (port offsetting's 2): " \
        "the mix goes on, though it scores lower in 3 cells (with " \
        "reach_vls=2 or more and OpenSM's QoS on, the reach pass may " \
        "take those turns on a lane above VL0, and the tables that won " \
        "stay)" in log
    an = Analysis(run.topo, run.lfts, bisections=0)
    an.validate()
    an.build_paths()
    assert an.valid and an.credit_loops() is None


def assert_none_lower(before, after):
    """No cell of scores() after below its figure before."""
    lower = ["%s %s: %.4f < %.4f" % (k[0], k[1], after[k], before[k])
             for k in before if after[k] < before[k] - 1e-9]
    assert not lower, "\n".join(lower)


def test_polish_kicks_raise_the_tables_that_stay(tmp_path):
    """bench-degraded's 8x4 tree of seed 1 (5 % of the cables cut), LMC 1.
    By default the polish stops where no single move or swap gains; with
    polish_kicks=200 the guard kicks the tables that stay out of that
    local optimum and keeps the result only where every cell it scores
    (the random orders as it judges them) is at least as high and the
    whole higher: the leaf order's striped traffic 0.661 -> 0.672 (the
    exact optimum, route-optimum's, 0.699), no cell of lft-analyze's
    lower, the tables valid and free of credit loops."""
    need_plugin()
    net = degraded_tree(tmp_path, 1, remove="0.05", extra=["--random-guids"])
    plain = run_options(tmp_path, net, 1, "plain", [])
    kicked = run_options(tmp_path, net, 1, "kicked", ["polish_kicks=200"])
    before, after = scores(plain, 1), scores(kicked, 1)
    assert_none_lower(before, after)
    assert before[("leaf order", "spread")] == pytest.approx(0.661, abs=5e-4)
    assert after[("leaf order", "spread")] == pytest.approx(0.672, abs=5e-4)
    assert sum(after.values()) > sum(before.values()) + 0.01
    lines = guard_lines(kicked)
    kept = [re.search(r"(\d+) kicks of the tables that stay, (\d+) kept",
                      ln) for ln in lines]
    kept = [m for m in kept if m]
    assert len(kept) == 1 and int(kept[0].group(2)) > 0, lines[-3:]
    assert any("the kicked tables go on" in ln for ln in lines)
    assert not any("kick" in ln for ln in guard_lines(plain))


def test_polish_even_evens_the_counts_the_polish_leaves(tmp_path):
    """dir-2level-taper (sim-topologies/), LMC 0.  Its edges have more
    cables to some line boards than to others, and the polish, which holds
    a round's ties, leaves some cables twice the LIDs of others.  With
    polish_even=on, once the guard has chosen, it evens the route counts
    with the ties loose and keeps the result only where no cell it scores
    is lower, the whole higher, and random orders that neither the step
    nor its cells hold score at least as well: every cell of lft-analyze's
    at least as high as by default, their sum higher, the tables valid and
    free of credit loops; by default (off) no such step runs."""
    need_plugin()
    net = fabric_path("dir-2level-taper.net")
    off = run_options(tmp_path, net, 0, "off", [])
    on = run_options(tmp_path, net, 0, "on", ["polish_even=on"])
    before, after = scores(off, 0), scores(on, 0)
    assert_none_lower(before, after)
    assert sum(after.values()) > sum(before.values()) + 1e-4
    lines = guard_lines(on)
    moved = [re.search(r"the route counts of the tables that stay evened "
                       r"where .*: moved (\d+) entries", ln) for ln in lines]
    moved = [int(m.group(1)) for m in moved if m]
    assert len(moved) == 1 and moved[0] > 0, lines[-3:]
    assert any("the evened tables go on: at least as good in every cell, "
               "better on the whole" in ln for ln in lines)
    assert not any("evened where" in ln or "evened tables" in ln or
                   "evening of the route counts" in ln
                   for ln in guard_lines(off))
    with open(on.path("opensm-lfts.dump")) as a, \
            open(off.path("opensm-lfts.dump")) as b:
        assert a.read() != b.read()


def host_switches(topo):
    """The GUIDs of the switches a CA is cabled to."""
    return {g for (g, _p), (r, _rp) in topo.links.items()
            if topo.nodes[g].kind == "SW" and topo.nodes[r].kind != "SW"}


def switch_routes(run, lmc):
    """{(switch GUID, neighbour GUID): routes of every rank to every rank's
    LID of every offset over all the switch's cables to that neighbour}
    of the switches without hosts (metrics.route_counts())."""
    an = Analysis(run.topo, run.lfts, lmc=lmc, bisections=0)
    an.validate()
    an.build_paths()
    _base, every = metrics.route_counts(an)
    hosts = host_switches(run.topo)
    out = {}
    for (g, p), (r, _rp) in run.topo.links.items():
        if run.topo.nodes[g].kind != "SW" or g in hosts or \
                run.topo.nodes[r].kind != "SW":
            continue
        key = (g, r)
        out[key] = out.get(key, 0) + int(every[an.sidx[g] * an.W + p])
    return out


def test_polish_ways_evens_the_spines_choice_of_way(tmp_path):
    """ft3-partial-cores (sim-topologies/), LMC 2: three pods of four pod
    spines under six cores, which port offsetting's digits share out by
    LID count.  With polish_ways=on, once the guard has chosen (and the
    cables are evened), the entry of any switch toward a rank's LID moves
    to another neighbour whose way is as short where that evens the route
    counts, no round of the leaf order, its jobs and its LID offsets gets
    slower, and the LID's routes close no cycle with the channel
    dependencies of the tables: spines' entries move (which the polish of
    the switches with hosts never moves), the route counts of the pod
    spines over their cores come out more even, every cell of
    lft-analyze's at least as high as with it off (leaf order striped
    0.529 -> 0.537), the tables valid and free of credit loops, switch
    LIDs' routes too; by default (off) no such step runs."""
    need_plugin()
    net = fabric_path("ft3-partial-cores.net")
    off = run_options(tmp_path, net, 2, "off", [])
    on = run_options(tmp_path, net, 2, "on", ["polish_ways=on"])
    before, after = scores(off, 2), scores(on, 2)
    assert_none_lower(before, after)
    assert round(before[("leaf order", "spread")], 3) == 0.529
    assert round(after[("leaf order", "spread")], 3) == 0.537
    lines = guard_lines(on)
    moved = [re.search(r"evened over equally short ways to other "
                       r"neighbours, every move free of credit loops, "
                       r"where .*: moved (\d+) entries", ln) for ln in lines]
    moved = [int(m.group(1)) for m in moved if m]
    assert len(moved) == 1 and moved[0] > 0, lines[-3:]
    assert any("the tables with their ways evened go on: at least as good "
               "in every cell, better on the whole" in ln for ln in lines)
    assert not any("ways" in ln for ln in guard_lines(off))
    hosts = {off.topo.nodes[g].desc for g in host_switches(off.topo)}
    spines = {desc for desc, _lid in lft_differences(on, off)} - hosts
    assert spines, "no entry of a switch without hosts moved"
    a, b = switch_routes(off, 2), switch_routes(on, 2)
    assert sum(a.values()) == sum(b.values())
    assert sum(v * v for v in b.values()) < sum(v * v for v in a.values())
    an = Analysis(on.topo, on.lfts, lmc=2, bisections=0)
    an.validate()
    an.build_paths()
    assert metrics.credit_loops(an, scope="every-entry") is None
