"""a2a-bench (bench/alltoall/a2a-bench.c): where it is, building it, its
arguments and its CSV files.

The MPI build is a2a-bench, the SimGrid SMPI build (smpicc) a2a-bench-smpi.
find_bench() looks for a built one, in this order:
  1. $OSMOFFSET_A2A_BENCH (or $OSMOFFSET_A2A_BENCH_SMPI);
  2. bench/alltoall/NAME of the source tree the package runs from, if it
     is newer than a2a-bench.c (make or make check builds it);
  3. PKGLIBEXECDIR/NAME of an installation (make install puts a2a-bench
     there where mpicc exists), else NAME on PATH.
When none is found the tools build one into their --build-dir.

Every rank writes nothing; rank 0 writes the CSV, header HEADER, one row
per message size.
"""

import csv
import os
import shlex
import shutil

from . import StepError, UsageError, say
from .procs import run_cmd, which
from .. import paths

NAME = "a2a-bench"
SMPI_NAME = "a2a-bench-smpi"
ENV = {NAME: "OSMOFFSET_A2A_BENCH", SMPI_NAME: "OSMOFFSET_A2A_BENCH_SMPI"}
HEADER = ["pattern", "ranks", "bytes", "iterations", "min_us",
          "median_us", "mean_us", "max_us", "bw_MBps"]


def source():
    """Path of a2a-bench.c (source tree, else an installed copy in
    PKGDATADIR), or None."""
    root = paths.source_root()
    if root:
        p = os.path.join(root, "bench", "alltoall", "a2a-bench.c")
        if os.path.isfile(p):
            return p
    d = paths.installed_dir("pkgdatadir")
    if d and os.path.isfile(os.path.join(d, "a2a-bench.c")):
        return os.path.join(d, "a2a-bench.c")
    return None


def _source_for(out, missing):
    """(src, fresh): the path of a2a-bench.c (UsageError(missing) when it
    is not here) and whether out is already built from it (is newer)."""
    src = source()
    if src is None:
        raise UsageError(missing)
    return src, (os.path.isfile(out) and
                 os.path.getmtime(out) >= os.path.getmtime(src))


def _executable(p):
    return os.path.isfile(p) and os.access(p, os.X_OK)


def find_bench(name=NAME):
    """A built benchmark `name` (NAME or SMPI_NAME) by the order of the
    module text, or None.  UsageError if the environment variable names
    no executable file."""
    var = ENV[name]
    env = os.environ.get(var)
    if env:
        if not _executable(env):
            raise UsageError("$%s=%s: no executable file" % (var, env))
        return os.path.abspath(env)
    root = paths.source_root()
    if root:
        p = os.path.join(root, "bench", "alltoall", name)
        src = source()
        if _executable(p) and (src is None or os.path.getmtime(p) >=
                               os.path.getmtime(src)):
            return p
    d = paths.installed_dir("pkglibexecdir")
    if d and _executable(os.path.join(d, name)):
        return os.path.join(d, name)
    return shutil.which(name)


def compile_bench(compiler, out, timeout=300.0):
    """Compile a2a-bench.c with compiler (mpicc or smpicc) into out
    unless out is newer than the source; the binary appears atomically,
    so parallel builds cannot clash.  Returns out."""
    src, fresh = _source_for(out, "the benchmark source a2a-bench.c is "
                             "not here: give --bench PATH")
    if fresh:
        return out
    build_dir = os.path.dirname(out) or "."
    try:
        os.makedirs(build_dir, exist_ok=True)
    except OSError as exc:
        raise UsageError("--build-dir %s: %s" % (build_dir, exc.strerror))
    tmp = "%s.tmp%d" % (out, os.getpid())
    cmd = [compiler, "-O2", "-o", tmp, src]
    status, text = run_cmd(cmd, timeout=timeout)
    if status != 0:
        try:
            os.unlink(tmp)
        except OSError:
            pass
        raise StepError("building the benchmark failed (%s): %s" % (
            " ".join(cmd), text.strip()[-2000:] if status is not None
            else "timed out"))
    os.replace(tmp, out)
    return out


def given_bench(path, dry=False):
    """The absolute path of --bench PATH; UsageError if not executable."""
    p = os.path.abspath(path)
    if not dry and not os.access(p, os.X_OK):
        raise UsageError("--bench %s: no executable file" % path)
    return p


def mpi_bench(bench, build_dir, mpicc="mpicc", dry=False):
    """The MPI benchmark: --bench (bench), else find_bench(), else built
    with mpicc into build_dir (dry: only said)."""
    if bench:
        return given_bench(bench, dry)
    found = find_bench(NAME)
    if found:
        return found
    out = os.path.join(build_dir, NAME)
    src, fresh = _source_for(out, "benchmark source a2a-bench.c missing "
                             "and no a2a-bench built: give --bench PATH")
    if fresh:
        return out
    if dry:
        say("would build: %s && mv to %s" % (" ".join(shlex.quote(c) for c in
                                                  [mpicc, "-O2", "-o",
                                                   out + ".tmp%d"
                                                   % os.getpid(), src]),
                                             out))
        return out
    if not which(mpicc):
        raise UsageError("%s not found: install an MPI (e.g. openmpi-bin "
                         "libopenmpi-dev) or give --bench / --mpicc" % mpicc)
    return compile_bench(mpicc, out)


def smpi_bench(bench, build_dir, smpicc="smpicc"):
    """The SMPI benchmark: --bench (bench), else find_bench(SMPI_NAME),
    else built with smpicc into build_dir."""
    if bench:
        return given_bench(bench)
    found = find_bench(SMPI_NAME)
    if found:
        return found
    return compile_bench(smpicc, os.path.join(build_dir, SMPI_NAME))


def bench_args(csv_path, pattern="alltoall", sizes=None, iters=None,
               warmup=None, quiet=True):
    """The benchmark's own arguments."""
    a = ["--csv", csv_path, "--pattern", pattern]
    if sizes:
        a += ["--sizes", ",".join(str(s) for s in sizes)]
    if iters is not None:
        a += ["--iters", str(iters)]
    if warmup is not None:
        a += ["--warmup", str(warmup)]
    if quiet:
        a.append("--quiet")
    return a


def read_csv(path, want_sizes=None):
    """Rows of an a2a-bench CSV file as dicts with numbers converted;
    StepError naming the file and line if it is not what a2a-bench
    writes, or (want_sizes) its sizes are not those."""
    try:
        with open(path, newline="") as f:
            rows = list(csv.reader(f))
    except OSError as exc:
        raise StepError("benchmark CSV %s: %s" % (path, exc.strerror))
    if not rows or rows[0] != HEADER:
        raise StepError("%s:1: not an a2a-bench CSV (header %r)"
                        % (path, ",".join(rows[0]) if rows else ""))
    out = []
    for n, r in enumerate(rows[1:], 2):
        if len(r) != len(HEADER):
            raise StepError("%s:%d: %d fields, expected %d"
                            % (path, n, len(r), len(HEADER)))
        try:
            d = {"pattern": r[0], "ranks": int(r[1]), "bytes": int(r[2]),
                 "iterations": int(r[3])}
            for k, v in zip(HEADER[4:], r[4:]):
                d[k] = float(v)
        except ValueError:
            raise StepError("%s:%d: bad number in %r"
                            % (path, n, ",".join(r))) from None
        out.append(d)
    if want_sizes and [d["bytes"] for d in out] != list(want_sizes):
        raise StepError("%s: sizes %s, expected %s"
                        % (path, [d["bytes"] for d in out],
                           list(want_sizes)))
    return out
