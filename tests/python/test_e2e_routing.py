"""End-to-end routing on simulated fabrics: Debian's OpenSM, with and
without the osmoffset plugin, routes the curated fabrics of sim-topologies/
under ibsim; the resulting LFTs are checked with osmoffset.checks.

  * every CA LID (LMC LIDs included) is reachable from every switch, with
    no loop, and the switches hold exactly what OpenSM computed;
  * port_offsetting=off routes byte-for-byte like stock OpenSM;
  * port_offsetting=on leaves base LIDs spread evenly (max - min <= 1) over
    the ports of every candidate group;
  * the same fabric routed twice gives identical tables.

The first part checks osmoffset.checks itself on a small fabric with
deliberately broken tables.
"""

import copy
import os

import pytest

from conftest import (GEN_FABRIC, PLUGIN_SKIP_REASON, SimRun, e2e_fabrics,
                      fabric_id, fabric_path, plugin_dir, rename_hosts,
                      run_osm_sim, run_script)
from osmoffset import checks, fabric
from osmoffset.analyze import Analysis

FABRICS = e2e_fabrics()
LMCS = [0, 1, 2]
MODES = ["stock", "off", "on"]
# minhop is also routed on a subset: two fabrics, LMC 0 and 2
MINHOP_FABRICS = [f for f in FABRICS
                  if fabric_id(f) in ("ft2-8x4", "kary-4-3")] or FABRICS[:2]
MINHOP_LMCS = [0, 2]
# routed a second time to compare
_REP = MINHOP_FABRICS[0]
REPEATS = [(_REP, 2, "stock"), (_REP, 2, "on"), (FABRICS[-1], 1, "on")]


def main_engine(fab):
    """updn for fabrics that name their updn roots ('# updn-root' lines,
    which osm-sim hands to opensm); minhop for the others (the two-switch
    seed example has no root: updn cannot route it)."""
    return "updn" if fabric.scan_netfile(fabric_path(fab)).roots \
        else "minhop"


def is_degraded(fab):
    return "degraded" in os.path.basename(fab)


def need_mode(mode):
    if mode != "stock" and plugin_dir() is None:
        pytest.skip(PLUGIN_SKIP_REASON)


def lft_map(lfts):
    return {g: s.lft for g, s in lfts.switches.items()}


@pytest.fixture(scope="module", autouse=True)
def prefetch(sim_cache, small_net):
    """Queue every run the module needs, so that two run at a time while
    the tests consume the results in order."""
    sim_cache.submit(small_net, 1, "stock")
    modes = MODES if plugin_dir() is not None else ["stock"]
    for fab in FABRICS:
        if not os.path.isfile(fabric_path(fab)):
            continue
        for lmc in LMCS:
            for mode in modes:
                sim_cache.submit(fab, lmc, mode, main_engine(fab))
    for fab in MINHOP_FABRICS:
        if os.path.isfile(fabric_path(fab)):
            for lmc in MINHOP_LMCS:
                for mode in modes:
                    sim_cache.submit(fab, lmc, mode, engine="minhop")
    for fab, lmc, mode in REPEATS:
        if os.path.isfile(fabric_path(fab)) and mode in modes:
            sim_cache.submit(fab, lmc, mode, main_engine(fab), rep=1)


def get_run(sim_cache, fab, lmc, mode, engine=None, rep=0):
    need_mode(mode)
    engine = engine or main_engine(fab)
    if not os.path.isfile(fabric_path(fab)):
        pytest.fail("fabric %s is missing" % fabric_path(fab))
    return sim_cache.get(fab, lmc, mode, engine, rep).require_ok()


# ----------------------------------------------------------------------
# the checks themselves, on a 2-leaf 2-spine fabric with known tables
# ----------------------------------------------------------------------

@pytest.fixture
def small(sim_cache, small_net):
    """(topo, lfts, name -> guid) of the small fabric routed stock, LMC 1;
    lfts is a private copy that a test may break."""
    run = sim_cache.get(small_net, 1, "stock").require_ok()
    guid = {n.desc: g for g, n in run.topo.nodes.items()}
    return copy.deepcopy(run.topo), copy.deepcopy(run.lfts), guid


def nm(topo, g):
    return "%s (0x%016x)" % (topo.nodes[g].desc, g)


