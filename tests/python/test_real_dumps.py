"""End-to-end routing of the public real dump with SHARP nodes
(../shared/realfabrics/ndr-2level-railopt.ibnetdiscover): 31 leaves and 9
spines, leaf-spine cables doubled, some missing, a SHARP aggregation node
on every switch.  updn's root detection takes 38 of the 40 switches for
roots there (31 leaves among them) and its tables have a credit loop; with
port offsetting the leaves are left out of the roots, and every CA LID is
reached without a credit loop, at no lower shift efficiency than stock
updn in leaf order."""

import json
import os

import pytest

from conftest import (GEN_FABRIC, PLUGIN_SKIP_REASON, REPO, plugin_dir,
                      run_osm_sim, run_script, unreachable_by_kind)
from osmoffset import fabric
from osmoffset.model import is_aggregation_node

DUMP = os.path.join(os.path.dirname(REPO), "shared", "realfabrics",
                    "ndr-2level-railopt.ibnetdiscover")
LFT_ANALYZE = os.path.join(REPO, "scripts", "lft-analyze")

_runs = {}


def routed(tmp_path_factory, lmc, mode):
    """osm-sim on the dump (cached per LMC and mode) and lft-analyze's
    --json of it."""
    if not os.path.isfile(DUMP):
        pytest.skip("%s is absent" % DUMP)
    if mode == "on" and plugin_dir() is None:
        pytest.skip(PLUGIN_SKIP_REASON)
    key = (lmc, mode)
    if key not in _runs:
        out = tmp_path_factory.mktemp("ndr-%d-%s" % key)
        _runs[key] = route_dump(out, ["--ibnetdiscover", DUMP], mode, lmc)
    return _runs[key]


def route_dump(out, source, mode, lmc=0, analyze=()):
    """osm-sim on source (its arguments naming the fabric) into out, stock
    or with port offsetting, and lft-analyze's --json of the tables
    (analyze: more of its arguments); returns (that JSON, osm.log)."""
    args = source + ["--out", str(out), "--lmc", str(lmc), "--quiet",
                     "--no-ibroute"]
    args += ["--stock"] if mode == "stock" else [
        "--port-offsetting", "on", "--plugin-dir", plugin_dir()]
    p = run_osm_sim(args, timeout=600)
    assert p.returncode == 0, p.stderr
    a = run_script(LFT_ANALYZE, [
        "--lfts", str(out / "opensm-lfts.dump"),
        "--topology", str(out / "opensm-subnet.lst"),
        "--lmc", str(lmc), "--bisections", "1", "--json"] + list(analyze),
        timeout=600)
    assert a.returncode in (0, 1), a.stderr
    with open(str(out / "osm.log"), errors="replace") as f:
        return json.loads(a.stdout), f.read()


def test_stock_updn_takes_leaves_for_roots_and_loops(tmp_path_factory):
    res, _ = routed(tmp_path_factory, 0, "stock")
    assert res["credit_loop"]


@pytest.mark.parametrize("lmc", [0, 2])
def test_offsetting_drops_leaf_roots_reaches_all_without_loop(
        tmp_path_factory, lmc):
    res, log = routed(tmp_path_factory, lmc, "on")
    assert "31 of the 38 root switches updn's detection found are " \
        "leaves" in log
    assert "spines over leaves as roots: 9 roots" in log
    assert res["valid"], res["problems"][:5]
    assert res["unreachable_pairs"] == 0
    assert not res["credit_loop"], res.get("credit_cycle")


@pytest.mark.parametrize("lmc,traffic", [(0, "base"), (2, "base"),
                                         (2, "spread")])
def test_offsetting_not_below_stock_in_leaf_order(tmp_path_factory, lmc,
                                                  traffic):
    ours, _ = routed(tmp_path_factory, lmc, "on")
    stock, _ = routed(tmp_path_factory, lmc, "stock")
    a = ours["shift"][traffic]["efficiency"]
    b = stock["shift"][traffic]["efficiency"]
    assert a >= b - 1e-9, "offsetting %.4f < stock updn %.4f" % (a, b)


def test_further_offsets_fill_the_links_a_leaf_has(tmp_path_factory):
    """Leaves missing a spine or one cable of a pair: a further LID offset
    whose slot has no link at its destination's leaf takes another slot of
    that leaf at every sender alike, so the leaf's links share its LIDs
    evenly.  LMC 2, leaf order, spread traffic: 0.479 when each sender
    detoured on its own (stock updn 0.357, dfsssp 0.544)."""
    ours, _ = routed(tmp_path_factory, 2, "on")
    assert ours["shift"]["spread"]["efficiency"] >= 0.50


QDR = os.path.join(os.path.dirname(REPO), "shared", "realfabrics",
                   "qdr-irregular-x5.ibnetdiscover")


