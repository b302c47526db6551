"""scripts/osm-sim: command-line errors, a stock run, failure detection,
and the OpenSM log verdicts of osmoffset.checks."""

import json
import os
import signal
import subprocess
import time

import pytest

from conftest import (OSM_SIM, PYTHON, REPO, plugin_dir,
                      requires_plugin, run_osm_sim)
from osmoffset import checks, fabric, runner


def one_line_error(proc):
    """osm-sim's failure message: exactly one line on stderr."""
    lines = proc.stderr.strip().splitlines()
    assert len(lines) == 1, proc.stderr
    assert lines[0].startswith("osm-sim: "), lines[0]
    assert "Traceback" not in proc.stderr
    return lines[0]


def socket_bound(name):
    with open("/proc/net/unix") as f:
        return any(line.split()[-1].rstrip("@") == "@" + name
                   for line in f if len(line.split()) >= 8)


# ----------------------------------------------------------------------
# usage and input errors (exit 2)
# ----------------------------------------------------------------------

def test_help_documents_the_interface():
    proc = run_osm_sim(["--help"])
    assert proc.returncode == 0
    for word in ("--net", "--out", "--lmc", "--stock", "--port-offsetting",
                 "--engine", "--plugin-dir", "OSMOFFSET_PLUGIN_DIR",
                 "--allow-fallback", "--quiet", "ibroute.dump",
                 "Exit status", "opensm args"):
        assert word in proc.stdout, word


def test_missing_arguments_exit_2():
    proc = run_osm_sim(["--out", "/tmp/x"])
    assert proc.returncode == 2
    assert "--net" in proc.stderr


def test_missing_net_file(tmp_path):
    proc = run_osm_sim(["--net", str(tmp_path / "nope.net"),
                        "--out", str(tmp_path / "o"), "--stock"])
    assert proc.returncode == 2
    msg = one_line_error(proc)
    assert msg == "osm-sim: net file %s: no such file" % (tmp_path /
                                                          "nope.net")


def test_garbled_net_file(tmp_path):
    net = tmp_path / "bad.net"
    net.write_text('Switch 8 "S1"\n[1] "H1"[1]\n[2] garbage here\n\n'
                   'Hca 1 "H1"\n[1] "S1"[1]\n')
    out = tmp_path / "o"
    proc = run_osm_sim(["--net", str(net), "--out", str(out), "--stock"])
    assert proc.returncode == 2
    msg = one_line_error(proc)
    assert msg.startswith("osm-sim: ibsim start: ")
    assert "error at %s: line 3" % net in msg
    assert "see %s" % (out / "ibsim.out") in msg


def test_net_file_without_switch(tmp_path):
    net = tmp_path / "nosw.net"
    net.write_text('Hca 1 "H1"\n\nHca 1 "H2"\n')
    proc = run_osm_sim(["--net", str(net), "--out", str(tmp_path / "o"),
                        "--stock"])
    assert proc.returncode == 2
    assert one_line_error(proc) == \
        "osm-sim: net file %s: no Switch node found" % net


def test_missing_plugin_dir(tmp_path, small_net):
    proc = run_osm_sim(["--net", small_net, "--out", str(tmp_path / "o"),
                        "--plugin-dir", str(tmp_path / "nolib")])
    assert proc.returncode == 2
    msg = one_line_error(proc)
    assert "libosmoffset.so not found in %s" % (tmp_path / "nolib") in msg
    assert "build it first: ./configure && make" in msg


def test_plugin_dir_from_environment(tmp_path, small_net):
    empty = tmp_path / "empty"
    empty.mkdir()
    proc = run_osm_sim(["--net", small_net, "--out", str(tmp_path / "o")],
                       env={"OSMOFFSET_PLUGIN_DIR": str(empty)})
    assert proc.returncode == 2
    assert "not found in %s (from OSMOFFSET_PLUGIN_DIR)" % empty in \
        one_line_error(proc)


@pytest.mark.parametrize("args,needle", [
    (["--lmc", "8"], "--lmc must be 0..7, not 8"),
    (["--port-offsetting", "on;x"], "--port-offsetting: bad value"),
    (["--stock", "--plugin-option", "a=b"], "makes no sense with --stock"),
])
def test_bad_option_values(tmp_path, small_net, args, needle):
    proc = run_osm_sim(["--net", small_net, "--out", str(tmp_path / "o")]
                       + args)
    assert proc.returncode == 2
    assert needle in one_line_error(proc)


