"""Lin et al.'s outcome breakdown of two runs (SIGIR 2021, "Significant improvements over the state of the art?").

With one relevant document per query, a run's result for a query is the rank
of its first relevant document in the top k, or no such document. Comparing
runs A and B, each query falls into one of four outcomes: neither run finds a
relevant document, only A does, only B does, or both do. "Only A" against
"only B" is a binomial question (which run answers more queries); only for
"both" queries is there a rank in each run to compare, as expected search
length (ESL, the rank itself: a ratio scale) and as reciprocal rank, with
paired tests. The single mean RR@k folds these outcomes together.

Everything is computed from per-query RR@k values (trec_eval: 1 / rank of the
first relevant document in the top k, 0 when there is none), so persisted
per-query metric files suffice; the runs are not needed.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import stats

from posbias.stats.paired import align, json_number, t_test, wilcoxon_signed_rank

_TOLERANCE = 1e-6


def first_relevant_rank(rr_at_k: pd.Series) -> pd.Series:
    """Rank of the first relevant document (nullable Int64), <NA> where RR@k is 0."""
    rr = rr_at_k.to_numpy(float)
    found = rr > 0
    with np.errstate(divide="ignore"):
        rank = np.where(found, np.round(1.0 / np.where(found, rr, 1.0)), 0)
    # An RR@k value is 0 or 1/r for a whole rank r >= 1; anything else (nan, 0.3, 1.5) is another metric.
    valid = (rr == 0) | (found & (rank >= 1) & (np.abs(rr - 1.0 / np.maximum(rank, 1)) <= _TOLERANCE))
    if not valid.all():
        bad = rr_at_k[~valid]
        raise ValueError(f"these are not RR@k values (0 or 1/rank): {dict(bad.head(3))}")
    ranks = pd.array(np.where(found, rank, 0).astype(np.int64), dtype="Int64")
    ranks[~found] = pd.NA
    return pd.Series(ranks, index=rr_at_k.index, name=rr_at_k.name)


@dataclass(frozen=True)
class OutcomeBreakdown:
    k: int
    n_queries: int
    n_neither: int
    n_only_a: int
    n_only_b: int
    n_both: int
    # Over the "both" queries (nan when there are none; a p is also nan, no test, when every pair ties); ESL = rank
    # of the first relevant document.
    esl_a: float
    esl_b: float
    esl_wilcoxon_p: float
    esl_t_p: float
    rr_a: float
    rr_b: float
    rr_wilcoxon_p: float
    rr_t_p: float

    def _share(self, count: int) -> float:
        return count / self.n_queries if self.n_queries else float("nan")

    @property
    def share_neither(self) -> float:
        return self._share(self.n_neither)

    @property
    def share_only_a(self) -> float:
        return self._share(self.n_only_a)

    @property
    def share_only_b(self) -> float:
        return self._share(self.n_only_b)

    @property
    def share_both(self) -> float:
        return self._share(self.n_both)

    @property
    def binomial_p(self) -> float:
        """Two-sided binomial test: is a query answered by one run only as likely to be A's as B's? NaN (no test)
        when there is no such query: every query ties on found / not found."""
        decided = self.n_only_a + self.n_only_b
        if decided == 0:
            return float("nan")  # binomtest would say 1 for 0 trials; with nothing to test there is no p
        return float(stats.binomtest(self.n_only_a, decided, 0.5).pvalue)

    def to_dict(self) -> dict:
        """Nested JSON-ready dict; nan becomes None."""
        return {
            "k": self.k,
            "n_queries": self.n_queries,
            "counts": {"neither": self.n_neither, "only_a": self.n_only_a, "only_b": self.n_only_b,
                       "both": self.n_both},
            "shares": {"neither": json_number(self.share_neither), "only_a": json_number(self.share_only_a),
                       "only_b": json_number(self.share_only_b), "both": json_number(self.share_both)},
            "binomial_p": json_number(self.binomial_p),
            "both": {name: json_number(getattr(self, name))
                     for name in ("esl_a", "esl_b", "esl_wilcoxon_p", "esl_t_p",
                                  "rr_a", "rr_b", "rr_wilcoxon_p", "rr_t_p")},
        }


def _mean_and_tests(x: np.ndarray, y: np.ndarray) -> tuple[float, float, float, float]:
    """(mean x, mean y, Wilcoxon signed-rank p, paired t p); all nan without values."""
    if len(x) == 0:
        return (float("nan"),) * 4
    return float(x.mean()), float(y.mean()), wilcoxon_signed_rank(x, y), t_test(x, y)[1]


def outcome_breakdown(rr_a: pd.Series, rr_b: pd.Series, k: int) -> OutcomeBreakdown:
    """Outcome breakdown of runs A and B from their per-query RR@k values (series indexed by qid)."""
    x, y = align(rr_a, rr_b)
    qids = sorted(rr_a.index)
    rank_a = first_relevant_rank(pd.Series(x, index=qids))
    rank_b = first_relevant_rank(pd.Series(y, index=qids))
    deepest = pd.concat([rank_a, rank_b]).max()
    if deepest is not pd.NA and deepest > k:
        raise ValueError(f"a first relevant document at rank {deepest}: these are not RR@{k} values")
    found_a, found_b = rank_a.notna().to_numpy(), rank_b.notna().to_numpy()
    both = found_a & found_b
    esl = _mean_and_tests(rank_a[both].to_numpy(float), rank_b[both].to_numpy(float))
    rr = _mean_and_tests(x[both], y[both])
    return OutcomeBreakdown(
        k=k, n_queries=len(x), n_neither=int((~found_a & ~found_b).sum()), n_only_a=int((found_a & ~found_b).sum()),
        n_only_b=int((~found_a & found_b).sum()), n_both=int(both.sum()),
        esl_a=esl[0], esl_b=esl[1], esl_wilcoxon_p=esl[2], esl_t_p=esl[3],
        rr_a=rr[0], rr_b=rr[1], rr_wilcoxon_p=rr[2], rr_t_p=rr[3])


def rank_sum_p(a: pd.Series, b: pd.Series) -> float:
    """Two-sided p of the Wilcoxon rank-sum test of two systems' per-query values (Lin et al.'s Table 1).

    Unpaired: it compares the two distributions of values and ignores which
    query each value belongs to; it only assumes an ordinal scale. Per-query values
    such as RR tie heavily, so the normal approximation uses the tie-corrected variance
    (Mann-Whitney U, the same test; `scipy.stats.ranksums` has no tie correction).
    """
    return float(stats.mannwhitneyu(a.to_numpy(float), b.to_numpy(float), alternative="two-sided",
                                    method="asymptotic", use_continuity=False).pvalue)