QDR_SPINES = {"0x0008f10500108098", "0x0008f10500108c5c",
              "0x0008f10500108530", "0x0008f1050010851e"}
QDR_EDGE = 0x0008f1050020369c      # 3 cables to each of the 4 spines
QDR_WIDE = 0x0008f10500200b50      # 6 cables to each of 2 spines


def qdr_source():
    """osm-sim's arguments naming the QDR dump and its node names; skips
    the test where the dump or the plugin is absent."""
    if not os.path.isfile(QDR):
        pytest.skip("%s is absent" % QDR)
    if plugin_dir() is None:
        pytest.skip(PLUGIN_SKIP_REASON)
    return ["--ibnetdiscover", QDR, "--map",
            QDR[:-len(".ibnetdiscover")] + ".map"]


def test_first_quarter_job_of_the_qdr_dump_runs_without_contention(
        tmp_path):
    """The QDR dump in the routing's leaf order (leaves by switch name;
    five of its six share one, "Infiniscale-IV Mellanox Technologies",
    and go by their first host name): the first quarter job is the 9
    hosts of one leaf and 13 of the next, each leaf with three cables to
    each of four spines.  Stock updn gets 0.786; port offsetting's digits
    run over the two leaves' hosts in turn and the job runs free of
    contention (1.000).  (Until the routing order took the leaves by
    switch name its first quarter was a leaf of six cables to each of two
    spines and one of three to four: 0.643 stock, 1.000 ours.)"""
    source = qdr_source()
    figures = {}
    for mode in ("stock", "on"):
        res, _log = route_dump(tmp_path / mode, source, mode,
                               analyze=["--job", "quarter"])
        figures[mode] = res["shift"]["base"]["efficiency"]
    assert abs(figures["stock"] - 0.786) < 0.001, figures
    assert figures["on"] == 1.0, figures


def cable_routes(out, spine, edge):
    """The routes from the ranks (lft-analyze --csv's all_routes) over
    each cable of switch GUID spine to switch GUID edge, by port, in the
    tables osm-sim left in out."""
    from osmoffset.analyze import Analysis
    from osmoffset.metrics import route_counts
    topo = fabric.load_topology(str(out / "opensm-subnet.lst"))
    an = Analysis(topo, fabric.load_lfts(str(out / "opensm-lfts.dump")),
                  bisections=0)
    an.validate()
    an.build_paths()
    _base, routes = route_counts(an)
    s = [i for i, n in enumerate(an.sw_nodes) if n.guid == spine][0]
    return {p: int(routes[s * an.W + p])
            for p, peer, _rp in topo.neighbors(spine) if peer == edge}


def shift_figures(out):
    """lft-analyze's figures of the tables in out: leaf order, its first
    quarter and half jobs, the random order of seed 1; base and spread."""
    from osmoffset.metrics import shift_by_order
    res = shift_by_order(
        fabric.load_topology(str(out / "opensm-subnet.lst")),
        fabric.load_lfts(str(out / "opensm-lfts.dump")),
        {"leaf": ("leaf", None, 0), "quarter": ("leaf", "quarter", 0),
         "half": ("leaf", "half", 0), "random": ("random", None, 0)})
    assert res["valid"] and not res["credit_loop"]
    assert not res["credit_loop_every_entry"]
    return {(o, t): v[t] for o, v in res["orders"].items()
            for t in ("base", "spread")}


def test_qdr_spine_cables_carry_even_route_counts(tmp_path):
    """The QDR dump at LMC 1: edge QDR_WIDE (21 hosts) has six cables to
    each of two spines.  Port offsetting's digits give each of
    spine 0x0008f10500108098's six cables 7 of the edge's 42 LIDs, but
    once the polish has moved the other leaves' entries those LIDs come
    from unequal numbers of senders: with polish_cables=off the six
    cables carry 34 to 466 routes.  By default the stock guard evens
    them (229 to 249, the same 1,437 in all), and no figure drops: random
    order striped 0.313 -> 0.328 (stock dfsssp 0.326)."""
    source = qdr_source()
    runs = {}
    for mode, opts in (("off", ["--plugin-option", "polish_cables=off"]),
                       ("on", [])):
        out = tmp_path / mode
        p = run_osm_sim(source + opts + [
            "--out", str(out), "--lmc", "1", "--quiet", "--no-ibroute",
            "--port-offsetting", "on", "--plugin-dir", plugin_dir()],
            timeout=600)
        assert p.returncode == 0, p.stderr
        with open(str(out / "osm.log"), errors="replace") as f:
            runs[mode] = (out, f.read())
    off, on = (cable_routes(runs[m][0], 0x0008f10500108098, QDR_WIDE)
               for m in ("off", "on"))
    assert len(off) == 6 and sorted(off.values()) == \
        [34, 81, 110, 308, 438, 466], off
    assert sorted(on.values()) == [229, 233, 237, 241, 248, 249], on
    log = runs["on"][1]
    assert "evened over parallel cables" in log
    assert "the tables with their cables evened go on" in log
    assert "parallel cables" not in runs["off"][1]
    before, after = (shift_figures(runs[m][0]) for m in ("off", "on"))
    assert all(after[k] >= before[k] - 1e-12 for k in before), \
        (before, after)
    assert round(before[("random", "spread")], 3) == 0.313
    assert round(after[("random", "spread")], 3) == 0.328


