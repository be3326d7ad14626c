"""Servers as unreliable as real ones, on the loopback address through the SDKs' real HTTP stack: a server that
keeps failing, answers with a body that is not JSON or not the API's shape, or goes silent ends, after the retries
its settings allow, in one line (`ServiceError`, exit status 5) naming the model, the server and the last status,
never a key; nothing it said is cached, everything answered before it is, and a rerun asks only for the rest."""

from __future__ import annotations

import json
import socket

import pytest
import yaml
from fake_llm_server import BEHAVIOURS

from posbias.cli import main
from posbias.errors import InputError, ServiceError
from posbias.llm.cache import ResponseCache
from posbias.llm.generate import LanguageModel
from posbias.llm.spec import ModelSpec
from posbias.llm.types import Decoding, Request

SECRET = "sk-posbias-TOPSECRET-server-key-3d1f"
TIMEOUT_S = 0.3  # the silent server's wait, short enough for a quick test
# backend: its wrapper, the server's address as its base_url, what an answer without its main field lacks, and the
# SDK's exception for HTTP 529 (Anthropic's "overloaded")
OPENAI = {"path": "/v1", "lacking": "no choices", "overloaded": "InternalServerError"}
BACKENDS = {"openai_chat": {"wrapper": "messages", **OPENAI},
            "openai_completions": {"wrapper": "vicuna", **OPENAI},
            "anthropic_messages": {"wrapper": "messages", "path": "", "lacking": "no content",
                                   "overloaded": "OverloadedError"}}
# behaviour: the last status the message names (formatted with the backend's entry)
LAST = {"failing": "InternalServerError (HTTP 500)",
        "overloaded": "{overloaded} (HTTP 529)",
        "not_json": "HTTP 200 with a body that is not JSON (content type text/html)",
        "not_json_labelled_json": "HTTP 200 with a body that is not JSON (content type application/json)",
        "wrong_shape": "HTTP 200 with JSON that is not the API's answer ({lacking})",
        "no_choices": "HTTP 200 with JSON that is not the API's answer ({lacking})",
        "silent": f"no answer within timeout_s {TIMEOUT_S:g} s (APITimeoutError)"}
assert set(LAST) == set(BEHAVIOURS)


@pytest.fixture(autouse=True)
def server_key(monkeypatch):
    """Every model here sends a key, so that its absence from a message means something."""
    monkeypatch.setenv("SERVER_KEY", SECRET)


def spec_at(server, backend="openai_chat", max_retries=1):
    wrapper, path = BACKENDS[backend]["wrapper"], BACKENDS[backend]["path"]
    return ModelSpec(backend=backend, model="served-model", wrapper=wrapper, base_url=server.url + path,
                     api_key_env="SERVER_KEY", max_retries=max_retries, retry_wait_s=0, timeout_s=TIMEOUT_S)


def ask(spec, cache, prompts, name=""):
    model = LanguageModel(spec, cache, name=name)
    return model.generate([Request(prompt=prompt) for prompt in prompts], Decoding(max_new_tokens=8), progress=False)


