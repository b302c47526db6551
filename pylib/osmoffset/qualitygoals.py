"""bench-quality's goals: what the 'ours' rows must reach on every fabric
(the target, against the 1-path bound and the reachable optimum, never
below stock updn, sound routing) and the regression cases, each a goal
that passes or fails with the figures that missed."""

import os

from osmoffset import benchcells, fabric, rankorder, routes, schedule
from osmoffset.quality import (EPS, FABRIC_BY_NAME, ORDERS, OURS,
                               REGRESSIONS, TARGET, cell_argv, cell_value,
                               fabric_bound, figures)


def check_goals(results, fabrics, configs, lmcs, no_random, finfo):
    goals = []
    cols = figures(lmcs)
    for f in fabrics:
        klass = FABRIC_BY_NAME[f][1]
        orders = ["topo"] if f in no_random else list(ORDERS)
        for c in configs:
            if c not in OURS:
                continue
            # target
            bound = fabric_bound(results, f, configs, lmcs, "topo")
            if klass == "full":
                target, tname = TARGET, ">= %.2f" % TARGET
            else:
                target = TARGET * bound if bound is not None else None
                tname = ">= %.2f x bound" % TARGET
            bad, missing = [], []
            for name, l, what in cols:
                v = cell_value(results, f, c, l, "topo", what)
                if v is None or target is None:
                    missing.append(name)
                elif v < target - EPS:
                    bad.append("%s %.3f" % (name, v))
            goals.append(goal(f, c, "target", tname, bad, missing,
                              "< %.3f" % target if target is not None
                              else ""))
            if klass != "full":
                # the same against the single-path bound (see path_bound)
                pb = finfo[f]["path_bound"]["topo"]
                bad, missing = [], []
                for name, l, what in cols:
                    v = cell_value(results, f, c, l, "topo", what)
                    t = TARGET * pb[str(0 if what == "base" else l)]
                    if v is None:
                        missing.append(name)
                    elif v < t - EPS:
                        bad.append("%s %.3f < %.3f" % (name, v, t))
                goals.append(goal(f, c, "target-path",
                                  ">= %.2f x 1-path bound" % TARGET, bad,
                                  missing, ""))
            opt = finfo[f].get("optimum", {}).get("lmc")
            if opt:
                # the same against the best any routing reaches
                bad, missing = [], []
                for name, l, what in cols:
                    v = cell_value(results, f, c, l, "topo", what)
                    o = opt.get(str(0 if what == "base" else l))
                    if v is None or o is None:
                        missing.append(name)
                    elif v < TARGET * o - EPS:
                        bad.append("%s %.3f < %.3f" % (name, v, TARGET * o))
                goals.append(goal(f, c, "target-opt",
                                  ">= %.2f x optimum" % TARGET, bad,
                                  missing, ""))
            # never below stock updn
            bad, missing = [], []
            if "updn" in configs:
                for order in orders:
                    for name, l, what in cols:
                        v = cell_value(results, f, c, l, order, what)
                        s = cell_value(results, f, "updn", l, order, what)
                        if v is None or s is None:
                            missing.append("%s %s" % (order, name))
                        elif v < s - EPS:
                            bad.append("%s %s %.3f < %.3f"
                                       % (order, name, v, s))
                goals.append(goal(f, c, "vs-updn", ">= stock updn", bad,
                                  missing, ""))
            # valid, no credit loop, routed by the engine asked for
            bad, missing = [], []
            for l in lmcs:
                r = results.get((f, c, l))
                if r is None or r["status"] != "ok":
                    missing.append("L%d" % l)
                    continue
                if r.get("fallback"):
                    bad.append("L%d fallback %s" % (l, r.get("engine_used")))
                if r.get("log_errors"):
                    bad.append("L%d log: %s" % (l, r["log_errors"][0]))
                for order in orders:
                    o = r["orders"].get(order, {})
                    if o.get("valid") is False:
                        bad.append("L%d %s invalid" % (l, order))
                    if o.get("credit_loop"):
                        bad.append("L%d %s credit loop" % (l, order))
            goals.append(goal(f, c, "sound", "valid, no credit loop", bad,
                              missing, ""))
    return goals


def regression_goals(out, scatter_seed, log):
    """The known-regression cases (REGRESSIONS) as goals."""
    goals = []
    for name, gen, lmc, cfg, issue, known in REGRESSIONS:
        net = os.path.join(out, "fabrics", name + ".net")
        gname = "base+k >= stock updn, LMC %d (%s)" % (lmc, issue)
        res = {"fabric": name, "config": cfg, "goal": "lid-offsets",
               "name": gname, "known_failure": issue if known else None}
        try:
            if not os.path.isfile(net):
                os.makedirs(os.path.dirname(net), exist_ok=True)
                p = benchcells.run_tool("gen-fabric", gen + ["-o", net])
                if p.returncode != 0:
                    raise RuntimeError("gen-fabric: " + p.stderr.strip())
            times = {}
            for c in ("updn", cfg):
                d = os.path.join(out, "runs", name, c, "lmc%d" % lmc)
                p = benchcells.run_tool("osm-sim", cell_argv(
                    c, net, lmc, d, scatter_seed))
                if p.returncode != 0:
                    raise RuntimeError("osm-sim %s: %s" % (
                        c, p.stderr.strip()[-300:]))
                rt = routes.Routes(
                    fabric.load_topology(os.path.join(
                        d, "opensm-subnet.lst")),
                    fabric.load_lfts(os.path.join(d, "opensm-lfts.dump")))
                order = rankorder.order_hosts(
                    rankorder.job_hosts(rt.topo, rt.hosts)[0], "leaf")
                times[c] = schedule.lid_offset_times(rt, order)
        except (RuntimeError, OSError, fabric.InputError,
                routes.RouteError) as exc:
            res.update({"pass": False, "detail": "not measured: %s" % exc})
            goals.append(res)
            continue
        bad = ["base+%d %.3fx" % (k, o / s)
               for k, (s, o) in enumerate(zip(times["updn"], times[cfg]))
               if o > s * (1 + 1e-9)]
        res["offset_ratio"] = [round(o / s, 4) for s, o in
                               zip(times["updn"], times[cfg])]
        res.update({"pass": not bad,
                    "detail": "; ".join(bad) + " the time of stock updn"
                    if bad else ""})
        log("regression %s: %s" % (name, "fails (%s)" % res["detail"]
                                   if bad else "passes"))
        goals.append(res)
    return goals


def goal_failed(g):
    """A goal that fails the run: a failure, or a known failure that now
    passes (XPASS: drop the mark)."""
    return g["pass"] == bool(g.get("known_failure"))


def goal_status(g):
    if g.get("known_failure"):
        return "XPASS" if g["pass"] else "XFAIL"
    return "PASS" if g["pass"] else "FAIL"


def goal(f, c, gid, name, bad, missing, why):
    ok = not bad and not missing
    detail = "; ".join(bad + ["not measured: " + m for m in missing])
    if bad and why:
        detail += " (%s)" % why
    return {"fabric": f, "config": c, "goal": gid, "name": name,
            "pass": ok, "detail": detail}

