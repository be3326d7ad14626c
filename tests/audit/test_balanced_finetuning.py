"""Position-balanced fine-tuning (`posbias.audit.balanced_finetuning`): training examples balanced over the thirds
of their documents, drawn from questions disjoint from the audit's units, and a loadable twin the mitigation
audits in place of the original."""

from __future__ import annotations

import json

import pytest

from posbias.audit.balanced_finetuning import (RECORD, SEGMENTS, _words, audit_units, entity_of, finetune,
                                               training_examples, training_questions)
from posbias.audit.haystack import world
from posbias.errors import InputError


def test_the_training_questions_are_disjoint_from_every_audited_unit():
    entities, words = audit_units()
    questions, pool = training_questions(48, (entities, words))
    audited = {needles: world(needles=needles) for needles in ("lexical", "paraphrased")}
    audit_questions = [q for qs, _ in audited.values() for q in qs]
    assert {entity_of(q.text) for q in audit_questions} <= entities
    trained = {entity_of(q.text) for q in questions}
    assert len(questions) == 48 and not trained & words  # no trained entity in any audit text, probes included
    assert not {q.text for q in questions} & {q.text for q in audit_questions}
    assert not {q.needle for q in questions} & {q.needle for q in audit_questions}
    assert not any(_words([text]) & entities for text in [q.needle for q in questions] + pool)
    assert not set(pool) & {q.needle for q in audit_questions}


def test_each_question_sits_in_every_third_of_a_document_as_long_as_the_model_reads():
    questions, pool = training_questions(4, audit_units())
    length = lambda text: len(text.split())  # noqa: E731
    examples = training_examples(questions, pool, length, 60, seed=0)
    assert [e["segment"] for e in examples] == list(SEGMENTS) * 4
    for example, question in zip(examples, [q for q in questions for _ in SEGMENTS]):
        words = example["document"].split()
        start = example["document"].index(question.needle)
        where = len(example["document"][:start].split()) / max(len(words) - length(question.needle), 1)
        third = SEGMENTS.index(example["segment"])
        assert third / 3 <= example["depth"] < (third + 1) / 3
        assert length(example["document"]) <= 60 and abs(where - example["depth"]) < 0.2  # the nearest boundary
        assert example["query"] == question.text


@pytest.fixture(scope="module")
def tiny_st(tiny_backbone, tmp_path_factory):
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer.modules import Pooling, Transformer

    path = tmp_path_factory.mktemp("tiny-st")
    SentenceTransformer(modules=[Transformer(tiny_backbone, max_seq_length=64), Pooling(32, "mean")],
                        device="cpu").save(str(path))
    return str(path)


def test_the_fine_tuned_twin_loads_and_is_audited_in_place_of_its_original(tiny_st, tmp_path):
    from sentence_transformers import SentenceTransformer

    from posbias.audit.battery_settings import settings_with
    from posbias.audit.mitigations import apply
    from posbias.audit.spec import parse_model_spec

    twin = tmp_path / "twin"
    record = finetune(f"bi-encoder:{tiny_st}", twin, n_questions=6, batch_size=4, max_steps=2)
    assert record["steps"] == 2 and record["segments"] == {"start": 6, "middle": 6, "end": 6}
    assert record["settings"]["doc_tokens"] == 62 and record["base"] == tiny_st  # the model's own window
    assert json.loads((twin / RECORD).read_text())["questions"] == record["questions"]
    assert not {q["entity"] for q in record["questions"]} & audit_units()[1]
    assert SentenceTransformer(str(twin), device="cpu").encode(["a question"]).shape == (1, 32)
    assert not (twin / "trainer").exists()
    base = parse_model_spec(f"bi-encoder:{tiny_st}?batch_size=8&name=tiny")
    ref, _ = apply(base, settings_with(None), {"kind": "position_balanced_finetuning", "model": str(twin)})
    assert (ref.target, ref.options, ref.name) == (str(twin), {"batch_size": 8}, "tiny")
    other = parse_model_spec("bi-encoder:offline:all-MiniLM-L6-v2")
    with pytest.raises(InputError, match=f"{twin} was fine-tuned from '{tiny_st}', not from 'offline:all-MiniLM"):
        apply(other, settings_with(None), {"kind": "position_balanced_finetuning", "model": str(twin)})


def test_fine_tuning_mistakes_are_one_line(tmp_path):
    with pytest.raises(InputError, match="fine-tune the model as it comes, without options"):
        finetune("bi-encoder:offline:all-MiniLM-L6-v2?calibration_basket=16", tmp_path / "x")
    with pytest.raises(InputError, match=r"unknown settings \['steps'\]"):
        finetune("bi-encoder:offline:all-MiniLM-L6-v2", tmp_path / "x", steps=3)
    with pytest.raises(InputError, match="500 questions asked for, the training world holds"):
        training_questions(500, audit_units())
    assert not (tmp_path / "x").exists()


def test_the_command_line_takes_a_model_or_a_config_entry(usage_error, input_error, tmp_path):
    assert usage_error(["audit-finetune", "--out", tmp_path / "x"]) == "give --model, or --config with --name"
    assert usage_error(["audit-finetune", "--model", "bi-encoder:m", "--config", "c.yaml", "--name", "x", "--out",
                        tmp_path / "x"]) == "give --model, or --config with --name"
    assert input_error(["audit-finetune", "--config", "config.yaml", "--name", "minilm", "--out", tmp_path / "x"]) \
        == "audit.models.minilm: not an entry mitigated by position_balanced_finetuning"
