"""lft-analyze: analyse the unicast forwarding tables of an InfiniBand
fabric.

Checks that every host LID is reachable from every host and that every
LFT entry of every switch forwards its LID (CA LIDs with their LMC LIDs,
switch LIDs, SHARP aggregation nodes) without a loop, a dead end or a
down or unlinked port; looks for credit loops, counts LIDs per switch
port and the imbalance among equivalent ports, and simulates an MPI
alltoall (shift pattern) with base-LID and LMC-spread traffic.  The work
is done by osmoffset.analyze (model, validity, metrics, report, plot).

Exit status: 0 valid routing without credit loop, 1 invalid routing or a
credit loop, 2 bad input or usage.
"""

import argparse
import json
import sys

from osmoffset.analyze import CREDIT_SCOPES, Analysis
from osmoffset.cli import add_version
from osmoffset.fabric import InputError, load_lfts, load_topology
from osmoffset.model import ORDERS
from osmoffset.pathsl import load_path_sls
from osmoffset.progress import Progress
from osmoffset.report import compare_text, format_text, write_csv


def parse_args(argv):
    ap = argparse.ArgumentParser(
        prog="lft-analyze",
        description="Analyse unicast LFTs: validity, credit loops, port "
        "balance, LMC path diversity and a simulated MPI alltoall.",
        epilog="Valid: every host reaches every LID of every other host, "
        "and no LFT entry of any switch is broken (loop, dead end, down or "
        "unlinked port, wrong CA), whether a host route uses it today or "
        "not; switch/LID pairs with no entry that nothing forwards into "
        "(up/down routing leaves some) are counted, not faults.  "
        "Exit status: 0 valid and no credit loop; 1 invalid routing "
        "or credit loop; 2 bad input or usage.")
    ap.add_argument("--lfts", required=True, metavar="FILE",
                    help="opensm-lfts.dump or ibroute/dump_fts output")
    ap.add_argument("--topology", required=True, metavar="FILE",
                    help="opensm-subnet.lst, ibnetdiscover output or ibsim "
                    "net file")
    ap.add_argument("--path-sl", metavar="FILE",
                    help="osmoffset-path-sl.dump: the routes the plugin's "
                    "reach pass put on virtual lanes above VL0 "
                    "(reach_vls); credit loops are then looked for on each "
                    "lane with the routes its SL puts there (default: "
                    "every route on VL0)")
    ap.add_argument("--credit-loops", choices=CREDIT_SCOPES,
                    default="traffic", dest="credit_scope",
                    help="whose channel dependencies the credit-loop check "
                    "takes: 'traffic' = the routes traffic from every CA "
                    "takes (default); 'every-entry' = every LFT entry that "
                    "leads to another switch, for every LID, switch LIDs "
                    "too (management traffic to switches takes those, and "
                    "the plugin's reach pass judges its fills so); one "
                    "virtual lane, not with --path-sl")
    ap.add_argument("--lmc", type=int, metavar="N",
                    help="LMC (default: from the dumps)")
    ap.add_argument("--hostfile", metavar="FILE",
                    help="MPI rank order: an Open MPI / MPICH hostfile "
                    "('#' comments, 'host slots=N', 'host:N'), one host a "
                    "line by node description, host name or GUID "
                    "(default: --order)")
    ap.add_argument("--order", choices=ORDERS, default="leaf",
                    help="rank order without --hostfile: 'leaf' = topology "
                    "order, ranks grouped by leaf switch, leaves in the "
                    "order of their switch names (then of their first host "
                    "name), as the plugin routes "
                    "(default); 'random' = that order shuffled with --seed; "
                    "'leaf-shuffled' = each leaf's ranks together, the "
                    "leaves shuffled with --seed (as rank-order --order "
                    "leaf-shuffled writes them); 'file' = each leaf's ranks "
                    "together, the leaves in the order the topology file "
                    "first lists their switches (an ibnetdiscover dump's "
                    "or subnet.lst's).  SHARP aggregation nodes "
                    "and the CAs cabled to spines or cores (management "
                    "HCAs) get no rank: the compute "
                    "nodes, as rank-order lists them and the plugin's "
                    "stock guard scores them")
    cas = ap.add_mutually_exclusive_group()
    cas.add_argument("--spine-cas", action="store_true",
                     help="without --hostfile: the CAs on spines or cores "
                     "rank too, in their place in the leaf order (by "
                     "name: 'mgmt01' before 'node001'), as the default "
                     "was until 2026-11-28")
    cas.add_argument("--leaves-only", action="store_true",
                     help="the compute nodes only (the default; kept for "
                     "scripts)")
    ap.add_argument("--job", choices=("quarter", "half"),
                    help="simulate the alltoall of a job on a contiguous "
                    "block of 1/4 or 1/2 of the ranks of the order "
                    "(default: all ranks)")
    ap.add_argument("--job-index", type=int, default=0, metavar="K",
                    help="which block --job takes, from 0 (default 0)")
    add_version(ap, "lft-analyze")
    ap.add_argument("--json", action="store_true",
                    help="print one JSON object instead of the text report")
    ap.add_argument("--csv", metavar="FILE",
                    help="write per switch/port rows to FILE: the LIDs "
                    "each port's entries send out of it, and the routes "
                    "from every rank to every other rank's LIDs that "
                    "cross its link")
    ap.add_argument("--plot", metavar="DIR",
                    help="write PNG figures into DIR")
    ap.add_argument("--compare", metavar="LFTS2",
                    help="second LFT dump of the same fabric to compare")
    ap.add_argument("--seed", type=int, default=1,
                    help="seed of the random bisection patterns and of "
                    "--order random and leaf-shuffled (default 1)")
    ap.add_argument("--bisections", type=int, default=20, metavar="N",
                    help="number of random bisection patterns (default 20)")
    ap.add_argument("--progress", action="store_true",
                    help="show progress on stderr even when it is no tty")
    return ap.parse_args(argv)


