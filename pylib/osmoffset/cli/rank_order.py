# osmoffset.cli.rank_order - the rank-order tool
#
# Copyright (c) 2026 The osmoffset authors.
#
# This software is available to you under the terms of the GNU General
# Public License (GPL) Version 2 or the OpenIB.org BSD license; see COPYING.
"""Write the rank order of a fabric's hosts as a hostfile or Slurm list.

Port offsetting makes a shift alltoall free of link contention when the
MPI ranks follow the routing order; a scheduler's order may not (see
docs/simulated-alltoall.md: a random order costs 2-3x on a full fat tree).

Orders (--order):
  leaf    routing order (default): hosts grouped by the switch they hang
          off, those switches in the order of their names (then of the
          first host name behind them), hosts of one switch by port
          number: the order in which
          osmoffset's coordinated rule spreads destinations
  random  shuffled with --seed
  leaf-shuffled
          each leaf's hosts together as in leaf, the leaves shuffled with
          --seed (a scheduler that keeps a leaf's hosts together but takes
          the leaves in an order of its own: the dump's, by switch GUID)
  guid    by port GUID (what sorting by GUID or LID gives)
  file    each leaf's hosts together as in leaf, the leaves in the order
          the topology file first lists their switches (an analyzer or
          scheduler that walks an ibnetdiscover dump or subnet.lst)

The hosts are the compute nodes: SHARP aggregation nodes and the CAs
cabled to spines or cores (management HCAs: on switches the plugin's tree
ranking takes for no leaf, which it gives no leaf slot) run no job and
are left out, as lft-analyze and the plugin's stock guard leave them out
of their rank orders.  --spine-cas ranks the CAs on spines or cores too,
in their place in the leaf order (by name: "mgmt01" before "node001"; the
default until 2026-11-28); --all-cas lists every CA port.  --json lists
what was left out (left_out).

The topology is an opensm-subnet.lst (opensm -D 0x43 or
--dump_files_dir), ibnetdiscover output or an ibsim net file.  Names
(--names): host = first word of the node description (default: "node01"
for "node01 HCA-1"), desc = the whole description, guid = port GUID.  A
node with several ports is listed once, at its first port.

Formats (--format):
  hostfile  one name a line: mpirun --hostfile FILE --map-by ppr:1:node
            (Open MPI), or SLURM_HOSTFILE=FILE srun
            --distribution=arbitrary (Slurm then lays the tasks out in
            the file's order; a plain node list -w is sorted by Slurm)
  slurm     the same names on one comma-separated line (SLURM_HOSTFILE
            takes that form too)

Exit status: 0 success, 2 bad usage or input.

Examples:
  rank-order --topology /var/log/opensm-subnet.lst > hosts
  rank-order --topology fabric.net --order random --seed 3 --format slurm
"""

import argparse
import json
import sys

from osmoffset import rankorder
from osmoffset.cli import add_version
from osmoffset.fabric import InputError, load_topology

PROG = "rank-order"


def build_parser():
    p = argparse.ArgumentParser(
        prog=PROG, description=__doc__.split("\n", 1)[0],
        epilog=__doc__.split("\n", 1)[1].strip(),
        formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--topology", required=True, metavar="FILE",
                   help="opensm-subnet.lst, ibnetdiscover output or ibsim "
                        "net file")
    p.add_argument("--order", default="leaf", choices=rankorder.ORDERS,
                   help="leaf (routing order, default), random, "
                        "leaf-shuffled, guid or file (the leaves in the "
                        "order the topology file lists them)")
    p.add_argument("--seed", type=int, default=1, metavar="S",
                   help="seed of --order random and leaf-shuffled "
                        "(default 1)")
    p.add_argument("--names", default="host",
                   choices=("host", "desc", "guid"),
                   help="host (first word of the node description, "
                        "default), desc or guid")
    p.add_argument("--format", default="hostfile",
                   choices=("hostfile", "slurm"),
                   help="hostfile (one name a line, default) or slurm "
                        "(one comma-separated line)")
    which = p.add_mutually_exclusive_group()
    which.add_argument("--leaves-only", action="store_true",
                       help="the compute nodes only (the default; kept "
                            "for scripts)")
    which.add_argument("--spine-cas", action="store_true",
                       help="rank the CAs on spines or cores (management "
                            "HCAs) too, in their place in the leaf order")
    which.add_argument("--all-cas", action="store_true",
                       help="list every CA port cabled to a switch, SHARP "
                            "aggregation nodes too")
    p.add_argument("-o", "--output", metavar="FILE",
                   help="write to FILE instead of stdout")
    p.add_argument("--json", action="store_true",
                   help="print JSON: the order with leaf switch, port, GUID "
                        "and LID of every host")
    add_version(p, PROG)
    return p


def main(argv=None):
    """Run rank-order with argv (default sys.argv[1:]); returns the exit
    status."""
    args = build_parser().parse_args(argv)
    try:
        topo = load_topology(args.topology)
        hosts = rankorder.hosts_of(topo)
    except InputError as exc:
        sys.stderr.write("%s: %s\n" % (PROG, exc))
        return 2
    left_out = []
    if not args.all_cas:
        hosts, left_out = rankorder.job_hosts(topo, hosts, args.spine_cas)
    order = rankorder.order_hosts(hosts, args.order, args.seed)
    if args.json:
        doc = {"topology": args.topology, "order": args.order,
               "seed": args.seed if args.order in ("random",
                                                   "leaf-shuffled") else None,
               "names": args.names,
               "hosts": [{"rank": i, "name": rankorder.host_name(h,
                                                                 args.names),
                          "desc": h.desc, "guid": "0x%016x" % h.guid,
                          "lid": h.lid,
                          "leaf": topo.nodes[h.leaf].desc,
                          "leaf_port": h.leaf_port}
                         for i, h in enumerate(order)],
               "left_out": [{"desc": h.desc, "guid": "0x%016x" % h.guid,
                             "leaf": topo.nodes[h.leaf].desc}
                            for h in left_out]}
        text = json.dumps(doc, indent=1) + "\n"
    else:
        text = rankorder.format_order(order, args.format, args.names)
    if args.output:
        try:
            with open(args.output, "w") as f:
                f.write(text)
        except OSError as exc:
            sys.stderr.write("%s: --output %s: %s\n"
                             % (PROG, args.output, exc.strerror))
            return 2
    else:
        sys.stdout.write(text)
    return 0

