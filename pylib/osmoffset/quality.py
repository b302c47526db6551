"""bench-quality's suite: its fabrics and configurations, the cells that
route and measure them, the leaf bounds and the reachable optimum.

The command line is osmoffset.cli.bench_quality; the goals are
osmoffset.qualitygoals; the tables, the report and the charts are
osmoffset.qualityreport and osmoffset.qualityplot.
"""

import json
import os
import subprocess

from osmoffset import benchcells, checks, fabric, paths
from osmoffset.benchreport import UsageError, net_command
from osmoffset.rankorder import natural_key, natural_shuffle

# name, class ('full' = full bisection, 'bound' = judged against the bound),
# big (generated) or curated, short description
FABRICS = [
    ("ft2-648", "full", True,
     "2-level, 36 leaves x 18 spines, 18 hosts/leaf, full bisection"),
    ("ft2-trunk4-128", "full", True,
     "2-level, 8 leaves x 4 spines, 16 hosts/leaf, 4 parallel links"),
    ("kary-6-3", "full", True, "6-ary 3-tree"),
    ("ft2-oversub-576", "bound", True,
     "2-level, 24 leaves x 12 spines, 24 hosts/leaf, 2:1 oversubscribed"),
    ("ft2-648-degraded", "bound", True,
     "ft2-648 with 5 % of the inter-switch cables removed (seed 1)"),
    ("seed-4x4trunk", "full", False,
     "the 2008 mail's example: 4 hosts behind 4 parallel links"),
    ("ft2-8x4", "full", False, "2-level, 8 leaves x 4 spines, 4 hosts/leaf"),
    ("ft2-trunk-4x2x2", "full", False,
     "2-level, 4 leaves x 2 spines, 2 parallel links, 4 hosts/leaf"),
    ("ft2-oversub-8x2", "bound", False,
     "2-level, 8 leaves x 2 spines, 4 hosts/leaf, 2:1 oversubscribed"),
    ("kary-4-3", "full", False, "4-ary 3-tree"),
    ("ft2-8x4-degraded", "bound", False,
     "ft2-8x4 with 10 % of its cables removed (seed 1)"),
    ("kary-4-3-degraded", "bound", False,
     "kary-4-3 without one middle and one top switch (seed 1)"),
]
FABRIC_BY_NAME = {f[0]: f for f in FABRICS}

# name, label, osm-sim options, opensm options, ours?
CONFIGS = [
    ("updn", "stock updn", ["--stock", "--engine", "updn"], [], False),
    ("updn-rootsnone", "stock updn, OpenSM's root detection",
     ["--stock", "--engine", "updn", "--roots", "none"], [], False),
    ("minhop", "stock minhop", ["--stock", "--engine", "minhop"], [], False),
    ("updn-portshift", "stock updn --port-shifting",
     ["--stock", "--engine", "updn"], ["--port-shifting"], False),
    ("updn-scatter", "stock updn --scatter-ports SEED",
     ["--stock", "--engine", "updn"], ["--scatter-ports", "SEED"], False),
    ("ftree", "stock ftree", ["--stock", "--engine", "ftree"], [], False),
    ("dfsssp", "stock dfsssp", ["--stock", "--engine", "dfsssp"], [], False),
    ("ours-updn", "updn + port_offsetting=on",
     ["--engine", "updn", "--port-offsetting", "on"], [], True),
    ("ours-minhop", "minhop + port_offsetting=on",
     ["--engine", "minhop", "--port-offsetting", "on"], [], True),
    ("plain-updn", "updn + port_offsetting=plain (2008 rule, A/B; "
     "polish=off)",
     ["--engine", "updn", "--port-offsetting", "plain", "--plugin-option",
      "polish=off"], [], False),
]
CONFIG_BY_NAME = {c[0]: c for c in CONFIGS}
OURS = [c[0] for c in CONFIGS if c[4]]
ORDERS = ("topo", "random")
ORDER_TITLE = {"topo": "topology rank order",
               "random": "random rank order"}
