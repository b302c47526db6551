"""Tests of sim-topologies/gen-fabric and the curated fabrics.

Run: /usr/bin/python3 -m pytest tests/python/test_gen_fabric.py
The ibsim/opensm round trips of the curated fabrics need ibsim and opensm
(skipped otherwise); the large generated fabrics are routed only when
GEN_FABRIC_BIG=1 is set.
"""

import collections
import json
import os
import re
import shlex
import shutil
import subprocess

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
TOPO = os.path.join(ROOT, "sim-topologies")
GEN = os.path.join(TOPO, "gen-fabric")
PY = "/usr/bin/python3"

CURATED = {
    # file: (hosts, switches, inter-switch links)
    "seed-4x4trunk.net": (5, 2, 4),
    "ft2-8x4.net": (32, 12, 32),
    "ft2-trunk-4x2x2.net": (16, 6, 16),
    "ft2-oversub-8x2.net": (32, 10, 16),
    "kary-4-3.net": (64, 48, 128),
    "ft2-8x4-degraded.net": (32, 12, 29),
    "kary-4-3-degraded.net": (64, 46, 116),
    # gen-fabric cluster: real-fabric shapes (hosts include management HCAs
    # and SHARP aggregation nodes)
    "dir-2level-taper.net": (124, 24, 232),
    "dir-3level.net": (86, 22, 136),
    "rails4.net": (128, 16, 128),
    "sharp-ft2.net": (162, 18, 86),
    "ft3-doubled.net": (32, 16, 64),
    "ft3-partial-cores.net": (96, 30, 96),
}

HAVE_SIM = bool(shutil.which("ibsim") and shutil.which("opensm") and
                os.path.exists("/usr/lib/x86_64-linux-gnu/umad2sim/"
                               "libumad2sim.so"))
needs_sim = pytest.mark.skipif(not HAVE_SIM, reason="ibsim/opensm missing")
big = pytest.mark.skipif(os.environ.get("GEN_FABRIC_BIG") != "1",
                         reason="set GEN_FABRIC_BIG=1 for large fabrics")


def run(*args, cwd=None, check=True):
    r = subprocess.run([PY, GEN] + list(args), stdout=subprocess.PIPE,
                       stderr=subprocess.PIPE, universal_newlines=True,
                       cwd=cwd)
    if check and r.returncode != 0:
        raise AssertionError("gen-fabric %s failed (%d): %s"
                             % (" ".join(args), r.returncode, r.stderr))
    return r


def parse(text, speed="4xQDR"):
    """Own small reader: returns (order, nodes) with nodes[name] =
    {type, nports, guid, desc, ports: {p: (remote, rport)}}; desc is the
    quoted node description of the header comment (None if absent)."""
    nodes, order, guid, cur = {}, [], {}, None
    for line in text.split("\n"):
        m = re.match(r"^(switchguid|caguid)=(0x[0-9a-f]+)$", line)
        if m:
            guid[m.group(1)] = int(m.group(2), 16)
            continue
        m = re.match(r'^(Switch|Hca) (\d+) "([^"]+)"'
                     r'(?:\t\t# "([^"]+)"(?: enhanced port 0 lid 0 lmc 0)?)?$',
                     line)
        if m:
            t = "sw" if m.group(1) == "Switch" else "ca"
            if m.group(4) is not None:     # the ibnetdiscover trailer
                assert (t == "sw") == line.endswith(" lmc 0")
            cur = {"type": t, "nports": int(m.group(2)), "ports": {},
                   "guid": guid.pop("switchguid" if t == "sw" else "caguid"),
                   "desc": m.group(4)}
            nodes[m.group(3)] = cur
            order.append(m.group(3))
            continue
        m = re.match(r'^\[(\d+)\]\t"([^"]+)"\[(\d+)\]\t\t# lid 0 %s$' % speed,
                     line)
        if m:
            cur["ports"][int(m.group(1))] = (m.group(2), int(m.group(3)))
            continue
        assert line == "" or line.startswith("#"), line
    return order, nodes


def gen(*args):
    return parse(run(*args).stdout)


def isl(nodes):
    return sum(1 for n in nodes.values() if n["type"] == "sw"
               for r, _ in n["ports"].values()
               if nodes[r]["type"] == "sw") // 2


def maxflow(nodes, left, right):
    """Edge-disjoint paths between host sets (unit capacity per cable)."""
    cap = collections.defaultdict(int)
    adj = collections.defaultdict(set)
    for a, n in nodes.items():
        for p, (b, bp) in n["ports"].items():
            cap[(a, b)] += 1            # each direction counted once per cable
            adj[a].add(b)
    for h in left:
        cap[("S", h)] = 1
        adj["S"].add(h)
        adj[h].add("S")
    for h in right:
        cap[(h, "T")] = 1
        adj[h].add("T")
        adj["T"].add(h)
    flow = 0
    while True:
        prev = {"S": None}
        queue = ["S"]
        for u in queue:
            for v in adj[u]:
                if v not in prev and cap[(u, v)] > 0:
                    prev[v] = u
                    queue.append(v)
        if "T" not in prev:
            return flow
        v = "T"
        while prev[v] is not None:
            u = prev[v]
            cap[(u, v)] -= 1
            cap[(v, u)] += 1
            v = u
        flow += 1