def test_stock_and_offsetting_exclusive(tmp_path, small_net):
    proc = run_osm_sim(["--net", small_net, "--out", str(tmp_path / "o"),
                        "--stock", "--port-offsetting", "on"])
    assert proc.returncode == 2
    assert "not allowed with argument" in proc.stderr


# ----------------------------------------------------------------------
# a real run
# ----------------------------------------------------------------------

def test_stock_run_leaves_all_files(tmp_path, small_net):
    out = tmp_path / "run"
    out.mkdir()
    (out / "guid2lid").write_text("garbage from an earlier run\n")
    proc = run_osm_sim(["--net", small_net, "--out", str(out), "--stock",
                        "--lmc", "1"])
    assert proc.returncode == 0, proc.stderr
    line = proc.stdout.strip()
    assert line.startswith("osm-sim: ok: fabric small-2x2.net (4 switches, "
                           "8 nodes), engine updn, lmc 1, stock, "), line
    assert line.endswith(" s -> %s" % out)
    for name in ("osm.log", "opensm-lfts.dump", "opensm-subnet.lst",
                 "ibroute.dump", "opensm.conf", "osm-sim.json"):
        assert (out / name).stat().st_size > 0, name
    conf = (out / "opensm.conf").read_text()
    assert "event_plugin" not in conf
    info = json.loads((out / "osm-sim.json").read_text())
    assert (info["engine_used"], info["lmc"], info["mode"],
            info["switches"], info["switches_routed"], info["fallback"]) == \
        ("updn", 1, "stock", 4, 4, False)
    # ibsim is gone and so is its socket
    assert not socket_bound(info["ibsim_socket"] + ":ctl")
    # what the switches hold is what OpenSM computed
    sm = fabric.load_lfts(str(out / "opensm-lfts.dump"))
    hw = fabric.load_lfts(str(out / "ibroute.dump"))
    assert {g: s.lft for g, s in sm.switches.items()} == \
        {g: s.lft for g, s in hw.switches.items()}
    assert len(sm.switches) == 4 and sm.lmc == 1
    # 4 hosts x 2 LIDs + the switch LIDs; updn does not route one spine
    # (a root) to the other, that would take a down-up turn
    assert {s.desc: len(s.lft) for s in sm.switches.values()} == \
        {"leaf0": 12, "leaf1": 12, "spine0": 11, "spine1": 11}
    # the stale cache file was replaced by OpenSM's own
    assert "garbage" not in (out / "guid2lid").read_text()


def test_json_output_and_quiet(tmp_path, small_net):
    proc = run_osm_sim(["--net", small_net, "--out", str(tmp_path / "o"),
                        "--stock", "--json", "--no-ibroute"])
    assert proc.returncode == 0, proc.stderr
    info = json.loads(proc.stdout)
    assert info["engine_used"] == "updn" and info["lmc"] == 0
    assert not (tmp_path / "o" / "ibroute.dump").exists()
    proc = run_osm_sim(["--net", small_net, "--out", str(tmp_path / "o"),
                        "--stock", "-q"])
    assert proc.returncode == 0 and proc.stdout == "" and proc.stderr == ""


def test_parallel_runs_do_not_share_a_simulator(tmp_path, small_net):
    procs = [subprocess.Popen([PYTHON, OSM_SIM, "--net", small_net, "--out",
                               str(tmp_path / str(i)), "--stock", "-q",
                               "--lmc", str(i)],
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                              universal_newlines=True) for i in range(3)]
    for p in procs:
        _out, err = p.communicate(timeout=120)
        assert p.returncode == 0, err
    socks = {json.loads((tmp_path / str(i) / "osm-sim.json").read_text())
             ["ibsim_socket"] for i in range(3)}
    assert len(socks) == 3
    for i in range(3):
        assert fabric.load_lfts(str(tmp_path / str(i) /
                                    "opensm-lfts.dump")).lmc == i


def test_fallback_to_minhop_is_reported(tmp_path, no_root_net):
    out = tmp_path / "o"
    proc = run_osm_sim(["--net", no_root_net, "--out", str(out), "--stock"])
    assert proc.returncode == 3
    assert one_line_error(proc) == (
        "osm-sim: routing: requested engine updn failed, OpenSM fell back "
        "to minhop (see %s)" % (out / "osm.log"))
    proc = run_osm_sim(["--net", no_root_net, "--out", str(out), "--stock",
                        "--allow-fallback"])
    assert proc.returncode == 0, proc.stderr
    assert "fell back to minhop" in proc.stderr
    assert json.loads((out / "osm-sim.json").read_text())["engine_used"] \
        == "minhop"
    # asking for minhop directly is no fallback
    proc = run_osm_sim(["--net", no_root_net, "--out", str(out), "--stock",
                        "--engine", "minhop"])
    assert proc.returncode == 0, proc.stderr


