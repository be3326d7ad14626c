"""`LanguageModel`: a backend, its wrapper and the response cache behind one `generate(requests, decoding)`.

Every request is rendered and keyed before anything is called, so a `read_only` cache refuses a job that
lacks answers before any model is loaded or any API is paid. Only the misses go to the model, one at a time (a
local model with a `batch_size` answers that many at once, longest prompts first, so that a batch holds prompts
of like length and pads little, and one that does not fit in memory fails at the start), each appended to the
cache as it arrives: a job killed halfway keeps what it already paid for. Completions come back in the order of
the requests.

A transient failure (`TransientError`: a connection that fails, a server silent past `timeout_s`, a transient HTTP
status, an answer that is not JSON or not the API's shape) is retried `max_retries` times, the first after
`retry_wait_s`, each further wait twice the last; a call still failing then is a `ServiceError` (exit status 5),
one line naming the model, the server and the last status. Nothing of a failed call is cached, and everything
answered before it is, so the same command run again asks only for what is missing.
"""

from __future__ import annotations

import logging
import os
import sys
import time
from datetime import datetime, timezone
from typing import Mapping

from tqdm import tqdm

from posbias.errors import InputError, ServiceError
from posbias.llm.backends import Answer, Backend, TransientError, make_backend
from posbias.llm.backends.api_calls import RequestRefused
from posbias.llm.cache import CacheMiss, ResponseCache, cache_key
from posbias.llm.spec import ModelSpec
from posbias.llm.types import Completion, Decoding, Request

log = logging.getLogger(__name__)


