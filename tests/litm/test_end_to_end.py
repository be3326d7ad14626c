"""Data files, predictions, scores and the position table on the four-question fixture, with a fake model whose
answers are known exactly (so is every accuracy, the "*" question's free point included)."""

import pandas as pd
import pytest

from posbias.litm.stats import gap_table, position_table
from posbias.reading.predict import predict, read_examples, write_predictions
from posbias.reading.qa_builder import write_oracle_file, write_position_file
from posbias.litm.score import score_file
from posbias.llm.types import Completion, Decoding

P_RIGHT = {0: 1.0, 1: 0.5, 2: 0.25, 3: 0.75}  # share of the questions answered right, by gold index


class FakeU:
    """Answers the first P_RIGHT[gold] of the questions right (a quarter closed book, all with the oracle)."""

    def generate(self, requests, decoding):
        out = []
        for request in requests:
            meta = request.meta
            p = 1.0 if meta["n_items"] == 1 else 0.25 if meta["gold_index"] is None else P_RIGHT[meta["gold_index"]]
            right = (meta["example_index"] + 0.5) / meta["n_examples"] < p
            out.append(Completion(text=meta["answer"] if right else "I don't know.", finish_reason="stop",
                                  prompt_tokens=None, completion_tokens=None, latency_s=0.0, cache_key="k",
                                  cache_hit=True))
        return out


def _run(tmp_path, source, name, excluded=(), **options) -> pd.DataFrame:
    predictions = tmp_path / "predictions" / f"{name}.jsonl.gz"
    write_predictions(predictions, predict(read_examples(source, "qa", **options), FakeU(), Decoding(), "fake",
                                           "mock", excluded=excluded))
    return score_file(predictions, tmp_path / "scored" / f"{name}.jsonl.gz")


@pytest.mark.parametrize("excluded", [(), ("2",)])
def test_from_retrieval_results_to_the_position_table(tmp_path, retrieval_file, excluded):
    frames = []
    for gold_index in range(4):
        data = tmp_path / "data" / "4docs" / f"gold_at_{gold_index}.jsonl.gz"
        write_position_file(retrieval_file, data, k=4, gold_index=gold_index)
        frames.append(_run(tmp_path, data, f"gold_at_{gold_index}", excluded).assign(size=4))
    oracle = tmp_path / "data" / "oracle.jsonl.gz"
    write_oracle_file(retrieval_file, oracle)
    frames.append(_run(tmp_path, oracle, "oracle", excluded).assign(size=1))
    frames.append(_run(tmp_path, oracle, "closedbook", excluded, closedbook=True).assign(size=0))
    scored = pd.concat(frames).assign(model="fake", task="qa", variant="default")
    table = position_table(scored)
    curve = table[table["level"] == "position"]
    # question 3's gold answer "*" normalises to "" and matches "I don't know." too
    right = {0: {0, 1, 2, 3}, 1: {0, 1, 3}, 2: {0, 3}, 3: {0, 1, 2, 3}}
    kept = {0, 1, 2, 3} - {int(i) for i in excluded}
    assert curve["n"].tolist() == [len(kept)] * 4
    assert curve["accuracy"].tolist() == [len(right[g] & kept) / len(kept) for g in range(4)]
    (gaps,) = gap_table(table).to_dict("records")
    assert (gaps["best_index"], gaps["worst_index"]) == (0, 2)
    assert gaps["closedbook"] == len({0, 3} & kept) / len(kept) and gaps["oracle"] == 1.0
