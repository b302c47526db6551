"""End-to-end routing of the real-fabric shapes of sim-topologies/ (made by
`gen-fabric cluster`, see sim-topologies/README.md): director chassis whose
line and fabric ASICs are separate switches, tapered and empty edges,
management HCAs on the core, pods, rails, SHARP aggregation nodes, doubled
and missing cables.

Each fabric is routed by scripts/osm-sim with stock updn and with the
plugin (port_offsetting=on), at LMC 0 and 2, with the updn roots the file
names, and judged by scripts/lft-analyze (topology order):

  * with offsetting every CA LID is reachable from every CA, management
    HCAs on the core and SHARP nodes included, and no CA pair that stock
    updn routes is lost;
  * neither routing has a credit loop;
  * offsetting's shift-alltoall efficiency (base LIDs, and spread over the
    2^LMC LIDs at LMC 2) is at least stock updn's.

Stock updn's own failures on these shapes (OpenSM's, which the plugin
must beat) are pinned exactly by test_stock_updn_baseline; the plugin's
reach pass fills them (test_offsetting_reaches_every_ca_lid).
"""

import json
import os
import re

import pytest

from conftest import (PLUGIN_SKIP_REASON, REPO, fabric_id, fabric_path,
                      plugin_dir, run_osm_sim, run_script,
                      unreachable_by_kind)

LFT_ANALYZE = os.path.join(REPO, "scripts", "lft-analyze")

FABRICS = ["dir-2level-taper.net", "dir-3level.net", "rails4.net",
           "sharp-ft2.net", "ft3-partial-cores.net"]
LMCS = [0, 2]
MODES = ["stock", "on"]
# (LMC, traffic): spread traffic only exists with more than one LID
TRAFFIC = [(0, "base"), (2, "base"), (2, "spread")]

# CA pairs (source CA x destination LID) stock updn cannot route, as
# lft-analyze counts them: pinned, the plugin has to beat these
STOCK_UNREACHABLE = {
    # mgmt HCAs on line ASICs of different chassis: a down-up turn
    "dir-2level-taper": {0: 8, 2: 32},
    # the SHARP nodes of the two fabric ASICs (the updn roots)
    "dir-3level": {0: 2, 2: 8},
    "rails4": {0: 0, 2: 0},
    # SHARP nodes of the spines, to each other and from the edges that
    # lost their cable to that spine
    "sharp-ft2": {0: 108, 2: 432},
    "ft3-partial-cores": {0: 0, 2: 0},
}

# What the plugin's reach pass logs on each shape at LMC 0: CA LIDs some
# switch had no updn entry for, and the entries it filled (none left)
REACH_LMC0 = {
    "dir-2level-taper": (4, 24),
    "dir-3level": (2, 2),
    "sharp-ft2": (45, 72),
}

def need_mode(mode):
    if mode != "stock" and plugin_dir() is None:
        pytest.skip(PLUGIN_SKIP_REASON)


@pytest.fixture(scope="module", autouse=True)
def prefetch(sim_cache):
    modes = MODES if plugin_dir() is not None else ["stock"]
    for lmc in LMCS:
        for fab in FABRICS:
            for mode in modes:
                sim_cache.submit(fab, lmc, mode, "updn")


def get_run(sim_cache, fab, lmc, mode):
    need_mode(mode)
    if not os.path.isfile(fabric_path(fab)):
        pytest.fail("fabric %s is missing" % fabric_path(fab))
    run = sim_cache.get(fab, lmc, mode, "updn").require_ok()
    assert run.info["engine_used"] == "updn"
    return run


def analyse_dir(out, path_sl=False, args=()):
    """lft-analyze --json of the tables osm-sim left in directory out
    (with path_sl, the lanes of its osmoffset-path-sl.dump; args: more
    lft-analyze arguments)."""
    out = str(out)
    extra = ["--path-sl", os.path.join(out, "osmoffset-path-sl.dump")] \
        if path_sl else []
    extra += list(args)
    proc = run_script(LFT_ANALYZE, [
        "--lfts", os.path.join(out, "opensm-lfts.dump"),
        "--topology", os.path.join(out, "opensm-subnet.lst"),
        "--bisections", "1", "--json"] + extra)
    if proc.returncode not in (0, 1):
        pytest.fail("lft-analyze failed on %s (exit %d): %s"
                    % (out, proc.returncode, proc.stderr.strip()))
    return json.loads(proc.stdout)


def analysis(sim_cache, fab, lmc, mode):
    """lft-analyze --json of one run (cached on the run)."""
    run = get_run(sim_cache, fab, lmc, mode)
    return run._get("lft-analyze", lambda: analyse_dir(run.out))


# ----------------------------------------------------------------- tests

@pytest.mark.parametrize("lmc", LMCS)
@pytest.mark.parametrize("fab", FABRICS, ids=fabric_id)
def test_stock_updn_baseline(sim_cache, fab, lmc):
    """What stock updn leaves unreachable on each shape (exact)."""
    res = analysis(sim_cache, fab, lmc, "stock")
    assert res["lmc"] == lmc
    assert res["unreachable_pairs"] == STOCK_UNREACHABLE[fabric_id(fab)][lmc]


@pytest.mark.parametrize("lmc", LMCS)
@pytest.mark.parametrize("fab", FABRICS, ids=fabric_id)
def test_offsetting_reaches_every_ca_lid(sim_cache, fab, lmc):
    """Where stock updn leaves CA LIDs unreachable (a down/up turn), the
    reach pass fills them; lft-analyze also finds no credit loop
    (test_no_credit_loop)."""
    res = analysis(sim_cache, fab, lmc, "on")
    assert res["lmc"] == lmc
    assert res["unreachable_pairs"] == 0, res["problems"][:10]
    assert res["valid"], res["problems"][:10]


@pytest.mark.parametrize("lmc", LMCS)
@pytest.mark.parametrize("fab", FABRICS, ids=fabric_id)
def test_offsetting_loses_no_stock_route(sim_cache, fab, lmc):
    on = analysis(sim_cache, fab, lmc, "on")
    stock = analysis(sim_cache, fab, lmc, "stock")
    assert on["unreachable_pairs"] <= stock["unreachable_pairs"]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("lmc", LMCS)
@pytest.mark.parametrize("fab", FABRICS, ids=fabric_id)
def test_no_credit_loop(sim_cache, fab, lmc, mode):
    res = analysis(sim_cache, fab, lmc, mode)
    assert not res["credit_loop"], res["credit_cycle"]


@pytest.mark.parametrize("fab,lmc,traffic", [
    pytest.param(f, lmc, traffic,
                 id="%s-lmc%d-%s" % (fabric_id(f), lmc, traffic))
    for f in FABRICS for lmc, traffic in TRAFFIC])
def test_shift_efficiency_not_below_stock(sim_cache, fab, lmc, traffic):
    on = analysis(sim_cache, fab, lmc, "on")["shift"][traffic]["efficiency"]
    stock = analysis(sim_cache, fab, lmc,
                     "stock")["shift"][traffic]["efficiency"]
    assert on >= stock - 1e-9, "offsetting %.4f < stock updn %.4f" % (
        on, stock)


@pytest.mark.parametrize("fab", FABRICS, ids=fabric_id)
def test_reach_pass_logs_what_it_filled(sim_cache, fab):
    run = get_run(sim_cache, fab, 0, "on")
    with open(run.path("osm.log")) as f:
        lines = [l for l in f if "osmoffset: reach:" in l]
    want = REACH_LMC0.get(fabric_id(fab))
    if want is None:
        assert lines == []
        return
    assert len(lines) == 1, lines
    assert ("reach: %d CA LIDs had no LFT entry on some switches; %d "
            "entries filled through a down/up turn, 0 left empty"
            % want) in lines[0]


def test_reach_all_off_leaves_updns_holes(tmp_path):
    """reach_all=off: the entries updn leaves empty stay empty, exactly
    stock updn's unreachable pairs."""
    need_mode("on")
    fab = "sharp-ft2.net"
    out = tmp_path / "run"
    proc = run_osm_sim(["--net", fabric_path(fab), "--out", str(out),
                        "--lmc", "0", "--quiet", "--port-offsetting", "on",
                        "--plugin-option", "reach_all=off",
                        "--plugin-dir", plugin_dir()])
    assert proc.returncode == 0, proc.stderr
    with open(str(out / "osm.log")) as f:
        assert "osmoffset: reach:" not in f.read()
    res = analyse_dir(out)
    assert res["unreachable_pairs"] == STOCK_UNREACHABLE["sharp-ft2"][0]


@pytest.mark.parametrize("fab", [f for f in FABRICS
                                 if fabric_id(f) in ("dir-3level",
                                                     "sharp-ft2")],
                         ids=fabric_id)
def test_sharp_fabric_routes_as_updn_without_root_list(fab, tmp_path):
    """Left to find its roots itself, updn with the plugin must route the
    SHARP fabrics as updn (the aggregation nodes are CAs on every switch,
    which throws OpenSM's root guess off: on dir-3level stock updn finds
    no root and OpenSM falls back to minhop; the plugin leaves them out)."""
    need_mode("on")
    out = tmp_path / "run"
    proc = run_osm_sim(["--net", fabric_path(fab), "--out", str(out),
                        "--roots", "none", "--allow-fallback", "--quiet",
                        "--port-offsetting", "on",
                        "--plugin-dir", plugin_dir()])
    assert proc.returncode == 0, proc.stderr
    with open(str(out / "osm-sim.json")) as f:
        info = json.load(f)
    assert info["engine_used"] == "updn"


@pytest.mark.parametrize("lmc", LMCS)
def test_management_hcas_on_line_asics_over_one_edge_route_as_updn(tmp_path,
                                                                   lmc):
    """Shape 29 of docs/shapes.md: two small director chassis (four line
    and three fabric ASICs each), four edges with four hosts and one
    cable to a line ASIC of each director (one edge empty), a management
    HCA on two line ASICs of each, SHARP nodes.  A line ASIC has as many
    cables to an edge with hosts as hosts of its own, so it used to be
    taken for a leaf: updn's detection found no root even without the
    management HCAs, and the fabric went to minhop, whose routes close a
    credit loop at LMC 0.  Taken for a spine (oo_rank_leaves()), its
    HCAs are left out of the detection, the fabric ASICs are the roots
    and the plugin routes it as updn: every CA reaches every LID, no
    credit loop, and no figure below stock's."""
    need_mode("on")
    net = str(tmp_path / "shape-29.net")
    proc = run_script(os.path.join(REPO, "sim-topologies", "gen-fabric"), [
        "cluster", "--radix", "64", "--edges", "4", "--hosts-per-edge", "4",
        "--uplinks", "2", "--rails", "4", "--directors", "2", "--lines",
        "4", "--fabrics", "3", "--empty-edges", "1", "--core-hosts", "4",
        "--sharp", "--seed", "510", "--random-guids", "-o", net])
    assert proc.returncode == 0, proc.stderr
    res, info = {}, {}
    for mode in MODES:
        out = tmp_path / mode
        args = ["--net", net, "--out", str(out), "--lmc", str(lmc),
                "--quiet", "--no-ibroute", "--roots", "none",
                "--allow-fallback"]
        args += ["--stock"] if mode == "stock" else \
            ["--port-offsetting", "on", "--plugin-dir", plugin_dir()]
        proc = run_osm_sim(args)
        assert proc.returncode == 0, proc.stderr
        with open(str(out / "osm-sim.json")) as f:
            info[mode] = json.load(f)
        res[mode] = analyse_dir(out)
    assert info["stock"]["engine_used"] == "minhop"
    assert info["on"]["engine_used"] == "updn"
    assert res["on"]["valid"]
    assert res["on"]["unreachable_pairs"] == 0
    assert not res["on"]["credit_loop"], res["on"]["credit_cycle"]
    if lmc == 0:
        assert res["stock"]["credit_loop"]
    for traffic in ("base", "spread"):
        if res["stock"]["shift"].get(traffic):
            assert (round(res["on"]["shift"][traffic]["efficiency"], 3) >=
                    round(res["stock"]["shift"][traffic]["efficiency"], 3))
    with open(str(tmp_path / "on" / "osm.log"), errors="replace") as f:
        log = f.read()
    assert "without the 4 on switches that are no leaves" in log


@pytest.mark.parametrize("roots", ["auto", "none"])
@pytest.mark.parametrize("lmc", LMCS)
def test_management_hcas_on_two_cores_reach_each_other(tmp_path, lmc,
                                                       roots):
    """gen-fabric's three-level tree (two pods of four edges and four pod
    spines, eight cores) with a management HCA on each of two cores.
    Stock updn cannot route the two HCAs to each other (a down/up turn
    below the cores: 2 CA/LID pairs per LID offset).  The plugin takes the
    cores for cores, not leaves (build_tree: 3 levels, the edges' 4 up
    slots), and its reach pass routes the pair through one pod spine
    under both: every CA reaches every LID, no credit loop.  With the
    roots left to updn's detection (as on a dump), the cores with an HCA
    stay roots like the others (they are no leaves)."""
    need_mode("on")
    net = str(tmp_path / "core-hosts.net")
    proc = run_script(os.path.join(REPO, "sim-topologies", "gen-fabric"), [
        "cluster", "--pods", "2", "--pod-spines", "4", "--edges", "8",
        "--hosts-per-edge", "8", "--uplinks", "4", "--spines", "8",
        "--core-hosts", "2", "--random-guids", "-o", net])
    assert proc.returncode == 0, proc.stderr
    res = {}
    for mode in MODES:
        out = tmp_path / mode
        args = ["--net", net, "--out", str(out), "--lmc", str(lmc),
                "--quiet", "--no-ibroute", "--roots", roots]
        args += ["--stock"] if mode == "stock" else \
            ["--port-offsetting", "on", "--plugin-dir", plugin_dir(),
             "--", "-D", "0x47"]
        proc = run_osm_sim(args)
        assert proc.returncode == 0, proc.stderr
        res[mode] = analyse_dir(out)
    assert res["stock"]["unreachable_pairs"] == 2 << lmc
    assert res["on"]["unreachable_pairs"] == 0, res["on"]["problems"][:10]
    assert res["on"]["valid"]
    assert not res["on"]["credit_loop"], res["on"]["credit_cycle"]
    with open(str(tmp_path / "on" / "osm.log"), errors="replace") as f:
        log = f.read()
    assert "24 switches in 3 levels; up slots per level: 4 4 " in log, \
        [ln for ln in log.splitlines() if "build_tree" in ln]
    assert "root switches updn's detection found are leaves" not in log


