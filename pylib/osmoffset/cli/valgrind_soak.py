"""valgrind-soak: OpenSM with osmoffset under valgrind memcheck.

The soak is osmoffset.soak.run_soak() with opensm wrapped in valgrind;
the memcheck logs are read by osmoffset.memcheck.
"""

import glob
import json
import os
import shutil
import sys

from osmoffset import memcheck, paths, runner, soak
from osmoffset.cli import add_version, doc_parser

PROG = "valgrind-soak"
HELP = """Run OpenSM with the osmoffset plugin under valgrind memcheck for many
heavy sweeps, and summarise the errors and leaks that involve the plugin.

The sweeps are driven by osm-fault-soak's soak (osmoffset.soak, run in
this process, opensm under valgrind): every event it injects
through ibsim's console (a link, a switch or a host unplugged or plugged
back) makes OpenSM run at least one heavy sweep, so the plugin's LFT
builder runs over and over on changing fabrics, including its failure
paths for ports without LIDs and missing switches.  OpenSM is stopped with
SIGTERM at the end, so memcheck's leak check sees the plugin's teardown.
Under valgrind OpenSM answers traps slowly and its trap aging sometimes
drops a link-change trap; the soak then SIGHUPs it after --nudge seconds
(a forced heavy sweep; counted as a nudge, see docs/reliability.md).

valgrind options: --tool=memcheck --leak-check=full --track-origins=yes
--num-callers=40 --error-limit=no, tests/valgrind.supp as suppressions
(OpenSM's and libc's own, each explained there).

Report (printed, and DIR/valgrind-soak.json):
  heavy sweeps completed under valgrind, events survived
  error records: total, and those whose stack has a plugin frame
    (libosmoffset.so, oo_*, wrap_*, build_*, route_one_lid, ...)
  leaks: definitely/indirectly/possibly lost bytes, in all and in records
    with a plugin frame
The last line is:
  sweeps=N plugin_errors=E plugin_leaked_bytes=B
Exit status: 0 when the plugin has no error and no definite/indirect leak
and at least --min-sweeps heavy sweeps ran, 1 otherwise, 2 bad usage.

Example (about 5 minutes on 2 cores):
  valgrind-soak --out /tmp/vg
"""


def valgrind_supp():
    """tests/valgrind.supp of the source tree, or the installed copy."""
    root = paths.source_root()
    if root:
        return os.path.join(root, "tests", "valgrind.supp")
    d = paths.installed_dir("pkgdatadir")
    if d and os.path.isfile(os.path.join(d, "valgrind.supp")):
        return os.path.join(d, "valgrind.supp")
    return None


def parse_args(argv):
    p = doc_parser(PROG, HELP)
    p.add_argument("--out", required=True, metavar="DIR")
    p.add_argument("--net", default=None, metavar="FILE",
                   help="fabric (default ft2-8x4.net of the curated "
                        "fabrics)")
    p.add_argument("--events", type=int, default=60, metavar="N",
                   help="fault/repair events (default 60)")
    p.add_argument("--seed", type=int, default=1, metavar="S")
    p.add_argument("--lmc", type=int, default=2, metavar="L",
                   help="LMC (default 2)")
    p.add_argument("--min-sweeps", type=int, default=50, metavar="N",
                   help="fail when fewer heavy sweeps ran (default 50)")
    p.add_argument("--nudge", type=float, default=20.0, metavar="SEC",
                   help="SIGHUP opensm when it has not swept SEC seconds "
                        "after an event (default 20; see osm-fault-soak; "
                        "0 = never)")
    p.add_argument("--json", action="store_true")
    add_version(p, PROG)
    return p.parse_args(argv)


