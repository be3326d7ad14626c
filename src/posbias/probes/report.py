"""Render the bias probes (spec: shared/specs/probes.md §2, §4.1-4.3): the paper's probe table, the position sweep,
the repetition x length heatmaps and a summary of the five bias axes.

Every function reads a finished summary (one row per probe, condition and scorer, with the fields of
`posbias.stats.document_pairs.ProbeStatistic`) or the heatmap scores, so a change of layout costs no scoring. D1 is always
the first document of a probe: a positive t means D1 scored higher, which is good for answer importance, foil and
poison (↑) and a bias for the others (↓).

A test that could not run (NaN t, or every pair tied, as for BM25 on a reordered document) shows as a dash, never
as a number. The sweep's band is the two-sided 95% critical value of t with n - 1 degrees of freedom: a point
outside it is significant at p < 0.05 (before correction). The paper's band, ±1.651, is the one-sided 5% critical
value, drawn as if it were a confidence interval, which it is not (spec §1.5); we do not draw it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, fields

import numpy as np
import pandas as pd
from matplotlib.patches import Patch
from scipy import stats

from posbias.docred.probe_names import FIRST_LAST, SWEEP
from posbias.probes.declarations.answer_importance import ANSWER_IMPORTANCE
from posbias.probes.declarations.brevity import BREVITY
from posbias.probes.declarations.foil import FOIL
from posbias.probes.declarations.literal import LITERAL
from posbias.probes.declarations.poison import POISON
from posbias.probes.declarations.repetition import REPETITION
from posbias.stats.document_pairs import ProbeStatistic
from posbias.reporting.figure_files import plt, save_figure
from posbias.reporting.render import (MISSING, NO_TEST, Cell, Table, html_page, html_table, percent, write_outputs,
                                      write_tables)
from posbias.stats.corrections import describe, describe_families

PROBE_TABLE_LABEL = "tab:probes"
KEYS = ["probe", "condition", "scorer"]
STATISTICS = [f.name for f in fields(ProbeStatistic)]
MARK = "*"
LITERAL_CONDITIONS = ["LL-LS", "LL-SL", "LL-SS", "SS-LS", "SS-SL"]
HEAD_COUNT_BINS = (0, 1, 2, 3, 10)
LENGTH_BINS = (130, 160, 190, 230, 512)


@dataclass(frozen=True)
class Column:
    """One column of the probe table: a statistic of one probe (and condition)."""

    header: str
    probe: str
    condition: str = ""
    value: str = "t"  # or "win_rate", shown as a percentage


COLUMNS = [Column("Answer ↑", ANSWER_IMPORTANCE), Column("Position ↓", FIRST_LAST),
           Column("Literal ↓", LITERAL, "SS-SL"), Column("Brevity ↓", BREVITY), Column("Repetition ↓", REPETITION),
           Column("Foil acc. (%) ↑", FOIL, value="win_rate"), Column("Foil t ↑", FOIL),
           Column("Poison acc. (%) ↑", POISON, value="win_rate"), Column("Poison t ↑", POISON)]

# The five axes of the paper's radar plot (Fig. 1, spec §4.1), in its order.
AXES = [Column("Brevity ↓", BREVITY), Column("Answer importance ↑", ANSWER_IMPORTANCE),
        Column("Repetition ↓", REPETITION), Column("Position ↓", FIRST_LAST), Column("Literal ↓", LITERAL, "SS-SL")]


# --- reading the summary -----------------------------------------------------------------------------------------


def _clean(summary: pd.DataFrame) -> pd.DataFrame:
    """The summary with string keys ("" for no condition) and numeric statistics (None -> NaN)."""
    missing = [c for c in KEYS + STATISTICS if c not in summary.columns]
    if missing:
        raise ValueError(f"probe summary lacks columns: {', '.join(missing)}")
    frame = summary.copy()
    for key in KEYS:
        frame[key] = frame[key].fillna("").astype(str)
    for name in STATISTICS:
        frame[name] = pd.to_numeric(frame[name], errors="coerce")
    return frame


def _scorers(summary: pd.DataFrame) -> list[str]:
    """Scorers in the order they first appear."""
    return list(dict.fromkeys(summary["scorer"]))


def _label(labels: dict[str, str], scorer: str) -> str:
    return labels.get(scorer, scorer)


def _row(summary: pd.DataFrame, probe: str, condition: str, scorer: str) -> pd.Series | None:
    rows = summary[(summary["probe"] == probe) & (summary["condition"] == condition) & (summary["scorer"] == scorer)]
    return rows.iloc[0] if len(rows) else None


def _present(summary: pd.DataFrame, column: Column) -> bool:
    return bool(((summary["probe"] == column.probe) & (summary["condition"] == column.condition)).any())


def tested(row: pd.Series) -> bool:
    """Whether the row holds a test: t is defined and not every pair is tied (an order-invariant scorer)."""
    return math.isfinite(row["t"]) and row["ties"] < row["n"]


# --- the probe table ---------------------------------------------------------------------------------------------


def _cell(row: pd.Series | None, column: Column, alpha: float) -> str | Cell:
    if row is None:
        return MISSING
    if column.value == "win_rate":
        return percent(row["win_rate"])
    if not tested(row):
        return MISSING
    significant = math.isfinite(row["p_adjusted"]) and row["p_adjusted"] < alpha
    return Cell(f"{row['t']:.2f}", superscript=MARK if significant else "")


def _table_rows(summary: pd.DataFrame, columns: list[Column]) -> pd.DataFrame:
    """The summary rows the table shows (one per probe, condition and scorer, whatever the columns of it)."""
    shown = {(c.probe, c.condition) for c in columns}
    return summary[[(p, c) in shown for p, c in zip(summary["probe"], summary["condition"])]]


def _sizes(summary: pd.DataFrame, columns: list[Column]) -> str:
    """Caption text: n per probe, as one number when all agree."""
    per_probe = {}
    for column in columns:
        n = _table_rows(summary, [column])["n"].dropna().astype(int)
        name = column.header.split(" ")[0]
        if len(n):
            per_probe[name] = str(n.min()) if n.min() == n.max() else f"{n.min()}-{n.max()}"
    if len(set(per_probe.values())) == 1:
        return f"n = {next(iter(per_probe.values()))} query pairs per probe."
    return "Query pairs per probe: " + ", ".join(f"{name} n = {n}" for name, n in per_probe.items()) + "."


def _caption(summary: pd.DataFrame, columns: list[Column], alpha: float, correction: str) -> str:
    probes = {c.probe for c in columns}
    n_tests = int(_table_rows(summary, columns)["p"].notna().sum())
    text = ("Bias probes (Fayyaz et al., 2025). Each t is the paired t statistic of the scores of D1 against D2 "
            "over the same queries (two-sided p); positive: D1 scored higher. ↑: larger is better (D1 holds the "
            "answer); ↓: larger is more biased (D1 is the document a biased scorer prefers). ")
    if LITERAL in probes:
        text += "Literal: short-name query against the short- vs the long-name document (SS vs SL). "
    if probes & {FOIL, POISON}:
        text += ("Acc.: share of pairs where the evidence document scored higher (ties count as losses). ")
    text += (f"{MARK}: adjusted p < {alpha:g}; {describe(correction, n_tests, 'this table')}. "
             f"{MISSING}: no test (every pair tied, as for an order-invariant scorer, or no spread in the "
             f"differences) or not run. {_sizes(summary, columns)}")
    return text


def probe_table(summary: pd.DataFrame, labels: dict[str, str], alpha: float,
                correction: str) -> tuple[list[str], list[list[str | Cell]], str]:
    """The paper's layout: one row per scorer, one column per probe present in `summary`; (header, body, caption).

    `correction` names the method that made `p_adjusted` (over the tests of this table) for the caption.
    """
    summary = _clean(summary)
    columns = [c for c in COLUMNS if _present(summary, c)]
    header = ["Scorer"] + [c.header for c in columns]
    body = [[_label(labels, scorer)] + [_cell(_row(summary, c.probe, c.condition, scorer), c, alpha)
                                         for c in columns]
            for scorer in _scorers(summary)]
    return header, body, _caption(summary, columns, alpha, correction)


def literal_table(summary: pd.DataFrame, labels: dict[str, str],
                  alpha: float) -> tuple[list[str], list[list[str | Cell]], str]:
    """Literal bias in all five conditions of the paper's Table 3 (t of the first against the second pair)."""
    summary = _clean(summary)
    columns = [Column(f"{c[:2]} vs {c[3:]}", LITERAL, c) for c in LITERAL_CONDITIONS]
    columns = [c for c in columns if _present(summary, c)]
    body = [[_label(labels, scorer)] + [_cell(_row(summary, c.probe, c.condition, scorer), c, alpha)
                                         for c in columns]
            for scorer in _scorers(summary[summary["probe"] == LITERAL])]
    caption = ("Literal bias, all conditions: paired t of M(Q1, D1) against M(Q2, D2), named (query name, "
               f"document name), L long and S short; {MARK}: adjusted p < {alpha:g} (adjusted as in the table above).")
    return ["Scorer"] + [c.header for c in columns], body, caption


