# alltoall-ab - A/B test of LMC and port offsetting with an MPI alltoall
#
# Copyright (c) 2026 The osmoffset authors.
#
# This software is available to you under the terms of the GNU General
# Public License (GPL) Version 2 or the OpenIB.org BSD license; see COPYING.
"""A/B test LMC and port_offsetting with an MPI alltoall benchmark.

Four modes:

A/B run on a real fabric (default).  For each configuration of the matrix
--engines x --lmc x --offsetting it
  1. rewrites the OpenSM configuration file (--opensm-conf): `lmc`,
     `routing_engine`, `event_plugin_name` (osmoffset added) and
     `event_plugin_options` (port_offsetting=X); every other line is kept
     byte for byte;
  2. restarts the SM (--restart-cmd) and waits until the subnet is up
     (--wait-cmd, default: sminfo reports a master SM and ibstat shows the
     local ports Active with the new LMC), then --settle seconds;
  3. dumps the LFTs (--dump-cmd) and the topology (--topo-cmd) and checks
     them with lft-analyze (valid routing, no credit loop, the LMC
     really applied);
  4. runs the benchmark a2a-bench (bench/alltoall/a2a-bench.c; --bench,
     else $OSMOFFSET_A2A_BENCH, the source tree's or the installed build,
     a2a-bench on PATH, else built with mpicc into --build-dir) through
     srun or mpirun --hostfile, --repeat times.
The original file is put back at the end, after a failure and after
SIGINT/SIGTERM/SIGHUP, and the SM is restarted with it.  Before the first
change a backup copy is written beside the file (CONF.alltoall-ab.bak); it
is removed once the restored file is verified byte-identical (kept with
--keep-backup).  A backup left by a killed run makes the next run refuse
to start until the admin has dealt with it.
The results go to --out DIR: per configuration a directory with the
configuration file used, the dumps, analyze.json and the benchmark CSVs;
results.csv (one row per configuration and size), slowdown.csv (% slower
than LMC 0 with port_offsetting off, per size), summary.json and PNG plots
slowdown-ENGINE.png and time-ENGINE.png.
Commands run through /bin/sh with these variables set: A2A_AB_CONFIG
(configuration name), A2A_AB_ENGINE, A2A_AB_LMC, A2A_AB_OFFSETTING,
A2A_AB_CONF (the OpenSM file), A2A_AB_DIR (the configuration's directory).

--predict: the same matrix on an ibsim fabric (--net FILE) with
osm-sim; prints the slowdown against LMC 0 / port_offsetting off
that lft-analyze's simulated alltoall predicts (shift.base = every rank
uses the base LID, shift.spread = traffic spread over all LIDs).  Time is
taken as inversely proportional to the efficiency, so
  predicted_slowdown = (efficiency of the baseline / efficiency - 1) * 100
in percent (negative = faster than the baseline), and, by the per-round
model, as proportional to the sum over rounds of the largest link load
(lft-analyze's mean_max_load):
  predicted_slowdown_rounds = (mean_max_load / that of the baseline - 1)
  * 100
The second is what a round-by-round MPI_Alltoall takes; on the full trees
it is within 1 % of the simulated one (--simulate), the first 20-25 %
low (docs/simulated-alltoall.md).

--simulate: the same matrix (or your own OpenSM dumps, --dumps) in
simulation: every variant's LFTs become a SimGrid platform (one link per
cable direction, rates from the topology where it says, every host pair
routed switch by switch through the LFT entry of the destination's LID),
and a2a-bench, built with SimGrid's smpicc, runs under smpirun with the
ring alltoall (--smpi-alltoall) in each rank order of --order (leaf =
routing order, random, guid, or a hostfile) and for each LID offset of
--lid-offsets (traffic of offset k goes to base LID + k: 0 = an MPI that
ignores LMC; 0..2^LMC-1 = the path sets an MPI that stripes uses).  The
table gives per row the alltoall time per size and the slowdown against
LMC 0 / port_offsetting off (same engine, rank order), the slowdown the
per-round model of the ring schedule predicts (pylib/osmoffset/schedule.py)
and the one lft-analyze's efficiency predicts, the rank order's cost
against the first order, and the wall time and memory of the simulation.
SMPI models flow-level bandwidth sharing (max-min fair shares of every
link), not InfiniBand's credit-based flow control nor head-of-line
blocking: under contention a real fabric is at best as fast.  Needs
smpirun and smpicc (apt-get install libsimgrid-dev).

--local-ranks N: builds the benchmark if needed (into --build-dir) and
runs it with N ranks over shared memory on this machine; prints the CSV.

Exit status: 0 success, 1 a step failed (the configuration file is
restored), 2 bad usage or input, 130/143 interrupted by SIGINT/SIGTERM.

Examples:
  alltoall-ab --launcher srun --np 64 --launcher-args "-N 64" --out ab1
  alltoall-ab --launcher mpirun --hostfile hosts --np 64 --dry-run
  alltoall-ab --predict --net sim-topologies/kary-4-3.net --lmc 0,1,2
  alltoall-ab --simulate --net sim-topologies/kary-4-3.net --lmc 0,2 \
      --order leaf,random --sizes 64K,1M
  alltoall-ab --simulate --dumps stock=/tmp/stock --dumps ours=/tmp/ours \
      --lid-offsets 0,1
  alltoall-ab --local-ranks 4 --sizes 8,1K,64K
"""

