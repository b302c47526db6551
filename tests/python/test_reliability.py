"""Reliability: bad configuration, a plugin built for another OpenSM, LMC
too large for the LID space, up/down failing, and a short fault soak.

Every bad configuration must be logged with an error code in osm.log while
OpenSM exits 0 and routes the stock way: LFTs byte-identical to a run of
unmodified OpenSM on the same fabric.
"""

import glob
import json
import os
import re
import shutil
import subprocess

import pytest

from conftest import (GEN_FABRIC, PYTHON, REPO, TOPO_DIR, requires_plugin,
                      run_osm_sim, run_script)

pytestmark = requires_plugin

NET = os.path.join(TOPO_DIR, "kary-4-3.net")
LFT_ANALYZE = os.path.join(REPO, "scripts", "lft-analyze")
FAULT_SOAK = os.path.join(REPO, "scripts", "osm-fault-soak")
LONG_TOKEN = "port_offsetting=" + "x" * 184          # 200 characters


def read(path):
    with open(path, errors="replace") as f:
        return f.read()


def log_lines(path, pattern):
    return [l for l in read(path).splitlines() if re.search(pattern, l)]


def run_with_conf(out, options, extra=(), lmc=1, net=NET, plugin=None):
    """osm-sim with the plugin loaded and event_plugin_options set to
    `options` verbatim: a conf file of our own comes last on the opensm
    command line, and opensm takes the last -F."""
    os.makedirs(str(out), exist_ok=True)
    conf = os.path.join(str(out), "reliability.conf")
    with open(conf, "w") as f:
        f.write("event_plugin_name osmoffset\n")
        f.write("event_plugin_options %s\n" % options)
    args = ["--net", net, "--out", str(out), "--lmc", str(lmc),
            "--port-offsetting", "off"] + list(extra)
    if plugin:
        args += ["--plugin-dir", plugin]
    return run_osm_sim(args + ["--", "-F", conf], timeout=120)


@pytest.fixture(scope="module")
def stock(tmp_path_factory):
    out = tmp_path_factory.mktemp("stock")
    p = run_osm_sim(["--net", NET, "--out", str(out), "--lmc", "1",
                     "--stock", "--no-ibroute", "--quiet"])
    assert p.returncode == 0, p.stderr
    return read(os.path.join(str(out), "opensm-lfts.dump"))


def assert_stock_run(p, out, stock_lfts, err_pattern):
    """osm-sim stopped only at its plugin check: opensm exited 0 (that is
    checked first), the log has the error, and the LFTs are the stock
    ones."""
    assert p.returncode == 1, p.stderr
    assert "plugin load:" in p.stderr, p.stderr
    log = os.path.join(str(out), "osm.log")
    errs = log_lines(log, err_pattern)
    assert len(errs) == 1, errs
    assert log_lines(log, r"updn tables configured on all switches")
    assert read(os.path.join(str(out), "opensm-lfts.dump")) == stock_lfts


# The plugin's keys, as its message for an unknown one names them.
KNOWN_KEYS = ("port_offsetting, hop_tables, stock_guard, reach_all, "
              "reach_vls, design_lanes, offsets_apart, digits_apart, "
              "keep_live, polish, polish_even, polish_cables, polish_ways, "
              "polish_kicks, spine_cas, leaf_shuffles")


@pytest.mark.parametrize("options, message", [
    ("port_offsetting",
     "token 'port_offsetting' is not of the form key=value"),
    ("port_offsetting=maybe",
     "port_offsetting value 'maybe' is not one of off, on, coordinated, "
     "plain"),
    ("bogus=1", "unknown key 'bogus' (known: " + KNOWN_KEYS + ")"),
    ("k" * 124 + "=on",
     "unknown key '" + "k" * 124 + "' (known: " + KNOWN_KEYS + ")"),
    ("port_offsetting=on reach_vls=9",
     "reach_vls value '9' is not a number of virtual lanes from 1 to 8"),
    ("port_offsetting=on polish_kicks=lots",
     "polish_kicks value 'lots' is not a number of kicks from 0 to 100000"),
    ("port_offsetting=on hop_tables=slow",
     "hop_tables value 'slow' is not one of fast, stock"),
    (LONG_TOKEN, "token starting 'port_offsetting=xxxx' is longer than 127 "
     "characters"),
    ("port_offsetting=on port_offsetting=off",
     "port_offsetting is given twice, as coordinated and as off"),
    ("port_offsetting=on,=on", "token '=on' is not of the form key=value"),
], ids=["no-value", "bad-value", "unknown-key", "long-unknown-key",
        "bad-reach-vls", "bad-polish-kicks", "bad-hop-tables",
        "200-chars", "conflict", "empty-key"])
