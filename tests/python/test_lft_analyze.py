"""Tests of the LFT analyzer (pylib/osmoffset/analyze.py, scripts/lft-analyze).

Fixtures live in fixtures/analyze/: the ft*/dual* files were made by stock
opensm 3.3.23 (updn) on ibsim (see regen.sh there); hand2x2* and ring3* are
hand-made.
"""

import csv
import json
import os
import re
import subprocess
import sys

import numpy as np
import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
TOP = os.path.normpath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(TOP, "pylib"))

from conftest import rename_hosts  # noqa: E402
from osmoffset.analyze import Analysis  # noqa: E402
from osmoffset.fabric import (InputError, load_lfts,  # noqa: E402
                              load_topology,
                              parse_lfts_text, parse_topology_text)

FIX = os.path.join(HERE, "fixtures", "analyze")
TOOL = os.path.join(TOP, "scripts", "lft-analyze")


def fx(name):
    return os.path.join(FIX, name)


def analyse(lfts, topo, **kw):
    if isinstance(lfts, str):
        lfts = load_lfts(fx(lfts))
    if isinstance(topo, str):
        topo = load_topology(fx(topo))
    an = Analysis(topo, lfts, bisections=kw.pop("bisections", 4), **kw)
    an.run()
    return an


def run_tool(*args):
    p = subprocess.run([sys.executable, TOOL] + list(args),
                       capture_output=True, text=True)
    return p.returncode, p.stdout, p.stderr


# ------------------------------------------------------------------------
# The hand-worked fabric: hand2x2.net
#
#   leaf1 (h1 port 1, h2 port 2)  leaf2 (h3 port 1, h4 port 2)
#   port 3 of each leaf -> spine1, port 4 -> spine2.  LMC 1:
#   h1 = LIDs 16,17  h2 = 18,19  h3 = 20,21  h4 = 22,23.
#
# "aligned" LFTs (what plain round-robin gives): on each leaf the *base* LID
# of both remote hosts goes up port 3 (spine1), the second LID up port 4.
# "shifted" LFTs: the base LID of the second remote host goes up port 4.
#
# Shift pattern, ranks in topology order h1,h2,h3,h4 (N = 4, rounds 1..3):
#   k=1: h1->h2 local, h2->h3, h3->h4 local, h4->h1
#        one flow up each leaf                       -> max link load 1
#   k=2: h1->h3, h2->h4 (both leave leaf1), h3->h1, h4->h2
#        aligned: both base LIDs up leaf1 port 3     -> max load 2
#        shifted: one up port 3, one up port 4       -> max load 1
#   k=3: h1->h4, h2->h1 local, h3->h2, h4->h3 local  -> max load 1
#   base efficiency aligned = (1/1 + 1/2 + 1/1) / 3 = 5/6
#   base efficiency shifted = (1 + 1 + 1) / 3       = 1
# LMC spread: each message goes half over LID+0 and half over LID+1, i.e.
#   half via spine1 and half via spine2: in k=2 leaf1 port 3 carries
#   0.5 + 0.5 = 1 and port 4 carries 1; host links carry 1 -> efficiency 1.
# Leaf bound: at most 2 flows leave a leaf and each leaf has 2 up links:
#   2 / 2 = 1 in every round -> bound efficiency 1.
# Port balance on leaf1 for the remote LIDs 20..23 (candidates ports 3,4):
#   aligned: base LIDs 20,22 both on port 3 -> 2 vs 0 -> imbalance 2;
#            all LIDs: port 3 {20,22}, port 4 {21,23} -> imbalance 0.
# Path diversity: both paths of every cross-leaf pair use different spines
#   -> 8 ordered host pairs on different leaves, none shares a link.
# ------------------------------------------------------------------------

def test_hand_worked_aligned():
    an = analyse("hand2x2-aligned.lfts.dump", "hand2x2.net")
    r = an.result
    assert r["valid"] is True and r["credit_loop"] is False
    assert (r["lmc"], r["hosts"], r["switches"]) == (1, 4, 4)
    assert list(an.curves["base"]) == [1.0, 2.0, 1.0]
    assert r["shift"]["base"]["efficiency"] == pytest.approx(5 / 6)
    assert r["shift"]["base"]["worst"] == 2.0
    assert r["shift"]["base"]["worst_round"] == 2
    assert r["shift"]["base"]["slowdown"] == pytest.approx(1.2)
    assert list(an.curves["spread"]) == [1.0, 1.0, 1.0]
    assert r["shift"]["spread"]["efficiency"] == pytest.approx(1.0)
    assert r["bound"]["efficiency"] == pytest.approx(1.0)
    bal = {s["desc"]: s for s in r["balance"]["switches"]}
    assert (bal["leaf1"]["base_imbalance"], bal["leaf1"]["all_imbalance"]) \
        == (2, 0)
    assert (bal["leaf2"]["base_imbalance"], bal["leaf2"]["all_imbalance"]) \
        == (2, 0)
    assert (bal["spine1"]["base_imbalance"], bal["spine1"]["all_imbalance"]) \
        == (0, 0)
    assert r["balance"]["worst"]["base"] == 2
    s = an.sidx[0x200000]
    assert list(an.port_base[s, 1:5]) == [1, 1, 2, 0]
    assert list(an.port_all[s, 1:5]) == [2, 2, 2, 2]
    assert r["diversity"]["pairs"] == 8
    assert r["diversity"]["links"] == {"0": 8, "1": 0, "2": 0}
    assert r["diversity"]["switches"] == {"0": 8, "1": 0, "2": 0}


def test_hand_worked_shifted():
    an = analyse("hand2x2-shifted.lfts.dump", "hand2x2.net")
    r = an.result
    assert list(an.curves["base"]) == [1.0, 1.0, 1.0]
    assert r["shift"]["base"]["efficiency"] == 1.0
    assert r["balance"]["worst"]["base"] == 0
    assert r["balance"]["worst"]["all"] == 0


