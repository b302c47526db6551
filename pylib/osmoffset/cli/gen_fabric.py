"""gen-fabric: generate ibsim fabric description (.net) files.

The generators are osmoffset.genfabric, degrade is osmoffset.degrade; info
reads net files with osmoffset.fabric, check routes them with
osmoffset.runner.
"""

import argparse
import json
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

from osmoffset import degrade, fabric, runner
from osmoffset.cli import add_version, tool_parser
from osmoffset.genfabric import SHARP_DESC, FabricError, generate

PROG = "gen-fabric"
HELP = """gen-fabric: generate ibsim fabric description (.net) files.

Fabrics:
  2level        two-level fat tree (leaves and spines, optional parallel
                "trunk" links, optional oversubscription)
  kary          k-ary n-tree (Petrini/Vanneschi), a full-bisection fat tree
  ft3           classic three-level fat tree of radix-R switches (R pods
                of R/2 leaves and R/2 middle switches, (R/2)^2 top
                switches): R^3/4 hosts, e.g. 11,664 for R = 36
  cluster       production-style fabric: 1U edge switches (tapered, empty,
                multi-rail) into 1U spines or director chassis whose line
                and fabric ASICs are separate switches, optional pods,
                management HCAs on the core
  dragonfly     groups of leaves under spines, spine k of each group
                cabled to spine k of every other group: a fabric where
                updn's root detection finds no root (removals keep it
                connected)
  seed-example  two switches joined by parallel trunk links (the example of
                the 2008 port_offsetting mail, meant for LMC=2)

Every fabric takes --sharp (one SHARP aggregation node per switch ASIC),
--double-links and --remove-links FRACTION (random, seeded doubled and
missing cables), --remove-switches, --random-guids and --link.

Tools:
  degrade       a net file of your own (gen-fabric's, or the fabric.net
                osm-sim --ibnetdiscover writes from a dump) without a random
                fraction of its inter-switch cables, none that would cut
                the fabric in two: cables failing on a real fabric
  info          describe a .net file (hosts, switches, updn roots, the ibsim
                -N/-S/-P options it needs), optionally as JSON
  check         load .net files in ibsim (private socket), run stock opensm
                once on each and compare the CA ports it found with the file

Every generated file starts with '#' comment lines recording the exact
command line.  The first node of the file is host h0000, so the SM that
ibsim exposes runs on a host.  Every node is preceded by an explicit
'switchguid=' or 'caguid=' line, so the GUIDs are part of the file.
"""


# ----------------------------------------------------------- info, check

def load_net(path):
    """A net file read by osmoffset.fabric (InputError names file and
    line)."""
    topo = fabric.load_topology(path)
    if topo.fmt not in ("ibsim-net", "ibnetdiscover"):
        raise FabricError("%s: not a net file (%s)" % (path, topo.fmt))
    return topo


def net_counts(topo):
    """(hosts, switches, ports) of a net file's records: CA nodes, switch
    nodes, and the ports ibsim allocates (switches nports + 1)."""
    sws = [r for r in topo.records if r["kind"] == "SW"]
    cas = [r for r in topo.records if r["kind"] == "CA"]
    return (len(cas), len(sws), sum(r["nports"] + 1 for r in sws) +
            sum(r["nports"] for r in cas))


def net_info(path):
    topo = load_net(path)
    ncas, nsws, ports = net_counts(topo)
    kind = {r["id"]: r["kind"] for r in topo.records}
    isl = sum(1 for r in topo.records if r["kind"] == "SW"
              for info in r["ports"].values()
              if kind.get(info["remote"]) == "SW") // 2
    return {"file": path, "hosts": ncas, "switches": nsws, "ports": ports,
            "inter_switch_links": isl,
            "first_node": topo.records[0]["id"],
            "updn_roots": ["0x%016x" % g for g, _ in topo.updn_roots],
            "ibsim_opts": runner.ibsim_needs(ncas + nsws, nsws, ports)}


def count_ca_ports(lst_path):
    """CA ports OpenSM found (opensm-subnet.lst)."""
    return len(fabric.load_topology(lst_path).cas())


