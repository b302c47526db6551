"""bench-routing: routing time, memory and LFT churn of OpenSM's engines.

The measurements are osmoffset.routingbench; this is the command line.
"""

import json
import os
import shlex
import shutil
import sys
import tempfile
import time

from osmoffset import runner
from osmoffset.cli import (add_version, doc_parser, os_error_text,
                           tool_parser)
from osmoffset.routingbench import (DEFAULT_ENGINES, DUMP_LIMIT, ENGINES,
                                    FABRICS, PROG, BenchError, Cell,
                                    ensure_fabric, load_net, machine_facts,
                                    text_table, write_doc)

HELP = """Measure routing time, memory and LFT churn of OpenSM routing engines.

For every fabric x LMC x engine ("cell") bench-routing starts a private
ibsim and ONE daemon OpenSM (-s 0: no periodic sweeps) against it and
measures, from the OpenSM log (-D 0x07 or 0x47) and /proc:

  route_s     first heavy sweep: time from the first "building routing
              with" line to the next "<engine> tables configured on all
              switches" line (a fallback engine's attempt is included)
  rss_mb      peak RSS of opensm over the whole cell (VmHWM)
  reroute_s   the same span for the first routing after one inter-switch
              link is unplugged (ibsim console Unlink; OpenSM reacts to the
              switches' trap 128, or to a SIGHUP if it does not within
              --nudge seconds)
  fail_blocks / fail_entries
              64-LID LFT blocks (over all switches) and LFT entries that
              differ between the tables before and after the failure
  resweep_blocks
              blocks that differ after a SIGHUP heavy sweep of the
              unchanged fabric (OpenSM only sends changed blocks; 0 = the
              engine is deterministic)

The unplugged link is the same for every engine: the first switch-facing
port of the first leaf switch (in net file order) that is not the SM's.

LFTs are taken from opensm-lfts.dump (--lfts dump, needs -D 0x47, which
also makes OpenSM write its LID matrix and fdbs dumps on every sweep) or
read back from the simulated switches with dump_fts (--lfts switches).
The default (auto) uses the dump for fabrics of at most 2,000,000 LFT
entries and the switches above that.  The LFT files are kept in each
cell's directory as lfts-before, lfts-after-failure, lfts-resweep.

Engines (--engines):
  updn              stock updn, with the net file's '# updn-root' GUIDs
                    as root_guid_file (as osm-sim --roots auto)
  minhop            stock minhop
  ftree, dfsssp     stock, OpenSM may fall back to minhop: engine_used
                    says what routed
  osmoffset         updn + osmoffset plugin, port_offsetting=on
  osmoffset-minhop  minhop + osmoffset plugin, port_offsetting=on
  osmoffset-noguard updn + osmoffset plugin, port_offsetting=on
                    stock_guard=off (no stock LFT build to compare with)

Fabrics (--fabrics), generated with gen-fabric into
--fabric-dir when missing:
  648     ft2-648.net    2-level fat tree, 36 leaves x 18 hosts, 18 spines
  5832    kary-18-3.net  18-ary 3-tree, 972 switches
  11664   ft3-36.net     3-level fat tree of radix-36 switches, 1620
                         switches (sequential GUIDs: with random GUIDs
                         OpenSM runs out of unicast LIDs at LMC 2)

A cell that fails or times out says so in its row; the run goes on.

Example:
  bench-routing --quick --json
  bench-routing --lmc 0,2 --out /tmp/br --doc docs/speed.md
"""


Parser = tool_parser(PROG)


def build_parser():
    p = doc_parser(PROG, HELP, parser_class=Parser)
    p.add_argument("--fabrics", default="648,5832,11664", metavar="LIST",
                   help="fabrics by host count: 648, 5832, 11664 "
                        "(default all)")
    p.add_argument("--net", action="append", default=[], metavar="FILE",
                   help="benchmark this net file instead of the standard "
                        "fabrics (repeatable)")
    p.add_argument("--lmc", default="0,2", metavar="LIST",
                   help="LMC values (default 0,2)")
    p.add_argument("--engines", default=DEFAULT_ENGINES, metavar="LIST",
                   help="engines (default %s)" % DEFAULT_ENGINES)
    p.add_argument("--repeat", type=int, default=1, metavar="N",
                   help="run every cell N times, report the minimum routing "
                        "time (and the other figures of that run)")
    p.add_argument("--quick", action="store_true",
                   help="the 648-host fabric only")
    p.add_argument("--fabric-dir", default=os.path.join(
        tempfile.gettempdir(), "osmoffset-bench-fabrics"), metavar="DIR",
        help="cache of generated fabrics (default %(default)s)")
    p.add_argument("--out", metavar="DIR",
                   help="keep every cell's logs and LFT files here (default: "
                        "a temporary directory, removed)")
    p.add_argument("--doc", metavar="FILE",
                   help="write the markdown table, command line and machine "
                        "facts to FILE (e.g. docs/speed.md)")
    p.add_argument("--json", action="store_true",
                   help="print the full report as JSON")
    p.add_argument("--lfts", choices=("auto", "dump", "switches", "none"),
                   default="auto",
                   help="where LFTs come from: opensm-lfts.dump (-D 0x47) or "
                        "the simulated switches (dump_fts); auto = dump up "
                        "to %d LFT entries; none = do not compare LFTs"
                        % DUMP_LIMIT)
    p.add_argument("--lfts-max-entries", type=int, metavar="N",
                   help="skip the LFT comparisons of cells with more than N "
                        "LFT entries (switches x LIDs); reading 86 M "
                        "entries back from ibsim takes about 6 minutes")
    runner.add_plugin_dir(p)
    p.add_argument("--timeout", type=float, default=1800.0, metavar="SEC",
                   help="limit per cell (default 1800)")
    p.add_argument("--nudge", type=float, default=20.0, metavar="SEC",
                   help="SIGHUP OpenSM when it has not rerouted SEC seconds "
                        "after the link failure (default 20)")
    p.add_argument("--quiet", type=float, default=2.0, metavar="SEC",
                   help="a sweep has settled when the log is quiet this "
                        "long after SUBNET UP (default 2)")
    add_version(p, PROG)
    return p


