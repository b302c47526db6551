"""Tests of scripts/bench-degraded (shift-alltoall efficiency on randomly
degraded 2-level fat trees).

Run: /usr/bin/python3 -m pytest tests/python/test_bench_degraded.py
The end-to-end test routes one 32-host fabric three ways on ibsim and
solves its optimum (about 15 s).
"""

import json
import os
import shutil

import pytest

from conftest import REPO, plugin_dir, requires_plugin, run_with_plugin

BENCH = os.path.join(REPO, "scripts", "bench-degraded")
HAVE_SIM = bool(shutil.which("ibsim") and shutil.which("opensm"))


def bench(*args, timeout=300):
    return run_with_plugin(BENCH, args, timeout)


@pytest.mark.parametrize("args,needle", [
    (["--sizes", "1x4"], "want LEAVESxSPINES"),
    (["--sizes", "8y4"], "want LEAVESxSPINES"),
    (["--seeds", "x"], "want N-M"),
    (["--remove", "1.5"], "--remove must be between 0 and 1"),
    (["--lmc", "4"], "--lmc: 4 is out of range 0..3"),
    (["--baseline-plugin-dir", "/nonexistent"], "no libosmoffset.so in"),
    (["--plugin-option", "polish_kicks"], "--plugin-option: bad token "
     "'polish_kicks' (KEY=VAL)"),
])
def test_bad_usage_exits_2(args, needle):
    p = bench(*args)
    assert p.returncode == 2
    assert needle in p.stderr and "Traceback" not in p.stderr


@requires_plugin
@pytest.mark.skipif(not HAVE_SIM, reason="ibsim/opensm missing")
def test_one_fabric_three_ways(tmp_path):
    pytest.importorskip("scipy.optimize", reason="python3-scipy missing")
    p = bench("--sizes", "8x4", "--seeds", "2", "--out", str(tmp_path),
              "--baseline-plugin-dir", plugin_dir(), "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["configs"] == ["updn", "osmoffset", "baseline"]
    (row,) = doc["rows"]
    assert (row["size"], row["seed"], row["hosts"]) == ("8x4", 2, 32)
    assert os.path.isfile(row["net"])
    ours, stock = row["osmoffset"]["base"], row["updn"]["base"]
    # the same plugin as baseline routes identically
    assert row["baseline"]["base"] == ours
    # no routing beats the optimum, and the optimum not the leaf bound
    assert 0 < stock <= row["optimum"]["base"] + 1e-9
    assert 0 < ours <= row["optimum"]["base"] + 1e-9
    assert row["optimum"]["base"] <= row["updn"]["bound"] + 1e-9
    # gen-fabric removed cables: the fabric is degraded
    assert row["updn"]["bound"] < 1.0


@requires_plugin
@pytest.mark.skipif(not HAVE_SIM, reason="ibsim/opensm missing")
def test_lmc_measures_striped_traffic(tmp_path):
    """--lmc 1: routed at LMC 1, the figures of traffic striped over both
    LIDs, beside the optimum and the optimum with each flow's LIDs apart
    (which the unconstrained one bounds)."""
    pytest.importorskip("scipy.optimize", reason="python3-scipy missing")
    p = bench("--sizes", "8x4", "--seeds", "2", "--lmc", "1", "--out",
              str(tmp_path), "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["lmc"] == 1 and doc["configs"] == ["updn", "osmoffset"]
    (row,) = doc["rows"]
    opt, apart = row["optimum"]["spread"], row["apart"]["spread"]
    assert 0 < apart <= opt + 1e-9
    for c in ("updn", "osmoffset"):
        assert 0 < row[c]["spread"] <= opt + 1e-9
        assert 0 < row[c]["base"] <= 1.0
    # the striped traffic of port offsetting beats stock updn's here
    assert row["osmoffset"]["spread"] > row["updn"]["spread"]
    with open(os.path.join(str(tmp_path), "runs", "d8x4-s2", "osmoffset",
                           "osm-sim.json")) as f:
        assert json.load(f)["lmc"] == 1
    p = bench("--sizes", "8x4", "--seeds", "2", "--lmc", "1", "--out",
              str(tmp_path), "--optimum-max-hosts", "0")
    assert p.returncode == 0, p.stderr
    assert p.stdout.startswith("LMC 1: traffic striped over the 2 LIDs")


@requires_plugin
@pytest.mark.skipif(not HAVE_SIM, reason="ibsim/opensm missing")
def test_plugin_option_is_the_osmoffset_columns(tmp_path):
    """--plugin-option goes to the osmoffset column's plugin only: with
    polish_kicks=200 on the 8x4 tree of seed 1 at LMC 1 the kicks raise
    its striped traffic (0.661 -> 0.672), the baseline, the same build
    with its defaults, stays as the plugin routes without them."""
    p = bench("--sizes", "8x4", "--seeds", "1", "--lmc", "1", "--out",
              str(tmp_path), "--optimum-max-hosts", "0",
              "--baseline-plugin-dir", plugin_dir(), "--plugin-option",
              "polish_kicks=200", "--json")
    assert p.returncode == 0, p.stderr
    (row,) = json.loads(p.stdout)["rows"]
    assert row["osmoffset"]["spread"] == pytest.approx(0.672, abs=5e-4)
    assert row["baseline"]["spread"] == pytest.approx(0.661, abs=5e-4)
    runs = os.path.join(str(tmp_path), "runs", "d8x4-s1")
    for config, kicks in (("osmoffset", True), ("baseline", False)):
        with open(os.path.join(runs, config, "opensm.conf")) as f:
            assert ("polish_kicks=200" in f.read()) == kicks