import json
import os
import shlex
import signal
import sys
import tempfile
import time

from osmoffset.alltoall import (Interrupted, StepError, UsageError,
                                on_signal, say, set_progress, warn,
                                work_dir)
from osmoffset.alltoall import abrun, bench, launch, plots, predict, \
    results, simulate
from osmoffset.alltoall.matrix import DEFAULT_SIZES, args_matrix, \
    parse_sizes
from osmoffset.alltoall.procs import run_cmd, run_step, shell_join, which
from osmoffset.alltoall.smconf import ConfGuard
from osmoffset.alltoall.subnet import wait_subnet
from osmoffset.cli import add_version, doc_parser

PROG = "alltoall-ab"


def build_parser():
    p = doc_parser(PROG, __doc__)
    add_version(p, PROG)
    m = p.add_argument_group("matrix")
    m.add_argument("--engines", default="updn", metavar="LIST",
                   help="routing engines, e.g. updn,minhop (default updn)")
    m.add_argument("--lmc", default="0,1,2", metavar="LIST",
                   help="LMC values (default 0,1,2; 0 is always run: it is "
                        "the baseline)")
    m.add_argument("--offsetting", default="off,on", metavar="LIST",
                   help="port_offsetting values: off, on, coordinated, "
                        "plain (default off,on; off is always run)")
    b = p.add_argument_group("benchmark")
    b.add_argument("--sizes", metavar="LIST",
                   help="message sizes per peer (default 8 B to 1 MiB, "
                        "powers of 2; K and M suffixes allowed)")
    b.add_argument("--iters", type=int, metavar="N",
                   help="timed iterations per size (benchmark default: 100, "
                        "20 above 64K)")
    b.add_argument("--warmup", type=int, metavar="N",
                   help="untimed iterations per size")
    b.add_argument("--pattern", choices=("alltoall", "shift"),
                   default="alltoall",
                   help="MPI_Alltoall (default) or shift rounds of "
                        "MPI_Sendrecv (the lft-analyze model)")
    b.add_argument("--repeat", type=int, default=1, metavar="N",
                   help="benchmark runs per configuration; the median of "
                        "their medians is used (default 1)")
    b.add_argument("--bench", metavar="PATH",
                   help="benchmark binary (default: $OSMOFFSET_A2A_BENCH, "
                        "the built or installed a2a-bench, else build "
                        "a2a-bench.c into --build-dir)")
    b.add_argument("--build-dir", metavar="DIR",
                   help="where to build the benchmark when there is no "
                        "built one (default OUT/build; "
                        "with --local-ranks a per-user directory under "
                        "%s)" % tempfile.gettempdir())
    b.add_argument("--mpicc", default=os.environ.get("MPICC", "mpicc"),
                   help="MPI C compiler (default $MPICC or mpicc)")
    b.add_argument("--bench-timeout", type=float, default=1800.0,
                   metavar="SEC", help="limit per benchmark run "
                   "(default 1800)")
    la = p.add_argument_group("launcher (A/B mode)")
    la.add_argument("--launcher", choices=("srun", "mpirun"),
                    help="srun or mpirun --hostfile")
    la.add_argument("--hostfile", metavar="FILE",
                    help="mpirun hostfile (required with --launcher mpirun)")
    la.add_argument("--np", type=int, metavar="N",
                    help="number of ranks (srun -n / mpirun -np)")
    la.add_argument("--launcher-args", default="", metavar="ARGS",
                    help="extra launcher arguments, one shell-quoted string "
                         "(e.g. \"-N 64 --ntasks-per-node=1\")")
    sm = p.add_argument_group("subnet manager (A/B mode)")
    sm.add_argument("--opensm-conf", default="/etc/opensm/opensm.conf",
                    metavar="FILE", help="OpenSM configuration file "
                    "(default /etc/opensm/opensm.conf)")
    sm.add_argument("--restart-cmd", default="systemctl restart opensm",
                    metavar="CMD", help="restarts the SM (default "
                    "'systemctl restart opensm')")
    sm.add_argument("--wait-cmd", metavar="CMD",
                    help="repeated until it exits 0 = subnet up (default: "
                         "sminfo + ibstat/ibv_devinfo checks)")
    sm.add_argument("--wait-timeout", type=float, default=300.0,
                    metavar="SEC", help="limit for the subnet to come up "
                    "(default 300)")
    sm.add_argument("--settle", type=float, default=10.0, metavar="SEC",
                    help="pause after the subnet is up (default 10)")
    sm.add_argument("--dump-cmd", default="dump_fts", metavar="CMD",
                    help="prints the LFTs (default dump_fts)")
    sm.add_argument("--topo-cmd", default="ibnetdiscover", metavar="CMD",
                    help="prints the topology (default ibnetdiscover)")
    sm.add_argument("--analyze-hostfile", metavar="FILE",
                    help="rank order for lft-analyze (node descriptions or "
                         "GUIDs, one per line)")
    sm.add_argument("--no-check", action="store_true",
                    help="skip the dump + lft-analyze step")
    sm.add_argument("--keep-backup", action="store_true",
                    help="keep CONF.alltoall-ab.bak after the restore")
    sm.add_argument("--no-final-restart", action="store_true",
                    help="restore the file but do not restart the SM")
    p.add_argument("--out", metavar="DIR",
                   help="output directory (default alltoall-ab-DATE-TIME; "
                        "with --predict: keep the osm-sim runs there)")
    p.add_argument("--dry-run", action="store_true",
                   help="print every action, change nothing")
    pr = p.add_argument_group("prediction")
    pr.add_argument("--predict", action="store_true",
                    help="predict the slowdowns on an ibsim fabric")
    pr.add_argument("--net", metavar="FILE", help="ibsim net file")
    pr.add_argument("--jobs", type=int, default=2, metavar="N",
                    help="osm-sim runs at a time (default 2)")
    si = p.add_argument_group("simulation (SimGrid SMPI)")
    si.add_argument("--simulate", action="store_true",
                    help="run a2a-bench under smpirun over the routes of "
                         "each variant")
    si.add_argument("--dumps", action="append", default=[],
                    metavar="NAME=DIR",
                    help="a variant from existing OpenSM dumps instead of "
                         "--net: DIR holds opensm-lfts.dump and "
                         "opensm-subnet.lst (or NAME=LFTS,TOPOLOGY); "
                         "repeatable, the first is the baseline")
    si.add_argument("--order", default="leaf", metavar="LIST",
                    help="rank orders: leaf (routing order), random "
                         "(--seed), guid (port GUID order) or a hostfile; "
                         "comma-separated (default leaf)")
    si.add_argument("--seed", type=int, default=1, metavar="S",
                    help="seed of the random order (default 1)")
    si.add_argument("--lid-offsets", default="0", metavar="LIST",
                    help="send to base LID + k for each k (e.g. 0,1 or "
                         "all; offsets >= 2^LMC are skipped; default 0)")
    si.add_argument("--smpi-alltoall", choices=("ring", "pair"),
                    default="ring", help="SMPI's alltoall algorithm: ring "
                    "(shift rounds, default) or pair (XOR, power-of-two "
                    "ranks)")
    si.add_argument("--link-rate", type=float, default=100.0,
                    metavar="GBPS", help="data rate of links whose rate the "
                    "topology does not give, Gbit/s (default 100)")
    si.add_argument("--latency", type=float, default=150.0, metavar="NS",
                    help="latency per link (cable + switch), ns "
                    "(default 150)")
    si.add_argument("--smpicc", default=os.environ.get("SMPICC", "smpicc"),
                    help="SimGrid's MPI compiler (default $SMPICC or "
                         "smpicc); --bench gives a binary built with it")
    si.add_argument("--keep-platform", action="store_true",
                    help="keep each platform.xml (large: one route per "
                         "host pair)")
    si.add_argument("--no-analyze", action="store_true",
                    help="do not run lft-analyze for its prediction")
    lo = p.add_argument_group("local run")
    lo.add_argument("--local-ranks", type=int, metavar="N",
                    help="run the benchmark with N ranks on this machine")
    lo.add_argument("--csv", metavar="FILE",
                    help="also write the local CSV (with --simulate: the "
                         "simulated table) to FILE")
    p.add_argument("--json", action="store_true",
                   help="print JSON (--predict, --simulate, and the A/B "
                        "summary)")
    return p


