"""Tests of route-optimum (osmoffset.optimum, osmoffset.cli.route_optimum:
best reachable shift-alltoall efficiency on 2-level fat trees, by integer
programming).

Run: /usr/bin/python3 -m pytest tests/python/test_route_optimum.py
Each solve of the curated 32-host fabrics takes well under a second.
"""

import json
import os

import pytest

from conftest import REPO, TOPO_DIR, assert_usage_error, run_script
from osmoffset import __version__, quality
from osmoffset import optimum as ilp
from osmoffset.fabric import load_lfts, load_topology

OPT = os.path.join(REPO, "scripts", "route-optimum")
pytest.importorskip("scipy.optimize", reason="python3-scipy missing")


def optimum(*args):
    p = run_script(OPT, list(args) + ["--json"], timeout=120)
    assert p.returncode == 0, p.stderr
    return json.loads(p.stdout)


def net(name):
    return os.path.join(TOPO_DIR, name + ".net")


def test_full_tree_is_congestion_free():
    r = optimum("--topology", net("ft2-8x4"))
    assert r["optimal"] and r["exact"]
    assert r["best"] == pytest.approx(1.0)
    assert r["bound"] == pytest.approx(1.0)


@pytest.mark.parametrize("lmc,expect", [(0, 0.565), (1, 0.665), (2, 0.665)])
def test_degraded_tree_optimum(lmc, expect):
    """ft2-8x4 without 3 of its 32 cables: every base-LID routing leaves
    some rounds with two flows on a link; 0.565 is the exact optimum (its
    31 rounds: 4 at load 1, 27 at load 2 -> (4 + 27 / 2) / 31)."""
    r = optimum("--topology", net("ft2-8x4-degraded"), "--lmc", str(lmc))
    assert r["optimal"]
    assert r["best"] == pytest.approx(expect, abs=5e-4)
    # the bound the solver proves meets the routing it found (MIP gap)
    assert r["bound"] == pytest.approx(r["best"], abs=1e-3)


def test_oversubscribed_tree_reaches_the_leaf_bound():
    # 4 hosts over 2 up links per leaf: 2 flows per link in every round
    # with flows leaving the leaf; the leaf bound (bench-quality's bound1)
    r = optimum("--topology", net("ft2-oversub-8x2"))
    assert r["best"] == pytest.approx(0.565, abs=5e-4)


def test_model_counts_like_lft_analyze():
    """The efficiency of one fixed routing, computed by the tool's
    evaluator, on a hand-made tree of 2 leaves with hosts 0, 1 and 2, 3:
    d-mod-k is congestion free; with everything on spine 0, rounds 1 and
    3 have one flow each way between the leaves, round 2 two."""
    mod = ilp

    class Fab:
        leaves = [0, 1]
        spines = [0, 1]
        leaf_of = [0, 0, 1, 1]
        width = {(0, 0): 1, (0, 1): 1, (1, 0): 1, (1, 1): 1}
    ranks = [0, 1, 2, 3]
    dmodk = {(a, d, 0): d % 2 for a in (0, 1) for d in range(4)}
    same = {(a, d, 0): 0 for a in (0, 1) for d in range(4)}
    assert mod.evaluate(Fab, ranks, 1, dmodk) == pytest.approx(1.0)
    assert mod.evaluate(Fab, ranks, 1, same) == pytest.approx(
        (1 + 1 / 2 + 1) / 3)


def test_three_level_tree_is_refused():
    p = run_script(OPT, ["--topology", net("kary-4-3")])
    assert p.returncode == 2
    assert "kary-4-3.net" in p.stderr and "not a 2-level fat tree" in \
        p.stderr
    assert "Traceback" not in p.stderr


def test_bad_hostfile_names_file_and_line(tmp_path):
    hf = tmp_path / "hosts"
    hf.write_text("h0000\n# comment\nnosuchhost\n")
    p = run_script(OPT, ["--topology", net("ft2-8x4"), "--hostfile",
                         str(hf)])
    assert p.returncode == 2
    assert "%s:3: unknown host 'nosuchhost'" % hf in p.stderr


