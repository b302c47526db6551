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
    (["--baseline-plugin-dir", "/nonexistent"], "no libosmoffset.so in"),
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
