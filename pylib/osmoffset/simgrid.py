"""Run an MPI alltoall over a fabric's own routes in SimGrid's SMPI.

write_platform() turns a Routes object (topology + LFTs) into a SimGrid
platform file:

  * one zone, routing="Full" (every route listed);
  * one host per rank (speed is irrelevant: computation is not simulated);
  * one link per cable direction (the egress of a node port), with the
    cable's data rate from the topology where it says, and a latency per
    hop (default 150 ns: cable plus switch);
  * for every ordered pair of hosts the route switch by switch through
    the LFT entry of the destination's LID: its base LID, or base + k for
    the traffic of LID offset k.

run_smpirun() runs a benchmark built with smpicc (a2a-bench-smpi, see
osmoffset.alltoall.bench) under smpirun on such a platform with a
hostfile that puts rank i on the i-th host, and returns the benchmark's
CSV rows with the wall time and peak memory (RSS) of the simulation.
prepare_case() and run_case() do that for one case of alltoall-ab
--simulate, add_slowdowns(), format_table() and csv_rows() make its
table.

What SMPI models: flow-level bandwidth sharing (max-min fairness over the
links every message crosses), latency per link, the MPI library's
protocols (eager / rendezvous) and collective algorithms (here the `ring`
or `pair` alltoall).  What it does not model: InfiniBand's credit-based
flow control, head-of-line blocking and congestion spreading between
flows that share a buffer, virtual lanes, adaptive routing, packet-level
effects.  Under contention a real fabric can only be slower than the
simulation says.

Options passed to every run (SMPI_CFG): no crosstraffic (InfiniBand's
link-level acks do not share data bandwidth), weight-S 0 (no TCP-like
penalty for long routes), bandwidth and latency factors 1 (no calibration
to some other network), computation not simulated (only the network
counts, and results are deterministic), and 256 MiB blocks for
SMPI_SHARED_MALLOC (with the default 1 MiB blocks, 216 ranks x 2 buffers
of 216 MiB need more memory mappings than Linux's vm.max_map_count).
"""

from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import time
from typing import Dict, List, Optional

from .alltoall import StepError
from .alltoall.bench import read_csv
from .alltoall.matrix import size_text
from .rankorder import Host
from .routes import Routes
from .schedule import round_model

__all__ = ["SimError", "SMPI_CFG", "host_ids", "write_platform",
           "write_hostfile", "run_smpirun", "smpirun_path", "prepare_case",
           "run_case", "add_slowdowns", "format_table", "csv_rows",
           "CSV_FIELDS"]

SMPI_CFG = ["network/crosstraffic:0", "network/weight-S:0",
            "smpi/bw-factor:0:1", "smpi/lat-factor:0:1",
            "smpi/simulate-computation:no",
            "smpi/shared-malloc-blocksize:268435456"]


class SimError(Exception):
    """A simulation step failed (build, smpirun, output)."""


def smpirun_path() -> Optional[str]:
    return shutil.which("smpirun")


def host_ids(hosts: List[Host]) -> Dict[int, str]:
    """A platform host id per host (port GUID -> id): the description when
    it is a plain unique word, else 'ca-<port GUID>'."""
    count: Dict[str, int] = {}
    for h in hosts:
        count[h.desc] = count.get(h.desc, 0) + 1
    out = {}
    for h in hosts:
        ok = re.fullmatch(r"[A-Za-z0-9][A-Za-z0-9._-]*", h.desc) and \
            count[h.desc] == 1
        out[h.guid] = h.desc if ok else "ca-%016x" % h.guid
    return out


