"""A synthetic Re-DocRED: documents about invented entities in the layout of the released `*_revised.json` files,
so that the probes stage (spec: shared/specs/probes.md §2) runs offline on the demo's embedded world.

Each document is about one main entity, whose name is its title. It states 2-3 facts of that entity (labels whose
head is the main entity, each with exactly one evidence sentence that mentions both head and tail), and the rest
of its sentences are neutral: they mention no entity. Names are invented words (`posbias.data.vocabulary`), so the
documents state no real-world facts.

The layout follows the release (spec §1.1): `sents` are word tokens with the final period split off; a mention
has `name`, `pos` = [start, end) in sentence `sent_id` (the tokens there spell `name`), `type`, `global_pos` (the
document-level index of its first token, written twice) and `index` ("entity_mention"). Entities are listed in
order of first appearance, but each entity's mentions are shuffled: the release does not list them in sentence
order either, and code that reads it must not rely on that.

Documents come in three shapes, mixed in the fixed proportions of `SHAPE_SHARES` (exact counts by largest
remainder, in an order shuffled by the seed), so that every probe of §2 finds candidates:

- `single` (40 %): the head is mentioned once, with one name, in one sentence that states all its facts
  (position first-vs-last, sweep and brevity need `len(head_entity) == 1`);
- `repeated` (35 %): the head, with one name, opens the document, comes back in 1-2 more sentences that state no
  fact, and is mentioned once in each fact's own evidence sentence (answer importance, repetition, foil);
- `variants` (25 %): laid out like `repeated`, but the head has a long and a short name ("Olga Nukral" and
  "Nukral"), both used (literal bias; repetition too).

Every document has 9-12 sentences (the sweep needs more than 8), at least three of them neutral. A tail is
mentioned only in its evidence sentence, and no name occurs as text in a sentence that does not mention it. Every
invented word is used once in a world, so no (head name, relation) or (head name, tail name) pair, name variants
included, is stated by two documents, and the duplicate filter (§1.2 step 4) keeps every fact.
"""

from __future__ import annotations

import json
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Callable

from posbias.data.vocabulary import filler_sentence, mention_sentence, random_name, random_value, template_words
from posbias.errors import InputError
from posbias.io import atomic_write


@dataclass(frozen=True)
class _Relation:
    pid: str
    head_type: str  # PER, LOC (a country) or ORG
    tail_kind: str  # how the tail is named, a key of _TAIL_TYPES
    predicates: tuple[str, ...]  # what follows the head's name in an evidence sentence; {t} is the tail


# Relations with a query template in spec Appendix A; none of the many-to-many P150/P710, which the query table
# discards.
_RELATIONS = (
    _Relation("P19", "PER", "town", ("was born in {t}", "was born in the town of {t}")),
    _Relation("P26", "PER", "person", ("married {t}", "was married to {t}")),
    _Relation("P27", "PER", "country", ("was a citizen of {t}", "held the citizenship of {t}")),
    _Relation("P69", "PER", "school", ("studied at {t}", "was educated at {t}")),
    _Relation("P36", "LOC", "town", ("has its capital at {t}", "is governed from its capital {t}")),
    _Relation("P37", "LOC", "language", ("has {t} as its official language", "uses {t} as its official language")),
    _Relation("P17", "ORG", "country", ("is based in the country of {t}", "operates mainly in {t}")),
    _Relation("P112", "ORG", "person", ("was founded by {t}", "was set up by {t}")),
    _Relation("P159", "ORG", "town", ("has its headquarters in {t}", "keeps its head office in {t}")),
    _Relation("P571", "ORG", "year", ("was established in {t}", "opened for business in {t}")),
)
RELATION_IDS: tuple[str, ...] = tuple(relation.pid for relation in _RELATIONS)

_TAIL_TYPES = {"person": "PER", "town": "LOC", "country": "LOC", "school": "ORG", "language": "MISC", "year": "TIME"}

# Shares in percent: a world of n documents has n * share // 100 documents of each shape, and the few left over
# go to the shapes with the largest remainders.
SHAPE_SHARES: dict[str, int] = {"single": 40, "repeated": 35, "variants": 25}

_HEAD_TYPES = ("PER", "PER", "ORG", "LOC")  # drawn uniformly: half the main entities are people
_ORG_SUFFIXES = ("Works", "Company", "Mills", "Foundation", "Press")

# Sentences about the head that state no fact; {h} is the head. Places use the vocabulary's mention sentences.
_HEAD_ONLY = {
    "PER": ("{h} spent several years abroad before returning home",
            "Friends remember {h} as a patient and generous person",
            "{h} gave many public lectures during a long career",
            "Later in life , {h} wrote a short memoir",
            "A portrait of {h} hangs in the town hall",
            "{h} was fond of music and long walks"),
    "ORG": ("{h} employs several hundred people",
            "{h} expanded steadily over the following decades",
            "Analysts describe {h} as a cautious but reliable business",
            "In its early years , {h} struggled to find customers",
            "{h} publishes a short report every year",
            "The annual meeting of {h} draws a large crowd"),
}

