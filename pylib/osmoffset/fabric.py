"""Parsers for InfiniBand fabric descriptions and unicast forwarding tables.

Topology inputs (auto-detected by load_topology):
  * opensm-subnet.lst   (OpenSM --dump_files_dir / -D 0x43 output)
  * ibnetdiscover output (infiniband-diags)
  * ibsim net files      (ibsim -n NETFILE); GUIDs are computed the way
    ibsim assigns them, so they match an OpenSM dump of the same fabric.

Forwarding-table inputs (auto-detected by load_lfts):
  * opensm-lfts.dump
  * ibroute / dump_fts output (infiniband-diags 44), any number of switches
    concatenated.

Every parse error raises InputError, whose str() is "PATH:LINE: message".
An LFT dump or subnet.lst that ends in the middle of a line with an
incomplete record says so: "... (the file ends mid-line: truncated?)".
"""

from __future__ import annotations

import math
import os
import re
from dataclasses import dataclass, field
from typing import Dict, List, Optional, Tuple

__all__ = [
    "InputError", "Node", "Topology", "SwitchLft", "Lfts",
    "load_topology", "load_lfts", "parse_topology_text", "parse_lfts_text",
    "NetSummary", "scan_netfile", "IBSIM_GUID_BASE",
]


class InputError(Exception):
    """Bad input: carries the file name, the line number and a message."""

    def __init__(self, path, lineno, msg):
        self.path = str(path)
        self.lineno = int(lineno)
        self.msg = msg
        super().__init__(f"{self.path}:{self.lineno}: {msg}")

    def __str__(self):
        return f"{self.path}:{self.lineno}: {self.msg}"


@dataclass
class Node:
    """A switch (keyed by node GUID) or one CA port (keyed by port GUID)."""
    guid: int
    kind: str                 # 'SW' or 'CA'
    desc: str
    nports: int
    lid: Optional[int] = None  # switch: port 0 base LID; CA: port base LID
    node_guid: Optional[int] = None  # CA: GUID of the CA node; SW: == guid
    port: int = 0             # CA: the port number of this CA port; SW: 0
    nid: Optional[str] = None  # net file: the node id (ibsim's name)


class Topology:
    """Nodes and links of a fabric.

    nodes: guid -> Node (switch node GUID, or CA *port* GUID)
    links: (guid, port) -> (guid, port), both directions present; the CA
           side is (port_guid, port_num)
    lids:  base LID -> guid
    lmc:   LMC when the input says (ibnetdiscover), else None
    down:  set of (guid, port) whose link is present but not active
    rates: (guid, port) -> data rate of the link in Gbit/s, where the input
           says (subnet.lst PHY=/SPD=, ibnetdiscover and net-file trailers
           such as 4xQDR); both ends of a link get it
    """

    def __init__(self):
        self.nodes: Dict[int, Node] = {}
        self.links: Dict[Tuple[int, int], Tuple[int, int]] = {}
        self.lids: Dict[int, int] = {}
        self.lmc: Optional[int] = None
        self.down: set = set()
        self.rates: Dict[Tuple[int, int], float] = {}
        self.path: str = ""
        self.fmt: str = ""
        # net file / ibnetdiscover input only: the node records in file
        # order (dicts: id, kind, guid, desc, nports, port0, line, ports =
        # {port: {remote, rport, pguid, rate, line, lid}}), and the node
        # ibnetdiscover was initiated from
        self.records: List[dict] = []
        self.origin: Optional[int] = None

    def switches(self) -> List[Node]:
        return [n for n in self.nodes.values() if n.kind == "SW"]

    def cas(self) -> List[Node]:
        return [n for n in self.nodes.values() if n.kind == "CA"]

    def neighbors(self, guid) -> List[Tuple[int, int, int]]:
        """(local port, remote guid, remote port) for every link of guid."""
        if not hasattr(self, "_adj"):
            self._build_adj()
        return list(self._adj.get(guid, ()))

    def _build_adj(self):
        adj: Dict[int, list] = {}
        for (g, p), (rg, rp) in self.links.items():
            adj.setdefault(g, []).append((p, rg, rp))
        for lst in adj.values():
            lst.sort()
        self._adj = adj

    def find(self, name) -> Optional[Node]:
        """Node by description or GUID (text such as '0x1234' or decimal)."""
        if not hasattr(self, "_bydesc"):
            self._bydesc = {}
            for n in self.nodes.values():
                self._bydesc.setdefault(n.desc, n)
        if name in self._bydesc:
            return self._bydesc[name]
        try:
            g = int(name, 0)
        except ValueError:
            return None
        return self.nodes.get(g)

    def _add_link(self, a, b, err):
        for x, y in ((a, b), (b, a)):
            old = self.links.get(x)
            if old is not None and old != y:
                err(f"port {x[1]} of 0x{x[0]:016x} linked twice "
                    f"(to 0x{old[0]:016x}[{old[1]}] and "
                    f"0x{y[0]:016x}[{y[1]}])")
            self.links[x] = y


