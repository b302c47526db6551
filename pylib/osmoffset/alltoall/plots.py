"""The A/B run's plots: per engine slowdown-ENGINE.png (% slower than
LMC 0 / port_offsetting off over the message size) and time-ENGINE.png
(median time per size, log-log).  Colour = LMC; solid lines with circles
= port_offsetting off, dashed and other markers = the other values."""

import os

from . import warn
from .matrix import OFFSETTING_VALUES, size_text
from .results import baseline_name, is_baseline, slower_pct


def _style(c):
    offs = OFFSETTING_VALUES.index(c["port_offsetting"])
    return {"color": "C%d" % c["lmc"], "linestyle": ("-", "--", "-.", ":")
            [offs], "marker": "osD^"[offs],
            "label": "LMC %d, port_offsetting %s" % (c["lmc"],
                                                    c["port_offsetting"])}


def _size_axis(ax, sizes):
    ax.set_xscale("log", base=2)
    ax.set_xticks(sizes)
    ax.set_xticklabels([size_text(s) for s in sizes], rotation=45,
                       fontsize=8)
    ax.minorticks_off()


def _save(plt, fig, ax, sizes, ylabel, title, path):
    """Label a plot over the message sizes, write it to path, close it;
    returns path."""
    _size_axis(ax, sizes)
    ax.set_xlabel("message size per peer (bytes)")
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(path, dpi=100)
    plt.close(fig)
    return path


def write_plots(out, configs, results):
    """Write the PNGs into out; returns their paths ([] and a warning
    without matplotlib).  results: configuration name -> combined rows."""
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        warn("matplotlib missing: no plots")
        return []
    files = []
    engines = []
    for c in configs:
        if c["engine"] not in engines:
            engines.append(c["engine"])
    for eng in engines:
        cs = [c for c in configs if c["engine"] == eng and
              c["name"] in results]
        base = results.get(baseline_name({"engine": eng}))
        if not base:
            continue
        sizes = [r["bytes"] for r in base]
        fig, ax = plt.subplots(figsize=(8, 5))
        for c in cs:
            if is_baseline(c):
                continue
            ys = [slower_pct(r["median_us"], b["median_us"])
                  for r, b in zip(results[c["name"]], base)]
            ax.plot(sizes, ys, **_style(c))
        ax.axhline(0, color="black", linewidth=0.8)
        files.append(_save(plt, fig, ax, sizes,
                           "% slower than LMC 0, offsetting off",
                           "alltoall, %s: slowdown against LMC 0" % eng,
                           os.path.join(out, "slowdown-%s.png" % eng)))
        fig, ax = plt.subplots(figsize=(8, 5))
        for c in cs:
            ax.plot(sizes, [r["median_us"] for r in results[c["name"]]],
                    **_style(c))
        ax.set_yscale("log")
        files.append(_save(plt, fig, ax, sizes,
                           "median time (us, max over ranks)",
                           "alltoall, %s: time per size" % eng,
                           os.path.join(out, "time-%s.png" % eng)))
    return files