def consistent(nodes):
    for a, n in nodes.items():
        for p, (b, bp) in n["ports"].items():
            assert 1 <= p <= n["nports"]
            assert nodes[b]["ports"][bp] == (a, p)


# ---------------------------------------------------------------- CLI

def test_help():
    r = run("--help")
    assert "2level" in r.stdout and "kary" in r.stdout
    for sub in ("2level", "kary", "ft3", "cluster", "dragonfly",
                "seed-example", "info", "check", "degrade"):
        assert run(sub, "--help").returncode == 0


@pytest.mark.parametrize("args,msg", [
    (["2level", "--leaves", "4", "--spines", "4", "--hosts-per-leaf", "6",
      "--radix", "8"], "a leaf needs 10 ports"),
    (["2level", "--leaves", "9", "--spines", "2", "--hosts-per-leaf", "4",
      "--radix", "8"], "a spine needs 9 ports"),
    (["kary", "--k", "4", "--levels", "3", "--radix", "6"], "needs 2k = 8"),
    (["kary", "--k", "4", "--levels", "1"], "--levels must be >= 2"),
    (["2level", "--leaves", "8", "--spines", "4", "--hosts-per-leaf", "4",
      "--remove-links", "0.9"], "could remove only"),
    (["2level", "--leaves", "4", "--spines", "2", "--hosts-per-leaf", "2",
      "--remove-switches", "2"], "could remove only 1 of 2"),
    (["kary", "--k", "2", "--levels", "3", "--remove-switches", "1:1"],
     "level 1 is not a non-leaf"),
    (["kary", "--k", "2", "--levels", "3", "--remove-switches", "x"],
     "expected N or LEVEL:N"),
    (["dragonfly", "--groups", "1", "--leaves", "2", "--spines", "2",
      "--hosts-per-leaf", "2"], "--groups must be >= 2"),
    (["dragonfly", "--groups", "4", "--leaves", "2", "--spines", "4",
      "--hosts-per-leaf", "6", "--radix", "8"], "a leaf needs 10 ports"),
    (["dragonfly", "--groups", "8", "--leaves", "2", "--spines", "2",
      "--hosts-per-leaf", "2", "--radix", "8"], "a spine needs 9 ports"),
])
def test_bad_requests_exit_2(args, msg):
    r = run(*args, check=False)
    assert r.returncode == 2
    assert msg in r.stderr
    assert "Traceback" not in r.stderr
    assert r.stdout == ""


def test_bad_netfile_names_file_and_line(tmp_path):
    p = tmp_path / "bad.net"
    p.write_text('Hca 1 "h0"\n[1]\t"sw"[1]\n\nSwitch 8 "sw"\n[2]\t"h0"[1]\n')
    r = run("info", str(p), check=False)
    assert r.returncode == 2
    # osmoffset.fabric's reader: the second end of the cable contradicts
    # the first one
    assert r.stderr.startswith("gen-fabric: %s:5: link \"sw\"[2] -> "
                               "\"h0\"[1] but line 2 links \"h0\"[1] to "
                               "\"sw\"[1]" % p)
    r = run("info", str(tmp_path / "missing.net"), check=False)
    assert r.returncode == 2 and "cannot read" in r.stderr


# ---------------------------------------------------------- dragonfly

def test_dragonfly_wiring():
    """4 groups of 2 leaves (3 hosts) under 2 spines: leaf ports 1-3
    hosts, 4-5 spines 0-1 of its group; spine ports 1-2 the group's
    leaves, 3-5 spine k of the other groups in group order; every spine
    an updn-root line."""
    text = run("dragonfly", "--groups", "4", "--leaves", "2", "--spines",
               "2", "--hosts-per-leaf", "3").stdout
    order, nodes = parse(text)
    consistent(nodes)
    assert order[0] == "h0000"
    assert sum(1 for n in nodes.values() if n["type"] == "ca") == 24
    assert sum(1 for n in nodes.values() if n["type"] == "sw") == 16
    assert isl(nodes) == 4 * 2 * 2 + 6 * 2
    leaf = nodes["g01-leaf-1"]["ports"]
    assert leaf == {1: ("h0009", 1), 2: ("h0010", 1), 3: ("h0011", 1),
                    4: ("g01-spine-0", 2), 5: ("g01-spine-1", 2)}
    spine = nodes["g02-spine-1"]["ports"]
    assert spine == {1: ("g02-leaf-0", 5), 2: ("g02-leaf-1", 5),
                     3: ("g00-spine-1", 4), 4: ("g01-spine-1", 4),
                     5: ("g03-spine-1", 5)}
    roots = re.findall(r"^# updn-root 0x[0-9a-f]+ (\S+)$", text, re.M)
    assert sorted(roots) == sorted("g%02d-spine-%d" % (g, k)
                                   for g in range(4) for k in range(2))