def test_hand_worked_hostfile_order(tmp_path):
    # ranks h1, h3, h2, h4 (names and GUIDs mixed) with aligned LFTs:
    #   k=1: h1->h3 and h2->h4 both take base LIDs 20, 22 up leaf1 port 3
    #        -> load 2
    #   k=2: h1->h2, h3->h4, h2->h1, h4->h3 all local -> load 1
    #   k=3: h1->h4 and h2->h3 again up leaf1 port 3 -> load 2
    #   efficiency = (1/2 + 1 + 1/2) / 3 = 2/3
    hf = tmp_path / "hosts"
    hf.write_text("h1\n0x100005   # h3 by port GUID\n\nh2\nh4\n")
    an = analyse("hand2x2-aligned.lfts.dump", "hand2x2.net",
                 hostfile=str(hf))
    assert [an.hosts[i].desc for i in an.ranks] == ["h1", "h3", "h2", "h4"]
    assert list(an.curves["base"]) == [2.0, 1.0, 2.0]
    assert an.result["shift"]["base"]["efficiency"] == pytest.approx(2 / 3)
    # leaf bound: k=1, k=3 send 2 flows over 2 up links -> 1 each round
    assert an.result["bound"]["efficiency"] == pytest.approx(1.0)


def test_leaf_bound_48_port_fabric():
    # ft48: two 48-port leaves, hosts on ports 37-40, 2 up links (45, 46).
    # Flows leaving leaf1 in round k: #{i in 0..3 : (i + k) mod 8 >= 4}
    #   = 1,2,3,4,3,2,1 for k = 1..7; divided by 2 up links and floored
    #   at 1: 1,1,1.5,2,1.5,1,1
    # bound efficiency = (1+1+2/3+1/2+2/3+1+1) / 7 = 0.833333...
    an = analyse("ft48-l1.lfts.dump", "ft48-l1.subnet.lst")
    r = an.result
    assert list(an.curves["bound"]) == [1, 1, 1.5, 2, 1.5, 1, 1]
    assert r["bound"]["efficiency"] == pytest.approx(35 / 42)
    assert r["valid"] and not r["credit_loop"]
    # port counts above port 36: leaf1 hosts on 37..40 (2 LIDs each with
    # LMC 1), the 4 remote hosts' 8 LIDs split over up ports 45 and 46.
    s = an.sidx[[n.guid for n in an.sw_nodes if n.desc == "leaf1"][0]]
    assert list(an.port_all[s, 37:41]) == [2, 2, 2, 2]
    assert list(an.port_base[s, 37:41]) == [1, 1, 1, 1]
    assert (an.port_all[s, 45], an.port_all[s, 46]) == (4, 4)
    assert (an.port_base[s, 45], an.port_base[s, 46]) == (2, 2)
    assert an.port_all[s, :37].sum() == 0
    # the shift curve can never beat the bound
    assert np.all(an.curves["base"] >= an.curves["bound"] - 1e-9)


@pytest.mark.parametrize("lmc", [0, 1, 2])
def test_stock_updn_fat_tree(lmc):
    an = analyse(f"ft4-l{lmc}.lfts.dump", f"ft4-l{lmc}.subnet.lst")
    r = an.result
    assert (r["valid"], r["credit_loop"], r["lmc"]) == (True, False, lmc)
    assert (r["hosts"], r["switches"], r["max_hops"]) == (16, 8, 3)
    assert r["unreachable_pairs"] == 0
    assert r["problems"] == []
    assert r["shift"]["base"]["efficiency"] == 1.0
    assert r["bound"]["efficiency"] == 1.0
    assert r["balance"]["worst"] == {"base": 0, "base_switch": "leaf1",
                                     "all": 0, "all_switch": "leaf1"}
    assert r["balance"]["nonminimal_lids"] == 0
    if lmc:
        assert r["shift"]["spread"]["efficiency"] == 1.0
        # 4 leaves x 4 hosts: 16 * 12 ordered pairs on different leaves;
        # with 4 spines every path of a pair uses its own spine
        assert r["diversity"]["pairs"] == 192
        assert r["diversity"]["links"]["0"] == 192
    else:
        assert r["shift"]["spread"] is None and r["diversity"] is None


def _unbalance(text, switch_lids=False):
    """Send every base LID of a CA (with switch_lids: also every switch
    LID) that leaves a leaf up port 5 (spine1)."""
    out, sw = [], None
    for line in text.splitlines():
        m = re.match(r"Unicast lids .*\('(.*)'\)", line)
        if m:
            sw = m.group(1)
        m = re.match(r"0x([0-9a-f]+) (\d+) (.*)", line)
        if m and sw.startswith("leaf") and 5 <= int(m.group(2)) <= 8 \
                and int(m.group(1), 16) % 4 == 0 and \
                (switch_lids or "Switch" not in m.group(3)):
            line = f"0x{m.group(1)} 005 {m.group(3)}"
        out.append(line)
    return "\n".join(out) + "\n"


def test_deliberately_unbalanced():
    lf = parse_lfts_text(_unbalance(open(fx("ft4-l2.lfts.dump")).read()),
                         "unbal.dump")
    an = analyse(lf, "ft4-l2.subnet.lst")
    r = an.result
    assert r["valid"] and not r["credit_loop"]
    # each leaf routes 12 remote hosts x 4 LIDs; base LIDs: 12 on port 5,
    # 0 elsewhere; all LIDs: 9 + 12 = 21 on port 5, 9 on ports 6-8
    assert r["balance"]["worst"]["base"] == 12
    assert r["balance"]["worst"]["all"] == 12
    s = an.sidx[0x200000]
    assert list(an.port_base[s, 5:9]) == [12, 0, 0, 0]
    assert list(an.port_all[s, 5:9]) == [21, 9, 9, 9]
    # round k: min(k, 16-k, 4) of leaf1's hosts talk to one other leaf and
    # all of them climb port 5 -> max loads 1,2,3,4 x9,3,2,1
    assert list(an.curves["base"]) == [1, 2, 3] + [4] * 9 + [3, 2, 1]
    assert r["shift"]["base"]["efficiency"] == \
        pytest.approx((2 + 1 + 2 / 3 + 9 / 4) / 15)
    assert r["shift"]["spread"]["efficiency"] < 1.0
    assert r["bound"]["efficiency"] == 1.0
    # LIDs 0 of each pair share spine1: 2 of 4 paths share a link for the
    # 144 pairs whose base LID was moved, the 48 pairs whose base LID was
    # already on spine1 keep 4 disjoint paths
    assert r["diversity"]["links"] == {"0": 48, "1": 0, "2": 144, "3": 0,
                                       "4": 0}