def cached(cache_dir) -> list[dict]:
    return [json.loads(line) for path in sorted(cache_dir.glob("*.jsonl")) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("backend", sorted(BACKENDS))
@pytest.mark.parametrize("behaviour", sorted(BEHAVIOURS))
def test_a_server_that_gives_no_answer_ends_in_one_line(llm_server, tmp_path, backend, behaviour):
    server = llm_server(behaviour)
    spec = spec_at(server, backend)
    with pytest.raises(ServiceError) as caught:
        ask(spec, ResponseCache(tmp_path / "cache"), ["What is the capital of France?"], name="litm.models.served")
    message = str(caught.value)
    last = LAST[behaviour].format(**BACKENDS[backend])
    assert message.startswith(f"language model litm.models.served (served-model) at {spec.base_url} gave no usable "
                              f"answer: last {last}, after 1 retry over ")
    assert "(max_retries 1, retry_wait_s 0, timeout_s 0.3)" in message and "\n" not in message
    assert caught.value.exit_status == 5
    assert len(server.requests) == 2  # one try and the one retry the settings allow, the SDK adding none
    assert SECRET in str(server.requests[0][2]) and SECRET not in message
    assert cached(tmp_path / "cache") == []  # what it said is no answer


@pytest.mark.parametrize("backend", sorted(BACKENDS))
@pytest.mark.parametrize("refusal, status", [("refused_key", 401), ("unknown_model", 404)])
def test_a_refused_request_is_input_to_fix_at_once_in_one_line(llm_server, tmp_path, backend, refusal, status):
    server = llm_server(refusal)
    spec = spec_at(server, backend, max_retries=3)
    with pytest.raises(InputError) as caught:
        ask(spec, ResponseCache(tmp_path / "cache"), ["Hi"], name="judge")
    message = str(caught.value)
    assert message.startswith(f"language model judge (served-model) at {spec.base_url} refused the request: ")
    assert f"(HTTP {status}); check its model name, base_url and the key in SERVER_KEY" in message
    assert "\n" not in message and SECRET not in message
    assert len(server.requests) == 1  # no retry mends it
    assert cached(tmp_path / "cache") == []


def test_a_server_that_refuses_connections(tmp_path):
    with socket.socket() as probe:  # a port nothing listens on once the probe is closed
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    spec = ModelSpec(backend="openai_chat", model="served-model", wrapper="messages",
                     base_url=f"http://127.0.0.1:{port}/v1", max_retries=2, retry_wait_s=0)
    with pytest.raises(ServiceError, match=f"served-model at http://127.0.0.1:{port}/v1 gave no usable answer: last "
                                           r"APIConnectionError \(ConnectError\), after 2 retries"):
        ask(spec, ResponseCache(tmp_path, "off"), ["Hi"])


def test_the_message_names_a_server_without_its_credentials(llm_server, tmp_path):
    server = llm_server("failing")
    url = server.url.replace("http://", f"http://user:{SECRET}@") + "/v1?api_key=" + SECRET
    spec = ModelSpec(backend="openai_chat", model="m", wrapper="messages", base_url=url, max_retries=0)
    with pytest.raises(ServiceError) as caught:
        ask(spec, ResponseCache(tmp_path, "off"), ["Hi"])
    assert f" at {server.url}/v1 gave no usable answer" in str(caught.value) and SECRET not in str(caught.value)
    assert "the response cache is off, so nothing was kept" in str(caught.value)


@pytest.mark.parametrize("backend", sorted(BACKENDS))
@pytest.mark.parametrize("bad", ["not_json", "not_json_labelled_json", "wrong_shape", "silent"])
def test_an_answer_that_is_not_one_is_retried_and_never_cached(llm_server, tmp_path, backend, bad):
    server = llm_server("good", first=[bad])
    [done] = ask(spec_at(server, backend), ResponseCache(tmp_path), ["Capital of France?"])
    assert len(server.requests) == 2 and server.prompts[0] == server.prompts[1]  # the same prompt, asked again
    assert done.text == f"answer to {server.prompts[1][-40:]}" and not done.cache_hit
    assert [entry["text"] for entry in cached(tmp_path)] == [done.text]


@pytest.mark.parametrize("backend", sorted(BACKENDS))
def test_answers_before_the_failure_stay_cached_and_a_rerun_asks_only_for_the_rest(llm_server, tmp_path, backend):
    prompts = [f"question {i}" for i in range(5)]

    def questions(server):  # what a server was asked (a completions server gets the wrapped prompt)
        return [next(p for p in prompts if p in asked) for asked in server.prompts]

    failing = llm_server("failing", first=["good", "good"])
    with pytest.raises(ServiceError, match="every answer received before is in the response cache"):
        ask(spec_at(failing, backend), ResponseCache(tmp_path), prompts)
    assert questions(failing) == ["question 0", "question 1", "question 2", "question 2"]
    assert len(cached(tmp_path)) == 2
    good = llm_server("good")
    done = ask(spec_at(good, backend), ResponseCache(tmp_path), prompts)
    assert questions(good) == prompts[2:]
    assert [c.cache_hit for c in done] == [True, True, False, False, False]
    assert [c.text for c in done] == [f"answer to {asked[-40:]}" for asked in failing.prompts[:2] + good.prompts]
    assert len(cached(tmp_path)) == 5


READER = "reader:openai_chat:served-model?base_url={url}/v1&api_key_env=SERVER_KEY&max_retries=1&retry_wait_s=0" \
         f"&timeout_s={TIMEOUT_S}"


def qa_record(i: int) -> dict:
    """A question in the Lost-in-the-Middle authors' format, with its gold document and two distractors."""
    return {"question": f"who wrote book {i}?", "answers": [f"author {i}"],
            "nq_annotated_gold": {"title": f"Book {i}", "chunked_long_answer": f"Book {i} was written by author {i}."},
            "ctxs": [{"title": f"Other {j}", "text": f"Other book {j} is long.", "hasanswer": False}
                     for j in range(2)]}


def audit(server, tmp_path):
    """`posbias audit` of a reader at `server`: 2 questions, the gold document at 2 positions (2 calls of 2
    prompts), read from a small file, as a real QA set is (the embedded one takes a retriever's seconds)."""
    (tmp_path / "qa.jsonl").write_text("".join(json.dumps(qa_record(i)) + "\n" for i in range(2)))
    settings = {"reader": {"n_questions": 2, "n_documents": 2, "max_new_tokens": 4,
                           "source": {"qa": str(tmp_path / "qa.jsonl")}}}
    (tmp_path / "small.yaml").write_text(yaml.safe_dump(settings))
    return main(["audit", "--model", READER.format(url=server.url), "--out", str(tmp_path / "audits"),
                 "--battery", "reader", "--settings", str(tmp_path / "small.yaml"), "--cache",
                 str(tmp_path / "cache"), "--no-report"])


def one_error_line(stderr: str) -> str:
    """The command's error: one line, the last, with no traceback before it (progress bars and the retries'
    warnings come first)."""
    assert "Traceback" not in stderr
    errors = [line for line in stderr.splitlines() if "error:" in line]
    assert errors == [stderr.strip().splitlines()[-1]]
    return errors[0]


@pytest.mark.parametrize("behaviour", ["failing", "not_json_labelled_json", "wrong_shape", "silent"])
def test_the_command_line_exits_with_status_5_and_one_line(llm_server, tmp_path, capsys, behaviour):
    server = llm_server(behaviour)
    with pytest.raises(SystemExit) as exit_:
        audit(server, tmp_path)
    assert exit_.value.code == 5
    line = one_error_line(capsys.readouterr().err)
    last = LAST[behaviour].format(**BACKENDS["openai_chat"])
    assert line.startswith(f"posbias audit: error: language model reader-openai_chat-served-model (served-model) at "
                           f"{server.url}/v1 gave no usable answer: last {last}, after 1 retry over ")
    assert SECRET not in line and SECRET in str(server.requests[0][2])
    assert not (tmp_path / "audits" / "reader-openai_chat-served-model" / "reader.json").exists()


def test_the_command_line_resumes_where_the_server_failed(llm_server, tmp_path, capsys):
    failing = llm_server("failing", first=["good"] * 3)  # the second call's second prompt fails
    with pytest.raises(SystemExit) as exit_:
        audit(failing, tmp_path)
    assert exit_.value.code == 5 and "every answer received before" in one_error_line(capsys.readouterr().err)
    assert len(cached(tmp_path / "cache")) == 3
    good = llm_server("good")
    assert audit(good, tmp_path) == 0
    assert good.prompts == failing.prompts[3:4]  # only the prompt the failing server never answered
    assert (tmp_path / "audits" / "reader-openai_chat-served-model" / "reader.json").exists()


def test_a_workflow_job_ends_with_status_5_and_one_line_in_its_log(llm_server, tmp_path):
    from posbias.logs import job_log

    server = llm_server("silent")
    log = tmp_path / "job.log"
    with pytest.raises(SystemExit) as exit_:
        with job_log(str(log)):  # as every rule's job runs its step
            ask(spec_at(server), ResponseCache(tmp_path / "cache"), ["Hi"], name="llm.models.served")
    assert exit_.value.code == 5
    text = log.read_text()
    [failed] = [line for line in text.splitlines() if "job failed" in line]
    assert f"job failed: language model llm.models.served (served-model) at {server.url}/v1 gave no usable answer: " \
           f"last {LAST['silent']}, after 1 retry over " in failed
    assert "Traceback" not in text and SECRET not in text
