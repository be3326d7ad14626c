"""`LanguageModel.generate`: keys before calls, replay, read-only refusal, retries, interrupted jobs."""

from __future__ import annotations

import logging

import pytest

from posbias.errors import InputError, ServiceError
from posbias.llm.backends import Answer, Backend, TransientError
from posbias.llm.cache import CacheMiss, ResponseCache
from posbias.llm.generate import LanguageModel, open_model
from posbias.llm.spec import ModelSpec
from posbias.llm.types import Decoding, Request

SPEC = ModelSpec(backend="mock", model="echo", wrapper="vicuna", max_retries=2, retry_wait_s=0)


class Scripted(Backend):
    """Answers the sent text upper-cased; `failures` lists what each call raises first (None: answer)."""

    def __init__(self, spec=SPEC, failures=()):
        super().__init__(spec)
        self.failures = list(failures)
        self.calls = []
        self.prepared = 0

    def prepare(self):
        self.prepared += 1

    def complete(self, sent, decoding, meta=None):
        self.calls.append(sent)
        failure = self.failures.pop(0) if self.failures else None
        if failure is not None:
            raise failure
        return Answer(sent.upper(), "stop", 1, 1)


def requests(*prompts):
    return [Request(prompt=p, meta={"i": i}) for i, p in enumerate(prompts)]


def test_computes_then_replays(tmp_path):
    backend = Scripted()
    model = LanguageModel(SPEC, ResponseCache(tmp_path), backend=backend)
    first = model.generate(requests("a", "b"), Decoding(), progress=False)
    assert [c.cache_hit for c in first] == [False, False] and len(backend.calls) == 2
    assert first[0].sent.endswith("USER: a ASSISTANT:") and first[0].text == first[0].sent.upper()
    assert first[1].sent.endswith("USER: b ASSISTANT:") and first[1].text == first[1].sent.upper()
    again = LanguageModel(SPEC, ResponseCache(tmp_path), backend=Scripted())
    replay = again.generate(requests("b", "c", "a"), Decoding(), progress=False)
    assert [c.cache_hit for c in replay] == [True, False, True]
    assert [c.text for c in replay] == [first[1].text, replay[1].sent.upper(), first[0].text]
    assert replay[2].latency_s == first[0].latency_s and replay[2].cache_key == first[0].cache_key
    assert again.backend.calls == [replay[1].sent]


def test_other_decoding_is_a_miss(tmp_path):
    backend = Scripted()
    model = LanguageModel(SPEC, ResponseCache(tmp_path), backend=backend)
    model.generate(requests("a"), Decoding(), progress=False)
    result = model.generate(requests("a"), Decoding(max_new_tokens=5), progress=False)
    assert not result[0].cache_hit and len(backend.calls) == 2


def test_duplicates_are_computed_once(tmp_path):
    backend = Scripted()
    result = LanguageModel(SPEC, ResponseCache(tmp_path), backend=backend).generate(
        requests("a", "a"), Decoding(), progress=False)
    assert len(backend.calls) == 1 and result[0].text == result[1].text


def test_read_only_refuses_all_misses_before_calling(tmp_path):
    LanguageModel(SPEC, ResponseCache(tmp_path), backend=Scripted()).generate(requests("a"), Decoding(),
                                                                                progress=False)
    backend = Scripted()
    model = LanguageModel(SPEC, ResponseCache(tmp_path, "read_only"), backend=backend)
    with pytest.raises(CacheMiss) as caught:
        model.generate(requests("a", "b", "c"), Decoding(), progress=False)
    assert len(caught.value.keys) == 2 and str(tmp_path) in str(caught.value)
    assert caught.value.keys[0] in str(caught.value)
    assert backend.calls == [] and backend.prepared == 0
    replay = model.generate(requests("a"), Decoding(), progress=False)
    assert replay[0].cache_hit and backend.prepared == 0


