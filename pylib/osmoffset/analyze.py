"""Analysis of unicast routing (LFTs) on a fabric: the facade.

The work is done in:

  osmoffset.model     the fabric as numpy arrays, the rank order
  osmoffset.validity  the reachability engine (every entry, every LID)
  osmoffset.metrics   validity, paths, shift alltoall, leaf bound,
                      bisection, balance, credit loops, path diversity
  osmoffset.report    result dict, text report, comparison, CSV rows
  osmoffset.plot      PNG figures

Analysis(topo, lfts, ...) builds the model and the rank order; run()
computes every metric and returns (and keeps in .result) the dict that
lft-analyze --json prints.  The single steps (validate, build_paths,
shift, ...) may be called on their own in that order; their results are
kept as attributes (ranks, paths, leafpos, host_leaf, nl, W, ...).
"""

from __future__ import annotations

import time
from typing import Optional

from . import metrics, report
from .fabric import Lfts, Topology
from .metrics import shift_by_order, shift_random_seeds
from .model import (FabricModel, Host, JOBS, K_DOWN, K_HOST, K_NOENTRY,
                    K_PORT0, K_SWITCH, K_UNLINKED, ORDERS,
                    is_aggregation_node, natural_key)
from .progress import Progress
from .report import format_text

# whose channel dependencies credit_loops() looks at: the routes traffic
# from the CAs takes, or every LFT entry (switch LIDs too)
CREDIT_SCOPES = ("traffic", "every-entry")

__all__ = ["Analysis", "CREDIT_SCOPES", "Progress", "Host", "ORDERS", "JOBS",
           "K_UNLINKED",
           "K_SWITCH", "K_HOST", "K_DOWN", "K_PORT0", "K_NOENTRY",
           "is_aggregation_node", "natural_key", "shift_by_order",
           "shift_random_seeds",
           "format_text"]


class Analysis(FabricModel):
    def __init__(self, topo: Topology, lfts: Lfts, lmc: Optional[int] = None,
                 hostfile: Optional[str] = None, seed: int = 1,
                 bisections: int = 20, diversity_samples: int = 50000,
                 progress: Optional[Progress] = None, order: str = "leaf",
                 job: Optional[str] = None, job_index: int = 0,
                 path_sls=None, credit_scope: str = "traffic",
                 spine_cas: bool = False):
        if credit_scope not in CREDIT_SCOPES:
            raise ValueError(f"credit_scope {credit_scope!r}: one of "
                             f"{', '.join(CREDIT_SCOPES)}")
        self.credit_scope = credit_scope
        self.bisections = bisections
        self.path_sls = path_sls
        self.diversity_samples = diversity_samples
        super().__init__(topo, lfts, lmc=lmc, seed=seed, progress=progress)
        self.set_ranks(hostfile, order, job, job_index, spine_cas)

    # the steps, in the order run() takes them --------------------------
    def validate(self):
        metrics.validate(self)

    def build_paths(self):
        metrics.build_paths(self)

    def balance(self):
        metrics.balance(self)

    def credit_loops(self):
        return metrics.credit_loops(self)

    def shift(self, spread):
        return metrics.shift(self, spread)

    def _load_batch(self, src, cols, weights, nb, rid):
        return metrics.load_batch(self, src, cols, weights, nb, rid)

    @staticmethod
    def _eff(maxloads):
        return metrics.eff(maxloads)

    def leaf_bound(self):
        return metrics.leaf_bound(self)

    def bisection(self, spread):
        return metrics.bisection(self, spread)

    def diversity(self):
        return metrics.diversity(self)

    def port_rows(self):
        return report.port_rows(self)

    # ------------------------------------------------------------------
    def run(self, want_curves=True):
        t0 = time.time()
        self.validate()
        self.build_paths()
        self.balance()
        cyc = self.credit_loops()
        base = self.shift(False)
        spread = self.shift(True) if self.nl > 1 else None
        bound = self.leaf_bound()
        bis_b = self.bisection(False)
        bis_s = self.bisection(True) if self.nl > 1 else None
        div = self.diversity()
        self.curves = {"base": base, "spread": spread, "bound": bound}
        if cyc:
            lane = f" on VL{self.credit_lane}" if self.path_sls else ""
            if self.credit_scope == "every-entry":
                lane = " among the dependencies of every LFT entry"
            self.problem(f"credit loop{lane}: " + " -> ".join(
                f"'{n.desc}'[{p}]" for n, p in cyc))
        self.credit_cycle = cyc
        self.result = report.build_result(self, base, spread, bound, bis_b,
                                          bis_s, div, cyc, t0)
        return self.result
