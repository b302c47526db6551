"""Per-round model of the schedule an MPI alltoall actually runs.

An alltoall of R ranks built from pairwise exchanges runs R - 1 rounds:

  ring   round k (1 .. R-1): rank i sends to (i + k) mod R and receives
         from (i - k) mod R (SMPI's `ring` alltoall, a2a-bench --pattern
         shift, lft-analyze's shift model);
  pair   round k: rank i exchanges with rank i XOR k (SMPI's `pair`; R must
         be a power of two).

With every flow of a round the same size and links shared fairly, a round
lasts as long as its most loaded link needs: max over links of
(flows on the link) / (link rate).  The model adds the rounds:

  time(size) = size * sum over rounds of max_link(flows / rate)

lft-analyze's efficiency is the mean over rounds of 1 / (largest number of
flows on one link), so its predicted slowdown 1 / efficiency is a harmonic
mean of the round loads: a few rounds with high load weigh less than they
cost.  The sum above is what a synchronised round-by-round exchange takes;
its ratio between two routings is the predicted ratio of alltoall times
(latency and per-message overheads left out, so it holds for large
messages).
"""

from __future__ import annotations

from typing import List

import numpy as np

from .rankorder import Host
from .routes import Routes

__all__ = ["SCHEDULES", "partners", "round_model"]

SCHEDULES = ("ring", "pair")


def partners(R: int, schedule: str):
    """(rounds, R) array: destination rank of every rank in every round."""
    i = np.arange(R)
    if schedule == "ring":
        return np.array([(i + k) % R for k in range(1, R)], dtype=np.int64)
    if schedule == "pair":
        if R & (R - 1):
            raise ValueError("the pair schedule needs a power-of-two rank "
                             "count, not %d" % R)
        return np.array([i ^ k for k in range(1, R)], dtype=np.int64)
    raise ValueError("unknown schedule %r (one of %s)"
                     % (schedule, ", ".join(SCHEDULES)))


def round_model(routes: Routes, order: List[Host], offset: int = 0,
                schedule: str = "ring"):
    """Model the alltoall of the ranks `order` (rank i on order[i]) sending
    to LID base + offset of each peer.  Returns a dict:

      rounds          R - 1
      seconds_per_byte  sum over rounds of the worst link's flows / rate
                      (bytes per second), i.e. time for 1-byte messages
      mean_max_flows  mean over rounds of the largest flow count on a link
      efficiency      mean over rounds of min(1, 1 / largest flow count):
                      lft-analyze's figure, on the same routes
      contention      seconds_per_byte / (rounds / host link rate): 1.0 =
                      every round at the speed of the hosts' own cables
    """
    R = len(order)
    if R < 2:
        raise ValueError("fewer than two ranks")
    paths = routes.all_paths(order, offset)
    H = max(len(p) for row in paths for p in row)
    L = len(routes.link_ends)
    pad = L
    P = np.full((R, R, max(H, 1)), pad, dtype=np.int64)
    for i, row in enumerate(paths):
        for j, p in enumerate(row):
            P[i, j, :len(p)] = p
    inv = np.zeros(L + 1)
    inv[:L] = 8.0 / (np.array(routes.link_gbps) * 1e9)   # s per byte
    part = partners(R, schedule)
    src = np.arange(R)
    spb, flows, eff = 0.0, [], []
    for dst in part:
        ids = P[src, dst].ravel()
        cnt = np.bincount(ids, minlength=L + 1)
        cnt[pad] = 0
        spb += float((cnt * inv).max())
        m = int(cnt.max())
        flows.append(m)
        eff.append(min(1.0, 1.0 / m) if m else 1.0)
    host_inv = float(np.mean([inv[routes.link(h.guid, h.port)]
                              for h in order]))
    return {"schedule": schedule, "ranks": R, "rounds": R - 1,
            "lid_offset": offset,
            "seconds_per_byte": spb,
            "mean_max_flows": float(np.mean(flows)),
            "worst_flows": int(max(flows)),
            "efficiency": float(np.mean(eff)),
            "contention": spb / ((R - 1) * host_inv)}


def lid_offset_times(routes: Routes, order: List[Host],
                     schedule: str = "ring"):
    """seconds_per_byte of round_model for every LID offset 0 .. 2^LMC-1:
    the alltoall of an MPI that sends all its traffic to base + k."""
    return [round_model(routes, order, k, schedule)["seconds_per_byte"]
            for k in range(1 << routes.lmc)]