def test_credit_loop_ring():
    # three switches in a ring, every route goes clockwise: the channels
    # sw1[2] -> sw2[2] -> sw3[2] -> sw1[2] wait on each other
    an = analyse("ring3-clockwise.lfts.dump", "ring3.net")
    r = an.result
    assert r["valid"] is True and r["credit_loop"] is True
    cyc = [(c["switch"], c["port"]) for c in r["credit_cycle"]]
    k = cyc.index(("sw1", 2))
    assert cyc[k:] + cyc[:k] == [("sw1", 2), ("sw2", 2), ("sw3", 2)]
    assert any(p.startswith("credit loop: ") for p in r["problems"])
    # k=2: every message takes two hops and shares one link -> load 2
    assert list(an.curves["base"]) == [1.0, 2.0]
    rc, out, err = run_tool("--lfts", fx("ring3-clockwise.lfts.dump"),
                            "--topology", fx("ring3.net"), "--json")
    assert rc == 1 and err == ""
    assert json.loads(out)["credit_loop"] is True
    an = analyse("ring3-minimal.lfts.dump", "ring3.net")
    assert an.result["credit_loop"] is False and an.result["cdg_edges"] == 0


def _add_lft(text, switch, lid, port, what):
    """Add an entry for a LID the switch has none for."""
    out, sw = [], None
    for line in text.splitlines():
        out.append(line)
        m = re.match(r"Unicast lids .*\('(.*)'\)", line)
        if m and m.group(1) == switch:
            out.append(f"0x{lid:04x} {port:03d} # {what}")
    return "\n".join(out) + "\n"


def _spine_turns():
    """ft4-l0 with spine1 sending spine2's LID over leaf1, spine2 spine1's
    over leaf2."""
    text = open(fx("ft4-l0.lfts.dump")).read()
    text = _add_lft(text, "spine1", 9, 1, "Switch portguid "
                    "0x0000000000200005: 'spine2'")
    return _add_lft(text, "spine2", 7, 2, "Switch portguid "
                    "0x0000000000200004: 'spine1'")


def test_credit_loops_of_every_entry():
    """Two spines route each other's LID over a leaf each, down and up
    again as minhop does (management traffic only: no CA sends those LIDs
    to a spine).  The routes of the traffic have no credit loop; every
    entry's dependencies have one: spine1 waits at leaf1 for the link up
    to spine2, spine2 at leaf2 for the link up to spine1, and the CAs'
    traffic leaf1 -> spine2 -> leaf2 (h6) and leaf2 -> spine1 -> leaf1
    (h1) closes the ring.  Stock updn leaves those entries empty."""
    lf = parse_lfts_text(_spine_turns(), "turns.dump")
    r = analyse(lf, "ft4-l0.subnet.lst").result
    assert r["valid"] and not r["credit_loop"]
    assert r["credit_scope"] == "traffic"
    r = analyse(lf, "ft4-l0.subnet.lst", credit_scope="every-entry").result
    assert r["valid"] and r["credit_loop"]
    assert r["credit_scope"] == "every-entry"
    cyc = [(c["switch"], c["port"]) for c in r["credit_cycle"]]
    k = cyc.index(("spine1", 1))
    assert cyc[k:] + cyc[:k] == [("spine1", 1), ("leaf1", 6), ("spine2", 2),
                                 ("leaf2", 5)]
    assert any(p.startswith("credit loop among the dependencies of every "
                            "LFT entry: ") for p in r["problems"])
    r = analyse("ft4-l0.lfts.dump", "ft4-l0.subnet.lst",
                credit_scope="every-entry").result
    assert not r["credit_loop"] and r["cdg_edges"] > 0


def test_cli_credit_loops_option(tmp_path):
    dump = tmp_path / "turns.dump"
    dump.write_text(_spine_turns())
    args = ("--lfts", str(dump), "--topology", fx("ft4-l0.subnet.lst"))
    rc, out, err = run_tool(*args)
    assert rc == 0 and "credit loop        : no (" in out
    rc, out, err = run_tool(*args, "--credit-loops", "every-entry")
    assert rc == 1 and err == ""
    assert "credit loop        : YES (" in out
    assert "of every LFT entry, switch LIDs too)" in out
    rc, out, err = run_tool(*args, "--credit-loops", "every-entry",
                            "--path-sl", str(dump))
    assert rc == 2 and "--path-sl" in err and "Traceback" not in err
    rc, out, err = run_tool(*args, "--credit-loops", "all")
    assert rc == 2 and "--credit-loops" in err


def _edit_lft(text, switch, lid, port):
    """Set (port is int) or delete (port is None) one LFT entry."""
    out, sw = [], None
    for line in text.splitlines():
        m = re.match(r"Unicast lids .*\('(.*)'\)", line)
        if m:
            sw = m.group(1)
        m = re.match(r"0x([0-9a-f]+) (\d+) (.*)", line)
        if m and sw == switch and int(m.group(1), 16) == lid:
            if port is None:
                continue
            line = f"0x{lid:04x} {port:03d} {m.group(3)}"
        out.append(line)
    return "\n".join(out) + "\n"


def _ft4(edits, topo="ft4-l0.subnet.lst"):
    text = open(fx("ft4-l0.lfts.dump")).read()
    lf0 = parse_lfts_text(text, "x")
    h16 = [l for l, v in lf0.lid_info.items() if v[2] == "h16"][0]
    for sw, port in edits:
        text = _edit_lft(text, sw, h16, port)
    _ft4.text = text
    return analyse(parse_lfts_text(text, "broken.dump"), topo), h16


def test_broken_route_unlinked_port():
    # every spine sends h16's LID out of port 7, which has no cable: the 12
    # hosts on other leaves cannot reach h16.  Stock updn sends h16 through
    # spine4 only, so the broken entries of spines 1-3 are never used by a
    # host route today: they are faults all the same, named after the
    # host-route ones.
    an, lid = _ft4([(f"spine{i}", 7) for i in range(1, 5)])
    r = an.result
    assert r["valid"] is False and r["unreachable_pairs"] == 12
    assert r["problems"] == [f"switch 'spine4' (0x0000000000200007): LID "
                             f"{lid} ('h16') is routed out of port 7, an "
                             "unlinked port (dead end)"] + [
        f"switch 'spine{i}' (0x000000000020000{i + 3}): LID {lid} ('h16') "
        "is routed out of port 7, an unlinked port (dead end; no host "
        "route uses this entry)" for i in (1, 2, 3)]
    assert r["lft_entries"]["faults"] == 4


