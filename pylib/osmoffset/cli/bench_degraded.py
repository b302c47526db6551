# bench-degraded - alltoall efficiency on many randomly degraded fat trees
#
# Copyright (c) 2026 The osmoffset authors.
#
# This software is available to you under the terms of the GNU General
# Public License (GPL) Version 2 or the OpenIB.org BSD license; see COPYING.
"""Route many randomly degraded 2-level fat trees and print how well each
routing serves a shift alltoall.

bench-quality judges a fixed suite with one degraded tree per size; how a
detour rule copes with missing links depends on where they are missing,
so this benchmark draws several: for every size and seed it writes a
fabric with gen-fabric (2level --remove-links FRACTION --seed SEED),
routes it with Debian's opensm (osm-sim, LMC 0) as stock updn, with the
osmoffset plugin, and optionally with a second plugin build
(--baseline-plugin-dir, for A/B of two rules), and prints the base-LID
shift efficiency in topology rank order (as lft-analyze computes it)
with, for fabrics of at most --optimum-max-hosts hosts, the best any
destination-based routing reaches (route-optimum).  With --lmc 1 or
more it routes at that LMC and prints the efficiency of traffic striped
over every LID instead, with the optimum beside and the best of the
routings that keep each flow's LIDs on different spines, as port
offsetting sets out to (route-optimum --lids-apart).

Sizes are LEAVESxSPINES; every leaf gets as many hosts as it has spines
(full bisection before the links go).

Exit status: 0 every cell measured, 1 a cell failed, 2 bad usage.

Example:
  bench-degraded --sizes 8x4,18x9,24x12 --seeds 1-5
  bench-degraded --baseline-plugin-dir /tmp/old/.libs --json
  bench-degraded --sizes 8x4,12x6 --lmc 1
  bench-degraded --lmc 1 --plugin-option polish_kicks=200 \\
      --baseline-plugin-dir .libs
"""

import argparse
import json
import re

from osmoffset import benchcells
from osmoffset.benchreport import (UsageError, add_run_options,
                                   interruptible, parse_and_measure,
                                   require_plugins)
from osmoffset.degraded import (cell_figures, make_fabric, make_tasks,
                                report)
from osmoffset.fabricsuite import check_plugin_options

PROG = "bench-degraded"


def seed_list(text):
    m = re.fullmatch(r"(\d+)-(\d+)", text)
    if m and int(m.group(1)) <= int(m.group(2)):
        return list(range(int(m.group(1)), int(m.group(2)) + 1))
    try:
        seeds = [int(s) for s in text.split(",") if s]
    except ValueError:
        seeds = []
    if not seeds:
        raise argparse.ArgumentTypeError("'%s': want N-M or N,M,..." % text)
    return seeds


def size_list(text):
    sizes = []
    for s in text.split(","):
        m = re.fullmatch(r"(\d+)x(\d+)", s)
        if not m or int(m.group(1)) < 2 or int(m.group(2)) < 2:
            raise argparse.ArgumentTypeError(
                "'%s': want LEAVESxSPINES, both at least 2" % s)
        sizes.append((int(m.group(1)), int(m.group(2))))
    return sizes


def parse_args(argv):
    ap = argparse.ArgumentParser(
        prog=PROG, description="Shift-alltoall efficiency of stock updn and "
        "osmoffset on randomly degraded 2-level fat trees.",
        epilog="Exit status: 0 every cell measured; 1 a cell failed; 2 bad "
        "usage.")
    ap.add_argument("--sizes", type=size_list, default=size_list(
        "8x4,12x6,18x9,24x12"), metavar="LIST",
        help="LEAVESxSPINES,... (default 8x4,12x6,18x9,24x12)")
    ap.add_argument("--seeds", type=seed_list, default=seed_list("1-5"),
                    metavar="N-M", help="gen-fabric seeds (default 1-5)")
    ap.add_argument("--remove", type=float, default=0.05, metavar="F",
                    help="fraction of the inter-switch cables removed "
                    "(default 0.05)")
    ap.add_argument("--baseline-plugin-dir", metavar="DIR",
                    help="also route with the libosmoffset.so in DIR "
                    "(another build, for A/B)")
    ap.add_argument("--plugin-option", action="append", default=[],
                    metavar="KEY=VAL",
                    help="event_plugin_options token for the osmoffset "
                    "column (repeatable; osm-sim --plugin-option); the "
                    "baseline keeps its plugin's defaults")
    ap.add_argument("--lmc", type=int, default=0, metavar="N",
                    help="LMC the fabrics are routed at (0-3, default 0); "
                    "above 0 the figures are of traffic striped over every "
                    "LID")
    ap.add_argument("--optimum-max-hosts", type=int, default=72,
                    metavar="N", help="solve the best routing with "
                    "route-optimum up to N hosts (default 72; 0: never)")
    add_run_options(ap, PROG)
    args = ap.parse_args(argv)
    if not 0 < args.remove < 1:
        ap.error("--remove must be between 0 and 1")
    if not 0 <= args.lmc <= 3:
        ap.error("--lmc: %d is out of range 0..3" % args.lmc)
    try:
        check_plugin_options(args.plugin_option)
    except UsageError as exc:
        ap.error(str(exc))
    require_plugins(ap, [benchcells.plugin_dir()] + (
        [args.baseline_plugin_dir] if args.baseline_plugin_dir else []))
    return args


def measure(args, out):
    configs = [("updn", None), ("osmoffset", benchcells.plugin_dir())]
    if args.baseline_plugin_dir:
        configs.append(("baseline", args.baseline_plugin_dir))
    rows = []
    for leaves, spines in args.sizes:
        for seed in args.seeds:
            rows.append({"size": "%dx%d" % (leaves, spines), "seed": seed,
                         "hosts": leaves * spines,
                         "net": make_fabric(out, leaves, spines, seed,
                                            args.remove)})
    tasks = make_tasks(out, rows, configs, args.optimum_max_hosts,
                       args.lmc, {"osmoffset": args.plugin_option})
    for (i, name), r in benchcells.run_all(tasks, args.jobs).items():
        rows[i][name] = cell_figures(r)
    return [n for n, _ in configs], rows


def main(argv=None):
    return interruptible(PROG, run, argv)


def run(argv):
    args, res, rc = parse_and_measure(
        PROG, parse_args, argv, ["fabrics"], measure)
    if rc is not None:
        return rc
    names, rows = res
    if args.json:
        print(json.dumps({"configs": names, "remove": args.remove,
                          "lmc": args.lmc, "rows": rows}, indent=1,
                         sort_keys=True))
    else:
        print("\n".join(report(names, rows, args.lmc)))
    failed = any("error" in (r.get(c) or {}) for r in rows
                 for c in names + ["optimum", "apart"])
    return 1 if failed else 0