def check_one(path, lmc, routing, keep_dir, timeout, extra_osm,
              use_roots=False):
    """Load path in a private ibsim, route it once with stock opensm and
    compare the CA ports OpenSM found with the file."""
    topo = load_net(path)
    ncas, nsws, ports = net_counts(topo)
    first = topo.records[0]
    res = {"file": path, "hosts": ncas, "switches": nsws, "lmc": lmc,
           "routing": routing, "ok": False, "problems": []}
    if first["kind"] != "CA":
        res["problems"].append("first node %s is not a host" % first["id"])
    tools = runner.require_tools(("ibsim", "opensm"), hint="")
    if use_roots and not topo.updn_roots:
        raise FabricError("%s: no '# updn-root' lines" % path)
    work = tempfile.mkdtemp(prefix="gen-fabric-check-")
    dump = os.path.join(work, "dump")
    os.mkdir(dump)
    # private cache: stock opensm otherwise reads and writes
    # /var/cache/opensm (guid2lid, neighbors), so LIDs would depend
    # on earlier runs on other fabrics (ERR 0314 / ERR 7518)
    env = runner.sim_env(runner.socket_name("genfab"), dump)
    t0 = time.time()
    sim = None
    try:
        try:
            # ibsim parses even kary-18-3 (55k lines) in ~2 s
            sim = runner.Ibsim(os.path.abspath(path), work, env,
                               (ncas + nsws, nsws, ports),
                               lids=(ncas + nsws) << lmc,
                               timeout=min(timeout, 30 + ncas // 100))
            res["ibsim_cmd"] = " ".join(sim.cmd)
        except runner.RunError as exc:
            res["problems"].append(str(exc))
        res["ibsim_start_s"] = round(time.time() - t0, 3)
        if sim is not None:
            rf = None
            if use_roots:
                rf = os.path.join(work, "roots")
                runner.write_roots(rf, [g for g, _ in topo.updn_roots])
            conf = os.path.join(work, "opensm.conf")
            runner.write_conf(conf, "stock")
            osm_cmd = runner.opensm_command(
                tools["opensm"], dump, os.path.join(dump, "osm.log"),
                routing, lmc, conf, roots_file=rf, extra=extra_osm)
            t1 = time.time()
            try:
                with open(os.path.join(work, "opensm.out"), "w") as f:
                    r = subprocess.run(osm_cmd, env=runner.opensm_env(env),
                                       stdout=f, stderr=subprocess.STDOUT,
                                       stdin=subprocess.DEVNULL, cwd=work,
                                       timeout=timeout)
                res["opensm_s"] = round(time.time() - t1, 3)
                res["opensm_rc"] = r.returncode
            except subprocess.TimeoutExpired:
                res["problems"].append("opensm did not finish in %ds"
                                       % timeout)
            check_dumps(dump, res, ncas, len(topo.updn_roots))
    finally:
        if sim is not None:
            sim.stop()
        res["wall_s"] = round(time.time() - t0, 3)
    simout = runner.read_text(os.path.join(work, "ibsim.out"))
    warn = [l for l in simout.splitlines()
            if re.search(r"ibwarn|ibpanic|warn|error|fail", l, re.I)]
    if warn:
        res["problems"].append("ibsim: %s" % warn[0].strip())
    res["ok"] = not res["problems"]
    if keep_dir:
        res["work_dir"] = work
    else:
        shutil.rmtree(work, ignore_errors=True)
    return res


def check_dumps(dump, res, ncas, nroots):
    """The check's verdicts from OpenSM's dumps and log, into res."""
    lst = os.path.join(dump, "opensm-subnet.lst")
    if os.path.exists(lst):
        res["ca_ports"] = count_ca_ports(lst)
        if res["ca_ports"] != ncas:
            res["problems"].append("opensm found %d CA ports, file has "
                                   "%d hosts" % (res["ca_ports"], ncas))
    else:
        res["problems"].append("opensm wrote no opensm-subnet.lst")
    logp = os.path.join(dump, "osm.log")
    if not os.path.exists(logp):
        return
    text = runner.read_text(logp)
    errs = sorted(set(re.findall(r"ERR [0-9A-F]{4}", text)))
    res["opensm_errors"] = errs
    if errs:
        res["problems"].append("opensm log has %s" % ", ".join(errs))
    fb = re.search(r"(\S+): cannot build (lid matrices|fwd tables)", text)
    if fb:
        res["problems"].append("routing engine %s failed (cannot build %s), "
                               "opensm fell back to minhop" % fb.groups())
    rd = os.path.join(dump, "opensm-updn-roots.dump")
    if os.path.exists(rd):
        with open(rd) as fh:
            res["updn_roots_used"] = sum(1 for l in fh if l.strip())
        res["updn_roots_in_file"] = nroots
    m = re.search(r"(\S+) tables configured on all switches", text)
    res["routing_used"] = m.group(1) if m else None


# -------------------------------------------------------------------- CLI

Parser = tool_parser(PROG)


def add_common(p):
    p.add_argument("-o", "--output", metavar="FILE",
                   help="write the net file here (default: stdout)")
    p.add_argument("--seed", type=int, default=1,
                   help="seed of GUIDs and removals (default 1)")
    p.add_argument("--random-guids", action="store_true",
                   help="draw every node GUID from the seeded RNG, so GUID "
                        "(and LID) order differs from cabling order; "
                        "default: GUIDs increase in file order")
    p.add_argument("--remove-links", type=float, default=0.0,
                   metavar="FRACTION",
                   help="remove this fraction of the inter-switch cables "
                        "(seeded), keeping the fabric routable")
    p.add_argument("--remove-switches", metavar="N|LEVEL:N[,LEVEL:N]",
                   help="remove N random non-leaf switches, or N switches of "
                        "a given level (1 = leaves, 2 = spines/middle, ...)")
    p.add_argument("--keep", choices=("updn", "connected"), default="updn",
                   help="what removals must preserve: 'updn' (default) = "
                        "every non-top switch keeps an uplink and every two "
                        "leaves share an up-ancestor, so up*/down* routes "
                        "every host pair; 'connected' = just connected")
    p.add_argument("--double-links", type=float, default=0.0,
                   metavar="FRACTION",
                   help="add a parallel cable next to this fraction of the "
                        "inter-switch cables (seeded; before --remove-links; "
                        "chassis-internal cables excluded)")
    p.add_argument("--sharp", action="store_true",
                   help="one SHARP aggregation node per switch ASIC: a CA "
                        "\"%s\" on one extra port (37 of a 36-port switch, "
                        "65 of a 64-port one)" % SHARP_DESC)
    p.add_argument("--link", default="4xQDR",
                   choices=[w + s for w in ("1x", "4x", "8x", "12x")
                            for s in ("SDR", "DDR", "QDR", "FDR", "EDR",
                                      "HDR")],
                   help="width and speed of every link (default 4xQDR; "
                        "ibsim 0.10 knows no NDR: use 4xHDR for NDR "
                        "fabrics)")


def degraded(a, argv):
    """The text of gen-fabric degrade: a.net without its drawn cables, the
    command and the cables taken out in '#' lines after its leading
    comments."""
    try:
        with open(a.net, encoding="utf-8", errors="replace") as fh:
            text = fh.read()
    except OSError as e:
        raise FabricError("%s: cannot read: %s" % (a.net, e.strerror))
    new, gone = degrade.degrade_text(text, a.net, a.remove_links, a.seed)
    lines = new.splitlines(keepends=True)
    head = 0
    while head < len(lines) and lines[head].startswith("#"):
        head += 1
    note = ["# degraded: %s\n" % " ".join(
        shlex.quote(x) for x in [PROG] + argv)]
    note += ["# removed link %s\n" % g for g in gone]
    return "".join(lines[:head] + note + lines[head:])


def write_output(path, text):
    """text to the file path, or to stdout when path is None."""
    if not path:
        sys.stdout.write(text)
        return
    try:
        with open(path, "w") as fh:
            fh.write(text)
    except OSError as e:
        raise FabricError("%s: cannot write: %s" % (path, e.strerror))


def main(argv=None):
    if argv is None:
        argv = sys.argv[1:]
    ap = Parser(prog=PROG, description=HELP,
                formatter_class=argparse.RawDescriptionHelpFormatter)
    add_version(ap, PROG)
    sub = ap.add_subparsers(dest="fabric", metavar="COMMAND")
    sub.required = True

    p = sub.add_parser("2level", help="two-level fat tree")
    p.add_argument("--leaves", type=int, required=True)
    p.add_argument("--spines", type=int, required=True)
    p.add_argument("--hosts-per-leaf", type=int, required=True)
    p.add_argument("--trunk", type=int, default=1,
                   help="parallel links per leaf-spine pair (default 1)")
    p.add_argument("--radix", type=int, default=36,
                   help="ports per switch (default 36)")
    add_common(p)

    p = sub.add_parser("dragonfly", help="groups of leaves under spines, "
                       "spine k of each group cabled to spine k of every "
                       "other group")
    p.add_argument("--groups", type=int, required=True)
    p.add_argument("--leaves", type=int, required=True,
                   help="leaves per group")
    p.add_argument("--spines", type=int, required=True,
                   help="spines per group")
    p.add_argument("--hosts-per-leaf", type=int, required=True)
    p.add_argument("--radix", type=int, default=36,
                   help="ports per switch (default 36)")
    add_common(p)

    p = sub.add_parser("kary", help="k-ary n-tree (k^n hosts, n*k^(n-1) "
                       "switches of 2k ports)")
    p.add_argument("--k", type=int, required=True)
    p.add_argument("--levels", type=int, required=True, help="n >= 2")
    p.add_argument("--radix", type=int, default=None,
                   help="ports per switch (default and minimum 2k)")
    add_common(p)

    p = sub.add_parser("ft3", help="three-level fat tree of radix-R "
                       "switches (R^3/4 hosts, 5R^2/4 switches)")
    p.add_argument("--radix", type=int, required=True,
                   help="ports per switch, even (36 gives 11,664 hosts)")
    add_common(p)

    p = sub.add_parser(
        "cluster", help="production-style fabric: 1U edge switches into 1U "
        "spines or director chassis, with taper, empty edges, pods, rails "
        "and management HCAs on the core",
        description="Edge switches (hosts on ports 1..H, --uplinks on the "
        "next ports) cabled into a core of --spines 1U switches or "
        "--directors chassis (each --lines line ASICs fully wired inside to "
        "--fabrics fabric ASICs, every ASIC a switch of its own), optionally "
        "through --pods of --pod-spines 1U pod spines.  Combine with the "
        "common --sharp, --double-links, --remove-links.")
    p.add_argument("--edges", type=int, required=True,
                   help="edge switches with hosts")
    p.add_argument("--hosts-per-edge", type=int, required=True,
                   help="HCA ports per host edge (ports 1..H)")
    p.add_argument("--uplinks", type=int, default=None,
                   help="uplinks per edge (default H: 1:1; fewer = tapered "
                        "edges, each cabled to a rotating subset of its "
                        "targets)")
    p.add_argument("--empty-edges", type=int, default=0,
                   help="more edge switches without hosts (default 0)")
    g = p.add_mutually_exclusive_group()
    g.add_argument("--spines", type=int, default=None,
                   help="core of S 1U spine switches")
    g.add_argument("--directors", type=int, default=None,
                   help="core of D director chassis")
    p.add_argument("--lines", type=int, default=None,
                   help="line ASICs per director (front ports 1..R/2)")
    p.add_argument("--fabrics", type=int, default=None,
                   help="fabric ASICs per director")
    p.add_argument("--pods", type=int, default=0,
                   help="group the edges into P pods with their own 1U pod "
                        "spines, which cable into the core (3 tiers)")
    p.add_argument("--pod-spines", type=int, default=None,
                   help="pod spines per pod (with --pods)")
    p.add_argument("--pod-uplinks", type=int, default=None,
                   help="uplinks per pod spine (default: as many as its "
                        "down cables)")
    p.add_argument("--core-hosts", type=int, default=0,
                   help="management HCAs cabled to the core switches "
                        "(spines or director line ASICs), in turn")
    p.add_argument("--rails", type=int, default=1,
                   help="HCAs per node, one per rail (\"node007 HCA-3\"): "
                        "host edges form scalable units of R edges, edge r "
                        "carrying rail r, all rails in one fabric "
                        "(default 1)")
    p.add_argument("--only-rail", type=int, default=None, metavar="I",
                   help="build only rail I (0-based) as a separate tree: "
                        "its edges and the core")
    p.add_argument("--radix", type=int, default=36,
                   help="ports per switch ASIC (default 36; 40 = HDR, "
                        "64 = NDR)")
    add_common(p)

    p = sub.add_parser("seed-example", help="two switches joined by parallel "
                       "links (the port_offsetting mail's example, LMC=2)")
    p.add_argument("--trunk", type=int, default=4,
                   help="parallel links between the switches (default 4)")
    p.add_argument("--hosts", type=int, default=4,
                   help="hosts on sw-far (default 4)")
    p.add_argument("--near-hosts", type=int, default=1,
                   help="hosts on sw-near, the first one runs the SM "
                        "(default 1)")
    p.add_argument("--radix", type=int, default=8,
                   help="ports per switch (default 8)")
    add_common(p)

    p = sub.add_parser(
        "degrade", help="a net file without random inter-switch cables",
        description="Write NET without round(F x its inter-switch cables), "
        "drawn at random with --seed, none whose loss would cut a part of "
        "the fabric off the rest (that one stays and the next is drawn).  "
        "Every other line stays as written; '#' lines after the file's "
        "leading comments record the command and each cable taken out.")
    p.add_argument("--net", required=True, metavar="NET",
                   help="an ibsim net file: gen-fabric's, or the fabric.net "
                        "that osm-sim --ibnetdiscover writes from a dump")
    p.add_argument("--remove-links", type=float, required=True, metavar="F",
                   help="fraction of the inter-switch cables to take out, "
                        "in [0, 1)")
    p.add_argument("--seed", type=int, default=1,
                   help="random seed of the draw (default 1)")
    p.add_argument("-o", "--output", default=None,
                   help="output file (default: stdout)")

    p = sub.add_parser("info", help="describe net files")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("--json", action="store_true")
    p.add_argument("--roots", action="store_true",
                   help="print only the updn root GUIDs (an opensm "
                        "root_guid_file) of the single FILE")

    p = sub.add_parser("check", help="load in ibsim and run opensm once")
    p.add_argument("files", nargs="+", metavar="FILE")
    p.add_argument("-l", "--lmc", type=int, action="append",
                   help="LMC to route with (repeatable; default 0)")
    p.add_argument("-R", "--routing", default="updn")
    p.add_argument("--timeout", type=int, default=300)
    p.add_argument("--keep-dir", action="store_true",
                   help="keep the opensm dump directory")
    p.add_argument("--json", action="store_true")
    p.add_argument("--use-roots", action="store_true",
                   help="give opensm the file's '# updn-root' GUIDs as "
                        "root_guid_file (-a) instead of letting updn guess")
    p.add_argument("--opensm-arg", action="append", default=[],
                   metavar="ARG", help="extra opensm argument (repeatable)")

    a = ap.parse_args(argv)
    try:
        if a.fabric in ("2level", "kary", "ft3", "cluster", "dragonfly",
                        "seed-example"):
            _, text = generate(a, argv)
            write_output(a.output, text)
            return 0
        if a.fabric == "degrade":
            write_output(a.output, degraded(a, argv))
            return 0
        if a.fabric == "info":
            infos = [net_info(f) for f in a.files]
            if a.roots:
                if len(infos) != 1:
                    raise FabricError("--roots takes exactly one FILE")
                if not infos[0]["updn_roots"]:
                    raise FabricError("%s: no '# updn-root' lines"
                                      % a.files[0])
                for g in infos[0]["updn_roots"]:
                    print(g)
            elif a.json:
                print(json.dumps(infos if len(infos) > 1 else infos[0],
                                 indent=1))
            else:
                for i in infos:
                    print("%s: %d hosts, %d switches, %d inter-switch links, "
                          "%d updn roots, ibsim options: %s"
                          % (i["file"], i["hosts"], i["switches"],
                             i["inter_switch_links"], len(i["updn_roots"]),
                             " ".join(i["ibsim_opts"]) or "(none)"))
            return 0
        # check
        results = []
        for f in a.files:
            for lmc in (a.lmc or [0]):
                results.append(check_one(f, lmc, a.routing, a.keep_dir,
                                         a.timeout, a.opensm_arg,
                                         a.use_roots))
                r = results[-1]
                if not a.json:
                    roots = ""
                    if "updn_roots_used" in r:
                        roots = ", updn roots %d (file lists %d)" % (
                            r["updn_roots_used"], r["updn_roots_in_file"])
                    print("%s lmc=%d %s: %d hosts, %s CA ports%s, opensm %ss, "
                          "wall %ss%s" % (
                              r["file"], lmc, "ok" if r["ok"] else "FAIL",
                              r["hosts"], r.get("ca_ports", "?"), roots,
                              r.get("opensm_s", "?"), r["wall_s"],
                              "" if r["ok"] else
                              ": " + "; ".join(r["problems"])))
                    sys.stdout.flush()
        if a.json:
            print(json.dumps(results, indent=1))
        return 0 if all(r["ok"] for r in results) else 1
    except (FabricError, fabric.InputError, runner.RunError,
            degrade.DegradeError) as e:
        sys.stderr.write("%s: %s\n" % (PROG, e))
        return 2
