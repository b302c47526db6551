"""bench-routing's measurements: OpenSM log milestones, the fast LFT
array reader and block diff, the standard fabrics and engines, one cell
(private ibsim + daemon opensm from osmoffset.runner: first routing, one
link failure, one resweep) and the report tables."""

import os
import platform
import re
import shlex
import shutil
import signal
import subprocess
import time

import numpy as np

from osmoffset import checks, fabric, paths, runner

PROG = "bench-routing"
FABRICS = {
    "648": ("ft2-648.net", ["2level", "--leaves", "36", "--spines", "18",
                            "--hosts-per-leaf", "18", "--random-guids"]),
    "5832": ("kary-18-3.net", ["kary", "--k", "18", "--levels", "3",
                               "--random-guids"]),
    "11664": ("ft3-36.net", ["ft3", "--radix", "36"]),
}
ENGINES = {
    # name: (opensm -R, port_offsetting mode or "stock", give updn roots,
    #        further plugin options)
    "updn": ("updn", "stock", True, ()),
    "minhop": ("minhop", "stock", False, ()),
    "ftree": ("ftree", "stock", False, ()),
    "dfsssp": ("dfsssp", "stock", False, ()),
    "osmoffset": ("updn", "on", True, ()),
    "osmoffset-minhop": ("minhop", "on", False, ()),
    "osmoffset-noguard": ("updn", "on", True, ("stock_guard=off",)),
}
DEFAULT_ENGINES = "updn,minhop,ftree,dfsssp,osmoffset,osmoffset-minhop"
DUMP_LIMIT = 2000000        # LFT entries up to which --lfts auto uses dumps
# Debian's ibsim 0.10 gives every switch LinearFDBCap 30720 and OpenSM
# caps the subnet's unicast LIDs at the smallest LinearFDBCap: the
# 11,664-host fabric at LMC 2 needs 48,276 LIDs (ERR 0307 "OPENSM RAN
# OUT OF LIDS" otherwise).  Cells that need more LIDs get ibsim -L 49152
# (runner.ibsim_limits), room for every unicast LID (0x0001-0xBFFF).
FIELDS = ("route_s", "rss_mb", "reroute_s", "fail_blocks", "fail_entries",
          "resweep_blocks")


class BenchError(Exception):
    def __init__(self, message, status=1):
        Exception.__init__(self, message)
        self.status = status


class CellFailed(Exception):
    """The cell could not be measured; str() goes into its row."""

    def __init__(self, message, verdict="failed"):
        Exception.__init__(self, message)
        self.verdict = verdict


# ----------------------------------------------------------------------
# OpenSM log
# ----------------------------------------------------------------------

MONTHS = {m: i for i, m in enumerate(
    "Jan Feb Mar Apr May Jun Jul Aug Sep Oct Nov Dec".split())}
LOG_LINE = re.compile(r"^(\w{3}) +(\d+) (\d\d):(\d\d):(\d\d) (\d{6}) "
                      r"\[[0-9A-Fa-f]+\] 0x[0-9a-f]{2} -> (.*)$", re.M)
EVENTS = (
    ("build", re.compile(r"building routing with '([^']+)' routing")),
    ("done", re.compile(r"(\S+) tables configured on all switches")),
    ("cannot", re.compile(r"(\S+): cannot build")),
    ("up", re.compile(r"^(SUBNET UP|Errors during initialization)")),
    ("nolid", re.compile(r"(ERR 0307): OPENSM RAN OUT OF LIDS")),
    ("noengine", re.compile(r"(No routing engine able)")),
)


# Substrings of the lines EVENTS look at: only those lines are parsed, so
# that following a verbose log costs little CPU next to the measured SM.
KEYS = ("building routing with", "tables configured on all switches",
        ": cannot build", "SUBNET UP", "Errors during initialization",
        "OPENSM RAN OUT OF LIDS", "No routing engine able")


def key_lines(text):
    """The lines of text holding one of KEYS, in log order."""
    found = {}
    for key in KEYS:
        pos = text.find(key)
        while pos >= 0:
            start = text.rfind("\n", 0, pos) + 1
            end = text.find("\n", pos)
            end = len(text) if end < 0 else end
            found[start] = text[start:end]
            pos = text.find(key, end)
    return "\n".join(found[k] for k in sorted(found))


