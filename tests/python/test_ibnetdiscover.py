"""osmoffset.ibnetdiscover (ibnetdiscover dump -> ibsim net file) and
scripts/osm-sim --ibnetdiscover.

fixtures/realfab/tiny-ndr.ibnetdiscover is a hand-written dump in the shape
of the NDR dump of ../shared/realfabrics: two 65-port leaves and a spine,
every leaf-spine pair doubled, NDR links (one host at EDR), a SHARP
aggregation node on port 65 of every switch, two hosts with the adapter's
factory description, LIDs of the dump's own.  tiny-ndr.net and
tiny-ndr-nosharp.net are the expected conversions (with tiny-ndr.map; and
without SHARP nodes and map), checked line by line when they were made.
"""

import os

import pytest

from conftest import PLUGIN_SKIP_REASON, REPO, plugin_dir, run_osm_sim
from osmoffset import checks, fabric, ibnetdiscover
from osmoffset.analyze import Analysis

FIX = os.path.join(os.path.dirname(os.path.abspath(__file__)), "fixtures",
                   "realfab")
DUMP = os.path.join(FIX, "tiny-ndr.ibnetdiscover")
MAP = os.path.join(FIX, "tiny-ndr.map")
SHARED = os.path.join(os.path.dirname(REPO), "shared", "realfabrics")


def read(path):
    with open(path) as f:
        return f.read()


def test_exact_conversion_with_map():
    text, stats = ibnetdiscover.convert_file(DUMP, None, MAP)
    assert text == read(os.path.join(FIX, "tiny-ndr.net"))
    assert stats == {"switches": 3, "cas": 7, "links": 11, "sharp": 3,
                     "sharp_dropped": 0, "routers_dropped": 0,
                     "unnamed": 1, "mapped": 2,
                     "renamed_speeds": {"NDR": 20}, "max_ports": 65,
                     "sm_node": "H-0c42a10300000a30"}


def test_exact_conversion_without_sharp(tmp_path):
    out = tmp_path / "x.net"
    text, stats = ibnetdiscover.convert_file(DUMP, str(out), None, True)
    assert text == read(os.path.join(FIX, "tiny-ndr-nosharp.net"))
    assert out.read_text() == text
    assert (stats["cas"], stats["sharp_dropped"], stats["unnamed"]) == \
        (4, 3, 2)
    assert "Aggregation" not in text and "[65]" not in text


def test_converted_file_reads_back_as_the_same_fabric():
    text, _ = ibnetdiscover.convert_file(DUMP, None, MAP)
    a = fabric.load_topology(DUMP)
    b = fabric.parse_topology_text(text, "conv.net")
    assert sorted(n.guid for n in a.switches()) == \
        sorted(n.guid for n in b.switches())
    assert sorted(n.node_guid for n in a.cas()) == \
        sorted(n.node_guid for n in b.cas())
    # same cabling: (switch, port) -> (switch or CA node GUID, port)
    def cabling(t):
        return sorted((g, p, t.nodes[r].node_guid, rp)
                      for (g, p), (r, rp) in t.links.items()
                      if t.nodes[g].kind == "SW")
    assert cabling(a) == cabling(b)
    assert b.lids == {}                 # the dump's LIDs are gone
    # the first node hosts the SM: the CA the dump was taken from
    assert b.records[0]["id"] == "H-0c42a10300000a30"


def err_of(tmp_path, text, map_text=None, **kw):
    p = tmp_path / "bad.ibnetdiscover"
    p.write_text(text)
    m = None
    if map_text is not None:
        m = tmp_path / "bad.map"
        m.write_text(map_text)
    with pytest.raises(fabric.InputError) as ei:
        ibnetdiscover.convert_file(str(p), None, str(m) if m else None, **kw)
    return str(ei.value).replace(str(tmp_path) + os.sep, "")


def dump_lines():
    return read(DUMP).splitlines()


ROUTER = """
vendid=0x2c9
devid=0xcf08
sysimgguid=0xc42a10300000e00
rtguid=0xc42a10300000e00(c42a10300000e00)
Rt	1 "R-0c42a10300000e00"		# "router-1"
[1](c42a10300000e00) 	"S-0c42a10300000200"[3]		# lid 30 lmc 0 \
"MF0;leaf-2:MQM9700/U1" lid 3 4xNDR
""".replace("\\\n", "")


