"""Reading valgrind memcheck logs for valgrind-soak: error and leak
records, and which of them have a frame of the osmoffset plugin."""

import re

# Function names of the plugin (static ones appear in valgrind stacks
# because the library keeps its symbol table for debugging).
PLUGIN_FRAME = re.compile(
    r"libosmoffset\.so|\b(oo_\w+|wrap_\w+|build_offset_lfts|build_tree|"
    r"build_switch_lft|route_one_lid|collect_dests|gather_candidates|"
    r"assign_\w+|free_build|free_tree|pick_\w+|coordinated_pick|"
    r"nominal_parents|collect_parent_ranks|measure_trunks|fill_dest|"
    r"map_neighbours)\b")


def records(text):
    """Split a memcheck log into error/leak records (lists of lines
    without the ==PID== prefix)."""
    recs, cur = [], []
    for line in text.splitlines():
        m = re.match(r"==\d+== ?(.*)$", line)
        if not m:
            continue
        body = m.group(1)
        if not cur and re.match(r"Thread \d+:$", body):
            continue
        if not body.strip():
            if cur:
                recs.append(cur)
            cur = []
        else:
            cur.append(body)
    if cur:
        recs.append(cur)
    return recs


def summarise(logs):
    s = {"error_records": 0, "plugin_error_records": 0,
         "plugin_errors": [], "kinds": {},
         "definitely_lost": 0, "indirectly_lost": 0, "possibly_lost": 0,
         "plugin_definitely_lost": 0, "plugin_indirectly_lost": 0,
         "plugin_possibly_lost": 0, "plugin_leaks": [],
         "error_summary": None}
    for path in logs:
        with open(path, errors="replace") as f:
            text = f.read()
        m = re.search(r"ERROR SUMMARY: (\d+) errors from (\d+) contexts",
                      text)
        if m and "opensm" in text:
            s["error_summary"] = "%s errors from %s contexts" % m.groups()
        for key in ("definitely", "indirectly", "possibly"):
            m = re.search(r"%s lost: ([\d,]+) bytes" % key, text)
            if m:
                s[key + "_lost"] += int(m.group(1).replace(",", ""))
        for rec in records(text):
            head = rec[0]
            plugin = any(PLUGIN_FRAME.search(l) for l in rec[1:])
            m = re.match(r"([\d,]+)(?: \([\d,]+ direct, [\d,]+ indirect\))?"
                         r" bytes in [\d,]+ blocks are (definitely|"
                         r"indirectly|possibly) lost", head)
            if m:
                if plugin:
                    s["plugin_%s_lost" % m.group(2)] += \
                        int(m.group(1).replace(",", ""))
                    s["plugin_leaks"].append("\n".join(rec[:12]))
                continue
            if re.match(r"(Invalid (read|write|free)|Conditional jump|"
                        r"Use of uninitialised|Syscall param|Mismatched "
                        r"free|Source and destination overlap|"
                        r"Argument .* of function)", head):
                kind = re.sub(r" of size \d+", "", head)
                s["error_records"] += 1
                s["kinds"][kind] = s["kinds"].get(kind, 0) + 1
                if plugin:
                    s["plugin_error_records"] += 1
                    s["plugin_errors"].append("\n".join(rec[:16]))
    return s
