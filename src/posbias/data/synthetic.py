"""The embedded collection: a deterministic, offline stand-in for MS MARCO and TREC DL.

Documents are sequences of passages. Every query asks for one relation of one
entity; the answering passage sits inside one (train, dev) or several (test,
graded) documents. The structure mirrors the real benchmarks:

* train and dev: one relevant document per query, and a strong early-position
  bias (a share `early_fraction` of answering passages start inside the first
  window, as in MS MARCO);
* test: graded judgments (3 answer up front in a document about the entity,
  2 answer anywhere, 1 on topic without the answer), several per query;
* a passage collection (answering passages plus a non-relevant pool) for
  separate queries, from which `posbias.data.farrelevant` builds FarRelevant.

Each query gets hard negatives that hold all of its words, the entity often
repeated, but never within one window of each other (see `hard_negatives`):
BM25 ranks them above the answer, while a ranker that reads passages can learn
that the answer is where the query's words meet. Answering passages reuse the
question's words, or with probability 1 - `literal_fraction` paraphrase them so
that they share only the entity name with the query (a harder, lexical-gap
variant that the CPU-sized default does not use).
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field
from typing import Callable

from posbias.data.vocabulary import (
    DEFINITION,
    RELATION_BY_NAME,
    RELATIONS,
    filler_sentence,
    mention_sentence,
    random_name,
    random_value,
)
from posbias.errors import InputError
from posbias.settings import from_section

QUERY_SETS = ("train", "dev", "test")


@dataclass(frozen=True)
class GeneratorSettings:
    """Generator parameters; the config's `generator` section maps onto these fields."""

    seed: int
    n_entities: int
    n_train_queries: int
    n_dev_queries: int
    n_test_queries: int
    n_farrelevant_queries: int
    first_window: int  # W, in tokens of the length function
    min_doc_tokens: int
    max_doc_tokens: int  # relevant documents are drawn up to this length (about 3W); hard negatives are 3 zones long
    early_fraction: float  # share of train/dev answers starting inside the first window
    literal_fraction: float  # share of answering passages that reuse the question's words
    hard_negatives: int  # documents per query holding its words, never within W tokens of each other
    pool_passages: int  # non-relevant passages in the FarRelevant passage pool
    n_relations: int = len(RELATIONS)  # use the first N relations of the vocabulary
    query_relations: tuple[str, ...] | None = None  # relations queries ask for (default: all in use)
    # Pool mentions name the entities of the first N FarRelevant queries (the test set), so that
    # BM25 candidate lists hold many documents that mention the query's entity; 0 = any entity.
    pool_mention_entities: int = 0
    # Hard-negative documents per FarRelevant query (as `hard_negatives` builds for the other query sets): they
    # join the FarRelevant corpus unjudged, so BM25's candidate lists hold documents with every query word far
    # apart, as the real FarRelevant's 0.5M MS MARCO documents do. 0 = none (the corpus is the relevant documents).
    farrelevant_hard_negatives: int = 0
    # The control of the sweep's dip at token 0 (docs/stages/sweep.md): one filler sentence before each hard
    # negative of the train query set, drawn from a generator of its own so that every other document, query and
    # judgment is the same as without it. False in every config but the control's.
    train_negative_lead_filler: bool = False

    @classmethod
    def from_config(cls, section: dict) -> "GeneratorSettings":
        return from_section(cls, section, "generator settings")


@dataclass
class Passage:
    text: str
    entity: str | None = None
    relation: str | None = None
    answers: bool = False  # states the value of (entity, relation)


@dataclass
class Document:
    doc_id: str
    passages: list[Passage]

    @property
    def text(self) -> str:
        return " ".join(passage.text for passage in self.passages)


@dataclass
class SyntheticCollection:
    documents: list[Document]
    queries: dict[str, dict[str, str]]  # query set -> {qid: text}
    qrels: dict[str, dict[str, dict[str, int]]]  # query set -> {qid: {doc_id: grade}}
    answer_starts: dict[str, dict[str, int]]  # query set -> {qid: token offset of the answer in its relevant doc}
    hard_negatives: dict[str, dict[str, list[str]]]  # query set -> {qid: doc ids of its hard negatives}
    passages: list[dict]  # FarRelevant passage collection: {"id", "text"}
    passage_queries: dict[str, str]
    passage_qrels: dict[str, dict[str, int]]
    passage_negatives: list[dict]  # FarRelevant hard-negative documents: {"id", "qid", "text"}
    # query set -> {qid: [{"doc_id", "text", "start"}]}: every passage of a judged document that answers the query,
    # with its token offset there (read off the documents after they are drawn: no extra random draws)
    answer_passages: dict[str, dict[str, list[dict]]] = field(default_factory=dict)


