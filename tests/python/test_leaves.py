"""Which hosts run jobs: osmoffset.leaves (the plugin's leaf rule, for the
tools) and the hostfiles rank-order writes.

oo_rank_leaves() in opensm/osm_offset_rank.c is the plugin's rule,
Check-tested in tests/check_osmoffset.c; these are the same shapes.
"""

import json
import os
import shutil

import pytest

from conftest import GEN_FABRIC, REPO, run_osm_sim, run_script
from osmoffset import leaves, rankorder
from osmoffset.fabric import load_topology

RANK_ORDER = os.path.join(REPO, "scripts", "rank-order")
LFT_ANALYZE = os.path.join(REPO, "scripts", "lft-analyze")
HAVE_SIM = bool(shutil.which("ibsim") and shutil.which("opensm"))


def two_level(mgmt=0):
    """links, hosts: 4 leaves (0-3) of 4 hosts, each cabled once to
    spines 4-7; mgmt HCAs on spine 5."""
    links = [[4, 5, 6, 7] for _ in range(4)] + [[0, 1, 2, 3]
                                                 for _ in range(4)]
    return links, [4, 4, 4, 4, 0, mgmt, 0, 0]


def test_a_spine_with_management_hcas_is_no_leaf():
    links, hosts = two_level(mgmt=2)
    assert leaves.leaf_switches(links, hosts) == [True] * 4 + [False] * 4
    links, hosts = two_level()
    assert leaves.leaf_switches(links, hosts) == [True] * 4 + [False] * 4


def test_a_core_with_a_management_hca_is_no_leaf():
    """Pod A: leaves 0, 1 under pod spines 4, 5; pod B: leaves 2, 3 (3
    with one host) under 6, 7; cores 8 (over 4, 6) with one HCA and 9
    (over 5, 7).  The core is no leaf; the sparse leaf 3 is one."""
    links = [[4, 5], [4, 5], [6, 7], [6, 7], [0, 1, 8], [0, 1, 9],
             [2, 3, 8], [2, 3, 9], [4, 6], [5, 7]]
    hosts = [4, 4, 4, 1, 0, 0, 0, 0, 1, 0]
    assert leaves.leaf_switches(links, hosts) == [True] * 4 + [False] * 6


def test_a_line_asic_with_a_management_hca_over_one_edge_is_no_leaf():
    """A small director: line ASICs 2 and 3 with one management HCA each,
    each over one edge (0, 1) of four hosts; fabric ASICs 4 and 5 over
    both lines.  A line has as many cables to an edge as hosts: no leaf
    (check_osmoffset's rank_hosts_on_a_line_asic_over_one_edge_keep_it_a_
    line, the same shape)."""
    links = [[2], [3], [0, 4, 5], [1, 4, 5], [2, 3], [2, 3]]
    hosts = [4, 4, 1, 1, 0, 0]
    assert leaves.leaf_switches(links, hosts) == [True] * 2 + [False] * 4


def test_a_doubled_trunk_to_a_one_host_switch():
    """The 2008 mail's fabric: one host on switch 0, four on switch 1,
    four parallel cables: switch 0 looks like a spine (more cables to host
    switches than hosts).  With a single leaf left no job would cross the
    fabric, so no switch is off the leaves."""
    assert leaves.leaf_switches([[1] * 4, [0] * 4], [1, 4]) == [False, True]
    topo = load_topology(os.path.join(REPO, "sim-topologies",
                                      "seed-4x4trunk.net"))
    assert leaves.off_leaf_switches(topo) == set()
    kept, out = rankorder.job_hosts(topo, rankorder.hosts_of(topo), True)
    assert len(kept) == 5 and not out


def cluster(tmp_path, *more):
    net = str(tmp_path / "c.net")
    p = run_script(GEN_FABRIC, ["cluster", "--radix", "12", "--spines", "3",
                                "--edges", "8", "--hosts-per-edge", "6",
                                "--uplinks", "3", "--core-hosts", "2",
                                "--random-guids"] + list(more) + ["-o", net])
    assert p.returncode == 0, p.stderr
    return net


def test_management_hcas_on_spines_hang_off_no_leaf(tmp_path):
    topo = load_topology(cluster(tmp_path, "--sharp"))
    off = leaves.off_leaf_switches(topo)
    assert sorted(topo.nodes[g].desc for g in off) == \
        ["MF0;spine01:SW12/U1", "MF0;spine02:SW12/U1"]
    hosts = rankorder.hosts_of(topo)
    kept, out = rankorder.job_hosts(topo, hosts)
    assert len(kept) == 48 and all(h.desc.startswith("node") for h in kept)
    assert sorted(h.desc.split()[0] for h in out
                  if not leaves.is_aggregation_node(h.desc)) == \
        ["mgmt01", "mgmt02"]
    kept, out = rankorder.job_hosts(topo, hosts, spine_cas=True)
    assert len(kept) == 50 and len(out) == 11     # a SHARP node per ASIC
    assert all(leaves.is_aggregation_node(h.desc) for h in out)


