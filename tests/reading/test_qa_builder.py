from collections import Counter
import json

import pytest

from posbias.errors import InputError
from posbias.reading.qa_builder import (build_position, mark_answers, oracle_record, question_rng,
                                     shuffle_distractors, write_oracle_file, write_position_file)
from posbias.reading.qa_data import read_qa_records


def _key(ctx) -> str:
    return json.dumps(ctx, sort_keys=True)


@pytest.mark.parametrize("k", [2, 4, 6])
def test_position_invariants(retrieval_records, k):
    for record in retrieval_records:
        for gold_index in range(k):
            built = build_position(record, k, gold_index)
            ctxs = built["ctxs"]
            assert len(ctxs) == k
            assert [i for i, c in enumerate(ctxs) if c["isgold"]] == [gold_index]
            gold = ctxs[gold_index]
            assert gold == {"title": record["nq_annotated_gold"]["title"], "hasanswer": True, "isgold": True,
                            "text": record["nq_annotated_gold"]["chunked_long_answer"]}
            others = [c for c in ctxs if not c["isgold"]]
            assert not any(c["hasanswer"] for c in others)
            indices = [c["original_retrieval_index"] for c in others]
            assert indices == sorted(indices)
            for c in others:  # each distractor is the retrieved passage at its original index
                source = record["ctxs"][c["original_retrieval_index"]]
                assert {key: c[key] for key in source} == source and c["isgold"] is False


def test_distractors_are_the_first_non_answer_passages(retrieval_records):
    built = build_position(retrieval_records[0], 4, 0)
    assert [c.get("original_retrieval_index") for c in built["ctxs"]] == [None, 1, 2, 4]
    assert built["question"] == retrieval_records[0]["question"] and built["nq_annotated_gold"]
    assert list(built) == list(retrieval_records[0])  # same fields in the same order, ctxs replaced


def test_smaller_lists_are_prefixes_and_positions_hold_the_same_documents(retrieval_records):
    record = retrieval_records[1]
    lists = {k: [c for c in build_position(record, k, 0)["ctxs"] if not c["isgold"]] for k in (2, 4, 6)}
    assert lists[2] == lists[4][:1] and lists[4] == lists[6][:3]
    at = {g: build_position(record, 6, g)["ctxs"] for g in range(6)}
    assert all(Counter(map(_key, at[g])) == Counter(map(_key, at[0])) for g in at)
    for g in at:  # the distractors keep their order whatever the gold index
        assert [c for c in at[g] if not c["isgold"]] == lists[6]


def test_builder_needs_k_minus_one_non_answer_passages_not_k(retrieval_records):
    record = retrieval_records[2]  # 5 passages without the answer
    assert len(build_position(record, 6, 5)["ctxs"]) == 6  # the authors would refuse this
    with pytest.raises(InputError, match="has 5 retrieved passages without an answer; 6"):
        build_position(record, 7, 0)


@pytest.mark.parametrize("k, gold_index", [(1, 0), (4, 4), (4, -1)])
def test_builder_refuses_impossible_positions(retrieval_records, k, gold_index):
    with pytest.raises(InputError):
        build_position(retrieval_records[0], k, gold_index)


def test_builder_does_not_change_its_input(retrieval_records):
    before = json.dumps(retrieval_records)
    build_position(retrieval_records[0], 4, 2)
    oracle_record(retrieval_records[0])
    assert json.dumps(retrieval_records) == before


def test_oracle_record_holds_only_the_gold_document(retrieval_records):
    (gold,) = oracle_record(retrieval_records[3])["ctxs"]
    assert gold["isgold"] and gold["text"].startswith("In computing, the asterisk")


def test_mark_answers_sets_hasanswer_with_the_matcher(retrieval_records):
    record = retrieval_records[2]
    unmarked = {**record, "ctxs": [{k: v for k, v in c.items() if k != "hasanswer"} for c in record["ctxs"]]}
    with pytest.raises(InputError, match="hasanswer"):
        build_position(unmarked, 3, 0)
    assert mark_answers(unmarked)["ctxs"] == record["ctxs"]


def test_random_order_keeps_the_gold_in_place_and_depends_only_on_seed_and_question(retrieval_records):
    ctxs = build_position(retrieval_records[0], 6, 2)["ctxs"]
    question = retrieval_records[0]["question"]
    shuffled = shuffle_distractors(ctxs, question_rng(0, question))
    assert shuffled[2] is ctxs[2]
    assert Counter(map(_key, shuffled)) == Counter(map(_key, ctxs))
    assert shuffle_distractors(ctxs, question_rng(0, question)) == shuffled  # no global state
    orders = {tuple(c.get("original_retrieval_index") for c in shuffle_distractors(ctxs, question_rng(s, question)))
              for s in range(8)}
    assert len(orders) > 1  # the seed matters
    with pytest.raises(InputError, match="isgold"):
        shuffle_distractors([c for c in ctxs if not c["isgold"]], question_rng(0, question))


def test_position_and_oracle_files(tmp_path, retrieval_file, retrieval_records, read_gz):
    out = tmp_path / "20docs" / "gold_at_1.jsonl.gz"
    assert write_position_file(retrieval_file, out, k=4, gold_index=1, limit=3) == 3
    assert read_gz(out) == [build_position(r, 4, 1) for r in retrieval_records[:3]]
    again = tmp_path / "again.jsonl.gz"
    write_position_file(retrieval_file, again, k=4, gold_index=1, limit=3)
    assert again.read_bytes() == out.read_bytes()  # reproducible bytes
    assert write_oracle_file(retrieval_file, tmp_path / "oracle.jsonl.gz") == 4
    assert read_qa_records(tmp_path / "oracle.jsonl.gz") == [oracle_record(r) for r in retrieval_records]


def test_a_question_that_cannot_be_built_names_its_line_and_leaves_no_file(tmp_path, retrieval_file):
    out = tmp_path / "gold_at_0.jsonl.gz"
    with pytest.raises(InputError, match=r"retrieved\.jsonl\.gz:3: .*capital of australia"):
        write_position_file(retrieval_file, out, k=7, gold_index=0)
    assert list(tmp_path.iterdir()) == [retrieval_file]