# --------------------------------------------------------------------------
# topology parsers

_SUBNET_SIDE = re.compile(
    r"\{\s*(SW|CA|Rt|\*\*)(-SM)?\s+Ports:([0-9A-Fa-f]+)\s+"
    r"SystemGUID:([0-9A-Fa-f]+)\s+NodeGUID:([0-9A-Fa-f]+)\s+"
    r"PortGUID:([0-9A-Fa-f]+)\s+VenID:[0-9A-Fa-f]+\s+DevID:[0-9A-Fa-f]+\s+"
    r"Rev:[0-9A-Fa-f]+\s+\{(.*?)\}\s+LID:([0-9A-Fa-f]+)\s+"
    r"PN:([0-9A-Fa-f]+)\s*\}")
_SUBNET_STATE = re.compile(r"LOG=(\w+)")
_SUBNET_RATE = re.compile(r"PHY=(\d+)x\b.*?SPD=([\d.]+)")
# data rate of one lane in Gbit/s (after line encoding), by the signalling
# rate opensm prints (SPD=) and by the name ibnetdiscover prints
_LANE_GBPS = {"2.5": 2.0, "5": 4.0, "10": 8.0, "14": 13.64, "25": 25.0,
              "50": 50.0, "100": 100.0, "200": 200.0,
              "SDR": 2.0, "DDR": 4.0, "QDR": 8.0, "FDR10": 10.0,
              "FDR": 13.64, "EDR": 25.0, "HDR": 50.0, "NDR": 100.0,
              "XDR": 200.0}


def _lane_rate(text):
    if text in _LANE_GBPS:
        return _LANE_GBPS[text]
    try:
        return _LANE_GBPS.get("%g" % float(text))
    except ValueError:
        return None


def load_topology(path) -> Topology:
    """Read a topology file, auto-detecting its format."""
    try:
        with open(path, "r", encoding="utf-8", errors="replace") as f:
            text = f.read()
    except OSError as e:
        raise InputError(path, 0, f"cannot read: {e.strerror}") from None
    return parse_topology_text(text, str(path))


def _ends_mid_line(text):
    return bool(text) and not text.endswith(("\n", "\r"))


def parse_topology_text(lines, path="<input>") -> Topology:
    """Parse topology text: a string (a last line without newline is
    checked for truncation) or a list of lines."""
    cut = False
    if isinstance(lines, str):
        cut = _ends_mid_line(lines)
        lines = lines.splitlines()
    for i, line in enumerate(lines, 1):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        if s.startswith("{") and "NodeGUID:" in s:
            return _parse_subnet_lst(lines, path, cut)
        if re.match(r"(Switch|Hca|Ca|Rt|switchguid|caguid|hcaguids|rtguid|"
                    r"vendid|devid|sysimgguid|width|speed|extspeed)\b", s) \
                or re.match(r"(Switch|Hca|Ca)\s", s):
            return _parse_netfile(lines, path)
        raise InputError(path, i, "unrecognised topology format (expected "
                         "opensm-subnet.lst, ibnetdiscover output or an "
                         "ibsim net file)")
    raise InputError(path, len(lines), "empty topology file")


_TRUNCATED = " (the file ends mid-line: truncated?)"


def _parse_subnet_lst(lines, path, cut=False) -> Topology:
    """opensm-subnet.lst; cut: the last line has no newline (an incomplete
    last record is then reported as a truncated file)."""
    topo = Topology()
    topo.path, topo.fmt = path, "subnet.lst"
    trailer = None      # the PHY=/LOG=/SPD= fields the first record has
    for i, line in enumerate(lines, 1):
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        last = cut and i == len(lines)

        def err(msg, i=i, last=last):
            raise InputError(path, i, msg + (_TRUNCATED if last else ""))

        sides = list(_SUBNET_SIDE.finditer(s))
        if len(sides) != 2:
            err("garbled subnet.lst line (expected two '{ ... }' port "
                "records)")
        fields = set(re.findall(r"\b([A-Z]+)=\S", s[sides[1].end():]))
        if trailer is None:
            trailer = fields
        elif last and not trailer <= fields:
            err("incomplete link record: no " + ", ".join(
                f"{f}=" for f in sorted(trailer - fields)))
        if last and trailer and not re.search(r"=\S+$", s):
            err("incomplete link record")
        ends = []
        for m in sides:
            typ, _sm, nports, _sys, nguid, pguid, desc, lid, pn = m.groups()
            if typ == "**":
                err("unknown node type '**'")
            nguid, pguid = int(nguid, 16), int(pguid, 16)
            nports, lid, pn = int(nports, 16), int(lid, 16), int(pn, 16)
            if typ == "SW":
                key = nguid
                node = Node(nguid, "SW", desc, nports, lid or None, nguid, 0)
            else:
                key = pguid
                node = Node(pguid, "CA", desc, nports, lid or None, nguid, pn)
            old = topo.nodes.get(key)
            if old is None:
                topo.nodes[key] = node
            elif (old.kind, old.desc, old.nports, old.lid) != \
                    (node.kind, node.desc, node.nports, node.lid):
                err(f"GUID 0x{key:016x} described inconsistently "
                    f"('{old.desc}' LID {old.lid} vs '{node.desc}' LID "
                    f"{node.lid})")
            if pn > nports or pn < 1:
                err(f"port {pn} out of range for a {nports}-port node")
            ends.append((key, pn))
        a, b = ends
        topo._add_link(a, b, err)
        tail = s[sides[1].end():]
        st = _SUBNET_STATE.search(tail)
        if st and st.group(1) != "ACT":
            topo.down.add(a)
            topo.down.add(b)
        rt = _SUBNET_RATE.search(tail)
        lane = _lane_rate(rt.group(2)) if rt else None
        if lane:
            topo.rates[a] = topo.rates[b] = int(rt.group(1)) * lane
    if not topo.nodes:
        raise InputError(path, len(lines), "no link records found")
    _finish_lids(topo, path)
    return topo


