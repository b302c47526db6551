"""Tests of the topology / LFT parsers in pylib/osmoffset/fabric.py."""

import os
import sys

import pytest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "..", "pylib"))

from osmoffset.fabric import (InputError, load_lfts, load_topology,  # noqa
                              parse_lfts_text, parse_topology_text)

FIX = os.path.join(HERE, "fixtures", "analyze")


def fx(name):
    return os.path.join(FIX, name)


def link_set(topo):
    return sorted(topo.links.items())


# ---------------------------------------------------------------- topology

def test_net_file_guids_match_opensm_dump():
    net = load_topology(fx("ft2x2.net"))
    lst = load_topology(fx("ft2x2-l0.subnet.lst"))
    assert net.fmt == "ibsim-net" and lst.fmt == "subnet.lst"
    # ibsim numbers switches from 0x200000 and CAs from 0x100000, reserving
    # nports + 1 GUIDs per CA; h2 is a 2-port CA so h3 starts at 0x100005.
    assert sorted(g for g, n in net.nodes.items() if n.kind == "SW") == \
        [0x200000, 0x200001, 0x200002, 0x200003]
    assert sorted(g for g, n in net.nodes.items() if n.kind == "CA") == \
        [0x100001, 0x100003, 0x100006, 0x100008]
    assert set(net.nodes) == set(lst.nodes)
    assert link_set(net) == link_set(lst)
    assert net.nodes[0x100003].desc == "h2" and net.nodes[0x100003].nports == 2
    assert net.nodes[0x100003].node_guid == 0x100002
    assert all(n.lid is None for n in net.nodes.values())
    assert net.lids == {}


def test_explicit_guid_bases_and_dual_port_ca():
    net = load_topology(fx("dual.net"))
    lst = load_topology(fx("dual-l0.subnet.lst"))
    ibn = load_topology(fx("dual-l0.ibnetdiscover"))
    assert ibn.fmt == "ibnetdiscover"
    for t in (net, lst, ibn):
        assert set(t.nodes) == {0x0008f10400001000, 0x0008f10400001001,
                                0x0008f10400001002, 0x0002c90300a00001,
                                0x0002c90300a00004, 0x0002c90300a00007,
                                0x0002c90300a00008, 0x0002c90300a0000a}
        assert link_set(t) == link_set(lst)
        # the dual-port CA is two endpoints, one per port GUID
        d1, d2 = t.nodes[0x0002c90300a00007], t.nodes[0x0002c90300a00008]
        assert (d1.port, d2.port) == (1, 2)
        assert d1.desc == d2.desc == "dual HCA-1"
        assert t.links[(0x0002c90300a00008, 2)] == (0x0008f10400001001, 3)
    assert lst.lids == ibn.lids
    assert lst.nodes[0x0002c90300a00008].lid == 7
    assert ibn.lmc == 0 and lst.lmc is None


def test_topology_helpers():
    t = load_topology(fx("ft2x2-l2.ibnetdiscover"))
    assert t.lmc == 2
    assert len(t.switches()) == 4 and len(t.cas()) == 4
    leaf1 = t.nodes[0x200000]
    assert leaf1.desc == "leaf1" and leaf1.lid == 1 and leaf1.nports == 8
    assert t.neighbors(0x200000) == [(1, 0x100001, 1), (2, 0x100003, 1),
                                     (5, 0x200002, 1), (6, 0x200003, 1)]
    for a, b in t.links.items():
        assert t.links[b] == a


def test_48_port_switch_topology():
    t = load_topology(fx("ft48-l1.subnet.lst"))
    leaf = [n for n in t.switches() if n.desc == "leaf1"][0]
    assert leaf.nports == 48
    assert sorted(p for p, _g, _r in t.neighbors(leaf.guid)) == \
        [37, 38, 39, 40, 45, 46]


