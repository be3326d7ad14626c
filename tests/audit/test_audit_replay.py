"""config/paper/audit.yaml's language-model audits (a reader and a listwise RankGPT reranker behind vLLM's
OpenAI-compatible API), scaled down to a few questions, recorded and replayed: first against a scripted
OpenAI-compatible endpoint reached over HTTP by the real openai SDK (an httpx MockTransport in place of the
network), the response cache in mode read_write; then again in mode read_only with no endpoint at all and every
socket refused. The replay writes the same battery files, byte for byte where no clock enters them."""

from __future__ import annotations

import gzip
import importlib
import json
import re
import socket
from pathlib import Path

import openai
import pandas as pd
import pytest

from posbias.audit.jobs import AuditJob
from posbias.audit.steps import audit, battery_files
from posbias.config import load_config
from posbias.llm.backends import make_backend
from posbias.llm.cache import CacheMiss

PAPER = Path(__file__).resolve().parents[2] / "config" / "paper" / "audit.yaml"
AUDITED = ("llama31_reader", "llama31_rankgpt")
ANSWERS = ["alpha", "bravo", "charlie", "delta"]
N_PASSAGES = 24  # MS MARCO-shaped queries, each with one relevant passage: 3 audited + 19 others + spare


class ScriptedServer:
    """vLLM's /v1/chat/completions as the openai SDK reaches it, answering from the request alone: a RankGPT
    conversation (system prompt, one user turn per passage) with the identifiers in reverse, so the last input
    passage comes first; a Lost-in-the-Middle prompt with the text of its first document."""

    def __init__(self):
        # the SDK's own HTTP module (httpx or a fork of it), so the SDK's client takes the transport
        httpx = importlib.import_module(openai.DefaultHttpxClient.__mro__[1].__module__.split(".")[0])
        self.httpx, self.requests = httpx, []
        self.client = httpx.Client(transport=httpx.MockTransport(self.answer))

    def answer(self, request):
        body = json.loads(request.content)
        self.requests.append({"url": str(request.url), "body": body})
        messages = body["messages"]
        if messages[0]["role"] == "system":
            n = sum(m["role"] == "user" and re.match(r"\[\d+\] ", m["content"]) is not None for m in messages)
            text = " > ".join(f"[{i}]" for i in range(n, 0, -1))
        else:
            text = re.search(r"^Document \[1\]\(Title: [^)]*\) (.*)$", messages[-1]["content"], flags=re.M).group(1)
        usage = {"prompt_tokens": len(json.dumps(messages).split()), "completion_tokens": len(text.split())}
        return self.httpx.Response(200, json={
            "id": f"chatcmpl-{len(self.requests)}", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {**usage, "total_tokens": sum(usage.values())}})


@pytest.fixture
def sources(tmp_path) -> dict:
    """Small files in the formats the paper config reads: the Lost-in-the-Middle authors' retrieval results (30
    retrieved passages without the answer per question) and an MS MARCO-shaped passage collection."""
    qa = tmp_path / "nq-open-contriever-msmarco-retrieved-documents.jsonl.gz"
    records = [{"question": f"what is the code word number {i}", "answers": [word],
                "nq_annotated_gold": {"title": f"Code {i}", "chunked_long_answer": f"The code word is {word}."},
                "ctxs": [{"id": str(100 * i + j), "title": f"Filler {j}", "text": f"Nothing is said here, {j}.",
                          "score": "1.5", "hasanswer": False} for j in range(30)]}
               for i, word in enumerate(ANSWERS)]
    with gzip.open(qa, "wt", encoding="utf-8") as handle:
        handle.writelines(json.dumps(record) + "\n" for record in records)
    marco = tmp_path / "msmarco"
    marco.mkdir()
    (marco / "queries.tsv").write_text("".join(f"q{i}\twhere is place {i}\n" for i in range(N_PASSAGES)))
    (marco / "qrels.txt").write_text("".join(f"q{i} 0 p{i} 1\n" for i in range(N_PASSAGES)))
    (marco / "docs.jsonl").write_text("".join(json.dumps({"id": f"p{i}", "text": f"Place {i} lies by the sea."}) + "\n"
                                              for i in range(N_PASSAGES)))
    return {"qa": {"qa": str(qa)}, "order": {name: str(marco / file) for name, file in
                                             (("queries", "queries.tsv"), ("qrels", "qrels.txt"),
                                              ("passages", "docs.jsonl"))}}


def paper_jobs(sources: dict, n_questions: int = 3) -> dict[str, dict]:
    """The paper config's jobs for its two served models, as rule audit_battery receives them, with a few
    questions and the files above: every other setting (k = 10, 20, 30, depths, 100 new tokens, 20 candidates) is
    the paper config's."""
    cfg = load_config(PAPER)
    jobs = {}
    for name in AUDITED:
        job = cfg.audit.job(name)
        settings = job["settings"]
        for battery in ("reader", "reader_grid"):
            settings[battery].update(n_questions=n_questions, source=sources["qa"])
        settings["order"].update(n_queries=n_questions, source=sources["order"])
        jobs[name] = {"spec": job["spec"], "settings": settings, "batteries": cfg.audit.batteries(name)}
    return jobs