# ----------------------------------------------------------------------
# A/B mode
# ----------------------------------------------------------------------

def check_ab_args(args):
    if not args.launcher:
        raise UsageError("--launcher srun|mpirun is required (or use "
                         "--predict / --local-ranks)")
    if args.launcher == "mpirun":
        if not args.hostfile:
            raise UsageError("--launcher mpirun needs --hostfile FILE")
        if not os.path.isfile(args.hostfile):
            raise UsageError("--hostfile %s: no such file" % args.hostfile)
    elif args.hostfile:
        raise UsageError("--hostfile is for --launcher mpirun; give srun "
                         "options with --launcher-args")
    try:
        shlex.split(args.launcher_args)
    except ValueError as exc:
        raise UsageError("--launcher-args: %s" % exc)
    for opt in ("np", "repeat", "iters"):
        v = getattr(args, opt)
        if v is not None and v < 1:
            raise UsageError("--%s must be >= 1" % opt)
    if args.warmup is not None and args.warmup < 0:
        raise UsageError("--warmup must be >= 0")
    if args.analyze_hostfile and not os.path.isfile(args.analyze_hostfile):
        raise UsageError("--analyze-hostfile %s: no such file"
                         % args.analyze_hostfile)
    if not args.dry_run and not which(args.launcher):
        raise UsageError("%s not found in PATH" % args.launcher)


