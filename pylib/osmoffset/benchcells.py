"""The cells of the routing benchmarks, routed in parallel and cached.

A cell is one fabric routed once by osm-sim (a private ibsim and OpenSM)
with one configuration at one LMC, then measured by the benchmark's own
function.  bench-quality, bench-fabrics, bench-degraded and bench-spread
all run their cells here:

  task = {"id": (fabric, config, lmc),      # results key, progress label
          "dir": cell directory,            # osm-sim --out, cell.json
          "sim": [osm-sim options] or None, # None: no routing, measure only
          "key": {...} or None,             # cache key (None: no cache)
          "good": ("ok",),                  # statuses a re-run may reuse
          "need": [...],                    # figures a reused cell must have
          "force": bool,                    # never reuse
          "fields": {...},                  # the result's first fields
          "log_errors": bool,               # keep osm.log ERR lines
          "measure": function(task, res, osmlog)}

measure() runs in a worker process (a module-level function, so that it
pickles), fills res and sets res["status"]; it may raise: run_all()
reports any exception as an error cell.  A cell is written to
DIR/cell.json; a later run reuses it when its key is the same and its
status is one of task["good"] (a cell that failed is always redone).
A cell whose osm-sim run failed says so with the command that failed.
"""

import concurrent.futures
import hashlib
import json
import os
import re
import shlex
import subprocess
import sys
import time

from osmoffset import fabric, optimum, paths

PLUGIN_LIB = "libosmoffset.so"
# OpenSM output that the benchmarks do not need; removed to save space
BULKY = ("opensm.fdbs", "opensm-lid-matrix.dump", "guid2mkey", "neighbors",
         "opensm.mcfdbs", "ibroute.dump")


# ----------------------------------------------------------------------
# files and tools

def file_sha(path):
    """sha256 hex digest of a file."""
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def read_text(path):
    """A text file's contents, or None when it cannot be read."""
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return None


def plugin_dir():
    """The directory of the libosmoffset.so the cells load, as osm-sim
    looks it up: $OSMOFFSET_PLUGIN_DIR, else the source tree's .libs,
    else the installation's plugin directory."""
    env = os.environ.get("OSMOFFSET_PLUGIN_DIR")
    if env:
        return os.path.abspath(env)
    root = paths.source_root()
    if root:
        return os.path.join(root, ".libs")
    for key in ("plugindir", "pkglibdir", "libdir"):
        d = paths.installed_dir(key)
        if d and os.path.isfile(os.path.join(d, PLUGIN_LIB)):
            return d
    return os.path.join(sys.prefix, "lib")


def plugin_file():
    """Path of the plugin library the cells load (it may be missing)."""
    return os.path.join(plugin_dir(), PLUGIN_LIB)


def plugin_sha():
    """sha256 of the plugin library, or None when there is none."""
    p = plugin_file()
    return file_sha(p) if os.path.isfile(p) else None


def run_tool(name, args, timeout=None):
    """Run the osmoffset tool `name` (osm-sim, gen-fabric, ...) with args,
    no stdin, output captured as text; returns the CompletedProcess."""
    return subprocess.run(paths.tool_argv(name) + list(args),
                          stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                          stderr=subprocess.PIPE, universal_newlines=True,
                          timeout=timeout)


def last_line(text):
    """The last non-blank line of a tool's output, or None."""
    lines = [l for l in (text or "").splitlines() if l.strip()]
    return lines[-1].strip() if lines else None


def command_text(name, args):
    """A failed step as the user would type it."""
    return " ".join(shlex.quote(a) for a in [name] + list(args))


def log_errors(text):
    """ERR lines and plugin complaints of an OpenSM log."""
    bad = []
    for line in text.splitlines():
        if re.search(r"\bERR [0-9A-F]{4}\b", line) or \
                "Failed to open event plugin" in line or \
                "Error loading plugin" in line:
            m = re.search(r"-> (.*)$", line)
            bad.append((m.group(1) if m else line).strip())
    return bad


def analysis(celldir, lmc=None, hostfile=None):
    """lft-analyze --json --bisections 0 of a cell's OpenSM dumps (the
    same dict, computed in this process).  Raises fabric.InputError or
    OSError on unreadable dumps."""
    from osmoffset.analyze import Analysis
    topo = fabric.load_topology(os.path.join(celldir, "opensm-subnet.lst"))
    lfts = fabric.load_lfts(os.path.join(celldir, "opensm-lfts.dump"))
    an = Analysis(topo, lfts, lmc=lmc, hostfile=hostfile, bisections=0)
    return an.run()