@pytest.mark.parametrize("seed", [1, 7])
def test_random_ranks_are_bench_quality_s(tmp_path, seed):
    """The random orders of --random-orders are the hostfiles bench-quality
    writes for its random rank order (prepare_fabrics())."""
    info = quality.prepare_fabrics(str(tmp_path), ["ft2-8x4-degraded"],
                                   seed, lambda msg: None)
    fab = ilp.TwoLevel(load_topology(net("ft2-8x4-degraded")))
    ranks = ilp.random_ranks(fab, seed)
    assert ranks == ilp.read_ranks(fab, info["ft2-8x4-degraded"]["hostfile"])
    assert ranks != list(range(32)) and sorted(ranks) == list(range(32))


def test_random_orders_measure_the_routing_found():
    """--random-orders N: the routing found, measured in the random orders
    of seeds 1..N; the topology-order optimum stays as without it."""
    r = optimum("--topology", net("ft2-8x4-degraded"), "--lmc", "1",
                "--random-orders", "3")
    assert r["best"] == pytest.approx(0.665, abs=5e-4)
    rnd = r["random"]
    assert rnd["seeds"] == 3 and len(rnd["each"]) == 3
    assert rnd["mean"] == pytest.approx(sum(rnd["each"]) / 3)
    # a random order of 32 hosts over 4 leaves short of cables crowds
    # some round: below the topology order's figure, above nothing
    assert all(0 < e < r["best"] for e in rnd["each"])
    assert "random" not in optimum("--topology", net("ft2-8x4-degraded"))
    p = run_script(OPT, ["--topology", net("ft2-8x4-degraded"),
                         "--random-orders", "2"])
    assert p.returncode == 0
    assert "the routing found, in random rank orders (seeds 1-2): shift " \
        "efficiency 0." in p.stdout


def test_bad_options():
    for args in (["--topology", net("ft2-8x4"), "--lmc", "9"],
                 ["--topology", net("ft2-8x4"), "--time-limit", "0"],
                 ["--topology", net("ft2-8x4"), "--random-orders", "-1"],
                 ["--topology", net("ft2-8x4"), "--random-orders", "x"],
                 ["--topology", "/nonexistent.net"]):
        p = run_script(OPT, args)
        assert p.returncode == 2, args
        assert "Traceback" not in p.stderr


def test_hostfile_rule_of_mpi_users(tmp_path):
    """route-optimum reads hostfiles like lft-analyze: Open MPI slots=N,
    MPICH host:N, comments; the order is the file's."""
    hf = tmp_path / "hosts"
    names = ["h%04d" % i for i in range(32)]
    text = "# reversed\n" + "".join(
        "%s slots=4\n" % n if i % 2 else "%s:2\n" % n
        for i, n in enumerate(reversed(names)))
    hf.write_text(text)
    r = optimum("--topology", net("ft2-8x4"), "--hostfile", str(hf))
    assert r["hosts"] == 32 and r["order"] == str(hf)
    fab = ilp.TwoLevel(load_topology(net("ft2-8x4")))
    ranks = ilp.read_ranks(fab, str(hf))
    assert [fab.desc[fab.hosts[i]] for i in ranks] == names[::-1]


def test_version():
    p = run_script(OPT, ["--version"])
    assert p.returncode == 0
    assert p.stdout.strip() == "route-optimum (osmoffset) %s" % __version__


@pytest.mark.parametrize("lmc,expect", [(1, 0.613), (2, 0.627)])
def test_lids_apart_optimum(lmc, expect):
    """--lids-apart: each flow's LIDs on different spines, as port
    offsetting routes them.  On ft2-8x4-degraded the unconstrained optimum
    (0.665) puts both or more LIDs of many flows on one spine; with them
    apart the best is lower.  (Which of the equally good routings the
    solver returns is its own: only the optimum is pinned.)"""
    free = optimum("--topology", net("ft2-8x4-degraded"), "--lmc",
                   str(lmc))
    assert not free["lids_apart"] and free["shared"]["of"] == 224
    assert free["shared"]["flows"] > 0
    r = optimum("--topology", net("ft2-8x4-degraded"), "--lmc", str(lmc),
                "--lids-apart", "--random-orders", "20")
    assert r["optimal"] and r["lids_apart"]
    assert r["best"] == pytest.approx(expect, abs=5e-4)
    assert r["best"] < free["best"] - 0.03
    assert r["shared"] == {"flows": 0, "of": 224}
    assert 0 < r["random"]["mean"] < r["best"]


