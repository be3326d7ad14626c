"""The sweep collection: per source query, one fixed-length document with its relevant passage at N positions.

Per query (the first `n_queries` of the source query set, in its file order):

1. its FarRelevant document without the relevant passage, as sentence units (`units`);
2. topped up, when shorter than `doc_tokens` with the passage, by non-relevant pool passages appended at the
   end (rejection sampling: draws that would overflow are skipped), from a generator seeded by `seed` and the
   query id, so a query's document does not depend on which other queries are swept;
3. the relevant passage placed at each of `n_positions` slots (`placement`): the same words, the same length,
   only the passage's place differs;
4. the query `<qid>@p<i>` (the same text) judges the variant `<docid>@p<i>` relevant, and its candidates are
   the source query's with the relevant document replaced by that variant (`candidates`).
"""

from __future__ import annotations

import random
from dataclasses import dataclass
from typing import Callable, Mapping, Sequence

from posbias.errors import InputError
from posbias.sweep.candidates import substitute, was_retrieved
from posbias.data.placement import Variant, place, spread_slots
from posbias.sweep.units import split_document

MAX_DRAWS = 1000  # pool draws per query while topping up


@dataclass(frozen=True)
class SweepSettings:
    n_queries: int
    n_positions: int
    doc_tokens: int
    seed: int

    @classmethod
    def from_config(cls, section: Mapping) -> "SweepSettings":
        return cls(int(section["n_queries"]), int(section["n_positions"]), int(section["doc_tokens"]),
                   int(section["seed"]))


def sweep_id(base: str, position: int) -> str:
    """The id of a sweep query or document: `far0003@p2`."""
    return f"{base}@p{position}"


@dataclass(frozen=True)
class SweptQuery:
    base: str
    relevant_doc: str
    variants: tuple[Variant, ...]
    candidates: dict[str, float]  # the source query's, with the relevant document still in (or not)
    retrieved: bool  # whether the first stage found the relevant document
    topped_up: int  # tokens of pool passages appended

    def variant_candidates(self, variant: Variant) -> dict[str, float]:
        return substitute(self.candidates, self.relevant_doc, sweep_id(self.relevant_doc, variant.position))


def top_up(units: list[str], passage: str, pool: Sequence[str], length: Callable[[str], int], target: int,
           rng: random.Random) -> tuple[list[str], int]:
    """`units` with pool passages (their sentences) appended while the document stays within `target` tokens;
    returns the units and the tokens added."""
    current = length(" ".join([*units, passage]))
    added = 0
    for _ in range(MAX_DRAWS):
        room = target - current
        if room <= 0 or not pool:
            break
        extra = rng.choice(pool)
        n = length(extra)
        if n <= room:  # an overflowing draw is skipped, not cut: units stay whole sentences
            units = [*units, extra]
            current, added = current + n, added + n
    return units, added


def sweep_query(base: str, document: str, relevant_doc: str, passage: str, start: int | None,
                candidates: Mapping[str, float], pool: Sequence[str], length: Callable[[str], int],
                settings: SweepSettings) -> SweptQuery:
    """One source query's variants (see the module docstring)."""
    units = split_document(document, passage, start, length, f"query {base}, document {relevant_doc}")
    rng = random.Random(f"{settings.seed}:{base}")  # a str seed is hashed with SHA-512: stable across runs
    units, added = top_up(units, passage, pool, length, settings.doc_tokens, rng)
    try:
        slots = spread_slots([length(u) for u in units], settings.n_positions)
    except ValueError as err:
        raise InputError(f"query {base}: {err}; raise sweep.doc_tokens or lower sweep.n_positions") from None
    return SweptQuery(base, relevant_doc, tuple(place(units, passage, slots, length)), dict(candidates),
                      was_retrieved(candidates, relevant_doc), added)


def relevant_document(judged: Mapping[str, int], qid: str, where: str) -> str:
    """The one relevant document of a FarRelevant query."""
    relevant = sorted(doc for doc, grade in judged.items() if grade > 0)
    if len(relevant) != 1:
        raise InputError(f"{where}: query {qid} has {len(relevant)} relevant documents; a sweep moves the one "
                         f"relevant passage of a FarRelevant document")
    return relevant[0]