def test_an_ib_router_is_dropped(tmp_path):
    """A router on leaf-2's port 3 (to another subnet): it is dropped and
    its switch port left unconnected; the rest converts as without it.
    Before, the dump was refused (the router is no switch or CA)."""
    lines = dump_lines()
    i = next(k for k, l in enumerate(lines) if l.startswith("[33]") and
             "spine-1" in l and k > 20)
    lines.insert(i, '[3]\t"R-0c42a10300000e00"[1](c42a10300000e00) \t\t# '
                 '"router-1" lid 30 4xNDR')
    p = tmp_path / "tiny-ndr.ibnetdiscover"
    p.write_text("\n".join(lines) + "\n" + ROUTER)
    text, stats = ibnetdiscover.convert_file(str(p))
    plain, _ = ibnetdiscover.convert_file(DUMP)
    assert stats["routers_dropped"] == 1
    assert "# IB routers: 1 dropped, their switch ports left " \
        "unconnected\n" in text
    assert text.replace("# IB routers: 1 dropped, their switch ports left "
                        "unconnected\n", "") == plain


def test_error_unknown_speed_names_its_line(tmp_path):
    lines = dump_lines()
    i = next(k for k, l in enumerate(lines) if "node04 mlx5_0\" lid" in l)
    lines[i] = lines[i].replace("4xNDR", "4xWDR")
    assert err_of(tmp_path, "\n".join(lines)) == \
        "bad.ibnetdiscover:%d: unknown link speed 'WDR' (known: SDR, DDR, " \
        "QDR, FDR10, FDR, EDR, HDR, NDR, XDR)" % (i + 1)


def test_error_bad_width(tmp_path):
    lines = dump_lines()
    i = next(k for k, l in enumerate(lines) if l.startswith("[33]"))
    lines[i] = lines[i].replace("4xNDR", "3xNDR")
    assert err_of(tmp_path, "\n".join(lines)) == \
        "bad.ibnetdiscover:%d: link width 3x is not one of 1x, 2x, 4x, " \
        "8x, 12x" % (i + 1)


def test_error_one_sided_link(tmp_path):
    lines = dump_lines()
    i = next(k for k, l in enumerate(lines) if l.startswith("[34]"))
    lines[i] = lines[i].replace('"[2]', '"[7]')
    j = next(k for k, l in enumerate(lines) if l.startswith("[2]") and
             "leaf-1" in l)                # the spine's side of that cable
    assert err_of(tmp_path, "\n".join(lines)) == \
        'bad.ibnetdiscover:%d: link "S-0c42a10300000300"[2] -> ' \
        '"S-0c42a10300000100"[34] but line %d links "S-0c42a10300000100"' \
        '[34] to "S-0c42a10300000300"[7]' % (j + 1, i + 1)


def test_error_not_ibnetdiscover(tmp_path):
    msg = err_of(tmp_path, "hello world\n")
    assert msg == "bad.ibnetdiscover:1: unrecognised topology format " \
        "(expected opensm-subnet.lst, ibnetdiscover output or an ibsim " \
        "net file)"


def test_error_map_lines(tmp_path):
    text = read(DUMP)
    assert err_of(tmp_path, text, "# names\nH-0c42a10300000a20\n") == \
        "bad.map:2: expected 'KEY NAME', got 'H-0c42a10300000a20'"
    assert err_of(tmp_path, text, "a b\nzz-q! x\n").startswith(
        "bad.map:2: bad key 'zz-q!'")
    assert err_of(tmp_path, text, "0xc42a10300000a20 a\n"
                  "0c42a10300000a20 b\n") == \
        "bad.map:2: 0c42a10300000a20 already mapped at line 1"


def test_error_guid_collision(tmp_path):
    # a CA's port GUID (node GUID + 1 in ibsim) is another CA's node GUID
    text = read(DUMP).replace("0c42a10300000a10", "0c42a10300000a01") \
        .replace("c42a10300000a10", "c42a10300000a01")
    msg = err_of(tmp_path, text)
    assert "GUID 0x0c42a10300000a01" in msg and "also used by" in msg


