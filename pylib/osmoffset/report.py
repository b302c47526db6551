"""Reports of an analysis (osmoffset.analyze.Analysis): the result
dict (lft-analyze --json), the text report, the comparison of two
results, and the per switch/port rows (--csv)."""

from __future__ import annotations

import csv
import time

import numpy as np

from .metrics import eff, route_counts
from .model import K_DOWN, K_HOST, K_SWITCH, K_UNLINKED

__all__ = ["build_result", "format_text", "compare_text", "port_rows",
           "write_csv", "CSV_FIELDS"]

CSV_FIELDS = ["switch_guid", "switch", "port", "peer_kind", "peer",
              "base_lids", "all_lids", "base_routes", "all_routes"]


def _shift_fig(ml):
    e = eff(ml)
    return {"efficiency": e, "worst": float(ml.max()),
            "worst_round": int(np.argmax(ml)) + 1,
            "mean_max_load": float(ml.mean()),
            "slowdown": (1.0 / e) if e > 0 else None}


def build_result(an, base, spread, bound, bis_b, bis_s, div, cyc, t0):
    """The result dict of Analysis.run()."""
    R = an.ranks.size
    bal = []
    for s, n in enumerate(an.sw_nodes):
        bal.append({"guid": f"0x{n.guid:016x}", "desc": n.desc,
                    "base_imbalance": int(an.imb_base[s]),
                    "all_imbalance": int(an.imb_all[s]),
                    "nonminimal_lids": int(an.nonminimal[s])})
    wb = int(np.argmax(an.imb_base))
    wa = int(np.argmax(an.imb_all))
    return {
        "valid": bool(an.valid),
        "credit_loop": cyc is not None,
        "lmc": an.lmc,
        "hosts": an.N,
        "switches": an.S,
        "ranks": int(R),
        "rank_order": an.rank_source,
        "max_hops": an.H,
        "unreachable_pairs": an.unreachable_pairs,
        "shift": {"base": _shift_fig(base),
                  "spread": _shift_fig(spread) if spread is not None
                  else None},
        "bound": {"efficiency": eff(bound),
                  "worst": float(bound.max())},
        "bisection": {"base": bis_b, "spread": bis_s,
                      "patterns": an.bisections, "seed": an.seed},
        "balance": {"switches": bal,
                    "worst": {"base": int(an.imb_base[wb]),
                              "base_switch": an.sw_nodes[wb].desc,
                              "all": int(an.imb_all[wa]),
                              "all_switch": an.sw_nodes[wa].desc},
                    "nonminimal_lids": int(an.nonminimal.sum())},
        "diversity": div,
        "cdg_edges": an.cdg_edges,
        "credit_scope": an.credit_scope,
        "credit_lane": an.credit_lane,
        "lanes": an.path_sls.lanes if an.path_sls else 1,
        "lane_routes": len(an.path_sls.routes) if an.path_sls else 0,
        "credit_cycle": [{"switch": n.desc, "guid": f"0x{n.guid:016x}",
                          "port": int(p)} for n, p in cyc] if cyc
        else None,
        "lft_entries": an.lft_entries,
        "problems": an.problems + (
            [f"... and {an._nproblems - len(an.problems)} more"]
            if an._nproblems > len(an.problems) else []),
        "notes": an.notes,
        "seconds": round(time.time() - t0, 3),
    }


def _shift_line(label, s):
    """The report line of one shift-alltoall figure s."""
    return (f"  shift, {label:12}: efficiency {s['efficiency']:.4f}"
            f" (slowdown x{s['slowdown']:.3f}), worst round "
            f"{s['worst_round']} max link load {s['worst']:g}")


