"""Lost in the Middle's tables (the layout of the paper's Tables 5-7): accuracy per gold position for each model,
with its 95% interval, a mark where the position differs from the first one (exact McNemar, paired over the same
questions, corrected over the positions of the model's curve), the best-worst gap, and the closed-book and oracle
accuracies for reference."""

from __future__ import annotations

import math

import pandas as pd

from posbias.reporting.render import MISSING, NO_TEST, Cell, Table, percent, write_tables
from posbias.stats.corrections import METHODS, describe_families

ALPHA = 0.05


def position_cells(positions: pd.DataFrame, gaps: pd.DataFrame, task: str, size: int, labels: dict[str, str]
                   ) -> tuple[list[str], list[list[str | Cell]]]:
    """Header and body: one row per (model, variant); a column per gold position (1-based), then the gap and, for
    QA, closed-book and oracle."""
    rows = positions[(positions["task"] == task) & (positions["size"] == size) & (positions["level"] == "position")]
    indices = sorted(set(rows["gold_index"].astype(int)))
    header = ["Model"] + [f"pos. {i + 1}" for i in indices] + ["best − worst"]
    header += ["closed-book", "oracle"] if task == "qa" else []
    body = []
    for (model, variant), curve in rows.groupby(["model", "variant"], sort=True):
        by_index = curve.set_index(curve["gold_index"].astype(int))
        label = labels.get(model, model) + ("" if variant == "default" else f" ({variant.replace('_', '-')})")
        cells: list[str | Cell] = [label]
        for i in indices:
            if i not in by_index.index:
                cells.append(MISSING)
                continue
            point = by_index.loc[i]
            differs = point["mcnemar_p_adjusted"] < ALPHA  # NaN (the reference, or no test) is never below
            untested = not point["reference"] and math.isnan(point["mcnemar_p"])
            cells.append(Cell(percent(point["accuracy"]), superscript="*" if differs else "", bold=bool(point["best"]),
                              after=f" [{percent(point['ci_low'])}, {percent(point['ci_high'])}]"
                                    + (f" ({NO_TEST})" if untested else "")))
        gap = gaps[(gaps["model"] == model) & (gaps["variant"] == variant) & (gaps["task"] == task)
                   & (gaps["size"] == size)].iloc[0]
        cells.append(percent(gap["gap"]))
        if task == "qa":
            cells += [percent(gap["closedbook"]), percent(gap["oracle"])]
        body.append(cells)
    return header, body


def caption(task: str, size: int, n: int, correction: str = "holm", reference: int = 0,
            tests_per_curve: list[int] | None = None, untested: int = 0) -> str:
    """The table's caption: `reference` is the 0-based gold index every position is tested against,
    `tests_per_curve` the number of tests (NaN p excluded) of each curve, `untested` the positions without one."""
    what = (f"Multi-document QA with {size} documents" if task == "qa"
            else f"Key-value retrieval from {size} pairs")
    metric = ("best_subspan_em (first line of the answer, normalised, contains a gold answer)" if task == "qa"
              else "the value appears in the answer, case-insensitively")
    no_test = (f" ({NO_TEST}): every question is answered right or wrong at both positions alike, so there is "
               f"nothing to test ({untested} position{'s' * (untested != 1)}, left out of the family)."
               if untested else "")
    family = describe_families(correction, tests_per_curve or [], "model's curve")
    return (f"{what}: accuracy (%) by the 1-based position of the "
            f"{'document with the answer' if task == 'qa' else 'key'}, {n} questions per position, each asked at "
            f"every position; {metric}. Brackets: 95% Wilson interval. Bold: the best position (descriptive). "
            f"*: differs from position {reference + 1}, the reference fixed before the answers were seen (exact "
            f"two-sided McNemar test over the same questions; {family}; adjusted $p < {ALPHA}$).{no_test}")


def position_table_outputs(positions: pd.DataFrame, gaps: pd.DataFrame, task: str, size: int,
                           labels: dict[str, str], outputs: dict[str, str], correction: str = "holm") -> None:
    """Write the table as LaTeX, Markdown, HTML and CSV (`outputs`: tex, md, html, csv); `correction` names the
    method that made `mcnemar_p_adjusted`, for the caption."""
    header, body = position_cells(positions, gaps, task, size, labels)
    selected = positions[(positions["task"] == task) & (positions["size"].isin([size, 0, 1]))]
    n = int(selected[selected["size"] == size]["n"].max()) if len(selected) else 0
    curves = selected[(selected["size"] == size) & (selected["level"] == "position")]
    references = sorted(set(curves.loc[curves["reference"].astype(bool), "gold_index"].astype(int))) or [0]
    tested = curves[~curves["reference"].astype(bool)]
    per_curve = [int(c["mcnemar_p"].notna().sum()) for _, c in tested.groupby(["model", "variant"])]
    text = caption(task, size, n, correction, references[0], per_curve, int(tested["mcnemar_p"].isna().sum()))
    write_tables(outputs, selected, Table(header, body, text, f"tab:litm-{task}-{size}"))


def sensitivity_table_outputs(table: pd.DataFrame, labels: dict[str, str], outputs: dict[str, str],
                              correction: str = "holm") -> None:
    """Every curve's position-curve metric suite (`posbias.litm.stats.sensitivity_table`) in one table: a row per
    (model, variant, task, size), written as LaTeX, Markdown, HTML and CSV (`outputs`)."""
    header = ["Model", "task", "size", "acc. at pos. 1", "PSI", "worst drop", "best − worst", "primacy", "recency",
              "significant drops", "reach (pos.)"]
    body = []
    for row in table.itertuples():
        label = labels.get(row.model, row.model) + ("" if row.variant == "default"
                                                     else f" ({row.variant.replace('_', '-')})")
        body.append([label, row.task, str(row.size), percent(row.reference_mean), f"{row.psi:.3f}",
                     f"{row.worst_drop:.3f}", percent(row.best_worst_gap), percent(row.primacy),
                     percent(row.recency), str(row.significant_drops), str(int(row.reach) + 1)])
    text = (f"Position sensitivity of each Lost-in-the-Middle curve (accuracy by the 1-based gold position; "
            f"percentages for accuracies and their differences): PSI = 1 - worst / best position's accuracy; worst "
            f"drop = (position 1 - worst) / position 1; primacy and recency: the first and the last position's "
            f"accuracy minus the mean of the positions between them (positive for both: the U of the paper); "
            f"significant drops: positions below position 1 by the exact two-sided McNemar test over the same "
            f"questions, {'no correction' if correction == 'none' else METHODS[correction] + ' correction over each curve'}"
            f"'s tests, adjusted "
            f"$p < {ALPHA}$; reach: the last position before the first such drop (the last position when none "
            f"drops).")
    write_tables(outputs, table, Table(header, body, text, "tab:litm-sensitivity", wide=True))
