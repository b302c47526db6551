# bench-shapes - stock updn and osmoffset on random cluster shapes
#
# Copyright (c) 2026 The osmoffset authors.
#
# This software is available to you under the terms of the GNU General
# Public License (GPL) Version 2 or the OpenIB.org BSD license; see COPYING.
"""Draw random cluster shapes, route each with stock updn and with the
osmoffset plugin, and say where ours do worse.

Each shape seed draws gen-fabric cluster arguments (radix 36, 40 or 64;
tapered or full edges; a core of 1U spines, director chassis or pods;
rails; edges without hosts; management HCAs on the core; doubled and
missing cables; SHARP nodes) until gen-fabric accepts them, and routes
the fabric with Debian's opensm (osm-sim, the roots left to updn as on a
dump) at each --lmc.  For every cell it prints ours' and stock updn's
shift efficiency in leaf order (base LIDs) and what is wrong with ours:
a credit loop, more host/LID pairs without a route than stock updn, or a
figure below stock updn's in leaf order, the first quarter or half job,
or the random order of seed 1 (base and striped traffic), noting where
stock updn leaves pairs without a route or has a credit loop itself.

With --net FILE the shapes are copies of that fabric, each without
--remove-links of its inter-switch cables, drawn with the shape's seed
(gen-fabric degrade): cables failing on a fabric of your own (for a dump,
the fabric.net that osm-sim --ibnetdiscover writes).

Exit status: 0 every cell measured and ours with no credit loop and no
more pairs without a route than stock updn; 1 otherwise; 2 bad usage.

Example:
  bench-shapes --shapes 40 --lmc 0,2
  bench-shapes --first-seed 101 --shapes 10 --out /tmp/shapes --json
  osm-sim --ibnetdiscover fabric.txt --out /tmp/mine
  bench-shapes --net /tmp/mine/fabric.net --remove-links 0.05 --shapes 10
"""

import argparse
import json
import os

from osmoffset import benchcells, shapes
from osmoffset.benchreport import (UsageError, add_run_options, at_least_one,
                                   interruptible, lmc_list, parse_and_measure,
                                   require_plugins)

PROG = "bench-shapes"


def lmcs(text):
    try:
        return lmc_list(text)
    except UsageError as exc:
        raise argparse.ArgumentTypeError(str(exc))


def fraction(text):
    try:
        v = float(text)
    except ValueError:
        v = -1.0
    if not 0 <= v < 1:
        raise argparse.ArgumentTypeError("a fraction in [0, 1) expected, "
                                         "got %r" % text)
    return v


def parse_args(argv):
    ap = argparse.ArgumentParser(
        prog=PROG, description="Stock updn and osmoffset on random cluster "
        "shapes, or on copies of a fabric of your own that lost random "
        "cables: credit loops, pairs without a route, figures below "
        "stock.",
        epilog="Exit status: 0 every cell measured, ours with no credit "
        "loop and no more pairs without a route than stock updn; 1 "
        "otherwise; 2 bad usage.")
    ap.add_argument("--shapes", type=at_least_one, default=20, metavar="N",
                    help="shapes to draw (default 20)")
    ap.add_argument("--first-seed", type=at_least_one, default=1, metavar="S",
                    help="seed of the first shape; the others follow "
                    "(default 1)")
    ap.add_argument("--lmc", type=lmcs, default=[0, 2], metavar="LIST",
                    help="LMCs to route at (default 0,2)")
    ap.add_argument("--net", metavar="FILE",
                    help="instead of drawing shapes, take this ibsim net "
                    "file (gen-fabric's, or the fabric.net of osm-sim "
                    "--ibnetdiscover) and take random cables out of it, "
                    "with each shape's seed")
    ap.add_argument("--remove-links", type=fraction, default=None,
                    metavar="F", help="with --net: the fraction of its "
                    "inter-switch cables each shape loses (default 0.05)")
    add_run_options(ap, PROG)
    args = ap.parse_args(argv)
    if args.net is not None and not os.path.isfile(args.net):
        ap.error("--net %s: no such file" % args.net)
    if args.net is None and args.remove_links is not None:
        ap.error("--remove-links needs --net")
    if args.remove_links is None:
        args.remove_links = 0.05
    require_plugins(ap, [benchcells.plugin_dir()])
    return args


def measure(args, out):
    rows = []
    for seed in range(args.first_seed, args.first_seed + args.shapes):
        net, what = shapes.make_fabric(
            out, seed, args.net and os.path.abspath(args.net),
            args.remove_links)
        row = {"seed": seed, "net": net}
        row.update({"args": what} if net else {"why": what})
        rows.append(row)
    tasks = shapes.make_tasks(out, rows, args.lmc, benchcells.plugin_dir())
    for (i, config, lmc), r in benchcells.run_all(tasks, args.jobs).items():
        rows[i].setdefault(config, {})[lmc] = r
    return rows


def main(argv=None):
    return interruptible(PROG, run, argv)


def run(argv):
    args, rows, rc = parse_and_measure(
        PROG, parse_args, argv, ["fabrics"], measure)
    if rc is not None:
        return rc
    s = shapes.summary(rows, args.lmc)
    if args.json:
        doc = {"lmcs": args.lmc, "summary": s, "rows": [
            dict(r, findings={str(l): shapes.findings(r, l)
                              for l in args.lmc}) for r in rows]}
        print(json.dumps(doc, indent=1, sort_keys=True, default=str))
    else:
        print("\n".join(shapes.report(rows, args.lmc)))
    return 1 if s["loop"] or s["reach"] or s["error"] else 0
