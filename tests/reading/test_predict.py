import hashlib

import pytest

from posbias.errors import InputError
from posbias.litm.exclusions import excluded_examples, longest_prompts, write_exclusions
from posbias.reading.kv import generate_kv_examples, target_index
from posbias.reading.predict import META_KEYS, kv_examples, predict, qa_examples, read_examples, write_predictions
from posbias.reading.prompts import closedbook_prompt, qa_prompt
from posbias.reading.qa_builder import build_position, oracle_record
from posbias.llm.types import Completion, Decoding, Request

DECODING = Decoding(max_new_tokens=12)


class FakeModel:
    """Answers right when the gold item is first, otherwise with a non-answer; wraps prompts in a marker."""

    def __init__(self):
        self.calls = []

    def generate(self, requests, decoding):
        self.calls.append((list(requests), decoding))
        out = []
        for request in requests:
            assert isinstance(request, Request) and set(request.meta) == set(META_KEYS)
            text = request.meta["answer"] if request.meta["gold_index"] == 0 else "\nno idea"
            out.append(Completion(text=text, finish_reason="stop", prompt_tokens=len(request.prompt.split()),
                                  completion_tokens=2, latency_s=0.0, cache_key=hashlib.sha256(
                                      request.prompt.encode()).hexdigest(), cache_hit=False,
                                  sent=f"<s>{request.prompt}</s>"))
        return out


def test_qa_requests_carry_the_prompt_and_the_meta_the_mock_reads(retrieval_records):
    records = [build_position(r, 4, 2) for r in retrieval_records]
    examples = qa_examples(records)
    request = examples[1].request()
    assert request.prompt == qa_prompt(records[1]["question"], records[1]["ctxs"])
    assert dict(request.meta) == {"id": "1", "answer": "two", "gold_index": 2, "n_items": 4, "example_index": 1,
                                  "n_examples": 4, "first_item": records[1]["ctxs"][0]["text"]}


def test_qa_prediction_records_keep_the_input_and_add_the_authors_fields(retrieval_records):
    records = [build_position(r, 4, 0) for r in retrieval_records]
    model = FakeModel()
    out = predict(qa_examples(records), model, DECODING, model_name="fake-7b", backend="mock", model_revision="r1")
    assert len(model.calls) == 1 and model.calls[0][1] is DECODING  # one call: the model layer batches and caches
    first = out[0]
    assert {k: first[k] for k in records[0]} == records[0]
    assert first["model_prompt"] == "<s>" + qa_prompt(records[0]["question"], records[0]["ctxs"]) + "</s>"
    assert first["model_documents"][0]["isgold"] is True and first["model_documents"][1]["score"] == 1.75
    assert first["model_documents"][0]["id"] is None  # gold documents lack ids, as in the authors' files
    assert first["model_answer"] == "George Eliot"
    assert {k: first[k] for k in ("model", "model_temperature", "model_top_p", "model_prompt_mention_random_ordering",
                                  "model_use_random_ordering", "gold_index", "n_items", "variant", "backend",
                                  "model_revision", "max_new_tokens", "finish_reason", "cache_hit")} == {
        "model": "fake-7b", "model_temperature": 0.0, "model_top_p": 1.0,
        "model_prompt_mention_random_ordering": False, "model_use_random_ordering": False, "gold_index": 0,
        "n_items": 4, "variant": "default", "backend": "mock", "model_revision": "r1", "max_new_tokens": 12,
        "finish_reason": "stop", "cache_hit": False}
    assert first["example_id"] == "0" and len(first["cache_key"]) == 64 and first["prompt_tokens"] > 20


def test_closed_book_has_no_documents_and_no_gold_index(retrieval_records):
    records = [oracle_record(r) for r in retrieval_records]
    (example, *_) = qa_examples(records, closedbook=True)
    assert example.prompt == closedbook_prompt(records[0]["question"])
    assert (example.gold_index, example.n_items, example.first_item, example.items) == (None, 0, None, [])
    oracle = qa_examples(records)[0]
    assert (oracle.gold_index, oracle.n_items) == (0, 1)
    with pytest.raises(InputError, match="no variants"):
        qa_examples(records, variant="query_aware", closedbook=True)