@pytest.mark.parametrize("lmc", [0, 1, 2])
def test_doubled_three_levels_are_contention_free(sim_cache, lmc):
    """ft3-doubled: a full three-level tree with every cable doubled.  A
    pod spine receives from one edge the destinations whose edge slot
    differs only in its lane: the digit above counts parents, not slots,
    so they leave over different uplinks, and a core picks the pod spine
    by the edge-level slot and the link by the pod-level lane.  Shift
    alltoall in leaf order is contention-free for base LIDs and striped
    traffic (stock updn: 0.476 / 0.573 at LMC 2; before this rule 0.565 /
    0.827)."""
    res = analysis(sim_cache, "ft3-doubled.net", lmc, "on")
    assert res["valid"] and not res["credit_loop"]
    assert res["shift"]["base"]["efficiency"] == 1.0, res["shift"]
    if lmc:
        assert res["shift"]["spread"]["efficiency"] == 1.0, res["shift"]


@pytest.mark.parametrize("lmc", LMCS)
def test_partial_cores_come_down_the_destinations_own_path(sim_cache, lmc):
    """ft3-partial-cores: each core is cabled to half the spines of each
    pod.  Going down into a pod, a core takes the spine the destination's
    own up path passes through (its leaf's slot), so the flows toward a
    leaf from other pods spread over its down links as those from its own
    pod do.  The stock guard keeps these tables (stock updn 0.245 base;
    before this rule 0.309 without the guard, 0.263 with it)."""
    res = analysis(sim_cache, "ft3-partial-cores.net", lmc, "on")
    assert res["valid"] and not res["credit_loop"]
    assert res["shift"]["base"]["efficiency"] >= 0.38, res["shift"]
    if lmc:
        assert res["shift"]["spread"]["efficiency"] >= 0.46, res["shift"]
    run = get_run(sim_cache, "ft3-partial-cores.net", lmc, "on")
    with open(run.path("osm.log")) as f:
        assert "LFTs score at least as well as the stock ones" in f.read()


def edge_uplinks(topo):
    """Per edge switch of a gen-fabric cluster: its hosts' base LIDs and
    the spine behind each of its ports that leads to one."""
    kind = {g: ("edge" if "edge" in n.desc else
                "spine" if "spine" in n.desc else None)
            for g, n in topo.nodes.items() if n.kind == "SW"}
    edges = {g: {"hosts": [], "up": {}} for g, k in kind.items()
             if k == "edge"}
    for (g, port), (rg, _rport) in topo.links.items():
        if g not in edges:
            continue
        if kind.get(rg) == "spine":
            edges[g]["up"][port] = rg
        elif rg in topo.nodes and topo.nodes[rg].kind == "CA" and \
                "Aggregation Node" not in topo.nodes[rg].desc:
            edges[g]["hosts"].append(topo.nodes[rg].lid)
    return edges, [g for g, k in kind.items() if k == "spine"]


@pytest.mark.parametrize("lmc", LMCS)
def test_a_missing_lane_takes_the_same_spine(sim_cache, lmc):
    """sharp-ft2: edges of 12 hosts with 6 spines, a quarter of the cables
    doubled (the level's slots: 2 lanes of 6 spines) and a few missing.
    An edge without the second cable to a spine sends the base LIDs whose
    slot is that lane over the first cable to the same spine, as the
    edges with both cables do: every edge cabled to all six spines sends
    a host's base LID (on such an edge) to one spine, which then brings it
    down the destination's own cable.  Before, each edge detoured those
    LIDs to a spine of its own (the stock guard's half job 2, base LIDs:
    stock updn 0.318; before this rule 0.309, now 0.397).  polish=off:
    the polish then moves some of these entries to another spine where
    that lowers a round's busiest link."""
    run = get_run(sim_cache, "sharp-ft2.net", lmc, "nopolish")
    edges, spines = edge_uplinks(run.topo)
    full = [g for g, e in edges.items() if set(e["up"].values()) ==
            set(spines)]
    assert len(full) >= 6, "too few edges cabled to every spine"
    lfts = run.lfts.switches
    checked = 0
    for dest in full:
        for lid in edges[dest]["hosts"]:
            picked = {edges[src]["up"].get(lfts[src].lft.get(lid))
                      for src in full if src != dest}
            assert len(picked) == 1 and None not in picked, \
                "base LID %d leaves the full edges toward spines %r" % (
                    lid, picked)
            checked += 1
    assert checked >= 60


def switch_links(topo):
    """Per switch GUID: the switch GUID behind each of its ports that
    leads to one, and the base LIDs of its CAs."""
    up = {g: {} for g, n in topo.nodes.items() if n.kind == "SW"}
    cas = {g: [] for g in up}
    for (g, port), (rg, _rport) in topo.links.items():
        if g not in up:
            continue
        if rg in up:
            up[g][port] = rg
        elif rg in topo.nodes and topo.nodes[rg].kind == "CA":
            cas[g].append(topo.nodes[rg].lid)
    return up, cas


def cores_off_the_peers_parent(topo, lfts):
    """Count, over every CA base LID and every core (a switch neither the
    CA's leaf nor one of its parents) that sends the LID down to a parent
    of its leaf: (cores that go to another parent although they are
    cabled to the one most other leaves send the LID up to, those that go
    to that one)."""
    links, cas = switch_links(topo)
    leaves = {g for g in links if cas[g]}
    off = home = 0
    for leaf in leaves:
        parents = set(links[leaf].values())
        for lid in cas[leaf]:
            votes = {}
            for src in leaves - {leaf}:
                to = links[src].get(lfts[src].lft.get(lid))
                if to in parents:
                    votes[to] = votes.get(to, 0) + 1
            if not votes:
                continue
            want = max(sorted(votes), key=lambda g: votes[g])
            for core, ports in links.items():
                if core in leaves or core in parents or \
                        want not in ports.values():
                    continue
                to = ports.get(lfts[core].lft.get(lid))
                if to in parents:
                    off += to != want
                    home += to == want
    return off, home


def test_cores_come_down_where_the_pods_leaves_detour(tmp_path):
    """A small SuperPOD: two pods of four edges and four pod spines, each
    core cabled to two spines of each pod, 90 % of the cables doubled and
    5 % missing (gen-fabric seed 8).  Where a host's own slot at its edge
    has no link (a spine missing there), the other edges of its pod detour
    its base LID to one spine, and a core coming down from another pod now
    goes to that spine too (peers_parent()), not to whichever of its
    spines the digits pick: the host's flows then share its edge's down
    links as its pod's own do.  Leaf-order shift alltoall becomes
    contention-free (before: 8 cores off that spine, 0.661; on the
    SuperPOD analog the quarter job went 0.375 -> 0.454).  polish=off:
    the polish then moves edge entries to even the route counts, and the
    edges of a pod no longer agree on one spine for every LID."""
    need_mode("on")
    net = str(tmp_path / "superpod-small.net")
    proc = run_script(os.path.join(REPO, "sim-topologies", "gen-fabric"), [
        "cluster", "--radix", "16", "--rails", "2", "--edges", "8",
        "--hosts-per-edge", "4", "--uplinks", "4", "--pods", "2",
        "--pod-spines", "4", "--pod-uplinks", "2", "--spines", "4",
        "--double-links", "0.9", "--remove-links", "0.05", "--seed", "8",
        "--random-guids", "-o", net])
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "on"
    proc = run_osm_sim(["--net", net, "--out", str(out), "--quiet",
                        "--no-ibroute", "--roots", "none",
                        "--port-offsetting", "on",
                        "--plugin-option", "polish=off",
                        "--plugin-dir", plugin_dir()])
    assert proc.returncode == 0, proc.stderr
    from osmoffset.fabric import load_lfts, load_topology
    topo = load_topology(str(out / "opensm-subnet.lst"))
    lfts = load_lfts(str(out / "opensm-lfts.dump")).switches
    off, home = cores_off_the_peers_parent(topo, lfts)
    assert (off, home) == (0, 64)
    res = analyse_dir(out)
    assert res["valid"] and not res["credit_loop"]
    assert res["shift"]["base"]["efficiency"] == 1.0, res["shift"]


# The guard's rank orders as they were when the scenarios below were
# found: every CA but the SHARP nodes ranks, the management HCAs on spines
# and cores among them, by name ("mgmt01" before "node001").  Their
# tables and the guard's paths through them are what those tests pin
# down; test_jobs_on_the_leaves_keep_every_lid_routed() routes the same
# shapes by default, where a job runs on the leaves' hosts only.
SPINE_CAS = "spine_cas=on"


DIR_SHARP = ["cluster", "--radix", "40", "--directors", "2", "--lines", "4",
             "--fabrics", "2", "--edges", "10", "--empty-edges", "2",
             "--hosts-per-edge", "12", "--uplinks", "6", "--core-hosts", "4",
             "--sharp", "--link", "4xHDR"]


def dir_sharp_net(tmp_path):
    """dir-2level-taper's shape with a SHARP node on every ASIC."""
    net = str(tmp_path / "dir-sharp.net")
    proc = run_script(os.path.join(REPO, "sim-topologies", "gen-fabric"),
                      DIR_SHARP + ["--random-guids", "-o", net])
    assert proc.returncode == 0, proc.stderr
    return net


def route_dir_sharp(net, out, lmc, options=(), osm_args=(), rc=0):
    args = ["--net", net, "--out", str(out), "--lmc", str(lmc), "--quiet",
            "--no-ibroute", "--roots", "none", "--port-offsetting", "on",
            "--plugin-dir", plugin_dir()]
    for o in options:
        args += ["--plugin-option", o]
    proc = run_osm_sim(args + (["--"] + list(osm_args) if osm_args else []))
    assert proc.returncode == rc, proc.stderr
    with open(os.path.join(str(out), "osm.log"), errors="replace") as f:
        return f.read()


def test_reach_pass_fills_the_hcas_holes_before_the_sharp_nodes(tmp_path):
    """dir-2level-taper's shape with a SHARP node on every ASIC, routed
    with the roots left to updn (as on a dump).  The fabric ASICs of both
    chassis are roots, so a management HCA on one chassis' line ASIC
    reaches the other chassis only down to an edge and up again, and so
    do the SHARP nodes; not every such turn fits in one loop-free set.
    The reach pass fills the holes that the HCAs' traffic runs into first,
    and each destination's LIDs HCAs first, so that the management node
    that runs the SM or the SHARP manager loses the fewest pairs: with
    every hole at stake in one pass, the management HCAs lost 12 pairs (2
    to each other, 10 to SHARP nodes) and the SHARP nodes 50; with the
    HCAs' holes first, 10 (1 to each other) and 55; with the next best
    turn switches tried for an HCA's LID where the best closes a loop
    (up to 8), 8 (none to each other) and 58; with the retry round for
    the SHARP nodes' holes (the next best turn switches once every LID
    had its best), 8 and 39: every SHARP node reaches every management
    HCA (6 pairs did not); with each hole of a LID on its own in that
    round where no turn switch takes them all, 0 and 1.  Every compute
    host reaches every LID either way.  The stock guard is off so that the
    pass works
    on port offsetting's own tables (with it on the guard keeps them too,
    see test_guard_keeps_the_management_hcas_routes)."""
    need_mode("on")
    out = tmp_path / "on"
    log = route_dir_sharp(dir_sharp_net(tmp_path), out, 0,
                          ["stock_guard=off"])
    assert unreachable_by_kind(out) == {("sharp", "sharp"): 1}
    res = analyse_dir(out)
    assert res["unreachable_pairs"] == 1
    assert not res["credit_loop"], res["credit_cycle"]
    # the log names the lanes that would take the turn left out
    assert re.search(r"osmoffset: reach: \d+ CA LIDs had no LFT entry on "
                     r"some switches; \d+ entries filled through a "
                     r"down/up turn, \d+ left empty \([1-9]\d* of them "
                     r"where traffic from a CA runs in\) \(all turns at "
                     r"once would have closed a credit loop; only "
                     r"loop-free ones kept; with reach_vls=2 or more and "
                     r"OpenSM's QoS on, the reach pass may take those "
                     r"turns on a lane above VL0\) \(", log), log


def test_reach_pass_names_no_lanes_where_reach_vls_asked_for_them(
        tmp_path):
    """The same, with reach_vls=4 but OpenSM's QoS off: ERR 9F0B says why
    the pass keeps to VL0, so its result line does not name the lanes
    again; the LFTs are those of the defaults."""
    need_mode("on")
    net = dir_sharp_net(tmp_path)
    log = route_dir_sharp(net, tmp_path / "noqos", 0,
                          ["stock_guard=off", "reach_vls=4"], rc=1)
    assert "ERR 9F0B: reach_vls=4 needs OpenSM's QoS" in log
    assert "only loop-free ones kept) (" in log
    assert "reach_vls=2 or more" not in log
    assert unreachable_by_kind(tmp_path / "noqos") == {("sharp", "sharp"): 1}