def run_config(args, guard, cfg, d, bench_path, sizes, checks):
    """Configure, restart, wait, check and measure one configuration;
    returns its combined benchmark rows (None when dry)."""
    dry = args.dry_run
    if not dry:
        os.makedirs(d, exist_ok=True)
    env = {"A2A_AB_CONFIG": cfg["name"], "A2A_AB_ENGINE": cfg["engine"],
           "A2A_AB_LMC": str(cfg["lmc"]),
           "A2A_AB_OFFSETTING": cfg["port_offsetting"],
           "A2A_AB_CONF": guard.path, "A2A_AB_DIR": d}
    env.update(launch.mpi_env())
    text = guard.apply(cfg["lmc"], cfg["engine"], cfg["port_offsetting"])
    if not dry:
        with open(os.path.join(d, "opensm.conf"), "w") as f:
            f.write(text)
    run_step("restart SM", args.restart_cmd, env, dry, 600,
             err_path=None if dry else os.path.join(d, "restart.log"))
    if dry:
        say("would wait for the subnet: %s (at most %g s), then %g s" % (
            args.wait_cmd or "sminfo + ibstat, LMC %d" % cfg["lmc"],
            args.wait_timeout, args.settle))
    else:
        wait_subnet(cfg["lmc"], env, args.wait_cmd, args.wait_timeout,
                    args.settle)
    if not args.no_check:
        c = abrun.check_lfts(cfg, d, env, dry, args.dump_cmd, args.topo_cmd,
                             args.analyze_hostfile, args.opensm_conf)
        if c:
            checks[cfg["name"]] = c
            say("  routing valid; simulated alltoall efficiency base "
                "%.3f, spread %.3f" % (c["base_efficiency"],
                                       c["spread_efficiency"]))

    def bench_cmd(csv_path):
        return launch.launcher_cmd(
            args.launcher, bench_path, bench.bench_args(
                csv_path, args.pattern, sizes, args.iters, args.warmup),
            args.np, args.launcher_args, args.hostfile)
    return abrun.run_bench(d, env, dry, args.repeat, args.bench_timeout,
                           bench_cmd, sizes)


