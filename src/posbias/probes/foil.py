"""Foil vs evidence (spec §2.7): a short answerless foil built to exploit the biases, against the evidence buried in
unrelated text.

- foil = `" H " " H " ` + S^{+h}_{-t}: the head's longest name twice, each in a spaced quote pair (the study's
  literal text), then a sentence of the gold document with the head but not the tail (answer.py's choice). It
  exploits position, repetition and brevity bias, and holds no answer.
- evidence = S̃-block + S_ev + S̃-block: the evidence sentence between two copies of the first 4 sentences of an
  unrelated document.

The statistic is computed evidence first: **document_1 = the evidence document, document_2 = the foil**, so a
positive t, and a win rate above 0.5, mean that the evidence document scored higher (the paper's "accuracy");
the paper's retrievers give a negative t (the foil is preferred).

Candidates: answer importance steps 1-2 (`answer.passes_mention_filter`, `answer.head_sentence_without_tail`);
then the tail's name must not occur in the pool of sentences without a similar label and without a head mention,
S_ev aside; then the last 2 queries of each question, the last 3 of each document, and the seeded sample.

Unrelated documents: the distinct documents of the whole query table (first query per title) with more than 3
sentences. For a query, a document is eligible unless it has the query's title, states the query's relation in a
label whose first evidence sentence is 0 or 1, or has an entity of the tail's type first mentioned in sentence 0
or 1. One is drawn per query with `sample(eligible, 1, seed=<the query's row position in the query table>)`, the
study's `.sample(1, random_state=row.name)`.

Departures from the authors' code, fixed by default (`authors=True` restores them):
- relations are compared exactly; the authors used a regex substring test, so P17 also excluded P170, P1376, ...
  (spec bug 8);
- the tail-count pool is the intended one; the authors' mis-parenthesised condition `(not X) & i not in heads`
  keeps a sentence whenever the bit `(not X) & i` (0 or 1) is not a head sentence id (spec bug 5).
Either way, a document is excluded if it has an early entity of *any* of the tail's types: the authors took one
type from a set (`list(types)[0]`, hash-order dependent, spec bug 7); with one tail type the two agree.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from posbias.errors import InputError
from posbias.probes.answer import has_similar_label_to_tail, head_sentence_without_tail, passes_mention_filter
from posbias.probes.declaration import variant_of
from posbias.probes.declarations.foil import FOIL
from posbias.docred.pairs import ProbePair, answer_named_in_evidence, evidence_sentence_id, join
from posbias.docred.queries import ProbeQuery
from posbias.docred.documents import Document
from posbias.docred.sampling import first_per_group, last_per_group, sample

BLOCK_SENTENCES = 4  # the S̃-block: the first 4 sentences of the unrelated document
MIN_UNRELATED_SENTENCES = 4  # the study's `len(sents) > 3`
EARLY_SENTENCES = (0, 1)  # where a relation or an entity type makes an unrelated document ineligible
QUERIES_PER_QUESTION = 2
QUERIES_PER_DOCUMENT = 3


@dataclass(frozen=True)
class UnrelatedDocument:
    document: Document
    early_relations: tuple[str, ...]  # relations of labels whose first evidence sentence is 0 or 1, file order
    early_entity_types: frozenset[str]  # types (first-listed mention's) of entities first mentioned in 0 or 1

    @property
    def block(self) -> str:
        return join(self.document.sentences[:BLOCK_SENTENCES])


def unrelated_documents(queries: list[ProbeQuery]) -> list[UnrelatedDocument]:
    """The pool of unrelated documents, in query-table order."""
    documents = [q.document for q in first_per_group(queries, lambda q: q.document.title)]
    return [_unrelated(d) for d in documents if len(d.sents) >= MIN_UNRELATED_SENTENCES]


def _unrelated(document: Document) -> UnrelatedDocument:
    relations = tuple(label.relation for label in document.labels
                      if label.evidence and min(label.evidence) in EARLY_SENTENCES)
    types = frozenset(entity[0].type for entity in document.entities
                      if entity and min(m.sent_id for m in entity) in EARLY_SENTENCES)
    return UnrelatedDocument(document, relations, types)


def is_eligible(candidate: UnrelatedDocument, query: ProbeQuery, authors: bool = False) -> bool:
    """Whether `candidate` may supply the S̃-block for `query`."""
    if candidate.document.title == query.document.title:
        return False
    relation = query.label.relation
    if authors:
        states_relation = relation in " ".join(candidate.early_relations)  # substring: P17 matches P170
    else:
        states_relation = relation in candidate.early_relations
    tail_types = {mention.type for mention in query.tail}
    return not states_relation and not (tail_types & candidate.early_entity_types)


def unrelated_block(query: ProbeQuery, row_position: int, pool: list[UnrelatedDocument],
                    authors: bool = False) -> str:
    """The S̃-block for the query at `row_position` of the query table."""
    eligible = [candidate for candidate in pool if is_eligible(candidate, query, authors)]
    if not eligible:
        raise InputError(f"probes.redocred.files: no unrelated document qualifies for the foil of query {query.qid}"
                         f" ({query.document.title!r}); the corpus is too small")
    return sample(eligible, 1, row_position)[0].block


def tail_name_in_pool(query: ProbeQuery, authors: bool = False) -> bool:
    """Whether the tail's name occurs in the pool of sentences without a similar label and without a head mention,
    S_ev aside (after the fix a no-op, as every sentence holding the name is out of the pool)."""
    document = query.document
    head_sentences = {mention.sent_id for mention in query.head}
    name = query.tail[0].name
    evidence = evidence_sentence_id(query)
    if authors:
        # the study's `(not similar) & i not in heads`, i.e. `((not similar) & i) not in heads`, on joined text
        kept = [document.sentence(i) for i in range(len(document.sents))
                if (int(not has_similar_label_to_tail(query, i)) & i) not in head_sentences]
        return name in join(kept).replace(document.sentence(evidence), "")
    pool = [i for i in range(len(document.sents))
            if not has_similar_label_to_tail(query, i) and i not in head_sentences and i != evidence]
    return any(name in document.sentence(i) for i in pool)


def foil_candidates(queries: list[ProbeQuery], authors: bool = False) -> list[ProbeQuery]:
    """The answer-importance filter's queries whose pool does not name the answer; under the paper's text the
    evidence also spells it (the document with the answer must hold it, not only a demonym)."""
    rows = [q for q in queries if passes_mention_filter(q) and head_sentence_without_tail(q) is not None
            and not tail_name_in_pool(q, authors) and (authors or answer_named_in_evidence(q))]
    rows = last_per_group(rows, lambda q: q.query, QUERIES_PER_QUESTION)
    return last_per_group(rows, lambda q: q.document.title, QUERIES_PER_DOCUMENT)


def foil_document(query: ProbeQuery, head_sentence: int) -> str:
    """`" H " " H " ` followed by S^{+h}_{-t}, H the head's longest name."""
    quoted_head = join(['"', query.head_longest, '"'])
    return join([quoted_head, quoted_head, query.document.sentence(head_sentence)])


