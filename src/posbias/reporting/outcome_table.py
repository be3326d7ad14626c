"""Lin et al.'s outcome breakdown of every model against its baseline, one row per training seed.

The breakdown is defined per run (a query's outcome depends on where one run put the relevant
document), so it is not computed on seed-averaged values: each seed of a model is paired with
the same seed of its baseline. Run A is the baseline, run B the model, as in Lin et al.'s
Table 2. It is computed from the persisted per-query RR@k values: RR@k is 1/rank of the
relevant document within the top k, and 0 when it is not there.

Lin et al. print raw p-values; here all p-values of the breakdown form one family, adjusted with
the correction of `tables.outcomes.correction` (the raw ones stay in the CSV).

Printed as one table would be 16 columns by (models x seeds x query sets) rows, so the LaTeX,
Markdown and HTML files hold two tables per query set instead:
- "retrieved": which run finds the relevant document in the top k: the four outcome shares,
  rounded so that each row sums to 100%, and the binomial test of "only A" against "only B";
- "both": the queries both runs find: mean ESL and RR of each run, with their paired tests.
Each has its own caption and label, `tab:outcomes-<query set>-retrieved` and `...-both` (with
the query set's underscores written as '-', see `render.latex_label`).
"""

from __future__ import annotations


import pandas as pd

from posbias.io import Qrels
from posbias.reporting.percentages import whole_percentages
from posbias.reporting.render import MISSING, Cell, Table, is_missing, number
from posbias.stats.corrections import adjust, describe
from posbias.stats.outcomes import outcome_breakdown

OUTCOMES = ("neither", "only_a", "only_b", "both")
P_COLUMNS = ("binomial_p", "esl_wilcoxon_p", "esl_t_p", "rr_wilcoxon_p", "rr_t_p")
PAIR_HEADER = ["Ranker (B) vs baseline (A)", "Seed"]
RETRIEVED_HEADER = [*PAIR_HEADER, "Queries", "(1) neither", "(2) A only", "(2) B only", "(3) both", "binom. p"]
BOTH_HEADER = [*PAIR_HEADER, "Queries in (3)", "ESL A", "ESL B", "ESL WSR p", "ESL t p", "RR A", "RR B",
               "RR WSR p", "RR t p"]


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
                for outcome in OUTCOMES:
                    record[f"n_{outcome}"] = breakdown["counts"][outcome]
                    record[f"share_{outcome}"] = breakdown["shares"][outcome]
                record.update(breakdown["both"])
                records.append(record)
    return pd.DataFrame.from_records(records)


def adjust_p_values(table: pd.DataFrame, correction: str) -> pd.DataFrame:
    """Add `<p column>_adj` for every p-value column: one family over all rows and tests of the table.

    Tests that could not run (nan: no "both" queries, or every pair ties) are not counted. `attrs` keeps the family
    size (`n_tests`) and the `correction`, for the captions.
    """
    table = table.copy()
    raw = table[list(P_COLUMNS)].to_numpy(float)
    adjusted = adjust(raw.ravel(), correction).reshape(raw.shape)
    for i, column in enumerate(P_COLUMNS):
        table[f"{column}_adj"] = adjusted[:, i]
    table.attrs["n_tests"] = int((~pd.isna(raw)).sum())
    table.attrs["correction"] = correction
    return table


def _p(value, alpha: float) -> str | Cell:
    """An adjusted p-value, in bold when it is below the query set's threshold."""
    if is_missing(value):
        return MISSING
    return Cell(f"{value:.3f}" if value >= 0.001 else f"{value:.1e}", bold=value < alpha)


def _pair_cells(records: list[dict], labels: dict[str, str]) -> list[list[str]]:
    """Pair label and seed; the label only on a pair's first row, so the seeds read as one group."""
    cells, previous = [], None
    for record in records:
        pair = (record["system"], record["baseline"])
        label = f"{labels[pair[0]]} vs {labels[pair[1]]}" if pair != previous else ""
        cells.append([label, str(record["seed"])])
        previous = pair
    return cells


def _retrieved_body(records: list[dict], labels: dict[str, str], alpha: float) -> list[list[str | Cell]]:
    body = []
    for pair, record in zip(_pair_cells(records, labels), records):
        shares = whole_percentages([record[f"n_{o}"] for o in OUTCOMES])
        body.append([*pair, str(record["n_queries"]), *(f"{share}%" for share in shares),
                     _p(record["binomial_p_adj"], alpha)])
    return body


def _both_body(records: list[dict], labels: dict[str, str], alpha: float) -> list[list[str | Cell]]:
    return [[*pair, str(record["n_both"]), number(record["esl_a"], 2), number(record["esl_b"], 2),
             _p(record["esl_wilcoxon_p_adj"], alpha), _p(record["esl_t_p_adj"], alpha),
             number(record["rr_a"], 3), number(record["rr_b"], 3),
             _p(record["rr_wilcoxon_p_adj"], alpha), _p(record["rr_t_p_adj"], alpha)]
            for pair, record in zip(_pair_cells(records, labels), records)]


def parts(table: pd.DataFrame, labels: dict[str, str], alphas: dict[str, float]) -> list[Table]:
    """The printed tables of an `adjust_p_values` table: for each query set, "retrieved" then "both"."""
    correction = describe(table.attrs["correction"], table.attrs["n_tests"],
                          "the outcome breakdown (all its query sets, both parts)")
    printed = []
    for queryset, part in table.groupby("queryset", sort=True):
        records, alpha, k = part.to_dict("records"), alphas[queryset], int(part["k"].iloc[0])
        notes = (f"{correction}; the CSV keeps the raw p-values too. Bold: below the threshold, $p < {alpha}$. "
                 f"{MISSING}: no test (no such query, or every pair ties), left out of the count.")
        printed.append(Table(RETRIEVED_HEADER, _retrieved_body(records, labels, alpha),
                            f"Outcome breakdown (Lin et al., 2021) on {queryset}, part 1: where each ranker B and "
                            f"its baseline A put the relevant document, per training seed. Shares of the queries "
                            f"where (1) neither run retrieves it in the top {k}, (2) only one does, or (3) both "
                            f"do, rounded so that each row sums to 100%; binom. p: two-sided binomial test of "
                            f"A only against B only. {notes}", f"tab:outcomes-{queryset}-retrieved", wide=True))
        printed.append(Table(BOTH_HEADER, _both_body(records, labels, alpha),
                            f"Outcome breakdown (Lin et al., 2021) on {queryset}, part 2: the queries where both "
                            f"runs retrieve the relevant document in the top {k} (outcome 3 of part 1), per "
                            f"training seed: mean expected search length (ESL, the rank of the relevant document) "
                            f"and reciprocal rank (RR) of each run, with two-sided Wilcoxon signed-rank (WSR) and "
                            f"paired t-test p-values. {notes}", f"tab:outcomes-{queryset}-both", wide=True))
    return printed
