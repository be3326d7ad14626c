"""The RAG judge's own position bias (issue 32, "the judges' own bias"): a seeded sample of its verdicts is judged
again with the model answer placed before the evidence and gold answer (`posbias.probes.rag.JUDGE_PROMPT_SWAPPED`,
the same words), through the same response cache. A judge that weighs what it reads first or last more says YES to
one layout more often, and the accuracy table inherits that.

What is compared is the judge's own decision (`rag.says_yes`), before the study's abstention rule: that rule decides
an abstaining reader's verdict whatever the judge says, so it would hide the judge's consistency. Per check: the
share of sampled answers with the same decision in both layouts with its Wilson interval, and the test of YES as the
study asks against YES swapped (`posbias.stats.consistency`), clustered by question: the sampled verdicts of several
readers and conditions on one question are not independent; how many of the sample the abstention rule overrides is
counted beside.
"""

from __future__ import annotations

from typing import Callable, Sequence

import pandas as pd

from posbias.probes import rag
from posbias.stats.consistency import order_consistency, sample_indices

PAIR_COLUMNS = ("reader", "condition", "qid", "answer", "judge_original", "yes_original", "judge_swapped",
                "yes_swapped", "abstention")


def draw(judged: pd.DataFrame, size: int, seed: int) -> pd.DataFrame:
    """Up to `size` rows of `answer_and_judge`'s table, drawn without replacement with numpy seed `seed`, in the
    table's order."""
    return judged.iloc[sample_indices(len(judged), size, seed)]


def check(judged: pd.DataFrame, rag_items: Sequence[rag.RagItem], judge: Callable[[list[str], list[dict]], list[str]],
          size: int, seed: int) -> pd.DataFrame:
    """The sampled verdicts (`draw`) judged again by `judge` with the blocks swapped: one row per sampled answer,
    the judge's answer and decision in each layout (`PAIR_COLUMNS`)."""
    sample = draw(judged, size, seed)
    if not len(sample):
        return pd.DataFrame(columns=list(PAIR_COLUMNS))
    items = {item.qid: item for item in rag_items}
    cases = [(items[row.qid], row.answer) for row in sample.itertuples()]
    swapped = judge([rag.judge_prompt(item, answer, rag.SWAPPED) for item, answer in cases],
                    [rag.judge_meta(item, answer, rag.SWAPPED) for item, answer in cases])
    first = sample["judge"].tolist()
    return pd.DataFrame({"reader": sample["reader"].tolist(), "condition": sample["condition"].tolist(),
                         "qid": sample["qid"].tolist(), "answer": sample["answer"].tolist(), "judge_original": first,
                         "yes_original": [rag.says_yes(said) for said in first], "judge_swapped": swapped,
                         "yes_swapped": [rag.says_yes(said) for said in swapped],
                         "abstention": [rag.ABSTENTION in answer for _, answer in cases]}, columns=list(PAIR_COLUMNS))


def summary(pairs: pd.DataFrame, eligible: int, alpha: float = 0.05) -> dict:
    """The judge's consistency over `pairs` (`check`); `eligible`: the verdicts the sample was drawn from."""
    decisions = order_consistency(pairs["yes_original"].tolist(), pairs["yes_swapped"].tolist(),
                                  pairs["qid"].tolist(), alpha)  # a question's verdicts form one cluster
    same = pairs["judge_original"] == pairs["judge_swapped"]
    return {"eligible": eligible, **decisions,
            "same_answer": int(same.sum()), "abstentions": int(pairs["abstention"].sum())}