def analyse(lfts_path, topo, args, progress, path_sls=None):
    lfts = load_lfts(lfts_path)
    an = Analysis(topo, lfts, lmc=args.lmc, hostfile=args.hostfile,
                  seed=args.seed, bisections=args.bisections,
                  progress=progress, order=args.order, job=args.job,
                  job_index=args.job_index, path_sls=path_sls,
                  credit_scope=args.credit_scope,
                  spine_cas=args.spine_cas)
    an.run()
    for w in an.warnings:
        print(f"lft-analyze: warning: {w}", file=sys.stderr)
    return an


def main(argv=None):
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.lmc is not None and not 0 <= args.lmc <= 7:
        print("lft-analyze: --lmc must be between 0 and 7", file=sys.stderr)
        return 2
    if args.hostfile and args.order != "leaf":
        print("lft-analyze: --order goes without --hostfile (the hostfile "
              "is the order)", file=sys.stderr)
        return 2
    if args.hostfile and (args.leaves_only or args.spine_cas):
        print("lft-analyze: --%s goes without --hostfile (the hostfile "
              "names the hosts)" % ("leaves-only" if args.leaves_only else
                                    "spine-cas"), file=sys.stderr)
        return 2
    if args.path_sl and args.credit_scope != "traffic":
        print("lft-analyze: --credit-loops every-entry goes without "
              "--path-sl (it takes every entry on one lane)",
              file=sys.stderr)
        return 2
    if args.job is None and args.job_index != 0:
        print("lft-analyze: --job-index goes with --job", file=sys.stderr)
        return 2
    if args.job is not None and not \
            0 <= args.job_index < {"quarter": 4, "half": 2}[args.job]:
        print(f"lft-analyze: --job-index: a {args.job} job is block 0 to "
              f"{ {'quarter': 3, 'half': 1}[args.job]}, not "
              f"{args.job_index}", file=sys.stderr)
        return 2
    if args.bisections < 0:
        print("lft-analyze: --bisections must be >= 0", file=sys.stderr)
        return 2
    progress = Progress(args.progress or sys.stderr.isatty())
    try:
        topo = load_topology(args.topology)
        sls = load_path_sls(args.path_sl) if args.path_sl else None
        an = analyse(args.lfts, topo, args, progress, sls)
        an2 = analyse(args.compare, topo, args, progress) \
            if args.compare else None
        res = an.result
        if an2 is not None:
            res = dict(res)
            res["compare"] = an2.result
        if args.csv:
            write_csv(args.csv, an, an2)
        if args.plot:
            from osmoffset import plot
            files = plot.write_plots(args.plot, an, an2, args.lfts,
                                     args.compare)
            res["plots"] = files
    except InputError as e:
        progress.done()
        print(f"lft-analyze: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        progress.done()
        print(f"lft-analyze: {e.filename or ''}: {e.strerror}",
              file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        progress.done()
        return 130
    if args.json:
        json.dump(res, sys.stdout, indent=1, sort_keys=False)
        sys.stdout.write("\n")
    else:
        print(format_text(an.result, args.lfts))
        if an2 is not None:
            print()
            print(format_text(an2.result, args.compare))
            print()
            print(compare_text(an.result, an2.result))
        if args.csv:
            print(f"wrote {args.csv}")
        for f in res.get("plots", []):
            print(f"wrote {f}")
    bad = lambda r: (not r["valid"]) or r["credit_loop"]  # noqa: E731
    return 1 if bad(an.result) or (an2 is not None and bad(an2.result)) \
        else 0


