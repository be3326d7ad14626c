"""Literal bias (spec §2.4): the same fact asked and stated with the head's long or short name.

Names: long = the head's longest name (the one the query uses); short = its shortest other name
(`queries.shortest_other_name`, ties broken deterministically). Queries: Q_long is the query as built;
Q_short is the query with the long name replaced by the short one (`str.replace`, as the study does; the
templates name the head once). Documents: the whole original document with every head mention, whatever its
name, rewritten as the chosen name; D_long and D_short therefore differ only at head mentions and both hold
the answer.

A condition is (query name, document name): LL, LS, SL, SS. The study compares M(Q1, D1) with M(Q2, D2) for
the five rows of Table 3 / A.7 (`COMPARISONS`), so the two sides of a pair may have different queries:
`LiteralPair` carries a query per side. Positive t means the first side scored higher. The radar's axis is
SS-SL, the one comparison with the query held fixed (short). Candidates: a head with more than one name and a
single evidence sentence, the first query of each document, then the sample (the study: seed 1).
"""

from __future__ import annotations

import logging
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass

from posbias.probes.declarations.literal import LITERAL
from posbias.docred.pairs import answer_named_in_evidence, join, single_evidence
from posbias.docred.queries import ProbeQuery, shortest_other_name
from posbias.docred.documents import Mention
from posbias.docred.sampling import first_per_group, sample

RADAR_CONDITION = "SS-SL"
# (first side, second side) as (query name, document name) codes, in Table 3 / A.7's order.
COMPARISONS = ("LL-LS", "LL-SL", "LL-SS", "SS-LS", "SS-SL")

logger = logging.getLogger(__name__)


@dataclass(frozen=True)
class LiteralPair:
    """One comparison M(query_1, document_1) vs M(query_2, document_2); `condition` names it, e.g. "LL-LS"."""

    probe: str
    qid: str
    condition: str
    query_1: str
    document_1: str
    query_2: str
    document_2: str

    @property
    def query(self) -> str:
        """The first side's query, where a consumer expects one query per pair (as in `ProbePair`)."""
        return self.query_1

    def to_dict(self) -> dict:
        return {"probe": self.probe, "qid": self.qid, "condition": self.condition,
                "query_1": self.query_1, "document_1": self.document_1,
                "query_2": self.query_2, "document_2": self.document_2}


def literal_candidates(queries: Sequence[ProbeQuery]) -> list[ProbeQuery]:
    """Heads with more than one name and a fact stated in one sentence that spells the answer (both documents
    must hold it; a demonym, 'American planter' for the United States, does not); the first such query per title."""
    rows = [q for q in queries if len(q.head_names) > 1 and single_evidence(q) and answer_named_in_evidence(q)]
    return first_per_group(rows, lambda q: q.document.title)


def long_and_short_names(query: ProbeQuery) -> tuple[str, str]:
    """(long, short): the query's head name and the head's shortest other name."""
    short = shortest_other_name(query.head, query.head_longest)
    if short is None:
        raise ValueError(f"{query.qid}: the head has one name only, so there is no short name")
    return query.head_longest, short


def short_query(query: ProbeQuery, short: str) -> str:
    """Q_short: the query with its long head name replaced by `short` (the study's `query.replace(long, short)`)."""
    return query.query.replace(query.head_longest, short)


def renamed_sentences(query: ProbeQuery, name: str) -> list[tuple[str, ...]]:
    """The document's sentences (as tokens) with every head mention's span replaced by the tokens of `name`.

    Spans are replaced from the right within a sentence, so the offsets of the ones still to come stay valid.
    The name is split on single spaces, so joining the tokens writes it back exactly. A span that does not
    spell its mention's name is logged as a warning and replaced all the same, as in the study. Repeated
    identical spans are replaced once; a span overlapping one already replaced is logged and left alone.
    """
    sentences = [list(tokens) for tokens in query.document.sents]
    replacement = name.split(" ")
    for sent_id, mentions in _mentions_by_sentence(query.head).items():
        tokens = sentences[sent_id]
        replaced_from = len(tokens) + 1  # start of the leftmost span replaced so far
        for start, end in sorted({mention.pos for mention in mentions}, key=lambda span: span[0], reverse=True):
            if end > replaced_from or not 0 <= start < end <= len(tokens):
                logger.warning("%s: head span %s in sentence %d overlaps another or lies outside the sentence; "
                               "left as it is", query.qid, (start, end), sent_id)
                continue
            spelled = " ".join(tokens[start:end])
            names = {mention.name for mention in mentions if mention.pos == (start, end)}
            if spelled not in names:
                logger.warning("%s: head span %s in sentence %d reads %r, not %s; replaced anyway", query.qid,
                               (start, end), sent_id, spelled, " or ".join(repr(n) for n in sorted(names)))
            tokens[start:end] = replacement
            replaced_from = start
    return [tuple(tokens) for tokens in sentences]


def renamed_document(query: ProbeQuery, name: str) -> str:
    """The whole document with every head mention written as `name`, sentences joined by single spaces."""
    return join([" ".join(tokens) for tokens in renamed_sentences(query, name)])


def _mentions_by_sentence(mentions: Iterable[Mention]) -> dict[int, list[Mention]]:
    by_sentence: dict[int, list[Mention]] = {}
    for mention in mentions:
        by_sentence.setdefault(mention.sent_id, []).append(mention)
    return by_sentence


def literal_pairs(query: ProbeQuery) -> list[LiteralPair]:
    """The five comparisons of `COMPARISONS` for one query."""
    long, short = long_and_short_names(query)
    queries = {"L": query.query, "S": short_query(query, short)}
    documents = {"L": renamed_document(query, long), "S": renamed_document(query, short)}
    pairs = []
    for condition in COMPARISONS:
        (q1, d1), (q2, d2) = condition.split("-")
        pairs.append(LiteralPair(LITERAL, query.qid, condition, queries[q1], documents[d1], queries[q2],
                                 documents[d2]))
    return pairs


def literal(queries: Sequence[ProbeQuery], n: int, seed: int) -> list[LiteralPair]:
    """All five comparisons for each of `n` sampled candidates (the study: seed 1), query by query."""
    return [pair for query in sample(literal_candidates(queries), n, seed, "probes.n") for pair in literal_pairs(query)]

# --- the probe as the stage builds it (`posbias.probes.declaration`: the `probes` section's settings) -----------

def probe_candidates(queries: Sequence[ProbeQuery], section: Mapping) -> list[ProbeQuery]:
    return literal_candidates(queries)


def probe_pairs(queries: Sequence[ProbeQuery], section: Mapping, n: int, seed: int) -> list[LiteralPair]:
    return literal(queries, n, seed)
