"""bench-fabrics's output: the per-fabric tables (Markdown, also printed)
and the report of --doc."""

import datetime

from osmoffset.benchreport import fmt, git_describe, host_name, md_table
from osmoffset.fabricsuite import (ENGINE_BY_NAME, EPS, MARK, ORDERS,
                                   ORDER_TITLE, credit_loops, pairs_of,
                                   runs_ours, traffics, value)


def cell_note(r):
    if r is None:
        return "missing"
    if r["status"] == "fails":
        return "fails (OpenSM fell back to %s)" % r.get("engine_used")
    if r["status"] != "ok":
        return "error: %s" % r.get("error", "")
    notes = []
    if r.get("fallback"):
        notes.append("fallback to %s" % r.get("engine_used"))
    if not r["valid"]:
        notes.append("INVALID: %d unreachable host/LID pairs"
                     % r["unreachable_pairs"])
    if r["credit_loop"]:
        notes.append("CREDIT LOOP")
    elif r.get("credit_loop_every_entry"):
        notes.append("credit loop among every entry (`lft-analyze "
                     "--credit-loops every-entry`)")
    return ", ".join(notes)


def flagged_figures(below):
    """The figures below_stock() found, as fabric_table() marks them:
    (engine, fabric, lmc, order, traffic)."""
    return {(b["engine"], b["fabric"], b["lmc"], b["order"], b["traffic"])
            for b in below}


def fabric_table(results, f, engines, lmcs, flagged):
    head = ["engine", "LMC"]
    for o, _s in ORDERS:
        head.append("%s base" % o)
        if any(l > 0 for l in lmcs):
            head.append("%s spread" % o)
    head.append("notes")
    rows = []
    for e in engines:
        for l in lmcs:
            r = results.get((f, e, l))
            cells = [ENGINE_BY_NAME[e][1], str(l)]
            ok = r is not None and r.get("status") == "ok"
            for o, _s in ORDERS:
                for t in ("base", "spread"):
                    if t == "spread" and not any(x > 0 for x in lmcs):
                        continue
                    if not ok:
                        cells.append("fails" if r and r["status"] == "fails"
                                     else "-")
                        continue
                    v = r["orders"][o][t]
                    if v is None:
                        cells.append("-" if r["orders"][o]["ranks"] == 0
                                     else "")
                        continue
                    txt = fmt(v)
                    if (e, f, l, o, t) in flagged:
                        txt = "**%s %s**" % (MARK, txt)
                    cells.append(txt)
            cells.append(cell_note(r))
            rows.append(cells)
    return md_table(head, rows)


def versus_dfsssp(results, fabs, lmcs):
    """Markdown lines: per fabric, the figures of ours below, equal to and
    above stock dfsssp's (the goal beyond stock updn)."""
    rows, tot = [], [0, 0, 0]
    for f, _i in fabs:
        n = [0, 0, 0]
        for l in lmcs:
            for o, _s in ORDERS:
                for t in traffics(l):
                    a = value(results, f, "ours", l, o, t)
                    b = value(results, f, "dfsssp", l, o, t)
                    if a is None or b is None:
                        continue
                    n[0 if a < b - EPS else 1 if a <= b + EPS else 2] += 1
        if sum(n):
            rows.append([f] + [str(x) for x in n])
            tot = [x + y for x, y in zip(tot, n)]
    if not rows:
        return []
    out = ["**Against stock dfsssp** (the goal beyond stock updn): ours "
           "below in %d, equal in %d, above in %d figures. dfsssp's "
           "figures are of its LFTs alone; where they have a credit loop "
           "it needs its virtual lanes (see the notes)." % tuple(tot), ""]
    out.extend(md_table(["fabric", "ours below dfsssp", "equal",
                         "ours above dfsssp"], rows))
    out.append("")
    return out


