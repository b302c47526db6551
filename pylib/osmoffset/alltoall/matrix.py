"""The configuration matrix of alltoall-ab (--engines x --lmc x
--offsetting, with the LMC 0 / port_offsetting off baseline always in it)
and the parsers of its list options."""

import re

from . import UsageError

OFFSETTING_VALUES = ("off", "on", "coordinated", "plain")
DEFAULT_SIZES = [1 << i for i in range(3, 21)]


def parse_int_list(text, opt, lo, hi):
    """Distinct whole numbers lo..hi of a comma-separated list, in order."""
    out = []
    for tok in text.split(","):
        tok = tok.strip()
        if not re.match(r"^\d+$", tok) or not lo <= int(tok) <= hi:
            raise UsageError("%s: %r is not a whole number from %d to %d"
                             % (opt, tok, lo, hi))
        if int(tok) not in out:
            out.append(int(tok))
    return out


def parse_sizes(text):
    """Message sizes of --sizes: bytes with optional K or M (and B)."""
    out = []
    for tok in text.split(","):
        tok = tok.strip()
        m = re.match(r"^(\d+)([kKmM]?)[bB]?$", tok)
        v = int(m.group(1)) << {"": 0, "k": 10, "m": 20}[
            m.group(2).lower()] if m else 0
        if not 1 <= v <= 64 << 20:
            raise UsageError("--sizes: %r is not a size from 1 byte to 64M "
                             "(e.g. 8,1K,1M)" % tok)
        out.append(v)
    return out


def size_text(n):
    """8, 1K, 64K, 1M: a size in bytes as --sizes writes it."""
    for sh, suf in ((20, "M"), (10, "K")):
        if n >= 1 << sh and n % (1 << sh) == 0:
            return "%d%s" % (n >> sh, suf)
    return str(n)


def parse_names(text, opt, allowed=None):
    """Distinct names of a comma-separated list (of `allowed` if given)."""
    out = []
    for tok in text.split(","):
        tok = tok.strip()
        if not re.match(r"^[A-Za-z0-9_-]+$", tok) or (
                allowed and tok not in allowed):
            raise UsageError("%s: bad value %r%s" % (
                opt, tok, " (one of %s)" % ", ".join(allowed)
                if allowed else ""))
        if tok not in out:
            out.append(tok)
    return out


def matrix(engines, lmc, offsetting):
    """(configurations, what was added) of the option texts --engines,
    --lmc and --offsetting.  A configuration is a dict with engine, lmc,
    port_offsetting and name (ENGINE-lmcL-OFFSETTING); per engine by LMC,
    port_offsetting off first."""
    engines = parse_names(engines, "--engines")
    lmcs = parse_int_list(lmc, "--lmc", 0, 7)
    offs = parse_names(offsetting, "--offsetting", OFFSETTING_VALUES)
    added = []
    if 0 not in lmcs:
        lmcs.insert(0, 0)
        added.append("LMC 0")
    if "off" not in offs:
        offs.insert(0, "off")
        added.append("port_offsetting off")
    configs = []
    for e in engines:
        for l in sorted(lmcs):
            for o in sorted(offs, key=lambda v: v != "off"):
                configs.append({"engine": e, "lmc": l,
                                "port_offsetting": o,
                                "name": "%s-lmc%d-%s" % (e, l, o)})
    return configs, added


def args_matrix(args):
    """matrix() of an options object with engines, lmc, offsetting."""
    return matrix(args.engines, args.lmc, args.offsetting)