class LanguageModel:
    """One model (`spec`) answering through `cache`. `name` labels progress and logs (default: the model).
    `backend` replaces the one `spec` would make (tests pass one with a fake HTTP transport)."""

    def __init__(self, spec: ModelSpec, cache: ResponseCache, name: str = "", backend: Backend | None = None):
        self.spec = spec
        self.cache = cache
        self.name = name or spec.model
        self.backend = backend if backend is not None else make_backend(spec)

    def key_fields(self, request: Request, sent: str | list, decoding: Decoding) -> dict:
        """Everything that decides the answer to `request`: the cache key is their hash."""
        return {**self.backend.identity(), **self.backend.key_fields(request), "sent": sent,
                "decoding": decoding.as_dict()}

    def generate(self, requests: list[Request], decoding: Decoding, progress: bool = True) -> list[Completion]:
        """The completions of `requests`, in their order; cached answers are replayed, the rest computed."""
        fields = [self.key_fields(request, self.backend.render(request), decoding) for request in requests]
        keys = [cache_key(each) for each in fields]
        found = {key: entry for key in dict.fromkeys(keys) if (entry := self.cache.get(self.spec.model, key))}
        todo = {key: (request, each) for key, request, each in zip(keys, requests, fields) if key not in found}
        if todo and self.cache.mode == "read_only":
            raise CacheMiss(todo, self.cache.directory)
        made = {}
        for _, each in todo.values():  # refuse what cannot be answered before loading or paying anything
            self.backend.check(each["sent"], decoding)
        if todo:
            self.backend.prepare()  # loading weights is not part of any call's latency
            batches = list(todo.items())
            size = self.backend.batch_size
            if size > 1:
                batches.sort(key=lambda item: -self.backend.prompt_length(item[1][1]["sent"]))  # stable: ties in order
            with tqdm(total=len(batches), desc=self.name, unit="call", file=sys.stderr, disable=not progress) as bar:
                for start in range(0, len(batches), size):
                    batch = batches[start:start + size]
                    answers, seconds = self._call([each["sent"] for _, (_, each) in batch], decoding,
                                                  [request.meta for _, (request, _) in batch])
                    for (key, (_, each)), answer in zip(batch, answers, strict=True):
                        # a batch's latency is shared by its answers
                        made[key] = self._record(key, each, answer, seconds / len(batch), len(batch))
                    bar.update(len(batch))
        return [self._completion(key, each["sent"], found.get(key) or made[key], key in found)
                for key, each in zip(keys, fields)]

    def _call(self, sents: list, decoding: Decoding, metas: list[Mapping]) -> tuple[list[Answer], float]:
        """The answers to a batch of sent prompts (one, unless the backend batches) and the seconds they took,
        retrying transient failures with exponential back-off; a `ServiceError` once the retries are spent."""
        first_try = time.perf_counter()
        for attempt in range(self.spec.max_retries + 1):
            start = time.perf_counter()
            try:
                answers = (self.backend.complete_batch(sents, decoding, metas) if len(sents) > 1
                           else [self.backend.complete(sents[0], decoding, metas[0])])
                return answers, time.perf_counter() - start
            except RequestRefused as err:
                raise InputError(f"language model {self._named()}{self._where()} refused the request: {err}; check "
                                 f"its model name, base_url and the key in {self.spec.api_key_env or 'its key_env'}"
                                 ) from err
            except TransientError as err:
                if attempt == self.spec.max_retries:
                    raise ServiceError(self._gave_up(err, time.perf_counter() - first_try)) from err
                wait = self.spec.retry_wait_s * 2 ** attempt
                log.warning("%s: %s; retry %d of %d in %.1f s", self.name, err, attempt + 1, self.spec.max_retries,
                            wait)
                time.sleep(wait)
        raise AssertionError("unreachable")

    def _named(self) -> str:
        return self.name if self.name == self.spec.model else f"{self.name} ({self.spec.model})"

    def _where(self) -> str:
        server = self.backend.server()
        return f" at {server}" if server else ""

    def _gave_up(self, last: TransientError, seconds: float) -> str:
        """The one line a call that kept failing ends in: the model, its server, the last status, the settings
        that bounded the retries, and what running again does."""
        spec = self.spec
        if self.cache.writes:
            resume = (f"every answer received before is in the response cache {self.cache.directory}, so running "
                      f"the same command again asks only for the missing ones")
        else:
            resume = f"the response cache is {self.cache.mode}, so nothing was kept"
        retries = f"{spec.max_retries} {'retry' if spec.max_retries == 1 else 'retries'}"
        return (f"language model {self._named()}{self._where()} gave no usable answer: last {last}, after {retries} over "
                f"{seconds:.1f} s (max_retries {spec.max_retries}, retry_wait_s {spec.retry_wait_s:g}, "
                f"timeout_s {spec.timeout_s:g}); {resume}")

    def _record(self, key: str, fields: Mapping, answer: Answer, latency_s: float, batch_size: int = 1) -> dict:
        entry = {**fields, "key": key, "text": answer.text, "finish_reason": answer.finish_reason,
                 "prompt_tokens": answer.prompt_tokens, "completion_tokens": answer.completion_tokens,
                 "latency_s": round(latency_s, 6), **({"batch_size": batch_size} if batch_size > 1 else {}),
                 "sdk": self.backend.sdk(),
                 "created_at": datetime.now(timezone.utc).isoformat(timespec="seconds")}
        self.cache.put(entry)
        return entry

    @staticmethod
    def _completion(key: str, sent: str | list, entry: Mapping, hit: bool) -> Completion:
        return Completion(text=entry["text"], finish_reason=entry["finish_reason"],
                          prompt_tokens=entry["prompt_tokens"], completion_tokens=entry["completion_tokens"],
                          latency_s=entry["latency_s"], cache_key=key, cache_hit=hit, sent=sent)


def open_model(section: Mapping, cache_dir: str | os.PathLike, cache_mode: str, what: str) -> LanguageModel:
    """The language model of the config block `section` (at config path `what`), answering through the
    response cache in `cache_dir`, used in `cache_mode`."""
    spec = ModelSpec.from_config(section, what)
    return LanguageModel(spec, ResponseCache(cache_dir, cache_mode), name=what)
