"""bench-quality's output: the text tables and goal lines it prints, and
the Markdown report of --doc with its diagnostics (the reachable optimum,
random orders measured again, the hot links of missed targets)."""

import os

from osmoffset import fabric
from osmoffset.benchreport import fmt, md_table
from osmoffset.quality import (CONFIG_BY_NAME, EPS, FABRIC_BY_NAME, ORDERS,
                               ORDER_TITLE, OURS, RECHECK_SEEDS, TARGET,
                               cell_value, fabric_bound, figures, hot_links,
                               row_note, seed_efficiencies)
from osmoffset.qualitygoals import goal_status


def text_tables(results, fabrics, configs, lmcs, no_random, finfo):
    cols = figures(lmcs)
    lines = []
    fw = max(len(f) for f in fabrics)
    cw = max(len(c) for c in configs)
    for order in ORDERS:
        if order == "random" and all(f in no_random for f in fabrics):
            continue
        lines.append("== %s ==" % ORDER_TITLE[order])
        head = "%-*s  %-*s  " % (fw, "fabric", cw, "config") + "  ".join(
            "%9s" % n for n, _, _ in cols) + "  %6s  %6s  %s" % (
            "bound", "bound1", "notes")
        lines.append(head)
        lines.append("-" * len(head))
        for f in fabrics:
            if order == "random" and f in no_random:
                continue
            bound = fabric_bound(results, f, configs, lmcs, order)
            for c in configs:
                vals = [cell_value(results, f, c, l, order, w)
                        for _, l, w in cols]
                lines.append("%-*s  %-*s  " % (fw, f, cw, c) + "  ".join(
                    "%9s" % fmt(v) for v in vals) + "  %6s  %6s  %s"
                    % (fmt(bound), fmt(finfo[f]["path_bound"][order]["0"]),
                       row_note(results, f, c, lmcs)))
        lines.append("")
    return lines


def goal_lines(goals):
    lines = ["== goals (ours rows) =="]
    for g in goals:
        lines.append("%-5s %-18s %-12s %-24s %s"
                     % (goal_status(g), g["fabric"],
                        g["config"], g["name"], g["detail"]))
    return lines



def random_recheck_lines(results, fabrics, goals, lmcs):
    """For every random-order figure of ours below stock updn: the same
    comparison over RECHECK_SEEDS random orders, to tell a property of the
    routing from the luck of one shuffle."""
    lines = []
    for f in fabrics:
        failed = [g for g in goals if g["fabric"] == f and
                  g["config"] == OURS[0] and g["goal"] == "vs-updn" and
                  not g["pass"]]
        if not failed:
            continue
        for name, l, what in figures(lmcs):
            v = cell_value(results, f, OURS[0], l, "random", what)
            st = cell_value(results, f, "updn", l, "random", what)
            if v is None or st is None or v >= st - EPS:
                continue
            try:
                ours = cell_seed_efficiencies(results, f, OURS[0], l, what)
                stock = cell_seed_efficiencies(results, f, "updn", l, what)
            except Exception as exc:  # diagnostics only; never fail the run
                lines.append("* %s random %s: not re-measured (%s)"
                             % (f, name, exc))
                continue
            wins = sum(1 for a, b in zip(ours, stock) if a >= b - EPS)
            lines.append(
                "* %s random %s: this run's order %.3f vs updn %.3f; over "
                "seeds 1-%d %s %.3f vs updn %.3f (mean), %s >= updn in %d "
                "of %d orders" % (f, name, v, st, RECHECK_SEEDS, OURS[0],
                                  sum(ours) / len(ours),
                                  sum(stock) / len(stock), OURS[0], wins,
                                  len(ours)))
    return lines