EPS = 1e-9
TARGET = 0.95
# route-optimum solves the fabrics judged against the bound up to this size
OPT_MAX_HOSTS = 64
# random rank orders (seeds 1..N) a random-order shortfall is re-measured in
RECHECK_SEEDS = 20
# regression cases: name, gen-fabric arguments, LMC, configuration
# compared with stock updn, the issue it came from, and whether it is still
# a known failure
REGRESSIONS = [
    ("ft2-16x8-degraded-s6",
     ["2level", "--leaves", "16", "--spines", "8", "--hosts-per-leaf", "8",
      "--random-guids", "--remove-links", "0.05", "--seed", "6"],
     2, "ours-updn", "issue 14", False),
]


def select(fabrics, configs, quick, no_random_order):
    """The fabrics, configurations and no-random-order fabrics named on
    the command line (None: the defaults), in the suite's order."""
    if fabrics:
        for f in fabrics:
            if f not in FABRIC_BY_NAME:
                raise UsageError("--fabrics: unknown fabric %r (known: %s)"
                                 % (f, ", ".join(FABRIC_BY_NAME)))
            if quick and FABRIC_BY_NAME[f][2]:
                raise UsageError("--fabrics: %s is a big fabric; --quick "
                                 "takes curated ones only" % f)
    else:
        fabrics = [f[0] for f in FABRICS if not (quick and f[2])]
    if configs:
        for c in configs:
            if c not in CONFIG_BY_NAME:
                raise UsageError("--configs: unknown configuration %r "
                                 "(known: %s)"
                                 % (c, ", ".join(CONFIG_BY_NAME)))
    else:
        configs = [c[0] for c in CONFIGS]
    # keep the canonical order
    fabrics = [f[0] for f in FABRICS if f[0] in fabrics]
    configs = [c[0] for c in CONFIGS if c[0] in configs]
    nro = list(no_random_order)
    if nro == ["all"]:
        nro = list(fabrics)
    for f in nro:
        if f not in FABRIC_BY_NAME:
            raise UsageError("--no-random-order: unknown fabric %r" % f)
    if any(CONFIG_BY_NAME[c][2][0] != "--stock" for c in configs) \
            and not os.path.isfile(benchcells.plugin_file()):
        raise UsageError("plugin %s not found; build it first (make)"
                         % benchcells.plugin_file())
    return fabrics, configs, set(nro)


# ----------------------------------------------------------------------
# fabrics
# ----------------------------------------------------------------------

def prepare_fabrics(out, fabrics, seed, log):
    """Net file path and random hostfile of every fabric."""
    fdir = os.path.join(out, "fabrics")
    os.makedirs(fdir, exist_ok=True)
    topo_dir = paths.fabrics_dir() or ""
    need_big = [f for f in fabrics if FABRIC_BY_NAME[f][2]
                and not os.path.isfile(os.path.join(fdir, f + ".net"))]
    if need_big:
        regen = os.path.join(topo_dir, "regen.sh")
        log("generating the big fabrics: %s --big %s" % (regen, fdir))
        p = subprocess.run(["sh", regen, "--big", fdir],
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True)
        if p.returncode != 0:
            raise UsageError("%s --big %s failed: %s"
                             % (regen, fdir, p.stderr.strip()))
        # the 5832-host fabric is not part of this benchmark
        try:
            os.unlink(os.path.join(fdir, "kary-18-3.net"))
        except FileNotFoundError:
            pass
    info = {}
    for f in fabrics:
        net = os.path.join(fdir if FABRIC_BY_NAME[f][2] else topo_dir,
                           f + ".net")
        if not os.path.isfile(net):
            raise UsageError("fabric %s: %s missing" % (f, net))
        try:
            topo = fabric.load_topology(net)
        except fabric.InputError as exc:
            raise UsageError(str(exc))
        shuffled = natural_shuffle([n.desc for n in topo.cas()], seed)
        leaf_of, uplinks, topo_order = leaf_layout(topo)
        hostfile = os.path.join(fdir, "%s.random-seed%d.hosts" % (f, seed))
        text = "".join(h + "\n" for h in shuffled)
        if benchcells.read_text(hostfile) != text:
            with open(hostfile, "w") as fh:
                fh.write(text)
        command = net_command(net)
        info[f] = {"net": net, "hostfile": hostfile, "hosts": len(shuffled),
                   "switches": len(topo.switches()), "command": command,
                   "sha": benchcells.file_sha(net),
                   "path_bound": {
                       order: {str(l): path_bound(ranks, leaf_of, uplinks,
                                                  1 << l)
                               for l in range(0, 4)}
                       for order, ranks in (("topo", topo_order),
                                            ("random", shuffled))}}
    return info


