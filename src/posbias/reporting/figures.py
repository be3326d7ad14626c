"""Figures: FarRelevant effectiveness per model against the random baseline, and efficiency against
effectiveness (the study's Figure 3)."""

from __future__ import annotations

import matplotlib.ticker
import pandas as pd

from posbias.reporting.figure_files import plt, save_figure


def farrelevant_bars(per_seed: pd.DataFrame, labels: dict[str, str], random_system: str,
                     metric: str, outputs: list[str], finetuned: pd.DataFrame | None = None) -> None:
    """The study's Figure 2: per model, a bar for the zero-shot value and, with `finetuned`, one beside it for the
    fine-tuned value (each the mean over seeds of the per-seed mean, with min-max whiskers; "N/A" where a model is
    never fine-tuned), and a horizontal line at the random-shuffle baseline."""
    settings = [("zero-shot", _seed_summary(per_seed), "#4878a8")]
    if finetuned is not None:
        settings.append(("fine-tuned", _seed_summary(finetuned), "#dd8452"))
    zero_shot = settings[0][1]
    random_level = zero_shot.loc[random_system, "mean"]
    systems = [s for s in labels if s in zero_shot.index and s != random_system]
    width = 0.8 / len(settings)
    fig, ax = plt.subplots(figsize=(1.0 + (0.5 + 0.3 * len(settings)) * len(systems), 3.2))
    for i, (name, summary, colour) in enumerate(settings):
        x = [k + (i - (len(settings) - 1) / 2) * width for k in range(len(systems))]
        present = [s in summary.index for s in systems]
        shown = [s for s, p in zip(systems, present) if p]
        means = summary.loc[shown, "mean"]
        errors = [means - summary.loc[shown, "min"], summary.loc[shown, "max"] - means]
        ax.bar([xk for xk, p in zip(x, present) if p], means, width=width, yerr=errors, capsize=2, color=colour,
               label=name)
        for xk, p in zip(x, present):
            if not p:  # zero-shot models (E5, RankGPT) are never fine-tuned: Table 4's N/A
                ax.annotate("N/A", (xk, 0), ha="center", va="bottom", fontsize="xx-small", rotation=90)
    ax.axhline(random_level, color="#c44e52", linestyle="--", label=f"random shuffle ({random_level:.3f})")
    ax.set_xticks(range(len(systems)), [labels[s] for s in systems], rotation=30, ha="right")
    ax.set_ylabel(metric)
    ax.set_title("FarRelevant" + (": zero-shot and fine-tuned" if finetuned is not None else " (zero-shot)"))
    ax.legend(loc="upper left", fontsize="small")
    save_figure(fig, outputs)


def _seed_summary(per_seed: pd.DataFrame) -> pd.DataFrame:
    """Per system: mean, min and max over seeds of the per-seed mean."""
    seed_means = per_seed.groupby(["system", "seed"])["value"].mean().reset_index()
    return seed_means.groupby("system")["value"].agg(["mean", "min", "max"])


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
    save_figure(fig, outputs)


def _curve_name(labels: dict[str, str], model: str, variant: str) -> str:
    return labels.get(model, model) + ("" if variant == "default" else f" ({variant.replace('_', '-')})")


def position_curves(positions: pd.DataFrame, task: str, size: int, labels: dict[str, str],
                    outputs: list[str]) -> None:
    """Lost in the Middle's Figures 5 and 7: accuracy (%) against the 1-based position of the answer-bearing
    document or pair, one line per model and variant with 95% Wilson intervals, and each model's closed-book
    (dashed) and oracle (dotted) accuracy as horizontal lines in the line's colour."""
    rows = positions[(positions["task"] == task) & (positions["size"] == size) & (positions["level"] == "position")]
    references = positions[(positions["task"] == task) & positions["level"].isin(["closedbook", "oracle"])]
    fig, ax = plt.subplots(figsize=(5.2, 3.6))
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    for i, ((model, variant), curve) in enumerate(rows.groupby(["model", "variant"], sort=True)):
        curve = curve.sort_values("gold_index")
        colour = colours[i % len(colours)]
        x = curve["gold_index"].astype(int) + 1
        y = 100 * curve["accuracy"]
        errors = [y - 100 * curve["ci_low"], 100 * curve["ci_high"] - y]
        ax.errorbar(x, y, yerr=errors, marker="o", capsize=3, color=colour, label=_curve_name(labels, model, variant))
        for level, style in (("closedbook", "--"), ("oracle", ":")):
            ref = references[(references["model"] == model) & (references["level"] == level)
                             & (references["variant"] == "default")]
            if len(ref) and variant == "default":
                ax.axhline(100 * ref["accuracy"].iloc[0], color=colour, linestyle=style, linewidth=1,
                           label=f"{labels.get(model, model)} {'closed-book' if level == 'closedbook' else 'oracle'}")
    unit = "documents" if task == "qa" else "key-value pairs"
    ax.set_xlabel(f"position of the {'document with the answer' if task == 'qa' else 'key'} (of {size} {unit})")
    ax.set_ylabel("accuracy (%)")
    ax.set_xticks(sorted(set(rows["gold_index"].astype(int) + 1)))
    ax.set_ylim(-2, 102)
    ax.set_title(f"{'Multi-document QA' if task == 'qa' else 'Key-value retrieval'}, {size} {unit}")
    ax.legend(fontsize="x-small", loc="best")
    save_figure(fig, outputs)