def _finish_lids(topo, path):
    for n in topo.nodes.values():
        if n.lid:
            other = topo.lids.get(n.lid)
            if other is not None and other != n.guid:
                raise InputError(path, 0, f"LID {n.lid} assigned to both "
                                 f"0x{other:016x} and 0x{n.guid:016x}")
            topo.lids[n.lid] = n.guid


def _c_int(text):
    """strtoull(text, NULL, 0) on a prefix of text; None if no digits."""
    m = re.match(r"\s*(0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)", text)
    if not m:
        return None
    return int(m.group(1), 0) if not re.match(r"0[0-7]+$", m.group(1)) \
        else int(m.group(1), 8)


_NET_HEADER = re.compile(r'^(Switch|Hca|Ca|Rt)\s*(\d+)\s*"([^"]*)"(.*)$')
_NET_PORT = re.compile(
    r'^\[(\d+)\](?:\[ext \d+\])?\s*(?:\(([0-9A-Fa-f]+)\))?\s*"([^"]*)"\s*'
    r'(?:\[(\d+)\](?:\[ext \d+\])?)?\s*(?:\(([0-9A-Fa-f]+)\))?(.*)$')


def _comment_desc(rest):
    """Description after '#' in a header line, like ibsim's parse_node_desc."""
    k = rest.find("#")
    if k < 0:
        return None, ""
    s = rest[k + 1:].lstrip()
    if s.startswith('"'):
        e = s.find('"', 1)
        if e >= 0:
            return s[1:e], s[e + 1:]
        return s[1:], ""
    m = re.search(r" (enhanced port |base port |lid |lmc )", s)
    if m:
        return s[:m.start()], s[m.start():]
    return s, ""


# ibsim's GUID assignment (ibsim/sim_net.c): the first switch gets node
# GUID 0x200000 and every further switch the next one (all its ports share
# the node GUID); the first CA gets 0x100000 and every CA reserves
# nports + 1 GUIDs (port i has node GUID + i); routers start at 0.
# "switchguid=", "caguid="/"hcaguids=" and "rtguid=" set the next GUID
# absolutely, "switchguid+N" etc. relative to the last absolute base.
IBSIM_GUID_BASE = {"SW": 0x200000, "CA": 0x100000, "RT": 0}

_UPDN_ROOT = re.compile(r"#\s*updn-root\s+(0x[0-9a-fA-F]+)\b\s*(\S*)")
# a node header as ibsim sees it: the keyword at the start of the line
_SCAN_HEADER = re.compile(r"(Switch|Hca|Ca|Rt)\D*(\d+)\s*(?:\"([^\"]*)\")?")
_SCAN_INCLUDE = re.compile(r'include\s+"?([^"\s]+)')


@dataclass
class NetSummary:
    """What scan_netfile() finds in an ibsim net file."""
    path: str
    nodes: int = 0          # all node records, includes followed
    switches: int = 0
    cas: int = 0            # Hca/Ca records
    ports: int = 0          # ports + 1 per node (ibsim's port table)
    roots: List[int] = field(default_factory=list)  # '# updn-root' GUIDs
    first: Optional[Tuple[str, str]] = None  # (kind SW/CA/RT, node id)

    def sizes(self):
        """(nodes, switches, ports) for runner.ibsim_limits()."""
        return self.nodes, self.switches, self.ports