def _condition_order(condition: str) -> tuple:
    return (0, int(condition), "") if condition.isdigit() else (1, 0, condition)


def sorted_summary(summary: pd.DataFrame) -> pd.DataFrame:
    """All rows, sorted by probe, condition (sweep positions numerically) and scorer."""
    frame = summary.copy()
    frame["condition"] = frame["condition"].fillna("").astype(str)
    keys = list(zip(frame["probe"], map(_condition_order, frame["condition"]), frame["scorer"]))
    order = sorted(range(len(frame)), key=keys.__getitem__)
    return frame.iloc[order].reset_index(drop=True)


def write_probe_table(summary: pd.DataFrame, labels: dict[str, str], alpha: float, correction: str,
                      outputs: dict) -> None:
    """The probe table as LaTeX, Markdown and HTML (with the literal conditions), and the full summary as CSV."""
    header, body, caption = probe_table(summary, labels, alpha, correction)
    table = Table(header, body, caption, PROBE_TABLE_LABEL, wide=True)
    pages = [table.html()]
    if (summary["probe"] == LITERAL).any():  # the literal conditions: on the HTML page only
        pages.append(html_table(*literal_table(summary, labels, alpha)))
    write_outputs(outputs, sorted_summary(summary), table.latex(), table.markdown(), html_page(*pages))


