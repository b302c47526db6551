"""The MPI alltoall A/B test and its simulations (the library of the
alltoall-ab and bench-simulate tools).

  matrix     the configuration matrix and the list options of alltoall-ab
  procs      commands in their own process group (killed on timeout)
  smconf     the OpenSM configuration file: rewrite, backup, restore guard
  subnet     restarting the SM and waiting for the subnet
  bench      a2a-bench: where it is, building it, its CSV files
  launch     srun / mpirun command lines
  abrun      the routing check and benchmark runs of one configuration
  results    results.csv, slowdown.csv and the slowdown table
  plots      slowdown-ENGINE.png and time-ENGINE.png
  predict    --predict: lft-analyze's figures over osm-sim's routes
  simulate   --simulate: a2a-bench in SimGrid SMPI over the LFTs
  simreport  bench-simulate's cases and its Markdown report

This module holds what they share: the two errors the tools turn into
exit codes, the progress channel and the working directory of a run.
"""

import os
import sys
import tempfile

PROG = "alltoall-ab"


class UsageError(Exception):
    """Bad usage or input: exit 2."""


class StepError(Exception):
    """A step failed: exit 1."""


class Interrupted(Exception):
    """A signal arrived (raised by the tool's signal handler)."""

    def __init__(self, signum):
        Exception.__init__(self, "signal %d" % signum)
        self.signum = signum


def on_signal(signum, frame):
    """Signal handler that turns SIGINT/SIGTERM/SIGHUP into Interrupted."""
    raise Interrupted(signum)


# Progress text goes to stdout, or to stderr when stdout carries JSON.
_STREAM = {"stream": "stdout", "prog": PROG}


def set_progress(stream, prog=None):
    """Where say() writes: "stdout", "stderr" (the sys stream of the
    moment), a file object, or None for silence; prog = the program name
    warn() puts in front."""
    _STREAM["stream"] = stream
    if prog:
        _STREAM["prog"] = prog


def say(msg):
    s = _STREAM["stream"]
    if isinstance(s, str):
        s = getattr(sys, s)
    if s is not None:
        s.write(msg + "\n")
        s.flush()


def warn(msg):
    sys.stderr.write("%s: %s\n" % (_STREAM["prog"], msg))
    sys.stderr.flush()


def work_dir(out, prefix):
    """(directory, tmp) where a run keeps its files: --out DIR (created;
    UsageError if it cannot be) with tmp None, else a new temporary
    directory whose TemporaryDirectory tmp removes it (tmp.cleanup())."""
    if out:
        path = os.path.abspath(out)
        try:
            os.makedirs(path, exist_ok=True)
        except OSError as exc:
            raise UsageError("--out %s: %s" % (out, exc.strerror))
        return path, None
    tmp = tempfile.TemporaryDirectory(prefix=prefix)
    return tmp.name, tmp
