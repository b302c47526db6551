# bench-fabrics - every engine on the curated, real and extra fabrics
#
# Copyright (c) 2026 The osmoffset authors.
#
# This software is available to you under the terms of the GNU General
# Public License (GPL) Version 2 or the OpenIB.org BSD license; see COPYING.
"""Shift-alltoall quality of every engine on curated, real and given fabrics.

For every fabric x engine x LMC, bench-fabrics routes the fabric once with
osm-sim (private ibsim + Debian's opensm --once; --allow-fallback,
so a fallback is measured and reported) and analyses the LFTs with the
osmoffset analysis library in four rank orders.

Fabrics:
  every sim-topologies/*.net (picked up by name, new files included);
  the real dumps of ../shared/realfabrics (--realfabrics DIR), converted
  with osmoffset.ibnetdiscover: ndr-2level-railopt with its SHARP
  aggregation nodes and ndr-2level-railopt-nosharp without them, and
  qdr-irregular-x5 (named through its .map; it has no SHARP nodes);
  skipped with a note when the directory is absent;
  analogs of the production fabrics the real-fabric issue measured (HDR
  directors with and without SHARP nodes, and with 1 % of their cables
  missing, an 8-rail three-level
  SuperPOD-like tree with and without, tapered EDR edges with dual-HCA
  nodes; 1,008 to 1,512 hosts), generated with gen-fabric into OUT/fabrics;
  variants (var-*): shapes of the same kinds at 64 to 512 hosts drawn with
  other parameters and seeds (tapered, doubled and missing cables,
  directors, pods, rails, management HCAs on spines, SHARP nodes, a
  3-level tree whose top switches updn's detection mostly misses),
  generated likewise; analogs and variants are routed with --roots none
  (updn finds its roots as on a dump);
  every --ibnetdiscover DUMP (repeatable): a dump of your own fabric,
  converted into OUT/fabrics/NAME.net as osm-sim --ibnetdiscover converts
  it (--map FILE names its nodes, --no-sharp drops its SHARP aggregation
  nodes) and named by its file name without the extension; routed as
  the dump is, updn finding its roots;
  every --net FILE (repeatable), named by its file name; updn takes the
  roots of its '# updn-root' lines, if any, unless --net-roots none.
--quick leaves out the real dumps, the analogs and the variants;
--only-given leaves out every fabric but those of --ibnetdiscover and --net.

Engines (the first four unless --engines names others):
  updn         stock updn (roots from the net file's updn-root lines if any)
  dfsssp       stock dfsssp
  ftree        stock ftree; "fails" where OpenSM falls back to another engine
  ours         updn + osmoffset port_offsetting=on (plus --plugin-option)
  minhop       stock minhop
  ours-minhop  minhop + osmoffset port_offsetting=on (plus --plugin-option)

Rank orders (lft-analyze's --order / --job):
  leaf     topology order: ranks grouped by leaf
  quarter  a job on the first quarter of the hosts in leaf order
  half     a job on the first half of the hosts in leaf order
  random   leaf order shuffled with --seed
SHARP aggregation nodes, and CAs cabled to spines or cores (management
HCAs), are routed and checked but run no rank.

Random orders: one shuffle is luck.  Every random-order figure of ours
below stock updn's or dfsssp's (of ours-minhop: below stock minhop's) is
measured again, with the other engine's, in the random orders of seeds
1..--shuffles of the same LFTs (no new routing): the means and how many
orders ours is at least as good in are reported.

Figures: base = shift efficiency with every rank sending to its peer's
base LID; spread = traffic striped over the 2^LMC LIDs (LMC > 0).  Every
figure of 'ours' below stock updn's figure of the same fabric, LMC, order
and traffic (of 'ours-minhop' below stock minhop's) is flagged (bold,
with a down-arrow) and counted, with the host/LID pairs each leaves
without a route (a pair the stock engine does not route loads no link in
its figure).  Cells with a credit loop are counted per engine, among the
routes of the CAs' traffic and among every LFT entry's dependencies
(lft-analyze --credit-loops every-entry).

Runs are cached in OUT/runs/FABRIC/ENGINE/lmcN (key: osm-sim arguments,
net file and plugin hashes); cells that failed are redone, --force redoes
them all.  OUT/results.json holds everything; --json prints it.

Exit status: 0 every cell measured, 1 a cell could not be routed or
analysed (ftree failing is not an error), 2 bad usage or input,
130 interrupted.

Example:
  bench-fabrics --out /tmp/bf --doc docs/fabrics.md
  bench-fabrics --quick --fabrics ft2-8x4 --out /tmp/bf --json
  bench-fabrics --net my-fabric.net --plugin-option stock_guard=on
  bench-fabrics --ibnetdiscover fabric.txt --only-given --lmc 0,1,2 \
      --out /tmp/bf --doc /tmp/bf/fabric.md
"""