def test_bad_options_route_stock(tmp_path, stock, options, message):
    p = run_with_conf(tmp_path, options, ["--no-ibroute"])
    assert_stock_run(p, tmp_path, stock,
                     r"ERR 9F01: osmoffset: event_plugin_options: " +
                     re.escape(message) + r"; port offsetting stays off "
                     r"\(stock routing\)$")
    assert log_lines(os.path.join(str(tmp_path), "osm.log"),
                     r"osmoffset \S+ loaded: port_offsetting=off$")


def test_other_plugin_prefix_is_skipped(tmp_path, stock):
    # a token of another plugin is not ours: no error, offsetting stays off
    p = run_with_conf(tmp_path, "other.port_offsetting=on foo.x=1",
                      ["--no-ibroute", "--quiet"])
    assert p.returncode == 0, p.stderr
    log = os.path.join(str(tmp_path), "osm.log")
    assert not log_lines(log, r"ERR 9F")
    assert read(os.path.join(str(tmp_path), "opensm-lfts.dump")) == stock


@pytest.fixture(scope="module")
def mismatched_plugin(tmp_path_factory):
    """The plugin compiled against a copy of OpenSM's headers whose
    osm_version.h names another version: a shadow opensm/osm_version.h
    comes first on the include path."""
    if not shutil.which("gcc"):
        pytest.skip("gcc is needed to build the mismatched plugin")
    d = str(tmp_path_factory.mktemp("mismatch"))
    os.makedirs(os.path.join(d, "inc", "opensm"))
    hdr = "/usr/include/infiniband/opensm/osm_version.h"
    text = read(hdr)
    assert '#define OSM_VERSION "OpenSM 3.3.23"' in text
    with open(os.path.join(d, "inc", "opensm", "osm_version.h"), "w") as f:
        f.write(text.replace('"OpenSM 3.3.23"', '"OpenSM 3.3.99-test"'))
    srcs = sorted(glob.glob(os.path.join(REPO, "opensm", "*.c")))
    cmd = ["gcc", "-shared", "-fPIC", "-O1", "-DPACKAGE_VERSION=\"mismatch\"",
           "-I" + os.path.join(d, "inc"), "-I/usr/include/infiniband",
           "-I" + os.path.join(REPO, "include"), "-o",
           os.path.join(d, "libosmoffset.so")] + srcs
    p = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       universal_newlines=True, timeout=120)
    assert p.returncode == 0, p.stdout
    with open(os.path.join(d, "libosmoffset.so"), "rb") as f:
        assert b"OpenSM 3.3.99-test" in f.read()
    return d


def test_version_mismatch_routes_stock(tmp_path, stock, mismatched_plugin):
    p = run_with_conf(tmp_path, "port_offsetting=on", ["--no-ibroute"],
                      plugin=mismatched_plugin)
    assert p.returncode == 1
    assert "plugin load:" in p.stderr and "version mismatch" in p.stderr
    log = os.path.join(str(tmp_path), "osm.log")
    assert log_lines(log, r"Error loading plugin 'osmoffset': OpenSM version "
                     r"mismatch - plugin was built against OpenSM "
                     r"3\.3\.99-test version of OpenSM\. Skip loading\.")
    assert not log_lines(log, r"osmoffset \S+ loaded")
    assert log_lines(log, r"updn tables configured on all switches")
    assert read(os.path.join(str(tmp_path), "opensm-lfts.dump")) == stock