class _World:
    """Entities, their facts, and the passages that talk about them."""

    def __init__(self, settings: GeneratorSettings, rng: random.Random, entity_words: list[str] | None):
        self.rng = rng
        self.literal_fraction = settings.literal_fraction
        if entity_words is not None:
            if len(entity_words) < settings.n_entities:
                raise InputError(f"generator: n_entities={settings.n_entities} but only "
                                 f"{len(entity_words)} entity words are available")
            names = rng.sample(sorted(entity_words), settings.n_entities)
        else:
            names, seen = [], set()
            while len(names) < settings.n_entities:
                name = random_name(rng)
                if name not in seen:
                    seen.add(name)
                    names.append(name)
        self.entities = names
        self.relations = RELATIONS[: settings.n_relations]
        if settings.query_relations and "definition" in settings.query_relations:
            self.relations = (*self.relations, DEFINITION)
        self.facts = {(e, r.name): random_value(r.values, rng) for e in names for r in self.relations}

    def answer(self, entity: str, relation: str, literal: bool | None = None) -> Passage:
        rel = RELATION_BY_NAME[relation]
        if literal is None:
            literal = self.rng.random() < self.literal_fraction
        template = self.rng.choice(rel.literal if literal else rel.paraphrase)
        text = template.format(e=entity, v=self.facts[(entity, relation)]) + "."
        return Passage(text, entity, relation, answers=True)

    def partial(self, entity: str, relation: str) -> Passage:
        return Passage(self.rng.choice(RELATION_BY_NAME[relation].partial).format(e=entity) + ".", entity, relation)

    def question(self, entity: str, relation: str) -> str:
        return self.rng.choice(RELATION_BY_NAME[relation].questions).format(e=entity)


