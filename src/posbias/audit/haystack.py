"""The audit's embedded sweep: each question's answering passage (the needle) moved through a document of other
passages (the haystack), counted in the audited model's own tokens.

The passages come from the embedded synthetic world (`posbias.data.synthetic`, its FarRelevant passage
collection): a question ("capital city of kousepan"), the one passage answering it, and a pool of passages that
answer none of the questions. Per question (the first `n_queries`, in the world's order):

- the haystack: pool passages drawn at random (seeded by `seed` and the question's id, so a question's documents
  do not depend on which others are audited), each at most once, while the needle still fits in `doc_tokens`;
- the variants: the needle placed at `n_positions` boundaries between haystack passages spread evenly in tokens,
  from the very start to the very end (`posbias.data.placement`, as the workflow's sweep places it);
- the distractors: `n_distractors` documents of the same length built the same way around another question's
  answering passage (a fact about another entity), placed at a random boundary, so every candidate holds one fact
  and only the needle answers the question.
"""

from __future__ import annotations

import functools
import random
from dataclasses import dataclass
from itertools import accumulate
from typing import Callable, Mapping, Sequence

from posbias.data.synthetic import GeneratorSettings, generate
from posbias.errors import InputError
from posbias.io import iter_documents, read_qrels, read_queries
from posbias.data.placement import Variant, place, spread_slots

NEEDLES = ("lexical", "paraphrased")
# The embedded world the audit draws from: small (generated in about 0.1 s), questions enough for every battery
# default, and a pool of 400 one-sentence passages from which haystacks of a thousand tokens are drawn.
WORLD = {"seed": 31, "n_entities": 160, "n_train_queries": 0, "n_dev_queries": 0, "n_test_queries": 0,
         "n_farrelevant_queries": 60, "first_window": 24, "min_doc_tokens": 30, "max_doc_tokens": 72,
         "early_fraction": 0.85, "literal_fraction": 1.0, "hard_negatives": 0, "pool_passages": 400}


@dataclass(frozen=True)
class Question:
    qid: str
    text: str
    needle: str  # the passage that answers it


@dataclass(frozen=True)
class SweptQuestion:
    question: Question
    variants: tuple[Variant, ...]  # the needle at each position
    distractors: tuple[str, ...]


def world(settings: Mapping = WORLD, needles: str = "lexical") -> tuple[list[Question], list[str]]:
    """The world's questions with their needles, and the pool of passages answering none of them. `needles`:
    `lexical` (the answering passage reuses the question's words: "the highest mountain in drukatar is mount
    giabu") or `paraphrased` (the same fact in other words, sharing little more than the entity's name: "no peak in
    drukatar rises above mount giabu"; the generator's literal_fraction 0). Lexical overlap can hide a position
    effect: a model that matches words finds a lexical needle anywhere it reads."""
    if needles not in NEEDLES:
        raise InputError(f"needles {needles!r} is not one of {', '.join(NEEDLES)}")
    settings = {**settings, "literal_fraction": 1.0 if needles == "lexical" else 0.0}
    collection = generate(GeneratorSettings.from_config(dict(settings)), lambda text: len(text.split()))
    texts = {passage["id"]: passage["text"] for passage in collection.passages}
    questions = [Question(qid, text, texts[next(iter(collection.passage_qrels[qid]))])
                 for qid, text in collection.passage_queries.items()]
    needles = {question.needle for question in questions}
    return questions, [text for text in texts.values() if text not in needles]


def world_from_files(queries: str, qrels: str, passages: str, pool_size: int) -> tuple[list[Question], list[str]]:
    """A real passage collection in place of the embedded world (MS MARCO passages with their dev queries and
    judgments, the FarRelevant builder's passage collection): each judged query with a relevant passage in the
    collection is a question, its first relevant passage (by id) the needle; the pool is the first `pool_size`
    passages of the file that no query judges relevant (the file is read once, front to back)."""
    texts, judged = read_queries(queries), read_qrels(qrels)
    relevant = {qid: sorted(pid for pid, grade in judged[qid].items() if grade > 0) for qid in texts if qid in judged}
    wanted = {pids[0]: qid for qid, pids in relevant.items() if pids}
    every_relevant = {pid for pids in relevant.values() for pid in pids}
    needles, pool = {}, []
    for pid, text in iter_documents(passages):
        if pid in wanted:
            needles[wanted[pid]] = text
        elif pid not in every_relevant and len(pool) < pool_size:
            pool.append(text)
        if len(needles) == len(wanted) and len(pool) >= pool_size:
            break
    questions = [Question(qid, texts[qid], needles[qid]) for qid in texts if qid in needles]
    if not questions:
        raise InputError(f"{passages}: holds none of the relevant passages {qrels} names for {queries}")
    return questions, pool