def test_single_cable_down_carries_one_lane_of_further_offsets(tmp_path):
    """The NDR dump at LMC 2, port offsetting alone (no stock guard): a
    leaf with both cables of a pair to a spine that has only one cable
    left down to another leaf sends the further LID offsets of that
    leaf's hosts over one of its two cables to the spine, never both (the
    second lane is cut for them: the single cable below is not loaded
    twice).  Striped traffic in leaf order gets 0.479 (0.403 before the
    cut and the leaves' nearby-rank detours; dfsssp 0.544, stock updn
    0.357)."""
    if not os.path.isfile(DUMP):
        pytest.skip("%s is absent" % DUMP)
    if plugin_dir() is None:
        pytest.skip(PLUGIN_SKIP_REASON)
    res, _log = route_dump(tmp_path, ["--ibnetdiscover", DUMP,
                                      "--plugin-option", "stock_guard=off"],
                           "on", lmc=2)
    assert res["valid"] and not res["credit_loop"]
    assert res["shift"]["spread"]["efficiency"] >= 0.47, res["shift"]
    topo = fabric.load_topology(str(tmp_path / "opensm-subnet.lst"))
    lfts = fabric.load_lfts(str(tmp_path / "opensm-lfts.dump"))
    cables, hosts = {}, {}
    for (g, p), (rg, _rp) in topo.links.items():
        n, r = topo.nodes[g], topo.nodes[rg]
        if n.kind == "SW" and r.kind == "SW" and g != rg:
            cables.setdefault((g, rg), []).append(p)
        elif n.kind == "SW" and not is_aggregation_node(r.desc):
            hosts.setdefault(g, []).append(r.lid)
    checked = 0
    for (s, t), down in cables.items():
        if len(down) != 1 or t not in hosts or s in hosts:
            continue
        lids = [lid + o for lid in hosts[t] for o in (1, 2, 3)]
        for a in hosts:
            up = cables.get((a, s), [])
            if a == t or len(up) != 2:
                continue
            lft = lfts.switches[a].lft
            used = {lft[lid] for lid in lids} & set(up)
            assert len(used) == 1, (topo.nodes[a].desc, topo.nodes[s].desc,
                                    topo.nodes[t].desc, used)
            checked += 1
    assert checked >= 10, checked


@pytest.mark.parametrize("lmc", [0, 2])
def test_spines_left_out_of_the_roots_carry_traffic(tmp_path, lmc):
    """The QDR dump: four spines over the same leaves, but updn's root
    detection takes only the two that also serve the 21-host leaf; the
    other two rank below the leaves and carry no traffic between them
    (stock updn: leaf order 0.226, random 0.173 base, 0.253 spread at
    LMC 2).  Port offsetting makes them roots as well, checks that what it
    builds over them scores at least as well as stock updn over its own
    roots, and keeps it: every figure above stock's."""
    source = qdr_source()
    figures = {}
    for mode in ("stock", "on"):
        for order in ("leaf", "random"):
            res, log = route_dump(tmp_path / mode / order, source, mode,
                                  lmc, analyze=["--order", order,
                                                "--seed", "1"])
            for traffic in ("base", "spread") if lmc else ("base",):
                figures[mode, order, traffic] = \
                    res["shift"][traffic]["efficiency"]
            with open(str(tmp_path / mode / order /
                          "opensm-updn-roots.dump")) as f:
                roots = {"0x%016x" % int(line.split()[0], 16)
                         for line in f if line.strip()}
            if mode == "on":
                assert "2 switches beside updn's roots (at their " \
                    "level" in log
                assert "the stock tables to beat are updn's own, over " \
                    "its own roots" in log
                assert "the stock LFTs stay" not in log
                assert roots == QDR_SPINES
                assert res["unreachable_pairs"] == 0
                assert not res["credit_loop"], res.get("credit_cycle")
            else:
                assert len(roots & QDR_SPINES) == 2, roots
    for (mode, order, traffic), on in figures.items():
        if mode == "on":
            stock = figures["stock", order, traffic]
            assert on >= stock + 0.02, (order, traffic, on, stock)