def test_off_always_calls_and_writes_nothing(tmp_path):
    backend = Scripted()
    model = LanguageModel(SPEC, ResponseCache(tmp_path / "cache", "off"), backend=backend)
    model.generate(requests("a"), Decoding(), progress=False)
    model.generate(requests("a"), Decoding(), progress=False)
    assert len(backend.calls) == 2 and not (tmp_path / "cache").exists()


def test_transient_errors_are_retried_and_logged(tmp_path, caplog):
    backend = Scripted(failures=[TransientError("RateLimitError (HTTP 429)"), TransientError("timeout"), None])
    model = LanguageModel(SPEC, ResponseCache(tmp_path), name="echo-model", backend=backend)
    with caplog.at_level(logging.WARNING, logger="posbias.llm.generate"):
        result = model.generate(requests("a"), Decoding(), progress=False)
    assert result[0].text == result[0].sent.upper() and len(backend.calls) == 3
    assert [r.getMessage() for r in caplog.records] == [
        "echo-model: RateLimitError (HTTP 429); retry 1 of 2 in 0.0 s", "echo-model: timeout; retry 2 of 2 in 0.0 s"]


def test_retries_give_up_and_other_errors_propagate(tmp_path):
    backend = Scripted(failures=[TransientError("down")] * 3)
    with pytest.raises(ServiceError) as caught:
        LanguageModel(SPEC, ResponseCache(tmp_path), backend=backend).generate(requests("a"), Decoding(),
                                                                               progress=False)
    assert len(backend.calls) == 3 and caught.value.exit_status == 5
    assert str(caught.value) == (  # a backend run here has no server to name
        "language model echo gave no usable answer: last down, after 2 retries over 0.0 s (max_retries 2, "
        f"retry_wait_s 0, timeout_s 120); every answer received before is in the response cache {tmp_path}, so "
        "running the same command again asks only for the missing ones")
    backend = Scripted(failures=[RuntimeError("bad request")])
    with pytest.raises(RuntimeError):
        LanguageModel(SPEC, ResponseCache(tmp_path), backend=backend).generate(requests("a"), Decoding(),
                                                                               progress=False)
    assert len(backend.calls) == 1


def test_back_off_doubles(tmp_path, monkeypatch):
    waits = []
    monkeypatch.setattr("posbias.llm.generate.time.sleep", waits.append)
    spec = ModelSpec(backend="mock", model="echo", max_retries=3, retry_wait_s=1.5)
    backend = Scripted(spec, failures=[TransientError("x")] * 3)
    LanguageModel(spec, ResponseCache(tmp_path), backend=backend).generate(requests("a"), Decoding(), progress=False)
    assert waits == [1.5, 3.0, 6.0]


def test_an_interrupted_job_keeps_what_it_paid_for(tmp_path):
    backend = Scripted(failures=[None, None, KeyboardInterrupt()])
    with pytest.raises(KeyboardInterrupt):
        LanguageModel(SPEC, ResponseCache(tmp_path), backend=backend).generate(requests("a", "b", "c"), Decoding(),
                                                                               progress=False)
    replay = LanguageModel(SPEC, ResponseCache(tmp_path), backend=Scripted()).generate(
        requests("a", "b", "c"), Decoding(), progress=False)
    assert [c.cache_hit for c in replay] == [True, True, False]