def test_guard_keeps_the_management_hcas_routes(tmp_path):
    """The same director fabric with the stock guard on (the default).
    Scored as the reach pass leaves them, port offsetting's tables lost
    one flow between the management HCAs (the best turn switch for its
    LID closed a loop on VL0), stock updn's none, and the guard took a
    mix: the two job blocks that lost took the stock routes (72 pairs
    left, leaf order 0.273).  The pass now tries the next best turn
    switches for an HCA's LID, ours lose no HCA's flow and the guard
    keeps them: every management HCA reaches every other, 66 pairs left
    (none between HCAs), leaf order 0.335 against the stock tables'
    0.234.  With the reach pass's retry round, 47 pairs left, none from
    a SHARP node to an HCA; with each hole on its own in that round where
    no turn switch takes them all, none."""
    need_mode("on")
    net = dir_sharp_net(tmp_path)
    out = tmp_path / "guard"
    log = route_dir_sharp(net, out, 0, [SPINE_CAS])
    assert "port offsetting's LFTs score at least as well as the stock " \
        "ones in all 8 cells; they stay" in log
    assert unreachable_by_kind(out) == {}
    res = analyse_dir(out, args=["--spine-cas"])
    # the stock tables' figure the guard logged (stock updn itself finds
    # no root here and falls back to minhop)
    assert leaf_base(res) > 0.2341
    assert not res["credit_loop"], res["credit_cycle"]


@pytest.mark.parametrize("lmc,routes,lanes", [(2, 27, 2)])
def test_reach_vls_reaches_every_lid_on_lanes_without_a_loop(tmp_path, lmc,
                                                              routes, lanes):
    """The same director fabric with reach_vls=4 and OpenSM's QoS on: the
    holes no loop-free set on VL0 takes are filled all the same, and each
    route only those fills deliver gets SL 1 (VL1) in
    osmoffset-path-sl.dump.  Every CA then
    reaches every LID; lft-analyze finds no credit loop on either lane
    when it puts each route on the lane of its SL, and finds one when it
    puts them all on VL0, so the lanes above it are what keep it
    loop-free.  At LMC 2 the stock tables stay (ours, polished, lose the
    random orders with striped traffic on the shuffles the polish does
    not see), and their fills take one lane above VL0: the dump says
    'lanes 2' (246 routes before the retry round filled each hole on its
    own where no turn switch takes them all, 57 after it, 52 since the
    polish parts the routes a random order's round may run at once, 27
    since the pass's last step gives holes an entry by port on VL0
    first).  At LMC 0 VL0 now takes every hole (39 routes went on VL1
    before; see test_guard_keeps_the_management_hcas_routes)."""
    need_mode("on")
    net = dir_sharp_net(tmp_path)
    out = tmp_path / "vls"
    log = route_dir_sharp(net, out, lmc, ["reach_vls=4", SPINE_CAS], ["-Q"])
    assert "ERR 9F" not in log
    assert f"osmoffset: reach: {routes} routes (switch, LID) put on " \
        f"virtual lanes 1-{lanes - 1}" in log
    assert unreachable_by_kind(out) == {}
    with open(out / "osmoffset-path-sl.dump") as f:
        dump = f.read()
    assert f"# lanes {lanes}\n" in dump
    assert len([x for x in dump.splitlines() if x.startswith("0x")]) == \
        routes
    res = analyse_dir(out, path_sl=True, args=["--spine-cas"])
    assert res["unreachable_pairs"] == 0
    assert res["lanes"] == lanes and res["lane_routes"] == routes
    assert not res["credit_loop"], res["credit_cycle"]
    one_lane = analyse_dir(out, args=["--spine-cas"])
    assert one_lane["credit_loop"]


def test_reach_vls_without_qos_keeps_to_vl0(tmp_path):
    """reach_vls=4 without OpenSM's QoS: the SL2VL tables the lanes need
    would never be set, so the reach pass says so (ERR 9F0B) and keeps to
    VL0: the LFTs are byte for byte those of the default, with no route
    above VL0.  osm-sim fails the run on the plugin's error (exit 1)."""
    need_mode("on")
    net = dir_sharp_net(tmp_path)
    log = route_dir_sharp(net, tmp_path / "noqos", 0, ["reach_vls=4"], rc=1)
    assert "ERR 9F0B: reach_vls=4 needs OpenSM's QoS" in log
    route_dir_sharp(net, tmp_path / "default", 0)
    with open(tmp_path / "noqos" / "opensm-lfts.dump") as a, \
            open(tmp_path / "default" / "opensm-lfts.dump") as b:
        assert a.read() == b.read()
    with open(tmp_path / "noqos" / "osmoffset-path-sl.dump") as f:
        lines = f.read().splitlines()
    assert "# lanes 1" in lines
    assert not [x for x in lines if x.startswith("0x")]


def test_reach_vls_without_qos_leaves_no_lid_out_of_reach(tmp_path):
    """var-dir-mgmt-taper3 at LMC 2 with reach_vls=4 but OpenSM's QoS off:
    the reach pass keeps to VL0 (ERR 9F0B), and the stock guard now
    weighs what that pass leaves, as with the defaults.  Before, it took
    reach_vls alone to mean lanes above VL0 and kept the tables that beat
    stock in every cell (the stock ones polished, with our further LID
    offsets), whose management HCAs' LIDs the pass cannot reach loop-free
    on VL0: 12 host/LID pairs were left without a route, where the
    defaults leave none.  Now the LFTs are byte for byte the defaults'."""
    need_mode("on")
    name, gen = "var-dir-mgmt-taper3", variant_args("var-dir-mgmt-taper3")
    for run in ("noqos", "default"):
        (tmp_path / run).mkdir()
    log, noqos = route_generated(tmp_path / "noqos", name, gen, "on", 2,
                                 ["reach_vls=4"], rcs=(1,))
    assert "ERR 9F0B: reach_vls=4 needs OpenSM's QoS" in log
    assert noqos["unreachable_pairs"] == 0
    assert not noqos["credit_loop"], noqos["credit_cycle"]
    _log, default = route_generated(tmp_path / "default", name, gen, "on",
                                    2)
    dumps = []
    for run in ("noqos", "default"):
        with open(tmp_path / run / ("%s-on-lmc2" % name) /
                  "opensm-lfts.dump") as f:
            dumps.append(f.read())
    assert dumps[0] == dumps[1]
    assert default["unreachable_pairs"] == 0


def route_generated(tmp_path, name, gen_args, mode, lmc=0, options=(),
                    rcs=(0,), spine_cas=False, qos=False):
    """gen-fabric GEN_ARGS into NAME.net, routed by osm-sim at LMC lmc
    with the roots left to updn (as on a dump): stock updn (mode 'stock')
    or with the plugin ('on', with the plugin options given); osm-sim
    must exit with one of rcs (3: OpenSM fell back to minhop).  With
    spine_cas, the CAs on spines or cores rank too, in the guard's orders
    (SPINE_CAS) and lft-analyze's.  With qos, OpenSM's QoS is on and the
    analysis takes the lanes of osmoffset-path-sl.dump.  Returns
    (osm.log, lft-analyze --json)."""
    net = tmp_path / (name + ".net")
    if not net.exists():
        proc = run_script(os.path.join(REPO, "sim-topologies",
                                       "gen-fabric"),
                          gen_args + ["--random-guids", "-o", str(net)])
        assert proc.returncode == 0, proc.stderr
    out = tmp_path / ("%s-%s-lmc%d" % (name, mode, lmc))
    args = ["--net", str(net), "--out", str(out), "--quiet", "--no-ibroute",
            "--roots", "none", "--lmc", str(lmc)]
    args += ["--stock"] if mode == "stock" else \
        ["--port-offsetting", "on", "--plugin-dir", plugin_dir()]
    if spine_cas and mode != "stock":
        options = list(options) + [SPINE_CAS]
    for opt in options:
        args += ["--plugin-option", opt]
    if qos:
        args += ["--qos"]
    proc = run_osm_sim(args)
    assert proc.returncode in rcs, proc.stderr
    with open(out / "osm.log", errors="replace") as f:
        log = f.read()
    return log, analyse_dir(out, path_sl=qos,
                            args=["--spine-cas"] if spine_cas else [])


def leaf_base(res):
    return res["shift"]["base"]["efficiency"]


def variant_args(name):
    """gen-fabric's arguments of a bench-fabrics variant shape."""
    from osmoffset.fabricsuite import VARIANTS
    return [a for n, _what, a in VARIANTS if n == name][0]


def route_variant(tmp_path, name, lmc=0, options=(), spine_cas=False):
    """A bench-fabrics variant routed with the plugin (and options) and by
    stock updn, the roots left to updn: (osm.log, ours, stock) as
    route_generated() gives them."""
    gen = variant_args(name)
    log, ours = route_generated(tmp_path, name, gen, "on", lmc, options,
                                spine_cas=spine_cas)
    _log, stock = route_generated(tmp_path, name, gen, "stock", lmc,
                                  spine_cas=spine_cas)
    return log, ours, stock


def assert_routed_above_stock(ours, stock, factor):
    """Every host/LID pair routed, no credit loop, and leaf order more
    than factor x stock updn's."""
    assert ours["valid"] and ours["unreachable_pairs"] == 0
    assert not ours["credit_loop"], ours["credit_cycle"]
    assert leaf_base(ours) > factor * leaf_base(stock), \
        (leaf_base(ours), leaf_base(stock))


def assert_variant_stays(log, what_new, what_old, cells=19):
    """The stock guard's log (19 cells: LMC 2; 8: LMC 0): port
    offsetting's LFTs what_new scored better than those what_old, and
    went on to beat stock in all its cells."""
    assert "port offsetting's LFTs %s score better than %s" \
        % (what_new, what_old) in log
    assert "port offsetting's LFTs score at least as well as the stock " \
        "ones in all %d cells; they stay" % cells in log


def test_top_switches_updn_left_out_join_the_roots(tmp_path):
    """var-kary-links: a 4-ary 3-tree that lost 6 % of its cables:
    updn's detection finds 3 of the 16 top switches.  The others, at the
    same level, cabled to no root, most of their cables down, join them
    (before: no top joined; 3 middle switches over leaves did, up/down
    over that mix left 1,920 host flows without a route, and the stock
    guard fell back to stock updn, 0.217 in leaf order).  Over the 16
    roots the guard keeps ours: 0.397 (dfsssp 0.356; var-kary-links in
    docs/fabrics.md), every pair routed, no credit loop."""
    need_mode("on")
    gen = variant_args("var-kary-links")
    log, ours = route_generated(tmp_path, "kary-links", gen, "on")
    assert "13 switches beside updn's roots (at their level" in log
    assert "join them as roots: 16 roots" in log
    assert "port offsetting's LFTs score at least as well as the stock " \
        "ones in all 8 cells; they stay" in log
    _log, stock = route_generated(tmp_path, "kary-links", gen, "stock")
    assert ours["valid"] and stock["valid"]
    assert not ours["credit_loop"], ours["credit_cycle"]
    assert leaf_base(ours) > 1.5 * leaf_base(stock), \
        (leaf_base(ours), leaf_base(stock))


def test_roots_cabled_under_roots_close_no_credit_loop(tmp_path):
    """Two directors (2 line and 2 fabric ASICs each) joined only through
    their edges, 3 of the 7 edges without hosts, a SHARP node on every
    ASIC.  updn's detection takes 11 switches for roots: the line ASICs
    (two hops from every host), the fabric ASICs and the empty edges
    (three).  It takes a cable between two roots as going up both ways,
    and at LMC 2 the routes of SHARP nodes from one director to the other
    over the empty edges close a credit loop, stock updn's tables and
    ours alike (found by a sweep of random cluster shapes).  The line
    ASICs, cabled to roots further from the leaves, are now no roots:
    ranked under the fabric ASICs and empty edges, the tables have no
    credit loop, and every host and management HCA reaches every CA LID.
    SHARP nodes on the ASICs of one director stayed out of reach of some
    CAs until the reach pass's retry round filled each hole of a LID on
    its own where no turn switch takes them all: now every CA reaches
    every CA LID."""
    need_mode("on")
    gen = ["cluster", "--radix", "64", "--edges", "4", "--hosts-per-edge",
           "18", "--uplinks", "9", "--directors", "2", "--lines", "2",
           "--fabrics", "2", "--empty-edges", "3", "--sharp", "--seed",
           "223"]
    log, ours = route_generated(tmp_path, "dir-joined", gen, "on", 2)
    assert "4 root switches are cabled to roots further from the leaves; " \
        "left out, ranked under those: 7 roots" in log
    assert not ours["credit_loop"], ours["credit_cycle"]
    assert unreachable_by_kind(tmp_path / "dir-joined-on-lmc2") == {}
    _log, stock = route_generated(tmp_path, "dir-joined", gen, "stock", 2)
    assert stock["credit_loop"]
    assert leaf_base(ours) > 1.2 * leaf_base(stock), \
        (leaf_base(ours), leaf_base(stock))