def test_small_fabric_is_clean(small):
    topo, lfts, g = small
    assert checks.reachability(topo, lfts, 1) == []
    assert sorted(checks.ca_lids(topo, 1).values()) == sorted(
        [g["h0"], g["h1"], g["h2"], g["h3"]] * 2)


def test_candidate_groups_small(small):
    topo, _lfts, g = small
    groups = checks.candidate_groups(topo)
    by_name = {topo.nodes[sw].desc:
               {ports: [topo.nodes[c].desc for c in cas]
                for ports, cas in gr.items()}
               for sw, gr in groups.items()}
    assert by_name == {
        "leaf0": {(1,): ["h0"], (2,): ["h1"], (3, 4): ["h2", "h3"]},
        "leaf1": {(1,): ["h2"], (2,): ["h3"], (3, 4): ["h0", "h1"]},
        "spine0": {(1,): ["h0", "h1"], (2,): ["h2", "h3"]},
        "spine1": {(1,): ["h0", "h1"], (2,): ["h2", "h3"]},
    }
    assert checks.laminar_switches(groups) == set(groups)


def test_base_lid_spread_small(small):
    topo, lfts, g = small
    rows = checks.base_lid_spread(topo, lfts, 1)
    assert [(r["desc"], r["ports"], r["dests"], r["spread"], r["outside"])
            for r in rows] == [("leaf0", (3, 4), 2, 0, 0),
                               ("leaf1", (3, 4), 2, 0, 0)]
    assert [sum(r["counts"].values()) for r in rows] == [2, 2]
    assert [r["all_counts"] for r in rows] == [{3: 2, 4: 2}, {3: 2, 4: 2}]
    # put both remote base LIDs of leaf0 on port 3: spread 2
    sw = lfts.switches[g["leaf0"]]
    sw.lft[topo.nodes[g["h2"]].lid] = 3
    sw.lft[topo.nodes[g["h3"]].lid] = 3
    row = checks.base_lid_spread(topo, lfts, 1)[0]
    assert (row["desc"], row["counts"], row["spread"], row["outside"]) == \
        ("leaf0", {3: 2, 4: 0}, 2, 0)
    # a base LID sent out of a host port is outside the group
    sw.lft[topo.nodes[g["h2"]].lid] = 1
    row = checks.base_lid_spread(topo, lfts, 1)[0]
    assert (row["counts"], row["spread"], row["outside"]) == \
        ({3: 1, 4: 0}, 1, 1)


def test_reachability_dead_end(small):
    topo, lfts, g = small
    lid = topo.nodes[g["h2"]].lid
    del lfts.switches[g["spine0"]].lft[lid]
    assert checks.reachability(topo, lfts, 1) == [
        "switch %s: no route to LID %d (%s)"
        % (nm(topo, g["spine0"]), lid, nm(topo, g["h2"]))]


def test_reachability_checks_lmc_lids(small):
    topo, lfts, g = small
    lid = topo.nodes[g["h2"]].lid + 1
    lfts.switches[g["leaf1"]].lft[lid] = 255
    assert checks.reachability(topo, lfts, 1) == [
        "switch %s: no route to LID %d (%s)"
        % (nm(topo, g["leaf1"]), lid, nm(topo, g["h2"]))]
    # with LMC 0 only base LIDs count
    assert checks.reachability(topo, lfts, 0) == []


def test_reachability_loop(small):
    topo, lfts, g = small
    lid = topo.nodes[g["h2"]].lid
    lfts.switches[g["leaf0"]].lft[lid] = 3          # up to spine0
    lfts.switches[g["spine0"]].lft[lid] = 1         # back down to leaf0
    a, b = nm(topo, g["leaf0"]), nm(topo, g["spine0"])
    problems = checks.reachability(topo, lfts, 1)
    assert len(problems) == 1
    assert problems[0] in (
        "LID %d (%s): forwarding loop %s -> %s -> %s"
        % (lid, nm(topo, g["h2"]), a, b, a),
        "LID %d (%s): forwarding loop %s -> %s -> %s"
        % (lid, nm(topo, g["h2"]), b, a, b))


def test_reachability_port_without_link(small):
    topo, lfts, g = small
    lid = topo.nodes[g["h2"]].lid
    lfts.switches[g["leaf0"]].lft[lid] = 5
    assert checks.reachability(topo, lfts, 1) == [
        "switch %s: LID %d (%s) sent out of port 5, which has no link"
        % (nm(topo, g["leaf0"]), lid, nm(topo, g["h2"]))]


