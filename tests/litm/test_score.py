import pytest

from posbias.errors import InputError
from posbias.litm.score import score_file


def _qa(answer, answers, gold_at=1, **extra):
    docs = [{"title": f"t{i}", "text": f"x{i}", "isgold": i == gold_at} for i in range(3)]
    return {"question": "q", "answers": answers, "ctxs": docs, "model_documents": docs, "model_answer": answer,
            **extra}


def test_qa_file_with_only_the_authors_fields(tmp_path, write_gz, read_gz):
    path = write_gz(tmp_path / "preds.jsonl.gz", [
        _qa("George Eliot wrote it", ["George Eliot"]),
        _qa("\nGeorge Eliot", ["George Eliot"]),  # empty first line: 0
        _qa("in 1400", ["14"], gold_at=2),  # substring leniency
        _qa("who knows", ["*"], gold_at=0),  # empty-normalised gold: always right
        _qa("Dickens", ["George Eliot"]),
    ])
    out = tmp_path / "scored.jsonl.gz"
    frame = score_file(path, out)
    assert frame["score"].tolist() == [1.0, 0.0, 1.0, 1.0, 0.0]
    assert frame["correct"].tolist() == [True, False, True, True, False]
    assert frame["empty_first_line"].tolist() == [False, True, False, False, False]
    assert frame["gold_index"].tolist() == [1, 1, 2, 0, 1] and frame["n_items"].tolist() == [3] * 5
    assert frame["example_id"].tolist() == ["0", "1", "2", "3", "4"]
    scored = read_gz(out)
    assert [r["metric_best_subspan_em"] for r in scored] == [1.0, 0.0, 1.0, 1.0, 0.0]
    assert scored[0]["model_answer"] == "George Eliot wrote it"  # the input fields are kept


def test_our_fields_win_over_the_fallbacks(tmp_path, write_gz):
    path = write_gz(tmp_path / "p.jsonl.gz", [_qa("x", ["y"], example_id="q7", gold_index=2, n_items=5),
                                               _qa("x", ["y"], gold_index=None)])
    frame = score_file(path)
    assert frame["example_id"].tolist() == ["q7", "1"] and frame["n_items"].tolist() == [5, 3]
    assert frame["gold_index"].iloc[0] == 2 and frame["gold_index"].isna().iloc[1]


def test_kv_file_uses_the_lenient_metric_and_reports_the_strict_one(tmp_path, write_gz, read_gz):
    pairs = [["k0", "v-aaa"], ["k1", "v-bbb"], ["k2", "v-ccc"]]
    base = {"ordered_kv_records": pairs, "key": "k1", "value": "v-bbb", "model_ordered_kv_records": pairs}
    path = write_gz(tmp_path / "kv.jsonl.gz", [
        {**base, "model_answer": "V-BBB"},
        {**base, "model_answer": "The value is\nv-bbb"},
        {**base, "model_answer": "v-aaa"},
        {**base, "model_answer": "v-bbb"},
    ])
    frame = score_file(path, tmp_path / "scored.jsonl.gz")
    assert frame["score"].tolist() == [1.0, 1.0, 0.0, 1.0]
    assert frame["strict"].tolist() == [False, False, False, True]
    assert frame["gold_index"].tolist() == [1] * 4
    assert [r["metric_accuracy"] for r in read_gz(tmp_path / "scored.jsonl.gz")] == [1.0, 1.0, 0.0, 1.0]


@pytest.mark.parametrize("record, message", [
    ({"question": "q", "answers": "a", "model_answer": "a"}, '"answers"'),
    ({"question": "q", "answers": ["a"], "model_answer": None}, '"model_answer"'),
    ({"value": "v", "model_answer": "a"}, '"answers"'),  # a KV record in a QA file
])
def test_bad_predictions_name_the_line(tmp_path, write_gz, record, message):
    path = write_gz(tmp_path / "p.jsonl.gz", [_qa("a", ["a"]), record])
    with pytest.raises(InputError, match=rf"p\.jsonl\.gz:2: .*{message}"):
        score_file(path)
    with pytest.raises(InputError, match="predictions"):
        score_file(write_gz(tmp_path / "empty.jsonl.gz", []))
