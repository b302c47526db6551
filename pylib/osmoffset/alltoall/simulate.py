"""--simulate: a2a-bench built with smpicc runs under SimGrid's smpirun
over the exact LFTs of each variant.

A variant is an osm-sim run of the A/B matrix on an ibsim fabric (--net)
or a pair of OpenSM dumps (--dumps NAME=DIR).  For each variant, rank
order (--order: leaf, random, guid or a hostfile read by
osmoffset.rankorder.read_hostfile) and LID offset (--lid-offsets) it
writes a SimGrid platform (osmoffset.simgrid), models the ring schedule
(osmoffset.schedule), optionally asks lft-analyze for its efficiency, and
runs the benchmark.  run() returns the document alltoall-ab --simulate
--json prints; bench-simulate calls it for its cases.
"""

import csv
import json
import os
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import List, Optional

from . import StepError, UsageError, say, warn, work_dir
from .bench import SMPI_NAME, find_bench, smpi_bench
from .matrix import args_matrix, parse_int_list, parse_sizes
from .predict import osm_sim_run
from .procs import run_cmd, tool, which
from .. import fabric, rankorder, routes, simgrid

DEFAULT_SIZES = [64 << 10, 1 << 20]


@dataclass
class SimOptions:
    """The options of a simulation, named and defaulted as alltoall-ab's
    (list options are the option texts; an argparse namespace of
    alltoall-ab serves as well)."""
    net: Optional[str] = None
    dumps: List[str] = field(default_factory=list)
    engines: str = "updn"
    lmc: str = "0,1,2"
    offsetting: str = "off,on"
    sizes: Optional[str] = None
    iters: Optional[int] = None
    warmup: Optional[int] = None
    pattern: str = "alltoall"
    jobs: int = 2
    link_rate: float = 100.0
    latency: float = 150.0
    order: str = "leaf"
    seed: int = 1
    lid_offsets: str = "0"
    smpi_alltoall: str = "ring"
    smpicc: str = "smpicc"
    bench: Optional[str] = None
    build_dir: Optional[str] = None
    bench_timeout: float = 1800.0
    out: Optional[str] = None
    dry_run: bool = False
    keep_platform: bool = False
    no_analyze: bool = False


def sim_variants(args, base_dir):
    """Variants to simulate: dicts with name, lfts, topology and, for
    --net, engine/lmc/port_offsetting.  Routes --net with osm-sim."""
    if args.dumps:
        if args.net:
            raise UsageError("--dumps and --net exclude each other")
        out, names = [], set()
        for spec in args.dumps:
            name, eq, where = spec.partition("=")
            if not eq or not re.match(r"^[A-Za-z0-9_.+-]+$", name) or \
                    not where:
                raise UsageError("--dumps %r: expected NAME=DIR or "
                                 "NAME=LFTS,TOPOLOGY" % spec)
            if name in names:
                raise UsageError("--dumps: variant %s given twice" % name)
            names.add(name)
            if "," in where:
                lf, _c, tp = where.partition(",")
            else:
                lf = os.path.join(where, "opensm-lfts.dump")
                tp = os.path.join(where, "opensm-subnet.lst")
            for f in (lf, tp):
                if not os.path.isfile(f):
                    raise UsageError("--dumps %s: %s: no such file"
                                     % (name, f))
            out.append({"name": name, "lfts": lf, "topology": tp})
        return out
    if not args.net:
        raise UsageError("--simulate needs --net FILE or --dumps NAME=DIR")
    if not os.path.isfile(args.net):
        raise UsageError("--net %s: no such file" % args.net)
    configs, added = args_matrix(args)
    if added:
        say("note: %s added to the matrix (the baseline)"
            % " and ".join(added))
    net = os.path.abspath(args.net)
    if args.dry_run:
        for cfg in configs:
            say("would run: osm-sim --net %s --lmc %d --engine %s "
                "--port-offsetting %s" % (net, cfg["lmc"], cfg["engine"],
                                          cfg["port_offsetting"]))
        return []
    routed = os.path.join(base_dir, "routes")

    def one(cfg):
        d = os.path.join(routed, cfg["name"])
        osm_sim_run(net, cfg, d)
        v = dict(cfg)
        v.update({"lfts": os.path.join(d, "opensm-lfts.dump"),
                  "topology": os.path.join(d, "opensm-subnet.lst")})
        return v
    with ThreadPoolExecutor(max_workers=args.jobs) as pool:
        return list(pool.map(one, configs))