def test_reachability_down_link(small):
    topo, lfts, g = small
    base = topo.nodes[g["h2"]].lid
    topo.down.add((g["leaf1"], 1))
    assert checks.reachability(topo, lfts, 1) == [
        "switch %s: LID %d (%s) sent out of port 1, whose link is down"
        % (nm(topo, g["leaf1"]), lid, nm(topo, g["h2"]))
        for lid in (base, base + 1)]


def test_reachability_wrong_host(small):
    topo, lfts, g = small
    lid = topo.nodes[g["h2"]].lid
    lfts.switches[g["leaf1"]].lft[lid] = 2
    assert checks.reachability(topo, lfts, 1) == [
        "switch %s: LID %d (%s) delivered out of port 2 to %s"
        % (nm(topo, g["leaf1"]), lid, nm(topo, g["h2"]),
           nm(topo, g["h3"]))]


def test_reachability_missing_switch(small):
    topo, lfts, g = small
    del lfts.switches[g["spine1"]]
    problems = checks.reachability(topo, lfts, 1)
    assert problems[-1] == "switch %s: no LFT in the dump" \
        % nm(topo, g["spine1"])
    # leaf0 and leaf1 each send one LID of each remote host via spine1
    assert len(problems) == 1 + 4
    assert all("forwarded into switch %s that has no LFT"
               % nm(topo, g["spine1"]) in p for p in problems[:-1])


def test_reachability_switch_lids_under_updn(small):
    """updn does not route one root spine to the other (down-up turn): the
    check finds exactly those two holes when switch LIDs are included."""
    topo, lfts, g = small
    problems = checks.reachability(topo, lfts, 1, include_switches=True)
    assert problems == sorted([
        "switch %s: no route to LID %d (%s)"
        % (nm(topo, g[a]), topo.nodes[g[b]].lid, nm(topo, g[b]))
        for a, b in (("spine0", "spine1"), ("spine1", "spine0"))])


# ----------------------------------------------------------------------
# the curated fabrics
# ----------------------------------------------------------------------

@pytest.mark.parametrize("fab", FABRICS, ids=fabric_id)
def test_fabric_file_present(fab):
    assert os.path.isfile(fabric_path(fab)), fabric_path(fab)


def check_routes(sim_cache, run, lmc):
    assert run.lfts.lmc == lmc
    cas = [c for c in run.topo.cas() if c.lid]
    assert len(checks.ca_lids(run.topo, lmc)) == len(cas) << lmc
    assert lft_map(run.ibroute) == lft_map(run.lfts), \
        "the switches do not hold the LFTs OpenSM dumped"
    problems = checks.reachability(run.topo, run.lfts, lmc)
    if is_degraded(run.fabric) and run.engine == "updn":
        # a top switch that lost a cable cannot reach that leaf's hosts
        # without a down-up turn; CA-to-CA routes must all work, and port
        # offsetting must not lose any route stock OpenSM has
        leafs = checks.leaf_switches(run.topo)
        p = checks.reachability(run.topo, run.lfts, lmc, sources=leafs)
        assert p == [], "\n".join(p[:20])
        if run.mode == "on":
            # and the reach pass fills the entries updn leaves empty:
            # every switch reaches every CA LID
            assert problems == [], "\n".join(problems[:20])
        elif run.mode != "stock":
            stock = get_run(sim_cache, run.fabric, lmc, "stock", run.engine)
            assert problems == checks.reachability(stock.topo, stock.lfts,
                                                   lmc)
    else:
        assert problems == [], "\n".join(problems[:20])
    # every base LID leaves through a port the engine saw as minimum-hop
    rows = checks.base_lid_spread(run.topo, run.lfts, lmc, run.groups)
    off = [r for r in rows if r["outside"]]
    assert off == [], off[:5]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("lmc", LMCS)
@pytest.mark.parametrize("fab", FABRICS, ids=fabric_id)
def test_routes_reach_every_ca_lid(sim_cache, fab, lmc, mode):
    run = get_run(sim_cache, fab, lmc, mode)
    assert run.info["engine_used"] == main_engine(fab)
    check_routes(sim_cache, run, lmc)


