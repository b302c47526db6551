"""Port offsetting works for every LMC up to 7: every LID of every CA is
routed, without loops, from every switch, and each LID offset spreads its
LIDs over the up links of a leaf like the base LIDs do."""

import collections

import pytest

from conftest import plugin_dir
from osmoffset import checks

FABRIC = "ft2-trunk-4x2x2.net"


@pytest.mark.skipif(not plugin_dir(), reason="libosmoffset.so not built")
@pytest.mark.parametrize("lmc", [3, 7])
def test_high_lmc_routes_every_lid(sim_cache, lmc):
    run = sim_cache.get(FABRIC, lmc, "on").require_ok()
    assert run.lfts.lmc in (lmc, None)
    problems = checks.reachability(run.topo, run.lfts, lmc)
    assert problems == []
    # 16 CAs x 2^lmc LIDs in every switch's LFT
    for sw in run.lfts.switches.values():
        ca_lids = [lid for lid in sw.lft
                   if run.lfts.lid_info.get(lid, (0, "CA"))[1] == "CA"]
        assert len(ca_lids) >= 16 << lmc


@pytest.mark.skipif(not plugin_dir(), reason="libosmoffset.so not built")
def test_every_offset_spreads_over_the_trunks(sim_cache):
    """ft2-trunk-4x2x2: a leaf has 4 up links (2 spines x 2 parallel
    links) and 12 remote hosts: each LID offset puts 3 on every up link."""
    lmc = 3
    run = sim_cache.get(FABRIC, lmc, "on").require_ok()
    topo, lfts = run.topo, run.lfts
    hosts = {g: n for g, n in topo.nodes.items() if n.kind == "CA"}
    for leaf in checks.leaf_switches(topo):
        sw = lfts.switches[leaf]
        local = {n.lid for g, n in hosts.items()
                 if topo.links[(g, n.port)][0] == leaf}
        assert len(local) == 4
        ups = sorted(p for p, rg, _ in topo.neighbors(leaf)
                     if topo.nodes[rg].kind == "SW")
        assert len(ups) == 4
        for off in range(1 << lmc):
            count = collections.Counter(
                sw.lft[n.lid + off] for n in hosts.values()
                if n.lid not in local)
            assert sorted(count) == ups
            assert set(count.values()) == {3}, (off, count)