def format_text(res, lfts_path="", title=None):
    """Readable report of one analysis result."""
    out = []
    if title:
        out.append(title)
    out.append(f"LFTs {lfts_path}: {res['switches']} switches, "
               f"{res['hosts']} hosts, LMC {res['lmc']}, "
               f"{res['ranks']} ranks in {res['rank_order']}")
    out.append(f"  valid routing      : {'yes' if res['valid'] else 'NO'}"
               f" ({res['unreachable_pairs']} unreachable host/LID pairs,"
               f" longest path {res['max_hops']} switch hops)")
    le = res.get("lft_entries")
    if le:
        out.append(f"  every LFT entry    : {le['faults']} broken, "
                   f"{le['unrouted']} switch/LID pairs without a route "
                   f"({le['unrouted_ca']} to CA LIDs; {le['lids']} LIDs x "
                   f"{le['switches']} switches)")
    lanes = res.get("lanes", 1)
    where = ""
    if lanes > 1:
        where = f", {lanes} virtual lanes by path SL ({res['lane_routes']} " \
            "routes above VL0)"
        if res["credit_loop"]:
            where += f"; the loop is on VL{res['credit_lane']}"
    if res.get("credit_scope") == "every-entry":
        where += " of every LFT entry, switch LIDs too"
    out.append(f"  credit loop        : "
               f"{'YES' if res['credit_loop'] else 'no'}"
               f" ({res['cdg_edges']} channel dependencies{where})")
    out.append(_shift_line("base LID", res["shift"]["base"]))
    if res["shift"]["spread"]:
        out.append(_shift_line("LMC spread", res["shift"]["spread"]))
    out.append(f"  leaf-level bound   : efficiency "
               f"{res['bound']['efficiency']:.4f}")
    bi = res["bisection"]
    if bi["base"] is not None:
        line = f"  random bisection   : base {bi['base']:.4f}"
        if bi["spread"] is not None:
            line += f", spread {bi['spread']:.4f}"
        out.append(line + f" ({bi['patterns']} patterns, seed {bi['seed']})")
    bw = res["balance"]["worst"]
    out.append(f"  port imbalance     : base LIDs {bw['base']} "
               f"(on '{bw['base_switch']}'), all LIDs {bw['all']} "
               f"(on '{bw['all_switch']}'), non-minimal LID routes "
               f"{res['balance']['nonminimal_lids']}")
    dv = res.get("diversity")
    if dv:
        out.append(f"  LMC path diversity : {dv['pairs']} host pairs"
                   f"{' (sampled)' if dv['sampled'] else ''}; paths sharing "
                   "a link: " + ", ".join(f"{k}:{v}" for k, v in
                                          dv["links"].items()))
        out.append("                       paths sharing a switch: " +
                   ", ".join(f"{k}:{v}" for k, v in dv["switches"].items()))
    for p in res["problems"]:
        out.append(f"  problem: {p}")
    for n in res["notes"]:
        out.append(f"  note: {n}")
    return "\n".join(out)


def compare_text(a, b):
    """Side-by-side figures of two results."""
    rows = [("valid", a["valid"], b["valid"]),
            ("credit loop", a["credit_loop"], b["credit_loop"]),
            ("shift base efficiency", a["shift"]["base"]["efficiency"],
             b["shift"]["base"]["efficiency"])]
    if a["shift"]["spread"] and b["shift"]["spread"]:
        rows.append(("shift spread efficiency",
                     a["shift"]["spread"]["efficiency"],
                     b["shift"]["spread"]["efficiency"]))
    rows += [("leaf bound efficiency", a["bound"]["efficiency"],
              b["bound"]["efficiency"]),
             ("worst base imbalance", a["balance"]["worst"]["base"],
              b["balance"]["worst"]["base"]),
             ("worst all-LID imbalance", a["balance"]["worst"]["all"],
              b["balance"]["worst"]["all"])]
    out = ["comparison             first      second"]
    for name, x, y in rows:
        fx = f"{x:.4f}" if isinstance(x, float) else str(x)
        fy = f"{y:.4f}" if isinstance(y, float) else str(y)
        out.append(f"  {name:<24} {fx:>8}  {fy:>8}")
    return "\n".join(out)


def port_rows(an):
    """Per switch/port rows for CSV output: the LIDs each port's entries
    send out of it, and the routes from the ranks that cross it
    (route_counts())."""
    rows = []
    routes_base, routes_all = route_counts(an)
    for s, n in enumerate(an.sw_nodes):
        for p in range(1, an.W):
            k = int(an.rkind[s, p])
            if k == K_UNLINKED and not an.port_all[s, p]:
                continue
            if k == K_SWITCH:
                peer = an.sw_nodes[int(an.rindex[s, p])].desc
                pk = "switch"
            elif k == K_HOST:
                peer = an.hosts[int(an.rindex[s, p])].desc
                pk = "host"
            elif k == K_DOWN:
                peer, pk = "", "down"
            else:
                peer, pk = "", "unlinked"
            rows.append({"switch_guid": f"0x{n.guid:016x}",
                         "switch": n.desc, "port": p, "peer_kind": pk,
                         "peer": peer,
                         "base_lids": int(an.port_base[s, p]),
                         "all_lids": int(an.port_all[s, p]),
                         "base_routes": int(routes_base[s * an.W + p]),
                         "all_routes": int(routes_all[s * an.W + p])})
    return rows


def write_csv(path, an, an2=None):
    """port_rows of an (and the LID counts of an2 beside them) as CSV."""
    rows = port_rows(an)
    fields = list(CSV_FIELDS)
    if an2 is not None:
        other = {(r["switch_guid"], r["port"]): r for r in port_rows(an2)}
        for r in rows:
            o = other.get((r["switch_guid"], r["port"]), {})
            for k in CSV_FIELDS[5:]:
                r[k + "_2"] = o.get(k, 0)
        fields += [k + "_2" for k in CSV_FIELDS[5:]]
    with open(path, "w", newline="", encoding="utf-8") as f:
        w = csv.DictWriter(f, fieldnames=fields)
        w.writeheader()
        w.writerows(rows)
