# bench-simulate - simulated MPI alltoall over OpenSM's routes (SimGrid SMPI)
#
# Copyright (c) 2026 The osmoffset authors.
#
# This software is available to you under the terms of the GNU General
# Public License (GPL) Version 2 or the OpenIB.org BSD license; see COPYING.
"""Simulated alltoall of stock updn and osmoffset on full and degraded trees.

For every case below bench-simulate runs what
  alltoall-ab --simulate --net FABRIC --json ...
does (osmoffset.alltoall.simulate: osm-sim routes each LMC x
port_offsetting variant, a2a-bench built with smpicc runs under smpirun
over those LFTs) and prints, or writes with --doc,
one table per fabric plus a cross-check of the analytic predictions:
stock / ours time ratio from the simulation, from the per-round model of
the ring schedule (osmoffset.schedule) and from lft-analyze's
efficiency (1 / efficiency).

Cases (fabric: LMCs; rank orders; LID offsets; message sizes):
  kary-4-3              64 hosts, curated: 0,1,2; leaf,random,guid; 0,1; 64K,1M
  kary-4-3-degraded     64 hosts, curated: 0,1,2; leaf,random,guid; 0,1; 64K,1M
  ft2-16x8-degraded-s6  128 hosts, generated: 0,2; leaf; 0,1,2,3; 1M
  kary-6-3              216 hosts, generated: 0,1,2; leaf,random,guid; 0; 1M
  ft2-648               648 hosts, generated: 0,2; leaf,random; 0; 64K
  ft2-648-degraded      648 hosts, generated: 0,2; leaf; 0,1; 64K
Generated fabrics go to OUT/fabrics (gen-fabric commands of
sim-topologies/regen.sh --big; ft2-16x8-degraded-s6 is the 16 x 8 2-level
tree with 5 % of its cables cut, seed 6).  Each alltoall-ab run keeps its
directory in OUT/CASE.  The cases are in osmoffset.alltoall.simreport.

Exit status: 0 done, 1 a simulation failed, 2 bad usage, 130 interrupted.

Example:
  bench-simulate --out /tmp/bs --doc docs/simulated-alltoall.md
  bench-simulate --cases kary-4-3 --out /tmp/bs
"""

import json
import os
import sys
import time

from osmoffset.alltoall import UsageError, set_progress
from osmoffset.alltoall.simreport import (CASE_BY_NAME, CASES, case_table,
                                          crosscheck, run_case, write_doc)
from osmoffset.cli import add_version, doc_parser

PROG = "bench-simulate"


def build_parser():
    p = doc_parser(PROG, __doc__)
    p.add_argument("--out", default="bench-simulate.out", metavar="DIR",
                   help="working directory (default ./bench-simulate.out)")
    p.add_argument("--cases", metavar="NAMES",
                   help="comma-separated case names (default all)")
    p.add_argument("--jobs", type=int, default=2, metavar="N",
                   help="simulations at a time (default 2)")
    p.add_argument("--bench", metavar="PATH",
                   help="a2a-bench built with smpicc (default: "
                        "$OSMOFFSET_A2A_BENCH_SMPI, the built or installed "
                        "a2a-bench-smpi, else built with smpicc)")
    p.add_argument("--doc", metavar="FILE", help="write the Markdown report")
    p.add_argument("--json", action="store_true",
                   help="print the results as JSON")
    add_version(p, PROG)
    return p


def log(msg):
    sys.stderr.write("%s: %s\n" % (PROG, msg))
    sys.stderr.flush()


def run(args, argv):
    if args.jobs < 1:
        raise UsageError("--jobs must be >= 1")
    if args.cases:
        names = [c.strip() for c in args.cases.split(",") if c.strip()]
        for n in names:
            if n not in CASE_BY_NAME:
                raise UsageError("--cases: unknown case %r (known: %s)"
                                 % (n, ", ".join(CASE_BY_NAME)))
    else:
        names = [c[0] for c in CASES]
    if args.doc and not os.path.isdir(os.path.dirname(
            os.path.abspath(args.doc))):
        raise UsageError("--doc %s: no such directory" % args.doc)
    out = os.path.abspath(args.out)
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as exc:
        raise UsageError("--out %s: %s" % (args.out, exc.strerror))
    t0 = time.time()
    results = [run_case(out, c, args.jobs, args.bench, log)
               for c in CASES if c[0] in names]
    seconds = time.time() - t0
    with open(os.path.join(out, "results.json"), "w") as f:
        json.dump(results, f, indent=1)
    if args.doc:
        write_doc(args.doc, argv, results, seconds)
        log("wrote %s" % args.doc)
    if args.json:
        json.dump(results, sys.stdout, indent=1)
        sys.stdout.write("\n")
    else:
        for line in crosscheck(results):
            print(line)
        for res in results:
            print()
            print("%s (%d ranks)" % (res["case"], res["hosts"]))
            for line in case_table(res):
                print(line)
    return 0


def main(argv=None):
    if argv is None:
        argv = sys.argv[1:]
    args = build_parser().parse_args(argv)
    # the simulations' progress is not shown (as when they ran in
    # alltoall-ab --simulate --json); their warnings are
    set_progress(None, PROG)
    try:
        return run(args, argv)
    except UsageError as exc:
        sys.stderr.write("%s: %s\n" % (PROG, exc))
        return 2
    except RuntimeError as exc:
        sys.stderr.write("%s: %s\n" % (PROG, exc))
        return 1
    except KeyboardInterrupt:
        sys.stderr.write("%s: interrupted\n" % PROG)
        return 130
