"""Waiting for the subnet after an SM restart: until --wait-cmd exits 0,
or by default until sminfo reports a master SM and ibstat (else
ibv_devinfo) shows the local ports Active with the configured LMC."""

import re
import time

from . import StepError
from .procs import run_cmd, which


# how each tool shows the ports: (command, port header, state, its
# value when active, LMC, base of the LMC number)
_PORT_TOOLS = (
    (["ibstat"], r"\n\s*Port \d+:", r"State:\s*(\S+)", "Active",
     r"LMC:\s*(\d+)", 10),
    (["ibv_devinfo", "-v"], r"\n\s*port:\s*\d+", r"state:\s*(\S+)",
     "PORT_ACTIVE", r"\blmc:\s*(?:0x)?([0-9a-fA-F]+)", 16),
)


def local_ports():
    """[(state_active, lmc or None)] of the local HCA ports, from ibstat,
    else ibv_devinfo; None if neither tool works."""
    for cmd, port_re, state_re, active, lmc_re, base in _PORT_TOOLS:
        if not which(cmd[0]):
            continue
        status, out = run_cmd([which(cmd[0])] + cmd[1:], timeout=30)
        if status == 0:
            ports = []
            for block in re.split(port_re, out)[1:]:
                st = re.search(state_re, block)
                lm = re.search(lmc_re, block)
                ports.append((bool(st) and st.group(1) == active,
                              int(lm.group(1), base) if lm else None))
            return ports
    return None


def subnet_up(lmc):
    """(up, why-not) with the default checks."""
    sminfo = which("sminfo")
    if not sminfo:
        return False, "sminfo not found (install infiniband-diags)"
    status, out = run_cmd([sminfo], timeout=30)
    if status != 0 or "SMINFO_MASTER" not in out:
        return False, "sminfo: no master SM yet (%s)" % (
            out.strip().splitlines()[-1] if out.strip() else
            "status %s" % status)
    ports = local_ports()
    if ports is None:
        return False, "neither ibstat nor ibv_devinfo works"
    active = [p for p in ports if p[0]]
    if not active:
        return False, "no local port is Active"
    wrong = [p[1] for p in active if p[1] is not None and p[1] != lmc]
    if wrong:
        return False, "local port shows LMC %d, not %d yet" % (wrong[0], lmc)
    return True, ""


def wait_subnet(lmc, env, wait_cmd=None, wait_timeout=300.0, settle=10.0):
    """Poll every second until the subnet is up with LMC lmc (wait_cmd
    through /bin/sh exits 0, or subnet_up()), then sleep settle seconds;
    StepError after wait_timeout seconds."""
    deadline = time.monotonic() + wait_timeout
    why = ""
    while True:
        if wait_cmd:
            status, out = run_cmd(wait_cmd, shell=True, env=env,
                                  timeout=max(1.0, deadline -
                                              time.monotonic()))
            if status == 0:
                break
            why = "--wait-cmd exited %s: %s" % (
                status, out.strip()[-300:])
        else:
            up, why = subnet_up(lmc)
            if up:
                break
        if time.monotonic() >= deadline:
            raise StepError("the subnet was not up within %g s: %s"
                            % (wait_timeout, why))
        time.sleep(1.0)
    if settle > 0:
        time.sleep(settle)