def test_lmc_beyond_lid_space(tmp_path):
    """390 hosts x 2^7 LIDs do not fit in the 48K unicast LIDs: OpenSM
    logs ERR 0307 and leaves some ports without a LID; the plugin routes
    the rest, skips those ports, and nothing crashes."""
    net = os.path.join(str(tmp_path), "big390.net")
    subprocess.run([PYTHON, GEN_FABRIC, "2level", "--leaves", "13",
                    "--spines", "2", "--hosts-per-leaf", "30", "-o", net],
                   check=True, timeout=60)
    out = os.path.join(str(tmp_path), "osm")
    p = run_osm_sim(["--net", net, "--out", out, "--lmc", "7",
                     "--no-ibroute"], timeout=120)
    # osm-sim got past the exit status, plugin and routing checks: the only
    # complaint is that OpenSM, with errors during initialization, wrote
    # no dump
    assert p.returncode == 1
    assert "dump missing: OpenSM wrote no" in p.stderr, p.stderr
    log = os.path.join(out, "osm.log")
    assert log_lines(log, r"ERR 0307: OPENSM RAN OUT OF LIDS!!!")
    assert log_lines(log, r"updn tables configured on all switches")
    assert log_lines(log, r"-> Errors during initialization")
    assert log_lines(log, r"osmoffset \S+ loaded: port_offsetting="
                     r"coordinated$")
    assert not log_lines(log, r"ERR 9F")
    assert log_lines(log, r"-> Exiting SM$")


def analyze(out, lmc):
    p = subprocess.run([PYTHON, LFT_ANALYZE, "--lfts",
                        os.path.join(out, "opensm-lfts.dump"), "--topology",
                        os.path.join(out, "opensm-subnet.lst"), "--lmc",
                        str(lmc), "--json", "--bisections", "0"],
                       stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                       universal_newlines=True, timeout=120)
    return p.returncode, json.loads(p.stdout)


def test_updn_without_root_falls_back_to_minhop(tmp_path):
    """A root_guid_file naming no switch of the fabric: updn gives up,
    OpenSM falls back to its default minhop engine, which routes with port
    offsetting too, and the LFTs are valid and free of credit loops."""
    roots = os.path.join(str(tmp_path), "roots")
    with open(roots, "w") as f:
        f.write("0x0002c9ffffffff00\n")
    out = os.path.join(str(tmp_path), "osm")
    p = run_osm_sim(["--net", NET, "--out", out, "--lmc", "1", "--roots",
                     roots, "--no-ibroute", "--json"])
    assert p.returncode == 3, p.stderr
    assert "requested engine updn failed, OpenSM fell back to minhop" \
        in p.stderr
    p = run_osm_sim(["--net", NET, "--out", out, "--lmc", "1", "--roots",
                     roots, "--no-ibroute", "--json", "--allow-fallback"])
    assert p.returncode == 0, p.stderr
    assert json.loads(p.stdout)["engine_used"] == "minhop"
    log = os.path.join(out, "osm.log")
    # the plugin builds updn's hop tables, and says so where updn would
    assert log_lines(log, r"osmoffset: no root switches found, up/down "
                     r"routing cannot be used")
    assert log_lines(log, r"minhop tables configured on all switches")
    assert log_lines(log, r"port offsetting \(coordinated\) enabled for "
                     r"fallback routing engine 'minhop'")
    assert not log_lines(log, r"ERR 9F")
    rc, res = analyze(out, 1)
    assert rc == 0
    assert (res["valid"], res["credit_loop"], res["hosts"],
            res["switches"], res["problems"]) == (True, False, 64, 48, [])
    # stock minhop gets 0.388 on this 3-level tree; offsetting 1.0
    assert res["shift"]["base"]["efficiency"] == 1.0


