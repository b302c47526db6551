"""osmoffset.runner (the one ibsim/OpenSM runner), the net-file reader's
ibsim GUID defaults, and the thin tool scripts (symlinked onto PATH,
--version, no tool loading another)."""

import json
import os
import re
import shutil
import subprocess
import sys

import pytest

from conftest import (PYTHON, REPO, TOPO_DIR, plugin_dir, requires_plugin,
                      run_osm_sim)
from osmoffset import fabric, paths, runner

HAVE_SIM = bool(shutil.which("ibsim") and runner.which("opensm"))
needs_sim = pytest.mark.skipif(not HAVE_SIM, reason="ibsim/opensm missing")

# the tools this branch converted: (path in the repo, module)
TOOLS = [
    ("scripts/osm-sim", "osm_sim"),
    ("scripts/osm-fault-soak", "osm_fault_soak"),
    ("scripts/valgrind-soak", "valgrind_soak"),
    ("scripts/bench-routing", "bench_routing"),
    ("scripts/demo", "demo"),
    ("sim-topologies/gen-fabric", "gen_fabric"),
]


# ----------------------------------------------------------------------
# ibsim's GUID defaults (ibsim/sim_net.c) in the one .net reader
# ----------------------------------------------------------------------

GUID_NET = """\
Switch 4 "s0"
[1] "h0"[1]
[2] "s1"[2]
[3] "h1"[2]

Switch 4 "s1"
[1] "h2"[1]
[2] "s0"[2]

Hca 2 "h0"
[1] "s0"[1]

Hca 2 "h1"
[2] "s0"[3]

Hca 1 "h2"
[1] "s1"[1]
"""


def test_ibsim_default_guids():
    """Switches count up from 0x200000 (one GUID each, shared by all
    ports); CAs from 0x100000, each reserving nports + 1 GUIDs, port i
    being node GUID + i."""
    topo = fabric.parse_topology_text(GUID_NET, "guids.net")
    assert sorted(n.guid for n in topo.switches()) == [0x200000, 0x200001]
    cas = {(n.desc, n.port): (n.node_guid, n.guid) for n in topo.cas()}
    assert cas == {("h0", 1): (0x100000, 0x100001),
                   ("h1", 2): (0x100003, 0x100005),
                   ("h2", 1): (0x100006, 0x100007)}
    assert fabric.IBSIM_GUID_BASE == {"SW": 0x200000, "CA": 0x100000,
                                      "RT": 0}


def test_guid_assignments_absolute_and_relative():
    text = ("switchguid=0x5000\ncaguid=0x7000\n" + GUID_NET.replace(
        'Hca 1 "h2"', 'caguid+0x100\nHca 1 "h2"').replace(
        'Switch 4 "s1"', 'switchguid+2\nSwitch 4 "s1"'))
    topo = fabric.parse_topology_text(text, "g.net")
    assert sorted(n.guid for n in topo.switches()) == [0x5000, 0x5002]
    ports = sorted(n.guid for n in topo.cas())
    assert ports == [0x7001, 0x7005, 0x7101]


@needs_sim
def test_guid_defaults_match_ibsim(tmp_path):
    """The reader's GUIDs are the ones the real ibsim gives the nodes
    (as OpenSM discovers them)."""
    net = tmp_path / "guids.net"
    net.write_text(GUID_NET)
    out = tmp_path / "o"
    p = run_osm_sim(["--net", str(net), "--out", str(out), "--stock",
                     "--engine", "minhop", "--no-ibroute"])
    assert p.returncode == 0, p.stderr
    mine = fabric.load_topology(str(net))
    seen = fabric.load_topology(str(out / "opensm-subnet.lst"))
    assert {n.guid for n in mine.switches()} == \
        {n.guid for n in seen.switches()}
    assert {n.guid for n in mine.cas()} == {n.guid for n in seen.cas()}