def scan_netfile(path) -> NetSummary:
    """Count the node records of an ibsim net file and its includes (to
    size ibsim's tables) and collect its '# updn-root' GUIDs, without
    judging the syntax: ibsim itself is the judge when it loads the file
    (load_topology() is the full, strict reader).  An unreadable file
    counts as empty."""
    res = NetSummary(str(path))
    seen = set()

    def scan(fname, depth):
        if depth > 9 or fname in seen or not os.path.isfile(fname):
            return          # (ibsim's own limit is 9 levels)
        seen.add(fname)
        try:
            with open(fname, errors="replace") as f:
                text = f.read()
        except OSError:
            return
        for line in text.splitlines():
            if depth == 0:
                m = _UPDN_ROOT.match(line)
                if m:
                    res.roots.append(int(m.group(1), 16))
                    continue
            m = _SCAN_HEADER.match(line)
            if m:
                kind = {"Switch": "SW", "Rt": "RT"}.get(m.group(1), "CA")
                res.nodes += 1
                res.ports += int(m.group(2)) + 1
                if kind == "SW":
                    res.switches += 1
                elif kind == "CA":
                    res.cas += 1
                if res.first is None:
                    res.first = (kind, m.group(3) or "")
                continue
            m = _SCAN_INCLUDE.match(line)
            if m:
                inc = m.group(1)
                if not os.path.isabs(inc):
                    inc = os.path.join(os.path.dirname(fname), inc)
                scan(inc, depth + 1)

    scan(str(path), 0)
    return res