def test_fault_soak_short(tmp_path):
    out = os.path.join(str(tmp_path), "soak")
    p = subprocess.run([PYTHON, FAULT_SOAK, "--net", NET, "--events", "10",
                        "--seed", "1", "--lmc", "1", "--out", out],
                       stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True,
                       timeout=240)
    assert p.stdout.splitlines()[-1] == "events=10 survived=10 invalid=0", \
        p.stdout + p.stderr
    assert p.returncode == 0
    with open(os.path.join(out, "soak.json")) as f:
        s = json.load(f)
    assert (s["open_faults_at_end"], s["opensm_alive_at_end"],
            s["plugin_errors"]) == (0, True, 0)
    assert s["heavy_sweeps"] >= 11           # the first + one per event
    # the final dump is the whole fabric again, and routes it all
    rc, res = analyze(out, 1)
    assert rc == 0
    assert (res["valid"], res["credit_loop"], res["hosts"],
            res["switches"]) == (True, False, 64, 48)
    events = read(os.path.join(out, "events.log")).splitlines()
    assert len(events) == 11 and all(": ok" in l for l in events)


def test_fault_soak_catches_a_credit_loop(tmp_path):
    """The soak's checks can fail: minhop on a ring of five switches has a
    credit loop, so not even the first sweep passes."""
    parts = []
    for i in range(5):
        parts.append('Switch 4 "s%d"\n[1] "h%d"[1]\n[2] "s%d"[3]\n'
                     '[3] "s%d"[2]\n' % (i, i, (i + 1) % 5, (i - 1) % 5))
    for i in range(5):
        parts.append('Hca 1 "h%d"\n[1] "s%d"[1]\n' % (i, i))
    net = os.path.join(str(tmp_path), "ring5.net")
    with open(net, "w") as f:
        f.write("\n".join(parts[5:6] + parts[:5] + parts[6:]))
    p = subprocess.run([PYTHON, FAULT_SOAK, "--net", net, "--events", "2",
                        "--engine", "minhop", "--start-timeout", "30",
                        "--out", os.path.join(str(tmp_path), "o")],
                       stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True,
                       timeout=120)
    assert p.returncode == 1
    assert p.stdout.splitlines()[-1] == "events=2 survived=0 invalid=2"
    assert "first sweep: 5 hosts 5 switches valid=True credit_loop=True" \
        in p.stderr


def soak_loops(tmp_path, net, name, extra):
    """osm-fault-soak of 21 seeded events (seed 1) on net, routed updn
    (OpenSM falls back to minhop): the events after which the tables had
    a credit loop, and the plugin's log."""
    out = os.path.join(str(tmp_path), name)
    p = run_script(FAULT_SOAK, ["--net", net, "--events", "21", "--seed",
                                "1", "--out", out] + extra, timeout=600)
    assert p.returncode in (0, 1), p.stderr
    with open(os.path.join(out, "soak.json")) as f:
        s = json.load(f)
    assert s["opensm_alive_at_end"] and not s["not_run"]
    return ({f["event"] for f in s["failures"]
             if "credit_loop=True" in f["detail"]},
            read(os.path.join(out, "osm.log")))


def test_fault_soak_under_minhop_loops_no_more_than_stock(tmp_path):
    """docs/dragonfly.md's df22 without its root lines: updn finds no
    root and OpenSM routes minhop on every sweep.  After the 17th of 21
    seeded events a fresh stock build closes a credit loop among the CAs'
    routes; a stock SM, keeping the entries its switches hold where they
    are still shortest, closes none, and port offsetting's tables closed
    one there.  The guard now weighs that stock stage too: no sweep where
    ours close a loop and stock's do not."""
    net = os.path.join(str(tmp_path), "df22.net")
    p = run_script(GEN_FABRIC, [
        "dragonfly", "--groups", "7", "--leaves", "3", "--spines", "3",
        "--hosts-per-leaf", "3", "--remove-links", "0.1", "--seed", "2",
        "--random-guids", "-o", net], timeout=60)
    assert p.returncode == 0, p.stderr
    with open(net) as f:
        lines = [l for l in f if "updn-root" not in l]
    with open(net, "w") as f:
        f.writelines(lines)
    stock, _ = soak_loops(tmp_path, net, "stock", ["--stock"])
    ours, log = soak_loops(tmp_path, net, "ours", [])
    assert ours <= stock, (sorted(ours), sorted(stock))
    assert "the stock LFT stage as OpenSM runs it on this sweep, keeping " \
        "the entries the switches hold where they are still shortest, " \
        "closes none" in log


