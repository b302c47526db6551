"""Benchmark lft-analyze on a large synthetic fat tree.

Builds a k-ary 3-tree (default k=18: 5832 hosts, 972 36-port switches)
directly in Python: an opensm-subnet.lst and an opensm-lfts.dump with
d-mod-k routing (LMC as given, each LID routed as its own destination).
Then runs lft-analyze --json on them in a child process and prints
the wall time, the child's peak memory and the figures.

This is a benchmark, not a test: goal <= 60 s and <= 2 GB for k=18.
"""

import argparse
import json
import os
import resource
import subprocess
import sys
import tempfile
import time

from osmoffset import paths
from osmoffset.cli import add_version
from osmoffset.karytree import build

PROG = "bench-analyze"


def main(argv=None):
    ap = argparse.ArgumentParser(prog=PROG,
                                 description=__doc__.split("\n\n")[0])
    ap.add_argument("-k", type=int, default=18,
                    help="switch radix / 2 (default 18: 5832 hosts)")
    ap.add_argument("--lmc", type=int, default=0, help="LMC (default 0)")
    ap.add_argument("--keep", metavar="DIR",
                    help="write the files into DIR and keep them")
    ap.add_argument("--bisections", type=int, default=20)
    add_version(ap, PROG)
    args = ap.parse_args(argv)
    if args.k < 2 or not 0 <= args.lmc <= 3:
        print("bench-analyze: need k >= 2 and 0 <= lmc <= 3", file=sys.stderr)
        return 2
    d = args.keep or tempfile.mkdtemp(prefix="bench-analyze.")
    os.makedirs(d, exist_ok=True)
    t0 = time.time()
    nh, nsw = build(args.k, args.lmc, d)
    t1 = time.time()
    size = os.path.getsize(os.path.join(d, "opensm-lfts.dump"))
    print(f"generated {args.k}-ary 3-tree: {nh} hosts, {nsw} switches, "
          f"LMC {args.lmc}, LFT dump {size / 1e6:.0f} MB in {t1 - t0:.1f} s "
          f"({d})")
    try:
        cmd = paths.tool_argv("lft-analyze")
    except FileNotFoundError as exc:
        print("bench-analyze: %s" % exc, file=sys.stderr)
        return 2
    cmd += ["--json", "--lfts", os.path.join(d, "opensm-lfts.dump"),
            "--topology", os.path.join(d, "opensm-subnet.lst"),
            "--bisections", str(args.bisections)]
    if sys.stderr.isatty():
        cmd.append("--progress")
    p = subprocess.run(cmd, stdout=subprocess.PIPE, text=True)
    t2 = time.time()
    rss = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
    if not args.keep:
        for f in os.listdir(d):
            os.unlink(os.path.join(d, f))
        os.rmdir(d)
    if p.returncode not in (0, 1):
        print(f"bench-analyze: lft-analyze failed ({p.returncode})",
              file=sys.stderr)
        return 1
    r = json.loads(p.stdout)
    print(f"lft-analyze: {t2 - t1:.1f} s wall (analysis {r['seconds']:.1f} s"
          f" after parsing), peak RSS {rss:.0f} MB")
    print(f"  valid {r['valid']}, credit loop {r['credit_loop']}, "
          f"hosts {r['hosts']}, switches {r['switches']}, "
          f"max hops {r['max_hops']}")
    print(f"  shift base efficiency {r['shift']['base']['efficiency']:.4f}"
          f" (worst load {r['shift']['base']['worst']:g})")
    if r["shift"]["spread"]:
        print("  shift spread efficiency "
              f"{r['shift']['spread']['efficiency']:.4f}")
    print(f"  leaf bound efficiency {r['bound']['efficiency']:.4f}, "
          f"random bisection {r['bisection']['base']:.4f}")
    print(f"  worst imbalance base {r['balance']['worst']['base']}, "
          f"all {r['balance']['worst']['all']}")
    ok = (t2 - t1) <= 60 and rss <= 2048
    print(f"goal (<= 60 s, <= 2048 MB): {'met' if ok else 'MISSED'}")
    return 0
