"""Simulated alltoall: routes through LFTs, rank orders, the per-round
model, the SimGrid platform, scripts/rank-order and alltoall-ab --simulate
(the CI case: kary-4-3, LMC 0 and 2, port_offsetting off/on)."""

import json
import os
import random
import shutil
import xml.etree.ElementTree as ET

import pytest

from conftest import REPO, SMALL_NET, plugin_dir, requires_plugin, \
    run_script, run_with_plugin
from osmoffset import fabric, rankorder, routes, schedule, simgrid
from osmoffset.alltoall import StepError
from osmoffset.alltoall import bench as a2a_bench

AB = os.path.join(REPO, "scripts", "alltoall-ab")
RANK_ORDER = os.path.join(REPO, "scripts", "rank-order")
KARY = os.path.join(REPO, "sim-topologies", "kary-4-3.net")

# SMALL_NET (ibsim GUIDs: switches 0x200000.., CA ports 0x100001,
# 0x100003, ...) with LMC 1: h0 LIDs 2-3, h1 4-5, h2 6-7, h3 8-9.
# Leaves send the base LID of a remote host up port 3 (spine0) or 4
# (spine1) and its base+1 up the other one.
HOSTS = {"h0": (0x100001, 2), "h1": (0x100003, 4), "h2": (0x100005, 6),
         "h3": (0x100007, 8)}
SWITCHES = {"leaf0": 0x200000, "leaf1": 0x200001, "spine0": 0x200002,
            "spine1": 0x200003}
PORTS = {
    "leaf0": {2: 1, 3: 1, 4: 2, 5: 2, 6: 3, 7: 4, 8: 4, 9: 3},
    "leaf1": {2: 3, 3: 4, 4: 4, 5: 3, 6: 1, 7: 1, 8: 2, 9: 2},
    "spine0": {2: 1, 3: 1, 4: 1, 5: 1, 6: 2, 7: 2, 8: 2, 9: 2},
    "spine1": {2: 1, 3: 1, 4: 1, 5: 1, 6: 2, 7: 2, 8: 2, 9: 2},
}


def lft_text(ports):
    out = []
    owner = {}
    for h, (g, lid) in HOSTS.items():
        owner[lid] = owner[lid + 1] = (g, h)
    for i, (sw, g) in enumerate(SWITCHES.items()):
        out.append("Unicast lids [0-9] of switch Lid %d guid 0x%016x "
                   "('%s'):" % (10 + i, g, sw))
        for lid in sorted(ports[sw]):
            pg, name = owner[lid]
            out.append("0x%04x %03d # Channel Adapter portguid 0x%016x: "
                       "'%s'" % (lid, ports[sw][lid], pg, name))
        out.append("9 lids dumped")
    return "\n".join(out) + "\n"


def small_routes(ports=None, gbps=100.0):
    topo = fabric.parse_topology_text(SMALL_NET, "small.net")
    lfts = fabric.parse_lfts_text(lft_text(ports or PORTS), "small.lfts")
    return routes.Routes(topo, lfts, gbps, lmc=1)


def names(rt, path):
    return [rt.link_text(i) for i in path]


def host(rt, name):
    return next(h for h in rt.hosts if h.desc == name)


# ----------------------------------------------------------------------
# routes

def test_paths_follow_the_lft_of_the_destination_lid():
    rt = small_routes()
    h0, h1, h2, h3 = (host(rt, n) for n in ("h0", "h1", "h2", "h3"))
    assert [h.lid for h in (h0, h1, h2, h3)] == [2, 4, 6, 8]
    assert names(rt, rt.path(h0, h2)) == ["h0[1]", "leaf0[3]", "spine0[2]",
                                          "leaf1[1]"]
    assert names(rt, rt.path(h0, h2, 1)) == ["h0[1]", "leaf0[4]",
                                             "spine1[2]", "leaf1[1]"]
    assert names(rt, rt.path(h3, h1)) == ["h3[1]", "leaf1[4]", "spine1[1]",
                                          "leaf0[2]"]
    assert names(rt, rt.path(h0, h1)) == ["h0[1]", "leaf0[2]"]
    assert rt.path(h0, h0) == []
    with pytest.raises(routes.RouteError, match="offset 2 out of range"):
        rt.path(h0, h2, 2)


