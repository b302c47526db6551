"""scripts/bench-fabrics: command-line errors and one --quick run on
ft2-8x4 (four engines x LMC 0, 2 x four rank orders) plus an extra --net
fabric."""

import json
import os
import subprocess

import pytest

from conftest import (PYTHON, REPO, TOPO_DIR, assert_usage_error,
                      requires_plugin)

BENCH = os.path.join(REPO, "scripts", "bench-fabrics")
REALFAB = os.path.join(os.path.dirname(os.path.abspath(__file__)),
                       "fixtures", "realfab")


def bench(args):
    return subprocess.run([PYTHON, BENCH] + args, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True,
                          timeout=300)


def test_help_names_options_engines_and_orders():
    p = bench(["--help"])
    assert p.returncode == 0
    for word in ("--out", "--jobs", "--quick", "--fabrics", "--net",
                 "--ibnetdiscover", "--map", "--no-sharp", "--only-given",
                 "--net-roots",
                 "--realfabrics", "--engines", "--lmc", "--seed",
                 "--plugin-option", "--shuffles", "--force", "--doc",
                 "--json",
                 "--version", "dfsssp", "ftree", "ours", "minhop",
                 "ours-minhop", "quarter", "half",
                 "random", "ndr-2level-railopt-nosharp", "qdr-irregular-x5",
                 "Exit status"):
        assert word in p.stdout, word


@pytest.mark.parametrize("args, message", [
    (["--quick", "--fabrics", "nope"],
     "bench-fabrics: --fabrics: unknown fabric 'nope'"),
    (["--engines", "updn,bogus"],
     "bench-fabrics: --engines: unknown engine 'bogus'"),
    (["--lmc", "0,x"],
     "bench-fabrics: --lmc: not a comma-separated list of numbers: '0,x'"),
    (["--jobs", "0"], "bench-fabrics: --jobs must be >= 1"),
    (["--plugin-option", "novalue"],
     "bench-fabrics: --plugin-option: bad token 'novalue' (KEY=VAL)"),
    (["--shuffles", "-1"], "bench-fabrics: --shuffles must be >= 0"),
    (["--quick", "--net", "/nonexistent.net"],
     "bench-fabrics: --net /nonexistent.net: no such file"),
    (["--only-given", "--ibnetdiscover", "/nonexistent.txt"],
     "bench-fabrics: --ibnetdiscover /nonexistent.txt: no such file"),
    (["--quick", "--map", os.path.join(REALFAB, "tiny-ndr.map")],
     "bench-fabrics: --map applies to --ibnetdiscover dumps; none given"),
    (["--quick", "--no-sharp"],
     "bench-fabrics: --no-sharp applies to --ibnetdiscover dumps; none "
     "given"),
    (["--only-given"],
     "bench-fabrics: --only-given needs a --net or --ibnetdiscover fabric"),
    (["--only-given", "--ibnetdiscover", os.path.join(REALFAB, "tiny-ndr."
                                                      "ibnetdiscover"),
      "--map", "/nonexistent.map"],
     "bench-fabrics: /nonexistent.map:0: cannot read"),
])
def test_bad_usage_is_one_line_exit_2(tmp_path, args, message):
    assert_usage_error(bench(args + ["--out", str(tmp_path / "o")]), message)


def test_absent_real_dumps_are_skipped(tmp_path):
    p = bench(["--realfabrics", str(tmp_path / "none"), "--fabrics",
               "ft2-8x4", "--engines", "updn", "--lmc", "0", "--out",
               str(tmp_path / "o"), "--json", "-q"])
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["notes"] == ["real dumps skipped: %s is absent"
                          % (tmp_path / "none")]
    assert [f["name"] for f in r["fabrics"]] == ["ft2-8x4"]


def test_a_garbled_dump_is_named_by_file_and_line(tmp_path):
    dump = tmp_path / "site.txt"
    with open(os.path.join(REALFAB, "tiny-ndr.ibnetdiscover")) as f:
        lines = f.read().splitlines()
    i = next(k for k, l in enumerate(lines) if l.startswith("[33]"))
    lines[i] = "[33]\t\"S-0c42a10300000300"
    dump.write_text("\n".join(lines) + "\n")
    assert_usage_error(
        bench(["--only-given", "--ibnetdiscover", str(dump), "--out",
               str(tmp_path / "o")]),
        "bench-fabrics: %s:%d: garbled port line" % (dump, i + 1))


