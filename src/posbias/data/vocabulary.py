"""The small world the synthetic collection talks about: relations, their
question and answer templates, and random names.

A query asks for one relation of one entity ("what is the capital of zorvia").
The answering passage states it either literally, with the query's own words,
or as a paraphrase that shares only the entity name with the query, so that a
lexical retriever cannot tell it from passages that mention the entity or the
relation without answering.
"""

from __future__ import annotations

import random
from dataclasses import dataclass


@dataclass(frozen=True)
class Relation:
    name: str
    questions: tuple[str, ...]
    literal: tuple[str, ...]  # answers that reuse the question's words
    paraphrase: tuple[str, ...]  # answers that share only the entity with the question
    partial: tuple[str, ...]  # on topic, about the entity, but without the answer
    values: str  # which value generator fills {v}


RELATIONS = (
    Relation(
        "capital",
        ("what is the capital of {e}", "capital city of {e}"),
        ("the capital of {e} is {v}", "the capital city of {e} is called {v}"),
        ("the government of {e} sits in the city of {v}", "{v} serves as the seat of power for {e}"),
        ("the capital of {e} is a busy place", "{e} moved its capital more than once"),
        "place",
    ),
    Relation(
        "founder",
        ("who founded {e}", "founder of {e}"),
        ("{e} was founded by {v}", "the founder of {e} was {v}"),
        ("{v} established {e} many generations ago", "the first settlement of {e} was built by {v}"),
        ("historians still argue about who founded {e}", "the founder of {e} is honoured every spring"),
        "person",
    ),
    Relation(
        "population",
        ("what is the population of {e}", "how many people live in {e}"),
        ("the population of {e} is {v}", "{e} has a population of {v}"),
        ("roughly {v} residents call {e} home", "a census counted {v} inhabitants across {e}"),
        ("the population of {e} keeps growing", "{e} has a young population"),
        "number",
    ),
    Relation(
        "currency",
        ("what currency is used in {e}", "currency of {e}"),
        ("the currency of {e} is the {v}", "{e} uses the {v} as its currency"),
        ("shops in {e} take payment in {v} coins", "prices in {e} are quoted in {v}"),
        ("the currency of {e} lost value last year", "{e} printed new currency notes"),
        "coin",
    ),
    Relation(
        "language",
        ("what language is spoken in {e}", "official language of {e}"),
        ("the official language of {e} is {v}", "people in {e} speak {v}"),
        ("most families in {e} talk to each other in {v}", "schools in {e} teach every lesson in {v}"),
        ("{e} has strict rules about its official language", "the language spoken in {e} has many dialects"),
        "language",
    ),
    Relation(
        "river",
        ("which river flows through {e}", "main river of {e}"),
        ("the main river of {e} is the {v}", "the {v} river flows through {e}"),
        ("the {v} carries boats across {e} from north to south", "farms in {e} draw water from the {v}"),
        ("the main river of {e} floods in spring", "a river divides {e} into two halves"),
        "place",
    ),
    Relation(
        "mountain",
        ("what is the highest mountain in {e}", "tallest mountain of {e}"),
        ("the highest mountain in {e} is mount {v}", "mount {v} is the tallest mountain of {e}"),
        ("no peak in {e} rises above mount {v}", "climbers in {e} aim for the summit of {v}"),
        ("the highest mountain in {e} is covered in snow", "{e} has many tall mountains"),
        "place",
    ),
    Relation(
        "export",
        ("what does {e} export", "main export of {e}"),
        ("the main export of {e} is {v}", "{e} exports mostly {v}"),
        ("merchants ship {v} out of {e} more than anything else", "the traders of {e} grow rich selling {v}"),
        ("the exports of {e} rose sharply", "{e} depends on a single export"),
        "goods",
    ),
)

# "What is X" questions: BM25 sees only the entity name, so documents that
# mention the entity often outrank the one that defines it.
DEFINITION = Relation(
    "definition",
    ("what is {e}", "define {e}", "{e} meaning"),
    ("{e} is a {v}", "{e} is known as a {v}"),
    ("the name {e} refers to a {v}", "{e} , a {v} , was first described long ago"),
    ("many people wonder what {e} is", "{e} is hard to define"),
    "kind",
)

RELATION_BY_NAME = {relation.name: relation for relation in (*RELATIONS, DEFINITION)}

_ONSETS = ("b", "d", "f", "g", "k", "l", "m", "n", "p", "r", "s", "t", "v", "z", "br", "dr", "kr", "st", "th", "tr")
_VOWELS = ("a", "e", "i", "o", "u", "ia", "ei", "ou")
_CODAS = ("", "", "n", "r", "l", "s", "th", "nd")
_FIRST_NAMES = ("anna", "boris", "clara", "david", "elena", "felix", "greta", "hugo", "ines", "jonas",
                "karin", "leon", "maria", "nils", "olga", "paul", "rosa", "simon", "tara", "viktor")