def route_optimum(net, lmc=0, time_limit=None, random_orders=0,
                  apart=False):
    """route-optimum's result dict for a net file (as its --json, with
    --random-orders random_orders, and --lids-apart where apart), or
    raises RuntimeError with its message."""
    try:
        return optimum.optimum_of(
            net, lmc, time_limit=optimum.DEFAULT_TIME_LIMIT
            if time_limit is None else time_limit,
            random_orders=random_orders, apart=apart)
    except (fabric.InputError, optimum.NoSolver) as exc:
        raise RuntimeError(str(exc))


# ----------------------------------------------------------------------
# one cell

def cached_cell(task):
    """The cell.json of an earlier run that this task may reuse, or
    None."""
    if task.get("force") or task.get("key") is None:
        return None
    try:
        with open(os.path.join(task["dir"], "cell.json")) as f:
            old = json.load(f)
    except (OSError, ValueError):
        return None
    if not isinstance(old, dict) or old.get("key") != task["key"] or \
            old.get("status") not in task.get("good", ("ok",)):
        return None
    have = old.get("orders") or {}
    if any(n not in have for n in task.get("need", ())):
        return None
    old["cached"] = True
    if "dir" in task.get("fields", {}):
        old["dir"] = task["dir"]
    return old


def run_cell(task):
    """Route and measure one cell, or take it from the cache."""
    t0 = time.monotonic()
    old = cached_cell(task)
    if old is not None:
        return old
    celldir = task["dir"]
    stamp = os.path.join(celldir, "cell.json")
    res = dict(task.get("fields", {}))
    res.update(key=task.get("key"), cached=False)
    if task.get("key") is not None or task.get("sim") is not None:
        os.makedirs(celldir, exist_ok=True)
    try:
        os.unlink(stamp)
    except FileNotFoundError:
        pass
    ok = True
    osmlog = ""
    if task.get("sim") is not None:
        p = run_tool("osm-sim", task["sim"])
        osmlog = read_text(os.path.join(celldir, "osm.log")) or ""
        if task.get("log_errors"):
            res["log_errors"] = log_errors(osmlog)[:5]
        if p.returncode != 0:
            ok = False
            res["status"] = "error"
            res["error"] = "osm-sim exit %d: %s" % (
                p.returncode, last_line(p.stderr) or "no message")
            res["command"] = command_text("osm-sim", task["sim"])
    if ok:
        task["measure"](task, res, osmlog)
    for name in BULKY if task.get("sim") is not None else ():
        try:
            os.unlink(os.path.join(celldir, name))
        except OSError:
            pass
    res["seconds"] = round(time.monotonic() - t0, 2)
    if task.get("key") is not None:
        with open(stamp, "w") as f:
            json.dump(res, f, indent=1, sort_keys=True)
            f.write("\n")
    return res


def _label(ident):
    if len(ident) == 3 and isinstance(ident[2], int):
        return "%s %s lmc %d" % ident
    return " ".join(str(x) for x in ident)


def run_all(tasks, jobs, log=None):
    """Run the tasks, jobs at a time in worker processes; returns
    {task id: result}.  A cell whose run raised is an error cell naming
    the exception.  log(msg) gets one progress line per cell."""
    log = log or (lambda msg: None)
    results = {}
    ex = concurrent.futures.ProcessPoolExecutor(max_workers=jobs)
    try:
        futs = {ex.submit(run_cell, t): t for t in tasks}
        for n, fut in enumerate(concurrent.futures.as_completed(futs), 1):
            t = futs[fut]
            try:
                r = fut.result()
            except Exception as exc:  # a bug or a lost worker: the cell
                r = dict(t.get("fields", {}))
                r.update(status="error", cached=False,
                         error="%s: %s" % (type(exc).__name__, exc))
            results[t["id"]] = r
            log("[%d/%d] %s: %s%s %.1f s"
                % (n, len(tasks), _label(t["id"]), r["status"],
                   " (cached)" if r.get("cached") else "",
                   r.get("seconds", 0.0)))
            if r["status"] == "error":
                log("  %s" % r.get("error"))
                if r.get("command"):
                    log("  command: %s" % r["command"])
    except BaseException:
        ex.shutdown(wait=False, cancel_futures=True)
        raise
    ex.shutdown(wait=True)
    return results
