#!/usr/bin/python3
# fuzz_fabric.py - fuzz the topology and LFT parsers of osmoffset.fabric
#
# Copyright (c) 2026 The osmoffset authors.
#
# This software is available to you under the terms of the GNU General
# Public License (GPL) Version 2 or the OpenIB.org BSD license; see COPYING.
"""Fuzz osmoffset.fabric.load_topology or load_lfts.

The contract under test: whatever bytes a file holds, the loader returns a
result or raises fabric.InputError (whose message names the file and a
line); any other exception is a finding.

  fuzz_fabric.py topology|lfts [libFuzzer/atheris args] CORPUS_DIR...
      coverage-guided with atheris (pip install atheris), e.g.
      -atheris_runs=N, -max_total_time=SEC, -max_len=BYTES
  fuzz_fabric.py topology|lfts --plain --seconds SEC [--seed S] CORPUS_DIR
      no atheris: a seeded random mutator (byte flips, splices of corpus
      lines, numbers pushed to limits) over the corpus, standard library
      only
  fuzz_fabric.py topology|lfts --replay FILE...
      run files once (regressions, corpus); exit 1 on a finding

Crashing inputs are written to ./crash-* by atheris, and to
crash-<target>-<sha1> in the current directory by --plain.
"""

import hashlib
import os
import random
import sys
import tempfile
import time
import traceback

HERE = os.path.dirname(os.path.realpath(__file__))
sys.path.insert(0, os.path.join(os.path.dirname(HERE), "pylib"))

_ATHERIS = len(sys.argv) > 2 and sys.argv[2] not in ("--plain", "--replay")
if _ATHERIS:
    try:
        import atheris
    except ImportError:
        sys.stderr.write("fuzz_fabric.py: atheris is not installed (pip "
                         "install atheris, or use --plain)\n")
        sys.exit(2)
    with atheris.instrument_imports():
        from osmoffset import fabric  # noqa: E402
else:
    from osmoffset import fabric  # noqa: E402

# a tmpfs file: the loaders are exercised exactly as the tools call them,
# through open() with UTF-8 and errors="replace"
_TMPDIR = "/dev/shm" if os.path.isdir("/dev/shm") else None
_FD, _PATH = tempfile.mkstemp(prefix="osmoffset-fuzz-", dir=_TMPDIR)
os.close(_FD)


def run_one(target, data):
    """Feed data to the loader; InputError is the one accepted failure."""
    with open(_PATH, "wb") as f:
        f.write(data)
    if target == "topology":
        # the ibsim sizing scan never judges: it must not fail at all
        fabric.scan_netfile(_PATH)
    try:
        if target == "topology":
            topo = fabric.load_topology(_PATH)
            # touch what the tools touch next
            topo.switches()
            topo.cas()
        else:
            lfts = fabric.load_lfts(_PATH)
            for sw in lfts.switches.values():
                len(sw.lft)
    except fabric.InputError as exc:
        msg = str(exc)
        if not msg.startswith(_PATH + ":"):
            raise AssertionError("InputError does not name the file: %r"
                                 % msg)