def lft_analyze_figure(v, lmc, guid_file, out_json):
    """lft-analyze's base-LID shift efficiency of variant v in the rank
    order of guid_file; None (with a warning) if it cannot say."""
    cmd = tool("lft-analyze") + [
        "--lfts", v["lfts"], "--topology", v["topology"], "--lmc", str(lmc),
        "--json", "--bisections", "0", "--hostfile", guid_file]
    with open(out_json, "w") as f:
        status, err = run_cmd(cmd, timeout=1800, stdout=f)
    try:
        with open(out_json) as f:
            res = json.load(f)
        b = res["shift"]["base"]
        return {"efficiency": b["efficiency"], "worst": b["worst"],
                "valid": res["valid"], "credit_loop": res["credit_loop"]}
    except (OSError, ValueError, KeyError, TypeError):
        warn("lft-analyze gave no figure for %s (exit %s): %s"
             % (v["name"], status, err.strip()[-300:]))
        return None


def _check(args):
    """Validated (sizes, iters, warmup, orders, offsets) of args."""
    sizes = parse_sizes(args.sizes) if args.sizes else list(DEFAULT_SIZES)
    iters = 1 if args.iters is None else args.iters
    warmup = 0 if args.warmup is None else args.warmup
    if iters < 1 or warmup < 0:
        raise UsageError("--iters must be >= 1 and --warmup >= 0")
    if args.jobs < 1:
        raise UsageError("--jobs must be >= 1")
    if args.link_rate <= 0 or args.latency < 0:
        raise UsageError("--link-rate must be > 0 and --latency >= 0")
    if args.pattern != "alltoall":
        raise UsageError("--simulate runs MPI_Alltoall (--pattern alltoall)")
    orders = [o.strip() for o in args.order.split(",") if o.strip()]
    if not orders:
        raise UsageError("--order: empty list")
    for o in orders:
        if o not in rankorder.ORDERS and not os.path.isfile(o):
            raise UsageError("--order: %r is not leaf, random, guid or an "
                             "existing hostfile" % o)
    if args.lid_offsets.strip() == "all":
        offsets = list(range(128))
    else:
        offsets = parse_int_list(args.lid_offsets, "--lid-offsets", 0, 127)
    if not args.dry_run:
        need = ["smpirun"]
        if not args.bench and find_bench(SMPI_NAME) is None:
            need.append(args.smpicc)
        for t in need:
            if not which(t):
                raise UsageError("%s not found: apt-get install "
                                 "libsimgrid-dev" % t)
    return sizes, iters, warmup, orders, offsets


def _prepare(args, variants, orders, offsets, base_dir):
    """Platform, hostfile and model of every case: [(row, prep)]."""
    preps = []
    for v in variants:
        try:
            topo = fabric.load_topology(v["topology"])
            lfts = fabric.load_lfts(v["lfts"])
            rt = routes.Routes(topo, lfts, args.link_rate)
        except fabric.InputError as exc:
            raise UsageError(str(exc))
        except routes.RouteError as exc:
            raise StepError("%s: %s" % (v["name"], exc))
        lmc = rt.lmc
        for o in orders:
            try:
                label, order = rankorder.resolve_order(o, rt.hosts,
                                                       args.seed, rt.topo)
            except fabric.InputError as exc:
                raise UsageError("--order: %s" % exc)
            tag = "random" if o == "random" else (
                o if o in rankorder.ORDERS else "file%d" % orders.index(o))
            la = None
            if not args.no_analyze:
                d = os.path.join(base_dir, "analyze")
                os.makedirs(d, exist_ok=True)
                gf = os.path.join(d, "%s-%s.guids" % (v["name"], tag))
                with open(gf, "w") as f:
                    f.write(rankorder.format_order(order, names="guid"))
                la = lft_analyze_figure(v, lmc, gf, gf[:-6] + ".json")
            for k in offsets:
                if k >= 1 << lmc:
                    continue
                wd = os.path.join(base_dir, "sim", "%s-%s-lid%d"
                                  % (v["name"], tag, k))
                try:
                    prep = simgrid.prepare_case(
                        rt, order, k, wd, args.smpi_alltoall, args.latency)
                except routes.RouteError as exc:
                    raise StepError("%s: %s" % (v["name"], exc))
                except ValueError as exc:
                    raise UsageError(str(exc))
                row = {"variant": v["name"], "lmc": lmc,
                       "order": label, "lid_offset": k,
                       "lft_analyze": la if k == 0 else None,
                       "lfts": v["lfts"], "topology": v["topology"]}
                for key in ("engine", "port_offsetting"):
                    if key in v:
                        row[key] = v[key]
                row["key"] = (row.get("engine", ""), label)
                row["baseline"] = k == 0 and (
                    v is variants[0] if args.dumps else
                    (v["lmc"] == 0 and v["port_offsetting"] == "off"))
                row["order_key"] = (v["name"], k)
                preps.append((row, prep))
                say("prepared %s, %s, LID +%d: %d ranks, %d links "
                    "(%.1f s)" % (v["name"], label, k, prep["ranks"],
                                  prep["links"], prep["platform_s"]))
    return preps


