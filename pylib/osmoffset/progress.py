"""A one-line progress indicator on stderr for the long analyses."""

import sys
import time

__all__ = ["Progress"]


class Progress:
    """A one-line progress indicator on stderr (only when enabled)."""

    def __init__(self, enabled):
        self.enabled = enabled
        self.label = ""
        self.t0 = time.time()
        self.last = 0.0

    def stage(self, label):
        self.label = label
        self.last = 0.0
        self.update(0, 1)

    def update(self, done, total):
        if not self.enabled:
            return
        now = time.time()
        if now - self.last < 0.2 and done < total:
            return
        self.last = now
        frac = done / total if total else 1.0
        bar = "#" * int(frac * 30)
        sys.stderr.write(f"\r{self.label:<22} [{bar:<30}] {frac * 100:5.1f}%"
                         f" {time.time() - self.t0:6.1f}s")
        sys.stderr.flush()

    def done(self):
        if self.enabled:
            sys.stderr.write("\r" + " " * 75 + "\r")
            sys.stderr.flush()