def recheck_lines(recheck, shuffles):
    """Markdown lines: the random-order figures of ours below another
    engine's, measured again over many shuffles (fabricsuite's
    random_recheck())."""
    if not shuffles:
        return []
    out = ["**Random order over %d shuffles.** One shuffle is luck: every "
           "figure of ours in the random order of the tables that is below "
           "stock updn's or dfsssp's (of minhop + port_offsetting: below "
           "stock minhop's) was measured again, with the other "
           "engine's, in the random orders of seeds 1-%d (`lft-analyze "
           "--order random --seed S`) of the same LFTs." % (shuffles,
                                                            shuffles)]
    if not recheck:
        out[0] += " There is none."
        return out + [""]
    n = [0, 0, 0]
    for r in recheck:
        a, b = fmt(r["ours_mean"]), fmt(r["other_mean"])
        n[0 if float(a) < float(b) else 1 if a == b else 2] += 1
    out[0] += (" Of these %d figures, on the mean of the %d orders ours is "
               "below in %d, level to three places in %d and above in %d "
               "(there the one shuffle of the table was bad luck)."
               % ((len(recheck), shuffles) + tuple(n)))
    out.append("")
    rows = []
    for r in recheck:
        rows.append([r["fabric"], str(r["lmc"]), r["traffic"],
                     ENGINE_BY_NAME[r["ours_engine"]][1],
                     ENGINE_BY_NAME[r["engine"]][1],
                     "%s / %s" % (fmt(r["ours"]), fmt(r["other"])),
                     "%s / %s" % (fmt(r["ours_mean"]), fmt(r["other_mean"])),
                     "%d of %d" % (r["at_least"], shuffles)])
    out.extend(md_table(["fabric", "LMC", "traffic", "ours", "against",
                         "table (ours / other)",
                         "mean of seeds 1-%d (ours / other)" % shuffles,
                         "orders where ours >= other"], rows))
    out.append("")
    return out


def below_lines(results, fabs, lmcs, below, e, s):
    """Markdown lines: the figures of engine e of ours below stock engine
    s's, per fabric with the worst."""
    mine = [b for b in below if b["engine"] == e]
    n_fig = sum(1 for f, _ in fabs for l in lmcs for o, _s in ORDERS
                for t in traffics(l)
                if value(results, f, e, l, o, t) is not None)
    who = "Port offsetting" if e == "ours" else \
        "Port offsetting under %s" % s
    out = ["**%s below stock %s: %d of %d figures** (marked **%s** in bold "
           "below)." % (who, s, len(mine), n_fig, MARK), ""]
    if not mine:
        return out
    byf = {}
    for b in mine:
        byf.setdefault(b["fabric"], []).append(b)
    rows = []
    for f, _i in fabs:
        bs = byf.get(f)
        if not bs:
            continue
        w = min(bs, key=lambda b: b["ours"] / b["stock"])
        rows.append([f, str(len(bs)), "LMC %d %s %s: %.3f / %.3f"
                     % (w["lmc"], ORDER_TITLE[w["order"]], w["traffic"],
                        w["ours"], w["stock"]),
                     "%s / %s" % (w["ours_unreachable"],
                                  w["stock_unreachable"])])
    out.extend(md_table(["fabric", "figures of ours below stock %s" % s,
                         "worst (ours / %s)" % s, "host/LID pairs without "
                         "a route there (ours / %s)" % s], rows))
    out.append("")
    routed = sum(1 for b in mine if (b["stock_unreachable"] or 0) >
                 (b["ours_unreachable"] or 0))
    if routed:
        out.append("Of these, %d are where stock %s leaves host/LID pairs "
                   "without a route that ours route: a pair without a route "
                   "loads no link in stock %s's figure, while ours carry "
                   "its flows (how much of the gap that makes, the figures "
                   "alone do not tell)." % (routed, s, s))
        out.append("")
    kept = sum(1 for b in mine if b.get("reach_first"))
    if kept:
        out.append("In %d of them the plugin's log says its stock guard "
                   "kept port offsetting's tables for reach though they "
                   "score lower in a cell (`osmoffset: stock guard: the "
                   "tables that won leave N CA LIDs without a route ...`): "
                   "the tables that score as well as stock would leave "
                   "LIDs out of reach on VL0.  With lanes above VL0 for "
                   "the reach pass (`reach_vls=2` or more, OpenSM's QoS "
                   "on) those tables stay and the pass may take the turns "
                   "there (docs/fabrics-reach-vls.md)." % kept)
        out.append("")
    return out


