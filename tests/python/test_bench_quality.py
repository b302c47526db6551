"""scripts/bench-quality: command-line errors and one small --quick run on
ft2-8x4 (three configurations x LMC 0..2, both rank orders)."""

import json
import os
import subprocess

import pytest

from conftest import PYTHON, REPO, assert_usage_error, requires_plugin

from osmoffset import benchcells, fabric, quality
from osmoffset.rankorder import natural_key

BENCH = os.path.join(REPO, "scripts", "bench-quality")


def bench(args, **kw):
    return subprocess.run([PYTHON, BENCH] + args, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True,
                          timeout=120, **kw)


def test_help_names_options_fabrics_and_configs():
    p = bench(["--help"])
    assert p.returncode == 0
    for word in ("--out", "--jobs", "--quick", "--fabrics", "--configs",
                 "--lmc", "--force", "--doc", "--json", "ft2-648",
                 "ft2-648-degraded", "kary-6-3", "ft2-trunk4-128",
                 "ft2-oversub-576", "ours-updn", "ours-minhop", "plain-updn",
                 "updn-portshift", "updn-scatter", "ftree", "dfsssp",
                 "updn-rootsnone", "Exit status"):
        assert word in p.stdout, word


@pytest.mark.parametrize("args, message", [
    (["--fabrics", "nope"], "bench-quality: --fabrics: unknown fabric 'nope'"),
    (["--quick", "--fabrics", "ft2-648"],
     "bench-quality: --fabrics: ft2-648 is a big fabric; --quick takes "
     "curated ones only"),
    (["--configs", "updn,bogus"],
     "bench-quality: --configs: unknown configuration 'bogus'"),
    (["--lmc", "0,x"],
     "bench-quality: --lmc: not a comma-separated list of numbers: '0,x'"),
    (["--lmc", "5"], "bench-quality: --lmc: values must be 0..3"),
    (["--jobs", "0"], "bench-quality: --jobs must be >= 1"),
])
def test_bad_usage_is_one_line_exit_2(tmp_path, args, message):
    assert_usage_error(bench(args + ["--out", str(tmp_path / "o")]), message)


def test_single_path_bound_of_the_degraded_2level_fabric():
    """ft2-8x4-degraded: leaf-003/004/006 keep 3 uplinks for 4 hosts.  In
    topology order rounds 1-3 and 29-31 need at most 3 uplinks per leaf
    (efficiency 1); in the other 25 rounds such a leaf sends 4 flows, so
    one uplink carries 2 single-path flows (1/2), or 3 half flows with
    two LIDs per flow (2/3)."""
    topo = fabric.load_topology(os.path.join(
        REPO, "sim-topologies", "ft2-8x4-degraded.net"))
    leaf_of, uplinks, order = quality.leaf_layout(topo)
    assert order == ["h%04d" % i for i in range(32)]
    names = {topo.nodes[g].desc: u for g, u in uplinks.items()}
    assert [names["leaf-%03d" % i] for i in range(8)] == \
        [4, 4, 4, 3, 3, 4, 3, 4]
    assert quality.path_bound(order, leaf_of, uplinks, 1) == \
        pytest.approx((6 + 25 * 0.5) / 31, abs=1e-12)
    assert quality.path_bound(order, leaf_of, uplinks, 2) == \
        pytest.approx((6 + 25 * 2 / 3) / 31, abs=1e-12)


def test_reachable_optimum_of_the_degraded_2level_fabric(tmp_path,
                                                        monkeypatch):
    """route-optimum's exact figure, cached by net hash; full-bisection,
    big and 3-level fabrics are skipped with the reason."""
    pytest.importorskip("scipy.optimize", reason="python3-scipy missing")
    net = os.path.join(REPO, "sim-topologies", "ft2-8x4-degraded.net")
    info = {"net": net, "hosts": 32, "sha": benchcells.file_sha(net)}
    (tmp_path / "fabrics").mkdir()
    res = quality.reachable_optimum(str(tmp_path), "ft2-8x4-degraded", info,
                                    [0], lambda msg: None)
    assert res["lmc"]["0"] == pytest.approx(0.565, abs=5e-4)
    # the routing found, in the random orders of seeds 1-20
    assert 0 < res["random"]["0"] < res["lmc"]["0"]
    cache = tmp_path / "fabrics" / "ft2-8x4-degraded.optimum.json"
    assert json.loads(cache.read_text()) == res
    # a second call reads the cache: no solver run (the solver is gone)

    def no_solver(*args, **kw):
        raise AssertionError("route-optimum called again")
    with monkeypatch.context() as m:
        m.setattr(benchcells, "route_optimum", no_solver)
        assert quality.reachable_optimum(str(tmp_path), "ft2-8x4-degraded",
                                         info, [0], lambda msg: None) == res
    # a cache of an older bench-quality, without the random orders, is
    # solved again
    old = dict(res)
    del old["random"]
    cache.write_text(json.dumps(old))
    assert quality.reachable_optimum(str(tmp_path), "ft2-8x4-degraded",
                                     info, [0], lambda msg: None) == res
    assert quality.reachable_optimum(str(tmp_path), "ft2-8x4", dict(info),
                                     [0], None) == \
        {"skipped": "full bisection"}
    kary = os.path.join(REPO, "sim-topologies", "kary-4-3-degraded.net")
    res = quality.reachable_optimum(str(tmp_path), "kary-4-3-degraded",
                                    {"net": kary, "hosts": 64,
                                     "sha": benchcells.file_sha(kary)}, [0],
                                    lambda msg: None)
    assert "not a 2-level fat tree" in res["skipped"]