def test_open_model_with_the_mock(tmp_path):
    section = {"backend": "mock", "model": "oracle", "wrapper": "messages"}
    model = open_model(section, tmp_path, "read_write", "litm.models.oracle")
    result = model.generate([Request(prompt="q", meta={"answer": "Paris"})], Decoding(), progress=False)
    assert result[0].text == "Paris" and result[0].sent == [{"role": "user", "content": "q"}]
    assert model.name == "litm.models.oracle"
    with pytest.raises(InputError, match="litm.models.x: unknown keys \\['temperature'\\]"):
        open_model({**section, "temperature": 0}, tmp_path, "read_write", "litm.models.x")
    with pytest.raises(InputError, match="backend.*'gpt'"):
        open_model({**section, "backend": "gpt"}, tmp_path, "read_write", "litm.models.x")
    with pytest.raises(InputError, match="mode"):
        open_model(section, tmp_path, "replay", "litm.models.x")
    for key, value, message in (("max_retries", -1, "a whole number of at least 0, got -1"),
                                ("max_retries", 2.0, "a whole number of at least 0, got 2.0"),
                                ("retry_wait_s", -1, "a finite number of at least 0, got -1"),
                                ("timeout_s", 0, "a finite number above 0, got 0"),
                                ("timeout_s", True, "a finite number above 0, got True")):
        with pytest.raises(InputError, match=f"^litm.models.x.{key} must be {message}$"):
            open_model({**section, key: value}, tmp_path, "read_write", "litm.models.x")


def test_mock_answers_depend_on_meta_even_with_one_prompt(tmp_path):
    model = open_model({"backend": "mock", "model": "oracle"}, tmp_path, "read_write", "m")
    answers = model.generate([Request(prompt="same", meta={"answer": a}) for a in ("x", "y")], Decoding(),
                             progress=False)
    assert [c.text for c in answers] == ["x", "y"]
    replay = open_model({"backend": "mock", "model": "oracle"}, tmp_path, "read_only", "m").generate(
        [Request(prompt="same", meta={"answer": "y"})], Decoding(), progress=False)
    assert replay[0].text == "y" and replay[0].cache_hit


class Batching(Scripted):
    """Answers up to `batch_size` prompts a call; a prompt's length is its number of characters."""

    batch_size = 2

    def __init__(self):
        super().__init__()
        self.batches = []

    def prompt_length(self, sent):
        return len(sent)

    def complete_batch(self, sents, decoding, metas):
        self.batches.append(list(sents))
        return [self.complete(sent, decoding, meta) for sent, meta in zip(sents, metas)]


def test_only_misses_go_to_the_model_in_batches_longest_first(tmp_path):
    LanguageModel(SPEC, ResponseCache(tmp_path), backend=Scripted()).generate(requests("bbbbbbbbbb", "d"), Decoding(),
                                                                                progress=False)
    backend = Batching()
    prompts = ("a", "bbbbbbbbbb", "ccc", "d", "eeeee", "ff")
    done = LanguageModel(SPEC, ResponseCache(tmp_path), backend=backend).generate(requests(*prompts), Decoding(),
                                                                                  progress=False)
    assert [c.cache_hit for c in done] == [False, True, False, True, False, False]
    assert all(c.sent.endswith(f"USER: {p} ASSISTANT:") and c.text == c.sent.upper() for p, c in zip(prompts, done))
    sent = {p: c.sent for p, c in zip(prompts, done)}
    assert backend.batches == [[sent["eeeee"], sent["ccc"]], [sent["ff"], sent["a"]]]


def test_a_batch_s_answers_are_cached_before_the_next_batch_is_asked(tmp_path):
    backend = Batching()
    backend.failures = [None, None, TransientError("down"), TransientError("down"), TransientError("down")]
    prompts = ("aaaa", "bbb", "cc", "d")  # longest first: batches [aaaa, bbb], [cc, d]
    with pytest.raises(ServiceError, match="last down, after 2 retries"):
        LanguageModel(SPEC, ResponseCache(tmp_path), backend=backend).generate(requests(*prompts), Decoding(),
                                                                               progress=False)
    assert len(backend.batches) == 4  # the first batch, then the second one tried three times
    again = Batching()
    done = LanguageModel(SPEC, ResponseCache(tmp_path), backend=again).generate(requests(*prompts), Decoding(),
                                                                                progress=False)
    assert [c.cache_hit for c in done] == [True, True, False, False]
    assert again.batches == [[done[2].sent, done[3].sent]]