def test_a_dump_named_like_a_fabric_of_the_suite_is_refused(tmp_path):
    dump = tmp_path / "ft2-8x4.ibnetdiscover"
    with open(os.path.join(REALFAB, "tiny-ndr.ibnetdiscover")) as f:
        dump.write_text(f.read())
    assert_usage_error(
        bench(["--quick", "--ibnetdiscover", str(dump), "--out",
               str(tmp_path / "o")]),
        "bench-fabrics: two fabrics are named ft2-8x4 (rename the "
        "--ibnetdiscover file)")
    # the suite's fabric of that name was not overwritten
    assert not (tmp_path / "o" / "fabrics" / "ft2-8x4.net").exists()


@requires_plugin
def test_an_ibnetdiscover_dump_alone(tmp_path):
    """--only-given --ibnetdiscover: the dump converted as osm-sim
    --ibnetdiscover converts it, and only it routed."""
    dump = os.path.join(REALFAB, "tiny-ndr.ibnetdiscover")
    p = bench(["--only-given", "--ibnetdiscover", dump, "--no-sharp",
               "--engines", "updn,ours", "--lmc", "0,1", "--out",
               str(tmp_path / "o"), "--json", "-q", "--doc",
               str(tmp_path / "o" / "tiny-ndr.md")])
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert [(f["name"], f["hosts"], f["sharp"], f["switches"])
            for f in r["fabrics"]] == [("tiny-ndr", 4, 0, 3)]
    assert r["fabrics"][0]["source"] == (
        dump + " (converted by osmoffset.ibnetdiscover, SHARP aggregation "
        "nodes dropped)")
    net = tmp_path / "o" / "fabrics" / "tiny-ndr.net"
    with open(os.path.join(REALFAB, "tiny-ndr-nosharp.net")) as f:
        assert net.read_text() == f.read()
    cells = {(c["fabric"], c["engine"], c["lmc"]): c for c in r["cells"]}
    assert sorted(cells) == [("tiny-ndr", e, l) for e in ("ours", "updn")
                             for l in (0, 1)]
    for c in cells.values():
        assert c["status"] == "ok" and c["valid"], c
    assert r["below_stock"] == []
    # the report is of that fabric alone
    text = (tmp_path / "o" / "tiny-ndr.md").read_text()
    assert text.startswith("# Every engine on the given fabrics\n")
    assert "## tiny-ndr\n" in text
    for kind in ("real dumps'", "analogs", "variants"):
        assert kind not in text
    # with the map, its names reach the converted fabric; SHARP nodes kept
    p = bench(["--only-given", "--ibnetdiscover", dump, "--map",
               os.path.join(REALFAB, "tiny-ndr.map"), "--engines", "updn",
               "--lmc", "0", "--out", str(tmp_path / "m"), "--json", "-q"])
    assert p.returncode == 0, p.stderr
    f = json.loads(p.stdout)["fabrics"][0]
    assert (f["hosts"], f["sharp"]) == (4, 3)
    assert f["source"].endswith("(converted by osmoffset.ibnetdiscover "
                                "with tiny-ndr.map, SHARP aggregation "
                                "nodes kept)")
    text = (tmp_path / "m" / "fabrics" / "tiny-ndr.net").read_text()
    assert '# "node03"' in text and '# "leaf-1"' in text


