"""bench-quality's charts: one PNG per traffic (base-LID, LMC-spread) with
a bar per fabric and configuration, the bound and 0.95 x bound."""

from osmoffset.quality import (ORDERS, ORDER_TITLE, OURS, TARGET,
                               cell_value, fabric_bound)


def charts(results, fabrics, configs, lmcs, no_random, stem, finfo):
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.patches import Patch
    lmc = max(lmcs)
    written = []
    cmap = plt.get_cmap("tab10")
    for what in ("base", "spread"):
        if what == "spread" and lmc == 0:
            continue
        orders = [o for o in ORDERS
                  if o == "topo" or not all(f in no_random for f in fabrics)]
        fig, axes = plt.subplots(len(orders), 1,
                                 figsize=(max(10, 1.25 * len(fabrics) + 3),
                                          4.2 * len(orders)),
                                 squeeze=False)
        n = len(configs)
        width = 0.84 / n
        for ax, order in zip(axes[:, 0], orders):
            for j, c in enumerate(configs):
                xs, ys, hatch = [], [], []
                for i, f in enumerate(fabrics):
                    v = cell_value(results, f, c, lmc, order, what)
                    if v is None:
                        continue
                    r = results.get((f, c, lmc))
                    xs.append(i - 0.42 + (j + 0.5) * width)
                    ys.append(v)
                    hatch.append(bool(r.get("fallback")))
                bars = ax.bar(xs, ys, width * 0.95, color=cmap(j % 10),
                              edgecolor="black" if c in OURS else "none",
                              linewidth=0.8)
                for b, h in zip(bars, hatch):
                    if h:
                        b.set_hatch("xxx")
                        b.set_edgecolor("0.25")
                        b.set_linewidth(0.5)
                        b.set_alpha(0.6)
            for i, f in enumerate(fabrics):
                b = fabric_bound(results, f, configs, lmcs, order)
                if b is not None and not (order == "random"
                                          and f in no_random):
                    ax.plot([i - 0.45, i + 0.45], [b, b], color="black",
                            linewidth=1.4, zorder=3)
                    ax.plot([i - 0.45, i + 0.45], [TARGET * b] * 2,
                            color="black", linewidth=0.8, linestyle=":",
                            zorder=3)
                    pb = finfo[f]["path_bound"][order][
                        "0" if what == "base" else str(lmc)]
                    if pb < b - 1e-6:
                        ax.plot([i - 0.45, i + 0.45], [pb, pb],
                                color="dimgray", linewidth=1.4,
                                linestyle="--", zorder=3)
            ax.set_xticks(range(len(fabrics)))
            ax.set_xticklabels(fabrics, rotation=20, ha="right", fontsize=8)
            ax.set_xlim(-0.55, len(fabrics) - 0.45)
            ax.set_ylim(0, 1.08)
            ax.set_ylabel("alltoall efficiency")
            ax.grid(axis="y", alpha=0.3)
            ax.set_title("%s efficiency at LMC %d, %s"
                         % ("base-LID" if what == "base" else
                            "LMC-spread", lmc, ORDER_TITLE[order]),
                         fontsize=10)
        handles = [Patch(facecolor=cmap(j % 10),
                         edgecolor="black" if c in OURS else "none",
                         label=c) for j, c in enumerate(configs)]
        handles.append(Patch(facecolor="white", edgecolor="grey",
                             hatch="xx", label="engine fell back"))
        handles.append(plt.Line2D([], [], color="black", label="bound"))
        handles.append(plt.Line2D([], [], color="black", linestyle=":",
                                  linewidth=0.8, label="0.95 x bound"))
        handles.append(plt.Line2D([], [], color="dimgray", linestyle="--",
                                  linewidth=1.4, label="1-path bound"))
        fig.legend(handles=handles, loc="upper center",
                   ncol=min(7, len(handles)), fontsize=8, frameon=False)
        fig.tight_layout(rect=(0, 0, 1, 0.93 if len(orders) > 1 else 0.88))
        path = "%s-%s.png" % (stem, what)
        fig.savefig(path, dpi=90)
        plt.close(fig)
        written.append(path)
    return written