def test_reachable_optimum_with_the_lids_apart(tmp_path):
    """At LMC > 0 also the optimum of the routings with each flow's LIDs
    on different spines (route-optimum --lids-apart), its routing in the
    random orders, and how many flows the unconstrained optimum's routing
    puts together; a cache without them is solved again."""
    pytest.importorskip("scipy.optimize", reason="python3-scipy missing")
    net = os.path.join(REPO, "sim-topologies", "ft2-8x4-degraded.net")
    info = {"net": net, "hosts": 32, "sha": benchcells.file_sha(net)}
    (tmp_path / "fabrics").mkdir()
    res = quality.reachable_optimum(str(tmp_path), "ft2-8x4-degraded", info,
                                    [0, 1], lambda msg: None)
    assert res["lmc"]["1"] == pytest.approx(0.665, abs=5e-4)
    assert res["apart"] == {"1": pytest.approx(0.613, abs=5e-4)}
    # which of the equally good routings the solver returns is its own:
    # only the optimum is pinned
    assert 0 < res["apart_random"]["1"] < res["apart"]["1"]
    assert res["shared"]["1"]["of"] == 224
    assert res["shared"]["1"]["flows"] > 0
    cache = tmp_path / "fabrics" / "ft2-8x4-degraded.optimum.json"
    old = dict(res)
    del old["apart"]
    cache.write_text(json.dumps(old))
    assert quality.reachable_optimum(str(tmp_path), "ft2-8x4-degraded",
                                     info, [0, 1], lambda msg: None) == res


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bq")
    args = ["--quick", "--fabrics", "ft2-8x4",
            "--configs", "updn,ours-updn,ours-minhop", "--out", str(out),
            "--json", "--quiet"]
    p = bench(args)
    return out, args, p


@requires_plugin
def test_quick_run_structure(quick_run):
    out, _, p = quick_run
    assert p.returncode == 0, p.stderr
    assert p.stderr == ""
    doc = json.loads(p.stdout)
    assert sorted(doc) == ["cells", "fabrics", "goals", "meta"]
    assert doc["meta"]["fabrics"] == ["ft2-8x4"]
    assert doc["meta"]["configs"] == ["updn", "ours-updn", "ours-minhop"]
    assert doc["meta"]["lmcs"] == [0, 1, 2]
    assert doc["meta"]["cells"] == 9 and doc["meta"]["routed"] == 9
    fab = doc["fabrics"]["ft2-8x4"]
    assert (fab["hosts"], fab["switches"], fab["klass"]) == (32, 12, "full")
    assert os.path.realpath(fab["net"]) == os.path.realpath(
        os.path.join(REPO, "sim-topologies", "ft2-8x4.net"))
    with open(fab["hostfile"]) as f:
        hosts = f.read().split()
    assert sorted(hosts) == ["h%04d" % i for i in range(32)]
    assert hosts != sorted(hosts)           # shuffled
    assert fab["path_bound"] == {o: {str(l): 1.0 for l in range(4)}
                                 for o in ("topo", "random")}
    cells = {(c["config"], c["lmc"]): c for c in doc["cells"]}
    assert sorted(cells) == sorted((c, l) for c in
                                   ("updn", "ours-updn", "ours-minhop")
                                   for l in (0, 1, 2))
    for (cfg, lmc), c in cells.items():
        assert c["status"] == "ok" and c["note"] == "", (cfg, lmc, c)
        assert c["fallback"] is False
        assert c["engine_used"] == ("minhop" if cfg == "ours-minhop"
                                    else "updn")
        assert sorted(c["orders"]) == ["random", "topo"]
        for order, o in c["orders"].items():
            assert o["valid"] is True and o["credit_loop"] is False
            assert (o["spread"] is None) == (lmc == 0)
            assert o["bound"] == 1.0
        assert c["orders"]["topo"]["rank_order"] == "topology order"
        assert c["orders"]["random"]["rank_order"] == \
            "hostfile " + fab["hostfile"]
        assert os.path.isfile(os.path.join(out, "runs", "ft2-8x4", cfg,
                                           "lmc%d" % lmc, "cell.json"))
    # the 'ours' rows are never below stock updn, in every figure
    for lmc in (0, 1, 2):
        for order in ("topo", "random"):
            s = cells[("updn", lmc)]["orders"][order]
            for ours in ("ours-updn", "ours-minhop"):
                o = cells[(ours, lmc)]["orders"][order]
                assert o["base"] >= s["base"] - 1e-9, (ours, lmc, order)
                if lmc:
                    assert o["spread"] >= s["spread"] - 1e-9
                if order == "topo":
                    assert o["base"] >= 0.95
    goals = [(g["config"], g["goal"], g["pass"]) for g in doc["goals"]]
    assert goals == [(c, g, True) for c in ("ours-updn", "ours-minhop")
                     for g in ("target", "vs-updn", "sound")]
    with open(os.path.join(out, "results.json")) as f:
        assert json.load(f)["goals"] == doc["goals"]