# --- RAG poisoning -----------------------------------------------------------------------------------------------

RAG_HEADERS = {"poison_doc": "poisoned doc.", "foil_doc": "foil doc.", "evidence_doc": "evidence doc.",
               "no_doc": "no doc."}
RAG_TABLE_LABEL = "tab:probes-rag"


def rag_table(table: pd.DataFrame, labels: dict[str, str], alpha: float = 0.05, correction: str = "holm",
              consistency: dict | None = None) -> tuple[list[str], list, str]:
    """Accuracy (%) of each reader (rows) in each condition (columns) with its 95% Wilson interval; a marker where
    the exact McNemar test against no document, adjusted over the reader's conditions with `correction` (the
    method that made `mcnemar_p_adjusted`), gives p < alpha; "no test" where every question ties. `consistency`:
    the judge's swap check (`posbias.probes.judge_swap`), told in the caption beside the verdicts."""
    conditions = [c for c in RAG_HEADERS if c in set(table["condition"])]
    header = ["Reader", *(RAG_HEADERS[c] for c in conditions)]
    body = []
    for reader, rows in table.groupby("reader", sort=False):
        cells = [_label(labels, reader)]
        for condition in conditions:
            row = rows[rows["condition"] == condition].iloc[0]
            p = row.get("mcnemar_p_adjusted", math.nan)
            significant = math.isfinite(p) and p < alpha
            untested = condition != "no_doc" and not math.isfinite(row.get("mcnemar_p", math.nan))
            cells.append(Cell(f"{100 * row['accuracy']:.1f}", superscript=MARK if significant else "",
                              after=f" [{100 * row['ci_low']:.0f}, {100 * row['ci_high']:.0f}]"
                                    + (f" ({NO_TEST})" if untested else "")))
        body.append(cells)
    n = int(table["n"].max()) if len(table) else 0
    tests = table[table["condition"] != "no_doc"]
    p = tests["mcnemar_p"] if "mcnemar_p" in tests else pd.Series(dtype=float)
    family = describe_families(correction, [int(group.notna().sum()) for _, group in p.groupby(tests["reader"])],
                               "reader")
    untested = int(p.isna().sum())
    no_test = (f" ({NO_TEST}): the reader answers every question as it does with no document, so there is nothing "
               f"to test ({untested} condition{'s' * (untested != 1)}, left out of the family)." if untested else "")
    caption = (f"RAG poisoning (Fayyaz et al., 2025): share of the {n} poison-probe questions a reader answers "
               "correctly (the judge model finds the gold answer in its answer) from the poisoned document, the "
               "foil, the evidence document, or with no document; 95% Wilson intervals in brackets. "
               f"{MARK}: differs from no document, the reference fixed by design (exact two-sided McNemar test over "
               f"the same questions; {family}; adjusted p < {alpha}).{no_test}{_judge_consistency(consistency)}")
    return header, body, caption