_HEAD, _TAIL = "{h}", "{t}"
_MAX_DRAWS = 10_000


class _NameBook:
    """Invented words, each handed out once per world, none of them a word of the templates."""

    def __init__(self, rng: random.Random):
        self.rng = rng
        own_words = [*(r.predicates for r in _RELATIONS), *_HEAD_ONLY.values(), _ORG_SUFFIXES, ("republic", "academy")]
        self.used = template_words() | {word.lower() for texts in own_words for text in texts for word in text.split()}

    def fresh(self, draw: Callable[[], str]) -> str:
        """A name from `draw` (lowercase words) whose last word is new to the world, capitalised."""
        for _ in range(_MAX_DRAWS):
            words = draw().split()
            if words[-1] not in self.used:
                self.used.add(words[-1])
                return " ".join(word.capitalize() for word in words)
        raise InputError("n_documents: the world has run out of fresh invented names; ask for fewer documents")

    def word(self) -> str:
        return self.fresh(lambda: random_name(self.rng))

    def person(self) -> str:
        return self.fresh(lambda: random_value("person", self.rng))

    def tail(self, kind: str) -> str:
        if kind == "person":
            return self.person()
        if kind in ("town", "country"):
            return self.word()
        if kind == "school":
            return f"{self.word()} Academy"
        if kind == "language":
            return self.fresh(lambda: random_value("language", self.rng))
        if kind == "year":  # years may repeat across documents: only the head names must be unique
            return str(self.rng.randint(1750, 1990))
        raise ValueError(f"unknown tail kind {kind!r}")


@dataclass(frozen=True)
class _Entity:
    type: str
    names: tuple[str, ...]  # the longest first


@dataclass(frozen=True)
class _SentencePlan:
    text: str  # words; slots like {h} or {t0} stand for entity names
    slots: dict[str, tuple[int, str]]  # slot -> (entity number, the name written there)
    states: tuple[int, ...] = ()  # the facts this sentence is the evidence of


def synthetic_redocred(seed: int, n_documents: int) -> list[dict]:
    """`n_documents` Re-DocRED documents (the released JSON layout), the same ones for the same seed."""
    if n_documents < 1:
        raise InputError(f"synthetic_redocred: n_documents must be at least 1, not {n_documents}")
    rng = random.Random(seed)
    names = _NameBook(rng)
    return [_document(shape, rng, names) for shape in _shape_plan(n_documents, rng)]


def write_synthetic_redocred(path: str | Path, seed: int, n_documents: int) -> None:
    """Write `synthetic_redocred(seed, n_documents)` to `path` as one JSON list, atomically."""
    documents = synthetic_redocred(seed, n_documents)
    with atomic_write(path) as out:
        json.dump(documents, out, ensure_ascii=False)
        out.write("\n")