def foil(queries: list[ProbeQuery], n: int, seed: int, authors: bool = False) -> list[ProbePair]:
    """`n` pairs, document_1 = the evidence document, document_2 = the foil. `queries` is the whole query table:
    it supplies the unrelated documents and each query's row position (the seed of its unrelated draw)."""
    positions = {q.qid: i for i, q in enumerate(queries)}
    pool = unrelated_documents(queries)
    pairs = []
    for query in sample(foil_candidates(queries, authors), n, seed, "probes.n"):
        head_sentence = head_sentence_without_tail(query)
        assert head_sentence is not None  # guaranteed by the candidate filter
        block = unrelated_block(query, positions[query.qid], pool, authors)
        evidence = query.document.sentence(evidence_sentence_id(query))
        pairs.append(ProbePair(FOIL, query.qid, query.query, join([block, evidence, block]),
                               foil_document(query, head_sentence)))
    return pairs

# --- the probe as the stage builds it (`posbias.probes.declaration`: the `probes` section's settings) -----------

def probe_candidates(queries: list[ProbeQuery], section: Mapping) -> list[ProbeQuery]:
    return foil_candidates(queries, authors=variant_of(section, "foil") == "authors")


def probe_pairs(queries: list[ProbeQuery], section: Mapping, n: int, seed: int) -> list[ProbePair]:
    return foil(queries, n, seed, authors=variant_of(section, "foil") == "authors")