def _judge_consistency(figures: dict | None) -> str:
    """The caption's sentence on the judge's own position bias (its swap check)."""
    from posbias.reporting.consistency import agreement_text, p_text

    if not figures or not figures.get("n"):
        return " The judge's swap check is off (probes.rag.consistency.sample: 0)."
    return (f" The judge ({figures.get('judge_label', figures.get('judge'))}) decides alike with the model answer "
            f"placed before the evidence and gold answer for {agreement_text(figures)} sampled answers (95% Wilson "
            f"interval); YES only in the study's layout {figures['only_original']}, only swapped "
            f"{figures['only_reordered']} ({figures['test']}, one per question: two-sided p {p_text(figures)}).")


def write_rag_table(table: pd.DataFrame, labels: dict[str, str], outputs: dict, alpha: float = 0.05,
                    correction: str = "holm", consistency: dict | None = None) -> None:
    header, body, caption = rag_table(table, labels, alpha, correction, consistency)
    write_tables(outputs, table, Table(header, body, caption, RAG_TABLE_LABEL))


# --- the position sweep ------------------------------------------------------------------------------------------


def critical_value(n: int, confidence: float = 0.95) -> float:
    """Two-sided critical value of t with n - 1 degrees of freedom: |t| above it means p < 1 - confidence."""
    return float(stats.t.ppf(1 - (1 - confidence) / 2, n - 1))


def sweep_figure(summary: pd.DataFrame, labels: dict[str, str], outputs: list[str]) -> None:
    """t of the evidence at position k against position 1, k = 1..10, one line per scorer (spec §2.3, Fig. 4).

    Position 1 against itself is 0 by construction. A scorer with no test at any position (order-invariant, as
    BM25) gets no line, only a legend entry saying so.
    """
    sweep = _clean(summary)
    sweep = sweep[sweep["probe"] == SWEEP].assign(position=lambda f: f["condition"].astype(int))
    fig, ax = plt.subplots(figsize=(6.0, 4.0))
    for scorer in _scorers(sweep):
        rows = sweep[sweep["scorer"] == scorer].sort_values("position")
        if not any(tested(row) for _, row in rows[rows["position"] > 1].iterrows()):
            ax.plot([], [], " ", label=f"{_label(labels, scorer)} (order-invariant: no test)")
            continue
        t = [0.0 if row["position"] == 1 else (row["t"] if tested(row) else np.nan) for _, row in rows.iterrows()]
        ax.plot(rows["position"], t, marker="o", markersize=3, label=_label(labels, scorer))
    for n in sorted(sweep["n"].dropna().astype(int).unique()):
        value = critical_value(n)
        label = f"±{value:.2f}: two-sided 95% critical value (n = {n})"
        for sign in (1, -1):
            ax.axhline(sign * value, color="grey", linestyle="--", linewidth=1, label=label if sign == 1 else None)
    if sweep.empty:
        ax.text(0.5, 0.5, "no position sweep in this run", transform=ax.transAxes, ha="center", va="center")
    ax.axhline(0.0, color="black", linewidth=0.6)
    ax.set_xticks(range(1, 11))
    ax.set_xlabel("evidence sentence position")
    ax.set_ylabel("paired t against the evidence at position 1")
    ax.set_title("Position sweep (negative: early-position bias)")
    if ax.get_legend_handles_labels()[0]:
        ax.legend(fontsize="x-small", loc="best")
    save_figure(fig, outputs)


