"""bench-fabrics's suite: every engine on the curated, real and given
fabrics in four rank orders, routed and measured as benchcells cells, and
the figures where port offsetting is below stock updn.

The command line is osmoffset.cli.bench_fabrics; the tables and the
report are osmoffset.fabricsreport.
"""

import glob
import json
import os
import re

from osmoffset import analyze, benchcells, checks, fabric, ibnetdiscover
from osmoffset import paths
from osmoffset.benchreport import UsageError, net_command
from osmoffset.rankorder import natural_key

# name, label, osm-sim options, requested engine, ours?
ENGINES = [
    ("updn", "stock updn", ["--stock", "--engine", "updn"], "updn", False),
    ("dfsssp", "stock dfsssp", ["--stock", "--engine", "dfsssp"], "dfsssp",
     False),
    ("ftree", "stock ftree", ["--stock", "--engine", "ftree"], "ftree",
     False),
    ("ours", "updn + port_offsetting=on",
     ["--engine", "updn", "--port-offsetting", "on"], "updn", True),
]
ENGINE_BY_NAME = {e[0]: e for e in ENGINES}
# name -> (order, job, job index) of analyze.Analysis.set_ranks
ORDERS = [("leaf", ("leaf", None, 0)), ("quarter", ("leaf", "quarter", 0)),
          ("half", ("leaf", "half", 0)), ("random", ("random", None, 0))]
ORDER_TITLE = {"leaf": "leaf order", "quarter": "quarter job",
               "half": "half job", "random": "random order"}
# the real dumps: name, dump file, map file, drop SHARP nodes?
REAL = [
    ("ndr-2level-railopt", "ndr-2level-railopt.ibnetdiscover", None, False),
    ("ndr-2level-railopt-nosharp", "ndr-2level-railopt.ibnetdiscover", None,
     True),
    ("qdr-irregular-x5", "qdr-irregular-x5.ibnetdiscover",
     "qdr-irregular-x5.map", False),
]
EPS = 1e-9
MARK = "\u25bc"          # flags a figure of ours below stock updn


def default_realfabrics():
    """<repo>/../shared/realfabrics in a source tree, else
    ./realfabrics."""
    root = paths.source_root()
    if root:
        return os.path.join(os.path.dirname(root), "shared", "realfabrics")
    return "realfabrics"


def check_engines(engines):
    """The --engines names (None: all) in the suite's order."""
    engines = engines or list(ENGINE_BY_NAME)
    for e in engines:
        if e not in ENGINE_BY_NAME:
            raise UsageError("--engines: unknown engine %r (known: %s)"
                             % (e, ", ".join(ENGINE_BY_NAME)))
    return [e[0] for e in ENGINES if e[0] in engines]


def check_plugin_options(tokens):
    for tok in tokens:
        if not re.match(r"^[A-Za-z0-9_.]+=[^\s,]+$", tok):
            raise UsageError("--plugin-option: bad token %r (KEY=VAL)" % tok)


# ----------------------------------------------------------------------
# fabrics
# ----------------------------------------------------------------------

def collect_fabrics(out, log, quick=False, realfabrics=None, nets=(),
                    names=None):
    """[(name, info)] in table order: curated, real (unless quick; from
    the directory realfabrics), the extra net files; only those named in
    names when given.  Returns (fabrics, notes)."""
    fabs = []
    for net in sorted(glob.glob(os.path.join(paths.fabrics_dir() or "",
                                             "*.net")),
                      key=lambda p: natural_key(os.path.basename(p)[:-4])):
        name = os.path.basename(net)[:-4]
        cmd = net_command(net, header_only=True)
        fabs.append((name, {"net": net, "kind": "curated",
                            "source": "sim-topologies/%s.net" % name
                            + (" (`%s`)" % cmd if cmd else "")}))
    notes = []
    if not quick:
        rdir = realfabrics or default_realfabrics()
        if not os.path.isdir(rdir):
            notes.append("real dumps skipped: %s is absent" % rdir)
            log(notes[-1])
        else:
            cdir = os.path.join(out, "fabrics")
            os.makedirs(cdir, exist_ok=True)
            for name, dump, mp, drop in REAL:
                src = os.path.join(rdir, dump)
                if not os.path.isfile(src):
                    notes.append("%s skipped: %s is absent" % (name, src))
                    log(notes[-1])
                    continue
                mpath = os.path.join(rdir, mp) if mp else None
                net = os.path.join(cdir, name + ".net")
                try:
                    _t, stats = ibnetdiscover.convert_file(src, net, mpath,
                                                           drop)
                except fabric.InputError as exc:
                    raise UsageError(str(exc))
                how = "converted by osmoffset.ibnetdiscover" + \
                    (" with %s" % mp if mp else "") + \
                    (", SHARP aggregation nodes dropped" if drop else
                     ", SHARP aggregation nodes kept" if stats["sharp"]
                     else ", no SHARP aggregation nodes in the dump")
                fabs.append((name, {"net": net, "kind": "real",
                                    "source": "../shared/realfabrics/%s (%s)"
                                    % (dump, how), "conversion": stats}))
    for net in nets:
        if not os.path.isfile(net):
            raise UsageError("--net %s: no such file" % net)
        name = re.sub(r"\.net$", "", os.path.basename(net))
        fabs.append((name, {"net": os.path.abspath(net), "kind": "extra",
                            "source": net}))
    seen = set()
    for name, _i in fabs:
        if name in seen:
            raise UsageError("two fabrics are named %s (rename the --net "
                             "file)" % name)
        seen.add(name)
    if names:
        want = names
        for w in want:
            if w not in seen:
                raise UsageError("--fabrics: unknown fabric %r (known: %s)"
                                 % (w, ", ".join(n for n, _ in fabs)))
        fabs = [(n, i) for n, i in fabs if n in want]
    for name, info in fabs:
        try:
            topo = fabric.load_topology(info["net"])
        except fabric.InputError as exc:
            raise UsageError(str(exc))
        cas = topo.cas()
        sharp = sum(1 for n in cas if analyze.is_aggregation_node(n.desc))
        info.update(hosts=len(cas) - sharp, sharp=sharp,
                    switches=len(topo.switches()),
                    sha=benchcells.file_sha(info["net"]))
    return fabs, notes



