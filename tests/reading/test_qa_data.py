import json

import pytest

from posbias.errors import InputError
from posbias.reading.matching import has_answer
from posbias.reading.qa_data import DOCUMENT_FIELDS, gold_position, model_document, read_qa_records


def test_reads_the_gzipped_records_unchanged(retrieval_file, retrieval_records):
    assert read_qa_records(retrieval_file, require_gold=True) == retrieval_records
    assert read_qa_records(retrieval_file, limit=2) == retrieval_records[:2]


def test_the_fixture_flags_agree_with_the_matcher(retrieval_records):
    for record in retrieval_records:
        assert [c["hasanswer"] for c in record["ctxs"]] == [has_answer(c["text"], record["answers"])
                                                            for c in record["ctxs"]]


def test_model_document_fills_missing_fields_and_parses_the_score():
    gold = {"title": "T", "text": "x", "hasanswer": True, "isgold": True}
    assert model_document(gold) == dict(dict.fromkeys(DOCUMENT_FIELDS), **gold)
    distractor = {"id": "9459602", "title": "T", "text": "x", "score": "0.97236913", "hasanswer": False,
                  "original_retrieval_index": 65, "isgold": False}
    document = model_document(distractor)
    assert document["score"] == 0.97236913 and document["original_retrieval_index"] == 65
    assert list(document) == list(DOCUMENT_FIELDS)


def test_gold_position():
    assert gold_position([{"isgold": False}, {"isgold": True}]) == 1
    assert gold_position([{"title": "a"}]) is None


@pytest.mark.parametrize("mutate, message", [
    (lambda r: r.pop("question"), '"question"'),
    (lambda r: r.update(answers=[]), '"answers"'),
    (lambda r: r.update(answers="Canberra"), '"answers"'),
    (lambda r: r["ctxs"][2].update(score="high"), r"ctxs\[2\]\.score 'high'"),
    (lambda r: r["ctxs"][1].pop("text"), r"ctxs\[1\]\.text"),
    (lambda r: r["ctxs"][0].update(hasanswer="yes"), r"ctxs\[0\]\.hasanswer"),
    (lambda r: r["ctxs"][0].update(original_retrieval_index=-1), "original_retrieval_index"),
    (lambda r: [c.update(isgold=True) for c in r["ctxs"][:2]], "more than one"),
    (lambda r: r.pop("nq_annotated_gold"), "nq_annotated_gold"),
])
def test_bad_records_name_the_file_line_and_field(tmp_path, write_gz, retrieval_records, mutate, message):
    mutate(retrieval_records[1])
    path = write_gz(tmp_path / "bad.jsonl.gz", retrieval_records)
    with pytest.raises(InputError, match=rf"bad\.jsonl\.gz:2: .*{message}"):
        read_qa_records(path, require_gold=True)


def test_invalid_json_and_empty_files_are_input_errors(tmp_path, write_gz, retrieval_records):
    path = write_gz(tmp_path / "broken.jsonl.gz", [json.dumps(retrieval_records[0]), "{not json"])
    with pytest.raises(InputError, match=r"broken\.jsonl\.gz:2: invalid JSON"):
        read_qa_records(path)
    with pytest.raises(InputError, match="empty"):
        read_qa_records(write_gz(tmp_path / "empty.jsonl.gz", []))