def test_unused_broken_spine_entry_is_a_fault(tmp_path):
    """Issue 15: a broken entry on a spine that no host route uses today
    makes the routing invalid, naming the switch and the LID."""
    an, lid = _ft4([("spine1", 7)])
    r = an.result
    assert r["unreachable_pairs"] == 0
    assert r["valid"] is False
    assert r["problems"] == [
        f"switch 'spine1' (0x0000000000200004): LID {lid} ('h16') is "
        "routed out of port 7, an unlinked port (dead end; no host route "
        "uses this entry)"]
    dump = tmp_path / "broken.dump"
    dump.write_text(_ft4.text)
    rc, out, _err = run_tool("--lfts", str(dump), "--topology",
                             fx("ft4-l0.subnet.lst"), "--json")
    assert rc == 1 and json.loads(out)["problems"] == r["problems"]


def test_switch_lid_entries_are_checked():
    """Switch LIDs are destinations too: a leaf that sends another
    switch's LID to a spine without a route for it (a dead end) is a
    fault, though no host traffic goes there."""
    lf = parse_lfts_text(_unbalance(open(fx("ft4-l2.lfts.dump")).read(),
                                    switch_lids=True), "unbal.dump")
    r = analyse(lf, "ft4-l2.subnet.lst").result
    assert r["unreachable_pairs"] == 0 and r["valid"] is False
    assert r["problems"] == [
        "switch 'spine1' (0x0000000000200004): LID %d (switch 'spine%d') "
        "has no LFT entry (dead end)" % (lid, n) for lid, n in ((24, 2),
                                                             (32, 4))]
    assert r["lft_entries"] == {"lids": 72, "switches": 8, "faults": 2,
                                "unrouted": 10, "unrouted_ca": 0}


def test_updn_holes_are_not_faults():
    """Stock updn routes no root spine to another (a down-up turn): those
    switch/LID pairs have no entry and nothing forwards into them; they
    are counted, not faults."""
    r = analyse("ft4-l0.lfts.dump", "ft4-l0.subnet.lst").result
    assert r["valid"] is True and r["problems"] == []
    assert r["lft_entries"]["faults"] == 0
    assert r["lft_entries"]["unrouted"] == 12
    assert r["lft_entries"]["unrouted_ca"] == 0
    rc, out, _err = run_tool("--lfts", fx("ft4-l0.lfts.dump"), "--topology",
                             fx("ft4-l0.subnet.lst"), "--bisections", "1")
    assert rc == 0
    assert "  every LFT entry    : 0 broken, 12 switch/LID pairs without a " \
        "route (0 to CA LIDs; 24 LIDs x 8 switches)\n" in out


def test_broken_route_missing_entry():
    an, lid = _ft4([("leaf4", None)])
    r = an.result
    # h13..h15 sit on leaf4 next to h16 and find no entry; the 12 remote
    # hosts' packets also arrive at leaf4 and die there
    assert r["unreachable_pairs"] == 15
    assert r["problems"] == [f"switch 'leaf4' (0x0000000000200003): LID "
                             f"{lid} ('h16') has no LFT entry (dead end)"]


def test_broken_route_loop():
    # leaf1 sends h16 to spine1 (port 5), spine1 sends it back to leaf1
    an, lid = _ft4([("leaf1", 5), ("spine1", 1)])
    r = an.result
    assert r["valid"] is False
    assert f"routing loop for LID {lid} ('h16'): 'leaf1'[5] -> " \
        "'spine1'[1] -> 'leaf1'" in r["problems"]
    assert r["unreachable_pairs"] >= 4


def test_down_port(tmp_path):
    # mark the leaf1 port 5 <-> spine1 port 1 cable as down
    lines = open(fx("ft4-l0.subnet.lst")).read().splitlines()
    out = []
    for line in lines:
        a = "{leaf1} LID:0001 PN:05 } { SW Ports:08" in line
        b = "{spine1}" in line and "PN:01 } { SW" in line and \
            "{leaf1} LID:0001 PN:05" in line
        out.append(line.replace("LOG=ACT", "LOG=DWN") if a or b else line)
    assert out != lines
    topo = parse_topology_text(out, "down.lst")
    assert (0x200000, 5) in topo.down
    an = analyse("ft4-l0.lfts.dump", topo)
    r = an.result
    assert r["valid"] is False
    # leaf1 routed 3 remote hosts' LIDs (h5, h9, h13) through port 5, and
    # spine1 routes h1 back down its port 1
    downs = [p for p in r["problems"] if p.endswith("a down port (dead end)")
             and "(switch '" not in p]
    assert [p.split("'")[1] for p in downs] == ["leaf1"] * 3 + ["spine1"]
    assert all("port 5" in p for p in downs[:3]) and "port 1" in downs[3]
    # and the entries no host route uses: spine1 sends h2-h4 and leaf1's
    # LID down the dead cable, leaf1 sends four switch LIDs up it
    unused = [p for p in r["problems"] if p not in downs]
    assert [(p.split("'")[1], p.split("(")[2].split(")")[0]) for p in
            unused] == [("spine1", "'h2'"), ("spine1", "'h3'"),
                        ("spine1", "'h4'"), ("leaf1", "switch 'leaf2'"),
                        ("leaf1", "switch 'leaf3'"),
                        ("leaf1", "switch 'leaf4'"),
                        ("leaf1", "switch 'spine1'"),
                        ("spine1", "switch 'leaf1'")]
    # leaf1's 4 hosts miss 3 LIDs each, the 12 remote hosts miss h1 (via
    # spine1) -> 24 unreachable pairs
    assert r["unreachable_pairs"] == 24
    # with the cable down, spine1 is no longer on a minimum-hop path from
    # leaves 2-4 to leaf1: their route for h1 is counted as non-minimal
    assert list(an.nonminimal) == [0, 1, 1, 1, 0, 0, 0, 0]


# ------------------------------------------------------------ CLI behaviour

