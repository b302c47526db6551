"""demo: stock updn against updn with port offsetting, on ibsim.

Routes each fabric twice with the OpenSM found on PATH at LMC 2 (by
default): once stock, once with the osmoffset plugin and
port_offsetting=on, then prints per switch the base-LID spread (max - min
base LIDs over ports that are equal-cost candidates for the same
destinations) and, per fabric, the simulated shift-alltoall efficiency
for an MPI that uses base LIDs only and for one that stripes over all
LIDs.

It runs from a source tree (scripts/demo: the curated fabrics of
sim-topologies/, the plugin built in .libs) and from an installation
(osmoffset-demo: the fabrics installed under <pkgdatadir>/sim-topologies,
the plugin opensm loads by its plain name through the dynamic loader).
The plugin is looked up as osm-sim does: --plugin-dir, else
$OSMOFFSET_PLUGIN_DIR, else <repo>/.libs of a source tree, else the
installed one.  The first lines say which opensm and which plugin were
used.
"""

import json
import os
import subprocess
import sys
import tempfile

from osmoffset import paths, runner
from osmoffset.cli import add_version, doc_parser

# scripts/demo in a source tree; installed as osmoffset-demo
PROG = "osmoffset-demo" if os.path.basename(sys.argv[0]) == \
    "osmoffset-demo" else "demo"
DEFAULT_FABRICS = ["seed-4x4trunk.net", "kary-4-3.net"]


class DemoError(Exception):
    pass


def route(net, out, lmc, mode, engine, plugin_dir):
    """One osm-sim run (osmoffset.runner.route_once); returns its info."""
    opts = runner.OnceOptions(net, out, lmc=lmc, engine=engine,
                              stock=(mode == "stock"), port_offsetting=mode,
                              plugin_dir=plugin_dir, no_ibroute=True)
    try:
        return runner.route_once(opts)
    except runner.RunError as exc:
        hint = ""
        if mode != "stock" and plugin_dir is None and \
                "plugin load" in str(exc):
            hint = " (no plugin directory given and the dynamic loader " \
                "found no usable libosmoffset.so: install osmoffset, or " \
                "give --plugin-dir)"
        raise DemoError("osm-sim run of %s (%s) failed: %s%s"
                        % (os.path.basename(net), mode, exc, hint))


def analyze(out):
    """lft-analyze --json of one run."""
    try:
        cmd = paths.tool_argv("lft-analyze")
    except FileNotFoundError as exc:
        raise DemoError(str(exc))
    cmd += ["--json", "--lfts", os.path.join(out, "opensm-lfts.dump"),
            "--topology", os.path.join(out, "opensm-subnet.lst")]
    res = subprocess.run(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                         stdin=subprocess.DEVNULL, universal_newlines=True)
    if res.returncode not in (0, 1):
        raise DemoError("lft-analyze failed on %s: %s"
                        % (out, res.stderr.strip()))
    try:
        return json.loads(res.stdout)
    except ValueError:
        raise DemoError("lft-analyze printed no JSON for %s: %s"
                        % (out, res.stderr.strip()[-200:]))


def eff(report, kind):
    part = report["shift"].get(kind)
    return f"{part['efficiency']:.2f}" if part else "  - "


def show(name, stock, offset, lmc):
    print(f"\n== {name}: {stock['hosts']} hosts, {stock['switches']} "
          f"switches, LMC {lmc}")
    print("   base-LID spread per switch, stock updn -> updn+offset "
          "(max - min base LIDs over candidate ports)")
    by_guid = {s["guid"]: s for s in offset["balance"]["switches"]}
    cells = []
    for sw in sorted(stock["balance"]["switches"], key=lambda s: s["desc"]):
        other = by_guid.get(sw["guid"], {}).get("base_imbalance", "?")
        cells.append(f"{sw['desc'][:16]:<16} {sw['base_imbalance']:>2} -> "
                     f"{other:<2}")
    for i in range(0, len(cells), 3):
        print("   " + "   ".join(cells[i:i + 3]))
    print("   shift alltoall efficiency (1.00 = no link contention)")
    print(f"   {'':<24} {'stock updn':>10} {'updn+offset':>12}")
    print(f"   {'base LIDs only':<24} {eff(stock, 'base'):>10} "
          f"{eff(offset, 'base'):>12}")
    print(f"   {'striped over all LIDs':<24} {eff(stock, 'spread'):>10} "
          f"{eff(offset, 'spread'):>12}")
    print(f"   {'leaf-level bound':<24} "
          f"{stock['bound']['efficiency']:>10.2f} "
          f"{offset['bound']['efficiency']:>12.2f}")
    for r, tag in ((stock, "stock"), (offset, "offset")):
        if not r["valid"] or r["credit_loop"]:
            print(f"   !! {tag}: invalid routing or credit loop: "
                  f"{r['problems'][:3]}")


