"""A large synthetic k-ary 3-tree with d-mod-k routing, written as the
OpenSM dumps lft-analyze reads (opensm-subnet.lst, opensm-lfts.dump):
bench-analyze's input, built directly rather than routed by OpenSM."""

import os

import numpy as np


def build(k, lmc, outdir):
    """Write subnet.lst and lfts.dump of a k-ary 3-tree; return counts.

    Leaves L(a,b), middles M(a,c) (pod a), tops T(c,d); hosts H(a,b,c) on
    leaf port c+1.  Up ports are k+1..2k.  d-mod-k: a packet for LID
    index x climbs leaf up port k+1+(x mod k) and middle up port
    k+1+((x div k) mod k).
    """
    nl = 1 << lmc
    P = 2 * k
    nsw = 3 * k * k
    nh = k ** 3

    def sguid(level, i):
        return 0x0008f10400000000 + (level << 16) + i

    def hguid(h):
        return 0x0002c90300000000 + 2 * h + 1

    swlid = {}
    lid = 1
    for level in range(3):
        for i in range(k * k):
            swlid[(level, i)] = lid
            lid += 1
    base = ((lid + nl - 1) // nl) * nl
    hlid = np.arange(nh) * nl + base
    maxlid = int(hlid[-1]) + nl - 1
    names = {0: "leaf", 1: "mid", 2: "top"}

    def sdesc(level, i):
        return f"{names[level]}-{i // k}-{i % k}"

    # topology
    def side(kind, nports, nguid, pguid, desc, lid, pn):
        return (f"{{ {kind} Ports:{nports:02X} SystemGUID:{nguid:016x} "
                f"NodeGUID:{nguid:016x} PortGUID:{pguid:016x} VenID:000000 "
                f"DevID:0000 Rev:000000A1 {{{desc}}} LID:{lid:04X} "
                f"PN:{pn:02X} }}")

    def sw_side(level, i, pn):
        g = sguid(level, i)
        return side("SW", P, g, g, sdesc(level, i), swlid[(level, i)], pn)

    lines = []

    def link(a, b):
        lines.append(f"{a} {b} PHY=4x LOG=ACT SPD=2.5")
        lines.append(f"{b} {a} PHY=4x LOG=ACT SPD=2.5")

    for a in range(k):
        for b in range(k):
            leaf = a * k + b
            for c in range(k):
                h = leaf * k + c
                link(side("CA", 1, hguid(h) - 1, hguid(h), f"node{h:05d}",
                          int(hlid[h]), 1), sw_side(0, leaf, c + 1))
                link(sw_side(0, leaf, k + 1 + c), sw_side(1, a * k + c, b + 1))
    for a in range(k):
        for c in range(k):
            for d in range(k):
                link(sw_side(1, a * k + c, k + 1 + d),
                     sw_side(2, c * k + d, a + 1))
    with open(os.path.join(outdir, "opensm-subnet.lst"), "w") as f:
        f.write("\n".join(lines) + "\n")

    # LFTs
    x = np.arange(nh * nl)                 # LID index
    h = x // nl
    lids = hlid[h] + x % nl
    pod, leaf_in_pod, hp = h // (k * k), (h // k) % k, h % k
    up1 = k + 1 + (x % k)
    up2 = k + 1 + ((x // k) % k)
    comment = [f" # Channel Adapter portguid 0x{hguid(int(hh)):016x}: "
               f"'node{int(hh):05d}'\n" for hh in range(nh)]
    swc = {key: f" # Switch portguid 0x{sguid(*key):016x}: "
           f"'{sdesc(*key)}'\n" for key in swlid}
    with open(os.path.join(outdir, "opensm-lfts.dump"), "w") as f:
        for level in range(3):
            for i in range(k * k):
                a, b = i // k, i % k
                if level == 0:
                    port = np.where(h // k == i, hp + 1, up1)
                elif level == 1:       # M(a, c=b)
                    port = np.where(pod == a, leaf_in_pod + 1, up2)
                else:                  # T(c=a, d=b)
                    port = pod + 1
                g = sguid(level, i)
                out = [f"Unicast lids [0-{maxlid}] of switch Lid "
                       f"{swlid[(level, i)]} guid 0x{g:016x} "
                       f"('{sdesc(level, i)}'):\n",
                       f"0x{swlid[(level, i)]:04x} 000"
                       f"{swc[(level, i)]}"]
                pl = port.tolist()
                ll = lids.tolist()
                hl = h.tolist()
                out.extend(f"0x{ll[j]:04x} {pl[j]:03d}{comment[hl[j]]}"
                           for j in range(len(ll)))
                out.append(f"{maxlid} lids dumped\n")
                f.write("".join(out))
    return nh, nsw