import os
import sys
import time

from osmoffset import benchcells
from osmoffset.benchreport import (UsageError, add_cell_options,
                                   add_report_options, check_jobs,
                                   command_line, lmc_list, logger, name_list,
                                   print_json, write_json)
from osmoffset.cli import doc_parser, os_error_text
from osmoffset.fabricsreport import print_tables, write_doc
from osmoffset.fabricsuite import (DEFAULT_ENGINES, ENGINE_BY_NAME, ORDERS,
                                   below_stock, check_engines,
                                   check_plugin_options, collect_fabrics,
                                   default_realfabrics, make_tasks,
                                   random_recheck, runs_ours)

PROG = "bench-fabrics"


def build_parser():
    p = doc_parser(PROG, __doc__)
    add_cell_options(p, PROG, "converted fabrics")
    p.add_argument("--quick", action="store_true",
                   help="the curated sim-topologies fabrics (and --net) "
                        "only, no real dumps, analogs or variants: a "
                        "smoke test")
    p.add_argument("--fabrics", metavar="NAMES",
                   help="comma-separated fabric names (default: all)")
    p.add_argument("--net", action="append", default=[], metavar="FILE",
                   help="an extra ibsim net file (repeatable)")
    p.add_argument("--ibnetdiscover", action="append", default=[],
                   metavar="DUMP",
                   help="an ibnetdiscover dump of a fabric, converted as "
                        "osm-sim --ibnetdiscover converts it and named by "
                        "its file name without the extension (repeatable)")
    p.add_argument("--map", metavar="FILE",
                   help="node names for the --ibnetdiscover dumps (osm-sim "
                        "--map; ibnetdiscover's node-name-map format works)")
    p.add_argument("--no-sharp", action="store_true",
                   help="drop the SHARP aggregation nodes of the "
                        "--ibnetdiscover dumps (osm-sim --no-sharp)")
    p.add_argument("--net-roots", choices=("auto", "none"),
                   default="auto",
                   help="updn roots of the --net fabrics: 'auto' (default) "
                        "= their '# updn-root' lines if any, else updn's "
                        "own detection; 'none' = always updn's detection, "
                        "as on a dump (osm-sim --roots)")
    p.add_argument("--only-given", action="store_true",
                   help="only the --net and --ibnetdiscover fabrics: no "
                        "curated, real, analog or variant fabric")
    p.add_argument("--realfabrics", default=default_realfabrics(),
                   metavar="DIR",
                   help="directory of the real dumps (default "
                        "<repo>/../shared/realfabrics)")
    p.add_argument("--engines", metavar="NAMES",
                   help="comma-separated engines (default: %s; also: "
                        "%s)" % (",".join(DEFAULT_ENGINES),
                                 ",".join(e for e in ENGINE_BY_NAME
                                          if e not in DEFAULT_ENGINES)))
    p.add_argument("--lmc", default="0,2", metavar="LIST",
                   help="comma-separated LMC values (default 0,2)")
    p.add_argument("--seed", type=int, default=1, metavar="S",
                   help="seed of the random rank order (default 1)")
    p.add_argument("--shuffles", type=int, default=20, metavar="N",
                   help="measure every random-order figure of ours below "
                        "stock updn's or dfsssp's (of ours-minhop: below "
                        "stock minhop's) again, with the other engine's, in "
                        "the random orders of seeds 1..N of the same LFTs "
                        "(default 20; 0: do not)")
    p.add_argument("--plugin-option", action="append", default=[],
                   metavar="KEY=VAL",
                   help="event_plugin_options token for the engines of "
                        "ours (ours, ours-minhop; repeatable; osm-sim "
                        "--plugin-option)")
    p.add_argument("--qos", action="store_true",
                   help="OpenSM's QoS on for the engines of ours "
                        "(osm-sim --qos), as reach_vls needs")
    add_report_options(p, PROG, "write the Markdown report to FILE")
    return p


