"""osm-fault-soak: seeded fault injection under a running OpenSM.

The soak itself is osmoffset.soak.run_soak(); this is its command line.
"""

import json
import sys

from osmoffset import runner, soak
from osmoffset.cli import add_version, doc_parser

PROG = "osm-fault-soak"
HELP = """Inject seeded faults into a simulated fabric while OpenSM routes it.

osm-fault-soak starts a private ibsim for the net file with its console on
a pipe, and OpenSM as a daemon (not --once) against it, with the osmoffset
plugin (port_offsetting=on unless told otherwise), sweeping every second
(-s 1) and dumping its tables on every heavy sweep (--dump_files_dir).
It then runs N seeded events through the ibsim console:

  link-down / link-up     an inter-switch cable is unplugged / plugged back
                          (Unlink "sw"[port] / ReLink "sw"[port])
  switch-down / switch-up a whole switch is lost / returned
                          (Unlink "sw" / ReLink "sw")
  host-down / host-up     a host is removed / re-added
                          (Unlink "host" / ReLink "host")

The SM's own node (the first node of the net file) and, when that is a host,
the switch it hangs off are never touched.  Faults are only drawn on parts
of the fabric no other open fault touches, so every repair undoes exactly
one fault.  The last events repair what is still broken: after event N the
fabric is whole again.

After each event the soak waits for a heavy sweep to rewrite
opensm-lfts.dump and checks it:
  * opensm is still running;
  * the switches, hosts and active links of opensm-subnet.lst are exactly
    the part of the fabric still connected to the SM (hosts cut off by a
    fault are expected to be missing; an older dump is waited out);
  * scripts/lft-analyze finds every host of that part reachable from every
    switch, no forwarding loop and no credit loop (exit 0).
An event "survives" when all of that holds within --settle-timeout seconds.
An OpenSM that misses an event (no heavy sweep follows) fails it, unless
--nudge SEC is given: then it gets a SIGHUP (a forced heavy sweep) every
SEC seconds until the check passes, and soak.json counts the nudged events.

Output directory: osm.log, opensm.out, ibsim.out (console replies), the
final opensm-lfts.dump and opensm-subnet.lst (fabric restored), events.log
(one line per event), soak.json (summary), and for each failed event
fail-NNN-lfts.dump / fail-NNN-subnet.lst / fail-NNN-analyze.json.
The last line printed is always:  events=N survived=M invalid=K

Exit status: 0 all events survived, 1 some did not (or opensm died),
2 bad usage or input, 130 interrupted.  Only processes this tool started
are ever signalled.

Example:
  osm-fault-soak --net sim-topologies/kary-4-3.net --events 10 --seed 1 \\
      --lmc 1 --out /tmp/soak
"""


def build_parser():
    p = doc_parser(
        PROG, HELP,
        usage="%(prog)s --net FILE --events N --seed S --out DIR [options] "
              "[-- opensm args]")
    p.add_argument("--net", required=True, metavar="FILE",
                   help="ibsim net file (the first node hosts the SM)")
    p.add_argument("--events", required=True, type=int, metavar="N",
                   help="number of events (faults and repairs) to inject")
    p.add_argument("--seed", type=int, default=1, metavar="S",
                   help="seed of the event sequence (default 1)")
    p.add_argument("--lmc", type=int, default=0, metavar="L",
                   help="LMC for opensm -l (default 0)")
    p.add_argument("--out", required=True, metavar="DIR",
                   help="output directory (created)")
    p.add_argument("--engine", default="updn", metavar="NAME",
                   help="opensm -R routing engine(s) (default updn)")
    p.add_argument("--port-offsetting", default="on", metavar="MODE",
                   help="port_offsetting value (default on)")
    p.add_argument("--stock", action="store_true",
                   help="run OpenSM without the plugin (for comparison)")
    runner.add_plugin_dir(p)
    p.add_argument("--wrapper", default="", metavar="CMD",
                   help="command line prefix for opensm, e.g. 'valgrind "
                        "--leak-check=full' (split on white space)")
    p.add_argument("--start-timeout", type=float, default=60.0,
                   metavar="SEC", help="limit for the first sweep "
                   "(default 60)")
    p.add_argument("--settle-timeout", type=float, default=60.0,
                   metavar="SEC", help="limit for the fabric to be routed "
                   "right after an event (default 60)")
    p.add_argument("--nudge", type=float, default=0.0, metavar="SEC",
                   help="when OpenSM has not swept SEC seconds after an "
                        "event, send it one SIGHUP (forced heavy sweep) and "
                        "count a nudge (default 0 = never: a missed event "
                        "then fails)")
    p.add_argument("--pause", type=float, default=0.0, metavar="SEC",
                   help="extra wait after each verdict (default 0)")
    p.add_argument("--json", action="store_true",
                   help="print soak.json before the last line")
    add_version(p, PROG)
    return p


def main(argv=None):
    args, osm_args = runner.parse_sim_argv(build_parser(), argv)
    s = {"events": args.events, "survived": 0, "invalid": 0, "kinds": {},
         "failures": []}
    try:
        soak.run_soak(args, osm_args, s)
    except runner.RunError as exc:
        sys.stderr.write("%s: %s\n" % (PROG, exc))
        if exc.status == 2:
            return 2
        # events not run count as not survived
        print("events=%d survived=%d invalid=%d"
              % (args.events, s["survived"], args.events - s["survived"]))
        return exc.status
    except OSError as exc:
        sys.stderr.write("%s: %s\n" % (PROG, exc))
        return 1
    except (KeyboardInterrupt, runner.Interrupted):
        sys.stderr.write("%s: interrupted; ibsim and opensm stopped\n"
                         % PROG)
        return 130
    if args.json:
        json.dump(s, sys.stdout, indent=1, sort_keys=True)
        sys.stdout.write("\n")
    for f in s["failures"]:
        sys.stderr.write("%s: event %d (%s) failed: %s\n"
                         % (PROG, f["event"], f["what"], f["detail"]))
    print("events=%d survived=%d invalid=%d"
          % (s["events"], s["survived"], s["invalid"]))
    return 0 if (s["invalid"] == 0 and s["survived"] == s["events"]) else 1
