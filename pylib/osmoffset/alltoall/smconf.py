"""The OpenSM configuration file during an A/B run.

rewrite_conf() sets lmc, routing_engine, event_plugin_name (osmoffset
added) and event_plugin_options (port_offsetting=X) and keeps every other
line byte for byte.  ConfGuard owns the file for the run: it refuses to
start over a backup left by a killed run, writes FILE.alltoall-ab.bak
before the first change, rewrites the file in place (inode, owner and
mode kept) and puts the original bytes back.  ConfGuard.session() is the
context that restores the file - at the end, after a failed step, on an
interrupt - with SIGINT/SIGTERM/SIGHUP held back, then restarts the SM
with it.
"""

import os
import re
import shutil
import signal

from . import Interrupted, StepError, UsageError, say, warn
from .procs import run_cmd

BACKUP_SUFFIX = ".alltoall-ab.bak"
KEYS = ("lmc", "routing_engine", "event_plugin_name", "event_plugin_options")
KEY_RE = re.compile(r"^(\s*)([A-Za-z0-9_]+)(?:[ \t]+(.*?))?[ \t]*(\r?\n)?$")


def _tokens(value):
    if value is None or value.strip() in ("", "(null)"):
        return []
    return value.split()


def rewrite_conf(text, lmc, engine, offsetting):
    """Return the configuration text with the four keys set.  Active lines
    of a key are rewritten in place (all of them, OpenSM keeps the last);
    a missing key is appended.  Every other line is kept as it was."""
    lines = text.splitlines(True)
    newline = "\n"
    for ln in lines:
        if ln.endswith("\r\n"):
            newline = "\r\n"
            break
    seen = set()
    out = []

    def value_for(key, old):
        if key == "lmc":
            return str(lmc)
        if key == "routing_engine":
            return engine
        if key == "event_plugin_name":
            names = _tokens(old)
            return " ".join(names + ([] if "osmoffset" in names
                                     else ["osmoffset"]))
        toks = [t for t in _tokens(old)
                if not t.startswith("port_offsetting=")]
        return " ".join(toks + ["port_offsetting=%s" % offsetting])

    for ln in lines:
        m = KEY_RE.match(ln)
        if m and m.group(2) in KEYS:
            key = m.group(2)
            seen.add(key)
            out.append("%s%s %s%s" % (m.group(1), key,
                                      value_for(key, m.group(3)),
                                      m.group(4) or ""))
        else:
            out.append(ln)
    missing = [k for k in KEYS if k not in seen]
    if missing:
        if out and not out[-1].endswith("\n"):
            out.append(newline)
        out.append("# added by alltoall-ab" + newline)
        for k in missing:
            out.append("%s %s%s" % (k, value_for(k, None), newline))
    return "".join(out)


def conf_diff(old, new):
    """'  line N: OLD -> NEW' lines (and '+ NEW' for appended lines)."""
    a, b = old.splitlines(), new.splitlines()
    out = []
    for i, (x, y) in enumerate(zip(a, b), 1):
        if x != y:
            out.append("  line %d: %r -> %r" % (i, x, y))
    for i, y in enumerate(b[len(a):], len(a) + 1):
        out.append("  line %d: + %r" % (i, y))
    return out


def write_in_place(path, data):
    """Overwrite path keeping its inode, owner and mode."""
    with open(path, "r+b") as f:
        f.seek(0)
        f.write(data)
        f.truncate()
        f.flush()
        os.fsync(f.fileno())