def test_opensm_error_is_reported(tmp_path, small_net):
    out = tmp_path / "o"
    proc = run_osm_sim(["--net", small_net, "--out", str(out), "--stock",
                        "--", "--no-such-opensm-option"])
    assert proc.returncode == 1
    msg = one_line_error(proc)
    assert msg.startswith("osm-sim: opensm run: exit status ")
    assert str(out) in msg


def test_broken_plugin_library_is_reported(tmp_path, small_net):
    """A libosmoffset.so that cannot be dlopen()ed: OpenSM logs the
    failure and routes without it; osm-sim must not pass that."""
    bad = tmp_path / "badlib"
    bad.mkdir()
    (bad / "libosmoffset.so").write_text("not an ELF file\n")
    out = tmp_path / "o"
    proc = run_osm_sim(["--net", small_net, "--out", str(out),
                        "--plugin-dir", str(bad)])
    assert proc.returncode == 1
    msg = one_line_error(proc)
    assert msg.startswith("osm-sim: plugin load: ")
    assert "Failed to open event plugin" in msg
    assert msg.endswith("(see %s)" % (out / "osm.log"))


def fake_tool(tmp_path, name, body):
    """A PATH entry whose `name` is a shell script running body."""
    d = tmp_path / "fakebin"
    d.mkdir(exist_ok=True)
    f = d / name
    f.write_text("#!/bin/sh\n" + body + "\n")
    f.chmod(0o755)
    return {"PATH": "%s:%s" % (d, os.environ.get("PATH", ""))}


def fake_opensm(tmp_path, body):
    return fake_tool(tmp_path, "opensm", body)


def test_ibroute_per_switch_when_dump_fts_fails(tmp_path, small_net):
    env = fake_tool(tmp_path, "dump_fts", "echo broken >&2; exit 1")
    out = tmp_path / "o"
    proc = run_osm_sim(["--net", small_net, "--out", str(out), "--stock",
                        "--lmc", "2"], env=env)
    assert proc.returncode == 0, proc.stderr
    assert json.loads((out / "osm-sim.json").read_text())["ibroute_tool"] \
        == "ibroute"
    sm = fabric.load_lfts(str(out / "opensm-lfts.dump"))
    hw = fabric.load_lfts(str(out / "ibroute.dump"))
    assert {g: s.lft for g, s in sm.switches.items()} == \
        {g: s.lft for g, s in hw.switches.items()}
    # same switch order as opensm-lfts.dump, LID headers
    assert [s.lid for s in hw.switches.values()] == \
        [s.lid for s in sm.switches.values()]


def test_ibroute_dump_failure_is_reported(tmp_path, small_net):
    fake_tool(tmp_path, "dump_fts", "exit 1")
    env = fake_tool(tmp_path, "ibroute", "echo 'ibroute: iberror: no "
                    "way' >&2; exit 1")
    out = tmp_path / "o"
    proc = run_osm_sim(["--net", small_net, "--out", str(out), "--stock"],
                       env=env)
    assert proc.returncode == 1
    assert one_line_error(proc) == (
        "osm-sim: ibroute dump: ibroute 1 (switch 0x0000000000200000) "
        "failed: ibroute: iberror: no way (see %s)" % (out / "ibroute.err"))


def test_opensm_timeout_stops_everything(tmp_path, small_net):
    env = fake_opensm(tmp_path, "exec sleep 30")
    out = tmp_path / "o"
    t0 = time.monotonic()
    proc = run_osm_sim(["--net", small_net, "--out", str(out), "--stock",
                        "--timeout", "1"], env=env)
    assert time.monotonic() - t0 < 15
    assert proc.returncode == 1
    assert one_line_error(proc) == \
        "osm-sim: opensm run: timed out after 1 s (see %s)" % (out / "osm.log")