def test_lids_apart_rule():
    """At most ceil(2^LMC / shared spines) LIDs of a flow on one spine;
    shared_flows() counts the flows over it."""
    assert [ilp.lids_per_spine(4, s) for s in (1, 2, 3, 4, 5)] == \
        [4, 2, 2, 1, 1]
    assert ilp.lids_per_spine(2, 3) == 1

    class Fab:
        leaves = [0, 1]
        spines = [0, 1, 2]
        leaf_of = [0, 1]
        width = {(a, s): 1 for a in (0, 1) for s in range(3)}

        def usable(self, a, d):
            return [0, 1, 2]
    apart = {(0, 1, 0): 0, (0, 1, 1): 1, (0, 1, 2): 2, (0, 1, 3): 0,
             (1, 0, 0): 1, (1, 0, 1): 2, (1, 0, 2): 0, (1, 0, 3): 1}
    assert ilp.shared_flows(Fab(), 4, apart) == 0
    together = dict(apart)
    together[(1, 0, 3)] = 2
    together[(1, 0, 2)] = 2
    assert ilp.shared_flows(Fab(), 4, together) == 1


def test_lids_apart_full_tree_and_lmc0():
    r = optimum("--topology", net("ft2-8x4"), "--lmc", "2", "--lids-apart")
    assert r["best"] == pytest.approx(1.0)
    assert r["shared"]["flows"] == 0
    p = run_script(OPT, ["--topology", net("ft2-8x4"), "--lids-apart"])
    assert p.returncode == 2
    assert "--lids-apart needs --lmc 1 or more" in p.stderr
    assert "Traceback" not in p.stderr
    p = run_script(OPT, ["--topology", net("ft2-8x4-degraded"), "--lmc",
                         "1", "--lids-apart"])
    assert p.returncode == 0
    assert "each flow's LIDs on different spines" in p.stdout
    assert "no routing with each flow's LIDs apart can exceed: 0.613" \
        in p.stdout


def read_routes(path, fab):
    """A --routes file as solve()'s routing dict, by GUID."""
    li = {g: i for i, g in enumerate(fab.leaves)}
    si = {g: i for i, g in enumerate(fab.spines)}
    di = {g: i for i, g in enumerate(fab.hosts)}
    lines = open(path).read().splitlines()
    assert lines[0].startswith("# route-optimum routing of ")
    assert lines[1].startswith("# leaf guid\thost port guid\tlid offset")
    choice = {}
    for line in lines[2:]:
        leaf, host, off, spine, ldesc, hdesc, sdesc = line.split("\t")
        key = (li[int(leaf, 16)], di[int(host, 16)], int(off))
        assert key not in choice
        choice[key] = si[int(spine, 16)]
        assert (ldesc, hdesc, sdesc) == (
            fab.leaf_desc[key[0]], fab.desc[fab.hosts[key[1]]],
            fab.spine_desc[choice[key]])
    return choice


def test_routes_file_is_the_routing_found(tmp_path):
    """--routes: every (leaf, host of another leaf, LID offset) once, up
    to a spine linked to both leaves, and the routing written scores the
    figure reported."""
    out = tmp_path / "routes.tsv"
    r = optimum("--topology", net("ft2-8x4-degraded"), "--lmc", "1",
                "--routes", str(out))
    assert r["routes"] == str(out)
    fab = ilp.TwoLevel(load_topology(net("ft2-8x4-degraded")))
    choice = read_routes(out, fab)
    assert len(choice) == 8 * (32 - 4) * 2
    for (a, d, _o), s in choice.items():
        assert fab.leaf_of[d] != a and s in fab.usable(a, d)
    assert ilp.evaluate(fab, list(range(32)), 2, choice) == \
        pytest.approx(r["best"])
    assert r["best"] == pytest.approx(0.665, abs=5e-4)
    assert "shift efficiency %.4f" % r["best"] in \
        open(out).readline()


