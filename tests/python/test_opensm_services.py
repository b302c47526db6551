"""OpenSM keeps serving with the plugin loaded: a running (daemon) opensm
with port offsetting answers SA path-record and multicast-group queries
exactly as stock OpenSM does, and re-routes on a forced heavy sweep
(SIGHUP) to the same LFTs."""

import os
import shutil
import signal
import subprocess
import time
import uuid

import pytest

from conftest import REPO

UMAD2SIM = "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"
NET = os.path.join(REPO, "sim-topologies", "ft2-8x4.net")
ROOTS_NET = NET
PAIRS = [(0, 5), (3, 30), (17, 4), (31, 8)]      # host indexes

pytestmark = pytest.mark.skipif(
    not (shutil.which("ibsim") and shutil.which("opensm")
         and shutil.which("saquery") and os.path.exists(UMAD2SIM)),
    reason="needs ibsim, opensm, saquery and libumad2sim")


def plugin_dir():
    d = os.environ.get("OSMOFFSET_PLUGIN_DIR") or os.path.join(REPO, ".libs")
    if not os.path.exists(os.path.join(d, "libosmoffset.so")):
        pytest.skip("libosmoffset.so not built")
    return d


def wait_for(pred, timeout, what):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        if pred():
            return
        time.sleep(0.1)
    raise AssertionError(f"timed out waiting for {what}")


def updn_roots(net, out):
    roots = [line.split()[2] for line in open(net)
             if line.startswith("# updn-root ")]
    path = os.path.join(out, "roots")
    with open(path, "w") as f:
        f.write("\n".join(roots) + "\n")
    return path