def test_sigterm_stops_ibsim(tmp_path, small_net):
    env = dict(os.environ)
    env.update(fake_opensm(tmp_path, "exec sleep 30"))
    p = subprocess.Popen([PYTHON, OSM_SIM, "--net", small_net, "--out",
                          str(tmp_path / "o"), "--stock"], env=env,
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         universal_newlines=True)
    prefix = "@osmsim-%d-" % p.pid
    deadline = time.monotonic() + 20
    sock = None
    while sock is None and time.monotonic() < deadline:
        with open("/proc/net/unix") as f:
            for line in f:
                name = line.split()[-1]
                if name.startswith(prefix) and name.rstrip("@").endswith(
                        ":ctl"):
                    sock = name.rstrip("@")[1:]
        time.sleep(0.05)
    assert sock is not None, "osm-sim's ibsim never came up"
    time.sleep(0.3)           # let osm-sim reach the (fake) opensm
    p.send_signal(signal.SIGTERM)
    _out, err = p.communicate(timeout=20)
    assert p.returncode == 130
    assert err.strip() == "osm-sim: interrupted; ibsim stopped"
    assert not socket_bound(sock)


@requires_plugin
def test_plugin_run_checks_the_loaded_line(tmp_path, small_net):
    out = tmp_path / "o"
    proc = run_osm_sim(["--net", small_net, "--out", str(out), "--lmc", "2",
                        "--plugin-dir", plugin_dir()])
    assert proc.returncode == 0, proc.stderr
    assert "port_offsetting=on" in proc.stdout
    conf = (out / "opensm.conf").read_text().splitlines()
    assert "event_plugin_name osmoffset" in conf
    assert "event_plugin_options port_offsetting=on" in conf
    log = (out / "osm.log").read_text()
    assert checks.plugin_log_problems(log, "on") == []
    assert checks.plugin_log_problems(log, "off") == \
        ["plugin loaded with port_offsetting=%s, not off"
         % checks._LOADED.findall(log)[-1][1]]


@requires_plugin
def test_plugin_rejects_bad_option_value(tmp_path, small_net):
    out = tmp_path / "o"
    proc = run_osm_sim(["--net", small_net, "--out", str(out),
                        "--plugin-dir", plugin_dir(),
                        "--port-offsetting", "sideways"])
    assert proc.returncode == 1
    msg = one_line_error(proc)
    assert msg.startswith("osm-sim: plugin load: ")
    assert "ERR 9F01" in msg and "sideways" in msg


# ----------------------------------------------------------------------
# log verdicts (no simulator needed)
# ----------------------------------------------------------------------

def L(msg, level="0x02"):
    return "Nov 21 16:16:33 890222 [E0F186C0] %s -> %s\n" % (level, msg)


def test_osm_log_summary():
    text = (L("updn_lid_matrices: disabling UPDN algorithm, no root nodes "
              "were found") +
            L("ucast_mgr_route: updn: cannot build lid matrices", "0x01") +
            L("osm_ucast_mgr_process: minhop tables configured on all "
              "switches") + L("SUBNET UP"))
    assert checks.osm_log_summary(text) == {
        "engine_used": "minhop", "failed_engines": ["updn"],
        "no_engine": False, "subnet_up": True, "reach_first": False}
    text = L("osm_ucast_mgr_process: No routing engine able to "
             "successfully configure  switch tables on current fabric",
             "0x01")
    assert checks.osm_log_summary(text) == {
        "engine_used": None, "failed_engines": [], "no_engine": True,
        "subnet_up": False, "reach_first": False}


@pytest.mark.parametrize("line,kept", [
    ("osmoffset: stock guard: the tables that won leave 6 CA LIDs without "
     "a route from some CA after the reach pass, port offsetting's 4: port "
     "offsetting's go on, though they score lower in a cell (with "
     "reach_vls=2 or more and OpenSM's QoS on, ...)", True),
    ("osmoffset: stock guard: the tables that won leave 1 CA LIDs without "
     "a route from some CA after the reach pass, the mix of port "
     "offsetting's and the stock ones 0 (port offsetting's 2): the mix goes "
     "on, though it scores lower in 3 cells", True),
    ("osmoffset: stock guard: the tables that won, with port offsetting's "
     "entries toward the CA LIDs, go on", False),
    ("osmoffset: stock guard: the stock LFTs polished stay", False)])
def test_osm_log_summary_reach_first(line, kept):
    """reach_first: the guard kept ours, or a mix, for reach though they
    score lower than stock in a cell."""
    assert checks.osm_log_summary(L(line))["reach_first"] is kept


LOADED_ON = L("oo_create: osmoffset 0.1.0 loaded: port_offsetting=plain")
LOADED_OFF = L("oo_create: osmoffset 0.1.0 loaded: port_offsetting=off")


