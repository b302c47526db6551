"""Tests of scripts/bench-shapes (stock updn and osmoffset on random
cluster shapes) and of osmoffset.shapes, which draws the shapes and
judges the cells.

Run: /usr/bin/python3 -m pytest tests/python/test_bench_shapes.py
The end-to-end test routes one 52-host shape twice on ibsim (about 5 s).
"""

import json
import os
import random
import shutil

import pytest

from conftest import REPO, requires_plugin, run_with_plugin

BENCH = os.path.join(REPO, "scripts", "bench-shapes")
TINY = os.path.join(REPO, "tests", "python", "fixtures", "realfab",
                    "tiny-ndr-nosharp.net")
HAVE_SIM = bool(shutil.which("ibsim") and shutil.which("opensm"))


def bench(*args, timeout=300):
    return run_with_plugin(BENCH, args, timeout)


@pytest.mark.parametrize("args,needle", [
    (["--shapes", "0"], "'0': want a number of at least 1"),
    (["--first-seed", "x"], "'x': want a number of at least 1"),
    (["--lmc", "5"], "--lmc: values must be 0..3"),
    (["--jobs", "-1"], "'-1': want a number of at least 1"),
    (["--remove-links", "0.1"], "--remove-links needs --net"),
    (["--net", "/nonexistent.net"], "--net /nonexistent.net: no such file"),
    (["--net", TINY, "--remove-links", "1"], "a fraction in [0, 1) expected"),
])
def test_bad_usage_exits_2(args, needle):
    p = bench(*args)
    assert p.returncode == 2
    assert needle in p.stderr and "Traceback" not in p.stderr


def test_a_seed_draws_the_same_shape(tmp_path):
    from osmoffset import shapes
    a = shapes.draw_shape(random.Random(7))
    assert a == shapes.draw_shape(random.Random(7))
    assert a[0] == "cluster" and "--random-guids" in a
    assert a != shapes.draw_shape(random.Random(8))
    # seed 1's first two draws ask gen-fabric for more than it can build
    # (no free port, edges that share no spine): the third is the shape
    rng = random.Random(1)
    draws = [shapes.draw_shape(rng) for _ in range(3)]
    os.makedirs(str(tmp_path / "fabrics"))
    net, args = shapes.make_fabric(str(tmp_path), 1)
    assert args == draws[2]
    assert net == str(tmp_path / "fabrics" / "shape-1.net")
    assert os.path.getsize(net) > 0


def test_a_seed_degrades_the_given_fabric(tmp_path):
    from osmoffset import degrade, shapes
    os.makedirs(str(tmp_path / "fabrics"))
    net, args = shapes.make_fabric(str(tmp_path), 3, TINY, 0.5)
    assert args == ["degrade", "--net", TINY, "--remove-links", "0.5",
                    "--seed", "3"]
    with open(TINY) as f:
        want, gone = degrade.degrade_text(f.read(), TINY, 0.5, 3)
    with open(net) as f:
        got = f.read()
    assert got.count("# removed link ") == len(gone) == 2
    assert [l for l in got.splitlines() if not l.startswith("# ")] == \
        [l for l in want.splitlines() if not l.startswith("# ")]
    # a fabric that cannot lose that many cables is no shape
    net, why = shapes.make_fabric(str(tmp_path), 4, TINY, 0.9)
    assert net is None and "could take out only 2" in why


def cell(base, unreachable=0, loop=False, random_base=None):
    orders = {o: {"base": base, "spread": None}
              for o in ("leaf", "quarter", "half", "random")}
    if random_base is not None:
        orders["random"]["base"] = random_base
    return {"status": "ok", "credit_loop": loop, "hosts": 32,
            "unreachable_pairs": unreachable, "orders": orders}


def test_findings_name_what_ours_do_worse():
    from osmoffset import shapes
    row = {"seed": 3, "net": "x.net", "args": ["cluster"],
           "updn": {0: cell(0.5), 2: cell(0.5, unreachable=4, loop=True)},
           "osmoffset": {0: cell(0.5, random_base=0.4),
                         2: cell(0.45, unreachable=6, loop=True)}}
    assert shapes.findings(row, 0) == [
        ("below", "random base 0.400 < 0.500")]
    f = shapes.findings(row, 2)
    assert ("loop", "credit loop") in f
    assert ("reach", "6 host/LID pairs without a route, stock updn 4 "
            "(stock has a credit loop)") in f
    assert ("below", "leaf base 0.450 < 0.500 (stock leaves 4 pairs "
            "without a route; stock has a credit loop)") in f
    s = shapes.summary([row], [0, 2])
    assert (s["shapes"], s["cells"], s["loop"], s["reach"],
            s["reach_valid"], s["below"], s["below_valid"],
            s["below_structured_valid"]) == (1, 2, 1, 1, 0, 5, 1, 0)
    # where stock updn has no credit loop, a 'reach' says nothing of one
    row["updn"][2] = cell(0.5, unreachable=4)
    assert ("reach", "6 host/LID pairs without a route, stock updn 4") \
        in shapes.findings(row, 2)
    assert shapes.summary([row], [0, 2])["reach_valid"] == 1
    # a figure within the tolerance is no finding
    row["osmoffset"][0] = cell(0.4996)
    assert shapes.findings(row, 0) == []
    row["osmoffset"][0] = {"status": "error", "error": "osm-sim exit 3"}
    assert shapes.findings(row, 0) == [("error",
                                        "osmoffset: osm-sim exit 3")]


@requires_plugin
@pytest.mark.skipif(not HAVE_SIM, reason="ibsim/opensm missing")
def test_one_shape_end_to_end(tmp_path):
    p = bench("--shapes", "1", "--first-seed", "2", "--lmc", "0",
              "--out", str(tmp_path), "--json")
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert doc["lmcs"] == [0]
    (row,) = doc["rows"]
    assert row["seed"] == 2 and os.path.isfile(row["net"])
    assert "--spines" in row["args"]
    ours, stock = row["osmoffset"]["0"], row["updn"]["0"]
    assert ours["status"] == stock["status"] == "ok"
    assert ours["engine_used"] == stock["engine_used"] == "updn"
    assert not ours["credit_loop"] and ours["unreachable_pairs"] == 0
    assert ours["orders"]["leaf"]["base"] > stock["orders"]["leaf"]["base"]
    assert doc["summary"]["cells"] == 1 and doc["summary"]["loop"] == 0
    assert row["findings"]["0"] == []


@requires_plugin
@pytest.mark.skipif(not HAVE_SIM, reason="ibsim/opensm missing")
def test_a_degraded_fabric_of_ones_own_end_to_end(tmp_path):
    p = bench("--net", TINY, "--remove-links", "0.25", "--shapes", "1",
              "--lmc", "0", "--out", str(tmp_path), "--json")
    assert p.returncode == 0, p.stderr
    (row,) = json.loads(p.stdout)["rows"]
    assert row["args"] == ["degrade", "--net", os.path.abspath(TINY),
                           "--remove-links", "0.25", "--seed", "1"]
    with open(row["net"]) as f:
        assert f.read().count("# removed link ") == 1
    ours, stock = row["osmoffset"]["0"], row["updn"]["0"]
    assert ours["status"] == stock["status"] == "ok"
    assert ours["hosts"] == stock["hosts"] == 4
    assert not ours["credit_loop"] and ours["unreachable_pairs"] == 0
    assert row["findings"]["0"] == []