@pytest.mark.parametrize("change, message", [
    (("spine0", 6, None), "switch 'spine0' (0x0000000000200002) has no LFT "
                          "entry for LID 6 ('h2')"),
    (("spine0", 6, 1), "routing loop for LID 6 ('h2')"),
    (("spine0", 6, 5), "sends LID 6 ('h2') out of port 5, which has no "
                       "cable"),
    (("leaf1", 6, 2), "sends LID 6 ('h2') out of port 2 to the wrong CA "
                      "'h3'"),
])
def test_broken_routes_name_switch_and_lid(change, message):
    sw, lid, port = change
    ports = {k: dict(v) for k, v in PORTS.items()}
    if port is None:
        del ports[sw][lid]
    else:
        ports[sw][lid] = port
    rt = small_routes(ports)
    with pytest.raises(routes.RouteError) as exc:
        rt.path(host(rt, "h0"), host(rt, "h2"))
    assert message in str(exc.value)


def test_link_rates_from_the_topology():
    topo = fabric.load_topology(KARY)
    assert set(topo.rates.values()) == {32.0}       # 4xQDR
    assert len(topo.rates) == len(topo.links)
    rt = small_routes(gbps=56.0)                     # no rate in SMALL_NET
    rt.path(host(rt, "h0"), host(rt, "h2"))
    assert set(rt.link_gbps) == {56.0} and rt.rated == 0


# ----------------------------------------------------------------------
# rank orders

def test_orders_of_a_fabric():
    topo = fabric.load_topology(KARY)
    hosts = rankorder.hosts_of(topo)
    leaf = [h.desc for h in rankorder.order_hosts(hosts, "leaf")]
    assert leaf == ["h%04d" % i for i in range(64)]
    guid = rankorder.order_hosts(hosts, "guid")
    assert [h.guid for h in guid] == sorted(h.guid for h in hosts)
    assert [h.desc for h in guid] != leaf           # random GUIDs
    r1 = [h.desc for h in rankorder.order_hosts(hosts, "random", 1)]
    want = list(leaf)
    random.Random(1).shuffle(want)
    assert r1 == want
    assert r1 != [h.desc for h in rankorder.order_hosts(hosts, "random", 2)]


def test_hostfile_and_slurm_text():
    rt = small_routes()
    order = rankorder.order_hosts(rt.hosts, "leaf")
    assert rankorder.format_order(order) == "h0\nh1\nh2\nh3\n"
    assert rankorder.format_order(order[::-1], "slurm") == "h3,h2,h1,h0\n"
    assert rankorder.format_order(order, names="guid").split() == [
        "0x0000000000100001", "0x0000000000100003", "0x0000000000100005",
        "0x0000000000100007"]


def test_read_hostfile(tmp_path):
    rt = small_routes()
    f = tmp_path / "hosts"
    f.write_text("# rank order\nh2 slots=1\n\nh0\n0x0000000000100003\n")
    assert [h.desc for h in rankorder.read_hostfile(str(f), rt.hosts)] == \
        ["h2", "h0", "h1"]
    f.write_text("h3,h1\n")
    assert [h.desc for h in rankorder.read_hostfile(str(f), rt.hosts)] == \
        ["h3", "h1"]
    f.write_text("h0\nh9\n")
    with pytest.raises(fabric.InputError, match=r"hosts:2: unknown host "
                                                r"'h9'"):
        rankorder.read_hostfile(str(f), rt.hosts)
    f.write_text("h0\nh1\nh0\n")
    with pytest.raises(fabric.InputError, match=r"hosts:3: host 'h0' "
                                                r"listed twice"):
        rankorder.read_hostfile(str(f), rt.hosts)


# ----------------------------------------------------------------------
# the per-round model

def test_schedules():
    assert schedule.partners(4, "ring").tolist() == [[1, 2, 3, 0],
                                                     [2, 3, 0, 1],
                                                     [3, 0, 1, 2]]
    assert schedule.partners(4, "pair").tolist() == [[1, 0, 3, 2],
                                                     [2, 3, 0, 1],
                                                     [3, 2, 1, 0]]
    with pytest.raises(ValueError, match="power-of-two"):
        schedule.partners(6, "pair")


