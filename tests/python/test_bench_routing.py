"""Tests of scripts/bench-routing (routing time / RSS / LFT churn bench).

Run: /usr/bin/python3 -m pytest tests/python/test_bench_routing.py
The end-to-end test routes sim-topologies/kary-4-3.net with stock updn
and osmoffset on ibsim (about 15 s); no timing is asserted.
"""

import json
import os
import shutil

import pytest

from conftest import REPO, TOPO_DIR, requires_plugin, run_with_plugin
from osmoffset import fabric, routingbench

BENCH = os.path.join(REPO, "scripts", "bench-routing")
HAVE_SIM = bool(shutil.which("ibsim") and shutil.which("opensm") and
                shutil.which("dump_fts"))
needs_sim = pytest.mark.skipif(not HAVE_SIM, reason="ibsim/opensm missing")


def bench(*args, timeout=120):
    return run_with_plugin(BENCH, args, timeout)


def own_diff(path_a, path_b):
    """Changed (switch, 64-LID block) pairs and changed entries between two
    LFT dumps, read with pylib's parser (independent of the bench's)."""
    a, b = fabric.load_lfts(path_a), fabric.load_lfts(path_b)
    blocks, entries = set(), 0
    for g in set(a.switches) | set(b.switches):
        la = a.switches[g].lft if g in a.switches else {}
        lb = b.switches[g].lft if g in b.switches else {}
        for lid in set(la) | set(lb):
            if la.get(lid) != lb.get(lid):
                entries += 1
                blocks.add((g, lid // 64))
    return len(blocks), entries


@pytest.mark.parametrize("args,msg", [
    (["--engines", "updn,bogus"], "unknown engine 'bogus'"),
    (["--lmc", "0,9"], "--lmc: 9 is not 0..7"),
    (["--fabrics", "1000"], "unknown fabric '1000'"),
    (["--net", "/nonexistent.net"], "--net /nonexistent.net: no such file"),
    (["--repeat", "0"], "--repeat must be >= 1"),
])
def test_bad_options_exit_2(args, msg):
    r = bench(*args)
    assert r.returncode == 2
    assert msg in r.stderr
    assert "Traceback" not in r.stderr


def test_bad_net_file_names_file_and_line(tmp_path):
    bad = tmp_path / "bad.net"
    bad.write_text('Switch 4 "s"\n[9] "h"[1]\n')
    r = bench("--net", str(bad))
    assert r.returncode == 2
    assert "bad.net:2: port 9 out of range" in r.stderr


def test_lft_reader_and_block_diff(tmp_path):
    m = routingbench
    hdr = ("Unicast lids [0-%d] of switch Lid %d guid 0x%016x ('s%d'):\n")
    a = tmp_path / "a.dump"
    b = tmp_path / "b.ibroute"
    # switch 1: LIDs 1..130; switch 2: LIDs 1..3
    a.write_text(hdr % (130, 1, 1, 1) + "".join(
        "0x%04x %03u # x\n" % (l, l % 3 + 1) for l in range(1, 131)) +
        "130 lids dumped\n" + hdr % (3, 2, 2, 2) +
        "0x0001 001 # y\n0x0002 002 # y\n0x0003 000 # y\n3 lids dumped\n")
    # the ibroute format: LID 5 and 70 change port, LID 130 disappears,
    # switch 2 unchanged
    lines = []
    for l in range(1, 130):
        p = l % 3 + 1
        if l in (5, 70):
            p = 9
        lines.append("0x%04x %03u : (Channel Adapter portguid 0x1: 'h')\n"
                     % (l, p))
    b.write_text(
        "Unicast lids [0x0-0x82] of switch DR path slid 0; dlid 0; 0,1 "
        "guid 0x0000000000000001 (s1):\n  Lid  Out   Destination\n"
        "       Port     Info \n" + "".join(lines) +
        "129 valid lids dumped \n"
        "Unicast lids [0x0-0x3] of switch Lid 2 guid 0x0000000000000002 "
        "(s2):\n0x0001 001 : (x)\n0x0002 002 : (x)\n0x0003 000 : (x)\n")
    ta, tb = fabric.load_lft_arrays(str(a)), fabric.load_lft_arrays(str(b))
    assert sorted(ta) == [1, 2]
    assert list(ta[2][:4]) == [255, 1, 2, 0]
    assert ta[1][64] == 64 % 3 + 1 and tb[1][70] == 9
    # blocks: LID 5 -> block 0, LID 70 -> block 1, LID 130 -> block 2
    assert m.diff_lfts(ta, tb) == (3, 3)
    assert m.diff_lfts(ta, ta) == (0, 0)


@needs_sim
@requires_plugin
def test_kary_4_3_updn_and_osmoffset(tmp_path):
    out = tmp_path / "out"
    r = bench("--net", os.path.join(TOPO_DIR, "kary-4-3.net"),
              "--engines", "updn,osmoffset", "--lmc", "0", "--json",
              "--out", str(out), "--nudge", "10")
    assert r.returncode == 0, r.stderr
    rep = json.loads(r.stdout)
    cells = rep["cells"]
    assert [c["engine"] for c in cells] == ["updn", "osmoffset"]
    for c in cells:
        assert c["status"] == "ok", c.get("error")
        for f in ("route_s", "rss_mb", "reroute_s", "fail_blocks",
                  "fail_entries", "resweep_blocks", "resweep_entries"):
            assert isinstance(c[f], (int, float)) and c[f] >= 0, (f, c[f])
        assert c["rss_mb"] > 0
        assert c["requested"] == "updn" and c["engine_used"] == "updn"
        assert c["engine_used_after"] == "updn"
        assert c["lft_source"] == "dump"
        assert c["failed_link"] == "sw-l1-0001[5]-sw-l2-0000[2]"
        assert c["resweep_blocks"] == 0 and c["resweep_entries"] == 0
        assert c["fail_blocks"] > 0 and c["fail_entries"] >= c["fail_blocks"]
        d = out / os.path.basename(c["dir"])
        assert c["lft_files"] == ["lfts-before.dump",
                                  "lfts-after-failure.dump",
                                  "lfts-resweep.dump"]
        before, after, resweep = [str(d / f) for f in c["lft_files"]]
        assert own_diff(before, after) == (c["fail_blocks"],
                                           c["fail_entries"])
        assert own_diff(after, resweep) == (0, 0)
        # the failed link is gone from the LFTs: no LID leaves
        # sw-l1-0001 through port 5 any more, and some did before
        sw = [s for s in fabric.load_lfts(after).switches.values()
              if s.desc == "sw-l1-0001"][0]
        assert 5 not in sw.lft.values()
        sw0 = [s for s in fabric.load_lfts(before).switches.values()
               if s.desc == "sw-l1-0001"][0]
        assert 5 in sw0.lft.values()
    assert cells[1]["mode"] == "on" and cells[0]["mode"] == "stock"
    assert json.loads((out / "report.json").read_text())["complete"]
    assert rep["machine"]["nproc"] >= 1
    assert rep["command"].startswith("scripts/bench-routing --net ")