def loop_lines(results, engines):
    """Markdown lines: per engine, the cells with a credit loop."""
    loops = credit_loops(results, engines)
    rows = [[ENGINE_BY_NAME[e][1], str(m), str(n),
             str(k) if c == m else "%d (%d cells checked)" % (k, c)]
            for e, (n, k, c, m) in loops.items() if m]
    if not rows:
        return []
    out = ["**Cells with a credit loop**: a cycle of the channel "
           "dependencies of the routes the CAs' traffic takes (on VL0, "
           "unless the plugin's reach pass put routes above it: then per "
           "lane), and of every LFT entry that leads to another switch, "
           "switch LIDs too, as management traffic to the switches takes "
           "them (`lft-analyze --credit-loops every-entry`; not counted "
           "for routes above VL0).", ""]
    out.extend(md_table(["engine", "cells", "loop in the CAs' routes",
                         "loop among every entry"], rows))
    out.append("")
    for e, s in pairs_of(engines):
        worse, better = loops_against(results, e, s)
        out.append("Cells and checks where %s has a credit loop and stock "
                   "%s none: %d; where stock %s has one and it none: %d."
                   % (ENGINE_BY_NAME[e][1], s, len(worse), s, len(better)))
        if worse:
            out.append("Those: %s." % ", ".join(
                "%s at LMC %d (%s)" % w for w in worse))
        out.append("")
    return out


def loops_against(results, e, s):
    """The cells where engine e of ours has a credit loop (of either
    check) and stock engine s has none, and the other way round: lists
    of (fabric, lmc, which check)."""
    worse, better = [], []
    for (f, x, l), r in sorted(results.items()):
        st = results.get((f, s, l))
        if x != e or r.get("status") != "ok" or not st or \
                st.get("status") != "ok":
            continue
        for k, name in (("credit_loop", "the CAs' routes"),
                        ("credit_loop_every_entry", "every entry")):
            if r.get(k) and not st.get(k):
                worse.append((f, l, name))
            elif st.get(k) and not r.get(k):
                better.append((f, l, name))
    return worse, better


KIND_TEXT = (
    ("real", "The real dumps' sources and licences are in "
     "../shared/realfabrics/README.md."),
    ("analog", "The analogs stand for the production dumps the real-fabric "
     "issue measured, which are not in the repository: their shapes at "
     "their scale, generated by gen-fabric with the arguments shown."),
    ("variant", "The variants (var-*) are shapes of the same kinds at 64 "
     "to 512 hosts, drawn with other parameters and seeds, to show how the "
     "rules fare on shapes they were not tuned on."),
)


def kinds_text(kinds):
    """What the report says of the kinds of fabric it holds (real dumps,
    analogs, variants); empty when it holds none of them."""
    return " ".join(t for k, t in KIND_TEXT if k in kinds)


