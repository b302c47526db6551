#!/bin/sh
# Regenerate the curated fabrics (default) or, with --big DIR, write the
# large benchmark fabrics (not committed) into DIR.
# The commands here are the ones recorded in each file's "# command:" line;
# tests/python/test_gen_fabric.py checks that the committed files match.
set -e
here=$(cd "$(dirname "$0")" && pwd)
G="$here/gen-fabric"

if [ "$1" = "--big" ]; then
    [ -n "$2" ] || { echo "usage: $0 [--big DIR]" >&2; exit 2; }
    mkdir -p "$2"
    cd "$2"
    "$G" 2level --leaves 36 --spines 18 --hosts-per-leaf 18 --random-guids -o ft2-648.net
    "$G" 2level --leaves 8 --spines 4 --hosts-per-leaf 16 --trunk 4 --random-guids -o ft2-trunk4-128.net
    "$G" kary --k 6 --levels 3 --random-guids -o kary-6-3.net
    "$G" 2level --leaves 24 --spines 12 --hosts-per-leaf 24 --random-guids -o ft2-oversub-576.net
    "$G" 2level --leaves 36 --spines 18 --hosts-per-leaf 18 --random-guids --remove-links 0.05 --seed 1 -o ft2-648-degraded.net
    "$G" kary --k 18 --levels 3 --random-guids -o kary-18-3.net
    # sequential GUIDs: with random ones the LMC alignment gap after each
    # switch LID makes OpenSM run out of unicast LIDs at LMC 2 (ERR 0307)
    "$G" ft3 --radix 36 -o ft3-36.net
    exit 0
fi
[ $# -eq 0 ] || { echo "usage: $0 [--big DIR]" >&2; exit 2; }

cd "$here"
"$G" seed-example -o seed-4x4trunk.net
"$G" 2level --leaves 8 --spines 4 --hosts-per-leaf 4 --random-guids -o ft2-8x4.net
"$G" 2level --leaves 4 --spines 2 --hosts-per-leaf 4 --trunk 2 --random-guids -o ft2-trunk-4x2x2.net
"$G" 2level --leaves 8 --spines 2 --hosts-per-leaf 4 --random-guids -o ft2-oversub-8x2.net
"$G" kary --k 4 --levels 3 --random-guids -o kary-4-3.net
"$G" 2level --leaves 8 --spines 4 --hosts-per-leaf 4 --random-guids --remove-links 0.1 --seed 1 -o ft2-8x4-degraded.net
"$G" kary --k 4 --levels 3 --random-guids --remove-switches 2:1,3:1 --seed 1 -o kary-4-3-degraded.net
# real-fabric shapes (gen-fabric cluster)
"$G" cluster --radix 40 --directors 2 --lines 4 --fabrics 2 --edges 10 --empty-edges 2 --hosts-per-edge 12 --uplinks 6 --core-hosts 4 --random-guids --link 4xHDR -o dir-2level-taper.net
"$G" cluster --pods 2 --pod-spines 4 --edges 8 --hosts-per-edge 8 --uplinks 4 --directors 1 --lines 4 --fabrics 2 --sharp --random-guids --link 4xEDR -o dir-3level.net
"$G" cluster --spines 8 --edges 8 --hosts-per-edge 16 --rails 4 --random-guids --link 4xEDR -o rails4.net
"$G" cluster --radix 64 --spines 6 --edges 12 --hosts-per-edge 12 --uplinks 6 --double-links 0.25 --remove-links 0.05 --sharp --random-guids --link 4xHDR -o sharp-ft2.net
"$G" cluster --radix 16 --pods 2 --pod-spines 2 --edges 8 --hosts-per-edge 4 --uplinks 2 --pod-uplinks 4 --spines 4 --double-links 1.0 --random-guids -o ft3-doubled.net
"$G" cluster --radix 16 --pods 3 --pod-spines 4 --edges 12 --hosts-per-edge 8 --uplinks 4 --pod-uplinks 4 --spines 6 --random-guids -o ft3-partial-cores.net
