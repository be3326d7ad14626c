"""What every probe builds (spec §2): pairs of documents for one query, and the candidate conditions the probes
share.

`document_1` is the document the study expects a biased retriever to prefer (for answer importance, the one
that holds the answer); a probe's statistic is computed as M(query, document_1) against M(query, document_2),
so a positive t means document_1 scored higher. Documents are built from sentence lists and joined with single
spaces (spec §1.3), never by string replacement on joined text.
"""

from __future__ import annotations

import re

from dataclasses import dataclass

from posbias.docred.queries import ProbeQuery


@dataclass(frozen=True)
class ProbePair:
    probe: str  # e.g. position_first_last
    qid: str  # ProbeQuery.qid
    query: str
    document_1: str
    document_2: str
    condition: str = ""  # a probe's sub-condition, e.g. the evidence position of the sweep

    def to_dict(self) -> dict:
        return {"probe": self.probe, "qid": self.qid, "condition": self.condition, "query": self.query,
                "document_1": self.document_1, "document_2": self.document_2}


def join(sentences: list[str]) -> str:
    return " ".join(sentences)


def single_evidence(query: ProbeQuery) -> bool:
    """The fact is stated in one sentence (the study's `len(evidence_sent_ids) == 1`)."""
    return len(set(query.evidence)) == 1


def evidence_sentence_id(query: ProbeQuery) -> int:
    return query.evidence[0]


def not_repeated_label(query: ProbeQuery) -> bool:
    """No other label of the document joins the same head and tail (the study's `not_repeated_label`)."""
    pair = (query.label.head, query.label.tail)
    return sum((label.head, label.tail) == pair for label in query.document.labels) == 1


def head_only_in_evidence(query: ProbeQuery) -> bool:
    """One fact sentence, a head with one name mentioned once, there (spec §2.2 step 1, shared by the position
    probes): moving that sentence moves every mention of the head."""
    return (single_evidence(query) and len(query.head) == 1 and len(query.head_in_evidence) == 1
            and len(query.head_names) == 1 and not_repeated_label(query))


def names_in(text: str, names) -> bool:
    """Whether any of `names` occurs in `text` as whole words, ignoring case (a mention the annotators missed
    still counts)."""
    return any(re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text, flags=re.IGNORECASE) for name in names if name)


def answer_named_in_evidence(query: ProbeQuery) -> bool:
    """The evidence sentence spells the answer: some tail name occurs in it as words. An answer given only as a
    demonym ("French" for France) would leave the "document with the answer" without it."""
    return names_in(query.document.sentence(evidence_sentence_id(query)), query.tail_names)


def rest_free_of_head_and_answer(query: ProbeQuery) -> bool:
    """No sentence but the evidence mentions the head or the answer, by annotation or by any of their names (the
    paper: the other sentences hold "no ... additional evidence")."""
    evidence = evidence_sentence_id(query)
    annotated = {m.sent_id for m in (*query.head, *query.tail)}
    if annotated - {evidence}:
        return False
    names = query.head_names | query.tail_names
    return not any(names_in(text, names) for i, text in enumerate(query.document.sentences) if i != evidence)


def evidence_alone_holds_the_fact(query: ProbeQuery) -> bool:
    """The paper's candidates for the position and brevity probes (`probes.variants.rest: paper`): the authors'
    filter (`head_only_in_evidence`), the answer spelt in the evidence, and a rest free of head and answer."""
    return head_only_in_evidence(query) and answer_named_in_evidence(query) and rest_free_of_head_and_answer(query)


def other_sentences(query: ProbeQuery) -> list[str]:
    """The document's sentences but the evidence sentence, in document order."""
    evidence = evidence_sentence_id(query)
    return [text for i, text in enumerate(query.document.sentences) if i != evidence]