def write_platform(routes: Routes, hosts: List[Host], path: str,
                   offset: int = 0, latency_ns: float = 150.0) -> Dict:
    """Write the platform of the hosts `hosts` (routes between every
    ordered pair, to LID base + offset).  Returns {"hosts", "links",
    "routes", "ids"}."""
    ids = host_ids(hosts)
    rows = []
    used = set()
    for a in hosts:
        for b in hosts:
            if a is b:
                continue
            p = routes.path(a, b, offset)
            used.update(p)
            rows.append((ids[a.guid], ids[b.guid], p))
    lat = "%gns" % latency_ns
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("<?xml version='1.0'?>\n"
                "<!DOCTYPE platform SYSTEM "
                "\"https://simgrid.org/simgrid.dtd\">\n"
                "<!-- written by osmoffset.simgrid from %s and %s, LID "
                "offset %d: one link per cable direction, routes through "
                "the LFTs -->\n"
                "<platform version=\"4.1\">\n"
                "<zone id=\"fabric\" routing=\"Full\">\n"
                % (_xml(routes.topo.path), _xml(routes.lfts.path), offset))
        for h in hosts:
            f.write("<host id=\"%s\" speed=\"1Gf\"/>\n" % ids[h.guid])
        for i in sorted(used):
            f.write("<link id=\"l%d\" bandwidth=\"%.6gGbps\" latency=\"%s\">"
                    "<prop id=\"port\" value=\"%s\"/></link>\n"
                    % (i, routes.link_gbps[i], lat,
                       _xml(routes.link_text(i))))
        for a, b, p in rows:
            f.write("<route src=\"%s\" dst=\"%s\" symmetrical=\"NO\">%s"
                    "</route>\n" % (a, b, "".join(
                        "<link_ctn id=\"l%d\"/>" % i for i in p)))
        f.write("</zone>\n</platform>\n")
    os.replace(tmp, path)
    return {"hosts": len(hosts), "links": len(used), "routes": len(rows),
            "ids": ids}


def _xml(text):
    return (str(text).replace("&", "&amp;").replace("<", "&lt;")
            .replace(">", "&gt;").replace("\"", "&quot;")
            .replace("--", "- -"))


def write_hostfile(order: List[Host], ids: Dict[int, str], path: str):
    """smpirun hostfile: rank i on order[i]."""
    with open(path, "w") as f:
        for h in order:
            f.write(ids[h.guid] + "\n")


def run_smpirun(bench: str, platform: str, hostfile: str, nranks: int,
                workdir: str, sizes: List[int], iters: int = 1,
                warmup: int = 0, alltoall: str = "ring",
                pattern: str = "alltoall", timeout: float = 3600.0,
                smpirun: str = "smpirun", extra_cfg=()) -> Dict:
    """Run bench under smpirun; returns {"rows", "wall_s", "pss_mb",
    "maxrss_mb", "cmd", "log"}.  pss_mb is the peak proportional set size
    of smpirun's processes (sampled every 0.2 s: real memory, each shared
    page counted once); maxrss_mb the kernel's peak RSS, which counts the
    SMPI_SHARED_MALLOC block once per mapping and so far overstates real
    memory.  The output of smpirun goes to workdir/smpirun.log."""
    os.makedirs(workdir, exist_ok=True)
    tmpdir = os.path.join(workdir, "smpi-tmp")
    os.makedirs(tmpdir, exist_ok=True)
    out_csv = os.path.join(workdir, "bench.csv")
    if os.path.exists(out_csv):
        os.unlink(out_csv)
    # smpirun 3.32 appends its own --cfg=smpi/tmpdir (from $TMPDIR) after
    # ours, and its -tmpdir option does not work: set TMPDIR.
    cfg = ["smpi/alltoall:" + alltoall] + list(SMPI_CFG) + list(extra_cfg)
    cmd = [smpirun, "-np", str(nranks), "-platform", platform,
           "-hostfile", hostfile] + ["--cfg=" + c for c in cfg] + \
        ["--log=root.thres:warning", bench, "--sizes",
         ",".join(str(s) for s in sizes), "--iters", str(iters),
         "--warmup", str(warmup), "--pattern", pattern, "--quiet",
         "--csv", out_csv]
    log = os.path.join(workdir, "smpirun.log")
    t0 = time.time()
    with open(log, "w") as lf:
        try:
            env = dict(os.environ, TMPDIR=tmpdir)
            proc = subprocess.Popen(cmd, stdin=subprocess.DEVNULL,
                                    stdout=lf, stderr=subprocess.STDOUT,
                                    cwd=workdir, env=env,
                                    start_new_session=True)
        except OSError as e:
            raise SimError("%s: %s (install libsimgrid-dev)"
                           % (smpirun, e.strerror)) from None
        try:
            status, ru, pss = _wait(proc, timeout)
        except BaseException:
            _kill(proc)
            raise
    wall = time.time() - t0
    shutil.rmtree(tmpdir, ignore_errors=True)
    if status is None:
        raise SimError("smpirun timed out after %g s (see %s)"
                       % (timeout, log))
    if status != 0 or not os.path.isfile(out_csv):
        with open(log, errors="replace") as f:
            tail = f.read()[-1500:]
        raise SimError("smpirun failed (exit %s, see %s): %s"
                       % (status, log, tail.strip()))
    try:
        rows = read_csv(out_csv)
    except StepError as exc:
        raise SimError(str(exc)) from None
    return {"rows": rows, "wall_s": round(wall, 2),
            "pss_mb": round(pss / 1024.0, 1),
            "maxrss_mb": round(ru.ru_maxrss / 1024.0, 1) if ru else None,
            "cmd": cmd, "log": log}