def test_a_dead_end_root_leaves_the_top_switch_it_hangs_off_a_root(tmp_path):
    """Four pods of one edge under 6 pod spines each, 4 top spines, 2
    management HCAs on them, most cables doubled and 10 % missing: pod
    spine 0 of pod 0 lost its only edge cable and hangs off spine-00 by
    two cables.  Every host is one distance from it, so updn's detection
    takes it for a root beside the 4 spines.  It is further from the
    leaves than spine-00, but it is a dead end, no top over it: spine-00
    stays a root (the rule for roots under roots left it out, ranked under
    the dead end, and leaf order fell to 0.346 against stock's 0.452;
    found by a sweep of random cluster shapes).  Every pair routed (stock
    leaves the two HCAs without a route to each other), no credit loop,
    above stock in leaf order."""
    need_mode("on")
    gen = ["cluster", "--radix", "40", "--edges", "4", "--hosts-per-edge",
           "12", "--uplinks", "6", "--pods", "4", "--pod-spines", "6",
           "--spines", "4", "--core-hosts", "2", "--double-links", "0.9",
           "--remove-links", "0.1", "--seed", "228"]
    log, ours = route_generated(tmp_path, "dead-end", gen, "on")
    assert "cabled to roots further from the leaves" not in log
    _log, stock = route_generated(tmp_path, "dead-end", gen, "stock")
    with open(tmp_path / "dead-end-on-lmc0" / "opensm-updn-roots.dump") as f:
        roots = f.read().split()
    with open(tmp_path / "dead-end-stock-lmc0" /
              "opensm-updn-roots.dump") as f:
        assert sorted(roots) == sorted(f.read().split())
    assert len(roots) == 5
    assert stock["unreachable_pairs"] == 2
    assert_routed_above_stock(ours, stock, 1.1)


def test_roots_found_without_the_spines_hcas_where_updn_finds_none(tmp_path):
    """Four rail edges of 8 hosts under 6 spines, 3 management HCAs on the
    spines, 5 % of the cables missing.  Every spine sees the other
    spines' HCAs three hops away, 2 of 35 end ports, more than updn's 5 %:
    its detection finds no root, and stock OpenSM hands the fabric to
    minhop, whose tables close a credit loop (found by a sweep of random
    cluster shapes; port offsetting on minhop's routes closed one too).
    Without the HCAs of switches that are no leaves the detection finds 4
    roots, the 2 spines that lost a cable join them, and updn routes:
    every pair, no credit loop, above stock in leaf order."""
    need_mode("on")
    gen = ["cluster", "--radix", "36", "--edges", "4", "--hosts-per-edge",
           "8", "--uplinks", "8", "--rails", "4", "--spines", "6",
           "--core-hosts", "3", "--remove-links", "0.05", "--seed", "479"]
    log, ours = route_generated(tmp_path, "mgmt-spines", gen, "on")
    assert "no root switch at the min-hop distances of all 35 end ports; " \
        "without the 3 on switches that are no leaves (management HCAs " \
        "on spines or cores), 4" in log
    assert "updn tables configured on all switches" in log
    out = tmp_path / "mgmt-spines-stock"
    proc = run_osm_sim(["--net", str(tmp_path / "mgmt-spines.net"),
                        "--out", str(out), "--quiet", "--no-ibroute",
                        "--roots", "none", "--stock", "--allow-fallback"])
    assert proc.returncode == 0, proc.stderr
    stock = analyse_dir(out)
    with open(out / "osm.log", errors="replace") as f:
        assert "minhop tables configured on all switches" in f.read()
    assert stock["credit_loop"]
    assert_routed_above_stock(ours, stock, 1.2)


def write_ring(path, n=6, hosts=4):
    """An ibsim net file of n switches in a ring (port 1 to the switch
    before, port 2 to the one after), hosts on each after them."""
    out = []
    for i in range(n):
        out += ["switchguid=0x%x" % (0x100000 + 16 * i),
                'Switch %d "r%d"' % (2 + hosts, i),
                '[1] "r%d"[2]' % ((i - 1) % n),
                '[2] "r%d"[1]' % ((i + 1) % n)]
        out += ['[%d] "r%d-h%d"[1]' % (3 + h, i, h) for h in range(hosts)]
        out.append("")
    for i in range(n):
        for h in range(hosts):
            out += ["caguid=0x%x" % (0x200000 + 16 * (hosts * i + h)),
                    'Hca 1 "r%d-h%d"' % (i, h),
                    '[1] "r%d"[%d]' % (i, 3 + h), ""]
    path.write_text("\n".join(out))
    return path


def route_net(net, out, stock):
    args = ["--net", str(net), "--out", str(out), "--quiet", "--no-ibroute",
            "--roots", "none", "--allow-fallback"]
    args += ["--stock"] if stock else \
        ["--port-offsetting", "on", "--plugin-dir", plugin_dir()]
    proc = run_osm_sim(args)
    assert proc.returncode == 0, proc.stderr
    with open(out / "osm.log", errors="replace") as f:
        return f.read(), analyse_dir(out, args=["--credit-loops",
                                                "every-entry"])


def test_switches_without_hosts_are_the_roots_where_updn_finds_none(
        tmp_path):
    """A dragonfly (gen-fabric dragonfly): 4 groups of 2 leaves with 4
    hosts under 2 spines, each spine cabled to its peer in every other
    group.  A spine
    sees its own group's hosts 1 hop away and the rest 2: updn's
    detection finds no root, and stock OpenSM hands the fabric to minhop,
    whose tables close a credit loop among the routes to the switches'
    LIDs.  The plugin takes the 8 spines, which have no end ports of their
    own, for roots: updn routes every pair with no credit loop, at
    minhop's figure (every shortest path between groups is up, across,
    down).  Before, port offsetting on minhop's routes closed the same
    loop.  A ring, whose switches all have hosts, still goes to minhop:
    up/down there would leave routes out that minhop's take."""
    need_mode("on")
    net = tmp_path / "dragonfly.net"
    proc = run_script(os.path.join(REPO, "sim-topologies", "gen-fabric"),
                      ["dragonfly", "--groups", "4", "--leaves", "2",
                       "--spines", "2", "--hosts-per-leaf", "4",
                       "--random-guids", "-o", str(net)])
    assert proc.returncode == 0, proc.stderr
    log, stock = route_net(net, tmp_path / "stock", True)
    assert "minhop tables configured on all switches" in log
    assert stock["credit_loop"], "stock minhop closed no loop here"
    log, ours = route_net(net, tmp_path / "ours", False)
    assert "osmoffset: no root switch at the min-hop distances of the end " \
        "ports: the 8 switches without end ports of their own are taken " \
        "for roots" in log
    assert "updn tables configured on all switches" in log
    assert ours["valid"] and ours["unreachable_pairs"] == 0
    assert not ours["credit_loop"], ours["credit_cycle"]
    assert leaf_base(ours) >= leaf_base(stock)
    net = write_ring(tmp_path / "ring.net")
    log, _ours = route_net(net, tmp_path / "ring", False)
    assert "taken for roots" not in log
    assert "minhop tables configured on all switches" in log


@pytest.mark.parametrize("lmc", [0, 1])
def test_roots_of_last_resort_close_no_loop_over_their_cables(tmp_path,
                                                              lmc):
    """gen-fabric's dragonfly of 6 groups (4 leaves of 8 hosts under 4
    spines) without a fifth of its cables: some groups reach each other
    only over two spine-to-spine cables in a row.  Taken up both ways (as
    updn takes a cable between two roots) those routes closed a credit
    loop, among the CAs' routes at LMC 1 and among every entry at LMC 0;
    stock updn falls back to minhop, whose routes close one too.  The
    cables between the roots of last resort now go up one way only,
    toward the centre of the roots they join: no loop, every pair routed,
    at or above stock in leaf order."""
    need_mode("on")
    gen = ["dragonfly", "--groups", "6", "--leaves", "4", "--spines", "4",
           "--hosts-per-leaf", "8", "--remove-links", "0.2", "--seed", "2"]
    log, ours = route_generated(tmp_path, "df", gen, "on", lmc)
    assert "the 24 switches without end ports of their own are taken " \
        "for roots" in log
    assert ours["valid"] and ours["unreachable_pairs"] == 0
    assert not ours["credit_loop"], ours["credit_cycle"]
    every = analyse_dir(tmp_path / ("df-on-lmc%d" % lmc),
                        args=["--credit-loops", "every-entry"])
    assert not every["credit_loop"], every["credit_cycle"]
    _log, stock = route_generated(tmp_path, "df", gen, "stock", lmc,
                                  rcs=(3,))
    assert stock["credit_loop"]
    assert leaf_base(ours) >= leaf_base(stock)


def test_roots_of_last_resort_leave_no_host_out_of_reach(tmp_path):
    """A small dragonfly (4 groups of 2 leaves under 2 spines) without a
    quarter of its cables: a leaf lost its cable to the spine of one plane
    and another the other's, so they reach each other only down and up
    again at a leaf.  Up/down over the spines would leave those hosts
    without a route; the plugin says so and leaves the fabric to minhop,
    as stock updn does: every pair routed."""
    need_mode("on")
    gen = ["dragonfly", "--groups", "4", "--leaves", "2", "--spines", "2",
           "--hosts-per-leaf", "4", "--remove-links", "0.25", "--seed", "2"]
    log, ours = route_generated(tmp_path, "df", gen, "on", 0, rcs=(3,))
    assert "taken for roots" in log
    assert "osmoffset: over the switches without end ports as roots, " \
        "some switch with end ports has no up/down path to another " \
        "(cables missing); up/down routing is not used" in log
    assert "minhop tables configured on all switches" in log
    assert ours["valid"] and ours["unreachable_pairs"] == 0


def test_roots_of_last_resort_stay_where_lanes_carry_what_they_lack(
        tmp_path):
    """docs/dragonfly.md's df12: 6 groups of 2 leaves (4 hosts each)
    under 3 spines, a quarter of the cables gone.  Over the roots of last
    resort some leaves have no up/down path to others, and stock updn's
    fallback, minhop, closes a credit loop among the CAs' routes.  With
    reach_vls=2 and QoS on, up/down stays and the reach pass routes the
    paths it lacks on lane 1: every pair routed, no credit loop on either
    lane."""
    need_mode("on")
    gen = ["dragonfly", "--groups", "6", "--leaves", "2", "--spines", "3",
           "--hosts-per-leaf", "4", "--remove-links", "0.25", "--seed", "2"]
    _log, stock = route_generated(tmp_path, "df", gen, "stock", 0,
                                  rcs=(3,))
    assert stock["credit_loop"]
    log, ours = route_generated(tmp_path, "df", gen, "on", 0,
                                options=["reach_vls=2"], qos=True)
    assert "some switch with end ports has no up/down path to another " \
        "(cables missing); up/down routing stays, and the reach pass " \
        "routes those paths on lanes above VL0 (reach_vls)" in log
    assert "updn tables configured on all switches" in log
    assert re.search(r"reach: [1-9][0-9]* routes \(switch, LID\) put on "
                     r"virtual lanes 1-1", log)
    assert ours["valid"] and ours["unreachable_pairs"] == 0
    assert not ours["credit_loop"], ours["credit_cycle"]


def test_roots_of_last_resort_go_to_minhop_where_lanes_fall_short(
        tmp_path):
    """6 groups of 2 leaves (2 hosts each) under 3 spines without 35 %
    of the cables: with reach_vls=2 up/down over the roots of last resort
    stays at first, but the reach pass leaves CAs' traffic without a route
    on lane 1 too.  The LFT stage then fails and OpenSM routes minhop, as
    stock: every pair routed, and no route left on a lane above VL0."""
    need_mode("on")
    gen = ["dragonfly", "--groups", "6", "--leaves", "2", "--spines", "3",
           "--hosts-per-leaf", "2", "--remove-links", "0.35", "--seed", "5"]
    log, ours = route_generated(tmp_path, "df", gen, "on", 0, rcs=(3,),
                                options=["reach_vls=2"], qos=True)
    assert "up/down routing stays" in log
    assert re.search(r"osmoffset: over the switches without end ports as "
                     r"roots, the reach pass leaves [1-9][0-9]* entries "
                     r"where a CA's traffic runs in without a route, on "
                     r"the lanes above VL0 too: up/down routing is not "
                     r"used", log)
    assert "minhop tables configured on all switches" in log
    assert ours["valid"] and ours["unreachable_pairs"] == 0
    with open(tmp_path / "df-on-lmc0" / "osmoffset-path-sl.dump") as f:
        assert "# lanes 1\n" in f.read()


def test_guard_under_minhop_closes_no_loop_where_stock_minhop_has_none(
        tmp_path):
    """docs/dragonfly.md's df22: 7 groups of 3 leaves (3 hosts each)
    under 3 spines, a tenth of the cables gone.  updn finds no root and up/
    down over the roots of last resort would leave hosts without a route:
    OpenSM routes with minhop, stock and ours.  Port offsetting's minhop
    tables, their polish and their mix with the stock routes each closed a
    credit loop among the CAs' routes, where stock minhop's close none; the
    guard now takes none of them, and the stock tables (polished) go on:
    no loop, every pair routed, no cell below stock in leaf order."""
    need_mode("on")
    gen = ["dragonfly", "--groups", "7", "--leaves", "3", "--spines", "3",
           "--hosts-per-leaf", "3", "--remove-links", "0.1", "--seed", "2"]
    _log, stock = route_generated(tmp_path, "df", gen, "stock", 0,
                                  rcs=(3,))
    assert not stock["credit_loop"]
    log, ours = route_generated(tmp_path, "df", gen, "on", 0, rcs=(3,))
    assert "minhop tables configured on all switches" in log
    assert "osmoffset: stock guard: the polish of port offsetting's LFTs " \
        "is taken back: it would close a credit loop among the routes " \
        "the CAs' traffic takes, where the stock tables close none" in log
    assert ours["valid"] and ours["unreachable_pairs"] == 0
    assert not ours["credit_loop"], ours["credit_cycle"]
    assert leaf_base(ours) >= leaf_base(stock)


