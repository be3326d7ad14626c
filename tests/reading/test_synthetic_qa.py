import re

import numpy as np
import pytest

from posbias.errors import InputError
from posbias.reading.matching import has_answer
from posbias.reading.qa_builder import build_position
from posbias.reading.qa_data import read_qa_records
from posbias.reading.synthetic_qa import (answer_value, parse_fact, parse_question, synthetic_qa_records,
                                       write_synthetic_qa)

# A small world in the config's `generator.settings` shape: 12 questions, about 160 passages.
SETTINGS = {"seed": 5, "n_entities": 30, "n_train_queries": 5, "n_dev_queries": 5, "n_test_queries": 2,
            "n_farrelevant_queries": 12, "first_window": 24, "min_doc_tokens": 30, "max_doc_tokens": 72,
            "early_fraction": 0.85, "literal_fraction": 1.0, "hard_negatives": 1, "pool_passages": 150}


def overlap(questions, texts):
    """A cheap stand-in for the dense encoder: shared words."""
    words = [set(re.findall(r"\w+", t)) for t in texts]
    return np.array([[len(set(q.split()) & w) / (1 + len(w)) for w in words] for q in questions])


def test_records_have_exactly_the_retrieval_schema():
    records = synthetic_qa_records(SETTINGS, 8, depth=30, rank=overlap)
    assert len(records) == 8
    for record in records:
        assert list(record) == ["question", "answers", "ctxs", "nq_annotated_gold"]
        assert set(record["nq_annotated_gold"]) == {"title", "long_answer", "chunked_long_answer", "short_answers"}
        assert len(record["ctxs"]) == 30
        scores = [float(c["score"]) for c in record["ctxs"]]
        assert scores == sorted(scores, reverse=True) and all(isinstance(c["score"], str) for c in record["ctxs"])
        for ctx in record["ctxs"]:
            assert set(ctx) == {"id", "title", "text", "score", "hasanswer"}
            assert ctx["hasanswer"] is has_answer(ctx["text"], record["answers"])
        gold = record["nq_annotated_gold"]
        (value,) = record["answers"]
        entity, _ = parse_question(record["question"])
        assert gold["title"] == entity and value in gold["chunked_long_answer"] and gold["short_answers"] == [value]
        assert not record["question"].endswith("?")
    assert len({r["question"] for r in records}) == 8


def test_records_are_deterministic_and_feed_the_builder():
    records = synthetic_qa_records(SETTINGS, 6, depth=30, rank=overlap)
    assert records == synthetic_qa_records(SETTINGS, 6, depth=30, rank=overlap)
    for record in records:
        built = build_position(record, 10, 4)
        assert built["ctxs"][4]["isgold"] and not any(c["hasanswer"] for c in built["ctxs"] if not c["isgold"])


def test_bad_requests_are_refused():
    with pytest.raises(InputError, match="n_farrelevant_queries=12"):
        synthetic_qa_records(SETTINGS, 13, rank=overlap)
    with pytest.raises(InputError, match="unknown keys"):
        synthetic_qa_records({**SETTINGS, "n_entitys": 3}, 2, rank=overlap)


def test_facts_are_read_back_with_the_world_templates():
    assert parse_question("what is the capital of zorvia") == ("zorvia", "capital")
    assert parse_question("capital city of zorvia") == ("zorvia", "capital")
    assert parse_question("what is zorvia") == ("zorvia", "definition")
    assert answer_value("the highest mountain in zorvia is mount krebal.", "zorvia", "mountain") == "krebal"
    assert answer_value("anna brolun established zorvia many generations ago.", "zorvia", "founder") == "anna brolun"
    assert parse_fact("mount krebal is the tallest mountain of zorvia.") == ("zorvia", "mountain", "krebal")
    assert parse_fact("the city library stays quiet on winter evenings as it has done for decades.") is None
    with pytest.raises(InputError):
        parse_question("where is zorvia")


@pytest.fixture(scope="module")
def dense_file(tmp_path_factory):
    """The real thing, once: the offline MiniLM ranks the world's passages."""
    path = tmp_path_factory.mktemp("synthetic") / "retrieved.jsonl.gz"
    write_synthetic_qa(path, SETTINGS, 12, depth=40)
    return path


def test_dense_ranking_makes_hard_negatives(dense_file):
    records = read_qa_records(dense_file, require_gold=True)
    assert len(records) == 12
    hard = 0
    for record in records:
        entity, relation = parse_question(record["question"])
        assert record["ctxs"][0]["text"] == record["nq_annotated_gold"]["chunked_long_answer"] or any(
            c["text"] == record["nq_annotated_gold"]["chunked_long_answer"] for c in record["ctxs"][:5])
        top = next(c for c in record["ctxs"] if not c["hasanswer"])
        fact = parse_fact(top["text"])
        hard += entity in top["text"].split() or entity + "." in top["text"] or (fact and fact[1] == relation)
    assert hard >= 10  # the first distractor is about the entity or states the same relation for another one