def _parse_netfile(lines, path) -> Topology:
    """ibsim net file or ibnetdiscover output (the same grammar)."""
    topo = Topology()
    topo.path = path
    topo.fmt = "ibnetdiscover" if any(
        l.startswith("# Topology file") for l in lines[:5]) else "ibsim-net"
    base = dict(IBSIM_GUID_BASE)
    cur = dict(base)
    recs = {}        # nodeid -> dict(kind, guid, desc, nports, lid, ports)
    order = []
    node = None
    lmcs = set()
    roots = []
    for i, raw in enumerate(lines, 1):
        line = raw.rstrip("\n")
        mr = _UPDN_ROOT.match(line)
        if mr:
            roots.append((int(mr.group(1), 16), mr.group(2) or ""))
        if node is not None:
            if line.startswith("#"):
                continue
            if line.startswith("@"):
                raise InputError(path, i, "ibsim port aliases ('@') are not "
                                 "supported")
            if line.startswith("["):
                m = _NET_PORT.match(line)
                if not m:
                    raise InputError(path, i, f"garbled port line: {line!r}")
                lp, lguid, rid, rp, rguid, rest = m.groups()
                lp = int(lp)
                if lp < (0 if node["kind"] == "SW" else 1) or \
                        lp > node["nports"]:
                    raise InputError(path, i, f"port {lp} out of range for "
                                     f"{node['nports']}-port node "
                                     f"\"{node['id']}\"")
                if lp in node["ports"]:
                    raise InputError(path, i, f"port {lp} of \"{node['id']}\""
                                     " listed twice")
                info = {"remote": rid, "rport": int(rp) if rp else 1,
                        "line": i, "pguid": int(lguid, 16) if lguid else None}
                if node["kind"] != "SW":
                    c = rest.split("#", 1)[1] if "#" in rest else ""
                    ml = re.match(r"\s*lid (\d+)(?:\s+lmc (\d+))?", c)
                    if ml:
                        info["lid"] = int(ml.group(1)) or None
                        if ml.group(2) is not None:
                            lmcs.add(int(ml.group(2)))
                if info["rport"] <= 0:
                    raise InputError(path, i, "invalid remote port number")
                # (width, speed) as written, and the data rate in Gbit/s
                info["width_speed"] = _port_rate(rest)
                if info["width_speed"]:
                    w, sp = info["width_speed"]
                    lane = _LANE_GBPS.get(sp.upper())
                    if lane:
                        info["rate"] = w * lane
                node["ports"][lp] = info
                continue
            node = None     # any other line ends the record
        s = line.strip()
        if not s or s.startswith("#"):
            continue
        m = re.match(r"(switchguid|caguid|hcaguids|rtguid)\s*([=+])(.*)$", s)
        if m:
            kind = {"switchguid": "SW", "rtguid": "RT"}.get(m.group(1), "CA")
            v = _c_int(m.group(3))
            if v is None:
                raise InputError(path, i, f"bad GUID value in {s!r}")
            if m.group(2) == "=":
                base[kind] = v
                cur[kind] = v
            else:
                cur[kind] = base[kind] + v
            continue
        if re.match(r"(switchguid|caguid|hcaguids|rtguid)", s):
            raise InputError(path, i, "bad assignment: missing '=' or '+'")
        if re.match(r"(module|include|do)\b", s):
            raise InputError(path, i, f"'{s.split()[0]}' lines are not "
                             "supported; flatten the net file first")
        if s.startswith(("Switch", "Hca", "Ca", "Rt")):
            m = _NET_HEADER.match(s)
            if not m:
                raise InputError(path, i, f"garbled node header: {s!r}")
            typ, nports, nid, rest = m.groups()
            nports = int(nports)
            if nports < 1 or nports > 254:
                raise InputError(path, i, f"bad port count {nports}")
            kind = {"Switch": "SW", "Rt": "RT"}.get(typ, "CA")
            if nid in recs:
                raise InputError(path, i, f"node id \"{nid}\" already exists")
            desc, tail = _comment_desc(rest)
            guid = cur[kind]
            cur[kind] += 1 if kind == "SW" else nports + 1
            lid = lmc = None
            if kind == "SW":
                ml = re.search(r"\blid (\d+)", tail)
                if ml:
                    lid = int(ml.group(1)) or None
            mp = re.search(r"\b(enhanced|base) port 0\b", tail)
            node = {"id": nid, "kind": kind, "guid": guid,
                    "desc": desc if desc else nid, "nports": nports,
                    "lid": lid, "ports": {}, "line": i,
                    "port0": mp.group(0) if mp else ""}
            recs[nid] = node
            order.append(nid)
            continue
        if re.match(r"(vendid|devid|sysimgguid|width|speed|extspeed|"
                    r"pdebug)\b", s):
            continue
        # ibsim silently ignores other lines; we do the same for text that
        # does not look like a broken record, and fail on record-like text.
        if s.startswith("[") or s.startswith('"'):
            raise InputError(path, i, "port line outside of a node record")
    if not recs:
        raise InputError(path, len(lines), "no Switch/Hca records found")

    def endpoint(rec, port, line):
        if rec["kind"] == "SW":
            return (rec["guid"], port)
        info = rec["ports"].get(port)
        pg = info["pguid"] if info and info.get("pguid") else None
        return (pg if pg is not None else rec["guid"] + port, port)

    # create nodes
    for nid in order:
        rec = recs[nid]
        if rec["kind"] == "RT":
            continue
        if rec["kind"] == "SW":
            topo.nodes[rec["guid"]] = Node(rec["guid"], "SW", rec["desc"],
                                           rec["nports"], rec["lid"],
                                           rec["guid"], 0, nid)
    # CA ports: every port that takes part in a link, from either side
    ca_ports = {}
    for nid in order:
        rec = recs[nid]
        for lp, info in rec["ports"].items():
            r = recs.get(info["remote"])
            if r is None:
                raise InputError(path, info["line"], f"remote node "
                                 f"\"{info['remote']}\" is not defined")
            if info["rport"] > r["nports"]:
                raise InputError(path, info["line"], f"remote port "
                                 f"{info['rport']} out of range for "
                                 f"{r['nports']}-port node \"{r['id']}\"")
            if rec["kind"] == "CA":
                ca_ports[(nid, lp)] = info["line"]
            if r["kind"] == "CA":
                ca_ports.setdefault((info["remote"], info["rport"]),
                                    info["line"])
    for (nid, lp) in sorted(ca_ports, key=lambda k: (order.index(k[0]), k[1])):
        rec = recs[nid]
        pg, _ = endpoint(rec, lp, 0)
        info = rec["ports"].get(lp, {})
        if pg in topo.nodes:
            raise InputError(path, ca_ports[(nid, lp)],
                             f"port GUID 0x{pg:016x} used twice")
        topo.nodes[pg] = Node(pg, "CA", rec["desc"], rec["nports"],
                              info.get("lid"), rec["guid"], lp, nid)
    for nid in order:
        rec = recs[nid]
        if rec["kind"] == "RT":
            continue
        for lp, info in rec["ports"].items():
            r = recs[info["remote"]]
            if r["kind"] == "RT":
                continue
            a = endpoint(rec, lp, info["line"])
            b = endpoint(r, info["rport"], info["line"])
            back = r["ports"].get(info["rport"])
            if back is not None and (back["remote"] != nid or
                                     back["rport"] != lp):
                raise InputError(path, info["line"], f"link \"{nid}\"[{lp}] "
                                 f"-> \"{r['id']}\"[{info['rport']}] but "
                                 f"line {back['line']} links \"{r['id']}\""
                                 f"[{info['rport']}] to \"{back['remote']}\""
                                 f"[{back['rport']}]")

            def err(msg, ln=info["line"]):
                raise InputError(path, ln, msg)
            topo._add_link(a, b, err)
            if info.get("rate"):
                topo.rates.setdefault(a, info["rate"])
                topo.rates.setdefault(b, info["rate"])
    topo.lmc = max(lmcs) if lmcs else None
    topo.records = [recs[nid] for nid in order]
    # '# updn-root 0xGUID [name]' comment lines (gen-fabric writes them):
    # [(GUID, name)] in file order
    topo.updn_roots = roots
    for line in lines[:8]:
        m = re.match(r"#\s*Initiated from node ([0-9a-fA-F]+)", line)
        if m:
            topo.origin = int(m.group(1), 16)
    _finish_lids(topo, path)
    return topo


