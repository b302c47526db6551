"""Shared fixtures for the osmoffset pytest suite: paths, the plugin
location, and a session-wide cache of scripts/osm-sim runs.

Tests import the package's modules (osmoffset.cli.<tool>,
osmoffset.runner, ...); run_script()/run_osm_sim() run a tool's
executable only to check its command-line behaviour."""

import json
import os
import re
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor

import pytest

REPO = os.environ.get("OSMOFFSET_SRCDIR") or os.path.dirname(
    os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
PYLIB = os.path.join(REPO, "pylib")
if PYLIB not in sys.path:
    sys.path.insert(0, PYLIB)

from osmoffset import checks, fabric  # noqa: E402

PYTHON = os.environ.get("PYTHON3") or "/usr/bin/python3"
OSM_SIM = os.path.join(REPO, "scripts", "osm-sim")
TOPO_DIR = os.path.join(REPO, "sim-topologies")
GEN_FABRIC = os.path.join(TOPO_DIR, "gen-fabric")

# The curated fabrics of sim-topologies/ that the end-to-end tests route.
CURATED = [
    "seed-4x4trunk.net", "ft2-8x4.net", "ft2-trunk-4x2x2.net",
    "ft2-oversub-8x2.net", "kary-4-3.net", "ft2-8x4-degraded.net",
    "kary-4-3-degraded.net", "ft3-doubled.net",
]

# Two leaves, two spines, two hosts per leaf: small enough to know every
# minimum-hop port set by heart.  leaf0 ports 1-2 hosts, 3 -> spine0,
# 4 -> spine1; the same for leaf1.
SMALL_NET = """\
Switch 8 "leaf0"
[1] "h0"[1]
[2] "h1"[1]
[3] "spine0"[1]
[4] "spine1"[1]

Switch 8 "leaf1"
[1] "h2"[1]
[2] "h3"[1]
[3] "spine0"[2]
[4] "spine1"[2]

Switch 8 "spine0"
[1] "leaf0"[3]
[2] "leaf1"[3]

Switch 8 "spine1"
[1] "leaf0"[4]
[2] "leaf1"[4]

Hca 1 "h0"
[1] "leaf0"[1]

Hca 1 "h1"
[1] "leaf0"[2]

Hca 1 "h2"
[1] "leaf1"[1]

Hca 1 "h3"
[1] "leaf1"[2]
"""

# Two switches that both carry hosts: updn finds no root here and OpenSM
# falls back to minhop.
NO_ROOT_NET = """\
Switch 8 "sw0"
[1] "ha"[1]
[3] "sw1"[3]
[5] "sw1"[5]

Switch 8 "sw1"
[1] "hb"[1]
[3] "sw0"[3]
[5] "sw0"[5]

Hca 1 "ha"
[1] "sw0"[1]

Hca 1 "hb"
[1] "sw1"[1]
"""

PLUGIN_SKIP_REASON = (
    "libosmoffset.so is not built: OSMOFFSET_PLUGIN_DIR is unset and "
    "<repo>/.libs/libosmoffset.so is missing (run ./configure && make, or "
    "make check)")


def plugin_dir():
    """Where the plugin under test lives, or None.  OSMOFFSET_PLUGIN_DIR
    wins when set (make check sets it), even if the library is missing
    there: then the plugin tests fail instead of skipping."""
    env = os.environ.get("OSMOFFSET_PLUGIN_DIR")
    if env:
        return env
    d = os.path.join(REPO, ".libs")
    if os.path.isfile(os.path.join(d, "libosmoffset.so")):
        return d
    return None


requires_plugin = pytest.mark.skipif(plugin_dir() is None,
                                     reason=PLUGIN_SKIP_REASON)


def run_script(path, args, env=None, timeout=300):
    """Run one of our Python scripts with args, the environment plus env,
    no stdin, output captured as text; returns the CompletedProcess."""
    e = dict(os.environ)
    if env:
        e.update(env)
    return subprocess.run([PYTHON, path] + list(args),
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True,
                          env=e, timeout=timeout)


def assert_usage_error(p, message):
    """A tool refused its arguments: exit 2 and one stderr line that
    starts with message, no traceback."""
    assert p.returncode == 2
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1, p.stderr
    assert lines[0].startswith(message), lines[0]
    assert "Traceback" not in p.stderr


def run_with_plugin(path, args, timeout=300):
    """run_script() with OSMOFFSET_PLUGIN_DIR naming the built plugin, when
    there is one (the benchmarks load it from there)."""
    env = {"OSMOFFSET_PLUGIN_DIR": plugin_dir()} if plugin_dir() else None
    return run_script(path, args, env, timeout)


def run_osm_sim(args, env=None, timeout=300):
    """Run scripts/osm-sim with args; returns the CompletedProcess."""
    return run_script(OSM_SIM, args, env, timeout)


def rename_hosts(net, out, names):
    """Write net to out with its nodes renamed (names: old name -> new
    name; names may trade places), every quoted mention of them (node
    lines and switch ports) alike."""
    with open(net) as f:
        text = f.read()
    for old, new in names.items():
        text = text.replace('"%s"' % old, '"@%s"' % new)
    with open(out, "w") as f:
        f.write(text.replace('"@', '"'))


def unreachable_by_kind(out):
    """CA -> base LID pairs the LFTs in out do not deliver, counted by
    (source kind, destination kind): 'host', 'mgmt' (a management HCA on
    a director ASIC) or 'sharp' (an aggregation node)."""
    from osmoffset.fabric import load_lfts, load_topology
    from osmoffset.model import is_aggregation_node

    topo = load_topology(os.path.join(str(out), "opensm-subnet.lst"))
    lfts = load_lfts(os.path.join(str(out), "opensm-lfts.dump"))
    switches = {n.guid for n in topo.switches()}
    cas = [n for n in topo.cas() if (n.guid, n.port or 1) in topo.links]

    def kind(n):
        if is_aggregation_node(n.desc):
            return "sharp"
        return "mgmt" if n.desc.startswith("mgmt") else "host"

    def delivered(sw, lid, ca):
        for _hop in range(len(switches) + 1):
            port = lfts.switches[sw].lft.get(lid)
            nxt = topo.links.get((sw, port)) if port else None
            if nxt is None:
                return False
            if nxt[0] == ca:
                return True
            if nxt[0] not in switches:
                return False
            sw = nxt[0]
        return False

    lids = lfts.port_lids()
    count = {}
    for dst in cas:
        lid = lids[dst.guid][0]
        for src in cas:
            sw = topo.links[(src.guid, src.port or 1)][0]
            if src is not dst and not delivered(sw, lid, dst.guid):
                key = (kind(src), kind(dst))
                count[key] = count.get(key, 0) + 1
    return count


def fabric_path(name):
    """Path of a curated fabric; OSMOFFSET_E2E_FABRICS (colon-separated
    paths) replaces the curated list, for trying other fabrics."""
    if os.path.sep in name:
        return name
    return os.path.join(TOPO_DIR, name)


def e2e_fabrics():
    env = os.environ.get("OSMOFFSET_E2E_FABRICS")
    if env:
        return [p for p in env.split(":") if p]
    return list(CURATED)


def fabric_id(name):
    return re.sub(r"\.net$", "", os.path.basename(name))


class SimRun:
    """One finished osm-sim run and its (lazily parsed) results."""

    def __init__(self, fabric_file, engine, lmc, mode, outdir, proc):
        self.fabric = fabric_file
        self.engine = engine
        self.lmc = lmc
        self.mode = mode
        self.out = outdir
        self.rc = proc.returncode
        self.stdout = proc.stdout
        self.stderr = proc.stderr
        self._cache = {}

    def __repr__(self):
        return "<osm-sim %s %s lmc %d %s rc %d>" % (
            fabric_id(self.fabric), self.engine, self.lmc, self.mode, self.rc)

    def path(self, name):
        return os.path.join(self.out, name)

    def read_bytes(self, name):
        with open(self.path(name), "rb") as f:
            return f.read()

    def require_ok(self):
        if self.rc != 0:
            pytest.fail("osm-sim failed for %r (exit %d): %s"
                        % (self, self.rc, self.stderr.strip()))
        return self

    def _get(self, key, fn):
        if key not in self._cache:
            self._cache[key] = fn()
        return self._cache[key]

    @property
    def info(self):
        return self._get("info", lambda: json.load(
            open(self.path("osm-sim.json"))))

    @property
    def topo(self):
        return self._get("topo", lambda: fabric.load_topology(
            self.path("opensm-subnet.lst")))

    @property
    def lfts(self):
        return self._get("lfts", lambda: fabric.load_lfts(
            self.path("opensm-lfts.dump")))

    @property
    def ibroute(self):
        return self._get("ibroute", lambda: fabric.load_lfts(
            self.path("ibroute.dump")))

    @property
    def lid_matrix(self):
        return self._get("lid_matrix", lambda: checks.load_lid_matrix(
            self.path("opensm-lid-matrix.dump")))

    @property
    def groups(self):
        """Candidate groups as the routing engine saw them."""
        return self._get("groups",
                         lambda: checks.candidate_groups_from_lid_matrix(
                             self.topo, self.lid_matrix))


class SimCache:
    """Runs osm-sim at most once per (fabric, engine, LMC, mode, repeat)
    in a session; two runs go at a time in the background."""

    def __init__(self, base):
        self.base = str(base)
        self.pool = ThreadPoolExecutor(max_workers=2)
        self.lock = threading.Lock()
        self.futures = {}

    def submit(self, fabric_file, lmc, mode, engine="updn", rep=0):
        key = (fabric_file, engine, lmc, mode, rep)
        with self.lock:
            fut = self.futures.get(key)
            if fut is None:
                fut = self.pool.submit(self._run, *key)
                self.futures[key] = fut
        return fut

    def get(self, fabric_file, lmc, mode, engine="updn", rep=0):
        return self.submit(fabric_file, lmc, mode, engine, rep).result()

    def _run(self, fabric_file, engine, lmc, mode, rep):
        outdir = os.path.join(self.base, "%s-%s-lmc%d-%s%s" % (
            fabric_id(fabric_file), engine.replace(",", "+"), lmc, mode,
            "-rep%d" % rep if rep else ""))
        args = ["--net", fabric_path(fabric_file), "--out", outdir,
                "--lmc", str(lmc), "--engine", engine, "--quiet"]
        if mode == "stock":
            args.append("--stock")
        elif mode == "rule":
            # the offsetting rule alone, without the stock guard
            args += ["--port-offsetting", "on",
                     "--plugin-option", "stock_guard=off",
                     "--plugin-dir", plugin_dir() or "/nonexistent"]
        elif mode == "nopolish":
            # the stock guard without its polish
            args += ["--port-offsetting", "on",
                     "--plugin-option", "polish=off",
                     "--plugin-dir", plugin_dir() or "/nonexistent"]
        else:
            args += ["--port-offsetting", mode,
                     "--plugin-dir", plugin_dir() or "/nonexistent"]
        proc = run_osm_sim(args)
        return SimRun(fabric_file, engine, lmc, mode, outdir, proc)

    def shutdown(self):
        self.pool.shutdown(wait=True)


@pytest.fixture(scope="session")
def sim_cache(tmp_path_factory):
    cache = SimCache(tmp_path_factory.mktemp("osm-sim"))
    yield cache
    cache.shutdown()


@pytest.fixture(scope="session")
def small_net(tmp_path_factory):
    p = tmp_path_factory.mktemp("nets") / "small-2x2.net"
    p.write_text(SMALL_NET)
    return str(p)


@pytest.fixture(scope="session")
def no_root_net(tmp_path_factory):
    p = tmp_path_factory.mktemp("nets") / "no-root.net"
    p.write_text(NO_ROOT_NET)
    return str(p)