def test_fault_soak_bad_input(tmp_path):
    bad = os.path.join(str(tmp_path), "bad.net")
    with open(bad, "w") as f:
        f.write('Switch 8 "s0"\n[1] "nowhere"[1] junk junk\n')
    p = subprocess.run([PYTHON, FAULT_SOAK, "--net", bad, "--events", "1",
                        "--out", os.path.join(str(tmp_path), "o")],
                       stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True,
                       timeout=60)
    assert p.returncode == 2
    assert "Traceback" not in p.stderr
    assert p.stderr.startswith("osm-fault-soak: ")


FUZZ = os.path.join(REPO, "fuzz")


@pytest.mark.parametrize("target", ["topology", "lfts"])
def test_fuzz_corpus_and_regressions_replay(target):
    """Every committed seed and every kept fuzz finding (fuzz/regressions/
    TARGET/) loads or raises InputError, nothing else."""
    files = sorted(glob.glob(os.path.join(FUZZ, "corpus", target, "*")) +
                   glob.glob(os.path.join(FUZZ, "regressions", target, "*")))
    assert len(files) >= 2
    p = subprocess.run([PYTHON, os.path.join(FUZZ, "fuzz_fabric.py"), target,
                        "--replay"] + files, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True,
                       timeout=120)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "target=%s replayed=%d findings=0" % (
        target, len(files))


VALGRIND_SOAK = os.path.join(REPO, "scripts", "valgrind-soak")


@requires_plugin
def test_valgrind_soak_runs_the_soak_in_process(tmp_path):
    """valgrind-soak drives osmoffset.soak itself (no osm-fault-soak
    subprocess); a stand-in 'valgrind' that drops its options and runs
    opensm shows the flow and the report without valgrind's slowness."""
    fake = tmp_path / "bin"
    fake.mkdir()
    vg = fake / "valgrind"
    vg.write_text('#!/bin/sh\nwhile [ "${1#--}" != "$1" ]; do shift; done\n'
                  'exec "$@"\n')
    vg.chmod(0o755)
    out = tmp_path / "vg"
    env = dict(os.environ, PATH="%s:%s" % (fake, os.environ["PATH"]))
    p = subprocess.run([PYTHON, VALGRIND_SOAK, "--out", str(out),
                        "--net", NET, "--events", "2", "--lmc", "1",
                        "--min-sweeps", "1", "--json"],
                       stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True,
                       env=env, timeout=600)
    assert p.returncode == 0, p.stderr
    last = p.stdout.splitlines()[-1]
    assert re.match(r"sweeps=\d+ plugin_errors=0 plugin_leaked_bytes=0$",
                    last), last
    rep = json.loads((out / "valgrind-soak.json").read_text())
    assert rep["soak_last_line"] == "events=2 survived=2 invalid=0"
    assert rep["command"].startswith("osm-fault-soak --net ")
    assert rep["heavy_sweeps"] >= 1


def test_soak_names_nodes_by_their_net_file_id():
    """ibsim's console knows a node by its net-file id ("h0000"), not by
    the description in the comment after it ("node000 HCA-1"): every
    command the soak sends names an id of the file."""
    from osmoffset import fabric, soak
    topo = fabric.load_topology(os.path.join(TOPO_DIR, "sharp-ft2.net"))
    ids = {rec["id"] for rec in topo.records}
    name, kind = soak.first_node_name(topo)
    assert (name, kind) == ("h0000", "CA")
    model = soak.Model(topo, name, kind)
    choices = model.choices()
    faults = [choices[k][0] for k in ("link", "switch", "host")]
    for fault in faults:
        for repair in (False, True):
            for cmd in model.commands(fault, repair):
                assert cmd.split('"')[1] in ids, cmd
