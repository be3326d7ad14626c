"""The sweep table (MRR and mean rank per model and position) and the position-breakdown table (a metric per
system and position bin), as header and body cells for `posbias.reporting.render`.

The sweep figure: MRR against the relevant passage's start token, one small panel per model (shared axes),
with its 95% interval, the first window's edge and the random-order level."""

from __future__ import annotations

import math

import pandas as pd

from posbias.reporting.figure_files import plt, save_figure
from posbias.reporting.render import NO_TEST, Cell, number
from posbias.stats.corrections import describe, describe_families

TEST_NAMES = {"t": "two-sided paired t-test", "wilcoxon": "two-sided Wilcoxon signed-rank test",
              "randomisation": "two-sided paired randomisation test"}


def sweep_cells(curves: pd.DataFrame) -> tuple[list[str], list[list[str | Cell]]]:
    """A row per model, a column per position: MRR (superscript a: differs from the first position) and, in
    brackets, the mean rank of the relevant document; "no test" where every query ties with the first position."""
    starts = curves.groupby("position")["mean_start"].mean()
    header = ["Ranker"] + [f"pos. {p + 1} (token {starts[p]:.0f})" for p in starts.index]
    body = []
    for _, rows in curves.groupby("model", sort=False):
        rows = rows.set_index("position")
        cells: list[str | Cell] = [rows["label"].iloc[0]]
        for p in starts.index:
            row = rows.loc[p]
            # position 0 is the reference (p NaN by construction); a later NaN p: every query tied with it
            untested = f" ({NO_TEST})" if p != 0 and math.isnan(row["p"]) else ""
            cells.append(Cell(number(row["mrr"]), superscript="a" if row["significant"] else "",
                              after=f" ({number(row['mean_rank'], 1)}){untested}"))
        body.append(cells)
    return header, body


def _seeds(n_seeds: int, zero_shot: list[str]) -> str:
    once = f" (never trained, one run: {', '.join(zero_shot)})" if zero_shot else ""
    return f"averaged over {n_seeds} training seed{'s' * (n_seeds != 1)}{once}"


def sweep_caption(curves: pd.DataFrame, statistics: dict, first_window: int, random_mrr: float,
                  random_rank: float, n_seeds: int, zero_shot: list[str], note: str = "") -> str:
    """The table's caption; `note` (the config's `sweep.note`: what the collection explains about the curves,
    e.g. the embedded world's dip at token 0) ends it."""
    n_queries = int(curves["n_queries"].max())
    per_model = curves.groupby("model", sort=False)["p"].apply(lambda p: int(p.notna().sum())).tolist()
    untested = int((curves["p"].isna() & (curves["position"] != 0)).sum())
    no_test = (f" ({NO_TEST}): nothing to test against position 1, as every query ties with it (or, for the t-test, "
               f"the differences do not vary); {untested} position{'s' * (untested != 1)}, left out of the count of "
               f"tests and the correction." if untested else "")
    return (f"Position sweep: the relevant passage of each of {n_queries} FarRelevant queries moved through one "
            f"fixed document per query (the same distractor candidates at every position). MRR per position (in "
            f"brackets: mean rank of the relevant document), per-query values {_seeds(n_seeds, zero_shot)} "
            f"first; column headers give the mean start token of the passage (first "
            f"window: {first_window} tokens). Random order: MRR {random_mrr:.3f}, mean rank {random_rank:.1f}. "
            f"Superscript a: differs from position 1 ({TEST_NAMES[statistics['test']]} over the queries, "
            f"{describe_families(statistics['correction'], per_model, 'ranker')}, adjusted "
            f"$p < {curves['alpha'].iloc[0]}$"
            f").{no_test} 95% intervals are in the CSV." + (f" {note.strip()}" if note.strip() else ""))


def sensitivity_cells(table: pd.DataFrame) -> tuple[list[str], list[list[str]]]:
    """A row per model: the metric suite's numbers of its sweep curve (`sweep_sensitivity`)."""
    header = ["Ranker", "MRR at pos. 1", "PSI", "worst drop", "best-worst gap", "primacy", "recency",
              "significant drops", "reach (token)"]
    body = [[row.label, number(row.reference_mean), number(row.psi), number(row.worst_drop),
             number(row.best_worst_gap), number(row.primacy), number(row.recency), str(row.significant_drops),
             f"{row.reach_start:.0f}"] for row in table.itertuples()]
    return header, body


def sensitivity_caption(table: pd.DataFrame, statistics: dict, n_seeds: int, zero_shot: list[str]) -> str:
    n_positions, n_queries = int(table["n_positions"].max()), int(table["n_queries"].min())
    return (f"Position sensitivity of the sweep's curves ({n_positions} positions, {n_queries} base queries, "
            f"per-query MRR {_seeds(n_seeds, zero_shot)}): PSI = 1 - worst / best position's MRR; worst drop = "
            f"(position 1 - worst) / position 1; best-worst gap in MRR; primacy and recency: the first and the last "
            f"position's MRR minus the mean of the positions between them; significant drops: positions below "
            f"position 1 by a {TEST_NAMES[statistics['test']]} over the base queries, "
            f"{describe(statistics['correction'], n_positions - 1, 'each ranker')}, adjusted "
            f"$p < {table['alpha'].iloc[0]}$; reach: the mean start token of the last position before the first "
            f"such drop (the last position when none drops). Each position's MRR with its 95% interval is in the "
            f"sweep table.")


def breakdown_cells(table: pd.DataFrame) -> tuple[list[str], list[list[str | Cell]]]:
    """A row per system, a column per bin (header: its range and query count); superscript a: differs from the
    first bin."""
    first = table[table["system"] == table["system"].iloc[0]].set_index("bin")
    header = ["Ranker"] + [f"{row['bin_label']} (n = {row['n_queries']})" for _, row in first.iterrows()]
    body = []
    for _, rows in table.groupby("system", sort=False):
        rows = rows.set_index("bin")
        body.append([rows["label"].iloc[0]] + [
            Cell(number(row["value"]), superscript="a" if row["significant"] else "") for _, row in rows.iterrows()])
    return header, body


def breakdown_caption(table: pd.DataFrame, queryset: str, metric: str, correction: str, n_seeds: int,
                      zero_shot: list[str], positions: str, unplaced: int) -> str:
    n_tests = int(table["p"].notna().sum())
    left_out = f" {unplaced} queries without a position are left out." if unplaced else ""
    return (f"{metric} on {queryset} by the start token of the first relevant passage (positions: {positions}); "
            f"per-query values {_seeds(n_seeds, zero_shot)}.{left_out} Superscript a: "
            f"differs from the first bin (two-sided Welch t-test, different queries in each bin; "
            f"{describe(correction, n_tests, 'this table')}, adjusted $p < {table['alpha'].iloc[0]}$).")


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