def parse_list(text, opt, conv=str):
    out = []
    for x in text.split(","):
        x = x.strip()
        if not x:
            continue
        try:
            out.append(conv(x))
        except ValueError:
            raise BenchError("%s: bad value %r" % (opt, x), 2)
    if not out:
        raise BenchError("%s: empty list" % opt, 2)
    return out


def run(args, argv):
    t0 = time.monotonic()
    lmcs = parse_list(args.lmc, "--lmc", int)
    for v in lmcs:
        if not 0 <= v <= 7:
            raise BenchError("--lmc: %d is not 0..7" % v, 2)
    engines = parse_list(args.engines, "--engines")
    for e in engines:
        if e not in ENGINES:
            raise BenchError("--engines: unknown engine %r (known: %s)"
                             % (e, ", ".join(ENGINES)), 2)
    if args.repeat < 1:
        raise BenchError("--repeat must be >= 1", 2)
    if args.timeout <= 0:
        raise BenchError("--timeout must be > 0", 2)
    nets = []
    if args.net:
        for n in args.net:
            if not os.path.isfile(n):
                raise BenchError("--net %s: no such file" % n, 2)
            load_net(n)
            nets.append((os.path.basename(n).rsplit(".", 1)[0],
                         os.path.abspath(n)))
    else:
        keys = ["648"] if args.quick else parse_list(args.fabrics,
                                                     "--fabrics")
        for k in keys:
            if k not in FABRICS:
                raise BenchError("--fabrics: unknown fabric %r (known: %s)"
                                 % (k, ", ".join(FABRICS)), 2)
        for k in keys:
            nets.append((k, ensure_fabric(k, args.fabric_dir)))
    try:
        runner.require_tools(("ibsim", "opensm", "dump_fts"), hint="")
        plugin_dir = None
        if any(ENGINES[e][1] != "stock" for e in engines):
            plugin_dir, origin = runner.resolve_plugin_dir(args.plugin_dir)
            runner.check_plugin_dir(plugin_dir, origin)
    except runner.RunError as exc:
        raise BenchError(str(exc), exc.status)
    tmp = None
    if args.out:
        out = os.path.abspath(args.out)
        os.makedirs(out, exist_ok=True)
    else:
        out = tmp = tempfile.mkdtemp(prefix="bench-routing-")
    cells = []
    try:
        for key, net in nets:
            for lmc in lmcs:
                for eng in engines:
                    best = None
                    for rep in range(args.repeat):
                        d = os.path.join(out, "%s-lmc%d-%s%s" % (
                            key, lmc, eng,
                            "" if args.repeat == 1 else "-r%d" % rep))
                        res = Cell(args, net, key, lmc, eng, d,
                                   plugin_dir).run()
                        res["dir"] = d
                        if best is None or (
                                res.get("route_s") is not None and
                                (best.get("route_s") is None or
                                 res["route_s"] < best["route_s"])):
                            best = res
                    best["repeat"] = args.repeat
                    cells.append(best)
                    if args.out:
                        # partial results survive an interrupted run
                        with open(os.path.join(out, "report.json"),
                                  "w") as f:
                            json.dump({"command": argv, "cells": cells,
                                       "complete": False}, f, indent=1,
                                      sort_keys=True)
                    sys.stderr.write("%s: %s lmc %d %s: %s\n" % (
                        PROG, key, lmc, eng, best["status"] if
                        best["status"] != "ok" else "route %.3f s" %
                        best["route_s"]))
                    sys.stderr.flush()
    finally:
        if tmp:
            shutil.rmtree(tmp, ignore_errors=True)
    report = {"command": " ".join(shlex.quote(x) for x in
                                  ["scripts/bench-routing"] + argv),
              "machine": machine_facts(), "cells": cells,
              "wall_s": round(time.monotonic() - t0, 1),
              "out": out if args.out else None}
    if args.doc:
        write_doc(args.doc, report)
    if args.out:
        with open(os.path.join(out, "report.json"), "w") as f:
            json.dump(dict(report, complete=True), f, indent=1,
                      sort_keys=True)
    return report


def main(argv=None):
    if argv is None:
        argv = sys.argv[1:]
    args = build_parser().parse_args(argv)
    # a run takes an hour: it survives the end of its terminal session
    runner.catch_signals(hup=False)
    try:
        report = run(args, argv)
    except BenchError as exc:
        sys.stderr.write("%s: %s\n" % (PROG, exc))
        return exc.status
    except OSError as exc:
        sys.stderr.write("%s: %s\n" % (PROG, os_error_text(exc)))
        return 1
    except (KeyboardInterrupt, runner.Interrupted) as exc:
        sys.stderr.write("%s: interrupted (%s); ibsim and opensm stopped\n"
                         % (PROG, exc or "SIGINT"))
        return 130
    if args.json:
        json.dump(report, sys.stdout, indent=1, sort_keys=True)
        sys.stdout.write("\n")
    else:
        print(text_table(report["cells"]))
        print("total wall time %.1f s" % report["wall_s"])
    return 0 if all(c["status"] == "ok" for c in report["cells"]) else 1
