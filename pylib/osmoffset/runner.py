"""The one ibsim/OpenSM runner of the osmoffset tools.

Every tool that routes a simulated fabric (osm-sim, osm-fault-soak,
bench-routing, valgrind-soak, gen-fabric check, the demo) starts its
simulator and its OpenSM here:

  * umad2sim: $OSMSIM_UMAD2SIM, else the installed libumad2sim.so;
  * a private ibsim per run (its own IBSIM_SOCKNAME), sized for the
    fabric (-N/-S/-P/-L), its parse errors reported in one line, its
    console on a pipe for fault injection (Unlink/ReLink);
  * opensm from PATH (never a fixed path: CI puts another OpenSM build
    first on PATH), its option file (opensm.conf) and environment:
    LD_PRELOAD=umad2sim, and the plugin directory first on
    LD_LIBRARY_PATH only when a plugin directory is given; without one,
    opensm loads the installed plugin by its plain name
    ("event_plugin_name osmoffset" -> dlopen("libosmoffset.so"));
  * --once runs (route_once) and daemon runs (start_opensm);
  * the LFTs read back from the simulated switches (dump_fts, else
    ibroute per switch);
  * everything stopped again on errors and signals.
"""

import glob
import json
import os
import random
import re
import shlex
import shutil
import signal
import subprocess
import sys
import time

from osmoffset import checks, fabric, paths

PLUGIN_LIB = "libosmoffset.so"
PLUGIN_NAME = "osmoffset"        # event_plugin_name in opensm.conf
SBIN_FALLBACK = ":/usr/sbin:/sbin"

# Debian's ibsim 0.10 announces switches whose LFTs hold 30,720 LIDs, and
# OpenSM then assigns no LID above that ("OPENSM RAN OUT OF LIDS"); -L
# gives them every unicast LID.
IBSIM_DEFAULT_LFT_CAP = 30720
IBSIM_FULL_LFT_CAP = 49152
# ibsim's compiled-in table sizes (sim.h): nodes, switches, ports
IBSIM_MAXNODES = 2048
IBSIM_MAXSWITCHES = 256
IBSIM_MAXPORTS = IBSIM_MAXSWITCHES * 36 + IBSIM_MAXNODES * 2

# Files a run writes into its output directory (removed before a run so
# that nothing stale survives a failed step, and so that OpenSM's
# guid2lid cache from an earlier run cannot steer LIDs).
OUTPUT_FILES = (
    "osm.log", "opensm-lfts.dump", "opensm-subnet.lst", "ibroute.dump",
    "opensm.conf", "opensm.out", "ibsim.out", "osm-sim.json",
    "guid2lid", "guid2mkey", "neighbors", "opensm.fdbs", "opensm.mcfdbs",
    "opensm-lid-matrix.dump", "opensm-updn-roots.dump", "opensm-sl2vl.dump",
    "opensm-mftables.dump", "opensm.opts", "opensm-sa.dump",
    "opensm-guid2lid.dump", "ibroute.err", "root-guids", "fabric.net",
)

LFT_HEADER = re.compile(r"^Unicast lids \[[^\]]*\] of switch Lid (\d+) "
                        r"guid (0x[0-9a-fA-F]+)", re.M)


class RunError(Exception):
    """A step of a run failed; str() is the one-line message, status the
    exit status it calls for (1 = a step failed, 2 = bad input)."""

    def __init__(self, message, status=1):
        Exception.__init__(self, message)
        self.status = status


class Interrupted(Exception):
    """SIGTERM/SIGHUP arrived (see catch_signals)."""


def _on_signal(signum, frame):
    raise Interrupted("signal %d" % signum)


def catch_signals(hup=True):
    """Turn SIGTERM (and SIGHUP unless hup is False: then it is ignored)
    into Interrupted, so that the finally blocks stop ibsim and opensm."""
    signal.signal(signal.SIGTERM, _on_signal)
    signal.signal(signal.SIGHUP, _on_signal if hup else signal.SIG_IGN)


# ----------------------------------------------------------------------
# Finding things
# ----------------------------------------------------------------------