def test_cli_json_fields():
    rc, out, err = run_tool("--lfts", fx("ft2x2-l2.ibroute"), "--topology",
                            fx("ft2x2.net"), "--json", "--bisections", "2")
    assert rc == 0, err
    r = json.loads(out)
    for key in ("valid", "credit_loop", "lmc", "hosts", "switches",
                "problems", "balance", "bound", "shift"):
        assert key in r
    assert (r["valid"], r["credit_loop"], r["lmc"], r["hosts"],
            r["switches"]) == (True, False, 2, 4, 4)
    assert set(r["shift"]) == {"base", "spread"}
    assert r["shift"]["base"]["efficiency"] == 1.0
    assert r["shift"]["spread"]["efficiency"] == 1.0
    assert r["bound"]["efficiency"] == 1.0
    assert "worst" in r["balance"] and len(r["balance"]["switches"]) == 4


def test_cli_lmc_override_and_text():
    # the LMC 2 dump read as LMC 0: only base LIDs are hosts' LIDs
    rc, out, err = run_tool("--lfts", fx("ft2x2-l2.lfts.dump"),
                            "--topology", fx("ft2x2-l2.subnet.lst"),
                            "--lmc", "0")
    assert rc == 0, err
    assert "LMC 0" in out and "valid routing      : yes" in out
    assert "LMC spread" not in out


def test_cli_csv_plot_compare(tmp_path):
    unbal = tmp_path / "unbal.dump"
    unbal.write_text(_unbalance(open(fx("ft4-l2.lfts.dump")).read()))
    csvf = tmp_path / "ports.csv"
    rc, out, err = run_tool("--lfts", fx("ft4-l2.lfts.dump"), "--topology",
                            fx("ft4-l2.subnet.lst"), "--compare", str(unbal),
                            "--csv", str(csvf), "--plot",
                            str(tmp_path / "png"), "--bisections", "2")
    assert rc == 0, err
    assert "shift base efficiency      1.0000    0.3944" in out
    rows = list(csv.DictReader(open(csvf)))
    r = [x for x in rows if x["switch"] == "leaf1" and x["port"] == "5"][0]
    assert (r["peer_kind"], r["peer"], r["base_lids"], r["all_lids"],
            r["base_lids_2"], r["all_lids_2"]) == \
        ("switch", "spine1", "3", "12", "12", "21")
    for f in ("port-load.png", "congestion.png", "compare-port-load.png"):
        data = (tmp_path / "png" / f).read_bytes()
        assert data[:8] == b"\x89PNG\r\n\x1a\n" and len(data) > 10000


def test_cli_csv_counts_the_routes_that_cross_each_port(tmp_path):
    """Shifted hand2x2 tables (LMC 1): leaf1 sends h3's base LID and h4's
    second up to spine1, the other two to spine2, so each spine's port
    down to leaf2 has all four of leaf2's LIDs in its entries but carries
    the routes of two: leaf1's two ranks to each (base: h3's over
    spine1, h4's over spine2).  leaf2's port to h3 carries the routes of
    the three other ranks."""
    csvf = tmp_path / "ports.csv"
    rc, out, err = run_tool("--lfts", fx("hand2x2-shifted.lfts.dump"),
                            "--topology", fx("hand2x2.net"),
                            "--csv", str(csvf), "--bisections", "0")
    assert rc == 0, err
    rows = {(r["switch"], r["port"]): r for r in csv.DictReader(open(csvf))}
    got = {k: tuple(int(rows[k][f]) for f in
                    ("base_lids", "all_lids", "base_routes", "all_routes"))
           for k in (("leaf1", "3"), ("leaf1", "4"), ("spine1", "2"),
                     ("spine2", "2"), ("spine1", "1"), ("leaf2", "1"))}
    assert got == {("leaf1", "3"): (1, 2, 2, 4),
                   ("leaf1", "4"): (1, 2, 2, 4),
                   ("spine1", "2"): (2, 4, 2, 4),
                   ("spine2", "2"): (2, 4, 2, 4),
                   ("spine1", "1"): (2, 4, 2, 4),
                   ("leaf2", "1"): (1, 2, 3, 6)}


@pytest.mark.parametrize("args,where,msg", [
    (["--lfts", "ft4-l0.lfts.dump", "--topology", "ft2x2.net"],
     "ft4-l0.lfts.dump:105:", "is not in topology"),
    (["--lfts", "trunc", "--topology", "ft2x2.net"], "trunc:", "truncated"),
    (["--lfts", "ft2x2-l0.lfts.dump", "--topology", "ft2x2.net",
      "--hostfile", "hosts"], "hosts:2:", "unknown host 'nosuchhost'"),
    (["--lfts", "ft2x2-l0.lfts.dump", "--topology", "nofile"],
     "nofile:0:", "cannot read"),
])
def test_cli_bad_input(tmp_path, args, where, msg):
    (tmp_path / "trunc").write_text(
        "\n".join(open(fx("ft2x2-l0.lfts.dump")).read().splitlines()[:15]))
    (tmp_path / "hosts").write_text("h1\nnosuchhost\n")
    full = []
    for a in args:
        if a in ("trunc", "hosts", "nofile"):
            full.append(str(tmp_path / a))
        elif not a.startswith("--"):
            full.append(fx(a))
        else:
            full.append(a)
    rc, out, err = run_tool(*full)
    assert rc == 2
    assert out == ""
    assert "Traceback" not in err
    assert len(err.strip().splitlines()) == 1
    assert where in err and msg in err


def test_cli_usage_errors():
    rc, out, err = run_tool("--lfts", fx("ft2x2-l0.lfts.dump"))
    assert rc == 2 and "--topology" in err
    rc, out, err = run_tool("--lfts", fx("ft2x2-l0.lfts.dump"), "--topology",
                            fx("ft2x2.net"), "--lmc", "9")
    assert rc == 2 and "--lmc" in err and "Traceback" not in err


# ------------------------------------------------------------------------
# Rank orders and jobs: jobs4x2.net (4 leaves x 2 hosts h1..h8, 2 spines,
# a SHARP aggregation node "agg" on spine1) with "aligned" LFTs: every leaf
# sends every remote LID up port 3 (spine1), so a leaf's up link carries
# all the flows that leave it, and spine1's down link all that enter it.
#
# leaf order h1..h8 (agg gets no rank), round k: i -> (i + k) mod 8.
#   k=1, 7: one flow leaves / enters each leaf            -> max load 1
#   k=2..6: two flows leave / enter each leaf             -> max load 2
#   efficiency = (1 + 1 + 5 / 2) / 7 = 9/14
# half job 0 = h1..h4 (leaves 1, 2), rounds k=1..3 of 4 ranks:
#   k=1: h2->h3, h4->h1 cross, one per leaf               -> 1
#   k=2: h1->h3, h2->h4 both up leaf1                     -> 2
#   k=3: h1->h4, h3->h2 cross, one per leaf               -> 1
#   efficiency = (1 + 1/2 + 1) / 3 = 5/6; half job 1 (h5..h8) the same.
# quarter job 3 = h7, h8 on leaf4: local only             -> 1
# random order, seed 1 (numpy default_rng(1).permutation of the leaf order):
#   h6 h1 h2 h5 h3 h7 h4 h8; every round has a leaf with two flows out or
#   in (k=1: h3->h7 and h4->h8 leave leaf2) -> 2 in all 7 rounds -> 1/2.
# ------------------------------------------------------------------------