def mutate(rng, data, corpus):
    ops = rng.randrange(1, 6)
    b = bytearray(data)
    for _ in range(ops):
        op = rng.randrange(8)
        if op == 0 and b:                       # flip a byte
            b[rng.randrange(len(b))] = rng.randrange(256)
        elif op == 1 and b:                     # delete a range
            i = rng.randrange(len(b))
            del b[i:i + rng.randrange(1, 32)]
        elif op == 2:                           # insert an interesting token
            tok = rng.choice([b"0x", b"[", b"]", b"\"", b"{", b"}", b":",
                              b"0xffffffffffffffff", b"65535", b"-1", b"\n",
                              b"99999999999999999999", b"\x00", b"\xff",
                              b" ", b"\t", b"#", b"Switch", b"Hca",
                              b"LID:", b"PN:", b"Unicast lids",
                              b"switchguid=", b"include ", b"%d", b"\r\n"])
            i = rng.randrange(len(b) + 1)
            b[i:i] = tok
        elif op == 3 and corpus:                # splice lines of another
            other = rng.choice(corpus).splitlines(True)
            if other:
                lines = bytes(b).splitlines(True)
                i = rng.randrange(len(lines) + 1)
                lines[i:i] = other[rng.randrange(len(other)):][:8]
                b = bytearray(b"".join(lines))
        elif op == 4 and b:                     # duplicate a line
            lines = bytes(b).splitlines(True)
            if lines:
                i = rng.randrange(len(lines))
                lines.insert(i, lines[i])
                b = bytearray(b"".join(lines))
        elif op == 5 and b:                     # change a digit run
            i = rng.randrange(len(b))
            if chr(b[i]).isdigit():
                b[i:i + 1] = str(rng.choice([0, 1, 7, 8, 15, 16, 255, 256,
                                             65535, 65536, 2 ** 64]))\
                    .encode()
        elif op == 6 and b:                     # truncate
            del b[rng.randrange(len(b)):]
        elif op == 7 and b:                     # drop a line
            lines = bytes(b).splitlines(True)
            if lines:
                del lines[rng.randrange(len(lines))]
                b = bytearray(b"".join(lines))
    return bytes(b[:65536])


def load_corpus(dirs):
    out = []
    for d in dirs:
        if os.path.isfile(d):
            with open(d, "rb") as f:
                out.append(f.read())
            continue
        for name in sorted(os.listdir(d)):
            p = os.path.join(d, name)
            if os.path.isfile(p):
                with open(p, "rb") as f:
                    out.append(f.read())
    return out


def save_crash(target, data):
    name = "crash-%s-%s" % (target, hashlib.sha1(data).hexdigest()[:12])
    with open(name, "wb") as f:
        f.write(data)
    return name


def plain(target, argv):
    seconds, seed, dirs = 60.0, 1, []
    i = 0
    while i < len(argv):
        if argv[i] == "--seconds":
            seconds = float(argv[i + 1])
            i += 2
        elif argv[i] == "--seed":
            seed = int(argv[i + 1])
            i += 2
        else:
            dirs.append(argv[i])
            i += 1
    corpus = load_corpus(dirs) or [b""]
    rng = random.Random(seed)
    end = time.monotonic() + seconds
    runs = findings = 0
    seen = set()
    while time.monotonic() < end:
        data = mutate(rng, rng.choice(corpus), corpus)
        runs += 1
        try:
            run_one(target, data)
        except Exception:               # noqa: BLE001 - any is a finding
            tb = traceback.format_exc().splitlines()
            key = tb[-1].split(":")[0] + "|" + "|".join(
                l for l in tb if l.strip().startswith("File"))[-300:]
            if key not in seen:
                seen.add(key)
                findings += 1
                name = save_crash(target, data)
                sys.stderr.write("finding %d (%s): %s\n"
                                 % (findings, name, tb[-1]))
    print("target=%s mode=plain runs=%d findings=%d seconds=%g"
          % (target, runs, findings, seconds))
    return 1 if findings else 0


def replay(target, files):
    bad = 0
    for p in files:
        with open(p, "rb") as f:
            data = f.read()
        try:
            run_one(target, data)
        except Exception:               # noqa: BLE001
            bad += 1
            sys.stderr.write("%s: %s\n" % (p, traceback.format_exc()
                                           .splitlines()[-1]))
    print("target=%s replayed=%d findings=%d" % (target, len(files), bad))
    return 1 if bad else 0


def main(argv):
    if not argv or argv[0] not in ("topology", "lfts"):
        sys.stderr.write(__doc__)
        return 2
    target, rest = argv[0], argv[1:]
    try:
        if rest and rest[0] == "--replay":
            return replay(target, rest[1:])
        if rest and rest[0] == "--plain":
            return plain(target, rest[1:])
        def one_input(data):
            run_one(target, data)

        atheris.Setup([sys.argv[0]] + rest, one_input)
        atheris.Fuzz()
        return 0
    finally:
        try:
            os.unlink(_PATH)
        except OSError:
            pass


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