def leaf_layout(topo):
    """Leaf switch of every host, inter-switch ports of every switch, and
    the topology rank order (the order lft-analyze uses without a
    hostfile: leaf by leaf in natural name order, then leaf port)."""
    sws = {n.guid: n for n in topo.switches()}
    uplinks = {}
    for (g, p), (rg, rp) in topo.links.items():
        if g in sws and rg in sws:
            uplinks[g] = uplinks.get(g, 0) + 1
    leaf_of, pos = {}, {}
    for ca in topo.cas():
        peer = topo.links.get((ca.guid, ca.port or 1))
        if peer is None or peer[0] not in sws:
            continue
        leaf_of[ca.desc] = peer[0]
        sw = sws[peer[0]]
        pos[ca.desc] = (natural_key(sw.desc), sw.guid, peer[1])
    order = sorted(leaf_of, key=lambda d: pos[d])
    return leaf_of, uplinks, order


def path_bound(ranks, leaf_of, uplinks, nl):
    """Leaf-level bound for flows that each take 1/nl of a rank's traffic
    over one path per LID: in every shift round a leaf with o outgoing
    (n incoming) off-leaf flows and u inter-switch links carries at least
    ceil(max(o, n) * nl / u) / nl on one link.  With nl = 1 this is the
    bound of base-LID traffic; lft-analyze's bound is the fractional
    max(o, n) / u.  Returns the efficiency (mean of min(1, 1/load))."""
    import numpy as np
    leaves = sorted(set(leaf_of.values()))
    index = {g: i for i, g in enumerate(leaves)}
    rl = np.array([index[leaf_of[r]] for r in ranks if r in leaf_of])
    up = np.array([uplinks.get(g, 0) for g in leaves], dtype=float)
    R = rl.size
    if R < 2:
        return 1.0
    effs = []
    for k in range(1, R):
        dl = np.roll(rl, -k)
        cross = rl != dl
        o = np.bincount(rl[cross], minlength=len(leaves))
        n = np.bincount(dl[cross], minlength=len(leaves))
        m = np.maximum(o, n)
        with np.errstate(divide="ignore", invalid="ignore"):
            load = np.where(m > 0, np.ceil(m * nl / np.where(up > 0, up,
                                                             np.inf)) / nl,
                            0.0)
        worst = max(1.0, float(load.max()))
        effs.append(min(1.0, 1.0 / worst) if worst > 0 else 0.0)
    return float(np.mean(effs))


def reachable_optimum(out, f, info, lmcs, log):
    """The best topology-order shift efficiency any destination-based
    routing reaches, per LMC (route-optimum), and the mean of the routing
    it found over the random orders of seeds 1..RECHECK_SEEDS ("random"),
    for the small fabrics judged against the bound; at LMC > 0 the same
    for the routings that keep each flow's LIDs on different spines
    ("apart", "apart_random": route-optimum --lids-apart) and how many
    flows the unconstrained optimum's routing puts together ("shared");
    {"skipped": why} otherwise.  Cached in OUT/fabrics/F.optimum.json,
    keyed by the net file's hash."""
    if FABRIC_BY_NAME[f][1] == "full":
        return {"skipped": "full bisection"}
    if info["hosts"] > OPT_MAX_HOSTS:
        return {"skipped": "more than %d hosts" % OPT_MAX_HOSTS}
    path = os.path.join(out, "fabrics", f + ".optimum.json")
    try:
        with open(path) as fh:
            cached = json.load(fh)
        if cached.get("net_sha") == info["sha"] and \
                all(str(l) in cached["lmc"] and str(l) in cached["random"]
                    and (l == 0 or str(l) in cached["apart"])
                    for l in lmcs):
            return cached
    except (OSError, ValueError, KeyError, TypeError):
        cached = None
    res = {"net_sha": info["sha"], "lmc": {}, "random": {}, "apart": {},
           "apart_random": {}, "shared": {}}
    for l in lmcs:
        for apart in (False, True) if l else (False,):
            log("route-optimum %s LMC %d%s"
                % (f, l, " --lids-apart" if apart else ""))
            try:
                r = benchcells.route_optimum(info["net"], l,
                                             random_orders=RECHECK_SEEDS,
                                             apart=apart)
            except (RuntimeError, OSError, ValueError) as exc:
                return {"skipped": str(exc).replace("route-optimum: ", "")}
            if not r.get("optimal") or not r.get("exact"):
                return {"skipped": "no exact optimum (%s)"
                        % r.get("message")}
            if apart:
                res["apart"][str(l)] = r["bound"]
                res["apart_random"][str(l)] = r["random"]["mean"]
                continue
            res["lmc"][str(l)] = r["bound"]
            res["random"][str(l)] = r["random"]["mean"]
            if l:
                res["shared"][str(l)] = r["shared"]
    with open(path, "w") as fh:
        json.dump(res, fh, indent=1, sort_keys=True)
        fh.write("\n")
    return res