@requires_plugin
def test_quick_run(tmp_path):
    extra = tmp_path / "extra-seed.net"
    with open(os.path.join(TOPO_DIR, "seed-4x4trunk.net")) as f:
        extra.write_text(f.read())
    doc = tmp_path / "fabrics.md"
    p = bench(["--quick", "--fabrics", "ft2-8x4,extra-seed", "--net",
               str(extra), "--out", str(tmp_path / "o"), "--json", "-q",
               "--doc", str(doc), "--plugin-option", "hop_tables=stock"])
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert [f["name"] for f in r["fabrics"]] == ["ft2-8x4", "extra-seed"]
    assert [f["hosts"] for f in r["fabrics"]] == [32, 5]
    cells = {(c["fabric"], c["engine"], c["lmc"]): c for c in r["cells"]}
    assert len(cells) == 2 * 4 * 2
    for (f, e, l), c in cells.items():
        if e == "ftree" and c["status"] == "fails":
            continue
        assert c["status"] == "ok", c
        assert c["valid"] and not c["credit_loop"], c
        assert set(c["orders"]) == {"leaf", "quarter", "half", "random"}
        assert (c["orders"]["leaf"]["spread"] is None) == (l == 0)
        if f == "ft2-8x4":
            assert c["orders"]["quarter"]["ranks"] == 8
        else:           # seed-4x4trunk: 5 hosts, a quarter job is 1 rank
            assert c["orders"]["quarter"] == {
                "ranks": 0, "base": None, "spread": None,
                "rank_order": "a quarter job of 5 ranks has fewer than two"}
            assert c["orders"]["half"]["ranks"] == 2
    # ft2-8x4 is a full-bisection tree: leaf order is contention-free for
    # stock updn and ours, at both LMCs and for both traffics
    for e in ("updn", "ours"):
        for l in (0, 2):
            o = cells[("ft2-8x4", e, l)]["orders"]
            assert o["leaf"]["base"] == 1.0
            assert o["half"]["base"] == 1.0
    # the plugin option reached the ours cells only
    conf = tmp_path / "o" / "runs" / "ft2-8x4" / "ours" / "lmc2" / \
        "opensm.conf"
    assert "hop_tables=stock" in conf.read_text()
    conf = tmp_path / "o" / "runs" / "ft2-8x4" / "updn" / "lmc2" / \
        "opensm.conf"
    assert "event_plugin" not in conf.read_text()
    # the below-stock count agrees with the cells
    below = [(b["fabric"], b["lmc"], b["order"], b["traffic"])
             for b in r["below_stock"]]
    for (f, e, l), c in cells.items():
        if e != "ours":
            continue
        for o, fig in c["orders"].items():
            for t in ("base", "spread"):
                u = cells[(f, "updn", l)]["orders"][o][t]
                if fig[t] is not None:
                    assert ((f, l, o, t) in below) == (fig[t] < u - 1e-9)
    text = doc.read_text()
    assert "scripts/bench-fabrics --quick" in text
    assert "Port offsetting below stock updn: %d of" % len(below) in text
    assert "## extra-seed" in text and "seed 1" in text
    # a second run comes from the cache
    p = bench(["--quick", "--fabrics", "ft2-8x4", "--engines", "updn",
               "--lmc", "0", "--out", str(tmp_path / "o"), "--json"])
    assert p.returncode == 0
    assert "(cached)" in p.stderr


@requires_plugin
def test_random_figures_below_dfsssp_are_measured_again(tmp_path):
    """Every random-order figure of ours below dfsssp's is measured again
    over seeds 1..N of the same LFTs; seed 1 is the table's order.  On
    ft2-8x4 at LMC 1 ours' seed-1 random spread is below dfsssp's (0.575
    against 0.618), so there is at least that one."""
    doc = tmp_path / "fabrics.md"
    p = bench(["--quick", "--fabrics", "ft2-8x4", "--engines", "dfsssp,ours",
               "--lmc", "1", "--shuffles", "5", "--out", str(tmp_path / "o"),
               "--json", "-q", "--doc", str(doc)])
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["shuffles"] == 5
    cells = {c["engine"]: c["orders"]["random"] for c in r["cells"]}
    want = {t for t in ("base", "spread")
            if cells["ours"][t] < cells["dfsssp"][t] - 1e-9}
    assert want
    got = r["random_recheck"]
    assert {x["traffic"] for x in got} == want
    text = doc.read_text()
    for x in got:
        assert (x["fabric"], x["lmc"], x["engine"]) == ("ft2-8x4", 1,
                                                         "dfsssp")
        assert len(x["ours_seeds"]) == len(x["other_seeds"]) == 5
        # seed 1 is the order the table measured
        assert x["ours_seeds"][0] == x["ours"] == cells["ours"][x["traffic"]]
        assert x["other_seeds"][0] == x["other"]
        assert x["ours_mean"] == pytest.approx(sum(x["ours_seeds"]) / 5)
        assert x["other_mean"] == pytest.approx(sum(x["other_seeds"]) / 5)
        assert x["at_least"] == sum(1 for a, b in zip(x["ours_seeds"],
                                                      x["other_seeds"])
                                    if a >= b - 1e-9)
        assert ("| ft2-8x4 | 1 | %s | updn + port_offsetting=on | stock "
                "dfsssp | %.3f / %.3f |") % (
            x["traffic"], x["ours"], x["other"]) in text
    assert "**Random order over 5 shuffles.**" in text


