"""Tests of osmoffset.degrade and gen-fabric degrade: random inter-switch
cables taken out of a net file of one's own, none that cuts the fabric.

Run: /usr/bin/python3 -m pytest tests/python/test_degrade.py
"""

import os
import subprocess

import pytest

from conftest import GEN_FABRIC, REPO
from osmoffset import degrade, fabric

TINY = os.path.join(REPO, "tests", "python", "fixtures", "realfab",
                    "tiny-ndr-nosharp.net")
FT2 = os.path.join(REPO, "sim-topologies", "ft2-8x4.net")


def read(path):
    with open(path) as f:
        return f.read()


def isl(text):
    """The inter-switch cables of a net file text, as sorted end pairs."""
    topo = fabric.parse_topology_text(text, "t.net")
    return sorted((a, b) for a, b, _lines in degrade.cables(topo))


def components(text):
    topo = fabric.parse_topology_text(text, "t.net")
    adj = {}
    for rec in topo.records:
        for info in rec["ports"].values():
            adj.setdefault(rec["id"], set()).add(info["remote"])
            adj.setdefault(info["remote"], set()).add(rec["id"])
    left, n = set(adj), 0
    while left:
        stack = [left.pop()]
        n += 1
        while stack:
            for m in adj[stack.pop()]:
                if m in left:
                    left.remove(m)
                    stack.append(m)
    return n


def test_takes_out_the_cables_drawn_both_ends_and_nothing_else():
    text = read(FT2)
    new, gone = degrade.degrade_text(text, FT2, 0.25, 3)
    before, after = isl(text), isl(new)
    assert len(before) == 32 and len(after) == 24 and len(gone) == 8
    assert set(after) < set(before)
    # the 8 cables named are the ones missing, both of their port lines
    # went, and every other line is as it was, in its order
    missing = set(before) - set(after)
    assert sorted(gone) == sorted("%s[%d] - %s[%d]" % (a + b)
                                  for a, b in missing)
    old_lines = text.splitlines()
    new_lines = new.splitlines()
    assert len(old_lines) - len(new_lines) == 16
    it = iter(old_lines)
    assert all(any(l == o for o in it) for l in new_lines)
    assert components(new) == 1


def test_a_seed_draws_the_same_cables():
    text = read(FT2)
    a = degrade.degrade_text(text, FT2, 0.1, 5)
    assert a == degrade.degrade_text(text, FT2, 0.1, 5)
    assert a[1] != degrade.degrade_text(text, FT2, 0.1, 6)[1]
    assert degrade.degrade_text(text, FT2, 0, 5) == (text, [])


def test_no_cable_whose_loss_cuts_the_fabric():
    # the tiny NDR fabric: two leaves, each cabled twice to one spine.
    # One cable of each pair may go, never both
    text = read(TINY)
    assert len(isl(text)) == 4
    for seed in range(1, 9):
        new, gone = degrade.degrade_text(text, TINY, 0.5, seed)
        assert len(gone) == 2 and components(new) == 1
        assert {g.split(" - ")[0].split("[")[0] for g in gone} | \
            {g.split(" - ")[1].split("[")[0] for g in gone} >= \
            {"S-0c42a10300000100", "S-0c42a10300000200"}
    with pytest.raises(degrade.DegradeError,
                       match="could take out only 2 of the 3"):
        degrade.degrade_text(text, TINY, 0.75, 1)


def test_a_cable_listed_from_one_end_only():
    text = ('Switch 4 "a"\n[1]\t"b"[1]\n[2]\t"b"[2]\n[3]\t"h0"[1]\n\n'
            'Switch 4 "b"\n[1]\t"a"[1]\n[3]\t"h1"[1]\n\n'
            'Hca 1 "h0"\n[1]\t"a"[3]\n\nHca 1 "h1"\n[1]\t"b"[3]\n')
    # a[2] - b[2] is written on a's side only
    assert len(isl(text)) == 2
    seen = set()
    for seed in range(1, 20):
        new, gone = degrade.degrade_text(text, "t.net", 0.5, seed)
        assert len(gone) == 1 and len(isl(new)) == 1
        assert components(new) == 1
        seen.add(gone[0])
    assert seen == {"a[1] - b[1]", "a[2] - b[2]"}


def test_bad_requests_name_the_file():
    with pytest.raises(degrade.DegradeError, match=r"in \[0, 1\)"):
        degrade.degrade_text(read(FT2), FT2, 1.0, 1)
    with pytest.raises(fabric.InputError) as e:
        degrade.degrade_text('Switch 4 "a"\n[1]\t"b"[1]\n', "x.net", 0.1, 1)
    assert str(e.value).startswith("x.net:2: ")


def gen(*args):
    return subprocess.run(["/usr/bin/python3", GEN_FABRIC] + list(args),
                          capture_output=True, text=True, timeout=60)


def test_gen_fabric_degrade_records_what_it_took(tmp_path):
    out = tmp_path / "d.net"
    p = gen("degrade", "--net", TINY, "--remove-links", "0.5", "--seed",
            "2", "-o", str(out))
    assert p.returncode == 0, p.stderr
    lines = read(str(out)).splitlines()
    # the file's own leading comments first, then what degrade did
    assert lines[0].startswith("# converted from ibnetdiscover output")
    at = lines.index("# degraded: gen-fabric degrade --net %s "
                     "--remove-links 0.5 --seed 2 -o %s" % (TINY, out))
    assert all(l.startswith("#") for l in lines[:at])
    removed = [l for l in lines if l.startswith("# removed link ")]
    assert len(removed) == 2 and lines[at + 1:at + 3] == removed
    assert len(isl(read(str(out)))) == 2
    # stdout without -o: the same text
    p2 = gen("degrade", "--net", TINY, "--remove-links", "0.5", "--seed",
             "2")
    assert p2.stdout == read(str(out)).replace(" -o %s" % out, "", 1)


@pytest.mark.parametrize("args,msg", [
    (["--net", "/nonexistent.net", "--remove-links", "0.1"],
     "/nonexistent.net: cannot read"),
    (["--net", TINY, "--remove-links", "1.5"], "must be in [0, 1)"),
    (["--net", TINY, "--remove-links", "0.9"], "could take out only 2"),
])
def test_gen_fabric_degrade_bad_requests_exit_2(args, msg):
    p = gen("degrade", *args)
    assert p.returncode == 2
    assert msg in p.stderr and "Traceback" not in p.stderr
    assert p.stdout == ""
