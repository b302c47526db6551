"""PNG figures for lft-analyze (matplotlib, Agg backend)."""

from __future__ import annotations

import os

import matplotlib
matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402

from .model import K_SWITCH, K_HOST  # noqa: E402


def _port_matrix(an, which):
    """(switches, ports 1..P) LID counts, NaN where the port has no link."""
    m = (an.port_base if which == "base" else an.port_all)[:, 1:].astype(float)
    linked = np.isin(an.rkind[:, 1:], (K_SWITCH, K_HOST))
    m[~linked & (m == 0)] = np.nan
    return m


def _heatmap(ax, an, which, title):
    m = _port_matrix(an, which)
    cmap = matplotlib.colormaps["viridis"].copy()
    cmap.set_bad("#dddddd")
    im = ax.imshow(np.ma.masked_invalid(m), aspect="auto", cmap=cmap,
                   interpolation="nearest",
                   extent=(0.5, m.shape[1] + 0.5, m.shape[0] - 0.5, -0.5))
    ax.set_xlabel("egress port")
    ax.set_ylabel("switch")
    ax.set_title(title, fontsize=9)
    rows = switch_ticks(an.S, ax.figure.get_figheight())
    ax.set_yticks(rows)
    ax.set_yticklabels([an.sw_nodes[s].desc for s in rows],
                       fontsize=6 if len(rows) <= 40 else 5)
    plt.colorbar(im, ax=ax, label=f"{which} LIDs routed")


def switch_ticks(nsw, height_in):
    """Rows of a heatmap of nsw switches that get their name: all of them
    when they fit (about 9 rows an inch at 5-6 pt), else evenly spaced
    ones, first and last included."""
    fit = max(2, int(height_in * 9))
    if nsw <= fit:
        return list(range(nsw))
    step = -(-(nsw - 1) // (fit - 1))
    rows = list(range(0, nsw - 1, step))
    return rows + [nsw - 1]


def _heatmaps(fig, axes, an, label):
    _heatmap(axes[0], an, "base", f"{label}: base LIDs per port")
    _heatmap(axes[1], an, "all", f"{label}: all LIDs per port")


def _curve(ax, an, label, style="-"):
    c = an.curves
    x = np.arange(1, c["base"].size + 1)
    ax.plot(x, c["bound"], style, color="tab:gray", lw=3, alpha=0.4,
            label=f"{label} leaf bound")
    ax.plot(x, c["base"], style, color="tab:red", lw=1,
            label=f"{label} base LID")
    if c["spread"] is not None:
        ax.plot(x, c["spread"], style, color="tab:blue", lw=1,
                label=f"{label} LMC spread")


def write_plots(outdir, an, an2=None, name1="first", name2="second"):
    """Write the figures; return the list of files written."""
    os.makedirs(outdir, exist_ok=True)
    files = []
    l1 = os.path.basename(name1 or "first")
    l2 = os.path.basename(name2 or "second")
    if an2 is not None and l1 == l2:
        l1, l2 = name1, name2

    h = max(4.0, min(14.0, 0.12 * an.S + 2))
    fig, axes = plt.subplots(1, 2, figsize=(12, h))
    _heatmaps(fig, axes, an, l1)
    fig.tight_layout()
    f = os.path.join(outdir, "port-load.png")
    fig.savefig(f, dpi=100)
    plt.close(fig)
    files.append(f)

    fig, ax = plt.subplots(figsize=(9, 4.5))
    _curve(ax, an, l1)
    if an2 is not None:
        _curve(ax, an2, l2, "--")
    ax.set_xlabel("shift round k (rank i sends to rank i+k)")
    ax.set_ylabel("max load on any link")
    r = an.result
    t = (f"alltoall congestion: base efficiency "
         f"{r['shift']['base']['efficiency']:.3f}")
    if r["shift"]["spread"]:
        t += f", spread {r['shift']['spread']['efficiency']:.3f}"
    if an2 is not None:
        t += (f" | {l2}: base "
              f"{an2.result['shift']['base']['efficiency']:.3f}")
    ax.set_title(t, fontsize=9)
    ax.set_ylim(bottom=0)
    ax.grid(alpha=0.3)
    ax.legend(fontsize=7)
    fig.tight_layout()
    f = os.path.join(outdir, "congestion.png")
    fig.savefig(f, dpi=100)
    plt.close(fig)
    files.append(f)

    if an2 is not None:
        fig, axes = plt.subplots(2, 2, figsize=(12, 2 * h))
        _heatmaps(fig, axes[0], an, l1)
        _heatmaps(fig, axes[1], an2, l2)
        fig.tight_layout()
        f = os.path.join(outdir, "compare-port-load.png")
        fig.savefig(f, dpi=100)
        plt.close(fig)
        files.append(f)
    return files