class ConfGuard:
    """Owns the OpenSM configuration file during a run: backup, changes,
    restore.  dry: say what would be done, change nothing."""

    def __init__(self, path, dry=False):
        self.path = os.path.abspath(path)
        self.backup = self.path + BACKUP_SUFFIX
        self.dry = dry
        self.original = None
        self.changed = False
        try:
            with open(self.path, "rb") as f:
                self.original = f.read()
        except FileNotFoundError:
            raise UsageError("--opensm-conf %s: no such file (create one "
                             "with: opensm -c %s)" % (path, path))
        except OSError as exc:
            raise UsageError("--opensm-conf %s: %s" % (path, exc.strerror))
        try:
            self.text = self.original.decode("utf-8")
        except UnicodeDecodeError as exc:
            line = self.original[:exc.start].count(b"\n") + 1
            raise UsageError("--opensm-conf %s, line %d: not UTF-8 text"
                             % (path, line))
        if not dry and not os.access(self.path, os.W_OK):
            raise UsageError("--opensm-conf %s: not writable (run as root)"
                             % path)

    def make_backup(self):
        """Copy the file beside itself; UsageError if a differing backup
        of an earlier run is there."""
        if os.path.exists(self.backup):
            with open(self.backup, "rb") as f:
                old = f.read()
            if old != self.original:
                raise UsageError(
                    "backup %s from an earlier run exists and differs from "
                    "%s: that run may have been killed before it could "
                    "restore the file.  Compare the two, put the right one "
                    "in place, remove the backup and start again"
                    % (self.backup, self.path))
        if self.dry:
            say("would copy %s to %s (backup)" % (self.path, self.backup))
            return
        shutil.copy2(self.path, self.backup)
        say("backup of %s: %s" % (self.path, self.backup))

    def apply(self, lmc, engine, offsetting):
        """Write the file for one configuration; returns its text."""
        new = rewrite_conf(self.text, lmc, engine, offsetting)
        diff = conf_diff(self.text, new)
        if self.dry:
            say("would write %s:" % self.path)
            for d in diff:
                say(d)
            return new
        self.changed = True
        write_in_place(self.path, new.encode("utf-8"))
        return new

    def restore(self, keep_backup=False):
        """Put the original bytes back; True if the file is verified."""
        if self.dry or not self.changed:
            return True
        write_in_place(self.path, self.original)
        with open(self.path, "rb") as f:
            ok = f.read() == self.original
        if not ok:
            warn("RESTORE FAILED: %s differs from the original; copy %s "
                 "over it by hand" % (self.path, self.backup))
            return False
        self.changed = False
        if keep_backup:
            say("restored %s (backup kept: %s)" % (self.path, self.backup))
        else:
            try:
                os.unlink(self.backup)
            except OSError:
                pass
            say("restored %s (byte-identical; backup removed)" % self.path)
        return True

    def restore_and_restart(self, restart_cmd, keep_backup=False,
                            final_restart=True):
        """Restore the file with signals held back, then restart the SM
        with it (restart_cmd through /bin/sh) unless final_restart is
        False.  Returns True if the file is verified."""
        sigs = {signal.SIGINT, signal.SIGTERM, signal.SIGHUP}
        old = signal.pthread_sigmask(signal.SIG_BLOCK, sigs)
        try:
            changed = self.changed
            if self.dry:
                say("would restore %s from memory (byte-identical check), "
                    "%s the backup" % (self.path, "keep" if keep_backup
                                       else "then remove"))
                ok = True
            else:
                try:
                    ok = self.restore(keep_backup)
                except OSError as exc:
                    warn("RESTORE FAILED: %s: %s; the original is in %s"
                         % (self.path, exc.strerror, self.backup))
                    return False
            if not final_restart:
                if changed:
                    say("SM not restarted (--no-final-restart): run %s"
                        % restart_cmd)
                return ok
            if self.dry:
                say("would run: %s (SM back on the original file)"
                    % restart_cmd)
                return ok
            if changed and ok:
                say("restarting the SM with the original file: %s"
                    % restart_cmd)
                status, text = run_cmd(restart_cmd, shell=True, timeout=600)
                if status != 0:
                    warn("final restart failed (exit %s): %s; run it by "
                         "hand" % (status, text.strip()[-300:]))
            return ok
        finally:
            signal.pthread_sigmask(signal.SIG_SETMASK, old)

    def session(self, restart_cmd, keep_backup=False, final_restart=True):
        """Context for the run: backup on entry; on exit, however it is
        left, restore_and_restart().  A failed step (StepError), a signal
        (Interrupted) or ^C (KeyboardInterrupt) is kept in .failure and
        not raised, so the caller can write what was measured and then
        raise it; other exceptions pass on after the restore.  .restored
        says whether the file is verified."""
        return _Session(self, restart_cmd, keep_backup, final_restart)


class _Session:
    def __init__(self, guard, restart_cmd, keep_backup, final_restart):
        self.guard = guard
        self.restart_cmd = restart_cmd
        self.keep_backup = keep_backup
        self.final_restart = final_restart
        self.failure = None
        self.restored = None

    def __enter__(self):
        self.guard.make_backup()
        return self

    def __exit__(self, etype, exc, tb):
        self.restored = self.guard.restore_and_restart(
            self.restart_cmd, self.keep_backup, self.final_restart)
        if etype is not None and issubclass(
                etype, (StepError, Interrupted, KeyboardInterrupt)):
            self.failure = exc
            return True
        return False