def log_events(text):
    """[(kind, seconds, argument)] of the routing milestones in a log."""
    out = []
    for m in LOG_LINE.finditer(key_lines(text)):
        msg = m.group(7)
        for kind, rx in EVENTS:
            e = rx.search(msg)
            if e:
                t = ((MONTHS.get(m.group(1), 0) * 31 + int(m.group(2))) *
                     86400 + int(m.group(3)) * 3600 + int(m.group(4)) * 60 +
                     int(m.group(5)) + int(m.group(6)) / 1e6)
                out.append((kind, t, e.group(1)))
                break
    return out


def first_routing(events, start):
    """From events[start:]: (seconds, engine used, index after) of the
    first routing: first 'build' to the next 'done' line; None if not
    complete yet."""
    t0 = None
    for i in range(start, len(events)):
        kind, t, arg = events[i]
        if kind == "build" and t0 is None:
            t0 = t
        elif kind == "done" and t0 is not None:
            return round(t - t0, 3), arg, i + 1
    return None


class Log:
    """The OpenSM log, parsed incrementally (a sweep of a 10,000-host
    fabric logs ~50 MB at -D 0x07: re-reading it all on every poll would
    steal the CPU the measured OpenSM needs)."""

    def __init__(self, path):
        self.path = path
        self.offset = 0
        self.ev = []

    def events(self):
        try:
            with open(self.path, "rb") as f:
                f.seek(self.offset)
                data = f.read()
        except OSError:
            return list(self.ev)
        cut = data.rfind(b"\n") + 1
        if cut:
            self.offset += cut
            self.ev.extend(log_events(data[:cut].decode("utf-8",
                                                        "replace")))
        return list(self.ev)

    def size(self):
        try:
            return os.path.getsize(self.path)
        except OSError:
            return 0