def jobs(**kw):
    return analyse("jobs4x2-aligned.lfts.dump", "jobs4x2.net",
                   bisections=0, **kw)


def names(an):
    return [an.hosts[i].desc for i in an.ranks]


def test_leaf_order_leaves_out_sharp_nodes():
    an = jobs()
    r = an.result
    assert r["valid"] and r["hosts"] == 9 and r["ranks"] == 8
    assert names(an) == ["h%d" % i for i in range(1, 9)]
    assert list(an.curves["base"]) == [1, 2, 2, 2, 2, 2, 1]
    assert r["shift"]["base"]["efficiency"] == pytest.approx(9 / 14)
    assert r["rank_order"] == \
        "topology order, 1 SHARP aggregation node left out"


@pytest.mark.parametrize("job,k,ranks,curve,eff", [
    ("half", 0, ["h1", "h2", "h3", "h4"], [1, 2, 1], 5 / 6),
    ("half", 1, ["h5", "h6", "h7", "h8"], [1, 2, 1], 5 / 6),
    ("quarter", 0, ["h1", "h2"], [1], 1.0),
    ("quarter", 3, ["h7", "h8"], [1], 1.0),
])
def test_jobs_in_leaf_order(job, k, ranks, curve, eff):
    an = jobs(job=job, job_index=k)
    assert names(an) == ranks
    assert list(an.curves["base"]) == curve
    assert an.result["shift"]["base"]["efficiency"] == pytest.approx(eff)
    assert an.result["rank_order"].endswith(
        "; %s job %d: ranks %d-%d (%d hosts)"
        % (job, k, k * len(ranks), (k + 1) * len(ranks) - 1, len(ranks)))


def test_random_order_is_seeded():
    an = jobs(order="random")
    assert names(an) == ["h6", "h1", "h2", "h5", "h3", "h7", "h4", "h8"]
    assert list(an.curves["base"]) == [2] * 7
    assert an.result["shift"]["base"]["efficiency"] == 0.5
    assert an.result["rank_order"].startswith("random order (seed 1)")
    assert names(jobs(order="random", seed=2)) != names(an)
    # a job on a random order takes a block of that order
    assert names(jobs(order="random", job="half", job_index=1)) == \
        ["h3", "h7", "h4", "h8"]


def test_leaf_shuffled_order_keeps_each_leaf_together():
    """'leaf-shuffled': each leaf's hosts together and by port, the
    leaves in random.Random(seed)'s shuffle of the leaf order (seed 1:
    leaf4, leaf1, leaf3, leaf2); SHARP nodes still run no rank."""
    an = jobs(order="leaf-shuffled")
    assert names(an) == ["h7", "h8", "h1", "h2", "h5", "h6", "h3", "h4"]
    assert an.result["rank_order"] == ("leaf order, leaves shuffled (seed "
                                       "1), 1 SHARP aggregation node left "
                                       "out")
    assert names(jobs(order="leaf-shuffled", seed=2)) == \
        ["h3", "h4", "h5", "h6", "h7", "h8", "h1", "h2"]
    # a job takes a block of that order: two whole leaves
    assert names(jobs(order="leaf-shuffled", job="half", job_index=1)) == \
        ["h5", "h6", "h3", "h4"]


def reordered_jobs_net(tmp_path):
    """jobs4x2.net with its leaves listed leaf3, leaf1, leaf4, leaf2 (each
    switch keeping its GUID, switchguid=), the spines and CAs as before."""
    with open(fx("jobs4x2.net")) as f:
        blocks = f.read().split("\n\n")
    sw = {b.split('"')[1]: b for b in blocks if b.startswith("Switch")}
    guid = {n: 0x200000 + i for i, n in enumerate(
        ["leaf1", "leaf2", "leaf3", "leaf4", "spine1", "spine2"])}
    rest = [b for b in blocks if not b.startswith("Switch")]
    order = ["leaf3", "leaf1", "leaf4", "leaf2", "spine1", "spine2"]
    text = "\n\n".join(rest[:1] + ["switchguid=0x%x\n%s" % (guid[n], sw[n])
                                   for n in order] + rest[1:])
    net = tmp_path / "jobs4x2-reordered.net"
    net.write_text(text)
    return str(net)


def test_file_order_takes_the_leaves_as_the_file_lists_them(tmp_path):
    """'file': each leaf's hosts together and by port, the leaves in the
    order the topology file first lists their switches; the SHARP node
    still runs no rank.  In jobs4x2.net that is the leaf order; with its
    leaves listed leaf3, leaf1, leaf4, leaf2 (same GUIDs, same LFTs) the
    ranks follow, and a half job takes the first two of those leaves."""
    assert names(jobs(order="file")) == names(jobs())
    net = reordered_jobs_net(tmp_path)
    an = analyse("jobs4x2-aligned.lfts.dump", net, bisections=0,
                 order="file")
    assert an.result["valid"]
    assert names(an) == ["h5", "h6", "h1", "h2", "h7", "h8", "h3", "h4"]
    assert an.result["rank_order"] == ("leaf order, leaves in the topology "
                                       "file's order, 1 SHARP aggregation "
                                       "node left out")
    half = analyse("jobs4x2-aligned.lfts.dump", net, bisections=0,
                   order="file", job="half", job_index=0)
    assert names(half) == ["h5", "h6", "h1", "h2"]
    # the routing's leaf order does not depend on the file's
    assert names(analyse("jobs4x2-aligned.lfts.dump", net,
                         bisections=0)) == names(jobs())