@requires_plugin
def test_rerun_uses_the_cache_and_prints_the_table(quick_run):
    out, args, _ = quick_run
    text_args = [a for a in args if a != "--json"]
    p = bench(text_args)
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0] == "== topology rank order =="
    assert lines[1].split() == ["fabric", "config", "L0", "base", "L1",
                                "base", "L1", "spread", "L2", "base", "L2",
                                "spread", "bound", "bound1", "notes"]
    rows = [l.split() for l in lines if l.startswith("ft2-8x4 ")]
    assert [r[1] for r in rows] == ["updn", "ours-updn", "ours-minhop"] * 2
    assert "== random rank order ==" in lines
    assert lines[-1].startswith("6 of 6 goals PASS; 9 cells (0 routed) in ")


@requires_plugin
def test_random_recheck_repeats_this_runs_order_first(quick_run):
    """The re-measurement in several shuffles starts with seed 1, the
    order of the run itself: its first figure is the cell's own."""
    out, _, p = quick_run
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    cell = [c for c in doc["cells"]
            if c["config"] == "ours-updn" and c["lmc"] == 1][0]
    with open(doc["fabrics"]["ft2-8x4"]["hostfile"]) as f:
        hosts = sorted(f.read().split(), key=natural_key)
    for what in ("base", "spread"):
        effs = quality.seed_efficiencies(cell["dir"], 1, what, hosts, 3)
        assert len(effs) == 3 and all(0 < e <= 1 for e in effs)
        assert effs[0] == pytest.approx(cell["orders"]["random"][what],
                                        abs=1e-12)
    # a different shuffle gives a different figure on this fabric
    assert len(set(round(e, 9) for e in effs)) > 1


# ----------------------------------------------------------------------
# regression case (issue 14, fixed): LID offset routes on a degraded tree

@pytest.fixture(scope="module")
def regression_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("bq-reg")
    p = bench(["--quick", "--fabrics", "ft2-8x4", "--configs", "updn",
               "--lmc", "0", "--regressions", "yes", "--out", str(out),
               "--json", "--quiet"])
    doc = json.loads(p.stdout) if p.stdout.strip() else None
    return p, doc


@requires_plugin
def test_lid_offset_regression_case_is_run(regression_run):
    """The case is run as a goal like any other (no longer a known
    failure): a failure fails the run and names the slower offset."""
    p, doc = regression_run
    assert doc is not None, p.stderr
    g = [g for g in doc["goals"] if g["goal"] == "lid-offsets"]
    assert len(g) == 1
    g = g[0]
    assert (g["fabric"], g["config"], g["known_failure"]) == \
        ("ft2-16x8-degraded-s6", "ours-updn", None)
    assert len(g["offset_ratio"]) == 4          # LMC 2: base .. base+3
    assert p.returncode == (0 if g["pass"] else 1), p.stderr
    if not g["pass"]:
        bad = [k for k, r in enumerate(g["offset_ratio"]) if r > 1.0]
        assert bad and g["detail"].startswith("base+%d " % bad[0])


@requires_plugin
def test_lid_offset_routes_no_slower_than_stock(regression_run):
    """On ft2-16x8-degraded-s6 at LMC 2 our base+k routes were slower than
    stock updn's (issue 14); the stock guard and the far base-LID detours
    fixed it."""
    _p, doc = regression_run
    g = [g for g in doc["goals"] if g["goal"] == "lid-offsets"][0]
    assert g["pass"], g["detail"]
    assert max(g["offset_ratio"]) <= 1.0