def test_lfts_measured_beside_the_routing_found():
    """--lfts: a dump's routing in the model, set beside the optimum's.
    hand2x2-aligned sends both hosts of a leaf up one spine: round 2 puts
    two flows on a link ((1 + 1/2 + 1) / 3, as lft-analyze counts it);
    the shifted dump is d-mod-k, the optimum."""
    fx = os.path.join(REPO, "tests", "python", "fixtures", "analyze")
    topo = os.path.join(fx, "hand2x2.net")
    for dump, eff, lower in (("hand2x2-aligned", 2.5 / 3, 1),
                             ("hand2x2-shifted", 1.0, 0)):
        path = os.path.join(fx, dump + ".lfts.dump")
        r = optimum("--topology", topo, "--lfts", path)
        lf = r["lfts"]
        assert lf["path"] == path and lf["entries"] == 4
        assert lf["efficiency"] == pytest.approx(eff)
        assert (lf["rounds"], lf["rounds_lower"], lf["rounds_higher"]) == \
            (3, lower, 0)
        assert lf["differ"] == (2 if lower else 0)
    p = run_script(OPT, ["--topology", topo, "--lfts",
                         os.path.join(fx, "hand2x2-aligned.lfts.dump")])
    assert p.returncode == 0
    assert "hand2x2-aligned.lfts.dump: shift efficiency 0.833 in this " \
        "model (83.3 % of the best routing found)" in p.stdout
    assert "2 of its 4 (leaf, host, LID offset) entries go up to another " \
        "spine than in the routing found; it scores lower in 1 of 3 " \
        "rounds, higher in 0" in p.stdout


def test_lfts_and_routes_bad_input(tmp_path):
    """A dump with fewer LIDs than --lmc asks, a dump of another fabric,
    an unwritable --routes: exit 2, one line naming the file."""
    fx = os.path.join(REPO, "tests", "python", "fixtures", "analyze")
    ft4 = os.path.join(fx, "ft4-l1.subnet.lst")
    p = run_script(OPT, ["--topology", ft4, "--lmc", "2", "--lfts",
                         os.path.join(fx, "ft4-l1.lfts.dump")])
    assert_usage_error(p, "route-optimum: %s:0: host " % os.path.join(
        fx, "ft4-l1.lfts.dump"))
    assert "has 2 LIDs in the dump, LMC 2 needs 4" in p.stderr
    p = run_script(OPT, ["--topology", ft4, "--lmc", "1", "--lfts",
                         os.path.join(fx, "ft48-l1.lfts.dump")])
    assert_usage_error(p, "route-optimum: %s:" % os.path.join(
        fx, "ft48-l1.lfts.dump"))
    p = run_script(OPT, ["--topology", ft4, "--routes",
                         str(tmp_path / "no" / "routes.tsv")])
    assert_usage_error(p, "route-optimum: %s:0: cannot write: " % (
        tmp_path / "no" / "routes.tsv"))
    assert not (tmp_path / "no").exists()


def test_orders_solve_for_the_mean_of_groups(tmp_path):
    """--orders order,quarters,halves: the best mean of the three groups
    (each the mean of its jobs), proven; every group's figure is that of
    the routing written, and no routing found for the one order does
    better on the mean (here the leaf order loses nothing to the jobs)."""
    mix_routes, one_routes = tmp_path / "mix.tsv", tmp_path / "one.tsv"
    r = optimum("--topology", net("ft2-8x4-degraded"), "--orders",
                "order,quarters,halves", "--routes", str(mix_routes))
    assert r["optimal"] and r["orders"] == ["order", "quarters", "halves"]
    assert r["best"] == pytest.approx(0.7370, abs=5e-4)
    assert r["bound"] == pytest.approx(r["best"], abs=1e-3)
    assert r["groups"]["order"] == pytest.approx(0.565, abs=5e-4)
    assert r["best"] == pytest.approx(sum(r["groups"].values()) / 3)
    fab = ilp.TwoLevel(load_topology(net("ft2-8x4-degraded")))
    groups = ilp.order_groups(fab, list(range(32)),
                              ["order", "quarters", "halves"])
    assert [len(o) for _n, o in groups] == [1, 4, 2]
    assert groups[1][1][3] == list(range(24, 32))
    mix = read_routes(mix_routes, fab)
    assert ilp.group_figures(fab, 1, mix, groups) == pytest.approx(
        r["groups"])
    one = optimum("--topology", net("ft2-8x4-degraded"), "--routes",
                  str(one_routes))
    assert "groups" not in one and "orders" not in one
    assert ilp.mean_of(fab, 1, read_routes(one_routes, fab), groups) <= \
        r["best"] + 1e-9
    assert "mean over order, quarters, halves: shift efficiency" in \
        open(mix_routes).readline()


