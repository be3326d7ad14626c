"""RankGPT (Sun et al. 2023), the study's zero-shot listwise reranker: a language model reads a query's
candidates in sliding windows of passages and answers each window with a permutation.

There is no torch module and nothing to train. The model is any object with
`generate(requests, decoding, progress=...) -> completions` (`posbias.llm.generate.LanguageModel`: backends,
retries and the response cache live there). Windows are sent one at a time, because each window holds the
candidates that the previous answer moved up. The pieces that need no model are in `posbias.rankers.listwise`.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, fields
from typing import Callable, Mapping, Sequence

from tqdm import tqdm

from posbias.errors import InputError
from posbias.llm.types import Decoding, Request
from posbias.rankers.listwise.firstp import first_sentences_within
from posbias.rankers.listwise.parsing import parse_permutation
from posbias.rankers.listwise.prompt import permutation_messages
from posbias.rankers.listwise.windows import apply_permutation, check_window_settings, sliding_windows

__all__ = ["RankGPTSettings", "first_stage_order", "rerank_listwise", "rerank_query", "ranked_scores",
           "apply_permutation", "first_sentences_within", "parse_permutation", "permutation_messages",
           "sliding_windows"]

log = logging.getLogger(__name__)

TOKENS_PER_ID = 6  # "[12] > " is 4 to 6 tokens in the tokenizers at hand (digits may be split one by one)


def _optional_int(value, name: str, where: str) -> None:
    if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value < 1):
        raise InputError(f"{where}{name} must be a positive integer or null, got {value!r}")


@dataclass(frozen=True)
class RankGPTSettings:
    """How RankGPT reranks (defaults: the study's).

    - `window`, `step`, `rank_end`: the sliding windows (`listwise.windows.sliding_windows`); candidates after
      `rank_end` keep their first-stage order below the reranked ones;
    - `max_words`: each passage cut to its first whitespace words in the prompt (the authors' code: 300;
      null, the paper's "no truncation": whole passages);
    - `first_tokens`, `first_tokenizer`: FirstP, each document cut to its longest sentence prefix within
      `first_tokens` tokens of the tokenizer `first_tokenizer` (a backbone name or `whitespace`); both or neither;
    - `max_new_tokens`: the answer's budget; null = `TOKENS_PER_ID` per identifier of a full window.
    """

    window: int = 20
    step: int = 10
    rank_end: int = 100
    max_words: int | None = None
    first_tokens: int | None = None
    first_tokenizer: str | None = None
    max_new_tokens: int | None = None

    def __post_init__(self):
        self.check()

    def check(self, where: str = "") -> None:
        """Refuse values that cannot work; `where` (a config path ending in ".") prefixes the field's name."""
        check_window_settings(self.window, self.step, self.rank_end, where)
        for name in ("max_words", "first_tokens", "max_new_tokens"):
            _optional_int(getattr(self, name), name, where)
        if self.first_tokenizer is not None and (not isinstance(self.first_tokenizer, str)
                                                 or not self.first_tokenizer.strip()):
            raise InputError(f"{where}first_tokenizer must be a tokenizer name, got {self.first_tokenizer!r}")
        if (self.first_tokens is None) != (self.first_tokenizer is None):
            raise InputError(f"{where}first_tokens and first_tokenizer go together (FirstP needs both; "
                             f"neither keeps whole documents), got {self.first_tokens!r} and {self.first_tokenizer!r}")

    @classmethod
    def from_config(cls, section: Mapping, what: str) -> "RankGPTSettings":
        """The settings of a config mapping; unknown keys and bad values are `InputError`s naming `what.key`."""
        names = sorted(f.name for f in fields(cls))
        unknown = sorted(set(section) - set(names))
        if unknown:
            raise InputError(f"{what}: unknown keys {unknown}; known: {names}")
        try:
            return cls(**section)
        except InputError as err:
            raise InputError(f"{what}.{err}") from None

    @property
    def decoding(self) -> Decoding:
        """Greedy decoding with room for a full window's permutation."""
        return Decoding(max_new_tokens=self.max_new_tokens or TOKENS_PER_ID * self.window)


def token_count(name: str) -> Callable[[str], int]:
    """Tokens of a text without special tokens, uncached: FirstP counts many overlapping prefixes of each
    document once, which `posbias.backbones.token_counter`'s unbounded cache would keep for the whole run."""
    if name == "whitespace":
        return lambda text: len(text.split())
    from posbias.backbones import load_tokenizer

    tokenizer = load_tokenizer(name)
    return lambda text: len(tokenizer(text, add_special_tokens=False)["input_ids"])


def document_cut(settings: RankGPTSettings) -> Callable[[str], str]:
    """What the model reads of a document: all of it, or its FirstP sentence prefix."""
    if settings.first_tokens is None:
        return lambda text: text
    count = token_count(settings.first_tokenizer)
    return lambda text: first_sentences_within(text, settings.first_tokens, count)


def first_stage_order(scores: Mapping[str, float]) -> list[str]:
    """A candidates run's documents for one query in trec_eval's order (score descending, then doc id
    descending), which is how `posbias.io.read_run`'s `{doc_id: score}` becomes the list RankGPT reranks."""
    return sorted(sorted(scores, reverse=True), key=lambda doc: scores[doc], reverse=True)


def ranked_scores(order: Sequence[str]) -> list[tuple[str, float]]:
    """RankGPT's run scores, −rank (1-based), so that sorting by score gives back `order`."""
    return [(doc, -float(rank)) for rank, doc in enumerate(order, start=1)]


def rerank_query(model, qid: str, query: str, docs: Sequence[str], passage: Callable[[str], str],
                 settings: RankGPTSettings, calls: list | None = None) -> tuple[list[str], float]:
    """One query's final order and the seconds its model calls took (their recorded latencies, summed).
    `passage(doc_id)` is the text the prompt shows of a document; `calls`, when given, receives each window's
    (window size, completion), for the cost and the answers' faults (`posbias.audit`)."""
    order = list(docs)
    latency = 0.0
    decoding = settings.decoding
    for start, end in sliding_windows(len(order), settings.window, settings.step, settings.rank_end):
        messages = permutation_messages(query, [passage(doc) for doc in order[start:end]], settings.max_words)
        request = Request(messages=messages, meta={"id": f"{qid}:{start}-{end}", "n_items": end - start})
        (completion,) = model.generate([request], decoding, progress=False)
        if completion.finish_reason == "length":
            log.warning("RankGPT %s: the answer stopped at max_new_tokens (%d); identifiers it did not reach "
                        "keep their order", request.meta["id"], decoding.max_new_tokens)
        order = apply_permutation(order, start, end, parse_permutation(completion.text, end - start))
        latency += completion.latency_s
        if calls is not None:
            calls.append((end - start, completion))
    return order, latency


def _check_inputs(queries: Mapping[str, str], candidates: Mapping[str, Sequence[str]], texts: Mapping[str, str],
                  rank_end: int) -> None:
    """Refuse, before any model call is paid for, queries without text, repeated candidates and reranked
    candidates without text."""
    missing_queries = sorted(set(candidates) - set(queries))
    if missing_queries:
        raise InputError(f"{len(missing_queries)} queries of the candidates have no text, e.g. {missing_queries[:3]}")
    for qid, docs in candidates.items():
        if len(set(docs)) < len(docs):
            repeated = sorted({doc for doc in docs if docs.count(doc) > 1})
            raise InputError(f"query {qid}: candidates listed twice: {repeated[:3]}")
    missing_docs = sorted({doc for docs in candidates.values() for doc in docs[:rank_end] if doc not in texts})
    if missing_docs:
        raise InputError(f"{len(missing_docs)} candidate documents have no text, e.g. {missing_docs[:3]}")


def rerank_listwise(model, queries: Mapping[str, str], candidates: Mapping[str, Sequence[str]],
                    texts: Mapping[str, str], settings: RankGPTSettings = RankGPTSettings(),
                    progress: bool = True) -> tuple[dict[str, list[tuple[str, float]]], dict[str, float]]:
    """Rerank each query's candidates (in first-stage order) with RankGPT.

    Returns the run, `{qid: [(doc_id, score), ...]}` in the final order with score = −rank (candidates after
    `rank_end` keep their first-stage order, scores continuing downward), and each query's summed model
    latency in seconds (Figure 3). Each document's FirstP cut is made once, however many queries share it.
    """
    _check_inputs(queries, candidates, texts, settings.rank_end)
    cut = document_cut(settings)
    shown: dict[str, str] = {}

    def passage(doc: str) -> str:
        if doc not in shown:
            shown[doc] = cut(texts[doc])
        return shown[doc]

    run: dict[str, list[tuple[str, float]]] = {}
    latency: dict[str, float] = {}
    for qid in tqdm(candidates, desc="reranking with RankGPT", unit="query", disable=not progress):
        order, latency[qid] = rerank_query(model, qid, queries[qid], candidates[qid], passage, settings)
        run[qid] = ranked_scores(order)
    return run, latency