def ab_mode(args):
    dry = args.dry_run
    configs, added = args_matrix(args)
    sizes = parse_sizes(args.sizes) if args.sizes else list(DEFAULT_SIZES)
    check_ab_args(args)
    out = os.path.abspath(args.out or time.strftime(
        "alltoall-ab-%Y%m%d-%H%M%S"))
    guard = ConfGuard(args.opensm_conf, dry)
    if added:
        say("note: %s added to the matrix (the baseline)"
            % " and ".join(added))
    say("%d configurations: %s" % (len(configs), ", ".join(
        c["name"] for c in configs)))
    if not dry:
        if os.path.exists(out) and os.listdir(out):
            raise UsageError("--out %s exists and is not empty" % out)
        try:
            os.makedirs(out, exist_ok=True)
        except OSError as exc:
            raise UsageError("--out %s: %s" % (out, exc.strerror))
    else:
        say("would create %s" % out)
    bench_path = bench.mpi_bench(args.bench, args.build_dir or os.path.join(
        out, "build"), args.mpicc, dry)
    say("benchmark: %s (every rank runs it at this path)" % bench_path)
    res, checks = {}, {}
    with guard.session(args.restart_cmd, args.keep_backup,
                       not args.no_final_restart) as run:
        for n, cfg in enumerate(configs, 1):
            say("[%d/%d] %s" % (n, len(configs), cfg["name"]))
            rows = run_config(args, guard, cfg, os.path.join(
                out, cfg["name"]), bench_path, sizes, checks)
            if rows:
                res[cfg["name"]] = rows
    if dry:
        say("dry run: nothing was changed")
        return 0
    summary = {"out": out, "configs": configs, "checks": checks,
               "complete": run.failure is None, "restored": run.restored}
    if res:
        _rows, others, table = results.write_results(out, configs, res,
                                                     checks)
        say(results.format_slowdown(others, table))
        summary["slowdown"] = table
        summary["plots"] = plots.write_plots(out, configs, res)
        for f in summary["plots"]:
            say("wrote %s" % f)
    with open(os.path.join(out, "summary.json"), "w") as f:
        json.dump(summary, f, indent=1)
        f.write("\n")
    if args.json:
        json.dump(summary, sys.stdout, indent=1)
        sys.stdout.write("\n")
    say("results in %s" % out)
    if run.failure is not None:
        raise run.failure
    return 0 if run.restored else 1


# ----------------------------------------------------------------------
# --predict, --simulate, --local-ranks
# ----------------------------------------------------------------------

