"""The sweep figure: MRR against the relevant passage's start token, one small panel per model (shared axes),
with its 95% interval, the first window's edge and the random-order level."""

from __future__ import annotations

import math

import pandas as pd

from posbias.reporting.figure_files import plt, save_figure


def sweep_figure(curves: pd.DataFrame, first_window: int, random_mrr: float, outputs: list[str],
                 columns: int = 4) -> None:
    models = list(dict.fromkeys(curves["model"]))
    rows = math.ceil(len(models) / columns)
    fig, axes = plt.subplots(rows, min(columns, len(models)), figsize=(2.4 * min(columns, len(models)), 2.0 * rows),
                             sharex=True, sharey=True, squeeze=False)
    for ax, model in zip(axes.flat, models):
        curve = curves[curves["model"] == model].sort_values("position")
        ax.fill_between(curve["mean_start"], curve["mrr_ci_low"], curve["mrr_ci_high"], color="#4878a8", alpha=0.2,
                        linewidth=0)
        ax.plot(curve["mean_start"], curve["mrr"], marker="o", markersize=3, color="#4878a8")
        marked = curve[curve["significant"]]
        ax.plot(marked["mean_start"], marked["mrr"], linestyle="none", marker="o", markersize=5, mfc="none",
                color="#c44e52")
        ax.axvline(first_window, color="grey", linestyle=":", linewidth=1)
        ax.axhline(random_mrr, color="#c44e52", linestyle="--", linewidth=1)
        ax.set_title(curve["label"].iloc[0], fontsize="small")
        ax.set_ylim(0, 1.05)
    for ax in axes.flat[len(models):]:
        ax.set_visible(False)
    fig.supxlabel("start token of the relevant passage (mean over queries)", fontsize="small")
    fig.supylabel("MRR", fontsize="small")
    fig.suptitle(f"Position sweep (dotted: first window, {first_window} tokens; dashed: random order, "
                 f"{random_mrr:.3f}; circled: differs from the first position)", fontsize="small")
    save_figure(fig, outputs)