def assert_hostfile_scores_as_option(tmp_path, topo, order, names_,
                                     job=()):
    """rank-order with the order arguments order writes the hosts names_
    into a hostfile, and lft-analyze scores that hostfile exactly as the
    same order arguments (more lft-analyze arguments in job); returns
    lft-analyze's JSON of the option."""
    rank_order = os.path.join(TOP, "scripts", "rank-order")
    hf = tmp_path / "hosts"
    p = subprocess.run([sys.executable, rank_order, "--topology", topo] +
                       list(order) + ["-o", str(hf)],
                       capture_output=True, text=True)
    assert p.returncode == 0, p.stderr
    assert hf.read_text().split() == names_
    base = ["--lfts", fx("jobs4x2-aligned.lfts.dump"), "--topology", topo,
            "--bisections", "0", "--json"] + list(job)
    rc, out, _ = run_tool(*base, *order)
    assert rc == 0
    rc, out2, _ = run_tool(*base, "--hostfile", str(hf))
    assert rc == 0
    a, b = json.loads(out), json.loads(out2)
    assert a["ranks"] == b["ranks"]
    assert a["shift"] == b["shift"]
    return a


def renamed_jobs_net(tmp_path):
    """jobs4x2.net with the hosts of leaf1 and leaf4 trading names (h7, h8
    now behind leaf1, h1, h2 behind leaf4), the GUIDs and LFTs as before."""
    net = str(tmp_path / "jobs4x2-renamed.net")
    rename_hosts(fx("jobs4x2.net"), net,
                 {"h1": "h7", "h2": "h8", "h7": "h1", "h8": "h2"})
    return net


def test_leaf_order_takes_the_leaves_by_switch_name(tmp_path):
    """'leaf', the routing order: the leaves by their switch names, not by
    the first host name behind them (which put leaf4, now holding h1, first
    before 2026-11-29); rank-order writes the same order."""
    net = renamed_jobs_net(tmp_path)
    an = analyse("jobs4x2-aligned.lfts.dump", net, bisections=0)
    assert an.result["valid"]
    assert names(an) == ["h7", "h8", "h3", "h4", "h5", "h6", "h1", "h2"]
    assert_hostfile_scores_as_option(
        tmp_path, net, ["--order", "leaf"],
        ["h7", "h8", "h3", "h4", "h5", "h6", "h1", "h2"])


def test_rank_order_writes_lft_analyzes_file_order(tmp_path):
    """rank-order --order file writes the order lft-analyze --order file
    ranks: the hostfile scores exactly as the option."""
    a = assert_hostfile_scores_as_option(
        tmp_path, reordered_jobs_net(tmp_path), ["--order", "file"],
        ["h5", "h6", "h1", "h2", "h7", "h8", "h3", "h4"])
    assert a["ranks"] == 8


def test_rank_order_writes_lft_analyzes_leaf_shuffled_order(tmp_path):
    """rank-order --order leaf-shuffled and lft-analyze --order
    leaf-shuffled take the same order for the same seed: the hostfile
    scores exactly as the option."""
    a = assert_hostfile_scores_as_option(
        tmp_path, fx("jobs4x2.net"),
        ["--order", "leaf-shuffled", "--seed", "3"],
        ["h7", "h8", "h1", "h2", "h5", "h6", "h3", "h4"],
        job=["--job", "half"])
    assert a["ranks"] == 4
    assert a["rank_order"].startswith("leaf order, leaves shuffled (seed "
                                      "3)")


def test_order_options_of_the_tool(tmp_path):
    base = ["--lfts", fx("jobs4x2-aligned.lfts.dump"), "--topology",
            fx("jobs4x2.net"), "--bisections", "0", "--json"]
    rc, out, _ = run_tool(*base, "--job", "half", "--job-index", "1")
    assert rc == 0
    r = json.loads(out)
    assert r["ranks"] == 4
    assert r["shift"]["base"]["efficiency"] == pytest.approx(5 / 6)
    rc, out, _ = run_tool(*base, "--order", "random")
    assert rc == 0 and json.loads(out)["shift"]["base"]["efficiency"] == 0.5
    rc, _, err = run_tool(*base, "--job", "quarter", "--job-index", "4")
    assert rc == 2 and err.strip() == \
        "lft-analyze: --job-index: a quarter job is block 0 to 3, not 4"
    rc, _, err = run_tool(*base, "--job-index", "1")
    assert rc == 2 and "--job-index goes with --job" in err
    hf = tmp_path / "hosts"
    hf.write_text("h1\nh2\n")
    rc, _, err = run_tool(*base, "--hostfile", str(hf), "--order", "random")
    assert rc == 2 and "Traceback" not in err
    # default: unchanged topology order on a fabric without SHARP nodes
    rc, out, _ = run_tool("--lfts", fx("hand2x2-aligned.lfts.dump"),
                          "--topology", fx("hand2x2.net"), "--json")
    assert json.loads(out)["rank_order"] == "topology order"


# ------------------------------------------------- the admin's analyzer
# (issue 15): the hostfile rule, --lmc against the dump, --version

def _named_hand_topo():
    """hand2x2 with node descriptions "node0N HCA-1" (host name first)."""
    text = open(fx("hand2x2.net")).read()
    for i in range(1, 5):
        text = text.replace(f'Hca 1 "h{i}"\n',
                            f'Hca 1 "h{i}" # "node0{i} HCA-1"\n')
    return parse_topology_text(text, "named.net")


def _ranks(tmp_path, text):
    hf = tmp_path / "hosts"
    hf.write_text(text)
    an = Analysis(_named_hand_topo(),
                  load_lfts(fx("hand2x2-aligned.lfts.dump")),
                  hostfile=str(hf), bisections=0)
    return [an.hosts[i].desc.split()[0] for i in an.ranks]


@pytest.mark.parametrize("text,order", [
    # Open MPI: comments, blank lines, slots=N / max_slots=N
    ("# ranks\n\nnode01 slots=4\nnode03 slots=4 max_slots=8  # rack 2\n"
     "  node02\n", ["node01", "node03", "node02"]),
    # MPICH host:N
    ("node03:2\nnode01:2\nnode04:1\nnode02\n",
     ["node03", "node01", "node04", "node02"]),
    # whole node descriptions, GUIDs, a Slurm-style list
    ("node04 HCA-1\n0x0000000000100001\nnode02,node03:1\n",
     ["node04", "node01", "node02", "node03"]),
    # no newline after a complete last line
    ("node02\nnode01", ["node02", "node01"]),
])
def test_hostfile_rule(tmp_path, text, order):
    assert _ranks(tmp_path, text) == order