def test_dragonfly_removals_keep_it_connected():
    """Its groups share no up-ancestor, so removals only keep it
    connected: a fifth of its cables go."""
    text = run("dragonfly", "--groups", "6", "--leaves", "4", "--spines",
               "4", "--hosts-per-leaf", "2", "--remove-links", "0.2",
               "--seed", "2").stdout
    _order, nodes = parse(text)
    consistent(nodes)
    assert isl(nodes) == 96 + 60 - round(0.2 * (96 + 60))
    assert len(re.findall(r"^# removed link ", text, re.M)) == \
        round(0.2 * (96 + 60))


# ------------------------------------------------------------ 2-level

def test_2level_wiring():
    order, nodes = gen("2level", "--leaves", "8", "--spines", "4",
                       "--hosts-per-leaf", "4")
    consistent(nodes)
    assert order[0] == "h0000"
    hosts = [n for n in order if nodes[n]["type"] == "ca"]
    assert hosts == ["h%04d" % i for i in range(32)]
    assert sorted(n for n in order if n.startswith("leaf-")) == \
        ["leaf-%03d" % i for i in range(8)]
    assert sorted(n for n in order if n.startswith("spine-")) == \
        ["spine-%02d" % i for i in range(4)]
    # hosts first on leaf ports 1..4, then one uplink per spine
    assert nodes["leaf-002"]["ports"] == {
        1: ("h0008", 1), 2: ("h0009", 1), 3: ("h0010", 1), 4: ("h0011", 1),
        5: ("spine-00", 3), 6: ("spine-01", 3), 7: ("spine-02", 3),
        8: ("spine-03", 3)}
    assert nodes["spine-01"]["ports"][8] == ("leaf-007", 6)
    assert nodes["leaf-000"]["nports"] == 36
    assert isl(nodes) == 32
    left = ["h%04d" % i for i in range(16)]
    right = ["h%04d" % i for i in range(16, 32)]
    assert maxflow(nodes, left, right) == 16        # full bisection


def test_2level_trunk_groups_parallel_links():
    order, nodes = gen("2level", "--leaves", "4", "--spines", "2",
                       "--hosts-per-leaf", "4", "--trunk", "2",
                       "--radix", "8")
    consistent(nodes)
    assert nodes["leaf-001"]["ports"] == {
        1: ("h0004", 1), 2: ("h0005", 1), 3: ("h0006", 1), 4: ("h0007", 1),
        5: ("spine-00", 3), 6: ("spine-00", 4),
        7: ("spine-01", 3), 8: ("spine-01", 4)}
    assert nodes["spine-01"]["nports"] == 8
    assert maxflow(nodes, ["h%04d" % i for i in range(8)],
                   ["h%04d" % i for i in range(8, 16)]) == 8


def test_2level_oversubscribed_bisection():
    order, nodes = gen("2level", "--leaves", "8", "--spines", "2",
                       "--hosts-per-leaf", "4")
    # 4 leaves x 2 uplinks carry the traffic of 16 hosts: 2:1
    assert maxflow(nodes, ["h%04d" % i for i in range(16)],
                   ["h%04d" % i for i in range(16, 32)]) == 8


def test_radix_exactly_fits():
    order, nodes = gen("2level", "--leaves", "36", "--spines", "18",
                       "--hosts-per-leaf", "18")
    assert len(nodes) == 648 + 54
    assert max(max(n["ports"]) for n in nodes.values()) == 36
    assert all(len(nodes["spine-%02d" % s]["ports"]) == 36 for s in range(18))


# ------------------------------------------------------------- k-ary

def test_kary_counts_and_ports():
    order, nodes = gen("kary", "--k", "4", "--levels", "3")
    consistent(nodes)
    sws = [n for n in order if nodes[n]["type"] == "sw"]
    assert len(sws) == 48 and len(nodes) - 48 == 64
    assert order[0] == "h0000"
    for s in sws:
        assert nodes[s]["nports"] == 8
        used = sorted(nodes[s]["ports"])
        assert used == ([1, 2, 3, 4] if s.startswith("sw-l3-")
                        else list(range(1, 9)))
    # standard wiring (Petrini/Vanneschi): digits of the switch index
    assert nodes["sw-l1-0000"]["ports"][5] == ("sw-l2-0000", 1)
    assert nodes["sw-l1-0001"]["ports"][5] == ("sw-l2-0000", 2)
    assert nodes["sw-l1-0001"]["ports"][7] == ("sw-l2-0002", 2)
    assert nodes["sw-l2-0005"]["ports"][8] == ("sw-l3-0013", 2)
    assert nodes["sw-l1-0003"]["ports"][2] == ("h0013", 1)


def up_closure(nodes, name, level):
    seen, todo = {name}, [name]
    while todo:
        n = todo.pop()
        for r, _ in nodes[n]["ports"].values():
            if nodes[r]["type"] == "sw" and level(r) > level(n) \
                    and r not in seen:
                seen.add(r)
                todo.append(r)
    return seen