@pytest.mark.parametrize("text,mode,expect", [
    (LOADED_ON, "on", []),
    (LOADED_ON, "plain", []),
    (LOADED_OFF, "off", []),
    (LOADED_OFF, "on", ["plugin loaded with port_offsetting=off, not on"]),
    (LOADED_ON, "off", ["plugin loaded with port_offsetting=plain, not off"]),
    (LOADED_ON, "coordinated",
     ["plugin loaded with port_offsetting=plain, not coordinated"]),
    ("", "on", ["the log has no 'osmoffset ... loaded' line: the plugin "
                "did not load"]),
    (L("osm_epi_construct: Failed to open event plugin \"osmoffset\" : "
       "\"libosmoffset.so: cannot open shared object file\"", "0x01"), "on",
     ["osm_epi_construct: Failed to open event plugin \"osmoffset\" : "
      "\"libosmoffset.so: cannot open shared object file\"",
      "the log has no 'osmoffset ... loaded' line: the plugin did not "
      "load"]),
    (L("osm_epi_construct: Error loading plugin 'osmoffset': OpenSM "
       "version mismatch - plugin was built against X", "0x01"), "off",
     ["osm_epi_construct: Error loading plugin 'osmoffset': OpenSM version "
      "mismatch - plugin was built against X",
      "the log has no 'osmoffset ... loaded' line: the plugin did not "
      "load"]),
    (L("oo_create: ERR 9F01: osmoffset: bad token; port offsetting stays "
       "off", "0x01") + LOADED_OFF, "on",
     ["oo_create: ERR 9F01: osmoffset: bad token; port offsetting stays off",
      "plugin loaded with port_offsetting=off, not on"]),
])
def test_plugin_log_problems(text, mode, expect):
    assert checks.plugin_log_problems(text, mode) == expect


def test_script_is_executable():
    assert os.access(OSM_SIM, os.X_OK)
    with open(OSM_SIM) as f:
        assert f.readline().strip() == "#!/usr/bin/python3"
    assert os.path.isdir(os.path.join(REPO, "pylib", "osmoffset"))


def test_updn_roots_from_net_file(tmp_path, no_root_net):
    """'# updn-root' comment lines give updn its roots (opensm -a), so a
    fabric whose roots OpenSM cannot guess still routes with updn."""
    net = tmp_path / "rooted.net"
    net.write_text("# updn-root 0x0000000000200001 sw1\n" +
                   open(no_root_net).read())
    out = tmp_path / "o"
    proc = run_osm_sim(["--net", str(net), "--out", str(out), "--stock"])
    assert proc.returncode == 0, proc.stderr
    assert (out / "root-guids").read_text() == "0x0000000000200001\n"
    info = json.loads((out / "osm-sim.json").read_text())
    assert info["engine_used"] == "updn" and info["roots"] == 1
    assert info["opensm_cmd"][-2:] == ["-a", str(out / "root-guids")]
    # --roots none: OpenSM's own detection finds no root, minhop steps in
    proc = run_osm_sim(["--net", str(net), "--out", str(out), "--stock",
                        "--roots", "none"])
    assert proc.returncode == 3
    assert not (out / "root-guids").exists()
    # an explicit root file, kept in place even inside the output dir
    roots = out / "root-guids"
    roots.write_text("0x0000000000200000\n")
    proc = run_osm_sim(["--net", no_root_net, "--out", str(out), "--stock",
                        "--roots", str(roots)])
    assert proc.returncode == 0, proc.stderr
    assert roots.read_text() == "0x0000000000200000\n"
    # minhop gets no -a
    proc = run_osm_sim(["--net", str(net), "--out", str(out), "--stock",
                        "--engine", "minhop", "--json"])
    assert proc.returncode == 0, proc.stderr
    assert "-a" not in json.loads(proc.stdout)["opensm_cmd"]
    proc = run_osm_sim(["--net", str(net), "--out", str(out), "--stock",
                        "--roots", str(tmp_path / "none.txt")])
    assert proc.returncode == 2
    assert one_line_error(proc) == \
        "osm-sim: --roots %s: no such file" % (tmp_path / "none.txt")


def test_ibsim_limits_sizes_the_simulator():
    """ibsim's defaults for small fabrics; -N/-S/-P for big ones; -L when
    OpenSM will hand out more LIDs than ibsim 0.10's 30,720-entry LFTs
    hold (the 11,664-host 3-level tree at LMC 2)."""
    m = runner
    assert m.ibsim_limits(112, 48, 300) == []
    assert m.ibsim_limits(6804, 972, 41796, 6804 << 2) == [
        "-N", "13608", "-S", "1944", "-P", "83592"]
    big = m.ibsim_limits(13284, 1620, 71604, 13284 << 2)
    assert big[-2:] == ["-L", "49152"]
    assert "-L" not in m.ibsim_limits(13284, 1620, 71604, 13284)
