"""The updn and minhop hop tables osmoffset builds (hop_tables=fast, the
default) must be OpenSM's own, byte for byte: multicast routing and SA path
records read them.  Every curated fabric is routed by stock OpenSM and with
the plugin: updn with the net file's root switches and with OpenSM's root
detection, and minhop; the hop-table (lid matrix) and root dumps are
compared."""

import os
from concurrent.futures import ThreadPoolExecutor

import pytest

from conftest import (CURATED, fabric_id, fabric_path, plugin_dir,
                      requires_plugin, run_osm_sim)

pytestmark = requires_plugin

VERBOSE = ["--", "-D", "0x47"]
BUILT = "osmoffset: up/down hop tables of"
BUILT_MINHOP = "osmoffset: min-hop hop tables of"


def route(out, net, stock=False, roots="auto", lmc=0, options=(),
          extra=(), engine="updn"):
    args = ["--net", net, "--out", out, "--lmc", str(lmc), "--roots", roots,
            "--no-ibroute", "--allow-fallback", "-q", "--engine", engine,
            "--plugin-dir", plugin_dir()]
    if stock:
        args.append("--stock")
    for opt in options:
        args += ["--plugin-option", opt]
    proc = run_osm_sim(args + VERBOSE + list(extra))
    assert proc.returncode == 0, proc.stderr
    return out


def read(out, name):
    path = os.path.join(out, name)
    if not os.path.exists(path):
        return None
    with open(path, "rb") as f:
        return f.read()


def log(out):
    return read(out, "osm.log").decode(errors="replace")


# (fabric, updn roots or "minhop")
CASES = [(fab, roots) for fab in CURATED
         for roots in ("auto", "none", "minhop")]


@pytest.fixture(scope="module")
def routed(tmp_path_factory):
    """(fabric, roots) -> (stock out dir, plugin out dir), run two at a
    time."""
    base = tmp_path_factory.mktemp("hops")
    jobs = {}
    with ThreadPoolExecutor(max_workers=2) as pool:
        for fab, roots in CASES:
            net = fabric_path(fab)
            tag = "%s-%s" % (fabric_id(fab), roots)
            kw = dict(engine="minhop") if roots == "minhop" else \
                dict(roots=roots)
            jobs[(fab, roots)] = (
                pool.submit(route, str(base / (tag + "-stock")), net,
                            stock=True, **kw),
                pool.submit(route, str(base / (tag + "-fast")), net, **kw))
        return {k: (a.result(), b.result()) for k, (a, b) in jobs.items()}


COMPLETED = "switches beside updn's roots (at their level"
# updn's detection found no root; without the end ports on switches that
# are no leaves it found some (the seed example's host on its spine)
FOUND_WITHOUT_CORE = "no root switch at the min-hop distances of all"
OWN_ROOTS_STAY = "built them, over its own roots"


@pytest.mark.parametrize("fab,roots", CASES,
                         ids=["%s-%s" % (fabric_id(f), r) for f, r in CASES])
def test_hop_tables_match_stock(routed, fab, roots, tmp_path):
    stock, fast = routed[(fab, roots)]
    text = log(fast)
    if (COMPLETED in text and OWN_ROOTS_STAY not in text) or \
            FOUND_WITHOUT_CORE in text:
        # port offsetting completed updn's roots and kept its tables, or
        # found roots where updn found none: the hop tables are stock
        # updn's over those roots, given to it as a root GUID file
        ours = read(fast, "opensm-updn-roots.dump")
        assert set(read(stock, "opensm-updn-roots.dump").split()) < \
            set(ours.split())
        (tmp_path / "roots").write_bytes(ours)
        stock = route(str(tmp_path / "stock"), fabric_path(fab),
                      stock=True, roots=str(tmp_path / "roots"))
    matrix = read(stock, "opensm-lid-matrix.dump")
    assert matrix, "stock run wrote no lid matrix"
    assert read(fast, "opensm-lid-matrix.dump") == matrix
    assert read(fast, "opensm-updn-roots.dump") == \
        read(stock, "opensm-updn-roots.dump")
    if roots == "minhop":
        assert BUILT_MINHOP in text
    elif "disabling UPDN algorithm" in log(stock):
        # no roots (seed example without a root file): both fall back
        assert BUILT not in text
        assert "no root switches found" in text
    else:
        assert BUILT in text


def test_root_detection_finds_the_top_switches(routed):
    """kary-4-3 without a root file: the 16 top switches."""
    stock, fast = routed[("kary-4-3.net", "none")]
    roots = read(fast, "opensm-updn-roots.dump").split()
    assert len(roots) == 16
    assert "16 root switches found from the min-hop distances" in log(fast)


def test_stock_hop_tables_option(routed, tmp_path):
    """hop_tables=stock leaves the stage to OpenSM: same LFTs."""
    net = fabric_path("kary-4-3-degraded.net")
    out = route(str(tmp_path / "stock-hops"), net, lmc=1,
                options=["hop_tables=stock"])
    fast = route(str(tmp_path / "fast-hops"), net, lmc=1)
    assert BUILT not in log(out)
    assert BUILT in log(fast)
    assert read(out, "opensm-lfts.dump") == read(fast, "opensm-lfts.dump")
    assert read(out, "opensm-lid-matrix.dump") == \
        read(fast, "opensm-lid-matrix.dump")


def test_connect_roots_left_to_updn(tmp_path):
    """--connect_roots keeps min-hop rows between roots: updn's own stage
    builds those tables, and they match stock's."""
    net = fabric_path("kary-4-3.net")
    stock = route(str(tmp_path / "stock"), net, stock=True,
                  extra=["--connect_roots"])
    fast = route(str(tmp_path / "fast"), net, extra=["--connect_roots"])
    assert BUILT not in log(fast)
    assert read(fast, "opensm-lid-matrix.dump") == \
        read(stock, "opensm-lid-matrix.dump")