def test_orders_with_lfts_and_bad_orders():
    """--lfts beside --orders: the dump's figure is its mean over the
    groups, with each group's; bad words and jobs of one host refused."""
    fx = os.path.join(REPO, "tests", "python", "fixtures", "analyze")
    topo = os.path.join(fx, "ft48-l1.subnet.lst")
    r = optimum("--topology", topo, "--lmc", "1", "--orders",
                "order,halves", "--lfts",
                os.path.join(fx, "ft48-l1.lfts.dump"))
    lf = r["lfts"]
    assert set(lf["groups"]) == {"order", "halves"}
    assert lf["efficiency"] == pytest.approx(
        (lf["groups"]["order"] + lf["groups"]["halves"]) / 2)
    assert lf["groups"]["order"] == pytest.approx(0.833, abs=5e-4)
    # --orders names the groups the dump is measured over, one or more
    one = optimum("--topology", topo, "--lmc", "1", "--orders", "order",
                  "--lfts", os.path.join(fx, "ft48-l1.lfts.dump"))
    assert one["groups"].keys() == one["lfts"]["groups"].keys() == {"order"}
    assert one["lfts"]["groups"]["order"] == pytest.approx(
        lf["groups"]["order"])
    for words, msg in (("order,leaf", "unknown rank order 'leaf'"),
                       ("random:0", "unknown rank order 'random:0'"),
                       ("order,order", "a rank order named twice")):
        p = run_script(OPT, ["--topology", topo, "--orders", words])
        assert p.returncode == 2 and msg in p.stderr, words
        assert "Traceback" not in p.stderr
    hand = os.path.join(fx, "hand2x2.net")
    p = run_script(OPT, ["--topology", hand, "--orders", "quarters"])
    assert_usage_error(p, "route-optimum: %s:0: --orders quarters: 4 hosts "
                       "make jobs of fewer than 2" % hand)


def test_lfts_in_the_random_orders():
    """--lfts with --random-orders: the dump's routing in the same random
    orders as the routing found (seeds 1..N of random_ranks())."""
    fx = os.path.join(REPO, "tests", "python", "fixtures", "analyze")
    topo, dump = (os.path.join(fx, "ft4-l1.subnet.lst"),
                  os.path.join(fx, "ft4-l1.lfts.dump"))
    r = optimum("--topology", topo, "--lmc", "1", "--lfts", dump,
                "--random-orders", "3")
    t = load_topology(topo)
    fab = ilp.TwoLevel(t)
    given = ilp.routes_of_lfts(fab, t, load_lfts(dump), 2)
    each = [ilp.evaluate(fab, ilp.random_ranks(fab, s), 2, given)
            for s in (1, 2, 3)]
    assert r["lfts"]["random"]["each"] == pytest.approx(each)
    assert r["lfts"]["random"]["mean"] == pytest.approx(sum(each) / 3)
    assert r["random"]["seeds"] == r["lfts"]["random"]["seeds"] == 3
    assert min(each) < 1.0


def test_lfts_with_a_hostfile_of_some_hosts(tmp_path):
    """--lfts with a hostfile naming 4 of ft4's 16 hosts, one a leaf: the
    dump is measured over those hosts alone (4 leaves x 3 hosts on other
    leaves x 2 LIDs), as the routing found."""
    fx = os.path.join(REPO, "tests", "python", "fixtures", "analyze")
    hf = tmp_path / "hosts"
    hf.write_text("h1\nh5\nh9\nh13\n")
    r = optimum("--topology", os.path.join(fx, "ft4-l1.subnet.lst"),
                "--lmc", "1", "--hostfile", str(hf), "--lfts",
                os.path.join(fx, "ft4-l1.lfts.dump"))
    lf = r["lfts"]
    assert r["hosts"] == 4 and lf["entries"] == 24
    assert lf["rounds"] == 3 and 0 <= lf["differ"] <= 24
    assert lf["efficiency"] == pytest.approx(1.0)
