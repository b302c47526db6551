"""Base-LID spread of the curated fabrics: stock updn against updn with
port offsetting (coordinated and plain), LMC 0, 1 and 2.

For every fabric, LMC and configuration it routes the fabric once with
osm-sim and reports the largest base-LID spread over all switches
(max - min base LIDs over the ports of one candidate group: the ports that
OpenSM's LID matrix makes equal-cost for the same destinations), how many
groups have a spread above 1, and the shift-alltoall efficiency (base LIDs,
LMC-spread) as lft-analyze computes it.
"""

import argparse
import glob
import json
import os
import sys
import tempfile

from osmoffset import benchcells, paths
from osmoffset.cli import add_version
from osmoffset.spread import make_tasks, table_lines

PROG = "bench-spread"


def main(argv=None):
    ap = argparse.ArgumentParser(prog=PROG,
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--net", action="append",
                    help="net file (repeatable; default sim-topologies/*.net)")
    ap.add_argument("--lmc", default="0,1,2", help="LMC list (default 0,1,2)")
    ap.add_argument("--engine", default="updn")
    ap.add_argument("--out", help="keep the runs here")
    ap.add_argument("--jobs", type=int, default=2)
    ap.add_argument("--json", action="store_true")
    add_version(ap, PROG)
    args = ap.parse_args(argv)
    try:
        lmcs = [int(x) for x in args.lmc.split(",")]
    except ValueError:
        ap.error("--lmc takes a comma-separated list of numbers")
    nets = args.net or sorted(glob.glob(os.path.join(
        paths.fabrics_dir() or "", "*.net")))
    base = args.out or tempfile.mkdtemp(prefix="bench-spread-")
    tasks = make_tasks(base, nets, lmcs, args.engine)
    try:
        results = benchcells.run_all(tasks, args.jobs)
    except KeyboardInterrupt:
        print("%s: interrupted" % PROG, file=sys.stderr)
        return 130
    for t in tasks:
        r = results[t["id"]]
        if r["status"] != "ok":
            print("%s: %s%s" % (PROG, r.get("error"),
                                " (%s)" % r["command"] if r.get("command")
                                else ""), file=sys.stderr)
            return 2
    table = []
    for t in tasks:
        net, lmc, name = t["id"]
        table.append(dict({"fabric": os.path.basename(net), "lmc": lmc,
                           "config": name}, **results[t["id"]]["figures"]))
    if args.json:
        print(json.dumps(table, indent=1))
        return 0
    by = {(r["fabric"], r["lmc"], r["config"]): r for r in table}
    for line in table_lines(args.engine, nets, lmcs, by):
        print(line)
    print("runs kept in %s" % base)
    return 0