def run(jobs: dict, out: Path, cache: Path, mode: str) -> None:
    for name, job in jobs.items():
        audit(AuditJob(job["spec"], out, job["batteries"], job["settings"], name, str(cache), mode))


def test_the_paper_config_serves_its_reader_and_reranker_from_vllm():
    cfg = load_config(PAPER)
    for name in AUDITED:
        spec = cfg.audit.spec(name)
        assert spec.split("?")[0].endswith(":openai_chat:meta-llama/Llama-3.1-8B-Instruct")
        assert "base_url=http://localhost:8000/v1" in spec and "api_key_env=VLLM_API_KEY" in spec
    assert cfg.audit.settings("llama31_reader")["reader_grid"]["n_documents"] == [10, 20, 30]


def test_recorded_answers_replay_offline_to_the_same_battery_files(sources, tmp_path, monkeypatch):
    monkeypatch.delenv("VLLM_API_KEY", raising=False)
    jobs, cache = paper_jobs(sources), tmp_path / "cache"
    server = ScriptedServer()
    monkeypatch.setattr("posbias.llm.generate.make_backend",
                        lambda spec, **extras: make_backend(spec, http_client=server.client))
    run(jobs, tmp_path / "recorded", cache, "read_write")
    # 3 questions x 20 positions, 3 x (3 lengths x 5 depths), 3 x (20 positions + reversed + shuffled), one call
    # each but for the grid's k = 20 contexts: gold at 0, 4, 9, 14 and 19, the reader's own prompts, from the cache
    calls = 60 + (45 - 15) + 66
    assert len(server.requests) == calls
    assert {r["url"] for r in server.requests} == {"http://localhost:8000/v1/chat/completions"}
    assert {r["body"]["model"] for r in server.requests} == {"meta-llama/Llama-3.1-8B-Instruct"}
    assert {r["body"]["max_tokens"] for r in server.requests if r["body"]["messages"][0]["role"] != "system"} == {100}
    assert len(list(cache.glob("*.jsonl"))) == 1  # one served model: one cache file

    # the replay: no endpoint, no network, answers only from the cache
    def refuse(*args, **kwargs):
        raise AssertionError("the replay tried to reach the network")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr("posbias.llm.generate.make_backend", make_backend)
    run(jobs, tmp_path / "replayed", cache, "read_only")
    assert len(server.requests) == calls
    for name, job in jobs.items():
        for battery in job["batteries"]:
            recorded = battery_files(tmp_path / "recorded", name, battery)
            replayed = battery_files(tmp_path / "replayed", name, battery)
            pd.testing.assert_frame_equal(pd.read_parquet(recorded["values"]), pd.read_parquet(replayed["values"]))
            assert recorded["curve"].read_bytes() == replayed["curve"].read_bytes(), (name, battery)
            first, second = (json.loads(path["summary"].read_text()) for path in (recorded, replayed))
            for record in (first, second):  # the only clocks: how long the battery took, and where it ran
                del record["seconds"], record["environment"]
            assert first == second, (name, battery)
    # what the scripted server answers, as the batteries read it: a reader of its first document only, and a
    # reranker that puts the last input passage first
    reader = pd.read_csv(battery_files(tmp_path / "replayed", "llama31_reader", "reader")["curve"])
    assert reader["mean"].tolist() == [1.0] + [0.0] * 19
    order = pd.read_csv(battery_files(tmp_path / "replayed", "llama31_rankgpt", "order")["curve"])
    assert order["mean"].tolist() == pytest.approx([1 / (20 - p) for p in range(20)])
    grid = json.loads(battery_files(tmp_path / "replayed", "llama31_reader", "reader_grid")["summary"].read_text())
    assert grid["extra"]["n_documents"] == [10, 20, 30]


def test_a_replay_that_lacks_answers_refuses_before_calling_anything(sources, tmp_path, monkeypatch):
    server = ScriptedServer()
    monkeypatch.setattr("posbias.llm.generate.make_backend",
                        lambda spec, **extras: make_backend(spec, http_client=server.client))
    jobs = paper_jobs(sources, n_questions=2)
    run({"llama31_reader": jobs["llama31_reader"]}, tmp_path / "recorded", tmp_path / "cache", "read_write")
    calls = len(server.requests)
    more = paper_jobs(sources, n_questions=3)["llama31_reader"]
    # the third question at each of the 20 positions: the battery asks for every prompt at once, so the refusal
    # names all that are missing
    with pytest.raises(CacheMiss, match=r"mode read_only\) lacks 20 answer"):
        audit(AuditJob(more["spec"], tmp_path / "replayed", ["reader"], more["settings"], "llama31_reader",
                       str(tmp_path / "cache"), "read_only"))
    assert len(server.requests) == calls
