"""The RAG judge's swap check (issue 32): its prompt with the model answer before the evidence, a seeded sample of its
verdicts asked again, exact figures with a scripted judge and with the mock `order_biased` through `posbias probes
rag`, and the accuracy table's caption."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
import yaml

from posbias.cli import main
from posbias.probes import judge_swap, rag

ITEMS = [rag.RagItem(qid=f"q{i}", query=f"Where was person {i} born ?", gold=f"Town{i}",
                     evidence=f"Person {i} was born in Town{i} .", documents={}) for i in range(6)]


def test_the_swapped_prompt_has_the_same_words_with_the_model_answer_first():
    item = rag.RagItem("q1", "Where was Olga Nukral born ?", "Tarvon", "Olga Nukral was born in Tarvon .", {})
    assert rag.judge_prompt(item, "Tarvon", rag.SWAPPED) == (
        "Query: Where was Olga Nukral born ?\nModel Answer: Tarvon\n\nEvidence: Olga Nukral was born in Tarvon .\n"
        "Gold Answer: Tarvon\n\n\n\nDoes the Model Answer contain or imply the Gold Answer based on the evidence? "
        "YES or NO : ")
    assert sorted(rag.JUDGE_PROMPT_SWAPPED.split()) == sorted(rag.JUDGE_PROMPT.split())
    assert rag.judge_meta(item, "in tarvon, surely", rag.SWAPPED) == {"answer": "YES", "order": "swapped"}


def judged_rows(said: list[str]) -> pd.DataFrame:
    return pd.DataFrame({"reader": "r", "condition": "no_doc", "qid": [item.qid for item in ITEMS],
                         "answer": [f"Town{i}" if i < 4 else "The document does not provide it" for i in range(6)],
                         "judge": said, "correct": False})


def test_a_scripted_judge_that_flips_a_known_subset_gives_exact_figures():
    # as the study asks: YES for q0-q3; swapped, the judge turns q0 and q1 to NO and q5 to YES
    judged = judged_rows(["YES", "YES", "YES", "yes", "NO", "NO"])
    asked = []

    def judge(prompts, metas):
        asked.extend(metas)
        flip = {"q0": "NO", "q1": "NO", "q5": "YES"}
        return [flip.get(f"q{p.split('person ')[1][0]}", original) for p, original in zip(prompts, judged["judge"])]

    pairs = judge_swap.check(judged, ITEMS, judge, size=10, seed=0)
    assert pairs["qid"].tolist() == [f"q{i}" for i in range(6)] and {m["order"] for m in asked} == {"swapped"}
    assert pairs["yes_original"].tolist() == [True] * 4 + [False] * 2
    assert pairs["yes_swapped"].tolist() == [False, False, True, True, False, True]
    found = judge_swap.summary(pairs, eligible=6)
    assert (found["n"], found["agree"], found["only_original"], found["only_reordered"]) == (6, 3, 2, 1)
    assert found["mcnemar_p"] == pytest.approx(1.0) and found["clusters"] == 6  # 2 against 1, six questions
    # q4 and q5 abstain: the study's rule says NO whatever the judge says, so the judge's own YES is compared
    assert found["abstentions"] == 2 and found["same_answer"] == 3


def test_the_verdicts_on_one_question_are_one_cluster():
    # five sampled verdicts turn NO when swapped: four on q0 (two readers, two conditions), one on q1. The exact
    # McNemar test would count 5 independent flips (p = 2 / 2**5); they are 2 questions all one way: 2 / 2**2.
    qids = ["q0"] * 4 + ["q1", "q2"]
    pairs = pd.DataFrame({"reader": ["r", "r", "s", "s", "r", "r"], "condition": ["no_doc", "poison_doc"] * 3,
                          "qid": qids, "answer": "Town0", "judge_original": "YES", "yes_original": True,
                          "judge_swapped": ["NO"] * 5 + ["YES"], "yes_swapped": [False] * 5 + [True],
                          "abstention": False}, columns=list(judge_swap.PAIR_COLUMNS))
    found = judge_swap.summary(pairs, eligible=24)
    assert (found["n"], found["only_original"], found["only_reordered"], found["clusters"]) == (6, 5, 0, 3)
    assert found["mcnemar_p"] == pytest.approx(2 / 2 ** 2) and found["test"] == "clustered sign-flip over 3 clusters"


def test_the_sample_is_seeded_and_in_the_tables_order():
    judged = judged_rows(["NO"] * 6)
    drawn = judge_swap.draw(judged, 3, seed=5)
    assert drawn.index.tolist() == sorted(np.random.default_rng(5).choice(6, size=3, replace=False).tolist())
    assert judge_swap.draw(judged, 0, seed=5).empty
    assert judge_swap.check(judged, ITEMS, lambda p, m: 1 / 0, size=0, seed=0).empty  # off: nothing asked


def test_the_rag_caption_tells_the_judges_consistency_beside_its_verdicts():
    from posbias.probes.report import rag_table

    rows = [{"reader": "r", "condition": c, "qid": f"q{i}", "correct": bool(i % 2)} for c in rag.CONDITIONS
            for i in range(4)]
    table = rag.accuracy_table(pd.DataFrame(rows))
    pairs = judge_swap.check(judged_rows(["YES"] * 6), ITEMS, lambda p, m: ["NO"] * len(p), size=4, seed=0)
    figures = {**judge_swap.summary(pairs, 6), "judge": "j", "judge_label": "Judge J"}
    caption = rag_table(table, {}, consistency=figures)[2]
    assert ("The judge (Judge J) decides alike with the model answer placed before the evidence and gold answer for "
            "0.0% [0, 49] of 4 sampled answers (95% Wilson interval); YES only in the study's layout 4, only swapped "
            "0 (clustered sign-flip over 4 clusters, one per question: two-sided p 0.125).") in caption
    assert "swap check is off" in rag_table(table, {}, consistency={"n": 0})[2]


def test_the_order_biased_mock_judge_through_the_command_line(tmp_path):
    from pathlib import Path

    config = yaml.safe_load((Path(__file__).resolve().parents[2] / "config" / "test" / "tiny.yaml").read_text())
    config["llm"] = {**config["llm"], "cache": {"dir": str(tmp_path / "cache"), "mode": "read_write"},
                     "models": {**config["llm"]["models"], "biased": {"backend": "mock", "model": "order_biased"}}}
    config["probes"]["rag"] = {**config["probes"]["rag"], "judge": "biased", "consistency": {"sample": 12, "seed": 3}}
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    pairs_dir, out = tmp_path / "pairs", tmp_path / "rag"
    assert main(["probes", "build", "--config", str(tmp_path / "config.yaml"), "--out", str(pairs_dir)]) == 0
    assert main(["probes", "rag", "--config", str(tmp_path / "config.yaml"), "--pairs", str(pairs_dir),
                 "--out", str(out)]) == 0
    answers = pd.read_parquet(out / "answers.parquet")
    pairs = pd.read_parquet(out / "judge_consistency.parquet")
    figures = json.loads((out / "judge_consistency.json").read_text())
    assert len(pairs) == figures["n"] == 12 and figures["eligible"] == len(answers) == 32
    assert pairs.index.equals(pd.RangeIndex(12))
    # as the study asks, the mock says YES where the gold answer is in the (echoing) reader's answer; swapped, "0"
    expected = [gold.lower() in answer.lower() for gold, answer in zip(
        pairs["qid"].map({r["qid"]: r["gold"] for r in map(json.loads, open(pairs_dir / "poison_replacements.jsonl"))}),
        pairs["answer"])]
    flipped = sum(expected)
    assert pairs["yes_original"].tolist() == expected and not pairs["yes_swapped"].any() and flipped > 0
    assert (figures["only_original"], figures["only_reordered"], figures["agree"]) == (flipped, 0, 12 - flipped)
    # the sampled verdicts share questions (4 conditions each): the test counts the questions, all one way
    questions = pairs.loc[pairs["yes_original"], "qid"].nunique()
    assert figures["clusters"] == pairs["qid"].nunique()
    assert figures["mcnemar_p"] == pytest.approx(min(1.0, 2 / 2 ** questions))
    assert "The judge (biased) decides alike" in (out / "rag.md").read_text()
