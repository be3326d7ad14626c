"""Answer importance (spec §2.1): one document opened by the fact sentence or by a head sentence without the answer.

D1 = S_ev + rest; D2 = S^{+h}_{-t} + rest, where S_ev is the evidence sentence (head and tail), S^{+h}_{-t} a
sentence of the same document that mentions the head but not the tail, and the rest is shared by both. document_1
is the answer-bearing document, so positive t means the retriever recognised the answer (good, unlike the bias
probes). Candidates (the study's steps):
1. one evidence sentence holding one head mention; the head mentioned at least twice; head and tail with one name
   each (`not_repeated_label` is not applied, as in the study);
2. S^{+h}_{-t} exists (`head_sentence_without_tail`);
3. the rest = the sentences without a "similar label" (`has_similar_label_to_tail`), in document order, minus
   S_ev and S^{+h}_{-t};
4. the tail's name occurs nowhere in those sentences (a no-op after step 3, kept as the study's check);
5. the last 3 queries of each document; 6. the seeded sample.
Documents are built from sentence lists by sentence id, not by string replacement on joined text (spec bug 9).
The rest may still mention the head (spec bug 4): `neutral="strict"` drops such sentences from it.
"""

from __future__ import annotations

from collections import Counter
from typing import Mapping

from posbias.errors import InputError
from posbias.probes.declaration import variant_of
from posbias.probes.declarations.answer_importance import ANSWER_IMPORTANCE
from posbias.docred.pairs import ProbePair, answer_named_in_evidence, evidence_sentence_id, join, single_evidence
from posbias.docred.queries import ProbeQuery
from posbias.docred.sampling import last_per_group, sample

NEUTRAL_VARIANTS = ("authors", "strict")
QUERIES_PER_DOCUMENT = 3


def sentences_with_multiple_heads(query: ProbeQuery) -> set[int]:
    """Sentence ids holding two or more mentions of the head (never a candidate S^{+h}_{-t}: the two documents
    would then differ in head count as well as in the answer)."""
    counts = Counter(mention.sent_id for mention in query.head)
    return {sent_id for sent_id, count in counts.items() if count >= 2}


def has_similar_label_to_tail(query: ProbeQuery, sent_id: int) -> bool:
    """Whether sentence `sent_id` may carry the answer, or a fact like the query's: it is evidence of a label with
    the query's relation, with the query's tail as tail, or with the query's tail as head; or the name of the
    tail's first-listed mention occurs in it as a substring.

    This mirrors the authors' check, including its substring test on one name only (spec bug 6). They run that
    test inside the loop over the document's labels, so it applies whenever the document has a label, which a
    query's document always has.
    """
    label = query.label
    for other in query.document.labels:
        if sent_id in other.evidence and (other.relation == label.relation or other.tail == label.tail
                                          or other.head == label.tail):
            return True
    return query.tail[0].name in query.document.sentence(sent_id)


def passes_mention_filter(query: ProbeQuery) -> bool:
    """Step 1: one evidence sentence with one head mention, the head mentioned elsewhere too, one name each."""
    return (single_evidence(query) and len(query.head_in_evidence) == 1 and len(query.head) >= 2
            and len(query.head_names) == 1 and len(query.tail_names) == 1)


def head_sentence_without_tail(query: ProbeQuery) -> int | None:
    """Step 2: the id of S^{+h}_{-t}, or None. Head mentions are tried in the file's (vertexSet) order; the first
    whose sentence is not the evidence, holds no other head mention and has no similar label wins."""
    evidence = evidence_sentence_id(query)
    crowded = sentences_with_multiple_heads(query)
    for mention in query.head:
        sent_id = mention.sent_id
        if sent_id != evidence and sent_id not in crowded and not has_similar_label_to_tail(query, sent_id):
            return sent_id
    return None


def rest_pool(query: ProbeQuery) -> list[int]:
    """Step 3: the ids of the sentences without a similar label, in document order (S_ev is never among them:
    it is evidence of the query's own label)."""
    return [i for i in range(len(query.document.sents)) if not has_similar_label_to_tail(query, i)]


def rest_sentence_ids(query: ProbeQuery, head_sentence: int, neutral: str = "strict") -> list[int]:
    """The shared rest: the pool minus S_ev and S^{+h}_{-t}; with `neutral="strict"` also minus every sentence
    that mentions the head (the paper's S^{-h}_{-t})."""
    _check_neutral(neutral)
    dropped = {evidence_sentence_id(query), head_sentence}
    if neutral == "strict":
        dropped |= {mention.sent_id for mention in query.head}
    return [i for i in rest_pool(query) if i not in dropped]


def tail_name_outside_evidence(query: ProbeQuery) -> bool:
    """Step 4: the tail's name occurs in a pool sentence other than S_ev."""
    evidence = evidence_sentence_id(query)
    name = query.tail[0].name
    return any(name in query.document.sentence(i) for i in rest_pool(query) if i != evidence)


def answer_importance_candidates(queries: list[ProbeQuery]) -> list[ProbeQuery]:
    """Steps 1 to 4, and the evidence spells the answer (the document "with the answer" must hold it: an answer
    given only as a demonym, 'French singer' for France, would not be there)."""
    rows = [q for q in queries if passes_mention_filter(q) and head_sentence_without_tail(q) is not None
            and not tail_name_outside_evidence(q) and answer_named_in_evidence(q)]
    return last_per_group(rows, lambda q: q.document.title, QUERIES_PER_DOCUMENT)


def answer_importance(queries: list[ProbeQuery], n: int, seed: int, neutral: str = "strict") -> list[ProbePair]:
    """`n` pairs (document_1 = S_ev + rest, document_2 = S^{+h}_{-t} + rest) from a seeded sample of candidates."""
    _check_neutral(neutral)
    pairs = []
    for query in sample(answer_importance_candidates(queries), n, seed, "probes.n"):
        head_sentence = head_sentence_without_tail(query)
        assert head_sentence is not None  # guaranteed by the candidate filter
        document = query.document
        rest = [document.sentence(i) for i in rest_sentence_ids(query, head_sentence, neutral)]
        pairs.append(ProbePair(ANSWER_IMPORTANCE, query.qid, query.query,
                               join([document.sentence(evidence_sentence_id(query)), *rest]),
                               join([document.sentence(head_sentence), *rest])))
    return pairs


def _check_neutral(neutral: str) -> None:
    if neutral not in NEUTRAL_VARIANTS:
        raise InputError(f"probes.variants.neutral: {neutral!r} is not one of {', '.join(NEUTRAL_VARIANTS)}")

# --- the probe as the stage builds it (`posbias.probes.declaration`: the `probes` section's settings) -----------

def probe_candidates(queries: list[ProbeQuery], section: Mapping) -> list[ProbeQuery]:
    return answer_importance_candidates(queries)


def probe_pairs(queries: list[ProbeQuery], section: Mapping, n: int, seed: int) -> list[ProbePair]:
    return answer_importance(queries, n, seed, neutral=variant_of(section, "neutral", "strict"))
