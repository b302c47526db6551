"""osm-sim: route one simulated fabric once with OpenSM (+ osmoffset).

The flow lives in osmoffset.runner (route_once); this module is the
command line.
"""

import json
import os
import sys

from osmoffset import fabric, ibnetdiscover, runner
from osmoffset.cli import add_version, doc_parser, os_error_text

PROG = "osm-sim"
HELP = """Route a simulated fabric once with OpenSM, with or without osmoffset.

osm-sim starts a private ibsim simulator for the net file, runs
`opensm --once` against it through umad2sim, and leaves the SM's dumps plus
an ibroute dump of every switch (read back from the simulated switches)
in the output directory.  Several osm-sim runs can go at the same time:
each one uses its own simulator socket name.

A real fabric: --ibnetdiscover FILE takes an ibnetdiscover dump instead of
a net file (see what port offsetting would do on your own fabric before
deploying it).  osm-sim converts it with osmoffset.ibnetdiscover into
DIR/fabric.net and routes that: NDR/XDR links are written at HDR (ibsim
0.10 and OpenSM 3.3.23 know no NDR), the dump's LIDs are dropped (OpenSM
assigns its own), CAs without a name of their own are named by their node
id ("H-<GUID>"), --map FILE names nodes (lines "NODEID-or-GUID NAME"),
--no-sharp drops the SHARP aggregation nodes ("Mellanox Technologies
Aggregation Node" CAs), and the CA the dump was taken from hosts the SM.

Output directory contents after a successful run:
  osm.log              OpenSM log (-D 0x43)
  opensm-lfts.dump     the LFTs OpenSM computed
  opensm-subnet.lst    the subnet as OpenSM discovered it
  ibroute.dump         ibroute-format LFT of every switch, read back from
                       ibsim (dump_fts; `ibroute LID` per switch if that
                       fails), in the switch order of opensm-lfts.dump
  opensm.conf          the option file given to opensm (-F)
  root-guids           updn roots given to opensm -a (see --roots)
  opensm.out           opensm's stdout/stderr
  ibsim.out            ibsim's output
  osm-sim.json         summary of the run (also printed with --json)
  fabric.net           the converted fabric (--ibnetdiscover only)
  osmoffset-path-sl.dump  with --plugin-option reach_vls=N (N > 1): the
                       routes the reach pass put on virtual lanes above VL0
                       and their SL (lft-analyze --path-sl FILE)
plus the other files OpenSM writes (guid2lid cache, opensm.fdbs, ...).

Port offsetting modes:
  (default)               plugin loaded, port_offsetting=on
  --port-offsetting off   plugin loaded, port_offsetting=off (routes as stock)
  --port-offsetting RULE  plugin loaded, port_offsetting=RULE (a rule name the
                          plugin knows, e.g. plain = the 2008 rule)
  --stock                 no plugin at all (unmodified OpenSM)
  --plugin-option K=V     add a token to event_plugin_options (repeatable)

Virtual lanes: --plugin-option reach_vls=4 --qos lets the reach pass put
the routes it cannot fit loop-free on VL0 on VL1-3, as the path SL that
the SA then answers with (see the README, "What can stay out of reach").

Checks made after opensm exits (each failure names its step):
  opensm run    exit status 0 and a log written, within --timeout
  plugin load   unless --stock: no "Failed to open event plugin", "Error
                loading plugin", "OpenSM version mismatch" or osmoffset
                ERR 9Fxx line, and the plugin's "osmoffset ... loaded:
                port_offsetting=X" line with X matching the mode
  routing       "<engine> tables configured on all switches" logged for a
                requested engine; "no routing engine could route" if none;
                a fallback to another engine (e.g. minhop when updn finds
                no root) exits 3 unless --allow-fallback
  dump missing  opensm-lfts.dump and opensm-subnet.lst present, one LFT
                per switch of the net file
  ibroute dump  every switch's LFT could be read back from ibsim
ibsim is always stopped at the end, also on errors and signals.

umad2sim is $OSMSIM_UMAD2SIM, else the first libumad2sim.so found under
/usr/lib*/.../umad2sim/.  opensm, ibsim, dump_fts and ibroute are the
first ones on PATH (then /usr/sbin, /sbin).

The plugin is looked up in --plugin-dir, else $OSMOFFSET_PLUGIN_DIR, else
<repo>/.libs when run from a source tree with a built plugin; that
directory is put first on LD_LIBRARY_PATH so that opensm's
dlopen("libosmoffset.so") finds it.  With none of these (an installed
osmoffset), LD_LIBRARY_PATH is left alone and opensm loads the installed
plugin by its plain name (event_plugin_name osmoffset in opensm.conf)
through the dynamic loader.  osm-sim.json records which: "plugin" and
"plugin_dir" (null = the loader), and the opensm used ("opensm").

Exit status:
  0  success
  1  a step failed (ibsim start, opensm run, routing, plugin load, dumps)
  2  bad usage or input (arguments, net file missing or unparsable,
     plugin library missing)
  3  OpenSM fell back to another routing engine than the one requested
     (only without --allow-fallback)
  130 interrupted

Example:
  osm-sim --net sim-topologies/ft2-8x4.net --out /tmp/ft --lmc 2
  osm-sim --net my.net --out /tmp/x --stock --engine minhop -- --sm_priority 5
  osm-sim --ibnetdiscover fabric.txt --no-sharp --out /tmp/mine --lmc 2
"""