def test_osm_sim_rejects_bad_dump_in_one_line(tmp_path):
    p = tmp_path / "bad.txt"
    p.write_text('Switch 4 "a"\n[1] "b"[1]\n')
    proc = run_osm_sim(["--ibnetdiscover", str(p), "--out",
                        str(tmp_path / "o"), "--stock"])
    assert proc.returncode == 2
    assert proc.stderr.strip() == \
        'osm-sim: --ibnetdiscover: %s:2: remote node "b" is not defined' % p
    proc = run_osm_sim(["--net", str(p), "--no-sharp", "--out",
                        str(tmp_path / "o"), "--stock"])
    assert proc.returncode == 2
    assert "--no-sharp go with --ibnetdiscover" in proc.stderr


def test_osm_sim_help_documents_the_option():
    proc = run_osm_sim(["--help"])
    for word in ("--ibnetdiscover", "--map", "--no-sharp", "fabric.net",
                 "HDR"):
        assert word in proc.stdout, word


def routed(tmp_path, name, args):
    out = tmp_path / name
    proc = run_osm_sim(["--ibnetdiscover", DUMP, "--out", str(out),
                        "--no-ibroute", "--quiet", "--allow-fallback"] + args)
    assert proc.returncode == 0, proc.stderr
    topo = fabric.load_topology(str(out / "opensm-subnet.lst"))
    lfts = fabric.load_lfts(str(out / "opensm-lfts.dump"))
    return out, topo, lfts


@pytest.mark.parametrize("sharp", [True, False], ids=["sharp", "nosharp"])
@pytest.mark.parametrize("mode", [["--stock"], ["--port-offsetting", "on"]],
                         ids=["stock", "offsetting"])
def test_osm_sim_routes_the_dump(tmp_path, mode, sharp):
    if mode[0] != "--stock" and plugin_dir() is None:
        pytest.skip(PLUGIN_SKIP_REASON)
    args = mode + ["--lmc", "2", "--map", MAP] + ([] if sharp
                                                  else ["--no-sharp"])
    out, topo, lfts = routed(tmp_path, "o", args)
    assert (out / "fabric.net").exists()
    used = checks.osm_log_summary((out / "osm.log").read_text())[
        "engine_used"]
    if mode == ["--stock"]:
        # stock updn finds no root when every switch carries a CA (the
        # aggregation nodes) and OpenSM falls back to minhop
        assert used == ("minhop" if sharp else "updn")
    ncas = 7 if sharp else 4
    assert len(topo.cas()) == ncas and len(topo.switches()) == 3
    # every LID of every CA (SHARP nodes too) reachable from every switch
    assert checks.reachability(topo, lfts, 2) == []
    an = Analysis(topo, lfts, bisections=0)
    an.run()
    assert an.result["valid"] and an.result["unreachable_pairs"] == 0
    assert an.result["ranks"] == 4       # aggregation nodes get no rank
    names = sorted(n.desc for n in topo.cas()
                   if n.desc != ibnetdiscover.SHARP_DESC)
    assert names == ["H-0c42a10300000a10", "node01 mlx5_0", "node03",
                     "node04 mlx5_0"]


@pytest.mark.parametrize("name", ["ndr-2level-railopt.ibnetdiscover",
                                  "qdr-irregular-x5.ibnetdiscover"])
def test_shared_real_dumps_convert(name):
    path = os.path.join(SHARED, name)
    if not os.path.isfile(path):
        pytest.skip("%s is absent" % path)
    mp = path.replace(".ibnetdiscover", ".map")
    text, stats = ibnetdiscover.convert_file(
        path, None, mp if os.path.isfile(mp) else None)
    topo = fabric.parse_topology_text(text, "conv.net")
    if name.startswith("ndr"):
        assert (stats["switches"], stats["cas"], stats["sharp"]) == \
            (40, 582, 40)
        assert stats["max_ports"] == 65 and "NDR" in stats["renamed_speeds"]
    else:
        assert (stats["switches"], stats["cas"], stats["sharp"],
                stats["mapped"]) == (11, 89, 0, 86)
    descs = [n.desc for n in topo.cas()
             if n.desc != ibnetdiscover.SHARP_DESC]
    assert len(descs) == len(set(descs))     # every host has its own name
