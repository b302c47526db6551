"""route-optimum: the best shift-alltoall efficiency any destination-based
routing can reach on a 2-level fat tree.

The model and the solver live in osmoffset.optimum (optimum_of); this
module is the command line.

Exit status: 0 solved (optimum or bound), 2 bad input or usage.
"""

import argparse
import json
import sys

from osmoffset.cli import add_version
from osmoffset.fabric import InputError
from osmoffset.optimum import (ORDER_WORDS, NoSolver, optimum_of,
                               order_word_ok)


def parse_args(argv):
    ap = argparse.ArgumentParser(
        prog="route-optimum",
        description="Best shift-alltoall efficiency that any "
        "destination-based routing reaches on a 2-level fat tree "
        "(integer programming, SciPy HiGHS).",
        epilog="Exit status: 0 solved; 2 bad input or usage.")
    ap.add_argument("--topology", required=True, metavar="FILE",
                    help="ibsim net file, opensm-subnet.lst or ibnetdiscover "
                    "output")
    ap.add_argument("--lmc", type=int, default=0, metavar="N",
                    help="LIDs per port = 2^N; traffic spread evenly over "
                    "them (default 0: base LIDs)")
    ap.add_argument("--hostfile", metavar="FILE",
                    help="rank order: an Open MPI / MPICH hostfile, one "
                    "host a line by node description, host name or GUID "
                    "(default: topology order, as lft-analyze)")
    ap.add_argument("--time-limit", type=float, default=300.0, metavar="S",
                    help="solver time limit in seconds (default 300); when "
                    "it is reached the best routing found and the proven "
                    "bound are reported")
    ap.add_argument("--random-orders", type=int, default=0, metavar="N",
                    help="also measure the routing found in N random rank "
                    "orders, those bench-quality re-measures in: the host "
                    "names in natural order shuffled by Python's "
                    "random.Random(seed), seeds 1..N (default 0; the "
                    "optimum is the best for the one rank order only)")
    ap.add_argument("--lids-apart", action="store_true",
                    help="LMC > 0: only routings that put each flow's LIDs "
                    "on different spines, as port offsetting sets out to: "
                    "from each leaf at most ceil(2^LMC / spines the two "
                    "leaves share) LIDs of one host over one spine "
                    "(default: any routing; the optimum may then stripe a "
                    "flow over fewer paths than it has LIDs)")
    ap.add_argument("--orders", metavar="LIST",
                    help="solve for the best mean over groups of rank "
                    "orders, comma separated: order (the rank order: "
                    "topology or --hostfile), quarters and halves (jobs on "
                    "its 4 and 2 contiguous blocks, each group the mean "
                    "of its jobs), random:N (the random orders of seeds "
                    "1..N, as --random-orders); each group weighs the same "
                    "(default: order alone)")
    ap.add_argument("--routes", metavar="FILE",
                    help="write the routing found to FILE: one line per "
                    "(source leaf, destination host, LID offset) with the "
                    "spine it goes up to, GUIDs then node descriptions, "
                    "tab separated")
    ap.add_argument("--lfts", metavar="FILE",
                    help="an LFT dump of this fabric (opensm-lfts.dump, "
                    "ibroute or dump_fts output; give the same run's "
                    "opensm-subnet.lst as --topology): measure its routing "
                    "in the same model and count where it differs from the "
                    "routing found")
    ap.add_argument("--json", action="store_true",
                    help="print one JSON object instead of text")
    add_version(ap, "route-optimum")
    args = ap.parse_args(argv)
    if not 0 <= args.lmc <= 3:
        ap.error("--lmc: %d is out of range 0..3" % args.lmc)
    if args.lids_apart and args.lmc == 0:
        ap.error("--lids-apart needs --lmc 1 or more: at LMC 0 a host "
                 "has one LID")
    if args.time_limit <= 0:
        ap.error("--time-limit must be positive")
    if args.orders is not None:
        args.orders = [w.strip() for w in args.orders.split(",")]
        for w in args.orders:
            if not order_word_ok(w):
                ap.error("--orders: unknown rank order '%s' (%s; N 1..100)"
                         % (w, ", ".join(ORDER_WORDS)))
        if len(set(args.orders)) != len(args.orders):
            ap.error("--orders: a rank order named twice")
    if not 0 <= args.random_orders <= 1000:
        ap.error("--random-orders: %d is out of range 0..1000"
                 % args.random_orders)
    return args


def main(argv=None):
    try:
        args = parse_args(sys.argv[1:] if argv is None else argv)
    except SystemExit as exc:
        return 0 if exc.code == 0 else 2
    try:
        res = optimum_of(args.topology, args.lmc, args.hostfile,
                         args.time_limit, args.random_orders,
                         args.lids_apart, args.routes, args.lfts,
                         args.orders)
    except (InputError, NoSolver) as exc:
        print("route-optimum: %s" % exc, file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(res, indent=1, sort_keys=True))
        return 0
    what = "optimum" if res["exact"] else "upper bound (parallel links " \
        "pooled)"
    print("%s: %d hosts, %d leaves, %d spines, LMC %d, %s rank order%s"
          % (args.topology, res["hosts"], res["leaves"], res["spines"],
             args.lmc, "topology" if not args.hostfile else args.hostfile,
             ", each flow's LIDs on different spines" if args.lids_apart
             else ""))
    if "best" in res and "orders" in res:
        print("best routing found: shift efficiency %.3f on average over "
              "the orders (%s)" % (res["best"], groups_text(res["groups"])))
    elif "best" in res:
        print("best routing found: shift efficiency %.3f" % res["best"])
    if "shared" in res and not args.lids_apart:
        print("flows (leaf, host) whose LIDs it puts together on a spine "
              "that --lids-apart would part: %d of %d"
              % (res["shared"]["flows"], res["shared"]["of"]))
    if "bound" in res:
        print("no routing%s can exceed: %.3f (%s%s)"
              % (" with each flow's LIDs apart" if args.lids_apart else "",
                 res["bound"], what,
                 "" if res["optimal"] else ", solver stopped: %s"
                 % res["message"]))
    if "lfts" in res:
        print_lfts(res)
    if "routes" in res:
        print("routing found written to %s" % res["routes"])
    elif args.routes:
        print("no routing found: nothing written to %s" % args.routes)
    if "random" in res:
        print("the routing found, in random rank orders (seeds 1-%d): "
              "shift efficiency %.3f on average"
              % (res["random"]["seeds"], res["random"]["mean"]))
    if "random" in res.get("lfts", {}):
        print("%s, in the same random rank orders: shift efficiency %.3f "
              "on average" % (res["lfts"]["path"],
                              res["lfts"]["random"]["mean"]))
    return 0


def groups_text(figures):
    return ", ".join("%s %.3f" % (name, eff)
                     for name, eff in figures.items())


def print_lfts(res):
    lf = res["lfts"]
    print("%s: shift efficiency %.3f in this model%s%s"
          % (lf["path"], lf["efficiency"],
             " on average over the orders (%s)" % groups_text(lf["groups"])
             if "groups" in lf else "",
             " (%.1f %% of the best routing found)"
             % (100.0 * lf["efficiency"] / res["best"])
             if res.get("best") else ""))
    if "differ" in lf:
        print("  %d of its %d (leaf, host, LID offset) entries go up to "
              "another spine than in the routing found; it scores lower "
              "in %d of %d rounds, higher in %d"
              % (lf["differ"], lf["entries"], lf["rounds_lower"],
                 lf["rounds"], lf["rounds_higher"]))