# ----------------------------------------------------------------------
# one cell: route + analyse
# ----------------------------------------------------------------------

def cell_argv(cfg, net, lmc, celldir, scatter_seed):
    """osm-sim's options for one cell."""
    _, _, sim_opts, osm_opts, _ = CONFIG_BY_NAME[cfg]
    osm_opts = [str(scatter_seed) if o == "SEED" else o for o in osm_opts]
    argv = ["--net", net, "--out", celldir, "--lmc", str(lmc),
            "--allow-fallback", "--no-ibroute", "--quiet"] + sim_opts
    if osm_opts:
        argv += ["--"] + osm_opts
    return argv


def analyse(celldir, lmc, hostfile):
    """The figures of one rank order (lft-analyze's, in this process)."""
    try:
        r = benchcells.analysis(celldir, lmc, hostfile)
    except fabric.InputError as exc:
        return {"error": "lft-analyze: %s" % exc}
    except OSError as exc:
        return {"error": "lft-analyze: %s: %s" % (exc.filename or "",
                                                  exc.strerror)}
    spread = r["shift"]["spread"]
    return {
        "valid": r["valid"], "credit_loop": r["credit_loop"],
        "base": r["shift"]["base"]["efficiency"],
        "spread": spread["efficiency"] if spread else None,
        "bound": r["bound"]["efficiency"],
        "worst_base_load": r["shift"]["base"]["worst"],
        "worst_base_round": r["shift"]["base"]["worst_round"],
        "worst_spread_load": spread["worst"] if spread else None,
        "worst_imbalance_base": r["balance"]["worst"]["base"],
        "worst_imbalance_switch": r["balance"]["worst"]["base_switch"],
        "problems": r["problems"][:3],
        "rank_order": r["rank_order"],
    }


def measure_cell(task, res, osmlog):
    """benchcells measure(): the engine that routed, and the figures in
    the task's rank orders."""
    summary = checks.osm_log_summary(osmlog)
    res["engine_used"] = summary["engine_used"]
    res["fallback"] = summary["engine_used"] != task["engine"]
    res["failed_engines"] = summary["failed_engines"]
    res["status"] = "ok"
    for order in task["orders"]:
        res["orders"][order] = analyse(
            task["dir"], task["fields"]["lmc"],
            task["hostfile"] if order == "random" else None)
        if "error" in res["orders"][order]:
            res["status"] = "error"
            res["error"] = res["orders"][order]["error"]


def make_tasks(out, fabrics, configs, lmcs, finfo, no_random, scatter_seed,
               force):
    """The benchcells tasks of the suite, keyed (fabric, config, lmc)."""
    psha = benchcells.plugin_sha()
    tasks = []
    for f in fabrics:
        orders = ["topo"] if f in no_random else list(ORDERS)
        for c in configs:
            for lmc in lmcs:
                celldir = os.path.join(out, "runs", f, c, "lmc%d" % lmc)
                argv = cell_argv(c, finfo[f]["net"], lmc, celldir,
                                 scatter_seed)
                sim = CONFIG_BY_NAME[c][2]
                key = {"argv": argv, "net_sha": finfo[f]["sha"],
                       "hostfile": finfo[f]["hostfile"],
                       "plugin_sha": None if "--stock" in sim else psha}
                tasks.append({
                    "id": (f, c, lmc), "dir": celldir, "sim": argv,
                    "key": key, "good": ("ok",), "need": orders,
                    "force": force, "log_errors": True,
                    "fields": {"fabric": f, "config": c, "lmc": lmc,
                               "orders": {}, "dir": celldir},
                    "measure": measure_cell,
                    "engine": sim[sim.index("--engine") + 1],
                    "orders": orders, "hostfile": finfo[f]["hostfile"]})
    return tasks