def test_variants_change_the_prompt_as_the_authors_flags_do(retrieval_records):
    records = [build_position(r, 6, 3) for r in retrieval_records]
    aware = qa_examples(records, variant="query_aware")[0]
    assert aware.prompt.count("Question: who wrote the novel middlemarch") == 2
    shuffled = qa_examples(records, variant="random_order", seed=1)
    assert all(e.gold_index == 3 and "ordered randomly" in e.prompt for e in shuffled)
    plain = qa_examples(records)
    assert any(s.items != p.items for s, p in zip(shuffled, plain))
    # each question's shuffle is its own: dropping other questions or reordering the file changes nothing
    alone = qa_examples(records[2:3], variant="random_order", seed=1)[0]
    assert alone.items == shuffled[2].items
    assert qa_examples(records[::-1], variant="random_order", seed=1)[0].items == shuffled[-1].items
    with pytest.raises(InputError, match="not one of"):
        qa_examples(records, variant="sideways")


def test_kv_examples_move_the_target_when_asked():
    records = generate_kv_examples(3, 6, seed=5)
    examples = kv_examples(records, gold_index=4)
    assert [e.gold_index for e in examples] == [4, 4, 4]
    assert [target_index({**r, "ordered_kv_records": e.items}) for r, e in zip(records, examples)] == [4, 4, 4]
    unmoved = kv_examples(records, variant="query_aware")
    assert [e.gold_index for e in unmoved] == [target_index(r) for r in records]
    assert unmoved[0].first_item == records[0]["ordered_kv_records"][0][1]
    assert unmoved[0].prompt.count(f'Key: "{records[0]["key"]}"') == 2
    out = predict(examples, FakeModel(), DECODING, "fake", "mock")
    assert out[0]["model_ordered_kv_records"] == examples[0].items and "model_documents" not in out[0]
    assert "model_use_random_ordering" not in out[0]  # the authors' KV scripts have no such field
    with pytest.raises(InputError, match="qa only"):
        kv_examples(records, variant="random_order")


def test_exclusions_are_decided_once_over_all_positions(retrieval_records):
    by_position = {g: qa_examples([build_position(r, 4, g) for r in retrieval_records]) for g in range(4)}
    prompts = {g: [(e.example_id, e.prompt) for e in examples] for g, examples in by_position.items()}
    count = lambda prompt: len(prompt.split())  # noqa: E731
    longest = longest_prompts(prompts, count)
    assert longest["0"] == max(count(e.prompt) for ex in by_position.values() for e in ex if e.example_id == "0")
    limit = sorted(longest.values())[1]  # two questions fit, two do not
    excluded = excluded_examples(prompts, count, limit)
    assert set(excluded) == {i for i, n in longest.items() if n > limit} and len(excluded) == 2
    assert excluded_examples(prompts, count, None) == {}
    for examples in by_position.values():  # the same questions are kept at every position
        kept = predict(examples, FakeModel(), DECODING, "fake", "mock", excluded=excluded)
        assert {r["example_id"] for r in kept} == set(longest) - set(excluded)


def test_predictions_file_round_trip(tmp_path, retrieval_file, read_gz):
    examples = read_examples(retrieval_file, "qa", limit=2)
    # retrieval results have no gold document: the documents are read as they are
    assert [e.gold_index for e in examples] == [None, None] and examples[0].n_items == 8
    out = tmp_path / "predictions" / "gold_at_0.jsonl.gz"
    records = predict(examples, FakeModel(), DECODING, "fake", "mock")
    assert write_predictions(out, records) == 2
    assert read_gz(out) == records
    write_exclusions(tmp_path / "excluded.json", {"1": 900}, limit=800, n_examples=2)
    assert '"1": 900' in (tmp_path / "excluded.json").read_text()
    with pytest.raises(InputError, match="task"):
        read_examples(retrieval_file, "summarise")
