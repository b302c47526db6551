"""The steps of one A/B configuration after the SM restart: the routing
check (dump the LFTs and the topology, lft-analyze them) and the
benchmark runs."""

import json
import os

from . import StepError, say
from .bench import read_csv
from .procs import run_cmd, run_step, shell_join, tool
from .results import combine_runs


def check_lfts(cfg, d, env, dry, dump_cmd, topo_cmd, analyze_hostfile=None,
               conf_path=None):
    """Dump the LFTs (dump_cmd) and the topology (topo_cmd) into d and
    check them with lft-analyze: StepError if the routing is invalid, has
    a credit loop or does not show the LMC of cfg.  Returns the shift
    efficiencies {"base_efficiency", "spread_efficiency"} (None when
    dry)."""
    lfts = os.path.join(d, "lfts.dump")
    topo = os.path.join(d, "topology.txt")
    run_step("dump LFTs", dump_cmd, env, dry, 600, lfts,
             os.path.join(d, "dump.err"))
    run_step("topology", topo_cmd, env, dry, 600, topo,
             os.path.join(d, "topo.err"))
    cmd = tool("lft-analyze", dry) + ["--lfts", lfts, "--topology", topo,
                                      "--json"]
    if analyze_hostfile:
        cmd += ["--hostfile", os.path.abspath(analyze_hostfile)]
    if dry:
        say("would run: " + shell_join(cmd))
        return None
    out_json = os.path.join(d, "analyze.json")
    with open(out_json, "w") as f:
        status, out = run_cmd(cmd, timeout=1800, stdout=f)
    if status == 2 or status is None:
        raise StepError("lft-analyze could not read the dumps of %s: %s"
                        % (cfg["name"], out.strip()))
    try:
        with open(out_json) as f:
            res = json.load(f)
    except (OSError, ValueError):
        raise StepError("lft-analyze wrote no JSON for %s (%s)"
                        % (cfg["name"], out.strip()))
    if status == 1:
        why = (res.get("problems") or ["invalid routing"])[0]
        raise StepError("routing check failed for %s: %s%s (see %s)"
                        % (cfg["name"], "credit loop; " if
                           res.get("credit_loop") else "", why, out_json))
    if res.get("lmc") != cfg["lmc"]:
        raise StepError("the SM did not apply lmc %d for %s: the dumps "
                        "show LMC %s (did --restart-cmd restart it with %s?)"
                        % (cfg["lmc"], cfg["name"], res.get("lmc"),
                           conf_path))
    spread = res["shift"]["spread"]
    return {"base_efficiency": res["shift"]["base"]["efficiency"],
            "spread_efficiency": spread["efficiency"] if spread
            else res["shift"]["base"]["efficiency"]}


def run_bench(d, env, dry, repeat, timeout, bench_cmd, sizes):
    """Run the benchmark repeat times in configuration directory d;
    bench_cmd(csv_path) gives the argv of one run.  Returns the rows
    combined over the runs (results.combine_runs), None when dry."""
    runs = []
    for r in range(1, repeat + 1):
        path = os.path.join(d, "bench-%d.csv" % r)
        cmd = shell_join(bench_cmd(path))
        run_step("benchmark %d/%d" % (r, repeat), cmd, env, dry, timeout,
                 os.path.join(d, "bench-%d.log" % r),
                 os.path.join(d, "bench-%d.err" % r))
        if not dry:
            runs.append(read_csv(path, sizes))
    if dry:
        return None
    return combine_runs(runs)