@requires_plugin
def test_minhop_engines(tmp_path):
    """minhop and ours-minhop answer to each other as updn and ours do:
    the figures of ours-minhop below stock minhop's are flagged and
    counted, and the cells with a credit loop are counted per engine.
    sharp-ft2 (a SHARP node on every switch, cables doubled and missing)
    at LMC 0: stock minhop's routes close a credit loop among the CAs'
    routes and among every entry's, port offsetting's close none (its
    routes that turn back up turn at one switch); the default engines
    leave minhop out."""
    doc = tmp_path / "fabrics.md"
    p = bench(["--quick", "--fabrics", "sharp-ft2", "--engines",
               "minhop,ours-minhop", "--lmc", "0", "--shuffles", "2",
               "--out", str(tmp_path / "o"), "--json", "-q", "--doc",
               str(doc)])
    assert p.returncode == 0, p.stderr
    r = json.loads(p.stdout)
    assert r["engines"] == ["minhop", "ours-minhop"]
    cells = {c["engine"]: c for c in r["cells"]}
    assert cells["minhop"]["credit_loop"] is True
    assert cells["minhop"]["credit_loop_every_entry"] is True
    assert cells["ours-minhop"]["credit_loop"] is False
    assert cells["ours-minhop"]["credit_loop_every_entry"] is False
    below = [(b["engine"], b["against"], b["order"], b["traffic"])
             for b in r["below_stock"]]
    for o, fig in cells["ours-minhop"]["orders"].items():
        low = fig["base"] < cells["minhop"]["orders"][o]["base"] - 1e-9
        assert (("ours-minhop", "minhop", o, "base") in below) == low
    for x in r["random_recheck"]:
        assert (x["ours_engine"], x["engine"]) == ("ours-minhop", "minhop")
    text = doc.read_text()
    assert ("Port offsetting under minhop below stock minhop: %d of 4 "
            "figures" % len(below)) in text
    assert "Port offsetting below stock updn" not in text
    assert "| stock minhop | 1 | 1 | 1 |" in text
    assert "| minhop + port_offsetting=on | 1 | 0 | 0 |" in text
    assert ("Cells and checks where minhop + port_offsetting=on has a "
            "credit loop and stock minhop none: 0; where stock minhop has "
            "one and it none: 2.") in text
    p = bench(["--help"])
    assert "default: updn,dfsssp,ftree,ours; also: minhop,ours-minhop" \
        in " ".join(p.stdout.split())


def test_loops_against_stock():
    """A cell where ours has a credit loop and its stock engine none is
    named; the other way round counted."""
    from osmoffset.fabricsreport import loop_lines, loops_against

    def cell(loop, every):
        return {"status": "ok", "credit_loop": loop,
                "credit_loop_every_entry": every}
    res = {("a", "updn", 0): cell(False, False),
           ("a", "ours", 0): cell(False, True),
           ("b", "updn", 2): cell(True, True),
           ("b", "ours", 2): cell(False, False),
           ("c", "updn", 0): {"status": "error"},
           ("c", "ours", 0): cell(True, True),
           ("d", "ours", 0): cell(True, None)}
    worse, better = loops_against(res, "ours", "updn")
    assert worse == [("a", 0, "every entry")]
    assert better == [("b", 2, "the CAs' routes"), ("b", 2, "every entry")]
    text = "\n".join(loop_lines(res, ["updn", "ours"]))
    assert "| stock updn | 2 | 1 | 1 |" in text
    assert "| updn + port_offsetting=on | 4 | 2 | 2 (3 cells checked) |" \
        in text
    assert ("Cells and checks where updn + port_offsetting=on has a credit "
            "loop and stock updn none: 1; where stock updn has one and it "
            "none: 2.") in text
    assert "Those: a at LMC 0 (every entry)." in text


def test_below_stock_names_the_cells_kept_for_reach():
    """A figure of ours below stock updn in a cell whose guard kept ours
    for reach (reach_first in the cell) is counted, with the lanes that
    would keep the tables that won; without such a cell, not a word."""
    from osmoffset.fabricsreport import below_lines
    from osmoffset.fabricsuite import below_stock

    def cell(eff, lost, reach_first):
        return {"status": "ok", "unreachable_pairs": lost,
                "reach_first": reach_first,
                "orders": {o: {"base": eff} for o in
                           ("leaf", "quarter", "half", "random")}}
    fabs = [("a", {}), ("b", {})]
    res = {("a", "updn", 0): cell(0.5, 18, False),
           ("a", "ours", 0): cell(0.4, 0, True),
           ("b", "updn", 0): cell(0.5, 0, False),
           ("b", "ours", 0): cell(0.6, 0, False)}
    below = below_stock(res, fabs, ["updn", "ours"], [0])
    assert [(b["fabric"], b["reach_first"]) for b in below] == \
        [("a", True)] * 4
    text = " ".join(below_lines(res, fabs, [0], below, "ours", "updn"))
    assert "**Port offsetting below stock updn: 4 of 8 figures**" in text
    assert "In 4 of them the plugin's log says its stock guard kept port " \
        "offsetting's tables for reach" in text
    assert "(`reach_vls=2` or more, OpenSM's QoS on)" in text
    res[("a", "ours", 0)]["reach_first"] = False
    below = below_stock(res, fabs, ["updn", "ours"], [0])
    text = " ".join(below_lines(res, fabs, [0], below, "ours", "updn"))
    assert "Of these, 4 are where stock updn leaves" in text
    assert "kept port offsetting's tables for reach" not in text


