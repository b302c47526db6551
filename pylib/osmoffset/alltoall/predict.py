"""--predict: the A/B matrix on an ibsim fabric.  osm-sim routes each
configuration, lft-analyze simulates the shift alltoall over the LFTs,
and the slowdown against LMC 0 / port_offsetting off is predicted two
ways: from the efficiency (time ~ 1 / efficiency) and from the per-round
model (time ~ sum over rounds of the most loaded link, lft-analyze's
mean_max_load)."""

import json
import os
from concurrent.futures import ThreadPoolExecutor

from . import StepError
from .procs import run_cmd, tool

ROW_FIELDS = ["engine", "lmc", "port_offsetting", "base_efficiency",
              "spread_efficiency", "base_round_load", "spread_round_load",
              "predicted_slowdown_base", "predicted_slowdown_spread",
              "predicted_slowdown_rounds_base",
              "predicted_slowdown_rounds_spread"]


def osm_sim_run(net, cfg, d):
    """Route net with osm-sim for one configuration into directory d
    (opensm-lfts.dump, opensm-subnet.lst)."""
    cmd = tool("osm-sim") + [
        "--net", net, "--out", d, "--lmc", str(cfg["lmc"]), "--engine",
        cfg["engine"], "--port-offsetting", cfg["port_offsetting"],
        "--quiet"]
    status, out = run_cmd(cmd, timeout=900)
    if status != 0:
        raise StepError("osm-sim failed for %s (exit %s): %s"
                        % (cfg["name"], status, out.strip()[-500:]))


def predict_one(net, cfg, base_dir):
    """osm-sim + lft-analyze for one configuration: its row (without the
    slowdowns)."""
    d = os.path.join(base_dir, cfg["name"])
    osm_sim_run(net, cfg, d)
    cmd = tool("lft-analyze") + [
        "--lfts", os.path.join(d, "opensm-lfts.dump"), "--topology",
        os.path.join(d, "opensm-subnet.lst"), "--lmc", str(cfg["lmc"]),
        "--json", "--bisections", "0"]
    out_json = os.path.join(d, "analyze.json")
    with open(out_json, "w") as f:
        status, err = run_cmd(cmd, timeout=1800, stdout=f)
    try:
        with open(out_json) as f:
            res = json.load(f)
    except (OSError, ValueError):
        raise StepError("lft-analyze failed for %s (exit %s): %s"
                        % (cfg["name"], status, err.strip()[-500:]))
    if status != 0:
        raise StepError("lft-analyze: routing of %s is %s (see %s)" % (
            cfg["name"], "credit-looping" if res.get("credit_loop")
            else "invalid", out_json))
    base = res["shift"]["base"]
    spread = res["shift"]["spread"] or base
    return {"engine": cfg["engine"], "lmc": cfg["lmc"],
            "port_offsetting": cfg["port_offsetting"],
            "base_efficiency": base["efficiency"],
            "spread_efficiency": spread["efficiency"],
            "base_round_load": base["mean_max_load"],
            "spread_round_load": spread["mean_max_load"]}


def add_slowdowns(rows):
    """Fill the predicted_slowdown_* figures (percent slower than the
    row's engine at LMC 0 / port_offsetting off; negative = faster)."""
    for r in rows:
        ref = next(x for x in rows if x["engine"] == r["engine"] and
                   x["lmc"] == 0 and x["port_offsetting"] == "off")
        for k in ("base", "spread"):
            eff = r["%s_efficiency" % k]
            r["predicted_slowdown_%s" % k] = round(
                (ref["base_efficiency"] / eff - 1.0) * 100.0, 2) \
                if eff > 0 else None
            # the per-round model: time ~ sum over rounds of the largest
            # load (flows on one link), i.e. lft-analyze's mean_max_load
            load = r["%s_round_load" % k]
            r["predicted_slowdown_rounds_%s" % k] = round(
                (max(load, 1.0) / max(ref["base_round_load"], 1.0) - 1.0)
                * 100.0, 2)
    return rows


def predict(net, configs, base_dir, jobs=2):
    """The rows of every configuration (jobs osm-sim runs at a time),
    with their predicted slowdowns."""
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        futs = [pool.submit(predict_one, net, c, base_dir) for c in configs]
        rows = [f.result() for f in futs]
    return add_slowdowns(rows)


def format_rows(rows, net_text):
    """The text table of --predict (lines)."""
    out = ["predicted alltoall slowdown against LMC 0 / port_offsetting "
           "off",
           "fabric %s (lft-analyze shift model; %% slower, negative = "
           "faster)" % net_text,
           "slow_* = 1 / efficiency; round_* = sum over rounds of the most "
           "loaded link (closer to a simulated MPI_Alltoall, see "
           "docs/simulated-alltoall.md)",
           "%-8s %3s %-11s %9s %9s %10s %10s %10s %10s" % (
               "engine", "lmc", "offsetting", "base_eff", "sprd_eff",
               "slow_base", "slow_sprd", "round_base", "round_sprd")]
    for r in rows:
        out.append("%-8s %3d %-11s %9.4f %9.4f %9.1f%% %9.1f%% %9.1f%% "
                   "%9.1f%%" % (
                       r["engine"], r["lmc"], r["port_offsetting"],
                       r["base_efficiency"], r["spread_efficiency"],
                       r["predicted_slowdown_base"],
                       r["predicted_slowdown_spread"],
                       r["predicted_slowdown_rounds_base"],
                       r["predicted_slowdown_rounds_spread"]))
    return out