@pytest.mark.parametrize("fab", FABRICS, ids=fabric_id)
def test_bfs_groups_match_the_engine(sim_cache, fab):
    """On intact fat trees, checks.candidate_groups (a plain BFS) finds
    exactly the minimum-hop port sets OpenSM's engine used."""
    run = get_run(sim_cache, fab, 1, "stock")
    bfs = checks.candidate_groups(run.topo)
    if is_degraded(fab) and run.engine == "updn":
        assert bfs != run.groups     # up/down restricts some sets
    else:
        assert bfs == run.groups


@pytest.mark.parametrize("lmc", LMCS)
@pytest.mark.parametrize("fab", FABRICS, ids=fabric_id)
def test_offsetting_off_is_stock(sim_cache, fab, lmc):
    stock = get_run(sim_cache, fab, lmc, "stock")
    off = get_run(sim_cache, fab, lmc, "off")
    assert off.read_bytes("opensm-lfts.dump") == \
        stock.read_bytes("opensm-lfts.dump")
    assert off.read_bytes("ibroute.dump") == stock.read_bytes("ibroute.dump")


def spread_violations(run, lmc):
    """Groups (of more than one port) at switches whose candidate port
    sets are pairwise equal or disjoint, where base LIDs per port differ
    by more than one."""
    laminar = checks.laminar_switches(run.groups)
    rows = [r for r in checks.base_lid_spread(run.topo, run.lfts, lmc,
                                              run.groups)
            if r["switch"] in laminar]
    bad = ["%s ports %s: base LIDs per port %s (all LIDs %s)"
           % (r["desc"], r["ports"], r["counts"], r["all_counts"])
           for r in rows if r["spread"] > 1]
    return rows, bad


def max_spread(run, lmc):
    rows = checks.base_lid_spread(run.topo, run.lfts, lmc, run.groups)
    return max([r["spread"] for r in rows] or [0])


@pytest.mark.parametrize("lmc", LMCS)
@pytest.mark.parametrize("fab", [f for f in FABRICS if not is_degraded(f)],
                         ids=fabric_id)
def test_offsetting_on_spreads_base_lids(sim_cache, fab, lmc):
    """The rule itself (stock guard off) balances base LIDs per port on
    intact trees.  On degraded trees a base LID whose slot is dead goes
    far from its neighbours' slots, on a port with at most one base LID
    more than the least loaded, so counts may differ by 2 there; the next
    test holds the rule to stock's balance on them."""
    run = get_run(sim_cache, fab, lmc, "rule")
    rows, bad = spread_violations(run, lmc)
    assert rows, "no candidate group of more than one port to check"
    assert bad == [], "\n".join(bad[:20])


# A spine of a degraded 3-level tree gives each leaf's base LIDs the core
# of the leaf's digit over its live up links (test below), not the least
# loaded one: per-port counts there follow the digits, not stock's balance.
DIGIT_COUNTED = ("kary-4-3-degraded",)


@pytest.mark.parametrize("lmc", LMCS)
@pytest.mark.parametrize("fab", [f for f in FABRICS
                                 if fabric_id(f) not in DIGIT_COUNTED],
                         ids=fabric_id)
def test_offsetting_on_never_worse_than_stock(sim_cache, fab, lmc):
    """Over all candidate groups (overlapping ones included, as on the
    degraded fabrics) the largest base-LID spread of the offsetting rule
    is at most 1 or at most stock's.  (Where the stock guard mixes the
    rule's routes with stock's, per-port counts mix too; the guard is
    judged by the alltoall scores of test_stock_guard.py.)"""
    on = get_run(sim_cache, fab, lmc, "rule")
    stock = get_run(sim_cache, fab, lmc, "stock")
    assert max_spread(on, lmc) <= max(1, max_spread(stock, lmc))


@pytest.mark.parametrize("lmc", [0, 2])
def test_degraded_spine_takes_live_cores_by_digit(sim_cache, lmc):
    """kary-4-3-degraded lost a core, so spine sw-l2-0004 reaches the other
    pods over 3 of its 4 up ports (6, 7, 8).  Each leaf's base LIDs take
    the live port of the leaf's digit (rank / 4) mod 3: leaves 0-3 and
    8-15 (pod 1, leaves 4-7, is its own), at every LMC alike."""
    run = get_run(sim_cache, "kary-4-3-degraded.net", lmc, "rule")
    sw = next(s for s in run.lfts.switches.values()
              if s.desc.startswith("sw-l2-0004"))
    live = (6, 7, 8)
    seen = 0
    for node in run.topo.nodes.values():
        if not node.desc.startswith("h") or node.lid is None:
            continue
        leaf = int(node.desc[1:]) // 4
        if 4 <= leaf <= 7:
            continue
        assert sw.lft.get(node.lid) == live[leaf % 3], node.desc
        seen += 1
    assert seen == 48