def test_scan_netfile_counts_includes_and_roots(tmp_path):
    (tmp_path / "part.net").write_text('Hca 1 "h9"\n[1] "s0"[4]\n')
    net = tmp_path / "top.net"
    net.write_text("# updn-root 0x0000000000200001 s1\n" + GUID_NET +
                   '\ninclude part.net\n')
    s = fabric.scan_netfile(str(net))
    assert (s.nodes, s.switches, s.cas) == (6, 2, 4)
    assert s.ports == (4 + 1) * 2 + (2 + 1) * 2 + (1 + 1) * 2
    assert s.roots == [0x200001]
    assert s.first == ("SW", "s0")
    assert s.sizes() == (6, 2, s.ports)
    # no judging: garbage and missing files count as what they hold
    (tmp_path / "junk.net").write_text("garbage\n[1] x\nSwitch 8 \n")
    assert fabric.scan_netfile(str(tmp_path / "junk.net")).switches == 1
    assert fabric.scan_netfile(str(tmp_path / "none.net")).nodes == 0


def test_updn_roots_of_the_full_reader():
    topo = fabric.load_topology(os.path.join(TOPO_DIR, "ft2-8x4.net"))
    scan = fabric.scan_netfile(os.path.join(TOPO_DIR, "ft2-8x4.net"))
    assert [g for g, _ in topo.updn_roots] == scan.roots and scan.roots
    assert all(topo.nodes[g].kind == "SW" for g in scan.roots)


# ----------------------------------------------------------------------
# plugin lookup, opensm command line and environment
# ----------------------------------------------------------------------

def test_plugin_lookup_order(tmp_path, monkeypatch):
    monkeypatch.setenv("OSMOFFSET_PLUGIN_DIR", str(tmp_path / "env"))
    monkeypatch.setattr(paths, "built_plugin_dir",
                        lambda: str(tmp_path / "built"))
    assert runner.resolve_plugin_dir(str(tmp_path / "opt")) == \
        (str(tmp_path / "opt"), "--plugin-dir")
    assert runner.resolve_plugin_dir(None) == \
        (str(tmp_path / "env"), "OSMOFFSET_PLUGIN_DIR")
    monkeypatch.delenv("OSMOFFSET_PLUGIN_DIR")
    assert runner.resolve_plugin_dir(None) == \
        (str(tmp_path / "built"), "source tree")
    monkeypatch.setattr(paths, "built_plugin_dir", lambda: None)
    assert runner.resolve_plugin_dir(None) == (None, "loader")
    assert "dynamic loader" in runner.describe_plugin(None, "loader")


def test_installed_mode_command_line(tmp_path, monkeypatch):
    """No plugin directory: LD_LIBRARY_PATH stays as it was and
    opensm.conf names the plugin by its plain name."""
    monkeypatch.setenv("LD_LIBRARY_PATH", "/somewhere")
    monkeypatch.setenv("LD_PRELOAD", "/bad.so")
    env = runner.sim_env("sock", str(tmp_path))
    assert "LD_PRELOAD" not in env and env["IBSIM_SOCKNAME"] == "sock"
    e = runner.opensm_env(env, None)
    assert e["LD_LIBRARY_PATH"] == "/somewhere"
    assert e["LD_PRELOAD"] == runner.find_umad2sim()
    e = runner.opensm_env(env, "/plug")
    assert e["LD_LIBRARY_PATH"] == "/plug:/somewhere"
    conf = tmp_path / "opensm.conf"
    runner.write_conf(str(conf), "on", ["stock_guard=off"])
    lines = conf.read_text().splitlines()
    assert "event_plugin_name osmoffset" in lines
    assert "event_plugin_options port_offsetting=on stock_guard=off" in lines
    runner.write_conf(str(conf), "stock")
    assert "event_plugin" not in conf.read_text()
    cmd = runner.opensm_command("/opt/osm/sbin/opensm", "/o", "/o/osm.log",
                                "updn", 2, "/o/opensm.conf",
                                roots_file="/o/r", wrapper=["time"],
                                extra=["--x"])
    assert cmd == ["time", "/opt/osm/sbin/opensm", "--once", "-D", "0x43",
                   "--dump_files_dir", "/o", "-f", "/o/osm.log", "-R",
                   "updn", "-l", "2", "-F", "/o/opensm.conf", "-a", "/o/r",
                   "--x"]
    cmd = runner.opensm_command("opensm", "/o", "/l", "minhop", 0, "/c",
                                once=False, sweep=0, debug="0x47")
    assert cmd[:3] == ["opensm", "-s", "0"] and "--once" not in cmd


