"""Figures: FarRelevant effectiveness per model against the random baseline, and efficiency against
effectiveness (the study's Figure 3)."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")  # headless: jobs run without a display

import matplotlib.pyplot as plt  # noqa: E402
import matplotlib.ticker  # noqa: E402
import pandas as pd  # noqa: E402

from posbias.io import atomic_write  # noqa: E402


def _save(fig, outputs: list[str]) -> None:
    """Write the figure to each path in the format its extension names (png, pdf), then close it."""
    fig.tight_layout()
    for path in outputs:
        fmt = path.rsplit(".", 1)[-1]
        with atomic_write(path, "wb") as handle:
            fig.savefig(handle, format=fmt, dpi=150)
    plt.close(fig)


def farrelevant_bars(per_seed: pd.DataFrame, labels: dict[str, str], random_system: str,
                     metric: str, outputs: list[str]) -> None:
    """Bar per model (mean over seeds of the per-seed mean, with min-max whiskers) and
    a horizontal line at the random-shuffle baseline."""
    seed_means = per_seed.groupby(["system", "seed"])["value"].mean().reset_index()
    summary = seed_means.groupby("system")["value"].agg(["mean", "min", "max"])
    random_level = summary.loc[random_system, "mean"]
    systems = [s for s in labels if s in summary.index and s != random_system]
    fig, ax = plt.subplots(figsize=(1.0 + 0.8 * len(systems), 3.2))
    means = summary.loc[systems, "mean"]
    errors = [means - summary.loc[systems, "min"], summary.loc[systems, "max"] - means]
    ax.bar(range(len(systems)), means, yerr=errors, capsize=3, color="#4878a8")
    ax.axhline(random_level, color="#c44e52", linestyle="--", label=f"random shuffle ({random_level:.3f})")
    ax.set_xticks(range(len(systems)), [labels[s] for s in systems], rotation=30, ha="right")
    ax.set_ylabel(metric)
    ax.set_title("FarRelevant (zero-shot)")
    ax.legend(loc="upper left", fontsize="small")
    _save(fig, outputs)


def efficiency_scatter(points: pd.DataFrame, outputs: list[str]) -> None:
    """The study's Figure 3: one labelled point per ranker at (scoring time relative to its FirstP baseline,
    average gain over it), time on a log scale, with dotted lines at the baseline's (1, 0)."""
    fig, ax = plt.subplots(figsize=(6.0, 4.0))
    ax.scatter(points["relative_time"], 100 * points["gain"], color="#4878a8", zorder=3)
    for _, point in points.iterrows():
        ax.annotate(point["label"], (point["relative_time"], 100 * point["gain"]), textcoords="offset points",
                    xytext=(4, 3), fontsize="x-small")
    ax.set_xscale("log")
    times = matplotlib.ticker.FuncFormatter(lambda value, _: f"{value:g}x")
    ax.xaxis.set_major_formatter(times)
    ax.xaxis.set_minor_formatter(times)
    ax.axvline(1.0, color="grey", linestyle=":", linewidth=1)
    ax.axhline(0.0, color="grey", linestyle=":", linewidth=1)
    ax.set_xlabel("scoring time relative to the FirstP baseline")
    ax.set_ylabel("average gain over the FirstP baseline (%)")
    ax.set_title("Efficiency and effectiveness")
    _save(fig, outputs)