@pytest.mark.parametrize("text,line,msg", [
    ("node01\nnode09 slots=2\n", 2, "unknown host 'node09' (not a node "
     "description, host name or GUID of the topology)"),
    ("node01\nnode02:4\nnode01 slots=2\n", 3,
     "host 'node01' listed twice (first on line 1)"),
    ("node01\nnode02 slots=two\n", 2, "bad slots value 'two'"),
    ("node01\nnode02 HCA-2\n", 2, "unknown host 'node02 HCA-2'"),
    ("node01\nnode02:0\n", 2, "bad process count in 'node02:0'"),
    ("node01\nnode02\nnode0", 3, "unknown host 'node0' (not a node "
     "description, host name or GUID of the topology) (the file ends "
     "mid-line: truncated?)"),
    ("node01\nnode02 slots=", 2, "bad slots value '' (expected a number) "
     "(the file ends mid-line: truncated?)"),
    ("# only one\nnode01\n", 2, "hostfile names fewer than two hosts"),
])
def test_hostfile_errors_name_file_and_line(tmp_path, text, line, msg):
    with pytest.raises(InputError) as ei:
        _ranks(tmp_path, text)
    assert (ei.value.lineno, ei.value.msg) == (line, msg) or \
        msg in ei.value.msg and ei.value.lineno == line
    assert str(ei.value).startswith(f"{tmp_path / 'hosts'}:{line}: ")


def test_cli_hostfile_truncated(tmp_path):
    hf = tmp_path / "hosts"
    hf.write_text("h1\nh2\nh")
    rc, _out, err = run_tool("--lfts", fx("hand2x2-aligned.lfts.dump"),
                             "--topology", fx("hand2x2.net"), "--hostfile",
                             str(hf))
    assert rc == 2 and "Traceback" not in err
    assert err.startswith(f"lft-analyze: {hf}:3: unknown host 'h'")
    assert err.rstrip().endswith("truncated?)")


def test_cli_lmc_disagrees_with_dump():
    base = ["--topology", fx("ft2x2.net"), "--json", "--bisections", "1"]
    # --lmc 0 on an LMC 2 dump: analysed as asked, with a warning
    rc, out, err = run_tool("--lfts", fx("ft2x2-l2.lfts.dump"), "--lmc", "0",
                            *base)
    assert rc == 0
    want = (f"--lmc 0 disagrees with {fx('ft2x2-l2.lfts.dump')}, which "
            "gives each CA port 4 LIDs (LMC 2); analysed with LMC 0")
    assert err == f"lft-analyze: warning: {want}\n"
    r = json.loads(out)
    assert r["lmc"] == 0 and want in r["notes"]
    # --lmc 2 on an LMC 0 dump: the LIDs of neighbours overlap -> error
    # that says why
    rc, out, err = run_tool("--lfts", fx("ft2x2-l0.lfts.dump"), "--lmc", "2",
                            *base)
    assert rc == 2 and out == "" and "Traceback" not in err
    assert "overlaps" in err and (
        f"(--lmc 2 disagrees with {fx('ft2x2-l0.lfts.dump')}, which gives "
        "each CA port 1 LID (LMC 0))") in err
    # the dump's own LMC, given or not: no warning
    for extra in (["--lmc", "2"], []):
        rc, out, err = run_tool("--lfts", fx("ft2x2-l2.lfts.dump"), *extra,
                                *base)
        assert rc == 0 and err == "" and json.loads(out)["notes"] == []


def test_lmc_disagreement_in_the_model():
    """Analysis.warnings: --lmc 1 on an LMC 2 dump (none when --lmc is the
    dump's)."""
    an = Analysis(load_topology(fx("ft4-l0.subnet.lst")),
                  load_lfts(fx("ft4-l0.lfts.dump")), lmc=0, bisections=0)
    assert an.warnings == []
    lf = load_lfts(fx("ft4-l2.lfts.dump"))
    an = Analysis(load_topology(fx("ft4-l2.subnet.lst")), lf, lmc=1,
                  bisections=0)
    assert an.warnings == [
        f"--lmc 1 disagrees with {lf.path}, which gives each CA port 4 "
        "LIDs (LMC 2); analysed with LMC 1"]


def test_cli_version():
    from osmoffset import __version__
    rc, out, err = run_tool("--version")
    assert rc == 0 and out == f"lft-analyze (osmoffset) {__version__}\n"


def test_tool_linked_onto_path_finds_its_package(tmp_path):
    """A symlink to scripts/lft-analyze in another directory runs."""
    link = tmp_path / "bin" / "lft-analyze"
    link.parent.mkdir()
    link.symlink_to(TOOL)
    p = subprocess.run([sys.executable, str(link), "--version"],
                       capture_output=True, text=True, cwd=str(tmp_path))
    assert p.returncode == 0 and "lft-analyze (osmoffset)" in p.stdout


def test_plot_rows_are_named_for_big_fabrics():
    """The port-load heatmap labels its rows with switch names, also when
    there are too many to name every row (issue 15)."""
    import types
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from osmoffset import plot
    S, W = 130, 9
    an = types.SimpleNamespace(
        S=S, W=W,
        sw_nodes=[types.SimpleNamespace(desc=f"MF0;sw{i:03d}:MQM9700/U1")
                  for i in range(S)],
        port_base=np.ones((S, W), dtype=np.int64),
        port_all=np.ones((S, W), dtype=np.int64),
        rkind=np.ones((S, W), dtype=np.int8))
    fig, axes = plt.subplots(1, 2, figsize=(12, 14))
    plot._heatmaps(fig, axes, an, "x")
    fig.canvas.draw()
    labels = [t.get_text() for t in axes[0].get_yticklabels()]
    plt.close(fig)
    assert labels[0] == "MF0;sw000:MQM9700/U1"
    assert labels[-1] == "MF0;sw129:MQM9700/U1"
    assert 40 <= len(labels) <= 130
    assert all(t.startswith("MF0;sw") for t in labels)
    assert plot.switch_ticks(20, 4.0) == list(range(20))
    rows = plot.switch_ticks(972, 14.0)
    assert rows[0] == 0 and rows[-1] == 971 and len(rows) <= 14 * 9 + 1