def test_guard_keeps_every_sharp_node_reachable_where_stock_can(tmp_path):
    """Two rails of 6 edges under 10 spines, a quarter of the cables
    doubled, 10 % missing, 2 management HCAs on spines, a SHARP node on
    every switch.  Over the completed roots, a spine that lost its cable
    to an edge reaches that edge's hosts only through a down/up turn, and
    the reach pass cannot fit every such turn loop-free: ours left 71
    CA/LID pairs without a route, from the spines' SHARP nodes, where the
    stock tables over updn's own roots, filled by the same pass, leave
    none; the guard kept ours, on their scores (found by a sweep of
    random cluster shapes).  It takes that as a loss: unpolished
    (polish=off), ours leave 7 CA LIDs after the whole reach pass, and
    the stock tables stay (leaf order as stock updn's, which leaves 12
    pairs between SHARP nodes without a route; filled by the reach pass,
    they route every pair).  Polished, since the polish parts the routes
    a random order's round may run at once, ours lose none: they stay,
    their leaf order over twice stock updn's.  Either way every CA
    reaches every CA LID, loop-free."""
    need_mode("on")
    gen = ["cluster", "--radix", "40", "--edges", "12", "--hosts-per-edge",
           "18", "--uplinks", "12", "--rails", "2", "--spines", "10",
           "--core-hosts", "2", "--double-links", "0.25", "--remove-links",
           "0.1", "--sharp", "--seed", "303"]
    log, off = route_generated(tmp_path, "sharp-spines-nopolish", gen, "on",
                               options=["polish=off"], spine_cas=True)
    assert "port offsetting's LFTs leave 7 CA LIDs (SHARP nodes among " \
        "them) without a route from some CA after the reach pass, the " \
        "stock tables 0" in log
    assert "the stock LFTs stay" in log
    log, ours = route_generated(tmp_path, "sharp-spines", gen, "on",
                                spine_cas=True)
    assert "without a route from some CA after the reach pass" not in log
    assert "port offsetting's LFTs score at least as well as the stock " \
        "ones in all 8 cells; they stay" in log
    _log, stock = route_generated(tmp_path, "sharp-spines", gen, "stock",
                                  spine_cas=True)
    assert stock["unreachable_pairs"] > 0
    assert off["valid"] and off["unreachable_pairs"] == 0
    assert not off["credit_loop"], off["credit_cycle"]
    assert leaf_base(off) >= leaf_base(stock)
    assert_routed_above_stock(ours, stock, 2.0)


def test_guard_scores_the_tables_the_reach_pass_leaves(tmp_path):
    """var-ndr-sharp-mgmt: a two-level NDR tree, every cable doubled, 5 %
    missing, management HCAs on 4 spines and a SHARP node on every
    switch.  Over the completed roots our up/down tables leave 76 host flows
    without a route, stock updn's 6; the reach pass fills all of them in
    both.  The stock guard used to count the flows lost before that pass
    and fell back to the stock tables (0.332 in leaf order); it now scores
    each candidate as the reach pass will leave it, and ours stay: every
    pair routed, no credit loop, 0.462 in leaf order."""
    need_mode("on")
    log, ours, stock = route_variant(tmp_path, "var-ndr-sharp-mgmt",
                                     spine_cas=True)
    assert "port offsetting's LFTs score at least as well as the stock " \
        "ones in all 8 cells; they stay" in log
    assert stock["unreachable_pairs"] > 0
    assert_routed_above_stock(ours, stock, 1.3)


def test_guard_gives_lost_destinations_the_stock_routes(tmp_path):
    """var-dir-mgmt-taper3: two directors under 3:1 tapered edges, 6
    management HCAs on line ASICs.  No up/down route joins HCAs on the
    two chassis; the reach pass fills what it can loop-free on VL0.  Over
    port offsetting's tables it leaves two HCAs' LIDs without a route
    (6 flows lost in leaf order), over stock updn's another one (3), so
    the guard used to fall back to the stock tables.  Now, before any job
    block, the LIDs ours lose and stock's do not take the stock entries on
    every switch: after the pass every pair has a route, no credit loop,
    and leaf order stays above stock's (0.131 against 0.108 in
    docs/fabrics.md).  polish=off: polished, whose moves to even the
    route counts lead those LIDs over spines that route them, ours lose
    no flow and need no mix."""
    need_mode("on")
    log, ours, stock = route_variant(tmp_path, "var-dir-mgmt-taper3",
                                     options=["polish=off"], spine_cas=True)
    assert "port offsetting's LFTs score lower than the stock ones in " \
        "leaf order base (0.1375, 6 flows lost, against 0.1078, 3)" in log
    assert "the routes toward 2 CA LIDs port offsetting left without " \
        "a route, and the flows of 1 job blocks or LID offsets where it " \
        "lost, take the stock routes" in log
    assert stock["unreachable_pairs"] > 0
    assert_routed_above_stock(ours, stock, 1.15)


def test_lid_offset_without_a_turn_takes_its_ports_base_routes(tmp_path):
    """var-dir-mgmt-taper3 at LMC 2: the polished tables leave the reach
    pass no loop-free turn toward one LID offset of a management HCA on
    three line ASICs, whose CAs then had no route to it (3 host/LID pairs
    in docs/fabrics.md; stock updn 72).  The other LIDs of that port reach
    every CA: the offset now takes their entries on every switch, whose
    channel dependencies the tables have already.  Every pair routed, no
    credit loop among every entry either, leaf order above stock.  The
    polish of the base LIDs alone, which goes first at LMC > 0, would
    leave the reach pass 7 CA LIDs it cannot route from some CA, against
    4 (its moves add channel dependencies that its turns would close a
    loop with): its moves are taken back."""
    need_mode("on")
    log, ours, stock = route_variant(tmp_path, "var-dir-mgmt-taper3", lmc=2,
                                     spine_cas=True)
    assert "the polish of the base LIDs of port offsetting's LFTs is " \
        "taken back: the reach pass would leave 7 CA LIDs without a route " \
        "from some CA after it, against 4" in log
    assert "reach: 1 LIDs that traffic from some CA still could not get " \
        "to took the routes of another LID of their port" in log
    assert stock["unreachable_pairs"] > 0
    assert_routed_above_stock(ours, stock, 1.15)
    every = analyse_dir(tmp_path / "var-dir-mgmt-taper3-on-lmc2",
                        args=["--credit-loops", "every-entry"])
    assert every["unreachable_pairs"] == 0
    assert not every["credit_loop"], every["credit_cycle"]


def test_guard_mixes_updns_own_offsets_without_a_credit_loop(tmp_path):
    """var-rails8-2l at LMC 2: 8 rails, 20 uplinks per edge over 16
    spines.  updn finds 9 roots, port offsetting completes them to 16;
    its further LID offsets lose leaf order base+k to updn's own tables
    over its 9 roots (0.2595 against 0.2915), and so do the stock
    entries over the 16 roots a mix used to take (0.2823): the guard fell
    back to stock updn.  Those offsets now take updn's own entries, kept
    only because the whole tables are checked free of credit loops: base
    LIDs keep port offsetting's routes (leaf order 0.444 against 0.295)
    and every offset scores as stock's own.  (With its lanes by design, or
    its LID offsets apart, or polished, ours now beat stock in every cell;
    design_lanes=off, offsets_apart=off and polish=off keep the tables as
    before, for this path of the guard.)"""
    need_mode("on")
    log, ours, stock = route_variant(tmp_path, "var-rails8-2l", lmc=2,
                                     options=["design_lanes=off",
                                              "offsets_apart=off",
                                              "polish=off"])
    assert "port offsetting's LFTs score lower than the stock ones in " \
        "leaf order base+1 (0.2595, 0 flows lost, against 0.2915, 0)" in log
    assert "(2 LID offsets and 0 of those CA LIDs updn's own, over its " \
        "own roots; the tables have no credit loop)" in log
    assert_routed_above_stock(ours, stock, 1.4)
    assert ours["shift"]["spread"]["efficiency"] > \
        stock["shift"]["spread"]["efficiency"]
    assert "lanes by design" not in log
    assert "apart around the slots" not in log


def test_dead_lanes_share_the_live_cables_to_their_spine(tmp_path):
    """var-ndr-empty-mgmt: NDR edges with 2 to 4 cables to each of 12
    spines (the level numbers 4 lanes per spine).  A base LID whose lane
    has no cable takes another cable to the same spine; it used to be
    the first live one, so on an edge with 2 cables to a spine one cable
    carried three lanes' LIDs: random orders lost to stock updn (0.1976
    against 0.2062 in the guard's cells) and the guard fell back.  The
    least loaded live lane takes them now: ours stay, every pair routed,
    no credit loop, leaf order well above stock updn's (0.385 against
    0.283 in docs/fabrics.md)."""
    need_mode("on")
    log, ours, stock = route_variant(tmp_path, "var-ndr-empty-mgmt",
                                     spine_cas=True)
    assert "port offsetting's LFTs score at least as well as the stock " \
        "ones in all 8 cells; they stay" in log
    assert_routed_above_stock(ours, stock, 1.25)


def test_guard_keeps_ours_within_the_random_orders_slack(tmp_path):
    """var-ndr-doubled: NDR edges with 2 to 4 cables to each of 8 spines
    (and one with a single cable).  Every spine takes an equal share of
    an edge's destinations, so a lone cable carries four times the LIDs
    of one of four: with polish=off, ours fall below stock updn (which
    balances LIDs per cable) in random orders, base traffic, by 0.85 %
    on the guard's twelve shuffles (0.1750 against 0.1765), within the
    1 % the guard allows that sample.  Ours as built stay: the guard
    needs no rebuild with the LIDs of dead lanes spread beyond their
    spine (it took that at 0.5 %), every pair routed, no credit loop,
    leaf order above stock updn's."""
    need_mode("on")
    log, ours, stock = route_variant(tmp_path, "var-ndr-doubled",
                                     options=["polish=off"])
    assert "port offsetting's LFTs score at least as well as the stock " \
        "ones in all 8 cells; they stay" in log
    assert "spread beyond their spine" not in log
    assert_routed_above_stock(ours, stock, 1.15)


def test_lanes_by_design_keep_every_lid_offset_above_stock(tmp_path):
    """var-ndr-empty-mgmt at LMC 2: NDR edges cabled twice to each of 12
    spines, a third of the cables doubled once more, so that trunks have
    2 to 4 links.  Sized by the widest trunk the level had 4 lanes (48
    slots), most of them dead at every edge; further LID offsets whose
    slot was dead detoured to other spines, and each offset alone lost
    leaf order to stock updn (0.2806 against 0.2871): the guard gave the
    losing offsets the stock routes, and spread traffic fell to 0.351.
    The guard now also builds the tables with the lanes the design has
    (2: what two thirds of the trunks have), the extra cables sharing
    their lane's LIDs, and keeps them where they score better: no cell
    lost, spread well above stock's, every pair routed, no credit loop."""
    need_mode("on")
    log, ours, stock = route_variant(tmp_path, "var-ndr-empty-mgmt", lmc=2,
                                     spine_cas=True)
    assert_variant_stays(log, "with each level's lanes by design",
                         "with the widest trunks'")
    assert_routed_above_stock(ours, stock, 1.25)
    spread = ours["shift"]["spread"]["efficiency"]
    assert spread > 1.3 * stock["shift"]["spread"]["efficiency"], spread


def test_directors_with_doubled_cables_keep_their_lanes_by_design(tmp_path):
    """var-dir-doubled-sharp at LMC 2: two HDR directors (10 line, 5
    fabric ASICs each) under 2:1 tapered edges, a quarter of the cables
    doubled, a SHARP node on every ASIC.  The edges' widest trunk has 2
    links, their design 1; the guard keeps the tables with lanes by
    design (same base LIDs, the extra cables sharing their trunk's LIDs),
    which beat stock in every cell: striped traffic in leaf order 0.531
    against 0.385 with the widest trunk's lanes and 0.279 for stock updn.
    Up/down leaves the SHARP nodes of one director unreachable from the
    other's ASICs for both engines; ours leave fewer such pairs."""
    need_mode("on")
    log, ours, stock = route_variant(tmp_path, "var-dir-doubled-sharp",
                                     lmc=2)
    assert_variant_stays(log, "with each level's lanes by design",
                         "with the widest trunks'")
    assert not ours["credit_loop"], ours["credit_cycle"]
    assert ours["unreachable_pairs"] < stock["unreachable_pairs"]
    spread = ours["shift"]["spread"]["efficiency"]
    assert spread > 1.6 * stock["shift"]["spread"]["efficiency"], spread


def test_directors_with_doubled_cables_route_sharp_nodes_by_port(tmp_path):
    """var-dir-doubled-sharp at LMC 0.  Up/down leaves the SHARP nodes of
    one director unreachable from the other's ASICs; the reach pass turns
    their LIDs at edge switches where that closes no loop.  A turn takes
    the cable the hole sends the edge's own LID by, one of two where a
    cable is doubled; the pass's last step tries every port to a switch
    that delivers the LID: 15 pairs left without a route, where 210 were
    before it (stock updn 490)."""
    need_mode("on")
    _log, ours, stock = route_variant(tmp_path, "var-dir-doubled-sharp")
    assert not ours["credit_loop"], ours["credit_cycle"]
    assert 10 * ours["unreachable_pairs"] < stock["unreachable_pairs"], \
        (ours["unreachable_pairs"], stock["unreachable_pairs"])