def main(argv=None):
    a = parse_args(argv)
    if not shutil.which("valgrind"):
        sys.stderr.write("%s: valgrind not found (apt-get install "
                         "valgrind)\n" % PROG)
        return 2
    net = a.net
    if net is None:
        d = paths.fabrics_dir()
        if not d:
            sys.stderr.write("%s: no curated fabrics found; give --net\n"
                             % PROG)
            return 2
        net = os.path.join(d, "ft2-8x4.net")
    supp = valgrind_supp()
    if supp is None:
        sys.stderr.write("%s: valgrind.supp not found (tests/ of a source "
                         "tree)\n" % PROG)
        return 2
    out = os.path.abspath(a.out)
    os.makedirs(out, exist_ok=True)
    for old in glob.glob(os.path.join(out, "valgrind.*.log")):
        os.unlink(old)
    wrapper = ("valgrind --tool=memcheck --leak-check=full "
               "--show-leak-kinds=definite,indirect,possible "
               "--track-origins=yes --num-callers=40 --error-limit=no "
               "--suppressions=%s --log-file=%s/valgrind.%%p.log"
               % (supp, out))
    opts = soak.options(net=net, events=a.events, seed=a.seed, lmc=a.lmc,
                        out=out, wrapper=wrapper, start_timeout=300.0,
                        settle_timeout=120.0, nudge=a.nudge)
    cmd = ["osm-fault-soak"] + soak.option_argv(opts)
    sv = {"events": a.events, "survived": 0, "invalid": 0, "kinds": {},
          "failures": []}
    runner.catch_signals()
    try:
        soak.run_soak(opts, [], sv)
    except runner.RunError as exc:
        sys.stderr.write("%s: soak: %s\n" % (PROG, exc))
        if exc.status == 2:
            return 2
        sv["invalid"] = a.events - sv["survived"]
    except (KeyboardInterrupt, runner.Interrupted):
        sys.stderr.write("%s: interrupted; ibsim and opensm stopped\n"
                         % PROG)
        return 130
    for f in sv["failures"]:
        sys.stderr.write("%s: event %d (%s) failed: %s\n"
                         % (PROG, f["event"], f["what"], f["detail"]))
    last = "events=%d survived=%d invalid=%d" % (
        sv["events"], sv["survived"], sv["invalid"])
    try:
        with open(os.path.join(out, "soak.json")) as f:
            sj = json.load(f)
    except (OSError, ValueError):
        sys.stderr.write("%s: the soak wrote no soak.json (%s)\n"
                         % (PROG, last))
        return 1
    logs = sorted(glob.glob(os.path.join(out, "valgrind.*.log")))
    s = memcheck.summarise(logs)
    s.update(soak_last_line=last, heavy_sweeps=sj["heavy_sweeps"],
             nudges=sj.get("nudges", 0),
             events=sj["events"], survived=sj["survived"],
             opensm_status=sj.get("opensm_status"),
             valgrind_logs=[os.path.basename(l) for l in logs],
             command=" ".join(cmd))
    with open(os.path.join(out, "valgrind-soak.json"), "w") as f:
        json.dump(s, f, indent=1, sort_keys=True)
        f.write("\n")
    plugin_leak = s["plugin_definitely_lost"] + s["plugin_indirectly_lost"]
    if a.json:
        json.dump(s, sys.stdout, indent=1, sort_keys=True)
        sys.stdout.write("\n")
    else:
        print("soak: %s" % last)
        print("heavy sweeps under valgrind: %d; events OpenSM missed until "
              "nudged with SIGHUP: %d" % (s["heavy_sweeps"], s["nudges"]))
        print("memcheck: %s; error records %d (%s), with a plugin frame %d"
              % (s["error_summary"], s["error_records"],
                 ", ".join("%s: %d" % kv for kv in sorted(s["kinds"].items()))
                 or "none", s["plugin_error_records"]))
        print("leaks: definitely %d, indirectly %d, possibly %d bytes; "
              "with a plugin frame: definitely %d, indirectly %d, "
              "possibly %d" % (s["definitely_lost"], s["indirectly_lost"],
                               s["possibly_lost"],
                               s["plugin_definitely_lost"],
                               s["plugin_indirectly_lost"],
                               s["plugin_possibly_lost"]))
        for rec in s["plugin_errors"] + s["plugin_leaks"]:
            print("---\n" + rec)
    print("sweeps=%d plugin_errors=%d plugin_leaked_bytes=%d"
          % (s["heavy_sweeps"], s["plugin_error_records"], plugin_leak))
    ok = (s["plugin_error_records"] == 0 and plugin_leak == 0 and
          s["heavy_sweeps"] >= a.min_sweeps)
    return 0 if ok else 1
