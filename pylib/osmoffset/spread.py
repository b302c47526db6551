"""bench-spread's cells and table: the base-LID spread of every fabric
routed by stock updn and with port offsetting (coordinated and plain),
next to the shift-alltoall efficiency.

The spread of a candidate group (the ports that OpenSM's LID matrix makes
equal-cost for the same destinations) is max - min of the base LIDs its
ports carry; a cell reports the largest over all switches and how many
groups have a spread above 1.  The command line is
osmoffset.cli.bench_spread.
"""

import os

from osmoffset import benchcells, checks, fabric

CONFIGS = [("stock", ["--stock"]),
           ("on", ["--port-offsetting", "on"]),
           ("plain", ["--port-offsetting", "plain"])]


def measure_cell(task, res, osmlog):
    """benchcells measure(): spread figures and shift efficiency."""
    out = task["dir"]
    lmc = task["lmc"]
    try:
        topo = fabric.load_topology(os.path.join(out, "opensm-subnet.lst"))
        lfts = fabric.load_lfts(os.path.join(out, "opensm-lfts.dump"))
        matrix = checks.load_lid_matrix(os.path.join(
            out, "opensm-lid-matrix.dump"))
        groups = checks.candidate_groups_from_lid_matrix(topo, matrix)
        rows = checks.base_lid_spread(topo, lfts, lmc, groups)
        rep = benchcells.analysis(out, lmc)
    except fabric.InputError as exc:
        res.update(status="error", error=str(exc))
        return
    spread = rep["shift"].get("spread")
    res.update(status="ok", figures={
        "max_spread": max([r["spread"] for r in rows] or [0]),
        "groups_over_1": sum(1 for r in rows if r["spread"] > 1),
        "groups": len(rows),
        "base_eff": rep["shift"]["base"]["efficiency"],
        "spread_eff": spread["efficiency"] if spread else None,
        "valid": rep["valid"] and not rep["credit_loop"],
    })


def make_tasks(base, nets, lmcs, engine):
    """One benchcells task per net file, LMC and configuration, keyed
    (net, lmc, configuration name); runs in BASE."""
    tasks = []
    for net in nets:
        for lmc in lmcs:
            for name, cargs in CONFIGS:
                out = os.path.join(base, "%s-%d-%s"
                                   % (os.path.basename(net), lmc, name))
                tasks.append({
                    "id": (net, lmc, name), "dir": out, "key": None,
                    "force": True, "lmc": lmc, "measure": measure_cell,
                    "sim": ["--net", net, "--out", out, "--lmc", str(lmc),
                            "--engine", engine, "--quiet",
                            "--allow-fallback"] + cargs})
    return tasks


def table_lines(engine, nets, lmcs, by):
    """The printed table; by: {(fabric file name, lmc, config): figures}."""
    lines = ["engine %s; spread = max over switches of max-min base LIDs "
             "per candidate group; eff = shift alltoall efficiency" % engine]
    lines.append("%-24s%4s  " % ("fabric", "LMC") + "".join(
        "%24s" % n for n, _ in CONFIGS))
    lines.append("%-28s" % "" + "".join("%24s" % "spread >1 base spr"
                                        for _ in CONFIGS))
    for net in nets:
        f = os.path.basename(net)
        for lmc in lmcs:
            line = "%-24s%4s  " % (f, lmc)
            for name, _ in CONFIGS:
                r = by[(f, lmc, name)]
                spr = "-" if r["spread_eff"] is None else \
                    "%.2f" % r["spread_eff"]
                bad = "" if r["valid"] else "!"
                line += "%6s%4s%7.2f%6s%1s" % (
                    r["max_spread"], r["groups_over_1"], r["base_eff"], spr,
                    bad)
            lines.append(line)
    return lines
