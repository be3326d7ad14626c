"""Lin et al.'s outcome breakdown of every model against its baseline, one row per training seed.

The breakdown is defined per run (a query's outcome depends on where one run put the relevant
document), so it is not computed on seed-averaged values: each seed of a model is paired with
the same seed of its baseline. Run A is the baseline, run B the model, as in Lin et al.'s
Table 2. It is computed from the persisted per-query RR@k values: RR@k is 1/rank of the
relevant document within the top k, and 0 when it is not there.

Lin et al. print raw p-values; here all p-values of the table form one family and are adjusted
with the configured correction (`statistics.correction`), the raw ones staying in the CSV.
"""

from __future__ import annotations

import math

import pandas as pd

from posbias.io import Qrels
from posbias.reporting.render import html_page, latex_table, markdown_table
from posbias.stats.corrections import adjust, describe
from posbias.stats.outcomes import outcome_breakdown

HEADER = ["Ranker (B) vs baseline (A)", "Seed", "Queries", "(1) neither", "(2) A only", "(2) B only", "binom. p",
          "(3) both", "ESL A", "ESL B", "WSR p", "t p", "RR A", "RR B", "WSR p", "t p"]
P_COLUMNS = ("binomial_p", "esl_wilcoxon_p", "esl_t_p", "rr_wilcoxon_p", "rr_t_p")


def check_one_relevant(qrels: Qrels, rel_level: int, path: str) -> None:
    """The breakdown assumes one relevant document per query (MS MARCO, FarRelevant)."""
    for qid, judged in qrels.items():
        relevant = sum(grade >= rel_level for grade in judged.values())
        if relevant != 1:
            raise ValueError(f"{path}: query {qid} has {relevant} documents with grade >= {rel_level}; the outcome "
                             f"breakdown needs exactly one (list only such query sets in tables.outcomes)")


def build_outcome_table(per_seed: pd.DataFrame, pairs: list[tuple[str, str]], k: int) -> pd.DataFrame:
    """One record per (query set, model, seed): counts, shares, ESL and RR of the "both" queries, p-values.

    `pairs` are (model, baseline) system names; `per_seed` holds per-query RR@k values.
    """
    metric = f"RR@{k}"
    values = per_seed[per_seed["metric"] == metric]
    records = []
    for queryset, part in values.groupby("queryset", sort=True):
        by_run = {run: rows.set_index("qid")["value"] for run, rows in part.groupby(["system", "seed"])}
        for model, baseline in pairs:
            for seed in sorted(part.loc[part["system"] == model, "seed"].unique()):
                if (baseline, seed) not in by_run:
                    raise KeyError(f"no {metric} values for {baseline!r} seed {seed} on {queryset}")
                breakdown = outcome_breakdown(by_run[(baseline, seed)], by_run[(model, seed)], k).to_dict()
                record = {"queryset": queryset, "system": model, "baseline": baseline, "seed": int(seed),
                          "k": k, "n_queries": breakdown["n_queries"], "binomial_p": breakdown["binomial_p"]}
                for outcome in ("neither", "only_a", "only_b", "both"):
                    record[f"n_{outcome}"] = breakdown["counts"][outcome]
                    record[f"share_{outcome}"] = breakdown["shares"][outcome]
                record.update(breakdown["both"])
                records.append(record)
    return pd.DataFrame.from_records(records)


def adjust_p_values(table: pd.DataFrame, correction: str) -> pd.DataFrame:
    """Add `<p column>_adj` for every p-value column: one family over all rows and tests of the table.

    Tests that could not run (nan: no "both" queries) are not counted; `attrs["n_tests"]` is the family size.
    """
    table = table.copy()
    raw = table[list(P_COLUMNS)].to_numpy(float)
    adjusted = adjust(raw.ravel(), correction).reshape(raw.shape)
    for i, column in enumerate(P_COLUMNS):
        table[f"{column}_adj"] = adjusted[:, i]
    table.attrs["n_tests"] = int((~pd.isna(raw)).sum())
    return table


def _number(value, digits: int) -> str:
    return "--" if value is None or (isinstance(value, float) and math.isnan(value)) else f"{value:.{digits}f}"


BOLD = {"latex": "\\textbf{{{}}}", "markdown": "**{}**", "html": "<b>{}</b>"}


def _p(value, alpha: float, style: str) -> str:
    """A p-value, in bold when it is below the query set's threshold."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "--"
    text = f"{value:.3f}" if value >= 0.001 else f"{value:.1e}"
    return BOLD[style].format(text) if value < alpha else text


def _cells(table: pd.DataFrame, labels: dict[str, str], alphas: dict[str, float], style: str) -> list[list[str]]:
    """Body cells with the adjusted p-values (see `adjust_p_values`)."""
    percent = "\\%" if style == "latex" else "%"
    body = []
    for record in table.to_dict("records"):
        alpha = alphas[record["queryset"]]
        p = {column: _p(record[f"{column}_adj"], alpha, style) for column in P_COLUMNS}
        body.append([f"{labels[record['system']]} vs {labels[record['baseline']]} ({record['queryset']})",
                     str(record["seed"]), str(record["n_queries"]),
                     *(f"{100 * record[f'share_{o}']:.0f}{percent}" for o in ("neither", "only_a", "only_b")),
                     p["binomial_p"], f"{100 * record['share_both']:.0f}{percent}",
                     _number(record["esl_a"], 2), _number(record["esl_b"], 2), p["esl_wilcoxon_p"],
                     p["esl_t_p"], _number(record["rr_a"], 3), _number(record["rr_b"], 3),
                     p["rr_wilcoxon_p"], p["rr_t_p"]])
    return body


def caption(k: int, correction: str, n_tests: int, alphas: dict[str, float]) -> str:
    thresholds = ", ".join(f"{queryset}: $p < {alpha}$" for queryset, alpha in alphas.items())
    return (f"Outcome breakdown (Lin et al., 2021) of each ranker B against its baseline A at depth {k}, per "
            f"training seed: the share of queries where (1) neither run retrieves the relevant document in the "
            f"top {k}, (2) only one does (binomial test of A only against B only), or (3) both do; for (3), the "
            f"mean expected search length (ESL, the rank of the relevant document) and reciprocal rank (RR) of "
            f"each run with Wilcoxon signed-rank (WSR) and paired t-test p-values. Two-sided tests; "
            f"{describe(correction, n_tests)} (the CSV keeps the raw p-values too); bold: below the threshold "
            f"({thresholds}).")


def to_latex(table: pd.DataFrame, labels: dict[str, str], alphas: dict[str, float], text: str) -> str:
    return latex_table(HEADER, _cells(table, labels, alphas, "latex"), text, "tab:outcomes", wide=True)


def to_markdown(table: pd.DataFrame, labels: dict[str, str], alphas: dict[str, float], text: str) -> str:
    return markdown_table(HEADER, _cells(table, labels, alphas, "markdown"), text)


def to_html(table: pd.DataFrame, labels: dict[str, str], alphas: dict[str, float], text: str) -> str:
    return html_page(HEADER, _cells(table, labels, alphas, "html"), text)