@pytest.mark.parametrize("text,line,msg", [
    ("Switch 8 \"a\"\n[1] \"b\"[1]\n", 2, "remote node \"b\" is not defined"),
    ("Switch 8 \"a\"\n[9] \"b\"[1]\n\nHca 1 \"b\"\n[1] \"a\"[9]\n", 2,
     "port 9 out of range"),
    ("Switch 8 \"a\"\n[1] \"b\"[1]\n\nHca 1 \"b\"\n[1] \"a\"[2]\n", 2,
     "but line 5 links"),
    ("Switch 8 \"a\"\n[1 \"b\"[1]\n", 2, "garbled port line"),
    ("Switch x \"a\"\n", 1, "garbled node header"),
    ("hello world\n", 1, "unrecognised topology format"),
])
def test_bad_net_files(text, line, msg):
    with pytest.raises(InputError) as ei:
        parse_topology_text(text, "x.net")
    e = ei.value
    assert (e.path, e.lineno) == ("x.net", line)
    assert msg in e.msg
    assert str(e) == f"x.net:{line}: {e.msg}"


def test_garbled_subnet_lst():
    lines = open(fx("ft2x2-l0.subnet.lst")).read().splitlines()
    lines[3] = lines[3][:60]
    with pytest.raises(InputError) as ei:
        parse_topology_text(lines, "s.lst")
    assert ei.value.lineno == 4 and "garbled" in ei.value.msg


def test_missing_file():
    with pytest.raises(InputError) as ei:
        load_topology(fx("does-not-exist"))
    assert "cannot read" in str(ei.value)


# --------------------------------------------------------------------- LFTs

@pytest.mark.parametrize("lmc", [0, 2])
def test_three_lft_formats_agree(lmc):
    osm = load_lfts(fx(f"ft2x2-l{lmc}.lfts.dump"))
    fts = load_lfts(fx(f"ft2x2-l{lmc}.dump_fts"))
    ibr = load_lfts(fx(f"ft2x2-l{lmc}.ibroute"))
    assert (osm.fmt, fts.fmt, ibr.fmt) == ("opensm", "ibroute", "ibroute")
    for x in (fts, ibr):
        assert {g: s.lft for g, s in x.switches.items()} == \
            {g: s.lft for g, s in osm.switches.items()}
        assert {g: s.lid for g, s in x.switches.items()} == \
            {g: s.lid for g, s in osm.switches.items()}
        assert x.lid_info == osm.lid_info
        assert x.lmc == osm.lmc == lmc


def test_lft_content_lmc2():
    l = load_lfts(fx("ft2x2-l2.lfts.dump"))
    sw = l.switches[0x200000]
    assert (sw.lid, sw.desc) == (1, "leaf1")
    # h1 (port GUID 0x100001) owns 4 consecutive LIDs, all to host port 1
    lids = l.port_lids()[0x100001]
    assert len(lids) == 4 and lids == list(range(lids[0], lids[0] + 4))
    assert all(sw.lft[x] == 1 for x in lids)
    assert l.lid_info[lids[0]] == (0x100001, "CA", "h1")
    assert l.lid_info[1] == (0x200000, "SW", "leaf1")


def test_lft_ports_above_36():
    l = load_lfts(fx("ft48-l1.ibroute"))
    ports = set()
    for s in l.switches.values():
        ports |= set(s.lft.values())
    assert {37, 38, 39, 40, 45, 46} <= ports
    assert l.lmc == 1


def _lines(name):
    return open(fx(name)).read().splitlines()


def test_truncated_dump():
    lines = _lines("ft2x2-l0.lfts.dump")[:-3]
    with pytest.raises(InputError) as ei:
        parse_lfts_text(lines, "t.dump")
    assert ei.value.lineno == len(lines)
    assert "no 'lids dumped' footer" in ei.value.msg


def test_truncated_ibroute_block_count():
    lines = _lines("ft2x2-l0.ibroute")
    k = next(i for i, s in enumerate(lines) if s.startswith("0x0004"))
    del lines[k]
    with pytest.raises(InputError) as ei:
        parse_lfts_text(lines, "r.out")
    assert "footer says 8 lids but the block has 7" in ei.value.msg
    assert ei.value.lineno == 11


@pytest.mark.parametrize("edit,msg", [
    (lambda s: s.replace("005 #", "5x #", 1), "garbled LFT entry"),
    (lambda s: s.replace("Unicast lids [0-8] of switch Lid 3",
                         "Unicast lids of switch", 1), "garbled switch"),
    (lambda s: s.replace("0x0002 005", "0x0009 005", 1), "above the block"),
    (lambda s: "junk\n" + s, "not an LFT dump"),
])
def test_garbled_dump(edit, msg):
    text = edit(open(fx("ft2x2-l0.lfts.dump")).read())
    with pytest.raises(InputError) as ei:
        parse_lfts_text(text, "g.dump")
    assert msg in ei.value.msg
    assert str(ei.value).startswith(f"g.dump:{ei.value.lineno}: ")