def test_opensm_comes_from_path(tmp_path, monkeypatch):
    d = tmp_path / "sbin"
    d.mkdir()
    fake = d / "opensm"
    fake.write_text("#!/bin/sh\necho 'OpenSM 3.3.24'\n")
    fake.chmod(0o755)
    monkeypatch.setenv("PATH", "%s:%s" % (d, os.environ["PATH"]))
    assert runner.require_tools(["opensm"], umad2sim=False) == \
        {"opensm": str(fake)}
    assert runner.opensm_version(str(fake)) == "OpenSM 3.3.24"


def test_umad2sim_from_environment(monkeypatch):
    monkeypatch.setenv("OSMSIM_UMAD2SIM", "/x/libumad2sim.so")
    assert runner.find_umad2sim() == "/x/libumad2sim.so"


def test_ibsim_needs_and_limits():
    assert runner.ibsim_needs(100, 10, 500) == []
    assert runner.ibsim_needs(6804, 972, 41796) == [
        "-N", "6804", "-S", "972", "-P", "41796"]
    assert runner.ibsim_limits(112, 48, 300) == []


@needs_sim
@requires_plugin
def test_installed_plugin_through_the_loader(tmp_path):
    """osm-sim of a package outside any source tree, with no plugin
    directory: opensm must load libosmoffset.so by its plain name (here
    from the loader path LD_LIBRARY_PATH, as from /usr/lib when
    installed)."""
    site = tmp_path / "site"
    shutil.copytree(os.path.join(REPO, "pylib", "osmoffset"),
                    str(site / "osmoffset"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    lib = tmp_path / "lib"
    lib.mkdir()
    shutil.copy(os.path.join(plugin_dir(), "libosmoffset.so"), str(lib))
    net = tmp_path / "small.net"
    net.write_text(GUID_NET)
    env = dict(os.environ, LD_LIBRARY_PATH=str(lib))
    env.pop("OSMOFFSET_PLUGIN_DIR", None)
    out = tmp_path / "o"
    p = subprocess.run(
        [PYTHON, "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
         "del sys.argv[1]; from osmoffset.cli.osm_sim import main; "
         "sys.exit(main())", str(site), "--net", str(net), "--out",
         str(out), "--engine", "minhop", "--no-ibroute", "--json"],
        stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
        stderr=subprocess.PIPE, universal_newlines=True, env=env,
        timeout=120)
    assert p.returncode == 0, p.stderr
    info = json.loads(p.stdout)
    assert info["plugin_dir"] is None
    assert "dynamic loader" in info["plugin"]
    assert "event_plugin_name osmoffset" in \
        (out / "opensm.conf").read_text()
    # the plugin really ran: its "loaded" line is in the log
    assert re.search(r"osmoffset \S+ loaded: port_offsetting=",
                     (out / "osm.log").read_text())


# ----------------------------------------------------------------------
# the thin scripts
# ----------------------------------------------------------------------

@pytest.mark.parametrize("path,module", TOOLS)
def test_thin_script(path, module):
    with open(os.path.join(REPO, path)) as f:
        text = f.read()
    assert text.startswith("#!/usr/bin/python3\n")
    assert "from osmoffset.cli.%s import main  # noqa: E402\n" % module \
        in text
    assert text.rstrip().endswith("sys.exit(main())")
    assert "os.path.realpath(__file__)" in text
    assert "SourceFileLoader" not in text and "importlib" not in text
    assert len(text.splitlines()) <= 20
    assert os.access(os.path.join(REPO, path), os.X_OK)


@pytest.mark.parametrize("path,module", TOOLS)
def test_symlinked_tool_on_path_runs(tmp_path, path, module):
    """A tool linked onto PATH still finds pylib (realpath)."""
    bindir = tmp_path / "bin"
    bindir.mkdir()
    name = os.path.basename(path)
    os.symlink(os.path.join(REPO, path), str(bindir / name))
    env = dict(os.environ, PATH="%s:%s" % (bindir, os.environ["PATH"]),
               PYTHONPATH="")
    p = subprocess.run([name, "--version"], cwd=str(tmp_path),
                       stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True,
                       env=env, timeout=60)
    assert p.returncode == 0, p.stderr
    assert p.stdout.strip() == "%s (osmoffset) 0.1.0" % name


def test_no_library_module_loads_a_script():
    pkg = os.path.join(REPO, "pylib", "osmoffset")
    for dirpath, _dirs, files in os.walk(pkg):
        for f in files:
            if f.endswith(".py"):
                with open(os.path.join(dirpath, f)) as fh:
                    text = fh.read()
                assert "SourceFileLoader" not in text, f


def test_cli_modules_import():
    import importlib
    for _path, module in TOOLS:
        m = importlib.import_module("osmoffset.cli." + module)
        assert callable(m.main)
    assert sys.modules["osmoffset.runner"] is runner


# ----------------------------------------------------------------------
# an installation: no source tree, osmoffset._installdirs
# ----------------------------------------------------------------------

def fake_installation(tmp_path):
    """The package copied out of the tree with an _installdirs module
    (as make install writes it), the curated fabrics the demo uses in
    <pkgdatadir>/sim-topologies, lft-analyze in <bindir> and the plugin
    in a directory the test puts on the loader path."""
    site = tmp_path / "site"
    shutil.copytree(os.path.join(REPO, "pylib", "osmoffset"),
                    str(site / "osmoffset"),
                    ignore=shutil.ignore_patterns("__pycache__"))
    share = tmp_path / "share" / "osmoffset"
    (share / "sim-topologies").mkdir(parents=True)
    for f in ("seed-4x4trunk.net", "kary-4-3.net"):
        shutil.copy(os.path.join(TOPO_DIR, f), str(share / "sim-topologies"))
    bindir = tmp_path / "bin"
    bindir.mkdir()
    la = bindir / "lft-analyze"
    la.write_text("#!/bin/sh\nexec %s %s \"$@\"\n" % (
        PYTHON, os.path.join(REPO, "scripts", "lft-analyze")))
    la.chmod(0o755)
    (site / "osmoffset" / "_installdirs.py").write_text(
        "PKGDATADIR = %r\nBINDIR = %r\n" % (str(share), str(bindir)))
    return site, share, bindir


def run_installed(site, args, env=None, timeout=300):
    e = dict(os.environ)
    e.pop("OSMOFFSET_PLUGIN_DIR", None)
    e.update(env or {})
    return subprocess.run(
        [PYTHON, "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
         "del sys.argv[1]; import importlib; "
         "m = importlib.import_module(sys.argv.pop(1)); sys.exit(m.main())",
         str(site)] + list(args), stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        universal_newlines=True, env=e, timeout=timeout, cwd="/")


def test_paths_of_an_installation(tmp_path):
    site, share, bindir = fake_installation(tmp_path)
    p = subprocess.run(
        [PYTHON, "-c", "import sys; sys.path.insert(0, sys.argv[1]); "
         "from osmoffset import paths; print(paths.source_root()); "
         "print(paths.fabrics_dir()); "
         "print(paths.tool_argv('lft-analyze')); "
         "print(paths.built_plugin_dir())", str(site)],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        universal_newlines=True, timeout=60, cwd="/")
    assert p.returncode == 0, p.stderr
    assert p.stdout.splitlines() == [
        "None", str(share / "sim-topologies"),
        str([str(bindir / "lft-analyze")]), "None"]


@needs_sim
@requires_plugin
def test_installed_demo(tmp_path):
    """The demo of an installation: fabrics from <pkgdatadir>, tools from
    <bindir>, the plugin by its plain name through the loader."""
    site, _share, _bindir = fake_installation(tmp_path)
    lib = tmp_path / "lib"
    lib.mkdir()
    shutil.copy(os.path.join(plugin_dir(), "libosmoffset.so"), str(lib))
    p = run_installed(site, ["osmoffset.cli.demo", "--out",
                             str(tmp_path / "runs")],
                      env={"LD_LIBRARY_PATH": str(lib)})
    assert p.returncode == 0, p.stderr
    lines = p.stdout.splitlines()
    assert lines[0].startswith("demo: opensm /")
    assert lines[1] == "demo: plugin libosmoffset.so by its plain name " \
        "through the dynamic loader (installed plugin)"
    assert "== seed-4x4trunk.net: 5 hosts, 2 switches, LMC 2" in lines
    assert "== kary-4-3.net: 64 hosts, 48 switches, LMC 2" in lines
    assert lines[-1] == "runs kept in %s" % (tmp_path / "runs")
