"""The Lost-in-the-Middle steps: settings names, and questions too long for a model's context left out at every
position of their size, so the curve stays paired."""

from __future__ import annotations

from types import SimpleNamespace

from posbias.reading.predict import kv_examples
from posbias.llm.types import Decoding
from posbias.litm import steps as litm
from posbias.litm.paths import data_file


def test_settings_name_every_position_and_the_references():
    qa = {"sizes": [{"k": 5, "positions": [0, 4]}], "closedbook": True, "oracle": True}
    assert litm.settings("qa", qa) == [("k5_gold_at_0", 5, 0), ("k5_gold_at_4", 5, 4), ("closedbook", 0, None),
                                       ("oracle", 1, None)]
    assert data_file("qa", "closedbook") == "results/litm/data/qa/oracle.jsonl.gz"
    assert litm.variants_of("qa", {"variants": ["default", "query_aware"]}, "closedbook") == ["default"]


def kv_record(n_pairs: int, long_key: bool) -> dict:
    records = [[("k" * 40 if long_key and i == 0 else f"k{i}"), f"v{i}"] for i in range(n_pairs)]
    return {"ordered_kv_records": records, "key": records[1][0], "value": records[1][1]}


def test_a_question_too_long_at_any_position_is_left_out_at_all_of_them():
    section = {"sizes": [{"n": 3, "positions": [0, 2]}]}
    records = [kv_record(3, long_key=False), kv_record(3, long_key=True)]
    examples = {name: kv_examples(records, gold_index=gold) for name, _, gold in litm.settings("kv", section)}
    backend = SimpleNamespace(count_tokens=lambda sent: len(sent) // 4, render=lambda request: request.prompt,
                              config=SimpleNamespace(max_position_embeddings=52))
    model = SimpleNamespace(backend=backend, spec=SimpleNamespace(context=None))
    lengths = {ex.example_id: len(ex.prompt) // 4 for ex in examples["n3_gold_at_0"]}
    assert lengths["0"] <= 52 - 8 < lengths["1"]  # only the long-key question overflows
    excluded = litm._too_long(model, "kv", section, examples, Decoding(max_new_tokens=8))
    assert excluded == {"n3_gold_at_0": {"1"}, "n3_gold_at_2": {"1"}}
    # an API model (no token counter) is never checked here
    assert litm._too_long(SimpleNamespace(backend=SimpleNamespace(), spec=model.spec), "kv", section, examples,
                          Decoding()) == {}