def offset_layout_problems(run, lmc):
    """Where the LIDs of a CA port do not leave a switch toward as many
    different switches as they can, or where two CA ports of a candidate
    group whose size the LID count divides share some but not all of
    their egress ports."""
    lids = 1 << lmc
    bad = []
    for g, gr in run.groups.items():
        lft = run.lfts.switches[g].lft
        for ports, cas in gr.items():
            if len(ports) < lids:
                continue
            remote = {p: run.topo.links[(g, p)][0] for p in ports}
            reach = min(lids, len(set(remote.values())))
            sets = set()
            for ca in cas:
                base = run.topo.nodes[ca].lid
                egress = [lft.get(base + k) for k in range(lids)]
                if len({remote.get(p) for p in egress}) != reach:
                    bad.append("%s: %s leaves by %s"
                               % (run.topo.nodes[g].desc,
                                  run.topo.nodes[ca].desc, egress))
                sets.add(frozenset(egress))
            if len(ports) % lids:
                continue
            for a in sets:
                for b in sets:
                    if a != b and a & b:
                        bad.append("%s ports %s: LID sets %s and %s overlap"
                                   % (run.topo.nodes[g].desc, ports,
                                      sorted(a), sorted(b)))
    return bad


@pytest.mark.parametrize("lmc", [1, 2])
@pytest.mark.parametrize("fab", [f for f in FABRICS if not is_degraded(f)
                                 and not fabric_id(f).startswith("seed-")],
                         ids=fabric_id)
def test_lid_offsets_take_distinct_switches_in_blocks(sim_cache, fab, lmc):
    """On intact fat trees the LIDs of a port leave every switch toward
    distinct switches, and (where the group splits into blocks of 2^LMC
    ports) any two ports use the same block or disjoint ones.  (The seed
    example's two switches both hold CAs, so they form no tree and the
    plain rule routes their trunk.)"""
    run = get_run(sim_cache, fab, lmc, "rule")
    bad = offset_layout_problems(run, lmc)
    assert bad == [], "\n".join(bad[:20])


def base_lid_routes(run):
    """(switch, CA port GUID) -> egress port of the CA port's base LID."""
    out = {}
    for ca in run.topo.cas():
        for g, sw in run.lfts.switches.items():
            out[(g, ca.guid)] = sw.lft.get(ca.lid)
    return out


@pytest.mark.parametrize("fab", FABRICS, ids=fabric_id)
def test_base_lid_routes_do_not_depend_on_lmc(sim_cache, fab):
    """Raising the LMC adds routes but never moves a base-LID route (the
    LIDs themselves are renumbered, so routes are compared per CA port),
    degraded trees included: an MPI that ignores LMC keeps its paths.
    (The rule itself: the stock guard compares with stock, whose base
    routes move with the LMC.)"""
    routes = [base_lid_routes(get_run(sim_cache, fab, lmc, "rule"))
              for lmc in LMCS]
    for lmc, other in zip(LMCS[1:], routes[1:]):
        moved = sorted(k for k in routes[0] if routes[0][k] != other.get(k))
        assert not moved, "LMC %d moves %d base-LID routes, e.g. %s" % (
            lmc, len(moved), ["0x%016x -> 0x%016x" % k for k in moved[:5]])


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("lmc", MINHOP_LMCS)
@pytest.mark.parametrize("fab", MINHOP_FABRICS, ids=fabric_id)
def test_minhop(sim_cache, fab, lmc, mode):
    run = get_run(sim_cache, fab, lmc, mode, engine="minhop")
    assert run.info["engine_used"] == "minhop"
    check_routes(sim_cache, run, lmc)
    if mode == "off":
        stock = get_run(sim_cache, fab, lmc, "stock", engine="minhop")
        assert run.read_bytes("opensm-lfts.dump") == \
            stock.read_bytes("opensm-lfts.dump")
    if mode == "on":
        rows, bad = spread_violations(run, lmc)
        assert rows and bad == [], "\n".join(bad[:20])


