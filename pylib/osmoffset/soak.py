"""Seeded fault injection under a running OpenSM (osm-fault-soak).

Model: the fabric as the soak has left it (which cables, switches and
hosts are unplugged) and so which part is still connected to the SM;
plan_event() draws the next fault or repair; check_dump()/wait_verdict()
compare OpenSM's dumps with the model and run lft-analyze on them;
run_soak() is the whole soak on a private ibsim and a daemon opensm
started by osmoffset.runner (valgrind-soak runs it under valgrind).
"""

import argparse
import json
import os
import random
import re
import shutil
import signal
import subprocess
import time
from collections import deque

from osmoffset import fabric, paths, runner


# ----------------------------------------------------------------------
# The fabric model
# ----------------------------------------------------------------------

def first_node_name(topo):
    """Node id (ibsim's name for it) and kind of the first node of a net
    file (as read by fabric.load_topology): it hosts the SM."""
    for rec in topo.records:
        if rec["kind"] in ("SW", "CA"):
            return rec["id"], rec["kind"]
    return None, None


def sim_name(node):
    """The name ibsim's console knows a node by: its net-file node id
    (which may differ from the description in the comment after it)."""
    return node.nid or node.desc


class Model:
    """The fabric as the soak has left it: which cables, switches and hosts
    are unplugged, and so which part is still connected to the SM."""

    def __init__(self, topo, sm_name, sm_kind):
        self.topo = topo
        self.sw = {n.guid: n for n in topo.switches()}
        # hosts by node GUID -> their CA port nodes
        self.hosts = {}
        for n in topo.cas():
            self.hosts.setdefault(n.node_guid, []).append(n)
        self.isl = sorted({tuple(sorted((a, b))) for a, b in
                           topo.links.items()
                           if a[0] in self.sw and b[0] in self.sw})
        self.faults = []            # open faults, oldest first
        self.protected_sw = set()
        self.protected_host = set()
        self.sm_node = None
        for n in topo.nodes.values():
            if sim_name(n) == sm_name and n.kind == sm_kind:
                self.sm_node = n
                break
        if self.sm_node is None:
            raise runner.RunError("net file: cannot find the SM node %r"
                                  % sm_name, 2)
        if sm_kind == "SW":
            self.protected_sw.add(self.sm_node.guid)
        else:
            self.protected_host.add(self.sm_node.node_guid)
            for p in self.hosts[self.sm_node.node_guid]:
                r = topo.links.get((p.guid, p.port))
                if r and r[0] in self.sw:
                    self.protected_sw.add(r[0])

    # -- what is touched / down -----------------------------------------
    def down_switches(self):
        return {f[1] for f in self.faults if f[0] == "switch"}

    def down_hosts(self):
        return {f[1] for f in self.faults if f[0] == "host"}

    def down_links(self):
        return {f[1] for f in self.faults if f[0] == "link"}

    def touched_switches(self):
        """Switches a new switch fault must not hit.  ibsim's ReLink of a
        whole switch re-plugs every port that remembers a previous peer, so
        a switch next to a removed one (its port to it remembers the peer)
        is left alone, or its return would bring the other one back too."""
        t = set(self.down_switches())
        for g in self.down_switches():
            for p in range(1, self.topo.nodes[g].nports + 1):
                r = self.topo.links.get((g, p))
                if r and r[0] in self.sw:
                    t.add(r[0])
        for a, b in self.down_links():
            t.add(a[0])
            t.add(b[0])
        for h in self.down_hosts():
            for p in self.hosts[h]:
                r = self.topo.links.get((p.guid, p.port))
                if r:
                    t.add(r[0])
        return t

    def link_is_up(self, a, b):
        dsw, dh = self.down_switches(), self.down_hosts()
        if tuple(sorted((a, b))) in self.down_links():
            return False
        for end in (a, b):
            if end[0] in dsw:
                return False
            n = self.topo.nodes[end[0]]
            if n.kind == "CA" and n.node_guid in dh:
                return False
        return True

    def alive(self):
        """Node keys (switch GUIDs, CA port GUIDs) connected to the SM."""
        start = self.sm_node.guid
        seen = {start}
        q = deque([start])
        while q:
            g = q.popleft()
            n = self.topo.nodes[g]
            ports = range(1, n.nports + 1) if n.kind == "SW" else [n.port]
            for p in ports:
                r = self.topo.links.get((g, p))
                if r is None or r[0] in seen or not self.link_is_up((g, p), r):
                    continue
                seen.add(r[0])
                q.append(r[0])
        return seen

    def live_links(self, alive):
        out = set()
        for a, b in self.topo.links.items():
            if a[0] in alive and b[0] in alive and self.link_is_up(a, b):
                out.add(tuple(sorted((a, b))))
        return out

    # -- drawing events ---------------------------------------------------
    def choices(self):
        """Possible new faults as (kind, key) lists per kind."""
        touched = self.touched_switches()
        dsw = self.down_switches()
        links = [l for l in self.isl
                 if l[0][0] not in dsw and l[1][0] not in dsw and
                 l not in self.down_links()]
        switches = [g for g in sorted(self.sw)
                    if g not in touched and g not in self.protected_sw]
        hosts = []
        for h in sorted(self.hosts):
            if h in self.protected_host or h in self.down_hosts():
                continue
            leaves = [self.topo.links.get((p.guid, p.port))
                      for p in self.hosts[h]]
            if any(r is None or r[0] in dsw for r in leaves):
                continue
            hosts.append(h)
        return {"link": [("link", l) for l in links],
                "switch": [("switch", g) for g in switches],
                "host": [("host", h) for h in hosts]}

    def name(self, guid):
        return sim_name(self.topo.nodes[guid])

    def host_name(self, h):
        return sim_name(self.hosts[h][0])

    def commands(self, fault, repair):
        kind, key = fault
        verb = "ReLink" if repair else "Unlink"
        if kind == "link":
            (g, p), _ = key
            return ['%s "%s"[%d]' % (verb, self.name(g), p)]
        if kind == "switch":
            return ['%s "%s"' % (verb, self.name(key))]
        return ['%s "%s"' % (verb, self.host_name(key))]

    def describe(self, fault, repair):
        kind, key = fault
        if kind == "link":
            (g, p), (rg, rp) = key
            what = "%s[%d]-%s[%d]" % (self.name(g), p, self.name(rg), rp)
        elif kind == "switch":
            what = self.name(key)
        else:
            what = self.host_name(key)
        return "%s-%s %s" % (kind, "up" if repair else "down", what)