def _port_rate(rest):
    """(width, speed) of a port line's trailer such as '# lid 3 4xQDR', taken
    from the text after the last quoted string; None when there is none."""
    k = rest.rfind('"')
    hits = re.findall(r"\b(\d+)x([A-Za-z][A-Za-z0-9]*)\b", rest[k + 1:])
    if not hits:
        return None
    w, sp = hits[-1]
    return int(w), sp


# --------------------------------------------------------------------------
# LFT parsers

@dataclass
class SwitchLft:
    guid: int
    lid: Optional[int]
    desc: str
    lft: Dict[int, int] = field(default_factory=dict)
    lineno: int = 0


class Lfts:
    """Unicast forwarding tables of many switches.

    switches: switch node GUID -> SwitchLft
    lid_info: LID -> (port GUID, 'SW' | 'CA', description)
    lmc:      LMC from "(path #k out of n)" or inferred from LID ranges
    """

    def __init__(self):
        self.switches: Dict[int, SwitchLft] = {}
        self.lid_info: Dict[int, Tuple[int, str, str]] = {}
        self.lmc: Optional[int] = None
        self.path: str = ""
        self.fmt: str = ""
        self.lid_line: Dict[int, int] = {}   # LID -> first line naming it

    def port_lids(self) -> Dict[int, List[int]]:
        """port GUID -> sorted LIDs, from the dump comments."""
        out: Dict[int, List[int]] = {}
        for lid, (g, _k, _d) in self.lid_info.items():
            out.setdefault(g, []).append(lid)
        for v in out.values():
            v.sort()
        return out


_OSM_HDR = re.compile(r"^Unicast lids \[0-(\d+)\] of switch Lid (\d+) guid "
                      r"0x([0-9a-fA-F]+) \('(.*)'\):\s*$")
_IBR_HDR = re.compile(r"^Unicast lids \[0x([0-9a-fA-F]+)-0x([0-9a-fA-F]+)\] "
                      r"of switch (?:Lid (\d+)|DR path (.*?)) guid "
                      r"0x([0-9a-fA-F]+) \((.*)\):\s*$")
_OSM_ENT = re.compile(r"0x([0-9a-fA-F]+) (\d+) # (.*?)\s*$")
_IBR_ENT = re.compile(r"0x([0-9a-fA-F]+) (\d+) : \((.*)\)\s*$")
_FOOTER = re.compile(r"^(\d+) (valid )?lids dumped$")
_IBR_COLS = re.compile(r"^(Lid\s+Out\s+Destination|Port\s+Info)$")
_INFO_NAMED = re.compile(r"^(Switch|Channel Adapter|Router|[\w ]+?) portguid "
                         r"0x([0-9a-fA-F]+): '(.*)'$")
_INFO_PATH = re.compile(r"^path #(\d+) out of (\d+): portguid "
                        r"0x([0-9a-fA-F]+)$")
_INFO_UNKNOWN = ("unknown node and type", "")


_HDR_GUID = re.compile(rb"guid 0x([0-9a-fA-F]+)")


def load_lft_arrays(path):
    """The entries alone of an LFT dump (opensm-lfts.dump or ibroute /
    dump_fts), fast: {switch GUID: uint8 array of out ports indexed by
    LID, 255 = none}.  load_lfts() reads the same formats whole (comments,
    checks, a dict per switch) at ~10 us an entry, too slow and too big
    for the 78 M entries of an 11,664-host fabric at LMC 2; here numpy
    parses the entry lines ('0x%04x %03u' in both formats) in 64 MiB
    chunks, about 1 us and one byte an entry.  Raises InputError."""
    import numpy as np

    tables = {}
    cur = None
    carry = b""
    try:
        f = open(path, "rb")
    except OSError as e:
        raise InputError(path, 0, f"cannot read: {e.strerror}") from None
    with f:
        while True:
            data = f.read(1 << 26)
            if data:
                data = carry + data
                cut = data.rfind(b"\n") + 1
                carry, data = data[cut:], data[:cut]
                if not data:
                    continue
            elif carry:
                data, carry = carry + b"\n", b""
            else:
                break
            buf = np.frombuffer(data, np.uint8)
            nl = np.flatnonzero(buf == 10)
            starts = np.empty(len(nl), np.int64)
            starts[0] = 0
            starts[1:] = nl[:-1] + 1
            lens = nl - starts
            first = buf[starts]
            second = buf[np.minimum(starts + 1, len(buf) - 1)]
            is_ent = (first == 0x30) & (second == 0x78) & (lens >= 10)
            hdrs = np.flatnonzero(first == 0x55)        # 'U'nicast lids
            segs = []
            prev, g = 0, cur
            for h in hdrs:
                segs.append((g, prev, h))
                line = bytes(buf[starts[h]:nl[h]])
                m = _HDR_GUID.search(line)
                if not m:
                    raise InputError(path, 0, "switch header without "
                                     "GUID: %r" % line[:80])
                g = int(m.group(1), 16)
                prev = h + 1
            segs.append((g, prev, len(starts)))
            cur = g
            for g, a, b in segs:
                sel = np.flatnonzero(is_ent[a:b]) + a
                if not len(sel):
                    continue
                if g is None:
                    raise InputError(path, 0, "LFT entries before any "
                                     "switch header")
                s = starts[sel]
                hx = buf[s[:, None] + np.arange(2, 6)].astype(np.int32)
                hx = np.where(hx <= 0x39, hx - 0x30, (hx | 0x20) - 87)
                lid = ((hx[:, 0] * 16 + hx[:, 1]) * 16 + hx[:, 2]) * 16 + \
                    hx[:, 3]
                dg = buf[s[:, None] + np.arange(7, 10)].astype(np.int32) - \
                    0x30
                port = dg[:, 0] * 100 + dg[:, 1] * 10 + dg[:, 2]
                arr = tables.get(g)
                need = int(lid.max()) + 1
                if arr is None or len(arr) < need:
                    new = np.full(max(need, 64), 255, np.uint8)
                    if arr is not None:
                        new[:len(arr)] = arr
                    arr = tables[g] = new
                arr[lid] = port
    return tables


