"""bench-shapes' cells and table: random cluster shapes (gen-fabric
cluster with drawn radix, taper, core, pods, directors, rails, empty
edges, management HCAs on the core, doubled and missing cables, SHARP
nodes), or copies of a given net file that lost random cables (gen-fabric
degrade), each routed by stock updn and by the osmoffset plugin with the
roots left to updn (as on a dump), and judged: credit loops, host/LID
pairs without a route, and every rank order where ours score below stock.

The shapes the curated suites hold are the ones we thought of; real
fabrics combine them in ways nobody listed.  A sweep of drawn shapes
found a credit loop over roots cabled to roots, a fabric handed to
minhop for want of a root, SHARP nodes left without a route where stock
routed them, and a generator that left switches without a cable.

The command line is osmoffset.cli.bench_shapes.
"""

import os
import random

from osmoffset import analyze, benchcells, checks, fabric
from osmoffset.fabricsuite import ORDERS

# how many draws a shape seed gets before it gives up (gen-fabric
# refuses some combinations: a core without enough ports, edges that
# share no spine)
DRAWS = 20
# figures of ours below stock's by more than this count
TOLERANCE = 5e-4


def draw_shape(rng):
    """gen-fabric cluster arguments drawn from rng (random.Random)."""
    radix = rng.choice([36, 40, 64])
    hosts = min(rng.choice([4, 6, 8, 12, 16, 18, 20]), radix // 2)
    up = rng.choice([hosts, hosts, max(1, hosts // 2),
                     max(1, 2 * hosts // 3)])
    rails = rng.choice([1, 1, 1, 2, 4])
    core = rng.choice(["spines", "spines", "directors", "pods"])
    pods = rng.choice([2, 3, 4]) if core == "pods" else 1
    unit = rails * pods
    edges = unit * rng.randint(max(1, 4 // unit), max(2, 24 // unit))
    args = ["cluster", "--radix", str(radix), "--edges", str(edges),
            "--hosts-per-edge", str(hosts), "--uplinks", str(up)]
    if rails > 1:
        args += ["--rails", str(rails)]
    if core == "spines":
        args += ["--spines", str(rng.randint(max(2, up // 2),
                                             max(2, min(up, radix // 2))))]
    elif core == "directors":
        args += ["--directors", str(rng.choice([1, 2])),
                 "--lines", str(rng.choice([2, 4, 6])),
                 "--fabrics", str(rng.choice([2, 3, 4]))]
    else:
        ps = max(2, min(up, 8))
        args += ["--pods", str(pods), "--pod-spines", str(ps),
                 "--spines", str(rng.choice([2, 4, ps]))]
    if rng.random() < 0.3:
        args += ["--empty-edges", str(rng.randint(1, 3) * pods)]
    if rng.random() < 0.3:
        args += ["--core-hosts", str(rng.randint(1, 4))]
    if rng.random() < 0.3:
        args += ["--double-links", str(rng.choice([0.25, 0.5, 0.9]))]
    if rng.random() < 0.4:
        args += ["--remove-links", str(rng.choice([0.02, 0.05, 0.1]))]
    if rng.random() < 0.25:
        args += ["--sharp"]
    args += ["--seed", str(rng.randint(1, 999)), "--random-guids"]
    return args


def degrade_args(net, fraction, seed):
    """gen-fabric arguments of net without round(fraction x its
    inter-switch cables), drawn with seed."""
    return ["degrade", "--net", net, "--remove-links", str(fraction),
            "--seed", str(seed)]


def make_fabric(out, seed, base=None, fraction=0.05):
    """The shape of seed, written to OUT/fabrics/shape-SEED.net: the net
    file base without a fraction of its inter-switch cables (gen-fabric
    degrade), or without base the first of seed's draws that gen-fabric
    accepts.  Returns (path, gen-fabric arguments), or (None, why) where
    gen-fabric refused."""
    net = os.path.join(out, "fabrics", "shape-%d.net" % seed)
    if base is not None:
        args = degrade_args(base, fraction, seed)
        p = benchcells.run_tool("gen-fabric", args + ["-o", net])
        if p.returncode == 0:
            return net, args
        return None, benchcells.last_line(p.stderr) or \
            "exit %d" % p.returncode
    rng = random.Random(seed)
    why = None
    for _draw in range(DRAWS):
        args = draw_shape(rng)
        p = benchcells.run_tool("gen-fabric", args + ["-o", net])
        if p.returncode == 0:
            return net, args
        why = benchcells.last_line(p.stderr) or "exit %d" % p.returncode
    return None, "%d draws refused, the last: %s" % (DRAWS, why)


def measure_cell(task, res, osmlog):
    """benchcells measure(): the engine that routed, credit loop,
    host/LID pairs without a route, and the shift figures of every rank
    order."""
    res["engine_used"] = checks.osm_log_summary(osmlog)["engine_used"]
    celldir = task["dir"]
    try:
        topo = fabric.load_topology(
            os.path.join(celldir, "opensm-subnet.lst"))
        lfts = fabric.load_lfts(os.path.join(celldir, "opensm-lfts.dump"))
        r = analyze.shift_by_order(topo, lfts, dict(ORDERS), task["lmc"])
    except fabric.InputError as exc:
        res.update(status="error", error="analysis: %s" % exc)
        return
    res.update(status="ok", credit_loop=r["credit_loop"],
               unreachable_pairs=r["unreachable_pairs"], hosts=r["hosts"],
               orders={o: {"base": v["base"], "spread": v["spread"]}
                       for o, v in r["orders"].items()})


CONFIGS = ("updn", "osmoffset")


def make_tasks(out, rows, lmcs, plugin_dir):
    """benchcells tasks: every shape that was drawn, at every LMC, by
    stock updn and with the plugin; keyed (row index, config, lmc)."""
    tasks = []
    for i, row in enumerate(rows):
        if row.get("net") is None:
            continue
        for config in CONFIGS:
            for lmc in lmcs:
                cell = os.path.join(out, "runs", "shape-%d" % row["seed"],
                                    config, "lmc%d" % lmc)
                sim = ["-q", "--net", row["net"], "--out", cell, "--lmc",
                       str(lmc), "--engine", "updn", "--roots", "none",
                       "--no-ibroute", "--allow-fallback", "--timeout",
                       "600"]
                sim += ["--stock"] if config == "updn" else \
                    ["--port-offsetting", "on", "--plugin-dir", plugin_dir]
                tasks.append({"id": (i, config, lmc), "dir": cell,
                              "sim": sim, "key": None, "force": True,
                              "lmc": lmc, "measure": measure_cell})
    return tasks


def measured_pair(row, lmc):
    """(ours, stock updn's) cell of a row at one LMC, each None where it
    is missing."""
    return ((row.get("osmoffset") or {}).get(lmc),
            (row.get("updn") or {}).get(lmc))


def stock_whole(stock):
    """Whether stock updn's cell routes every pair without a credit
    loop."""
    return not stock["unreachable_pairs"] and not stock["credit_loop"]


def below_stock(ours, stock):
    """The figures of ours below stock updn's by more than TOLERANCE:
    (order, traffic, ours, stock) in ORDERS order, base then spread."""
    out = []
    for o, _spec in ORDERS:
        for t in ("base", "spread"):
            a = ours["orders"][o][t]
            b = stock["orders"][o][t]
            if a is not None and b is not None and a < b - TOLERANCE:
                out.append((o, t, a, b))
    return out


def findings(row, lmc):
    """What is wrong with ours at one LMC of a row: a list of (kind,
    text), kind 'loop' (a credit loop in ours), 'reach' (more pairs
    without a route than stock updn), 'below' (a figure below stock
    updn's), 'error' (a cell not measured).  A 'below' says where stock
    updn leaves pairs without a route or has a credit loop itself, a
    'reach' where stock updn has a credit loop."""
    ours, stock = measured_pair(row, lmc)
    out = []
    for name, cell in (("osmoffset", ours), ("updn", stock)):
        if cell is not None and cell.get("status") != "ok":
            out.append(("error", "%s: %s" % (name, cell.get("error"))))
    if out or ours is None or stock is None:
        return out
    if ours["credit_loop"]:
        out.append(("loop", "credit loop"))
    if ours["unreachable_pairs"] > stock["unreachable_pairs"]:
        out.append(("reach", "%d host/LID pairs without a route, stock "
                    "updn %d%s" % (ours["unreachable_pairs"],
                                   stock["unreachable_pairs"],
                                   " (stock has a credit loop)"
                                   if stock["credit_loop"] else "")))
    note = []
    if stock["unreachable_pairs"]:
        note.append("stock leaves %d pairs without a route"
                    % stock["unreachable_pairs"])
    if stock["credit_loop"]:
        note.append("stock has a credit loop")
    for o, t, a, b in below_stock(ours, stock):
        out.append(("below", "%s %s %.3f < %.3f%s" % (
            o, t, a, b, " (%s)" % "; ".join(note) if note else "")))
    return out


def summary(rows, lmcs):
    """Counts over the measured shapes: shapes, cells, and per finding
    kind the cells (or figures, for 'below') that have it; 'below_valid'
    counts the figures below stock where stock updn routes every pair
    without a credit loop, 'reach_valid' the 'reach' cells where stock
    updn has no credit loop."""
    s = {"shapes": sum(1 for r in rows if r.get("net")),
         "refused": sum(1 for r in rows if not r.get("net")),
         "cells": 0, "loop": 0, "reach": 0, "reach_valid": 0, "below": 0,
         "below_valid": 0,
         "below_structured_valid": 0, "error": 0}
    for r in rows:
        for lmc in lmcs:
            if (r.get("osmoffset") or {}).get(lmc) is None:
                continue
            s["cells"] += 1
            f = findings(r, lmc)
            for kind in ("loop", "reach", "error"):
                s[kind] += any(k == kind for k, _t in f)
            s["below"] += sum(1 for k, _t in f if k == "below")
            ours, stock = measured_pair(r, lmc)
            s["reach_valid"] += any(k == "reach" for k, _t in f) and \
                not stock["credit_loop"]
            if stock is None or any(k == "error" for k, _t in f) or \
                    not stock_whole(stock):
                continue
            below = below_stock(ours, stock)
            s["below_valid"] += len(below)
            s["below_structured_valid"] += sum(1 for o, *_f in below
                                               if o != "random")
    return s


def fmt(cell, order="leaf"):
    if cell is None:
        return "-"
    if cell.get("status") != "ok":
        return "ERROR"
    v = cell["orders"][order]["base"]
    return "-" if v is None else "%.3f" % v


def report(rows, lmcs):
    """The table: one line per shape and LMC (leaf order, base LIDs, of
    stock and ours, and what is wrong with ours), then the shapes, then
    the counts."""
    lines = ["%-6s %-3s %6s  %9s %9s  %s" % (
        "shape", "lmc", "hosts", "updn", "osmoffset", "findings")]
    for r in rows:
        if not r.get("net"):
            continue
        for lmc in lmcs:
            ours, stock = measured_pair(r, lmc)
            f = findings(r, lmc)
            hosts = (ours or {}).get("hosts") or (stock or {}).get("hosts")
            lines.append("%-6d %-3d %6s  %9s %9s  %s" % (
                r["seed"], lmc, hosts if hosts else "-", fmt(stock),
                fmt(ours), "; ".join(t for _k, t in f) if f else "-"))
    lines.append("")
    for r in rows:
        lines.append("shape %d: %s" % (
            r["seed"], "gen-fabric " + " ".join(r["args"])
            if r.get("net") else "not drawn (%s)" % r["why"]))
    s = summary(rows, lmcs)
    lines.append("")
    lines.append(
        "%d shapes (%d not drawn), %d cells: ours with a credit loop in %d, "
        "with more pairs without a route than stock updn in %d (%d of "
        "them where stock updn has no credit loop), not measured in %d; "
        "%d figures below stock updn, %d of them where stock updn routes "
        "every pair without a credit loop (%d of those outside the random "
        "order)" % (
            s["shapes"], s["refused"], s["cells"], s["loop"], s["reach"],
            s["reach_valid"], s["error"], s["below"], s["below_valid"],
            s["below_structured_valid"]))
    return lines