class _Builder:
    def __init__(self, settings: GeneratorSettings, length: Callable[[str], int], entity_words):
        self.s = settings
        self.rng = random.Random(settings.seed)
        self.lead_rng = random.Random(f"{settings.seed}:negative-lead")  # train_negative_lead_filler's own draws
        self.world = _World(settings, self.rng, entity_words)
        self.length = length
        pairs = [(e, r.name) for e in self.world.entities for r in self.world.relations]
        self.rng.shuffle(pairs)
        if settings.query_relations:
            unknown = sorted(set(settings.query_relations) - {r.name for r in self.world.relations})
            if unknown:
                raise InputError(f"generator: query_relations {unknown} are not among the relations in use")
            # Queries ask only for these relations; the other pairs stay background facts.
            asked = [p for p in pairs if p[1] in settings.query_relations]
            pairs = asked + [p for p in pairs if p[1] not in settings.query_relations]
        sizes = [settings.n_train_queries, settings.n_dev_queries, settings.n_test_queries,
                 settings.n_farrelevant_queries]
        askable = sum(1 for p in pairs if not settings.query_relations or p[1] in settings.query_relations)
        if sum(sizes) > askable or sum(sizes) > len(pairs) // 2:
            raise InputError(
                f"generator: {sum(sizes)} queries need more (entity, relation) pairs than the "
                f"{askable} askable of {len(pairs)}; raise n_entities"
            )
        self.query_pairs: dict[str, list[tuple[str, str]]] = {}
        start = 0
        for name, size in zip((*QUERY_SETS, "farrelevant"), sizes):
            self.query_pairs[name] = pairs[start:start + size]
            start += size
        # Facts no query asks for: they fill documents without creating extra relevant ones.
        self.background = pairs[start:]
        self.background_by_entity: dict[str, list[tuple[str, str]]] = {}
        self.background_by_relation: dict[str, list[tuple[str, str]]] = {}
        for e, r in self.background:
            self.background_by_entity.setdefault(e, []).append((e, r))
            self.background_by_relation.setdefault(r, []).append((e, r))
        self.documents: list[Document] = []

    # -- distractor passages ------------------------------------------------

    def _about_entity(self, entity: str) -> Passage:
        own = self.background_by_entity.get(entity)
        if own and self.rng.random() < 0.4:
            return self.world.answer(*self.rng.choice(own))
        return Passage(mention_sentence(entity, self.rng), entity)

    def _on_relation(self, relation: str) -> Passage:
        # Another entity's fact in the question's own words: lexical bait.
        return self.world.answer(*self.rng.choice(self.background_by_relation[relation]), literal=True)

    def _unrelated(self) -> Passage:
        if self.rng.random() < 0.5:
            return Passage(filler_sentence(self.rng))
        return self.world.answer(*self.rng.choice(self.background))

    def _distractors(self, entity: str, relation: str, weights: tuple[float, float, float]) -> Passage:
        draw = self.rng.random()
        if draw < weights[0]:
            return self._about_entity(entity)
        if draw < weights[0] + weights[1]:
            return self._on_relation(relation)
        return self._unrelated()

    # -- documents ------------------------------------------------------------

    def _fill(self, entity, relation, weights, target) -> list[Passage]:
        passages, total = [], 0
        while total < target:
            passage = self._distractors(entity, relation, weights)
            passages.append(passage)
            total += self.length(passage.text)
        return passages

    def _add(self, passages: list[Passage]) -> str:
        doc_id = f"D{len(self.documents):06d}"
        self.documents.append(Document(doc_id, passages))
        return doc_id

    def _target_length(self) -> int:
        return self.rng.randint(self.s.min_doc_tokens, self.s.max_doc_tokens)

    def _insert(self, passages: list[Passage], key: Passage, early: bool, entity, relation, weights) -> int:
        """Insert `key` so that it starts inside (early) or after the first window; return its offset."""
        while True:
            offsets = [0]
            for passage in passages:
                offsets.append(offsets[-1] + self.length(passage.text))
            slots = [i for i, offset in enumerate(offsets) if (offset < self.s.first_window) == early]
            if slots:
                break
            passages.append(self._distractors(entity, relation, weights))  # too short for a late answer
        slot = self.rng.choice(slots)
        passages.insert(slot, key)
        return offsets[slot]

    def relevant_document(self, entity, relation, key: Passage, early: bool, weights) -> tuple[str, int]:
        passages = self._fill(entity, relation, weights, self._target_length() - self.length(key.text))
        start = self._insert(passages, key, early, entity, relation, weights)
        return self._add(passages), start

    def hard_negatives(self, entity, relation, lead_filler: bool = False) -> list[str]:
        """Documents that use every query word, but never within one window of each other (see
        `_hard_negative`), each opened by a filler sentence when `lead_filler`; they join the collection and
        their ids are returned."""
        documents = [self._hard_negative(entity, relation, i) for i in range(self.s.hard_negatives)]
        if lead_filler:
            documents = [[Passage(filler_sentence(self.lead_rng)), *passages] for passages in documents]
        return [self._add(passages) for passages in documents]

    def _hard_negative(self, entity, relation, i: int) -> list[Passage]:
        """An entity zone (mentions of the entity, its other facts) and a relation zone (the queried
        relation stated for other entities, in the question's words), at least `first_window` tokens
        of filler apart, in random order. BM25 sees all query terms, the entity often repeated, so
        these documents outrank the answer; what tells them apart is proximity, which a passage-level
        ranker can see. The i-th document is entity-heavy when i is even, relation-heavy otherwise.
        """
        n_entity, n_relation = (2, 1) if i % 2 == 0 else (1, 2)
        entity_zone = [self._about_entity(entity) for _ in range(n_entity)]
        relation_zone = [self._on_relation(relation) for _ in range(n_relation)]
        gap, gap_tokens = [], 0
        while gap_tokens < self.s.first_window:
            gap.append(Passage(filler_sentence(self.rng)))
            gap_tokens += self.length(gap[-1].text)
        first, last = (entity_zone, relation_zone) if self.rng.random() < 0.5 else (relation_zone, entity_zone)
        return first + gap + last

    def build(self) -> SyntheticCollection:
        queries: dict[str, dict[str, str]] = {}
        qrels: dict[str, dict[str, dict[str, int]]] = {}
        starts: dict[str, dict[str, int]] = {}
        negatives: dict[str, dict[str, list[str]]] = {}
        mixed = (0.25, 0.15, 0.6)
        for name in QUERY_SETS:
            queries[name], qrels[name], starts[name], negatives[name] = {}, {}, {}, {}
            for i, (entity, relation) in enumerate(self.query_pairs[name]):
                qid = f"{name}{i:04d}"
                queries[name][qid] = self.world.question(entity, relation)
                early = self.rng.random() < self.s.early_fraction
                doc_id, start = self.relevant_document(
                    entity, relation, self.world.answer(entity, relation), early, mixed)
                judged = {doc_id: 1}
                starts[name][qid] = start
                if name == "test":
                    judged = self._graded(entity, relation, doc_id)
                negatives[name][qid] = self.hard_negatives(
                    entity, relation, lead_filler=name == "train" and self.s.train_negative_lead_filler)
                qrels[name][qid] = judged
        passages, passage_queries, passage_qrels = self._passage_collection()
        # Drawn last, so that a collection without them is the same as before they existed.
        far_negatives = self._farrelevant_negatives()
        by_id = {document.doc_id: document for document in self.documents}
        answering = {name: {f"{name}{i:04d}": _answer_spans(by_id, qrels[name][f"{name}{i:04d}"], entity, relation,
                                                            self.length)
                            for i, (entity, relation) in enumerate(self.query_pairs[name])} for name in QUERY_SETS}
        return SyntheticCollection(self.documents, queries, qrels, starts, negatives,
                                   passages, passage_queries, passage_qrels, far_negatives, answering)

    def _graded(self, entity, relation, answer_doc) -> dict[str, int]:
        """TREC-DL-like judgments: several documents per query, three grades."""
        judged = {answer_doc: 2}
        top, _ = self.relevant_document(entity, relation, self.world.answer(entity, relation), True, (0.8, 0.0, 0.2))
        judged[top] = 3
        for _ in range(2):
            doc_id, _ = self.relevant_document(
                entity, relation, self.world.partial(entity, relation), self.rng.random() < 0.5, (0.4, 0.2, 0.4))
            judged[doc_id] = 1
        return judged

    def _passage_collection(self):
        """Answering passages for the FarRelevant queries plus a non-relevant pool."""
        passages, passage_queries, passage_qrels = [], {}, {}
        for i, (entity, relation) in enumerate(self.query_pairs["farrelevant"]):
            qid = f"far{i:04d}"
            pid = f"P{len(passages):06d}"
            passages.append({"id": pid, "text": self.world.answer(entity, relation).text})
            passage_queries[qid] = self.world.question(entity, relation)
            passage_qrels[qid] = {pid: 1}
        for _ in range(self.s.pool_passages):
            draw = self.rng.random()
            if draw < 0.4:
                passage = self.world.answer(*self.rng.choice(self.background))
            elif draw < 0.6:
                focus = self.query_pairs["farrelevant"][: self.s.pool_mention_entities]
                entity = self.rng.choice(focus)[0] if focus else self.rng.choice(self.world.entities)
                passage = Passage(mention_sentence(entity, self.rng))
            else:
                passage = Passage(filler_sentence(self.rng))
            passages.append({"id": f"P{len(passages):06d}", "text": passage.text})
        return passages, passage_queries, passage_qrels

    def _farrelevant_negatives(self) -> list[dict]:
        """`farrelevant_hard_negatives` hard-negative documents per FarRelevant query (unjudged)."""
        documents = []
        for i, (entity, relation) in enumerate(self.query_pairs["farrelevant"]):
            for j in range(self.s.farrelevant_hard_negatives):
                text = " ".join(p.text for p in self._hard_negative(entity, relation, j))
                documents.append({"id": f"N{len(documents):06d}", "qid": f"far{i:04d}", "text": text})
        return documents


def _answer_spans(by_id: dict[str, Document], judged: dict[str, int], entity: str, relation: str,
                  length: Callable[[str], int]) -> list[dict]:
    """The passages of the judged documents that state (entity, relation), with their token offsets there."""
    spans = []
    for doc_id in judged:
        offset = 0
        for passage in by_id[doc_id].passages:
            if passage.answers and (passage.entity, passage.relation) == (entity, relation):
                spans.append({"doc_id": doc_id, "text": passage.text, "start": offset})
            offset += length(passage.text)
    return spans


def generate(settings: GeneratorSettings, length: Callable[[str], int],
             entity_words: list[str] | None = None) -> SyntheticCollection:
    """Generate the embedded collection; the same settings and words give the same collection.

    Entity names are drawn from `entity_words` when given (single tokens of the
    ranker's vocabulary make entity matching learnable for a small model),
    otherwise made up from syllables.
    """
    return _Builder(settings, length, entity_words).build()