def find_umad2sim():
    """$OSMSIM_UMAD2SIM, else the first installed libumad2sim.so (Debian
    multiarch, lib64, lib, local), else the Debian path (reported missing
    by require_tools)."""
    env = os.environ.get("OSMSIM_UMAD2SIM")
    if env:
        return env
    for d in ("/usr/lib/x86_64-linux-gnu", "/usr/lib64", "/usr/lib",
              "/usr/local/lib", "/usr/local/lib64"):
        p = os.path.join(d, "umad2sim", "libumad2sim.so")
        if os.path.exists(p):
            return p
    found = sorted(glob.glob("/usr/lib/*/umad2sim/libumad2sim.so"))
    return found[0] if found else \
        "/usr/lib/x86_64-linux-gnu/umad2sim/libumad2sim.so"


def which(tool):
    """Full path of tool on PATH (then /usr/sbin, /sbin), or None."""
    return shutil.which(tool, path=os.environ.get("PATH", "") +
                        SBIN_FALLBACK)


def require_tools(tools, hint=" (install ibsim-utils, opensm, "
                  "infiniband-diags)", umad2sim=True):
    """{tool: path} for every tool, or RunError(status 2) naming the first
    one missing; checks umad2sim too unless told not to."""
    found = {}
    for tool in tools:
        p = which(tool)
        if not p:
            raise RunError("%s not found in PATH%s" % (tool, hint), 2)
        found[tool] = p
    if umad2sim:
        u = find_umad2sim()
        if not os.path.exists(u):
            raise RunError("%s missing (install ibsim-utils)" % u, 2)
    return found


def resolve_plugin_dir(opt_dir=None):
    """Where libosmoffset.so comes from: (directory, origin).
    --plugin-dir, else $OSMOFFSET_PLUGIN_DIR, else the built plugin of a
    source tree (<repo>/.libs); else (None, "loader"): opensm finds the
    installed plugin by its plain name through the dynamic loader."""
    if opt_dir:
        return os.path.abspath(opt_dir), "--plugin-dir"
    env = os.environ.get("OSMOFFSET_PLUGIN_DIR")
    if env:
        return os.path.abspath(env), "OSMOFFSET_PLUGIN_DIR"
    built = paths.built_plugin_dir()
    if built:
        return built, "source tree"
    return None, "loader"


def add_plugin_dir(parser):
    """--plugin-dir of a tool that finds the plugin as osm-sim does
    (resolve_plugin_dir)."""
    parser.add_argument("--plugin-dir", metavar="DIR",
                        help="directory of libosmoffset.so (default as "
                             "osm-sim)")


def check_plugin_dir(plugin_dir, origin, hint=""):
    """RunError(2) when a plugin directory has no libosmoffset.so."""
    if plugin_dir and not os.path.isfile(os.path.join(plugin_dir,
                                                      PLUGIN_LIB)):
        raise RunError("plugin %s not found in %s (from %s)%s"
                       % (PLUGIN_LIB, plugin_dir, origin, hint), 2)


def describe_plugin(plugin_dir, origin):
    """One phrase saying which plugin opensm loads."""
    if plugin_dir:
        return "%s from %s (%s)" % (PLUGIN_LIB, plugin_dir, origin)
    return "%s by its plain name through the dynamic loader (installed " \
        "plugin)" % PLUGIN_LIB


def loader_plugin_path():
    """The libosmoffset.so the dynamic loader's cache (ldconfig -p) holds,
    or None: what opensm loads when no plugin directory is given (unless
    LD_LIBRARY_PATH or opensm's RUNPATH say otherwise)."""
    for ldconfig in ("ldconfig", "/sbin/ldconfig", "/usr/sbin/ldconfig"):
        try:
            p = subprocess.run([ldconfig, "-p"], stdin=subprocess.DEVNULL,
                               stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL,
                               universal_newlines=True, timeout=10)
        except (OSError, subprocess.TimeoutExpired):
            continue
        for line in p.stdout.splitlines():
            parts = line.strip().split(" => ")
            if len(parts) == 2 and parts[0].split()[0] == PLUGIN_LIB:
                return parts[1].strip()
        return None
    return None