def vm_hwm_mb(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return round(int(line.split()[1]) / 1024.0, 1)
    except OSError:
        pass
    return None


# ----------------------------------------------------------------------
# LFT files: fast reader and block diff
# ----------------------------------------------------------------------

def diff_lfts(a, b):
    """(blocks, entries) that differ between two fabric.load_lft_arrays()
    results:
    64-LID blocks over all switches, and single LFT entries."""
    blocks = entries = 0
    for g in set(a) | set(b):
        x, y = a.get(g), b.get(g)
        n = max(len(x) if x is not None else 0, len(y) if y is not None
                else 0)
        n = (n + 63) // 64 * 64
        xs = np.full(n, 255, np.uint8)
        ys = np.full(n, 255, np.uint8)
        if x is not None:
            xs[:len(x)] = x
        if y is not None:
            ys[:len(y)] = y
        d = xs != ys
        entries += int(d.sum())
        blocks += int(d.reshape(-1, 64).any(axis=1).sum())
    return blocks, entries


# ----------------------------------------------------------------------
# Fabrics
# ----------------------------------------------------------------------

def ensure_fabric(key, fabric_dir):
    name, args = FABRICS[key]
    path = os.path.join(fabric_dir, name)
    if not os.path.isfile(path):
        os.makedirs(fabric_dir, exist_ok=True)
        tmp = path + ".tmp%d" % os.getpid()
        p = subprocess.run(paths.tool_argv("gen-fabric") + args + ["-o", tmp],
                           stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                           stderr=subprocess.PIPE, universal_newlines=True)
        if p.returncode != 0:
            raise BenchError("gen-fabric %s: %s" % (" ".join(args),
                                                    p.stderr.strip()))
        os.rename(tmp, path)
    return path


def load_net(net):
    """A net file read by osmoffset.fabric; BenchError(2) if it is bad."""
    try:
        return fabric.load_topology(net)
    except fabric.InputError as exc:
        raise BenchError("--net: %s" % exc, 2)


def fault_link(net):
    """(switch name, port, remote name, remote port) of the link to unplug:
    first switch-facing port of the first leaf (a switch with a host) in
    file order that is not the leaf of the SM's node (the first node)."""
    recs = load_net(net).records
    by_id = {r["id"]: r for r in recs}
    first = recs[0]
    sm_leaf = None
    if first["kind"] == "CA":
        for p in sorted(first["ports"]):
            sm_leaf = first["ports"][p]["remote"]
            break
    else:
        sm_leaf = first["id"]
    for n in recs:
        if n["kind"] != "SW" or n["id"] == sm_leaf:
            continue
        if not any(by_id[i["remote"]]["kind"] == "CA"
                   for i in n["ports"].values()):
            continue
        for p in sorted(n["ports"]):
            i = n["ports"][p]
            if by_id[i["remote"]]["kind"] == "SW":
                return n["id"], p, i["remote"], i["rport"]
    raise BenchError("%s: no leaf switch with an inter-switch link besides "
                     "the SM's" % net, 2)


def net_counts(net):
    """(hosts, switches) of a net file."""
    recs = load_net(net).records
    return (sum(1 for r in recs if r["kind"] == "CA"),
            sum(1 for r in recs if r["kind"] == "SW"))


# ----------------------------------------------------------------------
# One cell
# ----------------------------------------------------------------------

class Cell:
    def __init__(self, args, net, fabric_key, lmc, engine, celldir,
                 plugin_dir):
        self.args = args
        self.net = net
        self.lmc = lmc
        self.engine = engine
        self.dir = celldir
        self.plugin_dir = plugin_dir
        self.res = {"fabric": fabric_key, "net": net, "lmc": lmc,
                    "engine": engine, "status": "ok"}
        self.log = Log(os.path.join(celldir, "osm.log"))
        self.osm = self.ibsim = None
        self.deadline = 0.0

    # -- waiting -------------------------------------------------------
    def left(self):
        rest = self.deadline - time.monotonic()
        if rest <= 0:
            raise CellFailed("cell timeout (%g s)" % self.args.timeout,
                             "timeout")
        return rest

    def alive(self):
        if self.osm.poll() is not None:
            raise CellFailed("opensm exited (status %d)"
                             % self.osm.returncode)

    def wait_routing(self, start, nudge=None):
        """Wait for a routing after event index `start` and for OpenSM to
        settle (the sweep ended and the log has been quiet for --quiet
        seconds).  Returns (route_s, engine_used, events, nudged)."""
        t_begin = time.monotonic()
        nudged = 0
        last_size, last_change = -1, time.monotonic()
        while True:
            self.left()
            self.alive()
            ev = self.log.events()
            bad = [e for e in ev[start:] if e[0] in ("nolid", "noengine")]
            if bad:
                raise CellFailed("%s (see %s)" % (bad[0][2], self.log.path))
            r = first_routing(ev, start)
            size = self.log.size()
            now = time.monotonic()
            if size != last_size:
                last_size, last_change = size, now
            if r is not None:
                # settled: the last routing's sweep has ended and nothing
                # was logged for a while (a second trap may follow)
                last_build = max(i for i, e in enumerate(ev)
                                 if e[0] == "build")
                ended = any(e[0] == "up" for e in ev[last_build:])
                if ended and now - last_change >= self.args.quiet:
                    return r[0], r[1], ev, nudged
            elif nudge and now - t_begin > nudge * (nudged + 1) and \
                    now - last_change > 2.0:
                nudged += 1
                self.osm.send_signal(signal.SIGHUP)
            time.sleep(0.25)

    def snapshot(self, name, env):
        """LFTs as they are now -> kept file name, tables."""
        dst = os.path.join(self.dir, "lfts-%s" % name)
        if self.res["lft_source"] == "dump":
            shutil.copyfile(os.path.join(self.dir, "opensm-lfts.dump"),
                            dst + ".dump")
            path = dst + ".dump"
        else:
            sub = dst + ".d"
            os.makedirs(sub, exist_ok=True)
            sw_lids = [(n.lid, "0x%016x" % n.guid) for n in
                       fabric.load_topology(os.path.join(
                           self.dir, "opensm-subnet.lst")).switches()]
            try:
                runner.dump_ibroute(sub, env, sw_lids)
            except runner.RunError as exc:
                raise CellFailed("reading LFTs from the switches: %s" % exc)
            path = dst + ".ibroute"
            os.replace(os.path.join(sub, "ibroute.dump"), path)
            shutil.rmtree(sub, ignore_errors=True)
        try:
            return path, fabric.load_lft_arrays(path)
        except fabric.InputError as exc:
            raise CellFailed("reading %s: %s" % (path, exc))

    # -- the run -------------------------------------------------------
    def run(self):
        a = self.args
        self.deadline = time.monotonic() + a.timeout
        R, mode, use_roots, extra = ENGINES[self.engine]
        self.res.update(requested=R, mode=mode)
        if os.path.isdir(self.dir):
            shutil.rmtree(self.dir)
        os.makedirs(self.dir)
        hosts, switches = net_counts(self.net)
        entries = switches * (hosts + switches) * (1 << self.lmc)
        src = a.lfts
        if src == "auto":
            src = "dump" if entries <= DUMP_LIMIT else "switches"
        if a.lfts_max_entries is not None and entries > a.lfts_max_entries:
            src = "none"
        self.res.update(lft_source=src, lft_entries=entries)
        scan = fabric.scan_netfile(self.net)
        env = runner.sim_env(runner.socket_name("benchrt"), self.dir)
        conf = os.path.join(self.dir, "opensm.conf")
        # the log is read while OpenSM runs: no stdio buffering
        runner.write_conf(conf, mode, extra, ["force_log_flush TRUE"])
        rf = None
        roots = scan.roots if use_roots else []
        if roots:
            rf = os.path.join(self.dir, "root-guids")
            runner.write_roots(rf, roots)
        cmd = runner.opensm_command(
            runner.which("opensm") or "opensm", self.dir, self.log.path, R,
            self.lmc, conf, once=False, sweep=0,
            debug="0x47" if src == "dump" else "0x07", roots_file=rf)
        self.res["opensm_cmd"] = " ".join(shlex.quote(c) for c in cmd)
        osm_env = runner.opensm_env(
            env, self.plugin_dir if mode != "stock" else None)
        sw, sp, rsw, rp = fault_link(self.net)
        self.res["failed_link"] = "%s[%d]-%s[%d]" % (sw, sp, rsw, rp)
        try:
            lids = switches + (hosts << self.lmc)
            self.res["lids_needed"] = lids
            if lids > runner.IBSIM_DEFAULT_LFT_CAP - 64:
                self.res["ibsim_lft_cap"] = runner.IBSIM_FULL_LFT_CAP
            try:
                self.ibsim = runner.Ibsim(self.net, self.dir, env,
                                          scan.sizes(), lids=lids,
                                          timeout=min(self.left(), 120.0),
                                          console=True)
            except runner.RunError as exc:
                raise CellFailed("ibsim: %s" % exc)
            self.osm = runner.start_opensm(cmd, osm_env, self.dir)
            # 1. first heavy sweep
            route_s, used, ev, _ = self.wait_routing(0)
            self.res.update(route_s=route_s, engine_used=used,
                            rss_first_mb=vm_hwm_mb(self.osm.pid))
            self.res["routings_first"] = sum(1 for e in ev
                                             if e[0] == "build")
            if mode != "stock":
                probs = checks.plugin_log_problems(
                    runner.read_text(self.log.path), mode)
                if probs:
                    raise CellFailed("plugin: %s" % probs[0])
            snap = src != "none"
            if snap:
                before_path, before = self.snapshot("before", osm_env)
            # 2. one inter-switch link fails
            n0 = len(self.log.events())
            reply = self.ibsim.command('Unlink "%s"[%d]' % (sw, sp))
            bad = [l for l in reply.splitlines() if l.strip().startswith("#")]
            if bad:
                raise CellFailed("ibsim refused Unlink: %s" % bad[0])
            reroute_s, used2, ev, nudged = self.wait_routing(
                n0, nudge=a.nudge)
            self.res.update(reroute_s=reroute_s, engine_used_after=used2,
                            nudged=nudged,
                            routings_after_failure=sum(
                                1 for e in ev[n0:] if e[0] == "build"))
            if snap:
                after_path, after = self.snapshot("after-failure", osm_env)
                self.res["fail_blocks"], self.res["fail_entries"] = \
                    diff_lfts(before, after)
            # 3. heavy sweep of the unchanged fabric
            n1 = len(ev)
            self.osm.send_signal(signal.SIGHUP)
            resweep_s, _u, ev, _ = self.wait_routing(n1)
            self.res["resweep_route_s"] = resweep_s
            if snap:
                re_path, resweep = self.snapshot("resweep", osm_env)
                self.res["resweep_blocks"], self.res["resweep_entries"] = \
                    diff_lfts(after, resweep)
                self.res["lft_files"] = [os.path.basename(p) for p in
                                         (before_path, after_path, re_path)]
            self.res["rss_mb"] = vm_hwm_mb(self.osm.pid)
            self.alive()
        except CellFailed as exc:
            self.res["status"] = exc.verdict
            self.res["error"] = str(exc)
            self.res["rss_mb"] = self.res.get("rss_mb") or (
                vm_hwm_mb(self.osm.pid) if self.osm else None)
        finally:
            if self.osm is not None:
                runner.stop_process(self.osm, grace=20.0)
            if self.ibsim is not None:
                self.ibsim.stop()
        return self.res


# ----------------------------------------------------------------------
# Tables
# ----------------------------------------------------------------------

def fmt(v, spec="%.2f"):
    if v is None:
        return "-"
    if isinstance(v, float):
        return spec % v
    return str(v)


def ratio(v, base):
    if v is None or not base:
        return "-"
    return "%.2f" % (v / base)


COLS = ("fabric", "LMC", "engine (used)", "route s", "x updn", "RSS MB",
        "x updn", "reroute s", "fail blk/ent", "resweep blk")


def table_rows(cells):
    base = {}
    for c in cells:
        if c["engine"] == "updn" and c.get("route_s") is not None:
            base[(c["fabric"], c["lmc"])] = c
    rows = []
    for c in cells:
        b = base.get((c["fabric"], c["lmc"]), {})
        eng = c["engine"]
        used = c.get("engine_used")
        if used and used != c.get("requested"):
            eng += " (%s)" % used
        if c["status"] != "ok" and c.get("route_s") is None:
            rows.append([c["fabric"], str(c["lmc"]), eng, c["status"], "",
                         fmt(c.get("rss_mb"), "%.0f"), "", "", "", ""])
            continue
        fb = "-" if c.get("fail_blocks") is None else "%d/%d" % (
            c["fail_blocks"], c["fail_entries"])
        rb = fmt(c.get("resweep_blocks"))
        if c.get("lft_source") == "none":
            fb = rb = "n/a"
        rows.append([c["fabric"], str(c["lmc"]), eng,
                     fmt(c.get("route_s"), "%.3f"),
                     ratio(c.get("route_s"), b.get("route_s")),
                     fmt(c.get("rss_mb"), "%.0f"),
                     ratio(c.get("rss_mb"), b.get("rss_mb")),
                     (fmt(c.get("reroute_s"), "%.3f") + (
                         " (%s)" % c["engine_used_after"]
                         if c.get("engine_used_after") not in (None, used)
                         else "")) if c["status"] == "ok"
                     or c.get("reroute_s") is not None else c["status"],
                     fb, rb])
    return rows


def text_table(cells):
    rows = [list(COLS)] + table_rows(cells)
    w = [max(len(r[i]) for r in rows) for i in range(len(COLS))]
    out = []
    for n, r in enumerate(rows):
        out.append("  ".join(x.rjust(w[i]) if i >= 3 else x.ljust(w[i])
                             for i, x in enumerate(r)).rstrip())
        if n == 0:
            out.append("  ".join("-" * x for x in w))
    return "\n".join(out)


def md_table(cells):
    out = ["| " + " | ".join(COLS) + " |",
           "|" + "|".join("---" if i < 3 else "---:"
                          for i in range(len(COLS))) + "|"]
    for r in table_rows(cells):
        out.append("| " + " | ".join(r) + " |")
    return "\n".join(out)


def machine_facts():
    model = ""
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        pass
    ver = runner.opensm_version(runner.which("opensm") or "opensm")
    mem = ""
    try:
        with open("/proc/meminfo") as f:
            mem = "%.0f GB" % (int(f.readline().split()[1]) / 1048576.0)
    except (OSError, ValueError, IndexError):
        pass
    return {"nproc": os.cpu_count(), "cpu": model, "memory": mem,
            "opensm": ver, "kernel": platform.release()}


def write_doc(path, report):
    m = report["machine"]
    lines = [
        "Routing speed of OpenSM's engines and osmoffset",
        "===============================================",
        "",
        "Written by `scripts/bench-routing` (do not edit the table by hand; "
        "rerun instead).",
        "",
        "Command:",
        "",
        "    " + report["command"],
        "",
        "Machine: %s CPU(s), %s, %s RAM, %s, Linux %s.  Total wall time "
        "%.0f s." % (m["nproc"], m["cpu"], m["memory"], m["opensm"],
                     m["kernel"], report["wall_s"]),
        "",
        md_table(report["cells"]),
        "",
        "Where the time goes, profiled: docs/speed-profile.md.",
        "",
        "Columns: *route s* = first heavy sweep, OpenSM log time from "
        "\"building routing with\" to \"tables configured on all "
        "switches\" (minimum over --repeat runs); *x updn* = ratio to stock "
        "updn on the same fabric and LMC; *RSS MB* = peak resident memory "
        "of opensm (VmHWM); *reroute s* = the same span for the sweep after "
        "one inter-switch link (%s) is unplugged; *fail blk/ent* = 64-LID "
        "LFT blocks / LFT entries over all switches changed by that "
        "failure; *resweep blk* = blocks changed by a heavy sweep of the "
        "unchanged fabric (SIGHUP).  An engine in parentheses is the one "
        "OpenSM actually used (fallback), also after the failure; n/a = "
        "LFTs not compared (--lfts-max-entries)." % ", ".join(sorted(
            {c.get("failed_link", "?") + " on " + c["fabric"]
             for c in report["cells"]})),
        "",
    ]
    with open(path, "w") as f:
        f.write("\n".join(lines))