def turn_leaves(run):
    """The leaves the spines' routes toward the other spines' LIDs go down
    to (down and up again: minhop's routes between two spines)."""
    topo, lfts = run.topo, run.lfts
    spines = {g for g, n in topo.nodes.items() if n.desc.startswith("spine")}
    out = set()
    for lid, (g, kind, _desc) in lfts.lid_info.items():
        if kind != "SW" or g not in spines:
            continue
        for s in spines - {g}:
            port = lfts.switches[s].lft.get(lid)
            out.add(topo.nodes[topo.links[(s, port)][0]].desc)
    return out


@pytest.mark.parametrize("lmc", MINHOP_LMCS)
def test_minhop_turns_spine_routes_at_one_leaf(sim_cache, lmc):
    """minhop routes one spine of a two-level tree to another down to a
    leaf and up again.  Where those routes turn at many leaves, every
    entry's channel dependencies close credit loops with the CAs' routes
    (spine1 waits at leaf1 for the link up to spine2, CA traffic from
    leaf1 over spine2 down to leaf2, spine2 waits at leaf2 for the link
    up to spine1, ...); stock minhop's have none (its least used port is
    the first, cabled to leaf-000 on every spine).  Port offsetting turns
    them all at one leaf too, the first switch of its tree."""
    fab = [f for f in MINHOP_FABRICS if fabric_id(f) == "ft2-8x4"]
    if not fab:
        pytest.skip("ft2-8x4 is not among the fabrics")
    ours = get_run(sim_cache, fab[0], lmc, "on", engine="minhop")
    stock = get_run(sim_cache, fab[0], lmc, "stock", engine="minhop")
    assert turn_leaves(stock) == {"leaf-000"}
    assert len(turn_leaves(ours)) == 1
    for run in (ours, stock):
        an = Analysis(run.topo, run.lfts, bisections=0,
                      credit_scope="every-entry")
        r = an.run(want_curves=False)
        assert r["valid"] and not r["credit_loop"], r["problems"][:3]


@pytest.mark.parametrize("fab,lmc,mode", REPEATS,
                         ids=["%s-lmc%d-%s" % (fabric_id(f), l, m)
                              for f, l, m in REPEATS])
def test_deterministic(sim_cache, fab, lmc, mode):
    first = get_run(sim_cache, fab, lmc, mode)
    again = get_run(sim_cache, fab, lmc, mode, rep=1)
    for name in ("opensm-lfts.dump", "ibroute.dump", "opensm-subnet.lst"):
        assert first.read_bytes(name) == again.read_bytes(name), name


def short_leaf_splits(topo, lfts):
    """For every leaf and every other leaf cabled to fewer of the spines
    than all: (how many of the other leaf's LIDs, every offset, the leaf
    sends up each spine cabled to both, leaf, other leaf)."""
    sw = {n.guid for n in topo.switches()}
    hosts = {}
    for (g, _p), (rg, _rp) in topo.links.items():
        if g in sw and rg not in sw:
            hosts.setdefault(g, []).append(rg)
    spines = sw - set(hosts)
    lids = lfts.port_lids()
    out = []
    for src in sorted(hosts):
        for dst in sorted(hosts):
            up = {rg for _p, rg, _rp in topo.neighbors(dst)} & spines
            live = [p for p, rg, _rp in topo.neighbors(src) if rg in up]
            if dst == src or len(up) == len(spines):
                continue
            ports = [lfts.switches[src].lft[lid] for h in hosts[dst]
                     for lid in lids[h]]
            out.append(([ports.count(p) for p in live],
                        topo.nodes[src].desc, topo.nodes[dst].desc))
    return out