def load_lfts(path) -> Lfts:
    """Read an LFT dump, auto-detecting its format (streams the file)."""
    try:
        with open(path, "r", encoding="utf-8", errors="replace") as f:
            return parse_lfts_text(f, str(path))
    except OSError as e:
        raise InputError(path, 0, f"cannot read: {e.strerror}") from None


def _parse_info(info):
    """Comment of an LFT entry -> ('named', guid, kind, desc) |
    ('path', guid, k, n) | ('none',) | None if garbled."""
    mi = _INFO_NAMED.match(info)
    if mi:
        kind = "SW" if mi.group(1) == "Switch" else "CA"
        return ("named", int(mi.group(2), 16), kind, mi.group(3))
    mp = _INFO_PATH.match(info)
    if mp:
        return ("path", int(mp.group(3), 16), int(mp.group(1)),
                int(mp.group(2)))
    if info.strip() in _INFO_UNKNOWN:
        return ("none",)
    return None


class _Lines:
    """Iterate lines, remembering the last one: does the input end in the
    middle of a line (no newline after the last, while earlier lines had
    one or the input was a string)?"""

    def __init__(self, lines, text):
        self.lines = lines
        self.text = text
        self.prev = self.last = ""

    def __iter__(self):
        for line in self.lines:
            self.prev = self.last
            self.last = line
            yield line

    def cut(self):
        nl = ("\n", "\r")
        return bool(self.last.strip()) and not self.last.endswith(nl) and \
            (self.text or self.prev.endswith(nl))


def parse_lfts_text(lines, path="<input>") -> Lfts:
    """Parse LFT dump text (a string or an iterable of lines).  A dump
    that ends in the middle of a line and fails there is reported as
    truncated."""
    text = isinstance(lines, str)
    src = _Lines(lines.splitlines(keepends=True) if text else lines, text)
    try:
        return _parse_lfts(src, path)
    except InputError as e:
        if src.cut() and "truncated?" not in e.msg:
            raise InputError(e.path, e.lineno, e.msg + _TRUNCATED) from None
        raise


