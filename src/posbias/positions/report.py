"""Figures 1 and 7 of the long-document study: per query-set group, a histogram of the first relevant position
(red) and one of the relevant documents' lengths (blue), both in bins of `bin_tokens` (256 BERT tokens in the
study) and as shares of the group's documents. Bins from `max_bin` on are pooled into the last bar. A group
with documents where no chunk was judged relevant (the dense path) shows them as a red bar at -1, as the study
kept them; unmatched documents of the sparse path are only counted in the table (they have no position)."""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np
import pandas as pd

from posbias.reporting.figure_files import plt, save_figure

RED, BLUE = "tab:red", "tab:blue"


def _shares(values: pd.Series, max_bin: int, start: int) -> np.ndarray:
    clipped = values.clip(upper=max_bin)
    counts = np.array([(clipped == b).sum() for b in range(start, max_bin + 1)], dtype=float)
    return counts / max(len(values), 1)


def histograms(ax, rows: pd.DataFrame, bin_tokens: int, max_bin: int, title: str) -> None:
    dense = rows["kind"].eq("dense") if len(rows) else pd.Series(dtype=bool)
    kept = rows[(rows["position_bin"] >= 0) | dense] if len(rows) else rows
    start = -1 if len(kept) and (kept["position_bin"] < 0).any() else 0
    x = np.arange(start, max_bin + 1)
    width = 0.42
    ax.bar(x - width / 2, 100 * _shares(kept["position_bin"], max_bin, start), width, color=RED,
           label="first relevant passage / chunk")
    lengths = 100 * _shares(rows["length_bin"], max_bin, start) if len(rows) else np.zeros(len(x))
    ax.bar(x + width / 2, lengths, width, color=BLUE, label="relevant document length")
    ticks = [str(b) for b in x]
    ticks[-1] = f"≥{max_bin}"
    if start < 0:
        ticks[0] = "none"
    step = max(1, len(x) // 12)
    ax.set_xticks(x[::step], ticks[::step])
    ax.set_xlabel(f"bin of {bin_tokens} tokens")
    ax.set_ylabel("% of documents")
    ax.set_title(f"{title} ({len(rows)} documents)", fontsize=9)
    if not len(rows):
        ax.text(0.5, 0.5, "no documents", transform=ax.transAxes, ha="center", va="center")


def figure(rows: Mapping[str, pd.DataFrame], groups: Mapping[str, Mapping], names: Sequence[str], bin_tokens: int,
           max_bin: int, outputs: list[str]) -> None:
    """One panel per group in `names` (`groups`: name -> {label, sets}); `rows`: query set -> its positions."""
    n = len(names)
    columns = min(n, 3)
    lines = -(-n // columns)
    fig, axes = plt.subplots(lines, columns, figsize=(4.2 * columns, 3.2 * lines), squeeze=False)
    for ax, name in zip(axes.flat, names):
        frames = [rows[s] for s in groups[name]["sets"] if len(rows[s])]
        joined = pd.concat(frames, ignore_index=True) if frames else next(iter(rows.values())).iloc[0:0]
        histograms(ax, joined, bin_tokens, max_bin, groups[name].get("label", name))
    for ax in list(axes.flat)[n:]:
        ax.axis("off")
    axes.flat[0].legend(fontsize=7)
    save_figure(fig, outputs)