def hot_spot_lines(results, fabrics, goals, finfo):
    lines = []
    seen = set()
    for g in goals:
        if g["pass"] or g["goal"] not in ("target", "target-path") or \
                g["config"] != OURS[0]:
            continue
        f, c = g["fabric"], g["config"]
        order = "topo"
        if (f, c, order) in seen:
            continue
        seen.add((f, c, order))
        r = results.get((f, c, 0))
        o = (r or {}).get("orders", {}).get(order)
        if not o or "error" in o:
            continue
        k = o["worst_base_round"]
        try:
            links = hot_links(os.path.join(r["dir"]), k,
                              finfo[f]["hostfile"] if order == "random"
                              else None)
        except Exception as exc:  # diagnostics only; never fail the run
            links = ["(not available: %s)" % exc]
        lines.append("* %s %s LMC 0, %s: worst round k=%d, max load %g: %s"
                     % (f, c, ORDER_TITLE[order], k, o["worst_base_load"],
                        ", ".join(links) or "no link above 1"))
    return lines


def cell_seed_efficiencies(results, f, c, l, what):
    """The shift efficiency of cell (f, c, l)'s LFTs in the random orders
    of seeds 1..RECHECK_SEEDS (seed_efficiencies())."""
    celldir = results[(f, c, l)]["dir"]
    topo = fabric.load_topology(os.path.join(celldir, "opensm-subnet.lst"))
    return seed_efficiencies(celldir, l, what,
                             [n.desc for n in topo.cas()], RECHECK_SEEDS)


def random_mean(results, f, c, l):
    """The mean of cell_seed_efficiencies() (base at LMC 0, else spread),
    or None where the cell did not run or cannot be measured."""
    r = results.get((f, c, l))
    if not r or r["status"] != "ok":
        return None
    try:
        effs = cell_seed_efficiencies(results, f, c, l,
                                      "base" if l == 0 else "spread")
    except Exception:  # diagnostics only; never fail the run
        return None
    return sum(effs) / len(effs)


def optimum_random_lines(results, have, lmcs, finfo):
    """Markdown: the optimum's routing and ours in the random orders of
    seeds 1..RECHECK_SEEDS."""
    heads = ["L%d %s" % (l, "base" if l == 0 else "spread") for l in lmcs]
    L = ["The same in random rank orders: the mean of seeds 1-%d (the "
         "host names in natural order shuffled by `random.Random(seed)`, "
         "as the re-measured random orders below; `scripts/route-optimum "
         "--topology NET --lmc L --random-orders %d`).  The optimum "
         "row is the routing the solver found for the topology order, "
         "measured in the random orders: it was not chosen for them, "
         "and another routing as good in topology order may do better "
         "there." % (RECHECK_SEEDS, RECHECK_SEEDS), ""]
    rows = []
    for f in have:
        rnd = finfo[f]["optimum"].get("random", {})
        rows.append([f, "optimum's routing"] +
                    [fmt(rnd.get(str(l))) for l in lmcs])
        apart = finfo[f]["optimum"].get("apart_random", {})
        if apart:
            rows.append([f, "optimum's routing, LIDs apart"] +
                        [fmt(apart.get(str(l))) for l in lmcs])
        for c in OURS + ["updn"]:
            rows.append([f, c] + [fmt(random_mean(results, f, c, l))
                                  for l in lmcs])
    L.extend(md_table(["fabric", "what"] + heads, rows))
    L.append("")
    return L


