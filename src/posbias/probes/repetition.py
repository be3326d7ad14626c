"""Repetition bias (spec §2.6): the evidence followed by two more head sentences, against the evidence followed by two
sentences that mention neither head nor tail.

D1 = S_ev + S^{+h}_{-t} + S^{+h}_{-t}; D2 = S_ev + S^{-h}_{-t} + S^{-h}_{-t}. Both hold the answer once and are three
sentences long, so positive t means the document that repeats the head scored higher (the bias). Candidates: one
evidence sentence with one head mention in it, no other label between the same head and tail, enough sentences of
each kind (below), then the first query of each document, then the seeded sample.

Variants (config key `probes.variants.repetition`):
- `paper` (default): S_ev, then the first two distinct sentences (document order) that mention the head and not the
  tail, or neither; a query needs two distinct sentences of each kind. The evidence sentence is never one of the
  added sentences, even where the annotation has no tail mention in it.
- `authors`: the study's code (spec §6.1 item 3). Its first sentence is the first sentence that mentions the tail,
  which need not be S_ev, and its head sentences come from a mention-level list of sentence ids, so a sentence with
  two head mentions can be added twice. Its conditions are `len(...) >= 2` on those lists.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from posbias.errors import InputError
from posbias.probes.declaration import variant_of
from posbias.probes.declarations.repetition import REPETITION
from posbias.docred.pairs import (ProbePair, answer_named_in_evidence, evidence_sentence_id, join, not_repeated_label,
                                  single_evidence)
from posbias.docred.queries import ProbeQuery
from posbias.docred.sampling import first_per_group, sample

VARIANTS = ("paper", "authors")
VARIANT_KEY = "probes.variants.repetition"


@dataclass(frozen=True)
class RepetitionSentences:
    """Sentence ids of one pair: the shared first sentence, then the two added to D1 and the two added to D2."""

    lead: int
    with_head: tuple[int, int]
    neutral: tuple[int, int]


def check_variant(variant: str) -> None:
    if variant not in VARIANTS:
        raise InputError(f"{VARIANT_KEY}: unknown variant {variant!r}; expected one of {', '.join(VARIANTS)}")


def repetition_sentences(query: ProbeQuery, variant: str = "paper") -> RepetitionSentences | None:
    """The sentences the variant builds the pair of `query` from, or None if the document has too few of a kind.
    Does not apply the shared candidate conditions (see `repetition_candidates`)."""
    check_variant(variant)
    if variant == "authors":
        return _authors_sentences(query)
    return _paper_sentences(query)


def _paper_sentences(query: ProbeQuery) -> RepetitionSentences | None:
    evidence = evidence_sentence_id(query)
    head_sentences = {mention.sent_id for mention in query.head}
    tail_sentences = {mention.sent_id for mention in query.tail}
    with_head = [i for i in sorted(head_sentences - tail_sentences) if i != evidence]
    neutral = [i for i in range(len(query.document.sents))
               if i not in head_sentences and i not in tail_sentences and i != evidence]
    if len(with_head) < 2 or len(neutral) < 2:
        return None
    return RepetitionSentences(evidence, (with_head[0], with_head[1]), (neutral[0], neutral[1]))


def _authors_sentences(query: ProbeQuery) -> RepetitionSentences | None:
    # mention-level lists, duplicates kept, as in the study's code
    head_sent_ids = sorted(mention.sent_id for mention in query.head)
    tail_sent_ids = sorted(mention.sent_id for mention in query.tail)
    with_head = [i for i in head_sent_ids if i not in tail_sent_ids]
    neutral = [i for i in range(len(query.document.sents)) if i not in head_sent_ids and i not in tail_sent_ids]
    if len(with_head) < 2 or len(neutral) < 2 or not tail_sent_ids:
        return None
    return RepetitionSentences(tail_sent_ids[0], (with_head[0], with_head[1]), (neutral[0], neutral[1]))


def repetition_candidates(queries: list[ProbeQuery], variant: str = "paper") -> list[ProbeQuery]:
    """Queries that pass §2.6's filter under `variant`, the first of each document, in row order; under the
    paper's text the evidence also spells the answer (not only a demonym: 'Swedish' for Sweden)."""
    check_variant(variant)
    rows = [q for q in queries
            if single_evidence(q) and len(q.head_in_evidence) == 1 and not_repeated_label(q)
            and (variant == "authors" or answer_named_in_evidence(q))
            and repetition_sentences(q, variant) is not None]
    return first_per_group(rows, lambda q: q.document.title)


def repetition(queries: list[ProbeQuery], n: int, seed: int, variant: str = "paper") -> list[ProbePair]:
    """`n` seeded pairs: document_1 repeats the head, document_2 adds neutral sentences."""
    pairs = []
    for query in sample(repetition_candidates(queries, variant), n, seed, "probes.n"):
        chosen = repetition_sentences(query, variant)
        assert chosen is not None  # every candidate has its sentences
        sentence = query.document.sentence
        lead = sentence(chosen.lead)
        pairs.append(ProbePair(REPETITION, query.qid, query.query,
                               join([lead, *(sentence(i) for i in chosen.with_head)]),
                               join([lead, *(sentence(i) for i in chosen.neutral)])))
    return pairs

# --- the probe as the stage builds it (`posbias.probes.declaration`: the `probes` section's settings) -----------

def probe_candidates(queries: list[ProbeQuery], section: Mapping) -> list[ProbeQuery]:
    return repetition_candidates(queries, variant_of(section, "repetition", "paper"))


def probe_pairs(queries: list[ProbeQuery], section: Mapping, n: int, seed: int) -> list[ProbePair]:
    return repetition(queries, n, seed, variant=variant_of(section, "repetition", "paper"))