def plan_event(model, rng, remaining):
    """Draw the next event: (fault, repair?).  With as many events left as
    faults open, only repairs are drawn, so the fabric ends whole."""
    open_faults = len(model.faults)
    if open_faults and (remaining <= open_faults or rng.random() < 0.45):
        return model.faults[rng.randrange(open_faults)], True
    ch = model.choices()
    kinds = [k for k in ("link", "switch", "host") if ch[k]]
    weights = {"link": 5, "switch": 2, "host": 3}
    if not kinds:
        if open_faults:
            return model.faults[rng.randrange(open_faults)], True
        raise runner.RunError("nothing in this fabric can be faulted", 2)
    kind = rng.choices(kinds, [weights[k] for k in kinds])[0]
    return rng.choice(ch[kind]), False


def count_heavy_sweeps(text):
    """Heavy sweeps completed, as OpenSM logs them at -D 0x43: a 'SUBNET UP'
    line (log level SYS the first time, INFO afterwards) ends each one."""
    return len(re.findall(r"\] 0x[0-9a-f]{2} -> SUBNET UP\s*$", text, re.M))


# ----------------------------------------------------------------------
# Checks
# ----------------------------------------------------------------------

def mtime(path):
    try:
        return os.stat(path).st_mtime
    except OSError:
        return 0.0


def check_dump(model, out, lmc):
    """Compare the SM's current dump with the model.  Returns (ok, detail,
    analysis or None).  ok is None when the dump is stale or mid-write."""
    lst = os.path.join(out, "opensm-subnet.lst")
    lfts = os.path.join(out, "opensm-lfts.dump")
    try:
        topo = fabric.load_topology(lst)
        fabric.load_lfts(lfts)
    except fabric.InputError as exc:
        return None, "dump not readable yet: %s" % exc, None
    alive = model.alive()
    want_sw = {g for g in alive if g in model.sw}
    want_ca = {g for g in alive if g not in model.sw}
    got_sw = {n.guid for n in topo.switches()}
    got_ca = {n.guid for n in topo.cas()}
    got_links = {tuple(sorted((a, b))) for a, b in topo.links.items()
                 if a not in topo.down}
    want_links = model.live_links(alive)
    if (got_sw, got_ca, got_links) != (want_sw, want_ca, want_links):
        return None, ("dump shows %d switches %d hosts %d links, expected "
                      "%d %d %d" % (len(got_sw), len(got_ca), len(got_links),
                                    len(want_sw), len(want_ca),
                                    len(want_links))), None
    p = subprocess.run(paths.tool_argv("lft-analyze") + [
        "--lfts", lfts, "--topology", lst, "--lmc", str(lmc), "--json",
        "--bisections", "0"], stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE, stderr=subprocess.PIPE,
        universal_newlines=True, timeout=300)
    try:
        res = json.loads(p.stdout)
    except ValueError:
        return None, "lft-analyze exit %d: %s" % (
            p.returncode, p.stderr.strip()[-200:]), None
    ok = p.returncode == 0 and res.get("valid") and not res.get("credit_loop")
    detail = "%d hosts %d switches valid=%s credit_loop=%s" % (
        res.get("hosts", -1), res.get("switches", -1), res.get("valid"),
        res.get("credit_loop"))
    if not ok and res.get("problems"):
        detail += ": " + str(res["problems"][0])[:200]
    return bool(ok), detail, res