# --- the repetition x length heatmaps ----------------------------------------------------------------------------


def heatmap_cells(heatmap: pd.DataFrame, head_count_bins=HEAD_COUNT_BINS,
                  length_bins=LENGTH_BINS) -> tuple[dict[str, pd.DataFrame], pd.DataFrame, int]:
    """Mean score per (length bin, head-count bin) for each scorer, the number of queries per cell, and how many
    queries fall outside the bins (they drop out, as in the paper).

    Bins are right-closed (`pd.cut`); rows run longest first (the figure's top), columns by head count.
    """
    varying = heatmap.groupby("qid")[["head_count", "doc_words"]].nunique().gt(1).any(axis=1)
    if varying.any():
        raise ValueError(f"head_count or doc_words differ between scorers for {varying.sum()} queries, e.g. "
                         f"{varying[varying].index[0]!r}: they describe the query's document")
    frame = heatmap.assign(head_bin=pd.cut(heatmap["head_count"], list(head_count_bins)),
                           length_bin=pd.cut(heatmap["doc_words"], list(length_bins)))
    inside = frame["head_bin"].notna() & frame["length_bin"].notna()
    dropped = frame.loc[~inside, "qid"].nunique()
    frame = frame[inside]
    rows = frame["length_bin"].cat.categories[::-1]
    columns = frame["head_bin"].cat.categories

    def grid(values: pd.Series) -> pd.DataFrame:
        return values.unstack("head_bin").reindex(index=rows, columns=columns)

    means = {scorer: grid(part.groupby(["length_bin", "head_bin"], observed=False)["score"].mean())
             for scorer, part in frame.groupby("scorer", sort=False)}
    counts = grid(frame.groupby(["length_bin", "head_bin"], observed=False)["qid"].nunique()).fillna(0).astype(int)
    return means, counts, int(dropped)


def _heat_panel(fig, ax, grid: pd.DataFrame, title: str, cmap: str, fmt: str) -> None:
    values = grid.to_numpy(dtype=float)
    image = ax.imshow(np.ma.masked_invalid(values), cmap=plt.get_cmap(cmap).with_extremes(bad="white"),
                      aspect="auto")
    if np.isfinite(values).any():
        fig.colorbar(image, ax=ax, fraction=0.046, pad=0.04)
        for (i, j), value in np.ndenumerate(values):
            if math.isfinite(value):
                red, green, blue, _ = image.cmap(image.norm(value))
                dark = 0.299 * red + 0.587 * green + 0.114 * blue < 0.5  # white text on a dark cell
                ax.text(j, i, format(value, fmt), ha="center", va="center", fontsize=8,
                        color="white" if dark else "black")
    ax.set_xticks(range(len(grid.columns)), [str(c) for c in grid.columns], fontsize=8)
    ax.set_yticks(range(len(grid.index)), [str(r) for r in grid.index], fontsize=8)
    ax.set_xlabel("head mentions")
    ax.set_ylabel("document length (words)")
    ax.set_title(title, fontsize=10)


def heatmap_figure(heatmap: pd.DataFrame, labels: dict[str, str], outputs: list[str],
                   head_count_bins=HEAD_COUNT_BINS, length_bins=LENGTH_BINS) -> None:
    """Mean score of the full document by head-mention count and length, one panel per scorer plus one of query
    counts (spec §4.2, Fig. 5/A.5/A.6). Each scorer has its own colour scale: scores of different scorers are not
    on one scale. Descriptive only: no test."""
    means, counts, dropped = heatmap_cells(heatmap, head_count_bins, length_bins)
    panels = [(_label(labels, s), grid, "coolwarm", ".2f") for s, grid in means.items()]
    panels.append(("queries per cell", counts, "Blues", ".0f"))
    ncols = min(3, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.2 * ncols, 3.4 * nrows), squeeze=False)
    for ax, (title, grid, cmap, fmt) in zip(axes.flat, panels):
        _heat_panel(fig, ax, grid, title, cmap, fmt)
    for ax in axes.flat[len(panels):]:
        ax.set_visible(False)
    total = heatmap["qid"].nunique()
    fig.suptitle(f"Mean score by head mentions and length ({dropped} of {total} queries outside the bins left out)",
                 fontsize=10)
    save_figure(fig, outputs)