def test_duplicate_switch_block():
    text = open(fx("ft2x2-l0.lfts.dump")).read()
    first = text.split("8 lids dumped\n")[0] + "8 lids dumped\n"
    with pytest.raises(InputError) as ei:
        parse_lfts_text(text + first, "d.dump")
    assert "dumped twice (first at line 1)" in ei.value.msg
    assert ei.value.lineno == 39


def test_inferred_lmc_without_path_comments():
    # opensm dumps carry no "(path #k out of n)": LMC comes from LID ranges
    assert load_lfts(fx("ft4-l1.lfts.dump")).lmc == 1
    assert load_lfts(fx("ft4-l2.lfts.dump")).lmc == 2
    assert load_lfts(fx("ft4-l0.lfts.dump")).lmc == 0


# ----------------------------------------------------------------------
# files that end in the middle of a line (issue 15): "truncated?"

@pytest.mark.parametrize("name,fmt", [("ft2x2-l0.lfts.dump", "opensm"),
                                      ("ft2x2-l0.ibroute", "ibroute"),
                                      ("ft2x2-l2.dump_fts", "ibroute")])
@pytest.mark.parametrize("cut", [5, 12, 30])
def test_lft_dump_cut_mid_line(tmp_path, name, fmt, cut):
    """The dump cut inside its second entry line, at several places."""
    text = open(fx(name)).read()
    lines = text.splitlines(keepends=True)
    k = next(i for i, s in enumerate(lines) if s.startswith("0x")) + 1
    line = lines[k].rstrip("\n")
    part = "".join(lines[:k]) + line[:min(cut, len(line) - 1)]
    f = tmp_path / "cut.dump"
    f.write_text(part)
    with pytest.raises(InputError) as ei:
        load_lfts(str(f))
    assert ei.value.lineno == k + 1
    assert str(ei.value).startswith(f"{f}:{k + 1}: ")
    assert "truncated?" in ei.value.msg
    # the same text as a string
    with pytest.raises(InputError, match=r"truncated\?"):
        parse_lfts_text(part, "cut.dump")


def test_lft_dump_cut_in_footer(tmp_path):
    text = open(fx("ft2x2-l0.lfts.dump")).read()
    part = text[:text.index("lids dumped") + 4]
    f = tmp_path / "cut.dump"
    f.write_text(part)
    with pytest.raises(InputError) as ei:
        load_lfts(str(f))
    assert ei.value.lineno == part.count("\n") + 1
    assert "truncated?" in ei.value.msg


def test_lft_dump_without_final_newline_is_fine(tmp_path):
    text = open(fx("ft2x2-l0.lfts.dump")).read()
    f = tmp_path / "nonl.dump"
    f.write_text(text.rstrip("\n"))
    assert len(load_lfts(str(f)).switches) == len(
        parse_lfts_text(text, "x").switches)


@pytest.mark.parametrize("cut", ["PN:0", "LOG=AC", "PHY=4x", "SPD=",
                                 "Rev:000"])
def test_subnet_lst_cut_mid_line(tmp_path, cut):
    text = open(fx("ft4-l0.subnet.lst")).read()
    lines = text.splitlines(keepends=True)
    last = lines[-1].rstrip("\n")
    k = last.rindex(cut) + len(cut)
    f = tmp_path / "cut.lst"
    f.write_text("".join(lines[:-1]) + last[:k])
    with pytest.raises(InputError) as ei:
        load_topology(str(f))
    assert ei.value.lineno == len(lines)
    assert str(ei.value).startswith(f"{f}:{len(lines)}: ")
    assert ei.value.msg.endswith("(the file ends mid-line: truncated?)")


def test_subnet_lst_without_final_newline_is_fine(tmp_path):
    text = open(fx("ft4-l0.subnet.lst")).read()
    f = tmp_path / "nonl.lst"
    f.write_text(text.rstrip("\n"))
    assert load_topology(str(f)).links == load_topology(
        fx("ft4-l0.subnet.lst")).links
