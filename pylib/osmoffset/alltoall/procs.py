"""Commands of alltoall-ab: each in its own process group, which is
killed on timeout, error or signal, so an interrupted run leaves no
benchmark or SM command behind."""

import os
import shlex
import shutil
import signal
import subprocess

from . import StepError, say
from .. import paths


def kill_group(proc):
    """SIGTERM, then SIGKILL, the process group of proc (if it runs)."""
    if proc is None or proc.poll() is not None:
        return
    for sig, grace in ((signal.SIGTERM, 5.0), (signal.SIGKILL, 5.0)):
        try:
            os.killpg(proc.pid, sig)
        except OSError:
            pass
        try:
            proc.wait(timeout=grace)
            return
        except subprocess.TimeoutExpired:
            continue


def run_cmd(cmd, timeout=None, env=None, stdout=None, shell=False):
    """Run cmd in its own process group; the group is killed on timeout,
    error or signal.  Returns (status, output text); status None = timed
    out, 127 = could not start.  stdout: a file object to write to instead
    of capturing (the text returned is then stderr)."""
    e = dict(os.environ)
    if env:
        e.update(env)
    try:
        proc = subprocess.Popen(
            cmd, shell=shell, stdin=subprocess.DEVNULL,
            stdout=stdout if stdout is not None else subprocess.PIPE,
            stderr=subprocess.STDOUT if stdout is None else subprocess.PIPE,
            env=e, universal_newlines=True, start_new_session=True)
    except OSError as exc:
        return 127, "%s: %s" % (cmd if isinstance(cmd, str) else cmd[0],
                                exc.strerror)
    try:
        out, err = proc.communicate(timeout=timeout)
        return proc.returncode, (out if stdout is None else err) or ""
    except subprocess.TimeoutExpired:
        kill_group(proc)
        return None, ""
    finally:
        kill_group(proc)


def which(name):
    """shutil.which with /usr/sbin and /sbin added (the SM's tools)."""
    return shutil.which(name, path=os.environ.get("PATH", "") +
                        ":/usr/sbin:/sbin")


def shell_join(cmd):
    return " ".join(shlex.quote(c) for c in cmd)


def run_step(desc, cmd, env, dry, timeout, out_path=None, err_path=None):
    """Run one shell command of a configuration (stdout to out_path,
    stderr to err_path when given); StepError naming desc on failure or
    timeout.  dry: only say what would run."""
    if dry:
        say("would run: %s%s" % (cmd, " > %s" % out_path if out_path
                                 else ""))
        return
    say("  %s: %s" % (desc, cmd))
    if out_path:
        with open(out_path, "w") as f:
            status, err = run_cmd(cmd, shell=True, env=env, stdout=f,
                                  timeout=timeout)
    else:
        status, err = run_cmd(cmd, shell=True, env=env, timeout=timeout)
    if err_path:
        with open(err_path, "w") as f:
            f.write(err)
    if status is None:
        raise StepError("%s timed out after %g s: %s" % (desc, timeout, cmd))
    if status != 0:
        raise StepError("%s failed (exit status %d): %s%s" % (
            desc, status, cmd, ": " + err.strip().splitlines()[-1]
            if err.strip() else ""))


def tool(name, dry=False):
    """argv prefix of an osmoffset tool (lft-analyze, osm-sim); StepError
    if there is none (dry: the plain name)."""
    try:
        return paths.tool_argv(name)
    except FileNotFoundError as exc:
        if dry:
            return [name]
        raise StepError(str(exc))
