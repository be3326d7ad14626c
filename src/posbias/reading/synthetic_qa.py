"""NQ-shaped retrieval results from the embedded synthetic world (spec §2.3): the offline stand-in for NQ-Open
with Contriever over Wikipedia, which cannot be fetched here.

The world is `posbias.data.synthetic.generate` with the config's generator settings. Its FarRelevant passage
collection holds one answering passage per FarRelevant query plus a pool of non-relevant passages (other
entities' facts, mentions of entities, filler): `n_farrelevant_queries + pool_passages` one-sentence passages
(1900 with config.yaml's generator, ranked in about 10 s on 2 cores, model loading included). Each of the first
`n_questions` FarRelevant queries becomes a record in the authors' retrieval-results schema (§2.1, §2.2):

- `question`: the world's own wording of the relation query ("what is the capital of zorvia"; like NQ-Open,
  lower case and no question mark);
- `answers`: the relation's value, read back from the answering passage with the vocabulary's templates;
- `nq_annotated_gold`: the answering passage, titled with the entity (as an NQ gold paragraph carries its page's
  title);
- `ctxs`: the top `depth` passages of the whole collection ranked by a dense encoder (by default the offline
  MiniLM, standing in for Contriever) against the question, with `id`, `title` (the entity a passage is about,
  empty for filler), `text`, `score` (a string, as in the authors' files) and `hasanswer` from DPR's matcher, so
  that passages stating the answer never become distractors and hard negatives stay hard.

Everything is deterministic: the same settings give the same world, and the encoder runs in float32 on the CPU.
"""

from __future__ import annotations

import functools
import os
import re
from typing import Callable, Mapping, Sequence

import numpy as np

from posbias.data.synthetic import GeneratorSettings, SyntheticCollection, generate
from posbias.data.vocabulary import DEFINITION, RELATIONS, Relation
from posbias.errors import InputError
from posbias.io import write_jsonl
from posbias.reading.matching import has_answer

# The offline MiniLM as the config's hybrid retriever uses it (a sentence-transformers model: mean pooling).
DEFAULT_ENCODER = {"model": "offline:all-MiniLM-L6-v2", "pooling": "mean", "max_query_tokens": 32,
                   "max_passage_tokens": 128, "device": "cpu"}
DEFAULT_DEPTH = 50  # the authors' retrieval file is at least this deep (spec §2.2)

# Similarities of each question (rows) to each passage (columns).
Ranker = Callable[[Sequence[str], Sequence[str]], np.ndarray]


def synthetic_qa_records(settings: Mapping | GeneratorSettings, n_questions: int, tokenizer: str = "whitespace",
                         encoder: Mapping | None = None, depth: int = DEFAULT_DEPTH,
                         rank: Ranker | None = None) -> list[dict]:
    """Retrieval records for the first `n_questions` FarRelevant queries of the world that `settings` (the
    config's `generator.settings`) and `tokenizer` (`generator.tokenizer`; lengths and entity words) make.

    `encoder` is a `posbias.retrieval.dense` encoder section (default `DEFAULT_ENCODER`); `rank` replaces the
    encoder altogether (tests)."""
    if not isinstance(settings, GeneratorSettings):
        settings = GeneratorSettings.from_config(dict(settings))
    if not isinstance(n_questions, int) or n_questions < 1:
        raise InputError(f"n_questions must be a positive integer, got {n_questions!r}")
    if n_questions > settings.n_farrelevant_queries:
        raise InputError(f"n_questions={n_questions} exceeds the generator's n_farrelevant_queries="
                         f"{settings.n_farrelevant_queries}, which are the questions")
    if not isinstance(depth, int) or depth < 2:
        raise InputError(f"depth must be an integer >= 2, got {depth!r}")
    collection = _world(settings, tokenizer)
    questions = list(collection.passage_queries.items())[:n_questions]
    passages = collection.passages
    texts = [passage["text"] for passage in passages]
    facts = [parse_fact(text) for text in texts]
    asked = {qid: parse_question(question) for qid, question in collection.passage_queries.items()}
    entities = {fact[0] for fact in facts if fact} | {entity for entity, _ in asked.values()}
    similarity = (rank or dense_ranker(encoder))([question for _, question in questions], texts)
    by_id = {passage["id"]: i for i, passage in enumerate(passages)}
    records = []
    for row, (qid, question) in enumerate(questions):
        (gold_id,) = collection.passage_qrels[qid]
        entity, relation = asked[qid]
        value = answer_value(texts[by_id[gold_id]], entity, relation)
        records.append(_record(question, entity, value, texts[by_id[gold_id]], passages, similarity[row], depth,
                               facts, entities))
    return records