def apart_lines(results, have, lmcs, finfo):
    """Markdown: what the LIDs-apart row is, how many flows the
    unconstrained optimum's routing puts together on a spine, and what
    share of either optimum the ours rows reach."""
    spread = [l for l in lmcs if l]
    if not spread or not any(finfo[f]["optimum"].get("apart")
                             for f in have):
        return []
    counts, shares = [], []
    for f in have:
        opt = finfo[f]["optimum"]
        for l in spread:
            if str(l) in opt.get("shared", {}):
                counts.append("%s L%d %d of %d" % (
                    f, l, opt["shared"][str(l)]["flows"],
                    opt["shared"][str(l)]["of"]))
            v = cell_value(results, f, OURS[0], l, "topo", "spread")
            if v is not None and opt["lmc"].get(str(l)) and \
                    opt["apart"].get(str(l)):
                shares.append("%s L%d %.1f %% and %.1f %%" % (
                    f, l, 100 * v / opt["lmc"][str(l)],
                    100 * v / opt["apart"][str(l)]))
    return ["*optimum, LIDs apart*: the best of the routings that put "
            "each flow's LIDs on different spines, as port offsetting "
            "sets out to route them (from each leaf at most "
            "ceil(2^LMC / spines the two leaves share) LIDs of one host "
            "over one spine; `scripts/route-optimum --topology NET --lmc L "
            "--lids-apart`).  The optimum row's routing may stripe a flow "
            "over fewer paths than it has LIDs, and does so in %s flows "
            "(source leaf, destination host); the random orders below "
            "show what that costs where the rank order is not the one it "
            "was solved for.  %s reaches, of the optimum and of the "
            "optimum with the LIDs apart: %s." % (
                "; ".join(counts), OURS[0], "; ".join(shares)), ""]


def optimum_lines(results, fabrics, lmcs, finfo):
    """Markdown: the reachable optimum next to the 1-path bound and ours,
    topology order."""
    have = [f for f in fabrics if finfo[f].get("optimum", {}).get("lmc")]
    skipped = ["%s (%s)" % (f, finfo[f]["optimum"]["skipped"])
               for f in fabrics if FABRIC_BY_NAME[f][1] != "full" and
               "skipped" in finfo[f].get("optimum", {})]
    L = []
    if not have and not skipped:
        return L
    heads = ["L%d %s" % (l, "base" if l == 0 else "spread") for l in lmcs]
    L.append("The best any destination-based routing reaches "
             "(`scripts/route-optimum --topology NET --lmc L`, exact), "
             "against the 1-path bound and the ours rows, topology order:")
    L.append("")
    rows = []
    for f in have:
        opt = finfo[f]["optimum"]["lmc"]
        pb = finfo[f]["path_bound"]["topo"]
        rows.append([f, "optimum"] + [fmt(opt.get(str(l))) for l in lmcs])
        apart = finfo[f]["optimum"].get("apart", {})
        if apart:
            rows.append([f, "optimum, LIDs apart"] +
                        [fmt(apart.get(str(l))) for l in lmcs])
        rows.append([f, "1-path bound"] + [fmt(pb.get(str(l)))
                                           for l in lmcs])
        for c in OURS:
            rows.append([f, c] + [fmt(cell_value(
                results, f, c, l, "topo", "base" if l == 0 else "spread"))
                for l in lmcs])
    L.extend(md_table(["fabric", "what"] + heads, rows))
    L.append("")
    L.extend(apart_lines(results, have, lmcs, finfo))
    if have:
        L.extend(optimum_random_lines(results, have, lmcs, finfo))
    if skipped:
        L.append("Not solved: %s." % "; ".join(skipped))
        L.append("")
    return L