def opensm_version(opensm="opensm"):
    """"OpenSM 3.3.24" or whatever opensm --version's first line says;
    "" when it cannot be run."""
    try:
        p = subprocess.run([opensm, "--version"], stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                           universal_newlines=True, timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        return ""
    m = re.search(r"OpenSM \S+", p.stdout)
    if m:
        return m.group(0)
    lines = p.stdout.strip().splitlines()
    return lines[0] if lines else ""


# ----------------------------------------------------------------------
# Small helpers
# ----------------------------------------------------------------------

def read_text(path):
    try:
        with open(path, errors="replace") as f:
            return f.read()
    except OSError:
        return ""


def split_argv(argv):
    """(own arguments, opensm arguments after '--')."""
    if "--" in argv:
        i = argv.index("--")
        return argv[:i], argv[i + 1:]
    return argv, []


def parse_sim_argv(parser, argv=None):
    """(args, opensm arguments) of a tool that runs OpenSM on ibsim:
    argv (default sys.argv[1:]) split at '--', its own part parsed with
    parser; from then on SIGTERM and SIGHUP raise Interrupted."""
    if argv is None:
        argv = sys.argv[1:]
    own, osm_args = split_argv(list(argv))
    args = parser.parse_args(own)
    catch_signals()
    return args, osm_args


def stop_process(proc, grace=3.0):
    """SIGTERM a process we started, SIGKILL it after grace seconds."""
    if proc is None or proc.poll() is not None:
        return
    try:
        proc.terminate()
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()
    except OSError:
        pass


def unix_socket_listening(name):
    """True when an abstract unix socket @name is bound."""
    want = "@" + name.rstrip("@")
    try:
        with open("/proc/net/unix") as f:
            for line in f:
                parts = line.split()
                # the bound name includes its terminating NUL, shown as '@'
                if len(parts) >= 8 and parts[7].rstrip("@") == want:
                    return True
    except OSError:
        return False
    return False


def socket_name(prefix):
    """A simulator socket name no other run uses."""
    return "%s-%d-%08x" % (prefix, os.getpid(), random.getrandbits(32))


def sim_env(sock, workdir):
    """The environment of a run's processes: our own, without LD_PRELOAD,
    with the run's simulator socket and OpenSM's cache in workdir."""
    env = dict(os.environ)
    env.pop("LD_PRELOAD", None)
    env.update(IBSIM_SOCKNAME=sock, OSM_CACHE_DIR=workdir,
               OSM_TMP_DIR=workdir)
    return env


def umad_env(env):
    """env for a process that talks to ibsim (opensm, dump_fts, ibroute)."""
    return dict(env, LD_PRELOAD=find_umad2sim())


def opensm_env(env, plugin_dir=None):
    """The environment opensm runs in: umad2sim preloaded, and the plugin
    directory first on LD_LIBRARY_PATH only when there is one (installed
    plugin: the loader's own path finds it)."""
    e = umad_env(env)
    if plugin_dir:
        old = env.get("LD_LIBRARY_PATH")
        e["LD_LIBRARY_PATH"] = plugin_dir + (":" + old if old else "")
    return e


def write_conf(path, mode, extra=(), more=()):
    """opensm.conf: the plugin by its plain name with its options unless
    mode is "stock"; more = further "key value" lines."""
    lines = ["# written by osmoffset; options not set here keep OpenSM's "
             "defaults"]
    if mode != "stock":
        lines.append("event_plugin_name " + PLUGIN_NAME)
        lines.append("event_plugin_options " + " ".join(
            ["port_offsetting=%s" % mode] + list(extra)))
    lines += list(more)
    with open(path, "w") as f:
        f.write("\n".join(lines) + "\n")


def write_roots(path, guids):
    with open(path, "w") as f:
        f.write("".join("0x%016x\n" % g for g in guids))


def opensm_command(opensm, out, log, engine, lmc, conf, once=True,
                   sweep=None, debug="0x43", roots_file=None, wrapper=(),
                   extra=()):
    """opensm's argv: --once, or a daemon with -s sweep; dumps into out."""
    cmd = list(wrapper) + [opensm]
    cmd += ["--once"] if once else ["-s", str(sweep if sweep is not None
                                              else 1)]
    cmd += ["-D", debug, "--dump_files_dir", out, "-f", log,
            "-R", engine, "-l", str(lmc), "-F", conf]
    if roots_file:
        cmd += ["-a", roots_file]
    return cmd + list(extra)


def clean_outdir(out, keep=(), names=OUTPUT_FILES):
    """Remove the files of an earlier run from out (except keep)."""
    for name in names:
        p = os.path.join(out, name)
        if p in keep:
            continue
        try:
            os.unlink(p)
        except FileNotFoundError:
            pass
        except OSError as exc:
            raise RunError("cannot remove stale %s: %s" % (p, exc.strerror),
                           2)


# ----------------------------------------------------------------------
# ibsim
# ----------------------------------------------------------------------

def ibsim_limits(nodes, switches, ports, lids=0):
    """-N/-S/-P (and -L) for ibsim: its defaults unless the fabric needs
    more; lids = how many LIDs OpenSM will hand out."""
    args = []
    if nodes * 2 > IBSIM_MAXNODES:
        args += ["-N", str(nodes * 2)]
    if switches * 2 > IBSIM_MAXSWITCHES:
        args += ["-S", str(switches * 2)]
    need_ports = max(ports * 2, IBSIM_MAXPORTS)
    if need_ports > IBSIM_MAXPORTS:
        args += ["-P", str(need_ports)]
    if lids > IBSIM_DEFAULT_LFT_CAP - 64:
        args += ["-L", str(IBSIM_FULL_LFT_CAP)]
    return args


def ibsim_needs(nodes, switches, ports):
    """The -N/-S/-P options ibsim needs at least beyond its compiled-in
    limits (gen-fabric info reports them; runs use ibsim_limits)."""
    opts = []
    if nodes > IBSIM_MAXNODES:
        opts += ["-N", str(nodes)]
    if switches > IBSIM_MAXSWITCHES:
        opts += ["-S", str(switches)]
    if ports > IBSIM_MAXPORTS:
        opts += ["-P", str(ports)]
    return opts


def ibsim_parse_error(text):
    """The most telling line of ibsim's output when it died."""
    for pat in (r"fatal: .*", r"can't open net configuration file.*",
                r"ibpanic: .*", r"ibwarn: .*parse.*"):
        m = re.search(pat, text)
        if m:
            return re.sub(r"^ib(panic|warn): \[\d+\] ", "",
                          m.group(0)).strip()
    lines = [l for l in text.splitlines() if l.strip()]
    return lines[-1].strip() if lines else "no output"


class Ibsim:
    """A private ibsim for one net file.  With console=True its console
    is on a pipe (command() sends Unlink/ReLink lines); otherwise it runs
    with -n (no console).  Output goes to <out>/ibsim.out.  Raises
    RunError (status 2 when ibsim rejects the net file)."""

    def __init__(self, net, out, env, sizes, lids=0, timeout=20.0,
                 console=False, net_label=None):
        self.outpath = os.path.join(out, "ibsim.out")
        self.sock = env["IBSIM_SOCKNAME"]
        nodes, switches, ports = sizes
        self.cmd = ["ibsim", "-s"] + ([] if console else ["-n"]) + \
            ibsim_limits(nodes, switches, ports, lids) + [net]
        self.f = open(self.outpath, "w")
        self.proc = subprocess.Popen(
            self.cmd, stdin=subprocess.PIPE if console else
            subprocess.DEVNULL, stdout=self.f, stderr=subprocess.STDOUT,
            env=env, start_new_session=True)
        try:
            self._wait_ready(net_label or net, timeout)
        except BaseException:
            self.stop()
            raise

    def _wait_ready(self, label, timeout):
        deadline = time.monotonic() + timeout
        while True:
            if self.proc.poll() is not None:
                text = read_text(self.outpath)
                why = ibsim_parse_error(text)
                status = 2 if ("parsing failed" in text or
                               "error at" in text or
                               "sim_init failed" in text) else 1
                raise RunError("ibsim start: ibsim exited (status %d) for "
                               "net file %s: %s (see %s)"
                               % (self.proc.returncode, label, why,
                                  self.outpath), status)
            if unix_socket_listening(self.sock + ":ctl"):
                return
            if time.monotonic() > deadline:
                raise RunError("ibsim start: not ready after %g s (see %s)"
                               % (timeout, self.outpath))
            time.sleep(0.02)

    def alive(self):
        return self.proc.poll() is None

    def command(self, line, timeout=10.0):
        """Send one console command; return the console's reply text."""
        before = os.path.getsize(self.outpath)
        self.proc.stdin.write((line + "\n").encode())
        self.proc.stdin.flush()
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RunError("ibsim died on console command %r" % line)
            with open(self.outpath, errors="replace") as f:
                f.seek(before)
                reply = f.read()
            if "sim> " in reply:
                return reply.replace("sim> ", "").strip()
            time.sleep(0.02)
        raise RunError("ibsim console: no reply to %r within %g s"
                       % (line, timeout))

    def stop(self):
        # terminate first: ibsim spins on a console at EOF
        stop_process(self.proc)
        if self.proc.stdin:
            try:
                self.proc.stdin.close()
            except OSError:
                pass
        self.f.close()


def start_opensm(cmd, env, out, logname="opensm.out"):
    """A daemon opensm (cmd from opensm_command(once=False)), its output
    in out/logname; stop it with stop_opensm()."""
    with open(os.path.join(out, logname), "w") as f:
        return subprocess.Popen(cmd, stdin=subprocess.DEVNULL, stdout=f,
                                stderr=subprocess.STDOUT, env=env, cwd=out,
                                start_new_session=True)


def stop_opensm(proc, grace=20.0):
    """SIGTERM (OpenSM's clean exit, which valgrind's leak check needs),
    SIGKILL after grace seconds."""
    if proc is None or proc.poll() is not None:
        return
    proc.send_signal(signal.SIGTERM)
    try:
        proc.wait(grace)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


# ----------------------------------------------------------------------
# LFTs read back from the simulated switches
# ----------------------------------------------------------------------

def lft_switches(lfts_text):
    """[(LID, "0xGUID")] of the switch headers of an opensm-lfts.dump."""
    return [(int(m.group(1)), m.group(2))
            for m in LFT_HEADER.finditer(lfts_text)]


def dump_ibroute(out, env, sw_lids):
    """Read every switch's LFT back from ibsim into out/ibroute.dump, in
    the order of sw_lids [(LID, "0xGUID")].  One dump_fts call does it
    fast; if that fails or misses a switch, `ibroute LID` per switch does.
    Returns the tool used; RunError when neither works."""
    path = os.path.join(out, "ibroute.dump")
    errpath = os.path.join(out, "ibroute.err")
    ienv = umad_env(env)
    want = [int(guid, 16) for _lid, guid in sw_lids]
    try:
        p = subprocess.run(["dump_fts"], stdin=subprocess.DEVNULL,
                           stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           env=ienv, cwd=out, timeout=600,
                           universal_newlines=True)
        blocks = {}
        for block in re.split(r"(?m)^(?=Unicast lids )", p.stdout):
            m = re.match(r"Unicast lids .* guid (0x[0-9a-fA-F]+) ", block)
            if m:
                blocks[int(m.group(1), 16)] = block
        if p.returncode == 0 and sorted(blocks) == sorted(want):
            with open(path, "w") as f:
                f.write("".join(blocks[g] for g in want))
            with open(errpath, "w") as ferr:
                ferr.write(p.stderr)
            return "dump_fts"
    except (subprocess.TimeoutExpired, OSError):
        pass
    with open(path, "w") as f, open(errpath, "w") as ferr:
        for lid, guid in sw_lids:
            try:
                p = subprocess.run(["ibroute", str(lid)],
                                   stdin=subprocess.DEVNULL,
                                   stdout=subprocess.PIPE,
                                   stderr=subprocess.PIPE, env=ienv,
                                   cwd=out, timeout=60,
                                   universal_newlines=True)
            except subprocess.TimeoutExpired:
                raise RunError("ibroute dump: ibroute %d timed out (see %s)"
                               % (lid, errpath))
            ferr.write(p.stderr)
            if p.returncode != 0 or "Unicast lids" not in p.stdout:
                err = [l for l in p.stderr.splitlines()
                       if "sim_connect" not in l]
                raise RunError("ibroute dump: ibroute %d (switch %s) "
                               "failed: %s (see %s)"
                               % (lid, guid, err[-1] if err else
                                  "status %d" % p.returncode, errpath))
            f.write(p.stdout)
    return "ibroute"


# ----------------------------------------------------------------------
# One --once run (osm-sim's flow; the demo and the benches use it too)
# ----------------------------------------------------------------------

class OnceOptions:
    """What route_once() needs; the attributes are osm-sim's options."""

    def __init__(self, net, out, **kw):
        self.net = net
        self.out = out
        self.lmc = kw.pop("lmc", 0)
        self.stock = kw.pop("stock", False)
        self.port_offsetting = kw.pop("port_offsetting", "on")
        self.plugin_option = list(kw.pop("plugin_option", ()))
        self.qos = kw.pop("qos", False)
        self.engine = kw.pop("engine", "updn")
        self.roots = kw.pop("roots", "auto")
        self.allow_fallback = kw.pop("allow_fallback", False)
        self.plugin_dir = kw.pop("plugin_dir", None)
        self.timeout = kw.pop("timeout", 120.0)
        self.ibsim_timeout = kw.pop("ibsim_timeout", 20.0)
        self.wrapper = kw.pop("wrapper", None)
        self.no_ibroute = kw.pop("no_ibroute", False)
        self.quiet = kw.pop("quiet", True)
        if kw:
            raise TypeError("unknown options: %s" % ", ".join(sorted(kw)))


def check_once_options(args):
    """RunError(2) for option values route_once() cannot use."""
    if not 0 <= args.lmc <= 7:
        raise RunError("--lmc must be 0..7, not %d" % args.lmc, 2)
    if not re.match(r"^[A-Za-z0-9_]+$", args.port_offsetting):
        raise RunError("--port-offsetting: bad value %r (on, off or a "
                       "rule name)" % args.port_offsetting, 2)
    for tok in args.plugin_option:
        if not re.match(r"^[A-Za-z0-9_.]+=[^\s,]+$", tok):
            raise RunError("--plugin-option: bad token %r (KEY=VALUE)"
                           % tok, 2)
    if args.stock and args.plugin_option:
        raise RunError("--plugin-option makes no sense with --stock", 2)


def route_once(args, osm_args=(), info=None, warn=None):
    """Route args.net once: private ibsim, opensm --once, verdicts from
    the log, dumps checked, LFTs read back.  Returns the summary dict
    (also written to <out>/osm-sim.json).  Raises RunError; status 3 =
    OpenSM fell back to another engine (unless args.allow_fallback; then
    warn(message) is called)."""
    t0 = time.monotonic()
    out = os.path.abspath(args.out)
    net = os.path.abspath(args.net)
    mode = "stock" if args.stock else args.port_offsetting
    log = os.path.join(out, "osm.log")
    info = dict(info or {})
    info.update(net=net, out=out, engine=args.engine, lmc=args.lmc,
                mode=mode, opensm_args=list(osm_args))

    check_once_options(args)
    if not os.path.isfile(net):
        raise RunError("net file %s: no such file" % args.net, 2)
    if not os.access(net, os.R_OK):
        raise RunError("net file %s: not readable" % args.net, 2)
    tools = require_tools(("ibsim", "opensm") + (
        () if args.no_ibroute else ("ibroute", "dump_fts")))
    info["opensm"] = tools["opensm"]
    plugin_dir = None
    if mode != "stock":
        plugin_dir, origin = resolve_plugin_dir(args.plugin_dir)
        check_plugin_dir(plugin_dir, origin, "; build it first: "
                         "./configure && make, or use --stock")
        info["plugin_dir"] = plugin_dir
        info["plugin"] = describe_plugin(plugin_dir, origin)
    summary = fabric.scan_netfile(net)
    if summary.switches == 0:
        raise RunError("net file %s: no Switch node found" % args.net, 2)
    info["switches"] = summary.switches
    info["nodes"] = summary.nodes

    roots_file = None
    roots = None            # GUIDs to write into DIR/root-guids
    uses_updn = "updn" in [e.strip() for e in args.engine.split(",")]
    if args.roots not in ("auto", "none"):
        roots_file = os.path.abspath(args.roots)
        if not os.path.isfile(roots_file):
            raise RunError("--roots %s: no such file" % args.roots, 2)
    elif args.roots == "auto":
        roots = summary.roots
        info["roots"] = len(roots)
        if roots and uses_updn:
            roots_file = os.path.join(out, "root-guids")
        else:
            roots = None
    if not uses_updn:
        roots_file = roots = None
    info["root_guid_file"] = roots_file

    try:
        os.makedirs(out, exist_ok=True)
    except OSError as exc:
        raise RunError("cannot create output directory %s: %s"
                       % (args.out, exc.strerror), 2)
    keep = {net}            # the converted fabric of this run
    if args.roots not in ("auto", "none"):
        keep.add(roots_file)  # the user's own root file
    clean_outdir(out, keep)
    if roots:
        write_roots(roots_file, roots)
    try:
        wrapper = shlex.split(args.wrapper or "")
    except ValueError as exc:
        raise RunError("option --wrapper: %s" % exc, 2)

    sock = socket_name("osmsim")
    env = sim_env(sock, out)
    info["ibsim_socket"] = sock
    ibsim = None
    try:
        # every port of every node may get 2^LMC LIDs
        ibsim = Ibsim(net, out, env, summary.sizes(),
                      lids=summary.nodes << args.lmc,
                      timeout=args.ibsim_timeout, net_label=args.net)
        t_sim = time.monotonic()

        conf = os.path.join(out, "opensm.conf")
        write_conf(conf, mode, args.plugin_option,
                   ["qos TRUE"] if getattr(args, "qos", False) else [])
        cmd = opensm_command(tools["opensm"], out, log, args.engine,
                             args.lmc, conf, once=True,
                             roots_file=roots_file, wrapper=wrapper,
                             extra=osm_args)
        info["opensm_cmd"] = cmd
        osm_out = os.path.join(out, "opensm.out")
        with open(osm_out, "w") as f:
            try:
                # umad2sim makes its fake sysfs (sys-PID/) in the current
                # directory: keep it out of the caller's.
                rc = subprocess.run(cmd, stdin=subprocess.DEVNULL, stdout=f,
                                    stderr=subprocess.STDOUT,
                                    env=opensm_env(env, plugin_dir),
                                    cwd=out, timeout=args.timeout).returncode
            except subprocess.TimeoutExpired:
                raise RunError("opensm run: timed out after %g s (see %s)"
                               % (args.timeout, log))
        t_osm = time.monotonic()
        if not ibsim.alive():
            raise RunError("opensm run: ibsim died during the run (see %s)"
                           % ibsim.outpath)
        logtext = read_text(log)
        if not logtext:
            raise RunError("opensm run: exit status %d and no log written "
                           "(see %s)" % (rc, osm_out))
        if rc != 0:
            raise RunError("opensm run: exit status %d (see %s and %s)"
                           % (rc, log, osm_out))

        # -- plugin and routing verdicts from the log --------------------
        if mode != "stock":
            problems = checks.plugin_log_problems(logtext, mode)
            if problems:
                raise RunError("plugin load: %s (see %s)"
                               % (problems[0], log))
        verdict = checks.osm_log_summary(logtext)
        info["engine_used"] = verdict["engine_used"]
        if verdict["no_engine"] or not verdict["engine_used"]:
            raise RunError("routing: no routing engine could route the "
                           "fabric (see %s)" % log)
        requested = [e.strip() for e in args.engine.split(",") if e.strip()]
        if verdict["engine_used"] not in requested:
            msg = ("routing: requested engine %s failed, OpenSM fell back "
                   "to %s (see %s)" % (args.engine, verdict["engine_used"],
                                       log))
            info["fallback"] = True
            if not args.allow_fallback:
                raise RunError(msg, 3)
            if warn:
                warn(msg)
        else:
            info["fallback"] = False

        # -- dumps ------------------------------------------------------
        for name in ("opensm-lfts.dump", "opensm-subnet.lst"):
            path = os.path.join(out, name)
            if not os.path.isfile(path) or os.path.getsize(path) == 0:
                raise RunError("dump missing: OpenSM wrote no %s (see %s)"
                               % (path, log))
        sw_lids = lft_switches(read_text(os.path.join(out,
                                                      "opensm-lfts.dump")))
        info["switches_routed"] = len(sw_lids)
        if len(sw_lids) != summary.switches:
            raise RunError("dump missing: opensm-lfts.dump holds %d "
                           "switches, the net file %d (see %s)"
                           % (len(sw_lids), summary.switches, log))

        # -- read the LFTs back from the simulated switches -------------
        if not args.no_ibroute:
            info["ibroute_tool"] = dump_ibroute(out, env, sw_lids)
        t_end = time.monotonic()
        info.update(time_total=round(t_end - t0, 3),
                    time_ibsim=round(t_sim - t0, 3),
                    time_opensm=round(t_osm - t_sim, 3),
                    time_ibroute=round(t_end - t_osm, 3))
    finally:
        if ibsim is not None:
            ibsim.stop()
    with open(os.path.join(out, "osm-sim.json"), "w") as f:
        json.dump(info, f, indent=1, sort_keys=True)
        f.write("\n")
    return info