def write_synthetic_qa(path: str | os.PathLike, settings: Mapping | GeneratorSettings, n_questions: int,
                       tokenizer: str = "whitespace", encoder: Mapping | None = None,
                       depth: int = DEFAULT_DEPTH) -> int:
    """Write `synthetic_qa_records(...)` as a `.jsonl.gz` retrieval-results file; returns the record count."""
    return write_jsonl(path, synthetic_qa_records(settings, n_questions, tokenizer, encoder, depth))


def _world(settings: GeneratorSettings, tokenizer: str) -> SyntheticCollection:
    from posbias.backbones import load_tokenizer, token_counter
    from posbias.data.vocabulary import vocabulary_entity_words

    words = None if tokenizer == "whitespace" else vocabulary_entity_words(load_tokenizer(tokenizer))
    return generate(settings, token_counter(tokenizer), words)


def dense_ranker(encoder: Mapping | None) -> Ranker:
    def rank(questions: Sequence[str], texts: Sequence[str]) -> np.ndarray:
        from posbias.retrieval.dense import DenseEncoder

        model = DenseEncoder.from_config(dict(encoder or DEFAULT_ENCODER))
        return model.encode_queries(list(questions)) @ model.encode_passages(list(texts), progress=False).T

    return rank


def _record(question, entity, value, gold_text, passages, scores, depth, facts, entities) -> dict:
    order = np.argsort(-np.asarray(scores, dtype=np.float64), kind="stable")[:depth]  # ties: collection order
    ctxs = [{"id": passages[i]["id"], "title": _title(passages[i]["text"], facts[i], entities),
             "text": passages[i]["text"], "score": f"{float(scores[i]):.6f}",
             "hasanswer": has_answer(passages[i]["text"], [value])} for i in order]
    return {"question": question, "answers": [value], "ctxs": ctxs,
            "nq_annotated_gold": {"title": entity, "long_answer": gold_text, "chunked_long_answer": gold_text,
                                  "short_answers": [value]}}


def _title(text: str, fact, entities: set[str]) -> str:
    if fact:
        return fact[0]
    return next((word for word in re.findall(r"\S+", text.rstrip(".")) if word in entities), "")


# --- reading facts back with the vocabulary's templates ------------------------------------------------------

_RELATIONS: tuple[Relation, ...] = (*RELATIONS, DEFINITION)  # definition last: "what is {e}" is the loosest


@functools.lru_cache(maxsize=4096)
def _pattern(template: str, entity: str | None = None) -> re.Pattern:
    """A template as a regular expression: `{e}` one word without a full stop (or the given entity), `{v}` any
    text, and an optional full stop at the end, as passages have one."""
    parts = []
    for piece in re.split(r"(\{e\}|\{v\})", template):
        if piece == "{e}":
            parts.append(re.escape(entity) if entity is not None else r"(?P<e>[^\s.]+)")
        elif piece == "{v}":
            parts.append(r"(?P<v>.+?)")
        else:
            parts.append(re.escape(piece))
    return re.compile("".join(parts) + r"\.?")


def parse_question(question: str) -> tuple[str, str]:
    """`(entity, relation name)` of a question in one of the world's wordings."""
    for relation in _RELATIONS:
        for template in relation.questions:
            match = _pattern(template).fullmatch(question)
            if match:
                return match["e"], relation.name
    raise InputError(f"question {question!r} is in none of the synthetic world's wordings")


def answer_value(text: str, entity: str, relation: str) -> str:
    """The value an answering passage states for (entity, relation)."""
    rel = next(r for r in _RELATIONS if r.name == relation)
    for template in (*rel.literal, *rel.paraphrase):
        match = _pattern(template, entity).fullmatch(text)
        if match:
            return match["v"]
    raise InputError(f"passage {text!r} does not state the {relation} of {entity!r}")


def parse_fact(text: str) -> tuple[str, str, str] | None:
    """`(entity, relation, value)` if the passage states a fact in one of the world's templates, else None."""
    for relation in _RELATIONS:
        for template in (*relation.literal, *relation.paraphrase):
            match = _pattern(template).fullmatch(text)
            if match:
                return match["e"], relation.name, match["v"]
    return None