def test_directors_keep_ours_with_lid_offsets_apart(tmp_path):
    """var-dir-edr at LMC 2: two EDR directors (12 line, 6 fabric ASICs
    each) under edges cabled to a rotating subset of the line ASICs, empty
    edges, management HCAs on line ASICs.  With a port's further LID
    offsets on neighbouring slots its LIDs left by line ASICs of one
    director mostly, each offset alone lost to stock and the guard fell
    back to the stock tables (0.210 in leaf order).  The guard now also
    tries the offsets a quarter of the slots apart (oo_apart_offset_slot())
    and keeps those: every cell at least stock's, leaf order 0.288 and
    striped traffic 0.409 against 0.210 and 0.323, no credit loop."""
    need_mode("on")
    log, ours, stock = route_variant(tmp_path, "var-dir-edr", lmc=2,
                                     spine_cas=True)
    assert_variant_stays(log, "with further LID offsets apart around the "
                         "slots", "with them in blocks")
    assert not ours["credit_loop"], ours["credit_cycle"]
    assert ours["unreachable_pairs"] <= stock["unreachable_pairs"]
    assert leaf_base(ours) > 1.3 * leaf_base(stock), leaf_base(ours)
    spread = ours["shift"]["spread"]["efficiency"]
    assert spread > 1.2 * stock["shift"]["spread"]["efficiency"], spread


DIGITS_APART = ("with the level-1 digits of the CAs below each level-1 "
                "switch apart")


def assert_variant_beats_off(tmp_path, name, what_new, what_old, option,
                             factor, spine_cas=False):
    """The variant NAME at LMC 0: the guard kept port offsetting's LFTs
    what_new over those what_old and went on to beat stock in all 8
    cells; every pair routed, no credit loop, leaf order above 1.5 x
    stock updn's and above factor x that with OPTION=off (both with
    polish=off: the polish narrows the gap between them)."""
    need_mode("on")
    log, ours, stock = route_variant(tmp_path, name, lmc=0,
                                     options=["polish=off"],
                                     spine_cas=spine_cas)
    assert_variant_stays(log, what_new, what_old, cells=8)
    assert_routed_above_stock(ours, stock, 1.5)
    _log, off = route_generated(tmp_path, name, variant_args(name), "on", 0,
                                [option + "=off", "polish=off"],
                                spine_cas=spine_cas)
    assert leaf_base(ours) > factor * leaf_base(off), \
        (leaf_base(ours), leaf_base(off))


def test_director_pods_keep_their_digits_apart(tmp_path):
    """var-dir-edr at LMC 0: the edges, in name order, are cabled to the
    line ASICs in turn (edge e to the 8 lines of group e mod 3), so the
    ranks run over the groups in turn.  A CA's digit above the line ASICs
    by its rank, (rank / 8) mod 18 (6 fabric ASICs, 3 lanes), then
    repeats every 9 edges of 16 hosts: within a group, every third edge
    has the same digits, and the fabric ASICs send their CAs down the
    same link.  The guard also tries the digits kept
    apart below each line ASIC (oo_free_digit()) and keeps them: leaf
    order 0.337 against 0.288 with digits_apart=off, every cell at least
    stock's, every pair routed, no credit loop."""
    assert_variant_beats_off(tmp_path, "var-dir-edr", DIGITS_APART,
                             "with the digits of their ranks",
                             "digits_apart", 1.1, spine_cas=True)


def test_digits_apart_never_cost_a_sharp_node_its_route(tmp_path):
    """var-dir-edr-sharp at LMC 0: the same directors with a SHARP node on
    every ASIC.  Digits kept apart score better there too, but the reach
    pass, which fills loop-free only, then leaves 20 CA LIDs (SHARP nodes)
    without a route from some CA that it fills over the digits of the
    ranks.  The guard keeps those: every host/LID pair routed."""
    need_mode("on")
    log, ours, _stock = route_variant(tmp_path, "var-dir-edr-sharp", lmc=0)
    assert "port offsetting's LFTs %s would score better, but leave 20 " \
        "CA LIDs (SHARP nodes among them) without a route" % DIGITS_APART \
        in log
    assert ours["valid"] and ours["unreachable_pairs"] == 0
    assert not ours["credit_loop"], ours["credit_cycle"]


def test_leaves_short_of_a_cable_keep_their_live_slots(tmp_path):
    """var-dir-dual at LMC 0: two EDR directors under 24 tapered edges (9
    uplinks to a rotating subset of the line ASICs), 4 of them short of
    one uplink.  Numbering a plan that misses a slot over its live slots
    (d-mod-live) moved nearly every LID toward such an edge at the edges
    of its group, which then sent its CAs down other links than the fabric
    ASICs did; quarter jobs 3 and 4 lost to stock and the guard's mix cost
    leaf order (0.204; dfsssp 0.238).  The guard also tries such plans
    keeping their live slots' digits, only the dead slot's LIDs detouring,
    and keeps them: every cell at least stock's, leaf order above 1.25 x
    that of keep_live=off, every pair routed, no credit loop."""
    assert_variant_beats_off(tmp_path, "var-dir-dual",
                             "with the live slots of plans that miss few "
                             "keeping their digits",
                             "with those plans numbered over their live "
                             "slots", "keep_live", 1.25)


def test_management_hcas_of_two_directors_reach_each_other(tmp_path):
    """The HDR director analog (two directors of 40 line and 20 fabric
    ASICs, 8 management HCAs on line ASICs of both) with 1 % of its cables
    missing (seed 3): an HCA on one director's line ASIC reaches one on
    the other's only through a down/up turn at an edge.  The reach pass
    turned each LID at its best turn switch only; for 3 of the HCAs those
    fills closed a credit loop with the turns of the other direction, 12
    HCA pairs stayed without a route, stock updn's tables had none lost,
    and the guard kept stock's (leaf order 0.081 against ours 0.37).  It
    now tries up to 8 turn switches for the LID of an HCA that traffic from
    HCAs needs, and every pair is routed over ours."""
    need_mode("on")
    from osmoffset.fabricsuite import HDR_DIRECTORS
    gen = HDR_DIRECTORS + ["--remove-links", "0.01", "--seed", "3"]
    log, ours = route_generated(tmp_path, "hdr-dir-s3", gen, "on",
                                spine_cas=True)
    _log, stock = route_generated(tmp_path, "hdr-dir-s3", gen, "stock",
                                  spine_cas=True)
    assert "(0 of them where traffic from a CA runs in)" in log
    assert "port offsetting's LFTs score at least as well as the stock " \
        "ones in all 8 cells; they stay" in log
    assert_routed_above_stock(ours, stock, 3.0)


def test_sharp_nodes_of_one_director_reach_the_hca_of_the_other(tmp_path):
    """bench-shapes shape 41: two directors joined only through 9 edges,
    10 % of the cables missing, a management HCA on a line ASIC of the
    first, SHARP nodes on every ASIC; updn's detection finds no root
    (stock OpenSM routes minhop, with a credit loop).  From the second
    director's line ASICs only a down/up turn at an edge gets to the HCA.
    The turn each LID takes first closes a credit loop; the reach pass's
    retry round takes the next best turn switches for the holes of the
    SHARP nodes' traffic too: at LMC 0 every SHARP node reaches the HCA,
    with no credit loop (10 did not).  At LMC 2 the routes of the further
    offsets close a loop with every turn there is (9 edges): the 40 pairs
    stay without a route, as before."""
    need_mode("on")
    net = str(tmp_path / "shape-41.net")
    proc = run_script(os.path.join(REPO, "sim-topologies", "gen-fabric"), [
        "cluster", "--radix", "36", "--edges", "9", "--hosts-per-edge",
        "12", "--uplinks", "12", "--directors", "2", "--lines", "6",
        "--fabrics", "4", "--core-hosts", "1", "--remove-links", "0.1",
        "--sharp", "--seed", "744", "--random-guids", "-o", net])
    assert proc.returncode == 0, proc.stderr
    out = tmp_path / "on"
    proc = run_osm_sim(["--net", net, "--out", str(out), "--quiet",
                        "--no-ibroute", "--roots", "none",
                        "--port-offsetting", "on",
                        "--plugin-dir", plugin_dir()])
    assert proc.returncode == 0, proc.stderr
    # LMC 0: the base LIDs are all there are; mgmt01 is the only
    # management HCA
    lost = unreachable_by_kind(out)
    assert not [k for k in lost if k[1] == "mgmt"], lost
    res = analyse_dir(out)
    assert not res["credit_loop"], res["credit_cycle"]


def routed_above_stock(tmp_path, name, gen, factor, lines, spine_cas=False):
    """gen-fabric GEN routed at LMC 0 with the plugin and by stock updn:
    each of lines is in our log, and ours route every pair, loop-free,
    above factor x stock's leaf order.  Returns stock's lft-analyze."""
    need_mode("on")
    log, ours = route_generated(tmp_path, name, gen, "on",
                                spine_cas=spine_cas)
    for line in lines:
        assert line in log, line
    _log, stock = route_generated(tmp_path, name, gen, "stock",
                                  spine_cas=spine_cas)
    assert_routed_above_stock(ours, stock, factor)
    return stock


SHAPE_179 = ["cluster", "--radix", "36", "--edges", "18", "--hosts-per-edge",
             "4", "--uplinks", "4", "--directors", "1", "--lines", "6",
             "--fabrics", "3", "--empty-edges", "3", "--core-hosts", "3",
             "--sharp", "--seed", "905"]
SHAPE_202 = ["cluster", "--radix", "40", "--edges", "10", "--hosts-per-edge",
             "18", "--uplinks", "12", "--rails", "2", "--spines", "11",
             "--core-hosts", "4", "--remove-links", "0.1", "--seed", "244"]


def test_sharp_holes_without_a_common_turn_are_filled_apart(tmp_path):
    """bench-shapes shape 179: a director (6 line, 3 fabric ASICs) under
    18 edges, 3 of them without hosts, 3 management HCAs on the director,
    SHARP nodes on every ASIC.  Six switches had no entry toward one SHARP
    node's LID, each with loop-free turn switches of its own but none
    that every one of them could take: every turn the reach pass tried
    for the LID's holes at once closed a credit loop, and the six pairs
    stayed without a route.  Stock updn, over its single root, routes all
    without a loop, so the guard, which now answers to it, kept stock's
    tables (0.161 in leaf order, stock 0.152).  In the retry round each
    hole now takes its own turn switch where some turn closed a loop and
    none took them all, and the guard counts the CA LIDs tables leave
    without a route after the whole pass where stock's leave none: ours
    leave none, and they stay."""
    stock = routed_above_stock(tmp_path, "apart", SHAPE_179, 3.0, [
        "15 CA LIDs had no LFT entry on some switches; 45 entries filled "
        "through a down/up turn, 0 left empty",
        "port offsetting's LFTs score at least as well as the stock ones in "
        "all 8 cells; they stay"], spine_cas=True)
    assert unreachable_by_kind(tmp_path / "apart-on-lmc0") == {}
    assert not stock["credit_loop"] and stock["unreachable_pairs"] == 0


SHAPE_178 = ["cluster", "--radix", "36", "--edges", "6", "--hosts-per-edge",
             "16", "--uplinks", "10", "--rails", "2", "--spines", "10",
             "--empty-edges", "1", "--core-hosts", "4", "--remove-links",
             "0.1", "--seed", "433"]


def test_an_edge_without_hosts_does_not_rank_the_spines_under_it(tmp_path):
    """bench-shapes shape 178: two rails of 3 edges (16 hosts each) and an
    edge without hosts under 10 spines, 4 management HCAs on spines, 10 %
    of the cables missing.  updn's detection takes 5 spines and the empty
    edge for roots, the edge further from the leaves than the spines.  As
    a root cabled to a root further up, each of those spines went and
    ranked under the empty edge (2 roots: it and the spine it lost its
    cable to): leaf order 0.303, the quarter job 0.483, against stock
    updn's 0.307 and 0.653.  The edge takes one cable of a spine's
    seven, no core over it: it goes instead, the 5 spines the detection
    missed join the others, and ours route over the 10 spines.  Without
    the stock guard, which answers to updn's own roots (next test), and
    its polish: 0.355 in leaf order."""
    need_mode("on")
    log, ours = route_generated(tmp_path, "empty-edge", SHAPE_178, "on",
                                options=["stock_guard=off"])
    assert "osmoffset: 1 root switches are further from the leaves than " \
        "roots they are cabled to but no core over them" in log
    assert "join them as roots: 10 roots" in log
    with open(tmp_path / "empty-edge-on-lmc0" /
              "opensm-updn-roots.dump") as f:
        roots = [line for line in f if line.strip()]
    assert len(roots) == 10
    _log, stock = route_generated(tmp_path, "empty-edge", SHAPE_178,
                                  "stock")
    assert not stock["credit_loop"] and stock["unreachable_pairs"] == 0
    assert_routed_above_stock(ours, stock, 1.15)  # 0.355 / 0.307


def test_the_mix_takes_updns_own_routes_toward_lost_cas(tmp_path):
    """bench-shapes shape 202: two rails of 5 edges (18 hosts each) under
    11 spines, 4 management HCAs on spines, 10 % of the cables missing.
    Ours leave 3 CA LIDs without a route after the reach pass (21 flows in
    leaf order) where updn's own tables, over its own roots, leave none.
    The mix took the stock entries toward lost host LIDs only, and from
    the stock LFT stage over our roots, which loses one of them too: the
    guard fell back to stock updn (0.236 against 0.222 in leaf order).
    Now every CA LID ours lose takes the stock entries over our roots
    where those route it, else updn's own, and the mix stays once its
    tables are checked free of a credit loop (2 CA LIDs since the polish
    parts the routes a random order's round may run at once)."""
    routed_above_stock(tmp_path, "lost-cas", SHAPE_202, 1.5, [
        "port offsetting's LFTs score lower than the stock ones in leaf "
        "order base (0.4021, 21 flows lost, against 0.2190, 0)",
        "the routes toward 2 CA LIDs port offsetting left without a route",
        "(0 LID offsets and 1 of those CA LIDs updn's own, over its own "
        "roots; the tables have no credit loop)"], spine_cas=True)