def build_parser():
    ap = doc_parser(PROG, __doc__)
    ap.add_argument("--net", action="append",
                    help="ibsim net file (repeatable; default: "
                    + ", ".join(DEFAULT_FABRICS) + " of the curated "
                    "fabrics)")
    ap.add_argument("--lmc", type=int, default=2, help="LMC (default 2)")
    ap.add_argument("--engine", default="updn", choices=["updn", "minhop"],
                    help="routing engine (default updn)")
    ap.add_argument("--plugin-dir", metavar="DIR",
                    help="directory holding libosmoffset.so (default: as "
                    "osm-sim; none = the installed plugin)")
    ap.add_argument("--out", help="keep the runs in this directory")
    add_version(ap, PROG)
    return ap


def setup(args):
    """(nets, plugin dir or None) after checking the input; prints which
    opensm and plugin the demo uses."""
    if not 0 <= args.lmc <= 7:
        raise DemoError("--lmc must be 0..7")
    if args.net:
        nets = args.net
    else:
        d = paths.fabrics_dir()
        if d is None:
            raise DemoError("no curated fabrics found (neither a source "
                            "tree's sim-topologies/ nor an installed "
                            "<pkgdatadir>/sim-topologies); give --net")
        nets = [os.path.join(d, f) for f in DEFAULT_FABRICS]
    for net in nets:
        if not os.path.isfile(net):
            raise DemoError(f"{net}: no such net file")
    try:
        tools = runner.require_tools(("ibsim", "opensm"))
        plugin_dir, origin = runner.resolve_plugin_dir(args.plugin_dir)
        runner.check_plugin_dir(plugin_dir, origin, "; build it first "
                                "(autoreconf -fi && ./configure && make)")
    except runner.RunError as exc:
        raise DemoError(str(exc))
    ver = runner.opensm_version(tools["opensm"])
    print(f"{PROG}: opensm {tools['opensm']}"
          + (f" ({ver})" if ver else ""))
    print(f"{PROG}: plugin " + runner.describe_plugin(plugin_dir, origin))
    if plugin_dir is None:
        found = runner.loader_plugin_path()
        print(f"{PROG}: the loader's {runner.PLUGIN_LIB}: "
              + (found or "not in the ldconfig cache (LD_LIBRARY_PATH or "
                 "opensm's own path may still hold one)"))
    return nets, plugin_dir


def main(argv=None):
    args = build_parser().parse_args(argv)
    runner.catch_signals()
    try:
        nets, plugin_dir = setup(args)
        base = args.out or tempfile.mkdtemp(prefix="osmoffset-demo-")
        for net in nets:
            name = os.path.basename(net)
            runs = {}
            for mode in ("stock", "on"):
                out = os.path.join(base, f"{name}-{mode}")
                route(net, out, args.lmc, mode, args.engine, plugin_dir)
                runs[mode] = analyze(out)
            show(name, runs["stock"], runs["on"], args.lmc)
    except DemoError as exc:
        print(f"{PROG}: {exc}", file=sys.stderr)
        return 2
    except (KeyboardInterrupt, runner.Interrupted):
        print(f"{PROG}: interrupted; ibsim stopped", file=sys.stderr)
        return 130
    print(f"\nruns kept in {base}")
    return 0