def test_round_model_counts_the_worst_link_of_each_round():
    rt = small_routes()
    order = rankorder.order_hosts(rt.hosts, "leaf")
    per_byte = 8 / 100e9                    # one flow on a 100 Gbit/s link
    m = schedule.round_model(rt, order)
    assert m["rounds"] == 3 and m["worst_flows"] == 1
    assert m["seconds_per_byte"] == pytest.approx(3 * per_byte)
    assert m["contention"] == pytest.approx(1.0)
    # leaf0 sends h3's base LID up spine0 too: in round 2 h0 -> h2 and
    # h1 -> h3 share leaf0[3]
    ports = {k: dict(v) for k, v in PORTS.items()}
    ports["leaf0"][8] = 3
    rt = small_routes(ports)
    m = schedule.round_model(rt, rankorder.order_hosts(rt.hosts, "leaf"))
    assert m["seconds_per_byte"] == pytest.approx(4 * per_byte)
    assert m["mean_max_flows"] == pytest.approx(4 / 3)
    assert m["efficiency"] == pytest.approx(2.5 / 3)
    assert schedule.lid_offset_times(rt, rankorder.order_hosts(
        rt.hosts, "leaf")) == pytest.approx([4 * per_byte, 3 * per_byte])


# ----------------------------------------------------------------------
# the platform

def test_platform_routes_every_pair_through_the_lfts(tmp_path):
    rt = small_routes()
    order = rankorder.order_hosts(rt.hosts, "leaf")
    path = str(tmp_path / "p.xml")
    info = simgrid.write_platform(rt, order, path, offset=1,
                                  latency_ns=100)
    assert (info["hosts"], info["routes"]) == (4, 12)
    zone = ET.parse(path).getroot().find("zone")
    assert zone.get("routing") == "Full"
    assert [h.get("id") for h in zone.findall("host")] == \
        ["h0", "h1", "h2", "h3"]
    links = {l.get("id"): l for l in zone.findall("link")}
    assert len(links) == info["links"]
    for l in links.values():
        assert (l.get("bandwidth"), l.get("latency")) == ("100Gbps",
                                                          "100ns")
    port = {i: l.find("prop").get("value") for i, l in links.items()}
    got = {(r.get("src"), r.get("dst")): [port[c.get("id")]
                                          for c in r.findall("link_ctn")]
           for r in zone.findall("route")}
    assert len(got) == 12
    assert got[("h0", "h2")] == ["h0[1]", "leaf0[4]", "spine1[2]",
                                 "leaf1[1]"]
    assert got[("h2", "h1")] == ["h2[1]", "leaf1[3]", "spine0[1]",
                                 "leaf0[2]"]
    for r in zone.findall("route"):
        assert r.get("symmetrical") == "NO"
    simgrid.write_hostfile(order[::-1], info["ids"], str(tmp_path / "hf"))
    assert (tmp_path / "hf").read_text() == "h3\nh2\nh1\nh0\n"


def test_read_bench_csv_errors(tmp_path):
    f = tmp_path / "b.csv"
    f.write_text("pattern,ranks\n")
    with pytest.raises(StepError, match="b.csv:1: not an a2a-bench CSV"):
        a2a_bench.read_csv(str(f))
    f.write_text(",".join(a2a_bench.HEADER) +
                 "\nalltoall,4,8,1,1,1,1,1,x\n")
    with pytest.raises(StepError, match=r"b.csv:2: bad number"):
        a2a_bench.read_csv(str(f))
    f.write_text(",".join(a2a_bench.HEADER) + "\nalltoall,4,8\n")
    with pytest.raises(StepError, match=r"b.csv:2: 3 fields, expected 9"):
        a2a_bench.read_csv(str(f))
    f.write_text(",".join(a2a_bench.HEADER) +
                 "\nalltoall,4,8,1,1.5,2,2,3,4.25\n")
    assert a2a_bench.read_csv(str(f), [8]) == [
        {"pattern": "alltoall", "ranks": 4, "bytes": 8, "iterations": 1,
         "min_us": 1.5, "median_us": 2.0, "mean_us": 2.0, "max_us": 3.0,
         "bw_MBps": 4.25}]
    with pytest.raises(StepError, match=r"b.csv: sizes \[8\], expected "
                                        r"\[8, 16\]"):
        a2a_bench.read_csv(str(f), [8, 16])


# ----------------------------------------------------------------------
# scripts/rank-order

