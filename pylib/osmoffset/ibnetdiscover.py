"""Turn an ibnetdiscover dump of a real fabric into an ibsim net file.

The dump is read by osmoffset.fabric (the one reader of that format); this
module only decides what ibsim 0.10 and OpenSM 3.3.23 get to see:

  * Rates.  Every link is written at one rate on both ends (ibsim panics on
    a link whose ends share no speed or width).  SDR, DDR, QDR, FDR10, FDR,
    EDR and HDR are kept; NDR and XDR, which ibsim 0.10 cannot parse and
    OpenSM 3.3.23 predates, become HDR, the fastest rate both know.  Widths
    1x, 2x, 4x, 8x and 12x are kept.  A link whose ends disagree is written
    at the slower end's rate; a link without any rate gets 4xQDR.
  * Port numbers are kept.  ibsim 0.10 and OpenSM 3.3.23 take switches of
    up to 254 ports: the 65-port NDR switches (port 65 is the internal port
    of the switch's SHARP aggregation node) route as they are.
  * LIDs of the dump are dropped ("lid 0" on every port): ibsim and OpenSM
    assign their own.
  * GUIDs are the dump's node GUIDs.  ibsim derives the port GUIDs of a CA
    (node GUID + port number), so the port GUIDs of the dump are not kept.
  * Names.  A node named in the --map file gets that name.  Otherwise a CA
    keeps its node description unless it is unnamed: empty, the adapter's
    factory default ("MT4129 ConnectX7   Mellanox Technologies", any
    "MT<digits> ... Mellanox Technologies"), or shared with another CA; an
    unnamed CA is named by its node id ("H-<node GUID>"), so that every
    host has a name of its own for hostfiles and reports.  SHARP
    aggregation nodes keep their description.
  * SHARP aggregation nodes (CAs described "Mellanox Technologies
    Aggregation Node") are kept, or dropped with drop_sharp (their switch
    port is then left unconnected).
  * IB routers ("Rt" records) are dropped, their switch ports left
    unconnected: the harness routes and analyses switches and CAs; a
    dump taken on a subnet with a router to another subnet converts all
    the same.
  * The first node of a net file hosts ibsim's SM port: the CA that
    ibnetdiscover was run from goes first when it is kept, else the first
    other CA that is not an aggregation node.

A map file has one node per line: KEY NAME, where KEY is a node id of the
dump ("H-0002c903000e0b72", as in the ibnetdiscover output), a node GUID or
a CA port GUID (hex, with or without 0x), and NAME the rest of the line,
optionally in double quotes (ibnetdiscover's --node-name-map format).  '#'
starts a comment.  Keys that the dump does not hold are ignored.

Every error is an osmoffset.fabric.InputError "FILE:LINE: message".
"""

from __future__ import annotations

import os
import re
from typing import Dict, Optional

from .fabric import InputError, Topology, load_topology

__all__ = ["SHARP_DESC", "load_map", "convert", "convert_file"]

SHARP_DESC = "Mellanox Technologies Aggregation Node"

# speeds ibsim 0.10 parses and OpenSM 3.3.23 knows, slowest first
KNOWN_SPEEDS = ("SDR", "DDR", "QDR", "FDR10", "FDR", "EDR", "HDR")
# speeds of newer hardware -> what is written instead
NEWER_SPEEDS = {"NDR": "HDR", "XDR": "HDR"}
WIDTHS = (1, 2, 4, 8, 12)
DEFAULT_RATE = (4, "QDR")

_FACTORY_DESC = re.compile(r"^MT\d+\b.*Mellanox Technologies\s*$")