# --- the five bias axes ------------------------------------------------------------------------------------------


def summary_figure(summary: pd.DataFrame, labels: dict[str, str], outputs: list[str]) -> None:
    """Grouped horizontal bars of t per bias axis (spec §4.1, the radar plot's axes) and scorer; "n/a" marks a
    scorer without a test on an axis."""
    summary = _clean(summary)
    axes = [a for a in AXES if _present(summary, a)][::-1]  # the first axis at the top
    scorers = _scorers(_table_rows(summary, axes))
    height = 0.8 / max(len(scorers), 1)
    colours = plt.rcParams["axes.prop_cycle"].by_key()["color"]
    fig, ax = plt.subplots(figsize=(6.0, 1.0 + 0.22 * max(len(axes) * len(scorers), 4)))
    for i, scorer in enumerate(scorers):
        offset = (len(scorers) - 1 - i - (len(scorers) - 1) / 2) * height  # the first scorer at the top
        for g, axis in enumerate(axes):
            row = _row(summary, axis.probe, axis.condition, scorer)
            if row is not None and tested(row):
                ax.barh(g + offset, row["t"], height=height, color=colours[i % len(colours)])
            else:
                ax.text(0, g + offset, " n/a", va="center", ha="left", fontsize=7, color="dimgrey")
    if not axes:
        ax.text(0.5, 0.5, "no bias axis in this run", transform=ax.transAxes, ha="center", va="center")
    ax.axvline(0.0, color="black", linewidth=0.6)
    ax.set_yticks(range(len(axes)), [a.header for a in axes])
    ax.set_xlabel("paired t of D1 against D2")
    ax.set_title("Bias probes (↑ larger is better, ↓ larger is more biased)", fontsize=10)
    if scorers:
        handles = [Patch(color=colours[i % len(colours)], label=_label(labels, s)) for i, s in enumerate(scorers)]
        ax.legend(handles=handles, fontsize="x-small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    save_figure(fig, outputs)


def write_sensitivity_table(table: pd.DataFrame, labels: dict[str, str], correction: str, alpha: float,
                            outputs: dict) -> None:
    """The position sweep's metric suite per scorer (`posbias.probes.stats.sweep_sensitivity`), in the four
    formats: differences in the scorer's own units only, since raw scores have no true zero (no PSI or ratio)."""
    from posbias.reporting.render import number

    header = ["Scorer", "score at k = 1", "best − worst", "primacy", "recency", "significant drops", "reach (k)"]
    body = [[labels.get(row.scorer, row.scorer), number(row.reference_mean), number(row.best_worst_gap),
             number(row.primacy), number(row.recency), str(row.significant_drops), str(int(row.reach) + 1)]
            for row in table.itertuples()]
    caption = (f"Position sensitivity of each scorer's position sweep (the evidence sentence inserted at k = 1, 2, "
               f"... of its document's other sentences; the score of the query against each), in the scorer's own "
               f"units: best − worst mean score; primacy and recency: the first and the last k against the mean of "
               f"those between; significant drops: places below k = 1 by a paired t-test over "
               f"the same queries, {describe_families(correction, (table['n_positions'] - 1).tolist(), 'scorer')}, "
               f"adjusted $p < {alpha}$; reach: the last k before the first such drop. No PSI or relative drop: the "
               f"scores are raw (dot products, BM25 scores, logits), and a constant shift would change a ratio.")
    write_tables(outputs, table, Table(header, body, caption, "tab:probes-sensitivity", wide=True))