def build_parser():
    p = doc_parser(
        PROG, HELP,
        usage="%(prog)s --net FILE | --ibnetdiscover FILE --out DIR "
              "[options] [-- opensm args]")
    src = p.add_mutually_exclusive_group(required=True)
    src.add_argument("--net", metavar="FILE",
                     help="ibsim net file of the fabric (the first node "
                          "hosts the SM)")
    src.add_argument("--ibnetdiscover", metavar="FILE",
                     help="ibnetdiscover output of a real fabric, converted "
                          "into DIR/fabric.net and routed")
    p.add_argument("--map", metavar="FILE",
                   help="with --ibnetdiscover: node names, one 'NODEID-or-"
                        "GUID NAME' per line")
    p.add_argument("--no-sharp", action="store_true",
                   help="with --ibnetdiscover: drop the SHARP aggregation "
                        "nodes")
    p.add_argument("--out", required=True, metavar="DIR",
                   help="output directory (created; files of an earlier run "
                        "are replaced)")
    p.add_argument("--lmc", type=int, default=0, metavar="N",
                   help="LMC given to opensm -l (0-7, default 0)")
    mode = p.add_mutually_exclusive_group()
    mode.add_argument("--stock", action="store_true",
                      help="run OpenSM without the osmoffset plugin")
    mode.add_argument("--port-offsetting", default="on", metavar="MODE",
                      help="value of the plugin's port_offsetting option: "
                           "on, off or a rule name (default on)")
    p.add_argument("--plugin-option", action="append", default=[],
                   metavar="KEY=VALUE",
                   help="extra event_plugin_options token (repeatable)")
    p.add_argument("--qos", action="store_true",
                   help="OpenSM's QoS on (qos TRUE in opensm.conf): the "
                        "SL2VL tables get set up, which the plugin's "
                        "reach_vls needs")
    p.add_argument("--engine", default="updn", metavar="NAME",
                   help="routing engine(s) for opensm -R (default updn)")
    p.add_argument("--roots", default="auto", metavar="auto|none|FILE",
                   help="updn root switches: 'auto' (default) = the net "
                        "file's '# updn-root 0xGUID' comment lines if it has "
                        "any, else OpenSM's own root detection; 'none' = "
                        "always OpenSM's detection; FILE = an opensm "
                        "root_guid_file.  Given to opensm -a only when the "
                        "engine list contains updn")
    p.add_argument("--allow-fallback", action="store_true",
                   help="accept OpenSM falling back to another routing "
                        "engine (otherwise exit 3)")
    p.add_argument("--plugin-dir", metavar="DIR",
                   help="directory holding libosmoffset.so (default "
                        "$OSMOFFSET_PLUGIN_DIR, else <repo>/.libs in a "
                        "source tree, else the installed plugin through "
                        "the dynamic loader)")
    p.add_argument("--timeout", type=float, default=120.0, metavar="SEC",
                   help="limit for the opensm run (default 120)")
    p.add_argument("--ibsim-timeout", type=float, default=20.0, metavar="SEC",
                   help="limit for ibsim to become ready (default 20)")
    p.add_argument("--wrapper", metavar="CMD",
                   help="command line put in front of opensm, split like a "
                        "shell would (e.g. '/usr/bin/time -v -o FILE' or "
                        "'valgrind --tool=callgrind'); it must run opensm "
                        "with the environment it is given")
    p.add_argument("--no-ibroute", action="store_true",
                   help="skip reading the switches back into ibroute.dump")
    p.add_argument("--json", action="store_true",
                   help="print the run summary as JSON instead of one line")
    p.add_argument("-q", "--quiet", action="store_true",
                   help="print nothing on success")
    add_version(p, PROG)
    return p


def prepare(args):
    """--ibnetdiscover: convert the dump into DIR/fabric.net and route
    that.  Returns the info fields the conversion adds."""
    if (args.map or args.no_sharp) and not args.ibnetdiscover:
        raise runner.RunError("--map and --no-sharp go with "
                              "--ibnetdiscover", 2)
    if not args.ibnetdiscover:
        return {}
    out = os.path.abspath(args.out)
    try:
        os.makedirs(out, exist_ok=True)
    except OSError as exc:
        raise runner.RunError("cannot create output directory %s: %s"
                              % (args.out, exc.strerror), 2)
    args.net = os.path.join(out, "fabric.net")
    try:
        _text, conv = ibnetdiscover.convert_file(
            args.ibnetdiscover, args.net, args.map, args.no_sharp)
    except fabric.InputError as exc:
        raise runner.RunError("--ibnetdiscover: %s" % exc, 2)
    return {"ibnetdiscover": os.path.abspath(args.ibnetdiscover),
            "conversion": conv}


def main(argv=None):
    args, osm_args = runner.parse_sim_argv(build_parser(), argv)

    def warn(msg):
        if not args.quiet:
            sys.stderr.write("%s: warning: %s\n" % (PROG, msg))
    try:
        info = runner.route_once(args, osm_args, prepare(args), warn)
    except runner.RunError as exc:
        sys.stderr.write("%s: %s\n" % (PROG, exc))
        return exc.status
    except OSError as exc:
        sys.stderr.write("%s: %s\n" % (PROG, os_error_text(exc)))
        return 1
    except (KeyboardInterrupt, runner.Interrupted):
        sys.stderr.write("%s: interrupted; ibsim stopped\n" % PROG)
        return 130
    if args.json:
        json.dump(info, sys.stdout, indent=1, sort_keys=True)
        sys.stdout.write("\n")
    elif not args.quiet:
        mode = info["mode"]
        print("%s: ok: fabric %s (%d switches, %d nodes), engine %s, lmc %d, "
              "%s, %.2f s -> %s"
              % (PROG, os.path.basename(info["net"]), info["switches"],
                 info["nodes"], info["engine_used"], info["lmc"],
                 "stock" if mode == "stock" else "port_offsetting=" + mode,
                 info["time_total"], info["out"]))
    return 0