def test_rank_order_tool(tmp_path):
    p = run_script(RANK_ORDER, ["--topology", KARY])
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["h%04d" % i for i in range(64)]
    p = run_script(RANK_ORDER, ["--topology", KARY, "--order", "guid",
                                "--format", "slurm"])
    assert p.returncode == 0 and p.stdout.count("\n") == 1
    hosts = rankorder.hosts_of(fabric.load_topology(KARY))
    assert p.stdout.strip().split(",") == [
        h.desc for h in sorted(hosts, key=lambda h: h.guid)]
    out = tmp_path / "o.json"
    p = run_script(RANK_ORDER, ["--topology", KARY, "--order", "random",
                                "--seed", "3", "--json", "-o", str(out)])
    assert p.returncode == 0 and p.stdout == ""
    doc = json.loads(out.read_text())
    assert doc["seed"] == 3 and len(doc["hosts"]) == 64
    assert doc["hosts"][0]["leaf"].startswith("sw-l1-")
    assert run_script(RANK_ORDER, ["--version"]).stdout.startswith(
        "rank-order ")


def test_rank_order_bad_input(tmp_path):
    bad = tmp_path / "bad.net"
    bad.write_text("garbage line\n")
    p = run_script(RANK_ORDER, ["--topology", str(bad)])
    assert p.returncode == 2
    assert p.stderr.strip() == "rank-order: %s:1: unrecognised topology " \
        "format (expected opensm-subnet.lst, ibnetdiscover output or an " \
        "ibsim net file)" % bad
    p = run_script(RANK_ORDER, ["--topology", KARY, "--order", "lid"])
    assert p.returncode == 2 and "invalid choice" in p.stderr


# ----------------------------------------------------------------------
# alltoall-ab --simulate

@pytest.mark.parametrize("args, message", [
    (["--dumps", "a=/x", "--net", KARY], "--dumps and --net exclude each "
                                         "other"),
    (["--dumps", "noequals"], "--dumps 'noequals': expected NAME=DIR or "
                                  "NAME=LFTS,TOPOLOGY"),
    (["--dumps", "a=/nonexistent"], "--dumps a: /nonexistent/opensm-lfts."
                                    "dump: no such file"),
    (["--net", KARY, "--order", "leaf,nope"], "--order: 'nope' is not leaf,"
                                              " random, guid or an existing "
                                              "hostfile"),
    (["--net", KARY, "--predict"], "--predict and --simulate exclude each "
                                   "other"),
    ([], "--simulate needs --net FILE or --dumps NAME=DIR"),
])
def test_simulate_bad_usage(args, message):
    p = run_script(AB, ["--simulate", "--bench", "/bin/true"] + args)
    assert p.returncode == 2, p.stderr
    assert p.stderr.strip() == "alltoall-ab: " + message
    assert "Traceback" not in p.stderr


@pytest.fixture(scope="module")
def smpi_bench(tmp_path_factory):
    """a2a-bench built with smpicc as alltoall-ab finds it:
    $OSMOFFSET_A2A_BENCH_SMPI (make check sets it), the source tree's
    build, an installed one, else built here."""
    if not (shutil.which("smpicc") and shutil.which("smpirun")):
        pytest.skip("smpicc/smpirun missing (apt-get install libsimgrid-dev)")
    return a2a_bench.smpi_bench(None, str(tmp_path_factory.mktemp("smpi")))


@requires_plugin
def test_simulate_kary_offsetting_is_faster(smpi_bench, tmp_path):
    """The CI case.  On the 4-ary 3-tree in routing order stock updn puts
    up to 4 flows on one link per round and osmoffset none: the
    simulated alltoall is about 3x faster with port offsetting.  Assert
    what that makes certain (>= 1.5x), for base LIDs and base+1."""
    csv_path = tmp_path / "t.csv"
    p = run_with_plugin(AB, ["--simulate", "--net", KARY, "--lmc", "0,2",
                             "--lid-offsets", "0,1", "--sizes", "1M",
                             "--bench", smpi_bench, "--out",
                             str(tmp_path / "o"), "--json", "--csv",
                             str(csv_path)], timeout=600)
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    rows = {(r["lmc"], r["port_offsetting"], r["lid_offset"]): r
            for r in doc["rows"]}
    assert sorted(rows) == [(0, "off", 0), (0, "on", 0), (2, "off", 0),
                            (2, "off", 1), (2, "on", 0), (2, "on", 1)]
    for (lmc, po, k), r in rows.items():
        assert r["ranks"] == 64 and r["order"] == "leaf"
        assert r["links"] == (288 if po == "off" else 384)
        assert r["link_gbps"] == [32.0]
        assert (r["lft_analyze"] is None) == (k > 0)
        if po == "on":
            off = rows[(lmc, "off", k)]
            assert off["time_us"]["1048576"] >= \
                1.5 * r["time_us"]["1048576"], (lmc, k)
            assert off["model"]["seconds_per_byte"] >= \
                1.5 * r["model"]["seconds_per_byte"]
            assert r["model"]["worst_flows"] == 1
            assert r["slowdown_pct"]["1048576"] < -33.0
        else:
            assert r["model"]["worst_flows"] >= 2
    assert rows[(0, "off", 0)]["slowdown_pct"]["1048576"] == 0.0
    lines = csv_path.read_text().splitlines()
    assert lines[0].split(",") == simgrid.CSV_FIELDS
    assert len(lines) == 7


