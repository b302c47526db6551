"""bench-degraded's cells and table: randomly degraded 2-level fat trees
(gen-fabric 2level --remove-links), each routed by stock updn, by the
osmoffset plugin and optionally by a second plugin build, measured in
topology rank order (base-LID shift efficiency and the leaf bound; at
LMC > 0 the efficiency of traffic striped over every LID), with the best
any destination-based routing reaches (route-optimum) beside, and at
LMC > 0 the best of the routings that keep each flow's LIDs on different
spines (route-optimum --lids-apart).

The command line is osmoffset.cli.bench_degraded.
"""

import os

from osmoffset import benchcells, fabric
from osmoffset.benchreport import UsageError


def make_fabric(out, leaves, spines, seed, remove):
    """Write OUT/fabrics/dLxS-sN.net with gen-fabric; returns its path."""
    net = os.path.join(out, "fabrics", "d%dx%d-s%d.net"
                       % (leaves, spines, seed))
    p = benchcells.run_tool(
        "gen-fabric", ["2level", "--leaves", str(leaves), "--spines",
                       str(spines), "--hosts-per-leaf", str(spines),
                       "--random-guids", "--remove-links", str(remove),
                       "--seed", str(seed), "-o", net])
    if p.returncode != 0:
        raise UsageError("gen-fabric %dx%d seed %d: %s"
                         % (leaves, spines, seed,
                            benchcells.last_line(p.stderr or p.stdout)
                            or "exit %d" % p.returncode))
    return net


def figure_key(lmc):
    """The figure a table shows: base LIDs at LMC 0, else the traffic
    striped over every LID."""
    return "spread" if lmc else "base"


def measure_route(task, res, osmlog):
    """benchcells measure(): base-LID shift efficiency in topology order
    (and at LMC > 0 the striped traffic's) and the leaf bound, or an
    error."""
    try:
        r = benchcells.analysis(task["dir"])
    except fabric.InputError as exc:
        res.update(status="error", error="lft-analyze: %s" % exc)
        return
    if not r["valid"] or r["credit_loop"]:
        res.update(status="error", error="invalid routing or credit loop")
        return
    figures = {"base": r["shift"]["base"]["efficiency"],
               "bound": r["bound"]["efficiency"]}
    if task.get("lmc"):
        figures["spread"] = r["shift"]["spread"]["efficiency"]
    res.update(status="ok", figures=figures)


def measure_optimum(task, res, osmlog):
    """benchcells measure() without routing: route-optimum's best (at the
    task's LMC; with "apart", of the routings with each flow's LIDs
    apart)."""
    lmc = task.get("lmc", 0)
    try:
        r = benchcells.route_optimum(task["net"], lmc, time_limit=120,
                                     apart=task.get("apart", False))
    except (RuntimeError, OSError, ValueError) as exc:
        msg = str(exc)
        if not msg.startswith("route-optimum"):
            msg = "route-optimum: " + msg
        res.update(status="error", error=msg)
        return
    res.update(status="ok", figures={
        figure_key(lmc): r.get("bound") if r.get("optimal") else None})


def make_tasks(out, rows, configs, optimum_max_hosts, lmc=0, options=None):
    """benchcells tasks: every row's fabric in every configuration (name,
    plugin directory or None for stock; options: {name: its
    event_plugin_options tokens}) at LMC lmc, and the optimum of the
    small ones (at LMC > 0 also with the LIDs apart); keyed (row index,
    name)."""
    options = options or {}
    tasks = []
    for i, row in enumerate(rows):
        net = row["net"]
        name = os.path.basename(net)[:-4]
        for config, pdir in configs:
            cell = os.path.join(out, "runs", name, config)
            sim = ["-q", "--net", net, "--out", cell, "--lmc", str(lmc),
                   "--engine", "updn", "--no-ibroute"]
            sim += ["--stock"] if pdir is None else \
                ["--port-offsetting", "on", "--plugin-dir", pdir]
            for tok in options.get(config, ()):
                sim += ["--plugin-option", tok]
            tasks.append({"id": (i, config), "dir": cell, "sim": sim,
                          "key": None, "force": True, "lmc": lmc,
                          "measure": measure_route})
        if row["hosts"] > optimum_max_hosts:
            continue
        for what in ("optimum", "apart") if lmc else ("optimum",):
            tasks.append({"id": (i, what),
                          "dir": os.path.join(out, "runs", name, what),
                          "sim": None, "key": None, "force": True,
                          "measure": measure_optimum, "net": net,
                          "lmc": lmc, "apart": what == "apart"})
    return tasks


def cell_figures(r):
    """A row's entry for one cell: its figures or {"error": why}."""
    if r["status"] != "ok":
        return {"error": r.get("error")}
    return r["figures"]


def fmt(cell, key="base"):
    if cell is None:
        return "-"
    if "error" in cell:
        return "ERROR"
    return "-" if cell.get(key) is None else "%.3f" % cell[key]


def report(names, rows, lmc=0):
    key = figure_key(lmc)
    cols = names + ["optimum"] + (["apart"] if lmc else [])
    lines = []
    if lmc:
        lines.append("LMC %d: traffic striped over the %d LIDs of each "
                     "host; apart = the optimum with each flow's LIDs on "
                     "different spines" % (lmc, 1 << lmc))
    lines.append("%-8s %4s %5s  " % ("size", "seed", "hosts") +
                 "  ".join("%9s" % c for c in cols) + "  %9s" % "bound")
    for r in rows:
        lines.append("%-8s %4d %5d  " % (r["size"], r["seed"], r["hosts"]) +
                     "  ".join("%9s" % fmt(r.get(c), key) for c in cols) +
                     "  %9s" % fmt({"base": (r.get("updn") or {})
                                    .get("bound")}))
    means = []
    for c in names:
        v = [r[c][key] for r in rows if key in r.get(c, {})]
        means.append("%9s" % ("%.3f" % (sum(v) / len(v)) if v else "-"))
    lines.append("%-20s  " % "mean" + "  ".join(means))
    if "baseline" in names:
        pairs = [(r["osmoffset"][key], r["baseline"][key])
                 for r in rows if key in r.get("osmoffset", {}) and
                 key in r.get("baseline", {})]
        better = sum(1 for a, b in pairs if a > b + 1e-9)
        worse = sum(1 for a, b in pairs if a < b - 1e-9)
        lines.append("osmoffset vs baseline: better on %d, worse on %d, "
                     "equal on %d of %d fabrics"
                     % (better, worse, len(pairs) - better - worse,
                        len(pairs)))
    for r in rows:
        for c in cols:
            if "error" in (r.get(c) or {}):
                lines.append("%s seed %d %s: %s"
                             % (r["size"], r["seed"], c, r[c]["error"]))
    return lines