def _shape_plan(n_documents: int, rng: random.Random) -> list[str]:
    counts = {shape: n_documents * share // 100 for shape, share in SHAPE_SHARES.items()}
    by_remainder = sorted(SHAPE_SHARES, key=lambda shape: n_documents * SHAPE_SHARES[shape] % 100, reverse=True)
    for shape in by_remainder[: n_documents - sum(counts.values())]:
        counts[shape] += 1
    plan = [shape for shape, count in counts.items() for _ in range(count)]
    rng.shuffle(plan)
    return plan


def _document(shape: str, rng: random.Random, names: _NameBook) -> dict:
    # A name that also shows up as text in another sentence (one invented word inside another) would put the
    # tail where the probes assume it is absent; such rare drafts are drawn again.
    for _ in range(_MAX_DRAWS):
        document = _draft(shape, rng, names)
        if _names_stay_in_their_sentences(document):
            return document
    raise RuntimeError(f"no clean {shape} document in {_MAX_DRAWS} drafts")


def _draft(shape: str, rng: random.Random, names: _NameBook) -> dict:
    head_type = rng.choice(_HEAD_TYPES)
    head = _Entity(head_type, _head_names(head_type, shape == "variants", rng, names))
    candidates = [relation for relation in _RELATIONS if relation.head_type == head_type]
    relations = rng.sample(candidates, rng.randint(2, min(3, len(candidates))))
    entities = [head] + [_Entity(_TAIL_TYPES[r.tail_kind], (names.tail(r.tail_kind),)) for r in relations]
    predicates = [rng.choice(r.predicates).replace(_TAIL, f"{{t{i}}}") for i, r in enumerate(relations)]
    tail_slots = {f"{{t{i}}}": (i + 1, entities[i + 1].names[0]) for i in range(len(relations))}
    n_sentences = rng.randint(9, 12)
    long_name, short_name = head.names[0], head.names[-1]

    if shape == "single":
        facts = _conjunction(predicates)
        every_fact = tuple(range(len(relations)))
        evidence = _SentencePlan(f"{_HEAD} {facts}", {_HEAD: (0, long_name), **tail_slots}, every_fact)
        plans = _fillers(n_sentences - 1, rng)
        plans.insert(rng.randrange(n_sentences), evidence)
    else:
        head_only = _head_only_texts(head_type, rng.randint(2, 3), rng)
        # The opening sentence uses the full name; with variants the next one uses the short name, so both occur.
        n_mentions = len(head_only) + len(relations)
        mention_names = [long_name, short_name, *(rng.choice(head.names) for _ in range(n_mentions - 2))]
        opening, *more = [_SentencePlan(text, {_HEAD: (0, name)}) for text, name in zip(head_only, mention_names)]
        evidence_names = mention_names[len(head_only):]
        evidences = [_SentencePlan(f"{_HEAD} {predicate}", {_HEAD: (0, name), slot: tail_slots[slot]}, (i,))
                     for i, (predicate, name, slot) in enumerate(zip(predicates, evidence_names, tail_slots))]
        rest = more + evidences + _fillers(n_sentences - 1 - len(more) - len(evidences), rng)
        rng.shuffle(rest)
        plans = [opening, *rest]
    return _assemble(long_name, entities, [r.pid for r in relations], plans, rng)


def _head_names(head_type: str, variants: bool, rng: random.Random, names: _NameBook) -> tuple[str, ...]:
    """The head's names, longest first: one, or a long and a short variant of it."""
    if head_type == "PER":
        full = names.person()
        return (full, full.split()[-1]) if variants else (full,)
    core = names.word()
    if head_type == "ORG":
        full = f"{core} {rng.choice(_ORG_SUFFIXES)}"
        return (full, core) if variants else (full,)
    return (f"Republic of {core}", core) if variants else (core,)


def _conjunction(phrases: list[str]) -> str:
    return phrases[0] if len(phrases) == 1 else " , ".join(phrases[:-1]) + " and " + phrases[-1]


def _head_only_texts(head_type: str, count: int, rng: random.Random) -> list[str]:
    if head_type in _HEAD_ONLY:
        return rng.sample(_HEAD_ONLY[head_type], count)
    texts: list[str] = []
    while len(texts) < count:
        text = mention_sentence(_HEAD, rng)  # the slot stands in for the place's name
        if text not in texts:
            texts.append(text)
    return texts


def _fillers(count: int, rng: random.Random) -> list[_SentencePlan]:
    # Distinct within a document: the authors' text surgery (str.replace) would delete every copy of a sentence.
    texts: list[str] = []
    while len(texts) < count:
        text = filler_sentence(rng)
        if text not in texts:
            texts.append(text)
    return [_SentencePlan(text, {}) for text in texts]


def _render(plan: _SentencePlan) -> tuple[list[str], list[tuple[int, str, int, int]]]:
    """The sentence's tokens (final period split off, first letter upper case) and its mentions as
    (entity number, name, start, end)."""
    tokens: list[str] = []
    mentions: list[tuple[int, str, int, int]] = []
    for word in plan.text.removesuffix(".").split():
        if word in plan.slots:
            entity, name = plan.slots[word]
            start = len(tokens)
            tokens.extend(name.split())
            mentions.append((entity, name, start, len(tokens)))
        elif "{" in word:
            raise ValueError(f"slot {word!r} of {plan.text!r} has no entity")
        else:
            tokens.append(word)
    tokens[0] = tokens[0][:1].upper() + tokens[0][1:]
    return tokens + ["."], mentions


def _assemble(title: str, entities: list[_Entity], pids: list[str], plans: list[_SentencePlan],
              rng: random.Random) -> dict:
    sents: list[list[str]] = []
    mentions_of: dict[int, list[dict]] = {}  # entity number -> its mentions, in order of first appearance
    evidence_of: dict[int, int] = {}  # fact -> sentence
    offset = 0
    for sent_id, plan in enumerate(plans):
        tokens, mentions = _render(plan)
        for entity, name, start, end in mentions:
            mentions_of.setdefault(entity, []).append(
                {"name": name, "pos": [start, end], "sent_id": sent_id, "type": entities[entity].type,
                 "global_pos": [offset + start, offset + start]})
        for fact in plan.states:
            evidence_of[fact] = sent_id
        sents.append(tokens)
        offset += len(tokens)
    index_of = {entity: index for index, entity in enumerate(mentions_of)}
    vertex_set = []
    for entity, mentions in mentions_of.items():
        rng.shuffle(mentions)
        for number, mention in enumerate(mentions):
            mention["index"] = f"{index_of[entity]}_{number}"
        vertex_set.append(mentions)
    labels = [{"r": pid, "h": index_of[0], "t": index_of[fact + 1], "evidence": [evidence_of[fact]]}
              for fact, pid in enumerate(pids)]
    return {"title": title, "sents": sents, "vertexSet": vertex_set, "labels": labels}


def _names_stay_in_their_sentences(document: dict) -> bool:
    """Whether every name of every entity occurs as text only in sentences that mention that entity."""
    texts = [" ".join(tokens) for tokens in document["sents"]]
    for mentions in document["vertexSet"]:
        mentioned_in = {mention["sent_id"] for mention in mentions}
        for name in dict.fromkeys(mention["name"] for mention in mentions):
            if any(name in text for sent_id, text in enumerate(texts) if sent_id not in mentioned_in):
                return False
    return True