def write_doc(path, command, args, fabs, notes, engines, lmcs, results,
              below, recheck, elapsed):
    """The Markdown report; command: how it was made."""
    flagged = flagged_figures(below)
    L = []
    add = L.append
    if all(i["kind"] == "extra" for _f, i in fabs):
        add("# Every engine on the given fabrics")
    else:
        add("# Every engine on curated, real and irregular fabrics")
    add("")
    cached = sum(1 for r in results.values() if r.get("cached"))
    build = git_describe()
    add("Made by `%s` (%s, %s%s; %d cells, %d of them from the cache of an "
        "earlier run, %.0f s with --jobs %d)."
        % (command, datetime.date.today().isoformat(), host_name(),
           ", build %s" % build if build else "", len(results), cached,
           elapsed, args.jobs))
    add("")
    for e, s in pairs_of(engines):
        L.extend(below_lines(results, fabs, lmcs, below, e, s))
    L.extend(loop_lines(results, engines))
    if "dfsssp" in engines:
        L.extend(versus_dfsssp(results, fabs, lmcs))
    if runs_ours(engines):
        L.extend(recheck_lines(recheck, args.shuffles))
    add("Figures: shift-alltoall efficiency as lft-analyze computes it "
        "(mean over the rounds of 1 / the largest number of flows on one "
        "link; 1.0 = contention-free). *base*: every rank sends to its "
        "peer's base LID; *spread*: traffic striped over the 2^LMC LIDs "
        "(LMC > 0). Rank orders: **leaf** = topology order (ranks grouped "
        "by leaf, lft-analyze's default), **quarter** / **half** = a job "
        "on the first contiguous quarter / half of the hosts in leaf order "
        "(`lft-analyze --job quarter|half`), **random** = leaf order "
        "shuffled with numpy's default_rng(seed %d) (`lft-analyze --order "
        "random --seed %d`). SHARP aggregation nodes, and CAs cabled to "
        "spines or cores (management HCAs), are routed and checked but run "
        "no rank: a job runs on the leaves' hosts." % (args.seed, args.seed))
    add("")
    add("Engines: %s. Each cell is one `scripts/osm-sim --allow-fallback` "
        "run (OpenSM 3.3.23 on ibsim); a fallback to another engine is "
        "noted, and ftree is reported as *fails* where OpenSM falls back "
        "(OpenSM 3.3.23's ftree routes no LMC > 0, and only fabrics it "
        "recognises as fat trees). *CREDIT LOOP* means a cycle in the "
        "channel dependencies of the LFTs alone: dfsssp breaks such cycles "
        "with virtual lanes, which this check does not model; for updn "
        "and minhop it is a real deadlock risk. *INVALID* counts host/LID "
        "pairs without a route. *-* in a job column: the fabric has too few "
        "hosts for that job."
        % "; ".join("**%s** = %s" % (e, ENGINE_BY_NAME[e][1])
                    for e in engines))
    if args.plugin_option:
        add("Plugin options of *ours*: `%s`." % " ".join(args.plugin_option))
    if getattr(args, "qos", False):
        add("*ours* runs with OpenSM's QoS on (`--qos`). Where its reach "
            "pass put routes on virtual lanes above VL0 (reach_vls), the "
            "credit-loop check of *ours* takes each route on the lane of "
            "its path SL (osmoffset-path-sl.dump, `lft-analyze "
            "--path-sl`) and looks for a cycle on each lane.")
    add("")
    add("## Fabrics")
    add("")
    L.extend(md_table(["fabric", "hosts", "SHARP nodes", "switches",
                       "source"],
                      [[f, str(i["hosts"]), str(i["sharp"]),
                        str(i["switches"]), i["source"]] for f, i in fabs]))
    add("")
    for n in notes:
        add("- %s" % n)
    if notes:
        add("")
    about = kinds_text({i["kind"] for _f, i in fabs})
    if about:
        add(about)
        add("")
    for f, i in fabs:
        add("## %s" % f)
        add("")
        add("%d hosts, %d switches%s." % (i["hosts"], i["switches"],
                                          ", %d SHARP aggregation nodes"
                                          % i["sharp"] if i["sharp"] else ""))
        add("")
        L.extend(fabric_table(results, f, engines, lmcs, flagged))
        add("")
    with open(path, "w") as fh:
        fh.write("\n".join(L) + "\n")


def print_tables(fabs, engines, lmcs, results, below, recheck, shuffles):
    flagged = flagged_figures(below)
    for e, s in pairs_of(engines):
        print("%s below stock %s: %d figures"
              % (ENGINE_BY_NAME[e][1], s,
                 sum(1 for b in below if b["engine"] == e)))
    if runs_ours(engines):
        for line in recheck_lines(recheck, shuffles):
            print(line)
    for f, _i in fabs:
        print()
        print("## %s" % f)
        for line in fabric_table(results, f, engines, lmcs, flagged):
            print(line)