@pytest.mark.parametrize("k,n", [(2, 3), (4, 3), (3, 4)])
def test_kary_is_full_bisection_fat_tree(k, n):
    order, nodes = gen("kary", "--k", str(k), "--levels", str(n))
    level = lambda s: int(s.split("-")[1][1:])
    hosts = [h for h in order if nodes[h]["type"] == "ca"]
    assert len(hosts) == k ** n
    tops = {s for s in nodes if s.startswith("sw-l%d-" % n)}
    assert len(tops) == k ** (n - 1)
    # every leaf reaches every top switch by up-moves only
    for leaf in (s for s in nodes if s.startswith("sw-l1-")):
        assert up_closure(nodes, leaf, level) & tops == tops
    h = sorted(hosts)
    assert maxflow(nodes, h[:len(h) // 2], h[len(h) // 2:]) == len(h) // 2


# --------------------------------------------------------------- GUIDs

def test_random_guids_unique_spaced_and_seeded():
    args = ["kary", "--k", "4", "--levels", "3", "--random-guids"]
    order, nodes = gen(*args)
    guids = sorted((n["guid"], n["nports"], n["type"]) for n in nodes.values())
    assert len({g for g, _, _ in guids}) == len(guids) == 112
    # CA port GUIDs are guid+1..guid+nports: must not reach the next node
    for (g, np_, t), (g2, _, _) in zip(guids, guids[1:]):
        assert g2 > g + (np_ if t == "ca" else 0)
        assert g % 16 == 0
    hosts = [h for h in order if nodes[h]["type"] == "ca"]
    by_guid = sorted(hosts, key=lambda h: nodes[h]["guid"])
    assert by_guid != hosts
    assert run(*args).stdout == run(*args).stdout
    assert run(*args, "--seed", "2").stdout != run(*args).stdout


def test_sequential_guids_follow_file_order():
    order, nodes = gen("2level", "--leaves", "2", "--spines", "1",
                       "--hosts-per-leaf", "2")
    assert [nodes[n]["guid"] for n in order] == [
        0x0002c90000200000, 0x0002c90000200010, 0x0002c90000200020,
        0x0002c90000200030, 0x0002c90000100000, 0x0002c90000100010,
        0x0002c90000100020]


# ---------------------------------------------------------- degradation

def test_remove_links_keeps_updn_routability():
    base = ["2level", "--leaves", "8", "--spines", "4", "--hosts-per-leaf",
            "4", "--random-guids", "--seed", "3"]
    order0, full = gen(*base)
    out = run(*base, "--remove-links", "0.25").stdout
    order, nodes = parse(out)
    consistent(nodes)
    assert isl(nodes) == 24
    assert len(re.findall(r"^# removed link ", out, re.M)) == 8
    # same GUIDs as the intact fabric
    assert {n: full[n]["guid"] for n in full} == \
        {n: nodes[n]["guid"] for n in nodes}
    spines_of = {l: {r for r, _ in nodes[l]["ports"].values()
                     if r.startswith("spine")}
                 for l in nodes if l.startswith("leaf")}
    for a in spines_of:
        for b in spines_of:
            assert spines_of[a] & spines_of[b], (a, b)
    # 'connected' only needs connectivity: more removal possible
    r = run(*base, "--remove-links", "0.6", "--keep", "connected")
    assert isl(parse(r.stdout)[1]) == 13


def test_remove_switches_by_level():
    out = run("kary", "--k", "4", "--levels", "3", "--remove-switches",
              "2:1,3:1", "--seed", "1").stdout
    order, nodes = parse(out)
    consistent(nodes)
    assert len(re.findall(r"^# removed switch sw-l2-\d{4}$", out, re.M)) == 1
    assert len(re.findall(r"^# removed switch sw-l3-\d{4}$", out, re.M)) == 1
    assert sum(1 for n in nodes if n.startswith("sw-l2-")) == 15
    assert sum(1 for n in nodes if n.startswith("sw-l3-")) == 15
    assert len(re.findall(r"^# updn-root ", out, re.M)) == 15


# ------------------------------------------------------------- curated

@pytest.mark.parametrize("name", sorted(CURATED))
def test_curated_file_is_what_its_command_generates(name, tmp_path):
    path = os.path.join(TOPO, name)
    with open(path) as fh:
        text = fh.read()
    m = re.search(r"^# command: gen-fabric (.*)$", text, re.M)
    args = shlex.split(m.group(1))
    assert args[args.index("-o") + 1] == name
    run(*args, cwd=str(tmp_path))
    assert (tmp_path / name).read_text() == text
    speed = args[args.index("--link") + 1] if "--link" in args else "4xQDR"
    order, nodes = parse(text, speed)
    hosts, sws, links = CURATED[name]
    assert order[0] == "h0000"
    assert sum(1 for n in nodes.values() if n["type"] == "ca") == hosts
    assert sum(1 for n in nodes.values() if n["type"] == "sw") == sws
    assert isl(nodes) == links
    consistent(nodes)
    info = json.loads(run("info", "--json", path).stdout)
    assert (info["hosts"], info["switches"], info["inter_switch_links"]) == \
        (hosts, sws, links)
    assert info["ibsim_opts"] == []


def test_info_roots_and_ibsim_options(tmp_path):
    r = run("info", "--roots", os.path.join(TOPO, "ft2-8x4.net"))
    roots = r.stdout.split()
    assert len(roots) == 4 and all(re.fullmatch(r"0x[0-9a-f]{16}", g)
                                   for g in roots)
    out = tmp_path / "k18.net"
    run("kary", "--k", "18", "--levels", "3", "-o", str(out))
    info = json.loads(run("info", "--json", str(out)).stdout)
    assert (info["hosts"], info["switches"]) == (5832, 972)
    assert info["ibsim_opts"] == ["-N", "6804", "-S", "972", "-P", "41796"]


def check(*args):
    r = run("check", "--json", *args, check=False)
    return r.returncode, json.loads(r.stdout)


@needs_sim
def test_curated_route_with_updn_roots_at_lmc_0_and_2():
    files = [os.path.join(TOPO, n) for n in sorted(CURATED)]
    rc, res = check("--use-roots", "-l", "0", "-l", "2", *files)
    assert rc == 0, [r["problems"] for r in res]
    assert len(res) == 2 * len(files)
    for r in res:
        name = os.path.basename(r["file"])
        assert r["ca_ports"] == CURATED[name][0]
        assert r["routing_used"] == "updn"
        assert r["opensm_errors"] == []


@needs_sim
def test_seed_example_needs_roots_for_updn():
    rc, res = check("-l", "2", os.path.join(TOPO, "seed-4x4trunk.net"))
    assert rc == 1
    assert res[0]["ca_ports"] == 5
    assert res[0]["routing_used"] == "minhop"
    assert "routing engine updn failed" in res[0]["problems"][0]


@needs_sim
def test_intact_curated_route_with_plain_updn():
    names = ["ft2-8x4.net", "ft2-trunk-4x2x2.net", "ft2-oversub-8x2.net",
             "kary-4-3.net"]
    rc, res = check("-l", "0", *[os.path.join(TOPO, n) for n in names])
    assert rc == 0, [r["problems"] for r in res]
    assert [r["updn_roots_used"] for r in res] == [4, 2, 2, 16]


@needs_sim
@big
def test_big_648_host_fabric(tmp_path):
    out = tmp_path / "ft2-648.net"
    run("2level", "--leaves", "36", "--spines", "18", "--hosts-per-leaf",
        "18", "--random-guids", "-o", str(out))
    rc, res = check("--use-roots", "-l", "0", str(out))
    assert rc == 0, res[0]["problems"]
    assert res[0]["ca_ports"] == 648


# ------------------------------------------------------------ ft3

@pytest.mark.parametrize("R", [2, 4, 6])
def test_ft3_counts_and_wiring(R):
    h = R // 2
    order, nodes = gen("ft3", "--radix", str(R))
    consistent(nodes)
    assert order[0] == "h0000"
    hosts = [n for n in order if nodes[n]["type"] == "ca"]
    leaves = [n for n in order if n.startswith("leaf-")]
    mids = [n for n in order if n.startswith("mid-")]
    tops = [n for n in order if n.startswith("top-")]
    assert (len(hosts), len(leaves), len(mids), len(tops)) == \
        (R * h * h, R * h, R * h, h * h)
    assert len(nodes) == len(hosts) + len(leaves) + len(mids) + len(tops)
    assert isl(nodes) == 2 * R * h * h
    for s in leaves + mids + tops:
        assert nodes[s]["nports"] == R
        assert sorted(nodes[s]["ports"]) == list(range(1, R + 1))
    for p in range(R):
        for l in range(h):
            leaf = nodes["leaf-%02d-%02d" % (p, l)]
            for x in range(h):     # hosts on ports 1..R/2, in order
                assert leaf["ports"][1 + x] == (
                    "h%04d" % ((p * h + l) * h + x), 1)
            for j in range(h):     # port R/2+1+j -> mid j of the pod
                assert leaf["ports"][h + 1 + j] == (
                    "mid-%02d-%02d" % (p, j), 1 + l)
        for j in range(h):
            mid = nodes["mid-%02d-%02d" % (p, j)]
            for t in range(h):     # mid j -> the R/2 tops of group j
                assert mid["ports"][h + 1 + t] == (
                    "top-%02d-%02d" % (j, t), 1 + p)
    for t in tops:                 # one down link per pod
        assert sorted(r.split("-")[1] for r, _ in
                      nodes[t]["ports"].values()) == \
            ["%02d" % p for p in range(R)]


def test_ft3_full_bisection_and_roots():
    r = run("ft3", "--radix", "4")
    order, nodes = parse(r.stdout)
    roots = re.findall(r"^# updn-root (0x[0-9a-f]{16}) (\S+)$", r.stdout,
                       re.M)
    assert sorted(n for _, n in roots) == ["top-00-00", "top-00-01",
                                          "top-01-00", "top-01-01"]
    for g, n in roots:
        assert nodes[n]["guid"] == int(g, 16)
    assert "# command: gen-fabric ft3 --radix 4" in r.stdout
    assert "# hosts 16, switches 20, inter-switch links 32" in r.stdout
    level = lambda s: {"leaf": 1, "mid": 2, "top": 3}[s.split("-")[0]]
    tops = {s for s in nodes if s.startswith("top-")}
    for leaf in (s for s in nodes if s.startswith("leaf-")):
        assert up_closure(nodes, leaf, level) & tops == tops
    hosts = sorted(h for h in order if nodes[h]["type"] == "ca")
    assert maxflow(nodes, hosts[:8], hosts[8:]) == 8


def test_ft3_common_options():
    args = ["ft3", "--radix", "6", "--random-guids", "--seed", "3",
            "--remove-links", "0.05", "--remove-switches", "2:1",
            "--link", "4xEDR"]
    r = run(*args)
    assert r.stdout == run(*args).stdout
    assert "4xEDR" in r.stdout and "4xQDR" not in r.stdout
    text = r.stdout.replace("4xEDR", "4xQDR")
    order, nodes = parse(text)
    consistent(nodes)
    assert len(re.findall(r"^# removed switch mid-", text, re.M)) == 1
    # 108 cables, minus the 3 + 3 of the removed middle switch, minus
    # round(0.05 * 102) = 5 removed cables
    assert len(re.findall(r"^# removed link ", text, re.M)) == 5
    assert isl(nodes) == 108 - 6 - 5
    guids = [n["guid"] for n in nodes.values()]
    assert len(set(guids)) == len(guids) == 54 + 44
    seq = parse(run("ft3", "--radix", "6").stdout)[1]
    assert [nodes[n]["guid"] for n in order] != \
        [seq[n]["guid"] for n in order]


@pytest.mark.parametrize("R", ["5", "0", "256"])
def test_ft3_bad_radix_exits_2(R):
    r = run("ft3", "--radix", R, check=False)
    assert r.returncode == 2
    assert "--radix" in r.stderr and "Traceback" not in r.stderr


def test_ft3_36_sizes_for_ibsim(tmp_path):
    out = tmp_path / "ft3-36.net"
    run("ft3", "--radix", "36", "-o", str(out))
    info = json.loads(run("info", "--json", str(out)).stdout)
    assert (info["hosts"], info["switches"], info["inter_switch_links"]) \
        == (11664, 1620, 23328)
    assert len(info["updn_roots"]) == 324
    assert info["first_node"] == "h00000"
    assert info["ibsim_opts"] == ["-N", "13284", "-S", "1620",
                                  "-P", "71604"]


@needs_sim
def test_ft3_small_routes_with_stock_opensm(tmp_path):
    files = []
    for R in ("4", "6"):
        out = tmp_path / ("ft3-%s.net" % R)
        run("ft3", "--radix", R, "--random-guids", "-o", str(out))
        files.append(str(out))
    rc, res = check("--use-roots", "-l", "0", "-l", "2", *files)
    assert rc == 0, [r["problems"] for r in res]
    assert [r["ca_ports"] for r in res] == [16, 16, 54, 54]
    assert [r["updn_roots_used"] for r in res] == [4, 4, 9, 9]
    assert all(r["routing_used"] == "updn" for r in res)


# ------------------------------------------------------- cluster shapes

SHARP = "Mellanox Technologies Aggregation Node"


def curated(name):
    with open(os.path.join(TOPO, name)) as fh:
        text = fh.read()
    args = shlex.split(re.search(r"^# command: gen-fabric (.*)$", text,
                                 re.M).group(1))
    speed = args[args.index("--link") + 1] if "--link" in args else "4xQDR"
    return text, parse(text, speed)


def neighbours(nodes, name, kind=None):
    """{port: remote name} of a node, optionally only remotes of a type."""
    return {p: r for p, (r, _) in nodes[name]["ports"].items()
            if kind is None or nodes[r]["type"] == kind}


def test_cluster_directors_taper_empty_edges_core_hosts():
    text, (order, nodes) = curated("dir-2level-taper.net")
    consistent(nodes)
    edges = sorted(n for n in nodes if n.startswith("edge-"))
    lines = sorted(n for n in nodes if re.fullmatch(r"dir\d-L\d\d", n))
    fabs = sorted(n for n in nodes if re.fullmatch(r"dir\d-S\d\d", n))
    assert (len(edges), len(lines), len(fabs)) == (12, 8, 4)
    assert all(nodes[s]["nports"] == 40 for s in edges + lines + fabs)
    # real director naming: every ASIC its own switch
    assert nodes["dir1-L03"]["desc"] == "MF0;dir1:CS8500/L03/U1"
    assert nodes["dir2-S02"]["desc"] == "MF0;dir2:CS8500/S02/U1"
    assert nodes["edge-004"]["desc"] == "MF0;edge004:MQM8700/U1"
    # line ASIC: ports 21..40 to the fabric ASICs of its chassis, 10 each;
    # fabric ASICs: all 40 ports to the 4 lines of their chassis
    for l in lines:
        d = l[:4]
        up = neighbours(nodes, l)
        assert sorted(p for p in up if p > 20) == list(range(21, 41))
        assert collections.Counter(up[p] for p in range(21, 41)) == \
            {d + "-S01": 10, d + "-S02": 10}
        assert all(up[p].startswith("edge-") or
                   nodes[up[p]]["desc"].startswith("mgmt")
                   for p in up if p <= 20)
    for s in fabs:
        assert collections.Counter(neighbours(nodes, s).values()) == \
            {"%s-L%02d" % (s[:4], i): 10 for i in range(1, 5)}
    # 10 host edges of 12 HCAs on ports 1..12, then 2 empty edges; 6
    # uplinks on ports 13..18 (2:1 taper) to 6 distinct line ASICs of 8,
    # both chassis
    subsets = set()
    for i, e in enumerate(edges):
        cas = neighbours(nodes, e, "ca")
        assert sorted(cas) == (list(range(1, 13)) if i < 10 else [])
        up = neighbours(nodes, e, "sw")
        assert sorted(up) == list(range(13, 19))
        assert len(set(up.values())) == 6
        assert {r[:4] for r in up.values()} == {"dir1", "dir2"}
        subsets.add(frozenset(up.values()))
    assert len(subsets) > 1
    hosts = [n for n in order if nodes[n]["type"] == "ca"]
    assert nodes["h0000"]["desc"] == "node000 HCA-1" and order[0] == "h0000"
    assert [nodes[h]["desc"] for h in hosts[:13]] == \
        ["node%03d HCA-1" % i for i in range(12)] + ["node012 HCA-1"]
    assert neighbours(nodes, "h0013") == {1: "edge-001"}
    # 4 management HCAs, each on a line ASIC, in turn over both chassis
    mgmt = {nodes[h]["desc"]: neighbours(nodes, h)[1] for h in hosts
            if nodes[h]["desc"].startswith("mgmt")}
    assert mgmt == {"mgmt01 HCA-1": "dir1-L01", "mgmt02 HCA-1": "dir2-L01",
                    "mgmt03 HCA-1": "dir1-L02", "mgmt04 HCA-1": "dir2-L02"}
    roots = re.findall(r"^# updn-root 0x[0-9a-f]{16} (\S+)$", text, re.M)
    assert roots == fabs
    assert "(taper 12:6)" in text


def test_cluster_pods_three_tiers_with_sharp():
    text, (order, nodes) = curated("dir-3level.net")
    consistent(nodes)
    edges = sorted(n for n in nodes if n.startswith("edge-"))
    pspines = sorted(n for n in nodes if n.startswith("pspine-"))
    lines = sorted(n for n in nodes if n.startswith("dir1-L"))
    assert (len(edges), len(pspines), len(lines)) == (8, 8, 4)
    for i, e in enumerate(edges):
        pod = i // 4
        up = neighbours(nodes, e, "sw")
        # 8 hosts, 4 uplinks: one to each pod spine of its own pod
        assert sorted(neighbours(nodes, e, "ca")) == list(range(1, 9)) + [37]
        assert sorted(up.values()) == ["pspine-%d-%02d" % (pod, j)
                                       for j in range(4)]
    for ps in pspines:
        nb = neighbours(nodes, ps, "sw")
        down = sorted(r for p, r in nb.items() if p <= 18)
        up = sorted(r for p, r in nb.items() if p > 18)
        assert all(r.startswith("edge-") for r in down) and len(down) == 4
        assert up == lines         # 1:1, one cable to each line ASIC
    assert nodes["pspine-1-02"]["desc"] == "MF0;pod2-spine03:MSB7800/U1"


def test_cluster_rails_in_one_fabric():
    text, (order, nodes) = curated("rails4.net")
    consistent(nodes)
    by_node = collections.defaultdict(dict)
    for n in order:
        if nodes[n]["type"] == "ca":
            m = re.fullmatch(r"node(\d{3}) HCA-(\d)", nodes[n]["desc"])
            by_node[int(m.group(1))][int(m.group(2))] = \
                neighbours(nodes, n)[1]
    assert sorted(by_node) == list(range(32))
    for node, hcas in by_node.items():
        assert sorted(hcas) == [1, 2, 3, 4]
        # HCA-r on edge r-1 of the node's scalable unit of 4 edges
        assert hcas == {r: "edge-%03d" % (node // 16 * 4 + r - 1)
                        for r in range(1, 5)}
    for e in (n for n in nodes if n.startswith("edge-")):
        rails = {nodes[h]["desc"][-1] for h in
                 neighbours(nodes, e, "ca").values()}
        assert rails == {str(int(e[-3:]) % 4 + 1)}
        # 16 uplinks (default 1:1): two to each of the 8 spines
        assert collections.Counter(neighbours(nodes, e, "sw").values()) == \
            {"spine-%02d" % s: 2 for s in range(8)}


def test_cluster_only_rail_is_a_separate_tree():
    order, nodes = gen("cluster", "--spines", "2", "--edges", "8",
                       "--hosts-per-edge", "4", "--rails", "4",
                       "--only-rail", "2")
    consistent(nodes)
    hosts = [n for n in order if nodes[n]["type"] == "ca"]
    assert [nodes[h]["desc"] for h in hosts] == \
        ["node%03d HCA-3" % i for i in range(8)]
    assert sorted(n for n in nodes if nodes[n]["type"] == "sw") == \
        ["edge-000", "edge-001", "spine-00", "spine-01"]


def test_sharp_node_on_every_switch_and_cable_changes():
    text, (order, nodes) = curated("sharp-ft2.net")
    consistent(nodes)
    sws = [n for n in nodes if nodes[n]["type"] == "sw"]
    assert len(sws) == 18
    for s in sws:
        assert nodes[s]["nports"] == 65
        an = neighbours(nodes, s, "ca")[65]
        assert an == "an-" + s and nodes[an]["desc"] == SHARP
        assert [r for p, r in neighbours(nodes, s, "ca").items()
                if nodes[r]["desc"] == SHARP] == [an]
    assert sum(1 for n in nodes.values() if n["desc"] == SHARP) == 18
    # cables = one per edge-spine pair (6 uplinks over 6 spines), plus
    # the logged doubled ones, minus the logged removed ones
    want = collections.Counter({("edge-%03d" % e, "spine-%02d" % s): 1
                                for e in range(12) for s in range(6)})
    doubled = re.findall(r"^# doubled link (\S+)\[\d+\] - (\S+)\[\d+\]: "
                         r"added \S+\[(\d+)\] - \S+\[(\d+)\]$", text, re.M)
    removed = re.findall(r"^# removed link (\S+)\[\d+\] - (\S+)\[\d+\]$",
                         text, re.M)
    assert (len(doubled), len(removed)) == (18, 4)   # 0.25 x 72, 0.05 x 90
    for a, b, _, _ in doubled:
        want[(a, b)] += 1
    for a, b in removed:
        want[(a, b)] -= 1
    have = collections.Counter(
        (e, r) for e in nodes if e.startswith("edge-")
        for r in neighbours(nodes, e, "sw").values())
    assert have == +want
    assert sum(have.values()) == 72 + 18 - 4


def test_sharp_keeps_the_other_guids():
    args = ["cluster", "--spines", "2", "--edges", "4", "--hosts-per-edge",
            "4", "--uplinks", "2", "--random-guids", "--seed", "5"]
    _, plain = gen(*args)
    _, sharp = gen(*args, "--sharp")
    assert {n: plain[n]["guid"] for n in plain} == \
        {n: sharp[n]["guid"] for n in plain}
    assert len({n["guid"] for n in sharp.values()}) == len(sharp) == \
        len(plain) + 6


@pytest.mark.parametrize("radix,speed", [("40", "4xHDR"), ("64", "4xHDR")])
def test_cluster_hdr_ndr_radix(radix, speed):
    r = run("cluster", "--radix", radix, "--spines", "2", "--edges", "2",
            "--hosts-per-edge", str(int(radix) // 2), "--link", speed,
            "--sharp")
    order, nodes = parse(r.stdout, speed)
    consistent(nodes)
    model = {"40": "MQM8700", "64": "MQM9700"}[radix]
    for s in ("edge-000", "spine-01"):
        assert nodes[s]["nports"] == int(radix) + 1
        assert model in nodes[s]["desc"]
    # an edge: radix/2 hosts, radix/2 uplinks, SHARP on port radix + 1
    assert sorted(nodes["edge-000"]["ports"]) == list(range(1, int(radix) + 2))


def test_double_links_on_2level():
    out = run("2level", "--leaves", "4", "--spines", "2", "--hosts-per-leaf",
              "4", "--double-links", "0.5", "--seed", "2").stdout
    order, nodes = parse(out)
    consistent(nodes)
    assert isl(nodes) == 12
    assert len(re.findall(r"^# doubled link ", out, re.M)) == 4
    pairs = collections.Counter((l, r) for l in nodes if l.startswith("leaf")
                                for r in neighbours(nodes, l, "sw").values())
    assert sorted(pairs.values()) == [1] * 4 + [2] * 4


@pytest.mark.parametrize("args,msg", [
    (["--edges", "2", "--hosts-per-edge", "4"], "give exactly one core"),
    (["--edges", "2", "--hosts-per-edge", "30", "--spines", "2",
      "--uplinks", "8"], "an edge needs 38 ports"),
    (["--edges", "4", "--hosts-per-edge", "4", "--spines", "8",
      "--uplinks", "2"], "not up/down routable"),
    (["--edges", "6", "--hosts-per-edge", "4", "--spines", "2",
      "--rails", "4"], "multiple of --rails 4"),
    (["--edges", "2", "--hosts-per-edge", "4", "--directors", "1",
      "--lines", "8", "--fabrics", "1"], "raise --fabrics"),
    (["--edges", "2", "--hosts-per-edge", "4", "--directors", "1",
      "--lines", "2"], "--fabrics must be >= 1"),
    (["--edges", "2", "--hosts-per-edge", "18", "--spines", "1",
      "--double-links", "1"], "could double only 0 of the 36"),
    (["--edges", "2", "--hosts-per-edge", "2", "--spines", "2", "--rails",
      "2", "--only-rail", "2"], "--only-rail must be in 0..1"),
    (["--edges", "36", "--hosts-per-edge", "2", "--spines", "1",
      "--uplinks", "2"], "no free port left"),
    (["--edges", "9", "--hosts-per-edge", "4", "--uplinks", "2", "--pods",
      "3", "--pod-spines", "2", "--spines", "8"],
     "spine-06, spine-07 would have no cable to another switch: the pod "
     "spines' uplinks reach only 6 of the 8 core switches"),
])
def test_cluster_bad_requests_exit_2(args, msg):
    r = run("cluster", *args, check=False)
    assert r.returncode == 2, r.stderr
    assert msg in r.stderr
    assert "Traceback" not in r.stderr
    assert r.stdout == ""