def test_build_label_is_dirty_for_code_not_for_docs(tmp_path):
    """The build the reports name (git_describe()): a change under docs/
    (the reports the benches write, one after the other) leaves it clean;
    a change to any other tracked file marks it -dirty."""
    from osmoffset.benchreport import git_describe

    def git(*args):
        subprocess.run(["git", "-C", str(tmp_path), "-c", "user.name=t",
                        "-c", "user.email=t@t", "-c", "init.defaultBranch=m"]
                       + list(args), check=True, stdout=subprocess.DEVNULL,
                       stderr=subprocess.DEVNULL)

    (tmp_path / "docs").mkdir()
    (tmp_path / "docs" / "r.md").write_text("figures\n")
    (tmp_path / "code.c").write_text("int x;\n")
    git("init", "-q")
    git("add", ".")
    git("commit", "-q", "-m", "one")
    clean = git_describe(str(tmp_path))
    assert clean and not clean.endswith("-dirty")
    (tmp_path / "docs" / "r.md").write_text("other figures\n")
    assert git_describe(str(tmp_path)) == clean
    (tmp_path / "code.c").write_text("int y;\n")
    assert git_describe(str(tmp_path)) == clean + "-dirty"
    assert git_describe(str(tmp_path / "nope")) is None


def test_the_report_says_what_it_holds():
    from osmoffset.fabricsreport import kinds_text
    assert kinds_text({"curated", "real", "analog", "variant", "extra"}) == (
        "The real dumps' sources and licences are in "
        "../shared/realfabrics/README.md. The analogs stand for the "
        "production dumps the real-fabric issue measured, which are not in "
        "the repository: their shapes at their scale, generated by "
        "gen-fabric with the arguments shown. The variants (var-*) are "
        "shapes of the same kinds at 64 to 512 hosts, drawn with other "
        "parameters and seeds, to show how the rules fare on shapes they "
        "were not tuned on.")
    assert kinds_text({"curated", "extra"}) == ""
    assert kinds_text({"real"}) == ("The real dumps' sources and licences "
                                    "are in ../shared/realfabrics/"
                                    "README.md.")


@requires_plugin
def test_net_roots_none_routes_a_dragonfly_as_on_a_dump(tmp_path):
    """gen-fabric's dragonfly names its spines in updn-root lines: with
    them (--net-roots auto) stock updn routes it; without (--net-roots
    none, as on a dump) it finds no root and falls back to minhop, whose
    tables close a credit loop, where ours take the spines for roots."""
    net = tmp_path / "df.net"
    p = subprocess.run([PYTHON, os.path.join(REPO, "sim-topologies",
                                             "gen-fabric"),
                        "dragonfly", "--groups", "4", "--leaves", "2",
                        "--spines", "2", "--hosts-per-leaf", "4",
                        "--random-guids", "-o", str(net)],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=60)
    assert p.returncode == 0, p.stderr
    cells = {}
    for roots in ("auto", "none"):
        p = bench(["--only-given", "--net", str(net), "--net-roots", roots,
                   "--engines", "updn,ours", "--lmc", "0", "--out",
                   str(tmp_path / roots), "--json", "-q"])
        assert p.returncode == 0, p.stderr
        r = json.loads(p.stdout)
        src = r["fabrics"][0]["source"]
        assert src.startswith("%s (`gen-fabric dragonfly --groups 4 "
                              % net), src
        assert src.endswith("; routed with `--roots none`)") == \
            (roots == "none"), src
        for c in r["cells"]:
            cells[(roots, c["engine"])] = c
    assert not cells[("auto", "updn")]["fallback"]
    assert cells[("none", "updn")]["fallback"]
    assert cells[("none", "updn")]["credit_loop_every_entry"]
    for roots in ("auto", "none"):
        ours = cells[(roots, "ours")]
        assert not ours["fallback"] and ours["valid"], ours
        assert not ours["credit_loop"] and \
            not ours["credit_loop_every_entry"], ours