def run(args):
    """Simulate; returns the document of --json ({"rows": [...], ...}),
    or None for a dry run (what would be done is said)."""
    sizes, iters, warmup, orders, offsets = _check(args)
    base_dir, tmp = work_dir(args.out, "alltoall-ab-sim-")
    try:
        variants = sim_variants(args, base_dir)
        if args.dry_run:
            say("would simulate each variant in orders %s, LID offsets %s, "
                "sizes %s with smpirun (alltoall %s)" % (
                    ",".join(orders), ",".join(map(str, offsets[:8])),
                    ",".join(map(str, sizes)), args.smpi_alltoall))
            return None
        bench = smpi_bench(args.bench, args.build_dir or os.path.join(
            base_dir, "build"), args.smpicc)
        preps = _prepare(args, variants, orders, offsets, base_dir)

        def one(item):
            row, prep = item
            res = simgrid.run_case(prep, bench, sizes, iters, warmup,
                                   args.keep_platform, args.bench_timeout)
            say("simulated %s, %s, LID +%d: %s (wall %.1f s, %.0f MB)" % (
                row["variant"], row["order"], row["lid_offset"],
                ", ".join("%s %.3f ms" % (simgrid.size_text(s),
                                          res["time_us"][str(s)] / 1000.0)
                          for s in sizes), res["wall_s"], res["pss_mb"]))
            return res
        try:
            with ThreadPoolExecutor(max_workers=args.jobs) as pool:
                results = list(pool.map(one, preps))
        except simgrid.SimError as exc:
            raise StepError(str(exc))
        rows = []
        for (row, _p), res in zip(preps, results):
            for key in ("ranks", "model", "time_us", "wall_s", "pss_mb",
                        "maxrss_mb", "platform_s", "links", "routes",
                        "rated_links", "link_gbps", "alltoall"):
                row[key] = res[key]
            rows.append(row)
        simgrid.add_slowdowns(rows, sizes)
        for r in rows:
            del r["key"], r["order_key"]
        return {"net": os.path.abspath(args.net) if args.net else None,
                "sizes": sizes, "iters": iters, "warmup": warmup,
                "alltoall": args.smpi_alltoall, "seed": args.seed,
                "link_rate_default_gbps": args.link_rate,
                "latency_ns": args.latency,
                "smpi_cfg": simgrid.SMPI_CFG,
                "baseline": "LMC 0 / port_offsetting off, same engine and "
                            "rank order, LID offset 0" if not args.dumps
                            else "the first --dumps variant, same rank "
                                 "order, LID offset 0",
                "slowdown_unit": "percent", "rows": rows}
    finally:
        if tmp:
            tmp.cleanup()


def write_csv(path, doc):
    """The table as CSV (simgrid.CSV_FIELDS, one line per row and size);
    UsageError naming --csv if it cannot be written."""
    try:
        with open(path, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=simgrid.CSV_FIELDS)
            w.writeheader()
            for r in simgrid.csv_rows(doc["rows"], doc["sizes"]):
                w.writerow(r)
    except OSError as exc:
        raise UsageError("--csv %s: %s" % (path, exc.strerror))


def format_text(doc, where):
    """The text report (lines); where = the fabric or dumps simulated."""
    iters = doc["iters"]
    return ["simulated alltoall (SimGrid SMPI, %s alltoall, %d iteration%s)"
            " on %s" % (doc["alltoall"], iters, "" if iters == 1 else "s",
                        where),
            "slow = %% slower than %s (negative = faster); model = the "
            "per-round model's prediction, lft-an. = lft-analyze's (1 / "
            "efficiency); order x = time against the first rank order "
            "(largest size); mem = peak PSS" % doc["baseline"],
            simgrid.format_table(doc["rows"], doc["sizes"])]
