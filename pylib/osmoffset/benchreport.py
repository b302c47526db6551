"""What the routing benchmarks share around their cells: the command-line
checks, Markdown tables, figures, JSON results and the description of the
machine and the software a report was made with."""

import argparse
import json
import os
import platform
import re
import shlex
import subprocess
import sys
import tempfile

from osmoffset import paths
from osmoffset.benchcells import PLUGIN_LIB, read_text
from osmoffset.cli import add_version


class UsageError(Exception):
    """Bad usage or input of a benchmark: one line, exit status 2."""


def name_list(text):
    """Names separated by commas or blanks."""
    return [t for t in re.split(r"[,\s]+", text.strip()) if t]


def lmc_list(text):
    """The sorted LMC values of --lmc LIST (each 0..3)."""
    try:
        lmcs = sorted(set(int(x) for x in name_list(text)))
    except ValueError:
        raise UsageError("--lmc: not a comma-separated list of numbers: %r"
                         % text)
    if not lmcs or any(not 0 <= l <= 3 for l in lmcs):
        raise UsageError("--lmc: values must be 0..3")
    return lmcs


def add_cell_options(parser, prog, made):
    """--out and --jobs of a benchmark of cells: OUT (default ./PROG.out)
    holds what the benchmark made (e.g. "converted fabrics"), its runs
    and results.json."""
    parser.add_argument("--out", default="%s.out" % prog, metavar="DIR",
                        help="directory for %s, runs and results.json "
                             "(default ./%s.out)" % (made, prog))
    parser.add_argument("--jobs", type=int, default=2, metavar="N",
                        help="cells routed and analysed in parallel "
                             "(default 2)")


def add_report_options(parser, prog, doc_help):
    """--force, --doc (doc_help says what it writes), --json, -q and
    --version of a benchmark of cells, the last options of its --help."""
    parser.add_argument("--force", action="store_true",
                        help="redo cells that are cached in --out")
    parser.add_argument("--doc", metavar="FILE", help=doc_help)
    parser.add_argument("--json", action="store_true",
                        help="print the results as JSON instead of the "
                             "tables")
    parser.add_argument("-q", "--quiet", action="store_true",
                        help="no progress lines on stderr")
    add_version(parser, prog)


def at_least_one(text):
    """argparse type: a whole number of at least 1."""
    try:
        n = int(text)
    except ValueError:
        n = 0
    if n < 1:
        raise argparse.ArgumentTypeError("'%s': want a number of at least "
                                         "1" % text)
    return n


def add_run_options(parser, prog):
    """--jobs, --out, --json and --version of a benchmark that keeps its
    fabrics and runs only on request (parse_and_measure())."""
    parser.add_argument("--jobs", type=at_least_one, default=2,
                        metavar="N", help="cells in parallel (default 2)")
    parser.add_argument("--out", metavar="DIR",
                        help="keep fabrics and runs here (default: a "
                        "temporary directory, removed)")
    parser.add_argument("--json", action="store_true",
                        help="print the results as JSON")
    add_version(parser, prog)


def require_plugins(parser, dirs):
    """parser.error() for the first of dirs without the plugin library."""
    for d in dirs:
        if not os.path.isfile(os.path.join(d, PLUGIN_LIB)):
            parser.error("no %s in %s (build first: make)" % (PLUGIN_LIB, d))


def interruptible(prog, run, argv):
    """A benchmark's main(): run(argv) (sys.argv[1:] for None), exit
    status 130 with one line on stderr on Ctrl-C."""
    argv = sys.argv[1:] if argv is None else list(argv)
    try:
        return run(argv)
    except KeyboardInterrupt:
        print("%s: interrupted" % prog, file=sys.stderr)
        return 130


def parse_and_measure(prog, parse_args, argv, subdirs, measure):
    """A benchmark's command line parsed (parse_args(argv)), then
    measure(args, dir) run in --out DIR (made, with subdirs) or in a
    temporary directory removed afterwards.  Returns (args, its result,
    None), or (args or None, None, exit status): 0 for --help or
    --version, 2 for bad usage, or where a UsageError or OSError stopped
    the measurement (setup_failed())."""
    try:
        args = parse_args(argv)
    except SystemExit as exc:
        return None, None, 0 if exc.code == 0 else 2
    tmp = None
    try:
        if args.out:
            path = os.path.abspath(args.out)
        else:
            tmp = tempfile.TemporaryDirectory(prefix=prog + "-")
            path = tmp.name
        for sub in subdirs:
            os.makedirs(os.path.join(path, sub), exist_ok=True)
        return args, measure(args, path), None
    except (UsageError, OSError) as exc:
        return args, None, setup_failed(prog, exc)
    finally:
        if tmp is not None:
            tmp.cleanup()