def hot_links(celldir, k, hostfile=None, top=4):
    """The heaviest links of shift round k for base-LID traffic, as
    'switch[port]=flows' strings (reads the cell's dumps again)."""
    import numpy as np
    from osmoffset.analyze import Analysis
    topo = fabric.load_topology(os.path.join(celldir, "opensm-subnet.lst"))
    lfts = fabric.load_lfts(os.path.join(celldir, "opensm-lfts.dump"))
    an = Analysis(topo, lfts, hostfile=hostfile, bisections=0)
    an.validate()
    an.build_paths()
    R = an.ranks.size
    src = an.ranks
    dst = an.ranks[(np.arange(R) + k) % R]
    m = src != dst
    src, dst = src[m], dst[m]
    p = an.paths[an.leafpos[an.host_leaf[src]], dst * an.nl]
    loads = np.bincount(p.ravel().astype(np.int64),
                        minlength=an.L + 1)[:an.L]
    out = []
    for link in np.argsort(-loads, kind="stable")[:top]:
        if loads[link] < 2 or link >= an.S * an.W:
            break
        out.append("%s[%d]=%d" % (an.sw_nodes[link // an.W].desc,
                                  link % an.W, loads[link]))
    return out


def seed_efficiencies(celldir, lmc, what, hosts, seeds):
    """Shift efficiency of a cell's LFTs in the random rank orders of
    seeds 1..seeds (natural_shuffle() of the host names hosts; the --seed
    order being seed 1 by default)."""
    import tempfile
    from osmoffset.analyze import Analysis
    topo = fabric.load_topology(os.path.join(celldir, "opensm-subnet.lst"))
    lfts = fabric.load_lfts(os.path.join(celldir, "opensm-lfts.dump"))
    out = []
    with tempfile.TemporaryDirectory(prefix="bq-seeds-") as tmp:
        for seed in range(1, seeds + 1):
            order = natural_shuffle(hosts, seed)
            hf = os.path.join(tmp, "hosts")
            with open(hf, "w") as fh:
                fh.write("".join(h + "\n" for h in order))
            an = Analysis(topo, lfts, lmc=lmc, hostfile=hf, bisections=0)
            an.validate()
            an.build_paths()
            out.append(an._eff(an.shift(what == "spread")))
    return out


# ----------------------------------------------------------------------
# figures and goals
# ----------------------------------------------------------------------

def figures(lmcs):
    """(column name, lmc, 'base'|'spread') of the result tables."""
    cols = []
    for l in lmcs:
        cols.append(("L%d base" % l, l, "base"))
        if l > 0:
            cols.append(("L%d spread" % l, l, "spread"))
    return cols


def cell_value(results, f, c, lmc, order, what):
    r = results.get((f, c, lmc))
    if not r or r["status"] != "ok":
        return None
    o = r["orders"].get(order)
    if not o or "error" in o:
        return None
    return o.get(what)


def fabric_bound(results, f, configs, lmcs, order):
    for c in configs:
        for l in lmcs:
            v = cell_value(results, f, c, l, order, "bound")
            if v is not None:
                return v
    return None


def cell_note(r):
    if r is None:
        return "missing"
    if r["status"] != "ok":
        return "error"
    notes = []
    if r.get("fallback"):
        notes.append("fallback %s" % r.get("engine_used"))
    for o in r["orders"].values():
        if not o.get("valid", True) and "INVALID" not in notes:
            notes.append("INVALID")
        if o.get("credit_loop") and "CREDIT LOOP" not in notes:
            notes.append("CREDIT LOOP")
    if r.get("log_errors"):
        notes.append("log ERR")
    return ", ".join(notes)


def row_note(results, f, c, lmcs):
    parts = []
    for l in lmcs:
        n = cell_note(results.get((f, c, l)))
        if n:
            parts.append("L%d: %s" % (l, n))
    # "L1: fallback minhop; L2: fallback minhop" -> "L1,L2: fallback minhop"
    merged = {}
    for p in parts:
        lm, txt = p.split(": ", 1)
        merged.setdefault(txt, []).append(lm)
    return "; ".join("%s: %s" % (",".join(v), k) for k, v in merged.items())