def check_args(args):
    check_jobs(args.jobs)
    lmcs = lmc_list(args.lmc)
    engines = check_engines(name_list(args.engines) if args.engines
                            else None)
    check_plugin_options(args.plugin_option)
    if args.shuffles < 0:
        raise UsageError("--shuffles must be >= 0")
    for opt, given in (("--map", args.map), ("--no-sharp", args.no_sharp)):
        if given and not args.ibnetdiscover:
            raise UsageError("%s applies to --ibnetdiscover dumps; none "
                             "given" % opt)
    if args.only_given and not (args.net or args.ibnetdiscover):
        raise UsageError("--only-given needs a --net or --ibnetdiscover "
                         "fabric")
    if runs_ours(engines) and not os.path.isfile(benchcells.plugin_file()):
        raise UsageError("plugin %s not found; build it first (make)"
                         % benchcells.plugin_file())
    return engines, lmcs


# ----------------------------------------------------------------------

def main(argv=None):
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    log = logger(PROG, args.quiet)
    t0 = time.monotonic()
    try:
        engines, lmcs = check_args(args)
        out = os.path.abspath(args.out)
        os.makedirs(out, exist_ok=True)
        fabs, notes = collect_fabrics(
            out, log, args.quick, args.realfabrics, args.net,
            name_list(args.fabrics) if args.fabrics else None,
            args.ibnetdiscover, args.map, args.no_sharp,
            not args.only_given,
            None if args.net_roots == "auto" else args.net_roots)
        tasks = make_tasks(out, fabs, engines, lmcs, args.seed,
                           args.plugin_option, args.force, args.qos)
        results = benchcells.run_all(tasks, args.jobs, log)
        if args.shuffles:
            log("random orders of seeds 1-%d: the figures of ours below "
                "another engine's" % args.shuffles)
        recheck = random_recheck(out, results, fabs, lmcs, args.shuffles)
    except UsageError as exc:
        sys.stderr.write("%s: %s\n" % (PROG, exc))
        return 2
    except OSError as exc:
        sys.stderr.write("%s: %s\n" % (PROG, os_error_text(exc)))
        return 2
    except KeyboardInterrupt:
        sys.stderr.write("%s: interrupted\n" % PROG)
        return 130
    elapsed = time.monotonic() - t0
    below = below_stock(results, fabs, engines, lmcs)
    command = command_line(PROG, argv)
    doc = {"command": command, "seed": args.seed,
           "lmcs": lmcs, "engines": engines,
           "orders": {o: list(s) for o, s in ORDERS},
           "plugin_options": args.plugin_option, "notes": notes,
           "fabrics": [dict(i, name=f) for f, i in fabs],
           "cells": [results[k] for k in sorted(results)],
           "below_stock": below, "shuffles": args.shuffles,
           "random_recheck": recheck, "seconds": round(elapsed, 1)}
    write_json(os.path.join(out, "results.json"), doc)
    if args.doc:
        write_doc(args.doc, command, args, fabs, notes, engines, lmcs,
                  results, below, recheck, elapsed)
        log("wrote %s" % args.doc)
    if args.json:
        print_json(doc)
    else:
        print_tables(fabs, engines, lmcs, results, below, recheck,
                     args.shuffles)
    bad = [r for r in results.values() if r["status"] == "error"]
    for r in bad:
        sys.stderr.write("%s: %s %s lmc %d: %s\n" % (
            PROG, r["fabric"], r["engine"], r["lmc"], r.get("error")))
    return 1 if bad else 0
