"""Launcher command lines for a2a-bench: srun or mpirun --hostfile on the
fabric, mpirun over shared memory on this machine."""

import os
import shlex

from .procs import run_cmd


def mpi_env():
    """Open MPI refuses to run as root without these; harmless elsewhere."""
    if os.geteuid() == 0:
        return {"OMPI_ALLOW_RUN_AS_ROOT": "1",
                "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM": "1"}
    return {}


def is_openmpi(mpirun):
    status, out = run_cmd([mpirun, "--version"], timeout=30)
    return status == 0 and "Open MPI" in out


def launcher_cmd(launcher, bench, bench_argv, np=None, launcher_args="",
                 hostfile=None):
    """argv of one benchmark run: `srun [-n NP] ARGS BENCH ...` or
    `mpirun --hostfile FILE [-np NP] ARGS BENCH ...` (launcher_args is one
    shell-quoted string)."""
    extra = shlex.split(launcher_args)
    if launcher == "srun":
        cmd = ["srun"] + (["-n", str(np)] if np else []) + extra
    elif launcher == "mpirun":
        cmd = ["mpirun", "--hostfile", os.path.abspath(hostfile)] + \
            (["-np", str(np)] if np else []) + extra
    else:
        raise ValueError("unknown launcher %r" % launcher)
    return cmd + [bench] + list(bench_argv)


def local_mpirun_args(n, openmpi=True):
    """mpirun options for n ranks on this machine: Open MPI over shared
    memory, more ranks than cores allowed."""
    extra = ["-np", str(n)]
    if openmpi:
        extra += ["--oversubscribe", "--mca", "btl", "self,vader"]
        if n > (os.cpu_count() or 1):
            # busy-polling ranks sharing a core take milliseconds per step
            extra += ["--mca", "mpi_yield_when_idle", "1"]
    return extra