def test_the_guard_answers_to_updn_over_its_own_roots(tmp_path):
    """Shape 178 (above) with the stock guard.  It weighed ours against
    updn's tables over the roots left once the empty edge went (the 5
    spines updn found), never against stock updn's own (those 5 spines
    and the edge): ours stayed, and quarter job 1 got 0.583 against stock
    updn's 0.653.  Our roots changed, so the guard now builds updn's own
    tables over its own roots, finds them free of a credit loop and
    answers to them: ours (0.604) and their mix lose quarter job 1, and
    updn's own tables stay, polished.  Leaf order, each quarter and each
    half job: at least stock updn's figure, every pair routed, no credit
    loop."""
    need_mode("on")
    log, ours = route_generated(tmp_path, "empty-edge", SHAPE_178, "on",
                                spine_cas=True)
    assert "the roots are changed; the stock tables to beat are updn's " \
        "own, over its own roots" in log
    assert "port offsetting's LFTs score lower than the stock ones in " \
        "quarter job 1 base (0.6042, 0 flows lost, against 0.6528" in log
    assert "the stock LFTs with entries of leaves moved" in log
    assert ours["unreachable_pairs"] == 0 and not ours["credit_loop"]
    _log, stock = route_generated(tmp_path, "empty-edge", SHAPE_178,
                                  "stock", spine_cas=True)
    figures = {}
    for job in [()] + [("--job", "quarter", "--job-index", str(k))
                       for k in range(4)] + \
            [("--job", "half", "--job-index", str(k)) for k in range(2)]:
        figures[job] = [leaf_base(analyse_dir(tmp_path / (
            "empty-edge-%s-lmc0" % mode), args=job + ("--spine-cas",)))
            for mode in ("on", "stock")]
    assert all(on >= stock for on, stock in figures.values()), figures


SHAPE_76 = ["cluster", "--radix", "40", "--edges", "5", "--hosts-per-edge",
            "12", "--uplinks", "8", "--directors", "2", "--lines", "2",
            "--fabrics", "3", "--remove-links", "0.05", "--sharp", "--seed",
            "809"]


def test_the_mix_gives_every_sharp_node_stock_routes_where_needed(tmp_path):
    """bench-shapes shape 76 at LMC 2: two directors (2 line and 3 fabric
    ASICs each) joined only through 5 edges, SHARP nodes on every ASIC,
    5 % of the cables missing.  Ours send one line's SHARP traffic to the
    other line of its director over a fabric ASIC; the turns the reach
    pass then needs at an edge toward the other director's SHARP nodes
    close a credit loop with the turns back, and ours leave 11 SHARP CA
    LIDs without a route (12 before the base LIDs were polished alone
    first).  The mix of those alone leaves more (ours still route toward
    the others), where updn's own tables, filled, leave none: the guard
    kept those (0.458 in leaf order, stock updn 0.421).  Now such a mix
    gives every SHARP node's LID the routes of the tables to beat; the
    hosts' routes, all the cells score, stay ours: 0.571, every pair
    routed, no credit loop."""
    need_mode("on")
    log, ours = route_generated(tmp_path, "sharp", SHAPE_76, "on", lmc=2)
    assert "port offsetting's LFTs leave 11 CA LIDs (SHARP nodes among " \
        "them) without a route from some CA after the reach pass" in log
    assert "the mix of the lost CA LIDs alone still lost some; 40 more " \
        "LIDs of SHARP aggregation nodes take the routes of the stock " \
        "tables to beat" in log
    assert "the routes toward 20 CA LIDs port offsetting left without a " \
        "route and 40 more LIDs of SHARP nodes" in log
    assert "(0 LID offsets and 60 of those CA LIDs updn's own, over its " \
        "own roots; the tables have no credit loop); the rest keep port " \
        "offsetting's" in log
    _log, stock = route_generated(tmp_path, "sharp", SHAPE_76, "stock",
                                  lmc=2)
    assert stock["unreachable_pairs"] == 216  # between SHARP nodes
    assert_routed_above_stock(ours, stock, 1.3)  # 0.571 / 0.421


SHAPE_63 = ["cluster", "--radix", "40", "--edges", "4", "--hosts-per-edge",
            "12", "--uplinks", "6", "--pods", "4", "--pod-spines", "6",
            "--spines", "4", "--core-hosts", "2", "--double-links", "0.9",
            "--remove-links", "0.1", "--seed", "228"]


def test_the_guard_does_not_count_on_borrowed_routes(tmp_path):
    """bench-shapes shape 63 at LMC 2: 4 pods, 2 management HCAs on top
    switches, 10 % of the cables missing.  After the reach pass ours
    leave a flow of leaf order base+1 without a route, and so would the
    stock base LIDs with our further offsets: the guard keeps the stock
    tables, polished.  Had the guard's measure let LIDs borrow their
    port's routes, ours would have lost nothing and stayed (at bf975a4:
    0.449 in leaf order, below stock updn's 0.452).  The borrowing is the
    last step of the pass on the tables that stay: 2 LIDs of the polished
    stock tables then take their port's other LIDs' routes: every pair
    routed, no credit loop, leaf order 0.507."""
    need_mode("on")
    log, ours = route_generated(tmp_path, "shape63", SHAPE_63, "on", lmc=2,
                                spine_cas=True)
    assert "port offsetting's LFTs score lower than the stock ones in " \
        "leaf order base+1 (0.4558, 1 flows lost, against 0.3793, 0)" in log
    assert "the stock LFTs with entries of leaves moved where that " \
        "lowers a round's busiest link or evens the route counts score " \
        "at least as well as the stock ones in all 19 cells" in log
    assert "the stock LFTs stay as they are" in log
    assert "reach: 2 LIDs that traffic from some CA still could not get " \
        "to took the routes of another LID of their port" in log
    _log, stock = route_generated(tmp_path, "shape63", SHAPE_63, "stock",
                                  lmc=2, spine_cas=True)
    assert stock["unreachable_pairs"] > 0
    assert_routed_above_stock(ours, stock, 1.1)  # 0.507 / 0.452
    every = analyse_dir(tmp_path / "shape63-on-lmc2",
                        args=["--credit-loops", "every-entry"])
    assert not every["credit_loop"], every["credit_cycle"]


SHAPE_295 = ["cluster", "--radix", "36", "--edges", "22",
             "--hosts-per-edge", "18", "--uplinks", "18", "--spines", "16",
             "--empty-edges", "1", "--core-hosts", "4", "--remove-links",
             "0.05", "--sharp", "--seed", "496"]


def test_stock_polish_without_parting_where_the_reach_pass_fills_more(
        tmp_path):
    """bench-shapes shape 295 at LMC 0: 22 edges under 16 spines, 4
    management HCAs on the core, an empty edge, SHARP nodes.  Updn's own
    tables have a credit loop; ours lose flows to the stock tables over
    the roots ours checked, and those stay, polished.  The polish's third
    phase (parting a random order's flows) takes the loop-free turns the
    whole reach pass had for a CA LID: 3 entries stayed empty (2167eda to
    ae40399).  The guard polishes the stock tables again without that
    phase, and those, which beat the stock tables too and leave every
    pair routed, go on."""
    need_mode("on")
    log, ours = route_generated(tmp_path, "shape295", SHAPE_295, "on",
                                spine_cas=True)
    assert "the whole reach pass leaves 1 CA LIDs of the polished stock " \
        "LFTs without a route, 0 of them polished without parting the " \
        "routes of a random order's rounds (-1: not polished so, or they " \
        "lose); those go on" in log
    assert "the stock LFTs polished stay" in log
    assert "0 left empty" in log
    assert ours["unreachable_pairs"] == 0
    every = analyse_dir(tmp_path / "shape295-on-lmc0",
                        args=["--credit-loops", "every-entry"])
    assert not every["credit_loop"], every["credit_cycle"]
    assert leaf_base(ours) > 0.42, leaf_base(ours)  # 0.428; stock updn 0.249


SHAPE_316 = ["cluster", "--radix", "36", "--edges", "11", "--hosts-per-edge",
             "18", "--uplinks", "18", "--spines", "12", "--core-hosts", "1",
             "--seed", "237"]


def test_offsets_beside_stock_base_lids_win_shape_316(tmp_path):
    """bench-shapes shape 316 at LMC 2: 11 edges of 18 hosts, 18 uplinks
    each over 12 spines (6 of them cabled twice), a management HCA on a
    spine.  Port offsetting's tables lose a cell of base LIDs to stock
    updn, no mix wins it back, and the stock tables stayed: leaf order
    spread 0.439, as stock's, whose further LID offsets follow their base
    LID's port.  Then the hosts' further LID offsets took port
    offsetting's entries over the stock base LIDs (0.645).  Since the
    polish parts the routes a random order's round may run at once, the
    stock tables polished lose a cell, and the further LID offsets moved
    beside the stock base LIDs win all 19 cells instead (the guard's
    average over all cells 0.6451, against 0.6366 before): every pair
    routed, no credit loop, base LIDs at least stock's, striped traffic
    far above.  (The stock base LIDs with offsetting's further offsets:
    shape 174 below, unpolished.)"""
    need_mode("on")
    log, ours = route_generated(tmp_path, "s316", SHAPE_316, "on", lmc=2,
                                spine_cas=True)
    assert (BESIDE_BASE_WON % 19) in log
    _log, stock = route_generated(tmp_path, "s316", SHAPE_316, "stock",
                                  lmc=2, spine_cas=True)
    assert ours["valid"] and ours["unreachable_pairs"] == 0
    assert not ours["credit_loop"], ours["credit_cycle"]
    assert leaf_base(ours) >= leaf_base(stock)
    spread = ours["shift"]["spread"]["efficiency"]
    stock_spread = stock["shift"]["spread"]["efficiency"]
    assert spread > 1.3 * stock_spread, (spread, stock_spread)


# The stock guard's log line where the further LID offsets beside the
# stock base LIDs win (19 cells: LMC 2; 17: LMC 1).
BESIDE_BASE_WON = "the further LID offsets of the hosts leave the " \
    "switches with hosts by the neighbours beside their base LIDs': they " \
    "score at least as well as the stock ones in all %d cells"


def assert_routed_loop_free(ours, out):
    """Every host/LID pair routed, and no credit loop in the CAs' routes
    nor among every LFT entry of the tables osm-sim left in out."""
    assert ours["valid"] and ours["unreachable_pairs"] == 0
    assert not ours["credit_loop"], ours["credit_cycle"]
    every = analyse_dir(out, args=["--credit-loops", "every-entry"])
    assert not every["credit_loop"], every["credit_cycle"]


def test_lmc0_ours_but_the_stock_first_hops_polished(tmp_path):
    """var-2l-12x6-degraded at LMC 0: updn's base LIDs reach the leaf
    order's optimum (0.5423) over its own 3 roots, and the stock tables
    stay.  Their polish could not move entries to the leaves' up ports:
    the spines updn ranks below the leaves reach the hosts they are not
    cabled to down and up again through them.  Port offsetting's tables
    with the stock first hops of the base LIDs, polished, win: leaf
    order as stock's, the first quarter job 0.676 -> 0.735 (dfsssp
    0.686), the first half job 0.586 -> 0.600."""
    need_mode("on")
    log, ours, stock = route_variant(tmp_path, "var-2l-12x6-degraded")
    assert "port offsetting's LFTs go on, but for the entries of the " \
        "switches with hosts toward the base LIDs, which keep the stock " \
        "ones: they score at least as well as the stock ones in all 8 " \
        "cells and better" in log
    assert_routed_loop_free(ours, tmp_path / "var-2l-12x6-degraded-on-lmc0")
    assert round(leaf_base(ours), 4) == round(leaf_base(stock), 4) == 0.5423
    quarter = [analyse_dir(tmp_path / ("var-2l-12x6-degraded-%s-lmc0" % m),
                           args=["--order", "leaf", "--job", "quarter",
                                 "--job-index", "0"])
               for m in ("on", "stock")]
    assert quarter[0]["shift"]["base"]["efficiency"] > \
        1.05 * quarter[1]["shift"]["base"]["efficiency"]


def test_further_offsets_beside_the_stock_base_lids(tmp_path):
    """bench-fabrics var-2l-12x6-degraded at LMC 2: 12 leaves of 6 hosts,
    one of the 6 spines and 5 % of the cables missing.  updn's own roots
    are the 3 spines cabled to every leaf, and in leaf order its base
    LIDs reach the optimum (0.5423, route-optimum), which port
    offsetting's digits over all 5 spines miss: the stock tables stay,
    polished.  Port offsetting's further offsets over them would spread
    the striped traffic, but the stock entries toward the switches and
    out of the spines the stock ranking puts below the leaves close a
    credit loop with them, so port offsetting's tables go on with the
    stock first hops of the base LIDs out of the leaves (each offset
    alone in leaf order allowed down to 10 % below stock's).  Their
    further offsets follow their own digits, not the stock base LIDs:
    moved beside those (the next spines in switch order, polished),
    striped traffic goes 0.549 (stock updn) -> 0.618 in leaf order and
    0.397 -> 0.543 in random order (before: 0.592 and 0.462; dfsssp
    0.545 and 0.505); no credit loop among any entries."""
    need_mode("on")
    log, ours, stock = route_variant(tmp_path, "var-2l-12x6-degraded",
                                     lmc=2)
    assert "with port offsetting's entries toward the further LID " \
        "offsets of the hosts, the stock LFTs would score better, but " \
        "have a credit loop" in log
    assert "port offsetting's LFTs go on, but for the entries of the " \
        "switches with hosts toward the base LIDs, which keep the stock " \
        "ones: they score at least as well as the stock ones in all 19 " \
        "cells" in log
    assert BESIDE_BASE_WON % 19 in log
    assert_routed_loop_free(ours, tmp_path / "var-2l-12x6-degraded-on-lmc2")
    assert round(leaf_base(ours), 4) == round(leaf_base(stock), 4) == 0.5423
    spread = ours["shift"]["spread"]["efficiency"]
    stock_spread = stock["shift"]["spread"]["efficiency"]
    assert spread > 1.1 * stock_spread, (spread, stock_spread)
    rand = [analyse_dir(tmp_path / ("var-2l-12x6-degraded-%s-lmc2" % m),
                        args=["--order", "random"])
            for m in ("on", "stock")]
    assert rand[0]["shift"]["spread"]["efficiency"] > \
        1.3 * rand[1]["shift"]["spread"]["efficiency"]
    assert rand[0]["shift"]["base"]["efficiency"] >= \
        rand[1]["shift"]["base"]["efficiency"]