def questions_and_pool(source: Mapping | None, needles: str = "lexical") -> tuple[list[Question], list[str]]:
    """The embedded world (with `needles` lexical or paraphrased), or the files of a battery's `source` (queries,
    qrels, passages, pool_size)."""
    if not source:
        questions, pool = _embedded_world(needles)
        return list(questions), list(pool)
    return world_from_files(source["queries"], source["qrels"], source["passages"], source.get("pool_size", 5000))


@functools.lru_cache(maxsize=None)
def _embedded_world(needles: str) -> tuple[tuple[Question, ...], tuple[str, ...]]:
    """The embedded world, generated once per process (every battery and replicate of a calibration reads it)."""
    questions, pool = world(needles=needles)
    return tuple(questions), tuple(pool)


def _haystack(pool: list[str], room: int, length: Callable[[str], int], rng: random.Random) -> list[str]:
    """Pool passages in random order, each kept while it fits in `room` tokens (one that overflows is skipped)."""
    units, used = [], 0
    for passage in rng.sample(pool, len(pool)):
        n = length(passage)
        if used + n <= room:
            units.append(passage)
            used += n
    return units


def slots_at(unit_lengths: Sequence[int], depths: Sequence[float]) -> list[int]:
    """For each depth (0: the very start, 1: the very end, as a share of the tokens), the boundary between units
    nearest it. Two depths may meet at one boundary when the units are few: each keeps it (the cell is measured
    where the needle could go)."""
    offsets = [0, *accumulate(unit_lengths)]
    return [min(range(len(offsets)), key=lambda slot: (abs(offsets[slot] - offsets[-1] * depth), slot))
            for depth in depths]


def counted(count_tokens: Callable[[str], int]) -> Callable[[str], int]:
    """`count_tokens`, remembering each text's count: every haystack measures the whole pool (`_haystack`), so a
    battery's questions, distractors and lengths would otherwise tokenize the same passages again and again."""
    seen: dict[str, int] = {}

    def count(text: str) -> int:
        if text not in seen:
            seen[text] = count_tokens(text)
        return seen[text]

    return count


def sweep_questions(questions: list[Question], pool: list[str], length: Callable[[str], int], n_queries: int,
                    n_positions: int, n_distractors: int, doc_tokens: int, seed: int,
                    depths: Sequence[float] | None = None) -> list[SweptQuestion]:
    """The first `n_queries` questions swept (see the module docstring); `length` counts the model's tokens.
    `depths` (shares of the document, one per position) place the needle there instead of `n_positions` places
    spread evenly (the depth x length grid)."""
    if n_queries + n_distractors > len(questions):
        raise InputError(f"the audit's world has {len(questions)} questions, fewer than n_queries + n_distractors "
                         f"= {n_queries + n_distractors}")
    swept = []
    for i, question in enumerate(questions[:n_queries]):
        rng = random.Random(f"{seed}:{question.qid}")  # a str seed is hashed: stable across runs and machines
        units = _haystack(pool, doc_tokens - length(question.needle), length, rng)
        try:
            lengths = [length(unit) for unit in units]
            slots = slots_at(lengths, depths) if depths is not None else spread_slots(lengths, n_positions)
        except ValueError as err:
            raise InputError(f"sweep of {question.qid}: {err}; raise doc_tokens ({doc_tokens}) or lower "
                             f"n_positions") from None
        others = questions[n_queries:n_queries + n_distractors]  # facts no audited question asks for
        distractors = []
        for other in others:
            filler = _haystack(pool, doc_tokens - length(other.needle), length, rng)
            at = rng.randint(0, len(filler))
            distractors.append(" ".join([*filler[:at], other.needle, *filler[at:]]))
        swept.append(SweptQuestion(question, tuple(place(units, question.needle, slots, length)),
                                   tuple(distractors)))
    return swept