_NUMBER_WORDS = ("two", "three", "four", "five", "six", "seven", "eight", "nine", "twelve", "fifteen",
                 "twenty", "thirty", "forty", "fifty", "sixty", "eighty")
_SCALES = ("thousand", "hundred thousand", "million")
_KINDS = ("island nation", "mountain kingdom", "river city", "desert republic", "coastal town", "forest province",
          "trading port", "lake district", "border county", "valley settlement")
_GOODS = ("copper", "wool", "timber", "salt", "coffee", "rice", "silver", "cotton", "tea", "fish",
          "glass", "olive oil", "marble", "leather", "spices", "wheat", "tin", "silk", "honey", "cork")

# Filler sentences: on no entity and no relation, built from parts for variety.
_FILLER_SUBJECTS = ("the old market", "a small bakery", "the morning train", "the city library", "a quiet park",
                    "the local school", "the harbour", "a new bridge", "the football club", "the night bus",
                    "a family restaurant", "the museum", "the village choir", "a narrow street", "the weekly paper")
_FILLER_VERBS = ("opens early on", "is crowded on", "was repaired during", "closes late on", "hosts visitors on",
                 "gets busy on", "was painted during", "stays quiet on", "offers discounts on", "was rebuilt during")
_FILLER_TIMES = ("most weekdays", "rainy afternoons", "the summer holidays", "public holidays", "sunday mornings",
                 "winter evenings", "the spring festival", "market days", "the long weekend", "autumn nights")
_FILLER_TAILS = ("and many people enjoy it", "according to a recent survey", "much to the delight of children",
                 "as it has done for decades", "although few tourists notice", "which surprised the neighbours",
                 "and the staff are friendly", "so it is wise to plan ahead")
_MENTION_TEMPLATES = ("{e} is known for its {adj} {noun}", "travellers to {e} often remark on the {adj} {noun}",
                      "a documentary about {e} showed its {adj} {noun}", "the {adj} {noun} of {e} attract many visitors")
_ADJECTIVES = ("green", "ancient", "colourful", "quiet", "crowded", "famous", "rocky", "sunny", "windy", "modern")
_NOUNS = ("valleys", "markets", "festivals", "beaches", "castles", "gardens", "villages", "bridges", "forests", "harbours")


def random_name(rng: random.Random, syllables: tuple[int, int] = (2, 3)) -> str:
    parts = [rng.choice(_ONSETS) + rng.choice(_VOWELS) for _ in range(rng.randint(*syllables))]
    return "".join(parts) + rng.choice(_CODAS)


def random_value(kind: str, rng: random.Random) -> str:
    if kind == "place":
        return random_name(rng)
    if kind == "person":
        return f"{rng.choice(_FIRST_NAMES)} {random_name(rng, (2, 2))}"
    if kind == "number":
        return f"{rng.choice(_NUMBER_WORDS)} {rng.choice(_SCALES)}"
    if kind == "coin":
        return random_name(rng, (1, 2))
    if kind == "language":
        return random_name(rng, (2, 2)) + "ish"
    if kind == "goods":
        return rng.choice(_GOODS)
    if kind == "kind":
        return f"{rng.choice(_ADJECTIVES)} {rng.choice(_KINDS)}"
    raise ValueError(f"unknown value kind {kind!r}")


def filler_sentence(rng: random.Random) -> str:
    return " ".join((rng.choice(_FILLER_SUBJECTS), rng.choice(_FILLER_VERBS),
                     rng.choice(_FILLER_TIMES), rng.choice(_FILLER_TAILS))) + "."


def mention_sentence(entity: str, rng: random.Random) -> str:
    return rng.choice(_MENTION_TEMPLATES).format(e=entity, adj=rng.choice(_ADJECTIVES), noun=rng.choice(_NOUNS)) + "."


def template_words() -> set[str]:
    """Every word the templates use: entity names must not collide with them."""
    texts = [t for r in RELATION_BY_NAME.values() for group in (r.questions, r.literal, r.paraphrase, r.partial)
             for t in group]
    texts += [*_KINDS, *_FIRST_NAMES, *_NUMBER_WORDS, *_SCALES, *_GOODS, *_FILLER_SUBJECTS, *_FILLER_VERBS, *_FILLER_TIMES,
              *_FILLER_TAILS, *_MENTION_TEMPLATES, *_ADJECTIVES, *_NOUNS]
    return {word.strip(".{}") for text in texts for word in text.split()}


def vocabulary_entity_words(tokenizer, min_len: int = 5, max_len: int = 9) -> list[str]:
    """Whole lowercase words of a WordPiece vocabulary that are one token each, minus template words."""
    reserved = template_words()
    return sorted(w for w in tokenizer.get_vocab() if w.isascii() and w.isalpha() and w.islower()
                  and min_len <= len(w) <= max_len and w not in reserved)
