"""Reader of osmoffset-path-sl.dump: the routes the plugin's reach pass put
on virtual lanes above VL0 (event_plugin_options reach_vls=N).

The plugin writes the file into OpenSM's dump directory next to
opensm-lfts.dump whenever reach_vls is above 1.  Lines:

    # comments ("# lanes N" gives the lanes in use)
    0x<switch node GUID> <destination LID> <SL>

A route starts at a switch: a CA's packets at the switch it is cabled
to.  Every route not listed has SL 0; SL n travels on VL n.
"""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from typing import List, Tuple

from .fabric import InputError

__all__ = ["PathSls", "load_path_sls", "path_sls_in", "FILE_NAME"]

FILE_NAME = "osmoffset-path-sl.dump"

_LANES = re.compile(r"#\s*lanes\s+(\d+)\s*$")


@dataclass
class PathSls:
    path: str
    lanes: int = 1
    routes: List[Tuple[int, int, int, int]] = field(default_factory=list)
    """(switch GUID, destination LID, SL, line number)"""


def load_path_sls(path) -> PathSls:
    """Read an osmoffset-path-sl.dump; InputError names file and line."""
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    except OSError as e:
        raise InputError(path, 0, f"cannot read: {e.strerror}") from None
    out = PathSls(str(path))
    top = 0
    for n, line in enumerate(lines, 1):
        text = line.strip()
        if not text:
            continue
        if text.startswith("#"):
            m = _LANES.match(text)
            if m:
                out.lanes = int(m.group(1))
            continue
        parts = text.split()
        if len(parts) != 3:
            raise InputError(path, n, "expected '0xGUID LID SL', got "
                             f"'{text}'")
        try:
            guid = int(parts[0], 16)
            lid = int(parts[1], 0)
            sl = int(parts[2], 0)
        except ValueError:
            raise InputError(path, n, "expected '0xGUID LID SL', got "
                             f"'{text}'") from None
        if not parts[0].lower().startswith("0x") or not 0 < lid < 0xc000:
            raise InputError(path, n, f"'{text}': a switch GUID (0x...) "
                             "and a unicast LID (1-49151)")
        if not 0 < sl < 16:
            raise InputError(path, n, f"SL {sl} is not 1-15 (routes on "
                             "SL 0 are not listed)")
        top = max(top, sl)
        out.routes.append((guid, lid, sl, n))
    if top >= out.lanes:
        raise InputError(path, 0, f"SL {top} used, but '# lanes "
                         f"{out.lanes}'")
    return out


def path_sls_in(directory):
    """The osmoffset-path-sl.dump an OpenSM run left in directory, or
    None (no lanes above VL0 asked for)."""
    path = os.path.join(str(directory), FILE_NAME)
    return load_path_sls(path) if os.path.exists(path) else None