def _session_pss(sid):
    """Sum of the Pss (kB) of the processes of session sid."""
    total = 0
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                st = f.read()
            if int(st[st.rindex(")") + 2:].split()[3]) != sid:
                continue
            with open("/proc/%s/smaps_rollup" % d) as f:
                for line in f:
                    if line.startswith("Pss:"):
                        total += int(line.split()[1])
                        break
        except (OSError, ValueError, IndexError):
            continue
    return total


def _wait(proc, timeout):
    """Wait for proc (its own session); returns (status, rusage, peak Pss
    in kB).  On timeout the whole group is killed and status is None."""
    deadline = time.time() + timeout
    pss, last = 0, 0.0
    while True:
        pid, st, ru = os.wait4(proc.pid, os.WNOHANG)
        if pid == proc.pid:
            proc.returncode = os.waitstatus_to_exitcode(st)
            return proc.returncode, ru, pss
        now = time.time()
        if now > deadline:
            _kill(proc)
            return None, None, pss
        if now - last >= 0.2:
            pss = max(pss, _session_pss(proc.pid))
            last = now
        time.sleep(0.02)


def _kill(proc):
    """Kill the process group of proc (it leads its own session)."""
    for sig in (signal.SIGTERM, signal.SIGKILL):
        try:
            os.killpg(proc.pid, sig)
        except OSError:
            return
        for _ in range(20):
            try:
                pid, _st, _ru = os.wait4(proc.pid, os.WNOHANG)
            except ChildProcessError:
                return
            if pid == proc.pid:
                return
            time.sleep(0.1)


# ----------------------------------------------------------------------
# One simulated case and the table of many

def prepare_case(routes: Routes, order: List[Host], offset: int,
                 workdir: str, alltoall: str = "ring",
                 latency_ns: float = 150.0) -> Dict:
    """Write the platform and hostfile of one case into workdir and model
    it (schedule.round_model).  Not thread-safe (Routes numbers links as
    it meets them): prepare cases one after the other, run them in
    parallel."""
    os.makedirs(workdir, exist_ok=True)
    plat = os.path.join(workdir, "platform.xml")
    t0 = time.time()
    info = write_platform(routes, order, plat, offset, latency_ns)
    hf = os.path.join(workdir, "hostfile")
    write_hostfile(order, info["ids"], hf)
    model = round_model(routes, order, offset, alltoall)
    return {"workdir": workdir, "platform": plat, "hostfile": hf,
            "ranks": len(order), "lid_offset": offset,
            "alltoall": alltoall, "model": model,
            "platform_s": round(time.time() - t0, 2),
            "links": info["links"], "routes": info["routes"],
            "rated_links": routes.rated,
            "link_gbps": sorted(set(routes.link_gbps))}


def run_case(prep: Dict, bench: str, sizes: List[int], iters: int = 1,
             warmup: int = 0, keep_platform: bool = False,
             timeout: float = 3600.0) -> Dict:
    """smpirun one prepared case; returns prep plus time_us per size (the
    median over iterations of the slowest rank's time), wall_s, pss_mb,
    maxrss_mb."""
    res = run_smpirun(bench, prep["platform"], prep["hostfile"],
                      prep["ranks"], prep["workdir"], sizes, iters, warmup,
                      prep["alltoall"], timeout=timeout)
    if not keep_platform:
        os.unlink(prep["platform"])
    times = {r["bytes"]: r["median_us"] for r in res["rows"]}
    if sorted(times) != sorted(sizes):
        raise SimError("%s: sizes %s, expected %s" % (
            os.path.join(prep["workdir"], "bench.csv"), sorted(times),
            sorted(sizes)))
    out = dict(prep)
    out.update({"time_us": {str(s): times[s] for s in sizes},
                "wall_s": res["wall_s"], "pss_mb": res["pss_mb"],
                "maxrss_mb": res["maxrss_mb"]})
    return out