def test_short_leaf_lids_split_evenly_over_live_spines(tmp_path):
    """docs/degraded.md's 12x6 seed 4 (12 leaves of 6 hosts, 6 spines, 5 %
    of the cables missing), LMC 1.  Toward a leaf cabled to some spines
    only, every leaf sends the 12 LIDs of its hosts up the spines cabled
    to both as evenly as their count allows (leaf-007, cabled to 4: 3
    each, or 4 each from the leaf that shares 3 of them).  Before, each
    host's two LIDs took an aligned pair of those spines and the fifth
    and sixth host the first two's pairs: 2, 2, 4 and 4 from every leaf.
    Port offsetting's own tables (stock_guard=off) show the rule; with
    the guard on, striped traffic in topology order gains by it (0.577
    before)."""
    if plugin_dir() is None:
        pytest.skip(PLUGIN_SKIP_REASON)
    net = str(tmp_path / "d12x6-s4.net")
    p = run_script(GEN_FABRIC, [
        "2level", "--leaves", "12", "--spines", "6", "--hosts-per-leaf",
        "6", "--random-guids", "--remove-links", "0.05", "--seed", "4",
        "-o", net])
    assert p.returncode == 0, p.stderr
    runs = {}
    for name, extra in (("raw", ["--plugin-option", "stock_guard=off"]),
                        ("guarded", [])):
        out = str(tmp_path / name)
        runs[name] = SimRun(net, "updn", 1, name, out, run_osm_sim([
            "--net", net, "--out", out, "--lmc", "1", "--quiet",
            "--no-ibroute", "--port-offsetting", "on", "--plugin-dir",
            plugin_dir()] + extra)).require_ok()
    splits = short_leaf_splits(runs["raw"].topo, runs["raw"].lfts)
    assert len(splits) == 3 * 11
    assert [s for s in splits if max(s[0]) - min(s[0]) > 1] == []
    to7 = sorted(s[0] for s in splits if s[2] == "leaf-007")
    assert to7 == [[3] * 4] * 10 + [[4] * 3]
    result = {}
    for name, run in runs.items():
        an = Analysis(run.topo, run.lfts, bisections=0)
        r = result[name] = an.run(want_curves=False)
        assert r["valid"] and not r["credit_loop"], r["problems"][:3]
    assert result["guarded"]["shift"]["spread"]["efficiency"] == \
        pytest.approx(0.657, abs=5e-4)


def test_routing_order_takes_leaves_by_switch_name(tmp_path):
    """3 leaves of 5 hosts under 4 spines, routed as generated (host names
    in the order of the leaves' names) and with the hosts of leaf-000 and
    leaf-002 trading names (h0000-h0004 now behind leaf-002).  The routing
    order takes the leaves by their switch names whatever their hosts are
    called, so port offsetting's tables (stock_guard=off shows the rule)
    are the same entry for entry.  By the first host name, as before, the
    renamed leaf-000 came last: its hosts' ranks 10-14 gave digits 2, 3,
    0, 1, 2 mod 4 slots, not 0, 1, 2, 3, 0.  lft-analyze's and
    rank-order's leaf order is the same: leaf-000's hosts first."""
    if plugin_dir() is None:
        pytest.skip(PLUGIN_SKIP_REASON)
    net = str(tmp_path / "t3x5.net")
    p = run_script(GEN_FABRIC, [
        "2level", "--leaves", "3", "--spines", "4", "--hosts-per-leaf", "5",
        "-o", net])
    assert p.returncode == 0, p.stderr
    swapped = str(tmp_path / "t3x5-swapped.net")
    names = {"h%04d" % i: "h%04d" % (i + 10) for i in range(5)}
    names.update({"h%04d" % (i + 10): "h%04d" % i for i in range(5)})
    rename_hosts(net, swapped, names)
    runs = {}
    for name, path in (("generated", net), ("swapped", swapped)):
        out = str(tmp_path / name)
        runs[name] = SimRun(path, "updn", 0, name, out, run_osm_sim([
            "--net", path, "--out", out, "--lmc", "0", "--quiet",
            "--no-ibroute", "--port-offsetting", "on", "--plugin-dir",
            plugin_dir(), "--plugin-option", "stock_guard=off"])
        ).require_ok()
    topo = runs["swapped"].topo
    first = topo.find("h0000")
    assert topo.links[(first.guid, 1)][0] == topo.find("leaf-002").guid
    gen, swp = (lft_map(runs[n].lfts) for n in ("generated", "swapped"))
    assert gen == swp
    an = Analysis(topo, runs["swapped"].lfts, bisections=0)
    leaves = [topo.nodes[an.sw_nodes[an.hosts[i].leaf].guid].desc
              for i in an.ranks]
    assert leaves == ["leaf-000"] * 5 + ["leaf-001"] * 5 + ["leaf-002"] * 5
    assert [an.hosts[i].desc for i in an.ranks[:5]] == \
        ["h%04d" % i for i in range(10, 15)]