def predict_mode(args):
    if not args.net:
        raise UsageError("--predict needs --net FILE")
    if not os.path.isfile(args.net):
        raise UsageError("--net %s: no such file" % args.net)
    if args.jobs < 1:
        raise UsageError("--jobs must be >= 1")
    configs, _added = args_matrix(args)
    net = os.path.abspath(args.net)
    if args.dry_run:
        for cfg in configs:
            say("would run: osm-sim --net %s --lmc %d --engine %s "
                "--port-offsetting %s; lft-analyze --json" % (
                    net, cfg["lmc"], cfg["engine"], cfg["port_offsetting"]))
        return 0
    base_dir, tmp = work_dir(args.out, "alltoall-ab-predict-")
    try:
        rows = predict.predict(net, configs, base_dir, args.jobs)
    finally:
        if tmp:
            tmp.cleanup()
    if args.json:
        json.dump({"net": net, "baseline": "lmc 0, port_offsetting off",
                   "slowdown_unit": "percent", "rows": rows},
                  sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    for line in predict.format_rows(rows, args.net):
        say(line)
    return 0


def simulate_mode(args):
    doc = simulate.run(args)
    if doc is None:
        return 0
    if args.csv:
        simulate.write_csv(args.csv, doc)
    if args.json:
        json.dump(doc, sys.stdout, indent=1)
        sys.stdout.write("\n")
        return 0
    for line in simulate.format_text(doc, args.net or ", ".join(args.dumps)):
        say(line)
    return 0


def local_mode(args):
    n = args.local_ranks
    if n < 2:
        raise UsageError("--local-ranks must be >= 2")
    sizes = parse_sizes(args.sizes) if args.sizes else None
    if args.iters is not None and args.iters < 1:
        raise UsageError("--iters must be >= 1")
    if args.warmup is not None and args.warmup < 0:
        raise UsageError("--warmup must be >= 0")
    mpirun = which("mpirun")
    if not mpirun and not args.dry_run:
        raise UsageError("mpirun not found: install an MPI (e.g. "
                         "openmpi-bin libopenmpi-dev)")
    build_dir = args.build_dir or os.path.join(
        tempfile.gettempdir(), "osmoffset-a2a-%d" % os.getuid())
    bench_path = bench.mpi_bench(args.bench, build_dir, args.mpicc,
                                 args.dry_run)
    extra = launch.local_mpirun_args(
        n, args.dry_run or launch.is_openmpi(mpirun))
    with tempfile.TemporaryDirectory(prefix="alltoall-ab-local-") as tmp:
        path = os.path.join(tmp, "bench.csv")
        cmd = [mpirun or "mpirun"] + extra + [bench_path] + \
            bench.bench_args(path, args.pattern, sizes, args.iters,
                             args.warmup)
        if args.dry_run:
            say("would run: " + shell_join(cmd))
            return 0
        status, out = run_cmd(cmd, env=launch.mpi_env(),
                              timeout=args.bench_timeout)
        if status != 0:
            raise StepError("benchmark failed (exit %s): %s\n%s" % (
                status, shell_join(cmd), out.strip()[-2000:]))
        bench.read_csv(path, sizes)
        with open(path) as f:
            text = f.read()
    if args.csv:
        try:
            with open(args.csv, "w") as f:
                f.write(text)
        except OSError as exc:
            raise UsageError("--csv %s: %s" % (args.csv, exc.strerror))
    sys.stdout.write(text)
    return 0


# ----------------------------------------------------------------------

def main(argv=None):
    args = build_parser().parse_args(argv)
    for sig in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP):
        signal.signal(sig, on_signal)
    set_progress("stderr" if args.json and not args.predict else "stdout",
                 PROG)
    try:
        modes = [m for m, on in (("--predict", args.predict),
                                 ("--simulate", args.simulate),
                                 ("--local-ranks",
                                  args.local_ranks is not None)) if on]
        if len(modes) > 1:
            raise UsageError("%s exclude each other" % " and ".join(modes))
        if args.predict:
            return predict_mode(args)
        if args.simulate:
            return simulate_mode(args)
        if args.local_ranks is not None:
            return local_mode(args)
        return ab_mode(args)
    except UsageError as exc:
        warn(str(exc))
        return 2
    except StepError as exc:
        warn(str(exc))
        return 1
    except Interrupted as exc:
        warn("interrupted by signal %d" % exc.signum)
        return 128 + exc.signum
    except KeyboardInterrupt:
        warn("interrupted")
        return 130