def setup_failed(prog, exc):
    """Say why a benchmark could not set up its cells, a UsageError or an
    OSError ("prog: file: reason"), on stderr; returns exit status 2."""
    if isinstance(exc, OSError):
        msg = "%s: %s" % (exc.filename or "", exc.strerror)
    else:
        msg = str(exc)
    sys.stderr.write("%s: %s\n" % (prog, msg))
    return 2


def check_jobs(jobs):
    if jobs < 1:
        raise UsageError("--jobs must be >= 1")


def logger(prog, quiet):
    """log(msg): "prog: msg" on stderr, or nothing when quiet."""
    if quiet:
        return lambda msg: None

    def log(msg):
        sys.stderr.write("%s: %s\n" % (prog, msg))
        sys.stderr.flush()
    return log


def fmt(v):
    """A figure of a table: three decimals, "-" for none."""
    return "-" if v is None else "%.3f" % v


def md_table(head, rows):
    """Lines of a Markdown table."""
    out = ["| " + " | ".join(head) + " |",
           "|" + "|".join("---" for _ in head) + "|"]
    for r in rows:
        out.append("| " + " | ".join(r) + " |")
    return out


def command_line(prog, argv):
    """How a report says it was made: scripts/PROG ARGS."""
    return "scripts/%s " % prog + " ".join(shlex.quote(a) for a in argv)


def write_json(path, doc):
    with open(path, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
        f.write("\n")


def print_json(doc):
    json.dump(doc, sys.stdout, indent=1, sort_keys=True)
    sys.stdout.write("\n")


def net_command(path, header_only=False):
    """The "# command: ..." line a generated net file starts with (the
    command that wrote it), or None.  header_only: stop at the first line
    that is no comment."""
    with open(path, errors="replace") as fh:
        for line in fh:
            m = re.match(r"#\s*command:\s*(.*)", line)
            if m:
                return m.group(1).strip()
            if header_only and not line.startswith("#"):
                break
    return None


# ----------------------------------------------------------------------
# where a report was made

def machine_text():
    """Cores, CPU, memory, OS and kernel of this machine, one line."""
    cpu = None
    m = re.search(r"^model name\s*:\s*(.*)$",
                  read_text("/proc/cpuinfo") or "", re.M)
    if m:
        cpu = m.group(1).strip()
    mem = None
    m = re.search(r"^MemTotal:\s*(\d+) kB", read_text("/proc/meminfo") or "",
                  re.M)
    if m:
        mem = "%.1f GB RAM" % (int(m.group(1)) / 1048576.0)
    osrel = None
    m = re.search(r'^PRETTY_NAME="?([^"\n]*)', read_text("/etc/os-release")
                  or "", re.M)
    if m:
        osrel = m.group(1)
    return ", ".join(x for x in (
        "%d cores" % (os.cpu_count() or 1), cpu, mem, osrel,
        "Linux " + platform.release()) if x)


def tool_versions(packages=("opensm", "ibsim-utils")):
    """{package: Debian version or None} of the simulation's software."""
    out = {}
    for pkg in packages:
        try:
            p = subprocess.run(["dpkg-query", "-W", "-f", "${Version}", pkg],
                               stdout=subprocess.PIPE,
                               stderr=subprocess.DEVNULL,
                               universal_newlines=True)
            out[pkg] = p.stdout.strip() or None
        except OSError:
            out[pkg] = None
    return out


def git_describe(root=None):
    """The commit of the source tree (git describe --always), with
    '-dirty' where a tracked file outside docs/ differs from it (the
    reports the benches write into docs/ change nothing they measure), or
    None (an installation, or no git).  root: the tree (default: the one
    this package is imported from)."""
    root = root or paths.source_root()
    if root is None:
        return None
    try:
        p = subprocess.run(["git", "-C", root, "describe", "--always"],
                           stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                           universal_newlines=True)
        if p.returncode != 0:
            return None
        d = subprocess.run(["git", "-C", root, "diff", "--quiet", "HEAD",
                            "--", ".", ":(exclude)docs"],
                           stdout=subprocess.DEVNULL,
                           stderr=subprocess.DEVNULL)
    except OSError:
        return None
    return p.stdout.strip() + ("-dirty" if d.returncode == 1 else "")


def host_name():
    return platform.node() or "host"