def test_rank_order_leaves_out_what_runs_no_job(tmp_path):
    """SHARP aggregation nodes used to name a switch's place in the leaf
    order (every switch has one: leaves then went by GUID) and came into
    the hostfile (one 'Mellanox' line).  Now they are left out, and the
    order is lft-analyze's leaf order, whose ranks they never were.  The
    management HCAs on the spines run no job either (they used to take
    ranks 0 and 1, and shift every job block by two)."""
    net = cluster(tmp_path, "--sharp")
    p = run_script(RANK_ORDER, ["--topology", net, "--spine-cas", "--json"])
    assert p.returncode == 0, p.stderr
    doc = json.loads(p.stdout)
    assert len(doc["hosts"]) == 50
    assert len(doc["left_out"]) == 11
    assert all(leaves.is_aggregation_node(h["desc"])
               for h in doc["left_out"])
    names = [h["desc"] for h in doc["hosts"]]
    assert names[:3] == ["mgmt01 HCA-1", "mgmt02 HCA-1", "node000 HCA-1"]
    assert names[2:] == ["node%03d HCA-1" % i for i in range(48)]
    p = run_script(RANK_ORDER, ["--topology", net])
    assert "Mellanox" not in p.stdout and "mgmt" not in p.stdout
    for flags in ([], ["--leaves-only"]):
        p = run_script(RANK_ORDER, ["--topology", net, "--json"] + flags)
        assert p.returncode == 0, p.stderr
        compute = json.loads(p.stdout)
        assert [h["desc"] for h in compute["hosts"]] == names[2:]
        assert sorted(h["desc"] for h in compute["left_out"]
                      if h["desc"].startswith("mgmt")) == \
            ["mgmt01 HCA-1", "mgmt02 HCA-1"]
    p = run_script(RANK_ORDER, ["--topology", net, "--all-cas", "--json"])
    every = json.loads(p.stdout)
    assert len(every["hosts"]) == 61 and not every["left_out"]
    assert [h["desc"] for h in every["hosts"][:50]] == names
    for flags in (["--all-cas", "--leaves-only"],
                  ["--spine-cas", "--leaves-only"]):
        p = run_script(RANK_ORDER, ["--topology", net] + flags)
        assert p.returncode == 2 and "not allowed with" in p.stderr


def test_rank_order_is_lft_analyzes_leaf_order(tmp_path):
    pytest.importorskip("numpy")
    if not HAVE_SIM:
        pytest.skip("ibsim/opensm missing")
    from osmoffset.analyze import Analysis
    from osmoffset.fabric import load_lfts
    net = cluster(tmp_path, "--sharp")
    out = str(tmp_path / "stock")
    p = run_osm_sim(["--net", net, "--out", out, "--stock", "--quiet",
                     "--roots", "none", "--allow-fallback"])
    assert p.returncode == 0, p.stderr
    an = Analysis(load_topology(net),
                  load_lfts(os.path.join(out, "opensm-lfts.dump")),
                  spine_cas=True)
    p = run_script(RANK_ORDER, ["--topology", net, "--names", "guid",
                                "--spine-cas"])
    assert p.returncode == 0, p.stderr
    assert p.stdout.split() == ["0x%016x" % an.hosts[i].guid
                                for i in an.ranks]
    assert len(an.ranks) == 50
    # the compute nodes, by default
    an = Analysis(load_topology(net),
                  load_lfts(os.path.join(out, "opensm-lfts.dump")))
    assert "2 CAs on spines or cores left out" in an.rank_source
    p = run_script(RANK_ORDER, ["--topology", net, "--names", "guid"])
    assert p.returncode == 0, p.stderr
    ranks = ["0x%016x" % an.hosts[i].guid for i in an.ranks]
    assert p.stdout.split() == ranks and len(ranks) == 48
    dump = os.path.join(out, "opensm-lfts.dump")
    for flags, n in (([], 24), (["--leaves-only"], 24),
                     (["--spine-cas"], 25)):
        p = run_script(LFT_ANALYZE, ["--lfts", dump, "--topology", net,
                                     "--job", "half", "--bisections", "0",
                                     "--json"] + flags)
        assert p.returncode in (0, 1), p.stderr
        assert json.loads(p.stdout)["ranks"] == n


def test_lft_analyze_leaves_only_goes_without_a_hostfile(tmp_path):
    hosts = tmp_path / "hosts"
    hosts.write_text("h0001\n")
    net = os.path.join(REPO, "sim-topologies", "seed-4x4trunk.net")
    for flag in ("--leaves-only", "--spine-cas"):
        p = run_script(LFT_ANALYZE, ["--lfts", net, "--topology", net,
                                     "--hostfile", str(hosts), flag])
        assert p.returncode == 2
        assert p.stderr.strip() == "lft-analyze: %s goes without " \
            "--hostfile (the hostfile names the hosts)" % flag
    p = run_script(LFT_ANALYZE, ["--lfts", net, "--topology", net,
                                 "--spine-cas", "--leaves-only"])
    assert p.returncode == 2 and "not allowed with" in p.stderr