class Daemon:
    """ibsim plus a daemon opensm on a private socket and cache dir."""

    def __init__(self, out, plugin, net=NET, options="port_offsetting=on",
                 args=None):
        self.out = out
        os.makedirs(out, exist_ok=True)
        self.env = dict(os.environ, IBSIM_SOCKNAME="svc" + uuid.uuid4().hex[:10],
                        OSM_CACHE_DIR=out, OSM_TMP_DIR=out)
        conf = os.path.join(out, "opensm.conf")
        with open(conf, "w") as f:
            f.write("force_log_flush TRUE\n")
            if plugin:
                f.write("event_plugin_name osmoffset\n"
                        f"event_plugin_options {options}\n")
        osm_env = dict(self.env, LD_PRELOAD=UMAD2SIM)
        if plugin:
            osm_env["LD_LIBRARY_PATH"] = plugin_dir()
        if args is None:
            args = ["-l", "1", "-a", updn_roots(net, out)]
        self.ibsim = subprocess.Popen(
            ["ibsim", "-s", "-n", net], env=self.env,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.5)
        self.osm = subprocess.Popen(
            ["opensm", "-F", conf, "-D", "0x43", "-f",
             os.path.join(out, "osm.log"), "-R", "updn", *args,
             "--dump_files_dir", out],
            env=osm_env, cwd=out, stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL)
        self.dump = os.path.join(out, "opensm-lfts.dump")
        # generous: the stock guard's polish takes seconds at LMC 2, and
        # on a 2-core machine busy with other runs several times that
        wait_for(lambda: "SUBNET UP" in self.log()
                 or "Entering MASTER state" in self.log(), 120,
                 "opensm to become master")
        wait_for(lambda: os.path.exists(self.dump), 120, "the LFT dump")
        time.sleep(1.0)

    def log(self):
        try:
            with open(os.path.join(self.out, "osm.log"), errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def saquery(self, *args):
        res = subprocess.run(["saquery", *args],
                             env=dict(self.env, LD_PRELOAD=UMAD2SIM),
                             cwd=self.out,
                             stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                             text=True, timeout=30)
        assert res.returncode == 0, res.stderr
        return res.stdout

    def stop(self):
        for p in (self.osm, self.ibsim):
            if p.poll() is None:
                p.terminate()
                try:
                    p.wait(10)
                except subprocess.TimeoutExpired:
                    p.kill()
                    p.wait()


@pytest.fixture(scope="module")
def daemons(tmp_path_factory):
    base = tmp_path_factory.mktemp("services")
    started = []
    try:
        stock = Daemon(str(base / "stock"), plugin=False)
        started.append(stock)
        ours = Daemon(str(base / "ours"), plugin=True)
        started.append(ours)
        yield stock, ours
    finally:
        for d in started:
            d.stop()


def host_lids(daemon):
    """Base LID of each host hNNNN, from the LFT dump's comments."""
    lids = {}
    for line in open(daemon.dump):
        if "Channel Adapter" in line:
            lid = int(line.split()[0], 16)
            name = line.rsplit("'", 2)[1]
            lids.setdefault(name, lid)
    return lids


def path_record(daemon, slid, dlid):
    out = daemon.saquery("-p", "--src-to-dst", f"{slid}:{dlid}")
    fields = {}
    for line in out.splitlines():
        line = line.strip()
        if "..." in line:
            key, val = line.split(".", 1)
            fields[key] = val.lstrip(".")
    return fields


def test_plugin_routes_the_running_sm(daemons):
    _, ours = daemons
    log = ours.log()
    assert "osmoffset 0.1.0 loaded: port_offsetting=coordinated" in log
    assert "port offsetting (coordinated) enabled for routing engine 'updn'" \
        in log
    assert "updn tables configured on all switches" in log
    assert "ERR 9F" not in log


def test_path_records_match_stock(daemons):
    stock, ours = daemons
    s_lids, o_lids = host_lids(stock), host_lids(ours)
    assert len(o_lids) == 32 and s_lids == o_lids
    names = sorted(o_lids)
    for a, b in PAIRS:
        slid, dlid = o_lids[names[a]], o_lids[names[b]]
        got = path_record(ours, slid, dlid)
        want = path_record(stock, slid, dlid)
        assert got["dlid"] == str(dlid) and got["slid"] == str(slid)
        assert got == want, (names[a], names[b])


def test_multicast_group_is_served(daemons):
    stock, ours = daemons
    groups = ours.saquery("-g")
    assert "ff12:401b:ffff::ffff:ffff" in groups
    assert groups == stock.saquery("-g")


def test_heavy_resweep_gives_the_same_lfts(daemons):
    _, ours = daemons
    with open(ours.dump) as f:
        before = f.read()
    mtime = os.stat(ours.dump).st_mtime_ns
    configured = ours.log().count("updn tables configured")
    ours.osm.send_signal(signal.SIGHUP)
    wait_for(lambda: ours.log().count("updn tables configured") > configured
             and os.stat(ours.dump).st_mtime_ns != mtime, 30,
             "a heavy re-sweep")
    time.sleep(0.5)
    assert ours.osm.poll() is None, "opensm died on the re-sweep"
    with open(ours.dump) as f:
        assert f.read() == before
    assert "ERR 9F" not in ours.log()
    # wrapped once, not again at the second heavy sweep
    assert ours.log().count("enabled for routing engine 'updn'") == 1


@pytest.fixture(scope="module")
def lanes_daemon(tmp_path_factory):
    """A director fabric with SHARP nodes (gen-fabric, as in
    test_real_shapes.py), routed by a running opensm with QoS on, LMC 2
    and event_plugin_options reach_vls=4 (at LMC 0 VL0 takes every hole
    of this fabric's tables since the reach pass's retry round fills each
    hole on its own where no turn switch takes them all)."""
    base = tmp_path_factory.mktemp("lanes")
    net = str(base / "dir-sharp.net")
    subprocess.run([os.path.join(REPO, "sim-topologies", "gen-fabric"),
                    "cluster", "--radix", "40", "--directors", "2",
                    "--lines", "4", "--fabrics", "2", "--edges", "10",
                    "--empty-edges", "2", "--hosts-per-edge", "12",
                    "--uplinks", "6", "--core-hosts", "4", "--sharp",
                    "--random-guids", "--link", "4xHDR", "-o", net],
                   check=True, stdout=subprocess.DEVNULL)
    d = None
    try:
        d = Daemon(str(base / "ours"), plugin=True, net=net,
                   options="port_offsetting=on reach_vls=4",
                   args=["-Q", "-l", "2"])
        wait_for(lambda: os.path.exists(os.path.join(d.out,
                                                     "opensm-sl2vl.dump")),
                 30, "the SL2VL dump")
        yield d
    finally:
        if d:
            d.stop()


def ca_lids_by_switch(daemon):
    """{switch GUID: [base LID of each CA cabled to it]}."""
    from osmoffset.fabric import load_lfts, load_topology

    topo = load_topology(os.path.join(daemon.out, "opensm-subnet.lst"))
    lids = load_lfts(daemon.dump).port_lids()
    by_sw = {}
    for n in topo.cas():
        far = topo.links.get((n.guid, n.port or 1))
        if far and n.guid in lids:
            by_sw.setdefault(far[0], []).append(lids[n.guid][0])
    return by_sw


def test_path_records_carry_the_lane_of_the_route(lanes_daemon):
    """The SA answers path records with the SL the reach pass gave the
    route (osmoffset-path-sl.dump: SL 1 for a route only a layered fill
    delivers), SL 0 for every other route, and the switches' SL2VL tables
    send SL 1 on VL1 and every SL above the lanes in use on VL0."""
    d = lanes_daemon
    log = d.log()
    assert "ERR 9F" not in log
    assert "put on virtual lanes 1-1" in log
    with open(os.path.join(d.out, "osmoffset-path-sl.dump")) as f:
        routes = [line.split() for line in f if line.startswith("0x")]
    assert routes
    by_sw = ca_lids_by_switch(d)
    layered = {(int(g, 16), int(lid)): int(sl) for g, lid, sl in routes}
    checked = {0: 0, 1: 0}
    for (guid, dlid), sl in sorted(layered.items())[:6]:
        slid = by_sw[guid][0]
        assert int(path_record(d, slid, dlid)["sl"], 0) == sl
        checked[sl] += 1
        # the route back, or one from a switch that reached the LID
        for other, lids in sorted(by_sw.items()):
            if (other, dlid) not in layered and lids[0] != dlid:
                assert int(path_record(d, lids[0], dlid)["sl"], 0) == 0
                checked[0] += 1
                break
    assert checked[1] == 6 and checked[0] == 6
    with open(os.path.join(d.out, "opensm-sl2vl.dump")) as f:
        rows = [line.split(":")[1].split() for line in f
                if ":" in line and not line.startswith("#")
                and line.split(":")[0].split()[0].isdigit()]
    assert rows
    assert all(r == ["0", "1"] + ["0"] * 14 for r in rows)