def test_further_offsets_take_the_block_of_their_base_lid(tmp_path):
    """The QDR dump at LMC 1, port offsetting alone: a leaf with three
    cables to each of four spines routes toward a leaf cabled to two of
    them, so half its slots are dead there.  The offset LID of each host
    of that leaf takes the live slot paired with its base LID's (the
    block oo_offset_slot() makes of the six live slots), instead of its
    own slot's detour: the offset port is a function of the base port,
    pairing the six cables, each with one to the other spine.  A job on
    the first quarter of the hosts (leaf order) spans the two leaves; its
    striped traffic runs free of contention (0.810 when the offsets
    detoured; stock updn 0.794, dfsssp 0.984)."""
    res, _log = route_dump(tmp_path, qdr_source() + [
        "--plugin-option", "stock_guard=off"], "on", lmc=1,
        analyze=["--job", "quarter"])
    assert res["shift"]["spread"]["efficiency"] == 1.0, res["shift"]
    topo = fabric.load_topology(str(tmp_path / "opensm-subnet.lst"))
    lft = fabric.load_lfts(str(tmp_path / "opensm-lfts.dump")) \
        .switches[QDR_EDGE].lft
    spine_of, hosts = {}, []
    for (g, p), (rg, _rp) in topo.links.items():
        if g == QDR_EDGE and "0x%016x" % rg in QDR_SPINES:
            spine_of[p] = rg
        elif g == QDR_WIDE and topo.nodes[rg].kind != "SW":
            hosts.append(topo.nodes[rg].lid)
    assert len(hosts) == 21
    partner = {}
    for lid in hosts:
        base, offset = lft[lid], lft[lid + 1]
        assert partner.setdefault(base, offset) == offset, (lid, partner)
    assert len(partner) == 6, partner
    for base, offset in partner.items():
        assert partner[offset] == base, partner
        assert spine_of[base] != spine_of[offset], partner




def test_a_copy_without_five_percent_of_cables_reaches_every_lid(tmp_path):
    """The NDR dump without 5 % of its leaf-spine cables (gen-fabric
    degrade, seed 6: bench-shapes --net's copy 6).  Port offsetting ranks
    under the 9 spines; where a leaf lost its cable to a spine, that
    spine's SHARP node reaches the leaf's hosts only through a down/up
    turn at another leaf.  The turn the reach pass picks first closes a
    credit loop for some of them; the loop-free ones are at a leaf the
    LID's kept fills already turn at, or further down the list of turn
    switches (30 SHARP-node pairs were left without a route at LMC 0,
    where stock updn over its 38 roots routes every one, with a credit
    loop).  Every host reaches every LID.  Since the routing order takes
    the leaves by switch name (468155f) no turn switch takes 4 pairs
    between the SHARP nodes of two spines without closing a loop; the
    pass's last step sends each of those holes over another cable (the
    turn takes the one the spine sends the leaf's own LID by, one of two
    where a cable is doubled), which closes none: every pair has a
    route again.  The polished tables of ours beat them in every cell,
    but the first stage of the reach pass leaves 42 CA LIDs of theirs
    without a route from some CA, against 24: they used to be refused
    (leaf order 0.266).  After the whole pass as OpenSM runs it they
    leave no host/LID pair without a route either, and that decides
    now (reach_as_ours()): 0.515, as on the other copies."""
    if not os.path.isfile(DUMP):
        pytest.skip("%s is absent" % DUMP)
    if plugin_dir() is None:
        pytest.skip(PLUGIN_SKIP_REASON)
    whole = tmp_path / "whole"
    p = run_osm_sim(["--ibnetdiscover", DUMP, "--out", str(whole),
                     "--stock", "--quiet", "--no-ibroute"], timeout=600)
    assert p.returncode == 0, p.stderr
    net = str(tmp_path / "copy-6.net")
    g = run_script(GEN_FABRIC, ["degrade", "--net", str(whole / "fabric.net"),
                                "--remove-links", "0.05", "--seed", "6",
                                "-o", net])
    assert g.returncode == 0, g.stderr
    figures = {}
    for mode in ("stock", "on"):
        res, log = route_dump(tmp_path / mode, ["--net", net], mode)
        if mode == "stock":
            assert res["unreachable_pairs"] == 0, res["problems"][:5]
        figures[mode] = res["shift"]["base"]["efficiency"]
    assert ("leave 42 CA LIDs without a route from some CA after the "
            "reach pass's first stage, against 24, but no more host/LID "
            "pairs after the whole pass (0, against 0)") in log, \
        [ln for ln in log.splitlines() if "stock guard" in ln]
    assert unreachable_by_kind(tmp_path / "on") == {}
    # stock updn's tables have a credit loop here, as on the whole dump
    assert not res["credit_loop"], res.get("credit_cycle")
    # leaf order, base LIDs: 0.515 against stock updn's 0.248 (0.266
    # before the pairs decided)
    assert figures["on"] >= 2 * figures["stock"], figures