def wait_verdict(model, out, lmc, since, osm, timeout, nudge=0.0,
                 nudged=None):
    """Wait for a dump newer than `since` that matches the model; returns
    (verdict, detail, analysis).  With nudge > 0, an opensm whose dump
    does not match nudge seconds after the event gets a SIGHUP (a forced
    heavy sweep), and another every nudge seconds after that; nudged[0]
    counts them."""
    lfts = os.path.join(out, "opensm-lfts.dump")
    t_start = time.monotonic()
    deadline = t_start + timeout
    detail = "no heavy sweep rewrote opensm-lfts.dump"
    res = None
    last_checked = 0.0
    while time.monotonic() < deadline:
        if osm.poll() is not None:
            return False, "opensm exited (status %d)" % osm.returncode, None
        t = mtime(lfts)
        # a dump newer than the event, and not being written right now
        if t > since and t != last_checked and time.time() - t > 0.3:
            ok, detail, res = check_dump(model, out, lmc)
            last_checked = t
            if ok is not None:
                # a stale pass cannot happen: the dump matched the model
                return ok, detail, res
        if nudge and nudged is not None and \
                time.monotonic() - t_start > nudge * (nudged[0] + 1):
            nudged[0] += 1
            osm.send_signal(signal.SIGHUP)
        time.sleep(0.1)
    return False, "not settled within %g s: %s" % (timeout, detail), res


# ----------------------------------------------------------------------
# The soak
# ----------------------------------------------------------------------

# osm-fault-soak's options and their defaults (run_soak's args)
DEFAULTS = {"net": None, "events": 0, "seed": 1, "lmc": 0, "out": None,
            "engine": "updn", "port_offsetting": "on", "stock": False,
            "plugin_dir": None, "wrapper": "", "start_timeout": 60.0,
            "settle_timeout": 60.0, "nudge": 0.0, "pause": 0.0}


def options(**kw):
    """run_soak()'s args for a caller that is not osm-fault-soak's
    command line (valgrind-soak): DEFAULTS updated with kw."""
    bad = set(kw) - set(DEFAULTS)
    if bad:
        raise TypeError("unknown soak options: %s" % ", ".join(sorted(bad)))
    return argparse.Namespace(**dict(DEFAULTS, **kw))


def option_argv(args):
    """The osm-fault-soak command line equivalent to args (for reports)."""
    argv = []
    for key, default in DEFAULTS.items():
        v = getattr(args, key)
        if v == default and key not in ("net", "out", "events"):
            continue
        opt = "--" + key.replace("_", "-")
        if v is True:
            argv.append(opt)
        elif v is not False:
            argv += [opt, str(v)]
    return argv