def load_map(path) -> Dict[str, str]:
    """KEY -> NAME of a map file (keys lower-cased, GUIDs as '0x%016x')."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise InputError(path, 0, f"cannot read: {e.strerror}") from None
    out: Dict[str, str] = {}
    where: Dict[str, int] = {}
    for i, raw in enumerate(lines, 1):
        s = raw.strip()
        if not s or s.startswith("#"):
            continue
        parts = s.split(None, 1)
        if len(parts) < 2:
            raise InputError(path, i, f"expected 'KEY NAME', got {s!r}")
        key, name = parts[0], parts[1].strip()
        if name.startswith('"'):
            e = name.find('"', 1)
            if e < 0:
                raise InputError(path, i, "unterminated quoted name")
            name = name[1:e]
        else:
            name = name.split("#", 1)[0].strip()
        if not name:
            raise InputError(path, i, f"empty name for {key}")
        if '"' in name:
            raise InputError(path, i, f"name {name!r} contains a double "
                             "quote")
        k = _map_key(key)
        if k is None:
            raise InputError(path, i, f"bad key {key!r} (expected a node id "
                             "such as H-0002c903000e0b72 or a GUID)")
        if k in out:
            raise InputError(path, i, f"{key} already mapped at line "
                             f"{where[k]}")
        out[k] = name
        where[k] = i
    return out


def _map_key(key):
    if re.fullmatch(r"[A-Za-z]+-[0-9A-Fa-f]+", key) and \
            not key.lower().startswith("0x"):
        return key.lower()
    m = re.fullmatch(r"(?:0[xX])?([0-9A-Fa-f]{1,16})", key)
    if m:
        return "0x%016x" % int(m.group(1), 16)
    return None


def _rate(info, path):
    """(width, speed, renamed-from) a port line asks for, checked."""
    r = info.get("width_speed")
    if r is None:
        return None
    w, sp = r
    if w not in WIDTHS:
        raise InputError(path, info["line"], f"link width {w}x is not "
                         f"one of {', '.join('%dx' % x for x in WIDTHS)}")
    up = sp.upper()
    if up in KNOWN_SPEEDS:
        return w, up, None
    if up in NEWER_SPEEDS:
        return w, NEWER_SPEEDS[up], up
    known = ", ".join(KNOWN_SPEEDS + tuple(NEWER_SPEEDS))
    raise InputError(path, info["line"], f"unknown link speed {sp!r} "
                     f"(known: {known})")


def _slower(a, b):
    if a is None:
        return b
    if b is None:
        return a
    return (min(a[0], b[0]),
            KNOWN_SPEEDS[min(KNOWN_SPEEDS.index(a[1]),
                             KNOWN_SPEEDS.index(b[1]))])


def convert(topo: Topology, names: Optional[Dict[str, str]] = None,
            drop_sharp: bool = False, source: str = "",
            map_source: str = ""):
    """(net file text, stats dict) for a Topology read from ibnetdiscover
    output (or a net file)."""
    path = topo.path
    recs = [r for r in topo.records if r["kind"] in ("SW", "CA")]
    if not recs:
        raise InputError(path, 0, "no Switch/Ca records found")
    names = names or {}
    byid = {r["id"]: r for r in recs}
    sharp = {r["id"] for r in recs
             if r["kind"] == "CA" and r["desc"] == SHARP_DESC}
    routers = {r["id"] for r in topo.records if r["kind"] == "RT"}
    dropped = (sharp if drop_sharp else set()) | routers
    keep = [r for r in recs if r["id"] not in dropped]

    # names
    def mapped(r):
        for k in [r["id"].lower(), "0x%016x" % r["guid"]] + [
                "0x%016x" % info["pguid"] for info in r["ports"].values()
                if info.get("pguid")]:
            if k in names:
                return names[k]
        return None

    desc_count: Dict[str, int] = {}
    for r in keep:
        if r["kind"] == "CA" and r["id"] not in sharp:
            desc_count[r["desc"]] = desc_count.get(r["desc"], 0) + 1
    out_desc = {}
    n_mapped = n_unnamed = 0
    for r in keep:
        m = mapped(r)
        if m is not None:
            out_desc[r["id"]] = m
            n_mapped += 1
            continue
        d = r["desc"]
        if r["kind"] == "CA" and r["id"] not in sharp and (
                not d.strip() or d == r["id"] or _FACTORY_DESC.match(d)
                or desc_count[d] > 1):
            d = r["id"]
            n_unnamed += 1
        if '"' in d:
            raise InputError(path, r["line"], f"node description {d!r} "
                             "contains a double quote")
        out_desc[r["id"]] = d

    # links and rates
    rates = {}          # frozenset of the two ends -> (width, speed)
    renamed: Dict[str, int] = {}
    nlinks = 0
    for r in keep:
        for lp, info in r["ports"].items():
            rid = info["remote"]
            if rid in dropped:
                continue
            rem = byid.get(rid)
            if rem is None:
                raise InputError(path, info["line"], f"remote node \"{rid}\""
                                 " is not a switch or CA of the dump")
            key = frozenset(((r["id"], lp), (rid, info["rport"])))
            mine = _rate(info, path)
            if mine and mine[2]:
                renamed[mine[2]] = renamed.get(mine[2], 0) + 1
            if key not in rates:
                nlinks += 1
                rates[key] = mine[:2] if mine else None
            else:
                rates[key] = _slower(rates[key], mine[:2] if mine else None)
    # GUIDs ibsim will use: a switch its node GUID, a CA node GUID .. +ports
    owner = {}
    for r in keep:
        span = 1 if r["kind"] == "SW" else r["nports"] + 1
        for g in range(r["guid"], r["guid"] + span):
            if g in owner:
                o = owner[g]
                raise InputError(path, r["line"], f"GUID 0x{g:016x} of "
                                 f"\"{r['id']}\" is also used by \"{o['id']}"
                                 f"\" (line {o['line']}) once ibsim numbers "
                                 "CA ports node GUID + port")
            owner[g] = r

    # SM node first
    cas = [r for r in keep if r["kind"] == "CA" and r["id"] not in sharp]
    if not cas:
        raise InputError(path, 0, "no CA that could host the SM (only "
                         "switches and aggregation nodes)")
    first = next((r for r in cas if topo.origin is not None and
                  r["guid"] == topo.origin), cas[0])
    ordered = [first] + [r for r in keep if r is not first]

    nsw = sum(1 for r in keep if r["kind"] == "SW")
    nca = len(keep) - nsw
    maxp = max(r["nports"] for r in keep if r["kind"] == "SW") if nsw else 0
    head = ["# converted from ibnetdiscover output by osmoffset.ibnetdiscover;"
            " regenerate instead of editing",
            f"# source: {source or os.path.basename(path)}"]
    if map_source:
        head.append(f"# names: {map_source} ({n_mapped} nodes named)")
    head.append(f"# switches {nsw} (up to {maxp} ports), CAs {nca}, links "
                f"{nlinks}")
    if sharp:
        head.append(f"# SHARP aggregation nodes: {len(sharp)} "
                    + ("dropped" if drop_sharp else "kept"))
    else:
        head.append("# SHARP aggregation nodes: none in the dump")
    if routers:
        head.append("# IB routers: %d dropped, their switch ports left "
                    "unconnected" % len(routers))
    for sp, n in sorted(renamed.items()):
        head.append(f"# {n} port lines at {sp} written as "
                    f"{NEWER_SPEEDS[sp]} (ibsim 0.10 and OpenSM 3.3.23 know "
                    f"no {sp})")
    if n_unnamed:
        head.append(f"# {n_unnamed} unnamed CAs named by their node id")
    head.append("# LIDs of the dump are not kept: ibsim and OpenSM assign "
                "their own")
    head.append(f"# SM port: \"{first['id']}\" ({out_desc[first['id']]})")
    body = []
    for r in ordered:
        body.append("")
        if r["kind"] == "SW":
            body.append(f"switchguid=0x{r['guid']:016x}")
            tail = (" " + r["port0"]) if r.get("port0") else ""
            body.append(f"Switch\t{r['nports']} \"{r['id']}\"\t\t# "
                        f"\"{out_desc[r['id']]}\"{tail}")
        else:
            body.append(f"caguid=0x{r['guid']:016x}")
            body.append(f"Ca\t{r['nports']} \"{r['id']}\"\t\t# "
                        f"\"{out_desc[r['id']]}\"")
        for lp in sorted(r["ports"]):
            info = r["ports"][lp]
            if info["remote"] in dropped:
                continue
            key = frozenset(((r["id"], lp), (info["remote"], info["rport"])))
            w, sp = rates[key] or DEFAULT_RATE
            body.append(f"[{lp}]\t\"{info['remote']}\"[{info['rport']}]"
                        f"\t\t# lid 0 {w}x{sp}")
    stats = {"switches": nsw, "cas": nca, "links": nlinks,
             "sharp": len(sharp), "sharp_dropped": len(dropped - routers),
             "routers_dropped": len(routers),
             "unnamed": n_unnamed, "mapped": n_mapped,
             "renamed_speeds": renamed, "max_ports": maxp,
             "sm_node": first["id"]}
    return "\n".join(head + body) + "\n", stats


def convert_file(src, dst=None, map_path=None, drop_sharp=False):
    """Read the ibnetdiscover dump src (and the map file map_path), return
    (text, stats) and write the text to dst when given."""
    topo = load_topology(src)
    if topo.fmt == "subnet.lst" or not topo.records:
        raise InputError(src, 1, "not ibnetdiscover output (expected "
                         "Switch/Ca records)")
    names = load_map(map_path) if map_path else None
    text, stats = convert(topo, names, drop_sharp,
                          source=os.path.basename(str(src)),
                          map_source=os.path.basename(str(map_path))
                          if map_path else "")
    if dst is not None:
        try:
            with open(dst, "w", encoding="utf-8") as f:
                f.write(text)
        except OSError as e:
            raise InputError(dst, 0, f"cannot write: {e.strerror}") from None
    return text, stats