def _parse_lfts(lines, path) -> Lfts:
    res = Lfts()
    res.path = path
    lid_info = res.lid_info
    lid_line = res.lid_line
    cur = None          # current SwitchLft
    lft = None
    cur_fmt = None
    ent_re = _OSM_ENT
    cur_max = 0
    path_n = set()
    first_hdr = None
    info_cache = {}
    lid_ints = {}
    i = 0
    for i, line in enumerate(lines, 1):
        if cur is not None:
            m = ent_re.match(line)
            if m is not None:
                lid = int(m.group(1), 16)
                port = int(m.group(2))
                if lid > cur_max or lid in lft or port > 254 or lid == 0:
                    if lid > cur_max:
                        msg = f"LID {lid} above the block's range 0-{cur_max}"
                    elif lid in lft:
                        msg = (f"LID {lid} listed twice for switch "
                               f"0x{cur.guid:016x}")
                    elif lid == 0:
                        msg = "LID 0 is not a unicast LID"
                    else:
                        msg = f"port {port} out of range"
                    raise InputError(path, i, msg)
                # share one int object per LID among all switches' tables
                lid = lid_ints.setdefault(lid, lid)
                lft[lid] = port
                info = m.group(3)
                pi = info_cache.get(info)
                if pi is None:
                    pi = _parse_info(info)
                    if pi is None:
                        raise InputError(path, i, "garbled LFT entry "
                                         f"comment: {info!r}")
                    info_cache[info] = pi
                t = pi[0]
                if t == "named":
                    entry = pi[1:]
                elif t == "path":
                    k, n = pi[2], pi[3]
                    if n < 2 or n & (n - 1) or k < 1 or k > n or n > 128:
                        raise InputError(path, i, "bad path numbering "
                                         f"'path #{k} out of {n}'")
                    path_n.add(n)
                    g = pi[1]
                    b = lid_info.get(lid - (k - 1))
                    entry = (g, b[1], b[2]) if b and b[0] == g else \
                        (g, "CA", "")
                else:
                    continue
                old = lid_info.get(lid)
                if old is None:
                    lid_info[lid] = entry
                    lid_line[lid] = i
                elif old[0] != entry[0]:
                    raise InputError(path, i, f"LID {lid} belongs to "
                                     f"0x{old[0]:016x} in an earlier block "
                                     f"but to 0x{entry[0]:016x} here")
                elif not old[2] and entry[2]:
                    lid_info[lid] = entry
                continue
        s = line.strip()
        if not s or s.startswith("ibwarn:"):
            continue
        if s.startswith("Unicast lids"):
            if cur is not None:
                raise InputError(path, i, f"switch block of line "
                                 f"{cur.lineno} has no 'lids dumped' footer "
                                 "(truncated?)")
            m = _OSM_HDR.match(s)
            if m:
                cur_fmt, ent_re = "opensm", _OSM_ENT
                cur_max = int(m.group(1))
                cur = SwitchLft(int(m.group(3), 16), int(m.group(2)) or None,
                                m.group(4), {}, i)
            else:
                m = _IBR_HDR.match(s)
                if not m:
                    raise InputError(path, i, f"garbled switch header: {s!r}")
                cur_fmt, ent_re = "ibroute", _IBR_ENT
                cur_max = int(m.group(2), 16)
                lid = int(m.group(3)) if m.group(3) else None
                cur = SwitchLft(int(m.group(5), 16), lid, m.group(6), {}, i)
            lft = cur.lft
            if res.fmt and res.fmt != cur_fmt:
                raise InputError(path, i, "mixes opensm-lfts.dump and "
                                 "ibroute/dump_fts blocks")
            res.fmt = cur_fmt
            if first_hdr is None:
                first_hdr = i
            if cur.guid in res.switches:
                raise InputError(path, i, f"switch 0x{cur.guid:016x} dumped "
                                 "twice (first at line "
                                 f"{res.switches[cur.guid].lineno})")
            continue
        if cur is None:
            if first_hdr is None:
                raise InputError(path, i, "not an LFT dump (expected "
                                 "'Unicast lids [...] of switch ...' header)")
            raise InputError(path, i, f"text outside of a switch block: {s!r}")
        m = _FOOTER.match(s)
        if m:
            n = int(m.group(1))
            if cur_fmt == "ibroute" and n != len(lft):
                raise InputError(path, i, f"footer says {n} lids but the "
                                 f"block has {len(lft)}")
            if cur_fmt == "opensm" and n != cur_max:
                raise InputError(path, i, f"footer says {n} lids but the "
                                 f"header says 0-{cur_max}")
            if cur.lid is None:
                cur.lid = next((l for l, p in lft.items() if p == 0 and
                                lid_info.get(l, (None,))[0] == cur.guid),
                               None)
            res.switches[cur.guid] = cur
            cur = lft = None
            continue
        if cur_fmt == "ibroute" and _IBR_COLS.match(s):
            continue
        raise InputError(path, i, f"garbled LFT entry: {s!r}")
    if cur is not None:
        if lines.cut():
            raise InputError(path, i, f"the file ends mid-line in the switch "
                             f"block of line {cur.lineno} (truncated?)")
        raise InputError(path, i, f"switch block of line {cur.lineno} has no "
                         "'lids dumped' footer (truncated?)")
    if not res.switches:
        raise InputError(path, i, "no switch blocks found")
    if len(path_n) > 1:
        raise InputError(path, first_hdr, "inconsistent LMC: paths out of "
                         f"{sorted(path_n)}")
    if path_n:
        res.lmc = int(math.log2(path_n.pop()))
    else:
        res.lmc = _infer_lmc(res)
    return res


def _infer_lmc(res) -> Optional[int]:
    if not res.lid_info:
        return None
    counts = {}
    for lid, (g, kind, _d) in res.lid_info.items():
        if kind == "CA":
            counts.setdefault(g, []).append(lid)
    if not counts:
        return 0
    n = max(len(v) for v in counts.values())
    lmc = max(0, (n - 1).bit_length())
    return lmc