def run_soak(args, osm_args, summary):
    """The soak; fills summary (also when it stops early) and returns it."""
    if args.events < 0:
        raise runner.RunError("--events must be >= 0", 2)
    if not 0 <= args.lmc <= 7:
        raise runner.RunError("--lmc must be 0..7", 2)
    if args.nudge and args.nudge < 2:
        # a SIGHUP during a heavy sweep restarts it: a storm of them
        # starves OpenSM of complete sweeps
        raise runner.RunError("--nudge must be 0 or at least 2 seconds", 2)
    net = os.path.abspath(args.net)
    out = os.path.abspath(args.out)
    if not os.path.isfile(net):
        raise runner.RunError("net file %s: no such file" % args.net, 2)
    try:
        topo = fabric.load_topology(net)
    except fabric.InputError as exc:
        raise runner.RunError("net file: %s" % exc, 2)
    sm_name, sm_kind = first_node_name(topo)
    model = Model(topo, sm_name, sm_kind)
    tools = runner.require_tools(("ibsim", "opensm"), hint="")
    plugin_dir = None
    mode = "stock" if args.stock else args.port_offsetting
    if not args.stock:
        plugin_dir, origin = runner.resolve_plugin_dir(args.plugin_dir)
        runner.check_plugin_dir(plugin_dir, origin)
        summary["plugin"] = runner.describe_plugin(plugin_dir, origin)
    os.makedirs(out, exist_ok=True)
    runner.clean_outdir(out, names=runner.OUTPUT_FILES +
                        ("events.log", "soak.json"))
    for name in os.listdir(out):
        if name.startswith("fail-"):
            os.unlink(os.path.join(out, name))

    scan = fabric.scan_netfile(net)
    env = runner.sim_env(runner.socket_name("osmsoak"), out)
    conf = os.path.join(out, "opensm.conf")
    runner.write_conf(conf, mode)
    roots_file = None
    if scan.roots and "updn" in args.engine.split(","):
        roots_file = os.path.join(out, "root-guids")
        runner.write_roots(roots_file, scan.roots)
    cmd = runner.opensm_command(
        tools["opensm"], out, os.path.join(out, "osm.log"), args.engine,
        args.lmc, conf, once=False, sweep=1, roots_file=roots_file,
        wrapper=args.wrapper.split(), extra=osm_args)
    osm_env = runner.opensm_env(env, plugin_dir)

    rng = random.Random(args.seed)
    summary.update(net=net, seed=args.seed, lmc=args.lmc,
                   engine=args.engine, mode=mode, opensm_cmd=cmd)
    ibsim = osm = None
    evlog = open(os.path.join(out, "events.log"), "w")
    lfts = os.path.join(out, "opensm-lfts.dump")
    try:
        ibsim = runner.Ibsim(net, out, env, scan.sizes(),
                             lids=scan.nodes << args.lmc, timeout=20.0,
                             console=True, net_label=args.net)
        osm = runner.start_opensm(cmd, osm_env, out)
        t0 = time.monotonic()
        ok, detail, _res = wait_verdict(model, out, args.lmc, 0.0, osm,
                                        args.start_timeout)
        summary["start"] = detail
        evlog.write("start: %s %s\n" % ("ok" if ok else "FAILED", detail))
        evlog.flush()
        if not ok:
            raise runner.RunError("first sweep: %s (see %s)"
                                  % (detail, os.path.join(out, "osm.log")))
        for i in range(1, args.events + 1):
            fault, repair = plan_event(model, rng, args.events - i + 1)
            what = model.describe(fault, repair)
            since = mtime(lfts)
            time.sleep(max(0.0, 0.05 - (time.time() - since)))
            t_ev = time.time()
            replies = [ibsim.command(c) for c in
                       model.commands(fault, repair)]
            bad = [l.strip() for r in replies for l in r.splitlines()
                   if l.strip().startswith("#")]
            if repair:
                model.faults.remove(fault)
            else:
                model.faults.append(fault)
            k = what.split()[0]
            summary["kinds"][k] = summary["kinds"].get(k, 0) + 1
            if bad:
                ok, detail, res = False, "ibsim refused: %s" % bad[0], None
            else:
                nudged = [0]
                ok, detail, res = wait_verdict(model, out, args.lmc,
                                               max(t_ev, since), osm,
                                               args.settle_timeout,
                                               args.nudge, nudged)
                if nudged[0]:
                    summary["nudges"] = summary.get("nudges", 0) + 1
                    summary["sighups"] = summary.get("sighups", 0) + \
                        nudged[0]
                    detail += "; nudged with %d SIGHUP(s), %g s apart" % (
                        nudged[0], args.nudge)
            if ok:
                summary["survived"] += 1
            else:
                summary["invalid"] += 1
                summary["failures"].append({"event": i, "what": what,
                                            "detail": detail})
                for src, dst in (("opensm-lfts.dump", "lfts.dump"),
                                 ("opensm-subnet.lst", "subnet.lst")):
                    try:
                        shutil.copy(os.path.join(out, src),
                                    os.path.join(out, "fail-%03d-%s"
                                                 % (i, dst)))
                    except OSError:
                        pass
                if res is not None:
                    with open(os.path.join(out, "fail-%03d-analyze.json"
                                           % i), "w") as f:
                        json.dump(res, f, indent=1, sort_keys=True)
            line = "event %d: %s: %s (%s)" % (i, what,
                                              "ok" if ok else "FAILED",
                                              detail)
            evlog.write(line + "\n")
            evlog.flush()
            if osm.poll() is not None:
                summary["opensm_died"] = True
                break
            if args.pause:
                time.sleep(args.pause)
        # events never run (opensm died) count as not survived
        summary["not_run"] = args.events - summary["survived"] - \
            summary["invalid"]
        summary["invalid"] += summary["not_run"]
        summary["open_faults_at_end"] = len(model.faults)
        summary["opensm_alive_at_end"] = osm.poll() is None
        summary["time"] = round(time.monotonic() - t0, 1)
    finally:
        runner.stop_opensm(osm, 120 if args.wrapper else 20)
        if osm is not None:
            summary["opensm_status"] = osm.returncode
        if ibsim is not None:
            ibsim.stop()
        evlog.close()
    text = runner.read_text(os.path.join(out, "osm.log"))
    summary["heavy_sweeps"] = count_heavy_sweeps(text)
    summary["plugin_errors"] = len(re.findall(r"ERR 9F[0-9A-F]{2}", text))
    with open(os.path.join(out, "soak.json"), "w") as f:
        json.dump(summary, f, indent=1, sort_keys=True)
        f.write("\n")
    return summary