# ----------------------------------------------------------------------
# one cell: route + analyse
# ----------------------------------------------------------------------

def cell_argv(engine, net, lmc, celldir, plugin_options):
    """osm-sim's options for one cell."""
    argv = ["--net", net, "--out", celldir, "--lmc", str(lmc),
            "--allow-fallback", "--no-ibroute", "--quiet"] + \
        ENGINE_BY_NAME[engine][2]
    if ENGINE_BY_NAME[engine][4]:
        for tok in plugin_options:
            argv += ["--plugin-option", tok]
    return argv


def measure_cell(task, res, osmlog):
    """benchcells measure(): the engine that routed ("fails" for an ftree
    that fell back) and the shift figures in every rank order."""
    summary = checks.osm_log_summary(osmlog)
    res["engine_used"] = summary["engine_used"]
    res["fallback"] = summary["engine_used"] != task["requested"]
    if res["fallback"] and task["fields"]["engine"] == "ftree":
        res["status"] = "fails"
        return
    celldir = task["dir"]
    try:
        topo = fabric.load_topology(
            os.path.join(celldir, "opensm-subnet.lst"))
        lfts = fabric.load_lfts(os.path.join(celldir, "opensm-lfts.dump"))
        res.update(analyze.shift_by_order(
            topo, lfts, dict(task["orders"]), task["fields"]["lmc"],
            task["seed"]))
        res["status"] = "ok"
    except fabric.InputError as exc:
        res["status"] = "error"
        res["error"] = "analysis: %s" % exc


def make_tasks(out, fabs, engines, lmcs, seed, plugin_options, force):
    """The benchcells tasks of the suite, keyed (fabric, engine, lmc)."""
    psha = benchcells.plugin_sha()
    tasks = []
    for f, info in fabs:
        for e in engines:
            for lmc in lmcs:
                celldir = os.path.join(out, "runs", f, e, "lmc%d" % lmc)
                argv = cell_argv(e, info["net"], lmc, celldir,
                                 plugin_options)
                ours = ENGINE_BY_NAME[e][4]
                key = {"argv": argv, "net_sha": info["sha"],
                       "seed": seed, "orders": ORDERS,
                       "plugin_sha": psha if ours else None,
                       "version": 2}
                tasks.append({
                    "id": (f, e, lmc), "dir": celldir, "sim": argv,
                    "key": json.loads(json.dumps(key)),
                    "good": ("ok", "fails"), "force": force,
                    "fields": {"fabric": f, "engine": e, "lmc": lmc},
                    "measure": measure_cell,
                    "requested": ENGINE_BY_NAME[e][3],
                    "orders": ORDERS, "seed": seed})
    return tasks


# ----------------------------------------------------------------------
# comparison
# ----------------------------------------------------------------------

def value(results, f, e, lmc, order, what):
    r = results.get((f, e, lmc))
    if not r or r.get("status") != "ok":
        return None
    return r["orders"][order][what]


def traffics(lmc):
    return ("base", "spread") if lmc > 0 else ("base",)


def below_stock(results, fabs, engines, lmcs):
    """Every figure of ours below stock updn's: list of dicts."""
    out = []
    if "ours" not in engines or "updn" not in engines:
        return out
    for f, _i in fabs:
        for l in lmcs:
            for o, _spec in ORDERS:
                for t in traffics(l):
                    a = value(results, f, "ours", l, o, t)
                    b = value(results, f, "updn", l, o, t)
                    if a is not None and b is not None and a < b - EPS:
                        out.append({"fabric": f, "lmc": l, "order": o,
                                    "traffic": t, "ours": a, "updn": b})
    return out