def write_doc(path, meta, results, goals, finfo, fabrics, configs, lmcs,
              no_random, pngs):
    cols = figures(lmcs)
    L = []
    add = L.append
    npass = sum(1 for g in goals if g["pass"])
    add("# Routing quality: alltoall efficiency of OpenSM engines and "
        "port offsetting")
    add("")
    add("Generated by `scripts/bench-quality`; do not edit by hand, rerun "
        "instead (see *Reproduce*).")
    add("")
    add("* Date: %s" % meta["date"])
    add("* Machine: %s" % meta["machine"])
    add("* opensm %s, ibsim-utils %s, plugin `.libs/libosmoffset.so` "
        "sha256 `%s`" % (meta["versions"].get("opensm"),
                         meta["versions"].get("ibsim-utils"),
                         (meta["plugin_sha"] or "-")[:16]))
    add("* Command: `%s`" % meta["command"])
    add("* Runtime: %.1f s wall for %d cells (%d routed, %d from the cache), "
        "--jobs %d; the cells took %.0f s in all when they were routed "
        "and analysed" % (meta["seconds"], meta["cells"], meta["routed"],
                          meta["cells"] - meta["routed"], meta["jobs"],
                          meta["cell_seconds"]))
    add("* Goals: %d of %d PASS" % (npass, len(goals)))
    add("")
    add("## What is measured")
    add("")
    add("Every cell is one `scripts/osm-sim` run (a private ibsim simulator "
        "and Debian's unmodified `opensm --once`, with or without the "
        "osmoffset plugin) followed by `scripts/lft-analyze --json` on the "
        "LFTs OpenSM computed.  lft-analyze replays an MPI alltoall as the "
        "shift pattern (in round k rank i sends to rank i+k) through the "
        "forwarding tables and counts, per link, the flows that share it.  "
        "The efficiency of a round is min(1, 1 / heaviest link load); the "
        "figure is the mean over all rounds, so 1.000 means congestion "
        "free:")
    add("")
    add("* **base**: every rank sends to its peer's base LID "
        "(`shift.base.efficiency`): what an MPI that ignores LMC sees;")
    add("* **spread**: each flow is split evenly over the peer's 2^LMC "
        "LIDs (`shift.spread.efficiency`, LMC > 0 only): what a "
        "multi-LID MPI sees;")
    add("* **bound**: the same pattern limited only by the leaf uplinks "
        "(`bound.efficiency`): a leaf with o flows leaving (n arriving) "
        "and u inter-switch links carries at least max(o, n) / u per "
        "link; no routing can beat it for that rank order;")
    add("* **bound1** (computed by bench-quality from the net file, not "
        "by lft-analyze): the same leaf bound for traffic that takes "
        "*one* path per flow, ceil(max(o, n) / u): a leaf with 17 "
        "uplinks for 18 sending hosts must put two flows on one link.  "
        "This is what base-LID traffic can reach at best; for the "
        "spread figure at LMC l the goal uses ceil(max(o, n) x 2^l / u) "
        "/ 2^l.  On full-bisection fabrics bound1 = bound;")
    add("* `valid` (every host reaches every host LID) and `credit_loop` "
        "(a cycle in the channel dependency graph; lft-analyze ignores "
        "virtual lanes, so it would also flag a dfsssp routing whose "
        "cycles are broken by VLs).")
    add("")
    add("Two rank orders: **topology order** (ranks placed leaf by leaf, "
        "port by port, the order a scheduler fills a fat tree) and a "
        "**random order** (the hosts shuffled with Python's "
        "`random.Random(%d)`, passed as `--hostfile`).  No static routing "
        "is congestion free for every order; the random order shows how "
        "a routing copes with placement it was not made for." % meta["seed"])
    add("")
    add("**updn roots.**  All updn rows except `updn-rootsnone` use the "
        "roots that `osm-sim --roots auto` gives: the `# updn-root` lines "
        "of the net file (the top-level switches), passed to opensm with "
        "`-a`.  `updn-rootsnone` is stock updn with `--roots none`, i.e. "
        "OpenSM's own root detection, because the issue's reference "
        "figures were taken that way; on the 648- and 576-host fabrics "
        "that detection takes every switch as a root, on degraded ones it "
        "drops spines that lost a link, on the seed example it finds no "
        "root and OpenSM falls back to minhop (see "
        "`sim-topologies/README.md`).")
    add("")
    add("**Fallbacks.**  ftree refuses LMC > 0 and OpenSM then routes with "
        "its default (minhop).  bench-quality reads the engine that "
        "configured the switches from `osm.log` (`<engine> tables "
        "configured on all switches`) and marks such cells `fallback "
        "<engine>`; those figures are minhop's, not ftree's.")
    add("")
    add("## Fabrics")
    add("")
    rows = []
    for f in fabrics:
        fi = finfo[f]
        rows.append([f, str(fi["hosts"]), str(fi["switches"]),
                     "full bisection" if FABRIC_BY_NAME[f][1] == "full"
                     else "judged vs bound",
                     FABRIC_BY_NAME[f][3],
                     "`%s`" % fi["command"] if fi["command"] else "-"])
    L.extend(md_table(["fabric", "hosts", "switches", "class", "what",
                       "generated by"], rows))
    add("")
    add("The big fabrics are written by `sim-topologies/regen.sh --big "
        "OUT/fabrics` (not committed); the others are the curated "
        "`sim-topologies/*.net`.")
    add("")
    add("## Configurations")
    add("")
    rows = []
    for c in configs:
        _, label, sim, osm, ours = CONFIG_BY_NAME[c]
        osm = [str(meta["scatter_seed"]) if o == "SEED" else o for o in osm]
        args = " ".join(sim + (["--"] + osm if osm else []))
        rows.append([("**%s**" % c) if ours else c,
                     label.replace("SEED", str(meta["scatter_seed"])),
                     "`osm-sim %s`" % args])
    L.extend(md_table(["config", "what", "osm-sim arguments (plus --net, "
                       "--out, --lmc, --allow-fallback)"], rows))
    add("")
    add("## Goals")
    add("")
    add("Checked for the **ours** rows (`ours-updn`, `ours-minhop`; "
        "`plain-updn` is the 2008 rule, shown for A/B only):")
    add("")
    add("* **target**: full-bisection fabrics: base and spread >= %.2f at "
        "every LMC; oversubscribed and degraded fabrics: >= %.2f x bound; "
        "both in topology order only: the bound counts the leaf uplinks "
        "alone, and no destination-based routing keeps every round of a "
        "shift in an arbitrary rank order free of congestion on the "
        "spine down-links, so in random order the bound is not reachable;"
        % (TARGET, TARGET))
    add("* **target, 1-path** (oversubscribed and degraded fabrics only, "
        "added by this benchmark): base >= %.2f x bound1 and spread at "
        "LMC l >= %.2f x the 1-path bound with 2^l paths, topology "
        "order.  The target above uses the fractional bound, which no "
        "single-path (base-LID) routing can reach when a leaf has fewer "
        "uplinks than hosts, so it fails by construction on the degraded "
        "fabrics; this row tells whether the routing gets close to what "
        "is reachable;" % (TARGET, TARGET))
    add("* **target, optimum** (small oversubscribed and degraded 2-level "
        "fabrics, added by this benchmark): base and spread >= %.2f x the "
        "best that *any* destination-based routing reaches on the fabric "
        "in topology order, solved exactly by `scripts/route-optimum` "
        "(an integer program; table below).  Where the optimum itself is "
        "below the two targets above, those targets cannot be met by any "
        "routing;" % TARGET)
    add("* **>= stock updn**: no figure (base or spread, any LMC, either "
        "rank order) below stock `updn` (same roots) on the same fabric;")
    add("* **sound**: valid routing, no credit loop, the requested engine "
        "routed (no fallback) and no ERR line in osm.log, in every cell.")
    add("")
    gids = [("target", "target"), ("target-path", "target, 1-path"),
            ("target-opt", "target, optimum"),
            ("vs-updn", ">= stock updn"), ("sound", "sound")]
    by = {(g["fabric"], g["config"], g["goal"]): g for g in goals}
    rows = []
    for f in fabrics:
        for c in configs:
            if c not in OURS:
                continue
            cells = []
            for gid, _ in gids:
                g = by.get((f, c, gid))
                cells.append("-" if g is None else
                             "PASS" if g["pass"] else "**FAIL**")
            rows.append([f, c] + cells)
    L.extend(md_table(["fabric", "config"] + [n for _, n in gids], rows))
    add("")
    failed = [g for g in goals if not g["pass"]]
    if failed:
        add("Failures, with the measured figures:")
        add("")
        for g in failed:
            add("* %s %s, %s: %s%s" % (
                g["fabric"], g["config"], g["name"], g["detail"],
                " (known failure: XFAIL)" if g.get("known_failure")
                else ""))
        add("")
    L.extend(optimum_lines(results, fabrics, lmcs, finfo))
    recheck = random_recheck_lines(results, fabrics, goals, lmcs)
    if recheck:
        add("Random-order figures of %s below stock updn, measured again "
            "in %d shuffles (`random.Random(seed)`, seeds 1-%d) of the "
            "same LFTs:" % (OURS[0], RECHECK_SEEDS, RECHECK_SEEDS))
        add("")
        L.extend(recheck)
        add("")
    hot = hot_spot_lines(results, fabrics, goals, finfo)
    if hot:
        add("Where the load piles up in the worst shift round of the "
            "%s cells that miss the target (LMC 0, base-LID traffic, "
            "topology order; `switch[port]=flows` of the heaviest links, "
            "recomputed from the cell's dumps):" % OURS[0])
        add("")
        L.extend(hot)
        add("")
    for order in ORDERS:
        fl = [f for f in fabrics if not (order == "random"
                                         and f in no_random)]
        if not fl:
            continue
        add("## Results, %s" % ORDER_TITLE[order])
        add("")
        rows = []
        for f in fl:
            bound = fabric_bound(results, f, configs, lmcs, order)
            for c in configs:
                vals = [fmt(cell_value(results, f, c, l, order, w))
                        for _, l, w in cols]
                if c in OURS:
                    vals = ["**%s**" % v for v in vals]
                rows.append([f, ("**%s**" % c) if c in OURS else c] + vals +
                            [fmt(bound),
                             fmt(finfo[f]["path_bound"][order]["0"]),
                             row_note(results, f, c, lmcs)])
        L.extend(md_table(["fabric", "config"] + [n for n, _, _ in cols] +
                          ["bound", "bound1", "notes"], rows))
        add("")
    if no_random:
        add("Random order not measured for: %s." % ", ".join(
            sorted(no_random)))
        add("")
    if pngs:
        add("## Charts")
        add("")
        for p in pngs:
            what = "base-LID" if p.endswith("-base.png") else "LMC-spread"
            add("%s efficiency at LMC %d per fabric and configuration "
                "(black outline = ours, hatched = the engine fell back, "
                "solid line = bound, dotted = 0.95 x bound):"
                % (what, max(lmcs)))
            add("")
            add("![%s efficiency](%s)" % (what, os.path.basename(p)))
            add("")
    problems = []
    for (f, c, l), r in sorted(results.items(),
                               key=lambda kv: (fabrics.index(kv[0][0]),
                                               configs.index(kv[0][1]),
                                               kv[0][2])):
        if r["status"] != "ok":
            problems.append("* %s %s LMC %d: %s" % (f, c, l, r.get("error")))
        elif r.get("log_errors"):
            problems.append("* %s %s LMC %d: osm.log: %s"
                            % (f, c, l, r["log_errors"][0]))
    if problems:
        add("## Errors")
        add("")
        add("Cells whose run failed, and ERR lines of osm.log (for stock "
            "ftree these are the engine refusing the fabric before OpenSM "
            "falls back to minhop):")
        add("")
        L.extend(problems)
        add("")
    add("## Reproduce")
    add("")
    add("    %s" % meta["command"])
    add("")
    add("Runs are cached in the `--out` directory (`runs/FABRIC/CONFIG/"
        "lmcN/`: the OpenSM dumps, osm.log and `cell.json` with the "
        "figures); a re-run only redoes cells whose inputs changed, "
        "`--force` redoes all.  To look at one cell:")
    add("")
    add("    scripts/lft-analyze --lfts OUT/runs/ft2-648/ours-updn/lmc2/"
        "opensm-lfts.dump --topology OUT/runs/ft2-648/ours-updn/lmc2/"
        "opensm-subnet.lst --plot /tmp/plots")
    add("")
    with open(path, "w") as f:
        f.write("\n".join(L))