def test_simulate_order_hostfile_uses_the_one_reader(tmp_path):
    """--order FILE goes through rankorder.read_hostfile: its errors, with
    file and line, are alltoall-ab's exit 2."""
    if not shutil.which("smpirun"):
        pytest.skip("smpirun missing (apt-get install libsimgrid-dev)")
    d = tmp_path / "dump"
    d.mkdir()
    (d / "opensm-subnet.lst").write_text(SMALL_NET)
    (d / "opensm-lfts.dump").write_text(lft_text(PORTS))
    hf = tmp_path / "hosts"
    hf.write_text("h2\nh0 slots=1\nnot-a-host\n")
    rt = routes.Routes(fabric.load_topology(str(d / "opensm-subnet.lst")),
                       fabric.load_lfts(str(d / "opensm-lfts.dump")))
    with pytest.raises(fabric.InputError, match=r"hosts:3: unknown host "
                                                r"'not-a-host'"):
        rankorder.read_hostfile(str(hf), rt.hosts)
    p = run_script(AB, ["--simulate", "--bench", "/bin/true", "--dumps",
                        "a=%s" % d, "--order", "leaf,%s" % hf,
                        "--no-analyze"])
    assert p.returncode == 2, p.stderr
    assert p.stderr.startswith("alltoall-ab: --order: %s:3: unknown host "
                               "'not-a-host'" % hf), p.stderr
    assert len(p.stderr.splitlines()) == 1, p.stderr


def test_bench_simulate_version_and_bad_case():
    bs = os.path.join(REPO, "scripts", "bench-simulate")
    p = run_script(bs, ["--version"])
    assert p.stdout == "bench-simulate (osmoffset) 0.1.0\n"
    p = run_script(bs, ["--cases", "nope"])
    assert p.returncode == 2
    assert p.stderr.startswith("bench-simulate: --cases: unknown case "
                               "'nope'")


@requires_plugin
def test_bench_simulate_case_in_process(smpi_bench, tmp_path, monkeypatch):
    """A small generated case through bench-simulate's library: gen-fabric,
    the simulation in-process, the tables and the Markdown report."""
    from osmoffset.alltoall import set_progress, simreport
    if plugin_dir():
        monkeypatch.setenv("OSMOFFSET_PLUGIN_DIR", plugin_dir())
    set_progress(None)
    case = ("ft2-4x2", 8, ["2level", "--leaves", "4", "--spines", "2",
                           "--hosts-per-leaf", "2"],
            "0,1", "leaf", "0,1", "64K", "2-level 4 x 2")
    try:
        res = simreport.run_case(str(tmp_path), case, 2, smpi_bench)
    finally:
        set_progress("stdout")
    assert (tmp_path / "fabrics" / "ft2-4x2.net").is_file()
    assert res["case"] == "ft2-4x2" and res["hosts"] == 8
    assert res["generator"].startswith("gen-fabric 2level")
    assert sorted((r["lmc"], r["port_offsetting"], r["lid_offset"])
                  for r in res["rows"]) == [
        (0, "off", 0), (0, "on", 0), (1, "off", 0), (1, "off", 1),
        (1, "on", 0), (1, "on", 1)]
    table = simreport.case_table(res)
    assert len(table) == 2 + 6 and table[0].startswith("| LMC |")
    cross = simreport.crosscheck([res])
    assert len(cross) == 2 + 2        # LMC 0 and 1, leaf, base LIDs
    doc = tmp_path / "doc.md"
    simreport.write_doc(str(doc), ["--cases", "x"], [res], 1.0)
    text = doc.read_text()
    assert text.startswith("# Simulated MPI alltoall over OpenSM's routes")
    assert "## ft2-4x2: 2-level 4 x 2, 8 ranks" in text
