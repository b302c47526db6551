"""The results of an A/B run: the benchmark runs of a configuration
combined, results.csv (one row per configuration and size), slowdown.csv
(the 2008 e-mail's table: % slower than LMC 0 / port_offsetting off, per
size and configuration) and that table as text."""

import csv
import os

RESULT_FIELDS = ["engine", "lmc", "port_offsetting", "bytes", "ranks",
                 "min_us", "median_us", "max_us", "bw_MBps",
                 "slower_than_lmc0_pct", "base_efficiency",
                 "spread_efficiency"]


def median(vals):
    v = sorted(vals)
    n = len(v)
    return v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2.0


def combine_runs(runs):
    """Per size: the median of the runs' medians (and of bw_MBps), the
    smallest min and the largest max.  runs: read_csv() row lists."""
    rows = []
    for i, first in enumerate(runs[0]):
        rows.append({"bytes": first["bytes"], "ranks": first["ranks"],
                     "median_us": median([r[i]["median_us"] for r in runs]),
                     "min_us": min(r[i]["min_us"] for r in runs),
                     "max_us": max(r[i]["max_us"] for r in runs),
                     "bw_MBps": median([r[i]["bw_MBps"] for r in runs])})
    return rows


def slower_pct(t, base):
    return (t / base - 1.0) * 100.0 if base > 0 else float("nan")


def is_baseline(cfg):
    return cfg["lmc"] == 0 and cfg["port_offsetting"] == "off"


def baseline_name(cfg):
    return "%s-lmc0-off" % cfg["engine"]


def write_results(out, configs, results, checks):
    """Write OUT/results.csv and OUT/slowdown.csv.  results: name ->
    combined rows; checks: name -> efficiencies.  Returns (rows of
    results.csv, the configurations of the table, the table)."""
    rows = []
    for cfg in configs:
        res = results.get(cfg["name"])
        if not res:
            continue
        base = results.get(baseline_name(cfg))
        chk = checks.get(cfg["name"]) or {}
        for i, r in enumerate(res):
            rows.append(dict(
                engine=cfg["engine"], lmc=cfg["lmc"],
                port_offsetting=cfg["port_offsetting"], bytes=r["bytes"],
                ranks=r["ranks"], min_us=r["min_us"],
                median_us=r["median_us"], max_us=r["max_us"],
                bw_MBps=r["bw_MBps"],
                slower_than_lmc0_pct=round(slower_pct(
                    r["median_us"], base[i]["median_us"]), 2)
                if base else "",
                base_efficiency=chk.get("base_efficiency", ""),
                spread_efficiency=chk.get("spread_efficiency", "")))
    with open(os.path.join(out, "results.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=RESULT_FIELDS)
        w.writeheader()
        w.writerows(rows)
    # the e-mail's table: sizes down, configurations across
    others = [c for c in configs if c["name"] in results and
              not is_baseline(c)]
    sizes = [r["bytes"] for r in next(iter(results.values()))]
    table = []
    for i, s in enumerate(sizes):
        row = {"bytes": s}
        for c in others:
            base = results.get(baseline_name(c))
            row[c["name"]] = round(slower_pct(
                results[c["name"]][i]["median_us"],
                base[i]["median_us"]), 2) if base else ""
        table.append(row)
    with open(os.path.join(out, "slowdown.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=["bytes"] +
                           [c["name"] for c in others])
        w.writeheader()
        w.writerows(table)
    return rows, others, table


def format_slowdown(others, table):
    """The table as text, with a `range` line (smallest..largest)."""
    if not others:
        return "(no configuration besides the baseline)"
    w = max(10, max(len(c["name"]) for c in others) + 1)
    out = ["%% slower than LMC 0 / port_offsetting off (same engine), "
           "median time", "%9s" % "bytes" +
           "".join("%*s" % (w, c["name"]) for c in others)]
    for row in table:
        out.append("%9d" % row["bytes"] + "".join(
            "%*s" % (w, "%.1f" % row[c["name"]] if row[c["name"]] != ""
                     else "-") for c in others))
    out.append("%9s" % "range" + "".join(
        "%*s" % (w, "%.0f..%.0f" % (min(r[c["name"]] for r in table),
                                    max(r[c["name"]] for r in table)))
        for c in others))
    return "\n".join(out)