def assert_beside_base_refused(log, ours, out, than):
    """At LMC 2 (19 cells), the guard's beside-base tables scored no
    better on the whole than `than` (the tables that won, or the stock
    LFTs) and did not go on; ours, routed into out, reach every LID with
    no credit loop."""
    assert "with their further LID offsets moved beside the base LIDs' at " \
        "the switches with hosts, those LFTs would score no better on the " \
        "whole than %s" % than in log
    assert (BESIDE_BASE_WON % 19) not in log
    assert_routed_loop_free(ours, out)


def test_offsets_beside_base_do_not_replace_better_tables(tmp_path):
    """Shape 174 of docs/shapes.md at LMC 2 (20 edges of 8 hosts, two
    rails, half the cables doubled, 5 % missing).  Unpolished
    (polish=off), ours lose the random orders' base LIDs to stock: the
    stock tables stay, and port offsetting's further offsets over their
    base LIDs win.  Moved beside the base LIDs, those would score no
    better on the whole: they must not replace the tables that won.
    Polished (since the polish parts the routes a random order's round
    may run at once), ours score at least as well as the stock tables in
    all 19 cells and stay (leaf order spread above 0.48)."""
    need_mode("on")
    gen = ["cluster", "--radix", "64", "--edges", "20",
           "--hosts-per-edge", "8", "--uplinks", "4", "--rails", "2",
           "--spines", "2", "--double-links", "0.5", "--remove-links",
           "0.05", "--seed", "473"]
    log, off = route_generated(tmp_path, "shape-174-nopolish", gen, "on",
                               lmc=2, options=["polish=off"])
    assert "the stock LFTs keep their entries toward base LIDs, and port " \
        "offsetting's take those toward the further LID offsets of the " \
        "hosts: they score at least as well as the stock ones in all 19 " \
        "cells" in log
    assert_beside_base_refused(log, off,
                               tmp_path / "shape-174-nopolish-on-lmc2",
                               "the tables that won")
    log, ours = route_generated(tmp_path, "shape-174", gen, "on", lmc=2)
    assert "port offsetting's LFTs score at least as well as the stock " \
        "ones in all 19 cells; they stay" in log
    assert_routed_loop_free(ours, tmp_path / "shape-174-on-lmc2")
    assert ours["shift"]["spread"]["efficiency"] > 0.48


def test_offsets_beside_base_buy_no_base_lids_with_striped_traffic(
        tmp_path):
    """Shape 270 of docs/shapes.md at LMC 2 (one director of two line
    ASICs over three fabric ASICs, 4 edges of 8 hosts, three hosts on the
    cores): the stock tables stay (polished); port offsetting's further
    offsets over them lose a cell.  Moved beside the base LIDs and
    polished, they would raise the base LIDs (0.8158 -> 0.8253 on the
    guard's average) but lose striped traffic (all cells 0.8348 ->
    0.8274): leaf order spread 0.857 -> 0.796, random order base 0.422
    -> 0.404, below stock's 0.419 (updn fails here at LMC 2, OpenSM falls
    back to minhop).  They must not replace the stock tables."""
    need_mode("on")
    gen = ["cluster", "--radix", "36", "--edges", "4", "--hosts-per-edge",
           "8", "--uplinks", "8", "--rails", "4", "--directors", "1",
           "--lines", "2", "--fabrics", "3", "--core-hosts", "3", "--seed",
           "630"]
    log, ours = route_generated(tmp_path, "shape-270", gen, "on", lmc=2,
                                spine_cas=True)
    assert_beside_base_refused(log, ours, tmp_path / "shape-270-on-lmc2",
                               "the stock LFTs")
    assert ours["shift"]["spread"]["efficiency"] > 0.85
    route_generated(tmp_path, "shape-270", gen, "stock", lmc=2,
                    rcs=(0, 3), spine_cas=True)
    rand = [analyse_dir(tmp_path / ("shape-270-%s-lmc2" % m),
                        args=["--order", "random"])
            for m in ("on", "stock")]
    assert rand[0]["shift"]["base"]["efficiency"] >= \
        rand[1]["shift"]["base"]["efficiency"]


def test_lmc1_offsets_beside_the_stock_base_lids(tmp_path):
    """The same tree at LMC 1.  Port offsetting's further offsets over
    the stock tables lost a hair in leaf order spread (0.5455 against
    0.5469), and the stock tables stayed.  Over updn's own ranking the
    spines reach the hosts they are not cabled to down and up again
    through the leaves, so the polish could not move entries to the
    leaves' up ports; port offsetting's tables with the stock first hops
    of the base LIDs, their further offsets beside the base LIDs and
    polished, win: striped traffic 0.547 -> 0.556 in leaf order, 0.696
    -> 0.755 in the first quarter job, 0.345 -> 0.385 in random order
    (stock updn), each offset alone in leaf order 0.5423 as stock's."""
    need_mode("on")
    log, ours, stock = route_variant(tmp_path, "var-2l-12x6-degraded",
                                     lmc=1)
    assert BESIDE_BASE_WON % 17 in log
    assert "the stock LFTs stay as they are" not in log
    assert_routed_loop_free(ours, tmp_path / "var-2l-12x6-degraded-on-lmc1")
    assert round(leaf_base(ours), 4) == round(leaf_base(stock), 4) == 0.5423
    assert ours["shift"]["spread"]["efficiency"] > \
        stock["shift"]["spread"]["efficiency"]
    quarter = [analyse_dir(tmp_path / ("var-2l-12x6-degraded-%s-lmc1" % m),
                           args=["--order", "leaf", "--job", "quarter",
                                 "--job-index", "0"])
               for m in ("on", "stock")]
    assert quarter[0]["shift"]["spread"]["efficiency"] > \
        1.05 * quarter[1]["shift"]["spread"]["efficiency"]
    rand = [analyse_dir(tmp_path / ("var-2l-12x6-degraded-%s-lmc1" % m),
                        args=["--order", "random"])
            for m in ("on", "stock")]
    assert rand[0]["shift"]["spread"]["efficiency"] > \
        1.1 * rand[1]["shift"]["spread"]["efficiency"]


SHARP_SPINES = ["cluster", "--radix", "40", "--edges", "12",
                "--hosts-per-edge", "18", "--uplinks", "12", "--rails", "2",
                "--spines", "10", "--core-hosts", "2", "--double-links",
                "0.25", "--remove-links", "0.1", "--sharp", "--seed", "303"]
JOB_SHAPES = {"dir-sharp": DIR_SHARP, "sharp-spines": SHARP_SPINES,
              "shape179": SHAPE_179, "shape202": SHAPE_202,
              "shape178": SHAPE_178, "shape63": SHAPE_63,
              "shape295": SHAPE_295, "shape316": SHAPE_316}
JOBS = [()] + [("--job", j, "--job-index", str(k))
               for j, n in (("quarter", 4), ("half", 2)) for k in range(n)]


@pytest.mark.parametrize("name,lmc", [
    ("sharp-spines", 0), ("var-ndr-sharp-mgmt", 0),
    ("var-ndr-empty-mgmt", 2), ("shape179", 0), ("shape202", 0),
    ("shape178", 0), ("shape63", 2), ("shape295", 0), ("shape316", 2)])
def test_jobs_on_the_leaves_keep_every_lid_routed(tmp_path, name, lmc):
    """The shapes of the scenarios above (management HCAs on spines or
    cores, SHARP nodes, empty edges, directors) routed as by default:
    the guard's rank orders, and lft-analyze's, are the leaves' hosts
    only (a job runs on those).  Every CA/LID pair is routed, no credit
    loop, and in the leaf order, each quarter and each half job of the
    compute nodes, base LIDs score at least stock updn's figure."""
    need_mode("on")
    gen = JOB_SHAPES.get(name) or variant_args(name)
    log, ours = route_generated(tmp_path, name, gen, "on", lmc)
    _log, stock = route_generated(tmp_path, name, gen, "stock", lmc,
                                  rcs=(0, 3))
    assert ours["valid"] and ours["unreachable_pairs"] == 0, \
        ours["unreachable_pairs"]
    assert not ours["credit_loop"], ours["credit_cycle"]
    below = []
    for job in JOBS:
        on, off = [leaf_base(analyse_dir(tmp_path / (
            "%s-%s-lmc%d" % (name, mode, lmc)), args=job))
            for mode in ("on", "stock")]
        if round(on, 3) < round(off, 3):
            below.append("%s: %.4f < stock %.4f" % (" ".join(job) or
                                                    "leaf order", on, off))
    assert not below, below


@pytest.mark.parametrize("lmc,won,ours_left", [(1, 4, 2), (2, 6, 4)])
def test_reaching_every_lid_comes_before_a_cell(tmp_path, lmc, won,
                                                 ours_left):
    """var-dir-mgmt-taper3 (two directors, 3:1 tapered edges, management
    HCAs on the directors) by default, at LMC 1 and 2: ours lose a cell
    of the compute nodes (quarter job 4 base: 0.1948 against 0.2228), and
    the tables that win instead (the stock ones polished, with our
    further LID offsets) leave the reach pass management HCAs' LIDs it
    cannot route loop-free beside the stock routes: 12 host/LID pairs
    without a route after OpenSM's pass.  Reaching every LID comes first:
    ours go on (they leave fewer to that pass, and OpenSM's pass lends
    the rest the routes of another LID of their port), and every pair is
    routed, loop-free; stock updn leaves pairs without a route.  The log
    says how lanes above VL0 would keep the tables that won
    (docs/fabrics-reach-vls.md)."""
    need_mode("on")
    log, ours, stock = route_variant(tmp_path, "var-dir-mgmt-taper3", lmc)
    assert "the tables that won leave %d CA LIDs without a route from " \
        "some CA after the reach pass, port offsetting's %d: port " \
        "offsetting's go on, though they score lower in a cell (with " \
        "reach_vls=2 or more and OpenSM's QoS on, the reach pass may " \
        "take those turns on a lane above VL0, and the tables that won " \
        "stay)" % (won, ours_left) in log
    assert ours["valid"] and ours["unreachable_pairs"] == 0
    assert not ours["credit_loop"], ours["credit_cycle"]
    assert stock["unreachable_pairs"] > 0


def test_cables_evened_where_the_first_stage_leaves_lids(tmp_path):
    """var-dir-mgmt-taper3 at LMC 2: the tables that stay leave 4 CA
    LIDs of management HCAs without a route after the reach pass's first
    stage, none after the whole pass (one LID offset takes its port's
    routes).  The evening over parallel cables (the line ASICs' cables to
    the fabric ASICs) used to be skipped on such tables ("no evening of
    the cables"); now it runs, and goes on where the whole pass as
    OpenSM runs it leaves no more host/LID pairs without a route after
    it.  Every pair routed, no credit loop among the CAs' routes or
    every entry."""
    need_mode("on")
    log, ours, stock = route_variant(tmp_path, "var-dir-mgmt-taper3", lmc=2)
    assert "no evening of the cables" not in log
    assert "the tables with their cables evened go on: at least as good " \
        "in every cell, better on the whole" in log
    assert ours["valid"] and ours["unreachable_pairs"] == 0
    assert not ours["credit_loop"], ours["credit_cycle"]
    assert stock["unreachable_pairs"] > 0
    every = analyse_dir(tmp_path / "var-dir-mgmt-taper3-on-lmc2",
                        args=["--credit-loops", "every-entry"])
    assert every["unreachable_pairs"] == 0
    assert not every["credit_loop"], every["credit_cycle"]


def test_jobs_on_the_leaves_of_dir_sharp_leave_one_sharp_pair(tmp_path):
    """dir-2level-taper's shape with a SHARP node on every ASIC, routed
    by default at LMC 0: the guard's orders leave the management HCAs
    out, ours (polished or not) stay, and OpenSM's reach pass leaves one
    pair between SHARP nodes without a route (an edge's aggregation node
    toward another's: no loop-free turn for it; the stock tables to beat
    route it no better).  With the guard's orders of every CA
    (spine_cas=on) the polish happened to leave the pass that turn
    (test_guard_keeps_the_management_hcas_routes).  Every host and
    management HCA reaches every LID, loop-free; stock updn finds no
    root here and falls back to minhop, whose tables have a credit
    loop."""
    need_mode("on")
    net = dir_sharp_net(tmp_path)
    out = tmp_path / "default"
    log = route_dir_sharp(net, out, 0)
    assert "port offsetting's LFTs score at least as well as the stock " \
        "ones in all 9 cells; they stay" in log
    assert unreachable_by_kind(out) == {("sharp", "sharp"): 1}
    res = analyse_dir(out)
    assert res["valid"] is False and res["unreachable_pairs"] == 1
    assert not res["credit_loop"], res["credit_cycle"]