def add_slowdowns(rows: List[Dict], sizes: List[int]):
    """Fill slowdown figures in place.  Each row has "key" (the variant's
    baseline key: rows with equal key share a baseline), "baseline" (True
    for the baseline of its key) and "order_key" (rows with equal
    order_key differ only in rank order; the first one is the reference of
    "order_cost").  Slowdown = percent slower than the baseline, negative
    = faster; the model's and lft-analyze's predictions the same way."""
    base = {r["key"]: r for r in rows if r.get("baseline")}
    first = {}
    for r in rows:
        first.setdefault(r["order_key"], r)
    for r in rows:
        b = base.get(r["key"])
        r["slowdown_pct"] = {}
        for s in sizes:
            s = str(s)
            r["slowdown_pct"][s] = _pct(r["time_us"][s],
                                         b["time_us"][s]) if b else None
        r["model_slowdown_pct"] = _pct(
            r["model"]["seconds_per_byte"],
            b["model"]["seconds_per_byte"]) if b else None
        la, lb = r.get("lft_analyze"), b.get("lft_analyze") if b else None
        r["lft_analyze_slowdown_pct"] = _pct(
            lb["efficiency"], la["efficiency"]) if la and lb and \
            la["efficiency"] > 0 else None
        f = first[r["order_key"]]
        big = str(max(sizes))
        r["order_cost"] = round(r["time_us"][big] / f["time_us"][big], 3) \
            if f["time_us"][big] > 0 else None


def _pct(x, ref):
    return round((x / ref - 1.0) * 100.0, 1) if ref > 0 else None


def format_table(rows: List[Dict], sizes: List[int]) -> str:
    """The simulated table: one line per row; per size the time in ms and
    the slowdown against the row's baseline; then the per-round model's
    and lft-analyze's predicted slowdowns, the cost of the rank order
    against the first order, wall time and memory of the simulation."""
    def pct(v):
        return "%+.1f%%" % v if v is not None else "-"
    head = ["variant", "order", "lid"]
    for s in sizes:
        head += [size_text(s) + " ms", size_text(s) + " slow"]
    head += ["model", "lft-an.", "order x", "wall s", "mem MB"]
    lines = []
    for r in rows:
        c = [r["variant"], r["order"], "+%d" % r["lid_offset"]]
        for s in sizes:
            c += ["%.3f" % (r["time_us"][str(s)] / 1000.0),
                  pct(r["slowdown_pct"][str(s)])]
        c += [pct(r["model_slowdown_pct"]),
              pct(r.get("lft_analyze_slowdown_pct")),
              "%.2f" % r["order_cost"] if r["order_cost"] else "-",
              "%.1f" % r["wall_s"], "%.0f" % r["pss_mb"]]
        lines.append(c)
    w = [max(len(head[i]), max((len(l[i]) for l in lines), default=0))
         for i in range(len(head))]
    out = ["  ".join(h.ljust(w[i]) if i < 3 else h.rjust(w[i])
                     for i, h in enumerate(head))]
    for l in lines:
        out.append("  ".join(v.ljust(w[i]) if i < 3 else v.rjust(w[i])
                             for i, v in enumerate(l)))
    return "\n".join(out)


CSV_FIELDS = ["variant", "engine", "lmc", "port_offsetting", "order",
              "lid_offset", "ranks", "bytes", "time_us", "slowdown_pct",
              "model_slowdown_pct", "lft_analyze_slowdown_pct",
              "model_contention", "lft_analyze_efficiency", "order_cost",
              "wall_s", "pss_mb"]


def csv_rows(rows: List[Dict], sizes: List[int]):
    for r in rows:
        la = r.get("lft_analyze")
        for s in sizes:
            yield {"variant": r["variant"], "engine": r.get("engine", ""),
                   "lmc": r.get("lmc", ""),
                   "port_offsetting": r.get("port_offsetting", ""),
                   "order": r["order"], "lid_offset": r["lid_offset"],
                   "ranks": r["ranks"], "bytes": s,
                   "time_us": r["time_us"][str(s)],
                   "slowdown_pct": _blank(r["slowdown_pct"][str(s)]),
                   "model_slowdown_pct": _blank(r["model_slowdown_pct"]),
                   "lft_analyze_slowdown_pct":
                       _blank(r.get("lft_analyze_slowdown_pct")),
                   "model_contention": round(r["model"]["contention"], 4),
                   "lft_analyze_efficiency":
                       round(la["efficiency"], 4) if la else "",
                   "order_cost": _blank(r["order_cost"]),
                   "wall_s": r["wall_s"], "pss_mb": r["pss_mb"]}


def _blank(v):
    return "" if v is None else v
