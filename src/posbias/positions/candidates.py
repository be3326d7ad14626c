"""The sparse path's queries and (passage, document) candidates (the study's S B.4):

- only queries in both the passage and the document query sets, with identical text;
- optionally a sample of them: `n` draws with replacement from numpy's legacy generator seeded with `seed` (the
  study's `np.random.seed(seed)` then `np.random.choice`, which drew its 5000 MS MARCO train queries; repeats
  collapse, so fewer distinct queries remain);
- per query, every relevant passage x every relevant document, plus the BM25 top-k documents retrieved with
  the passage's text as the query.
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from typing import Callable, Mapping

import numpy as np

log = logging.getLogger(__name__)


@dataclass
class QueryCandidates:
    qid: str
    passages: list[str]  # relevant passage ids
    judged: list[str]  # relevant document ids
    retrieved: dict[str, list[str]] = field(default_factory=dict)  # passage id -> BM25 top-k document ids

    def pairs(self) -> list[tuple[str, str]]:
        """(passage id, document id), each once: the judged documents first, then the retrieved ones."""
        seen, out = set(), []
        for pid in self.passages:
            for doc_id in [*self.judged, *self.retrieved.get(pid, [])]:
                if (pid, doc_id) not in seen:
                    seen.add((pid, doc_id))
                    out.append((pid, doc_id))
        return out


def shared_queries(doc_queries: Mapping[str, str], passage_queries: Mapping[str, str]) -> list[str]:
    """Query ids of the document set (its order) that the passage set has with identical text."""
    kept = [q for q in doc_queries if passage_queries.get(q) == doc_queries[q]]
    differing = sum(1 for q in doc_queries if q in passage_queries and passage_queries[q] != doc_queries[q])
    if differing:
        log.info("%d queries are in both sets with different text and are left out", differing)
    return kept


def sample_queries(qids: list[str], n: int | None, seed: int) -> list[str]:
    """`n` draws with replacement (numpy's legacy seeded generator, as the study), distinct, in draw order.

    A `RandomState(seed)` of its own draws exactly what the study's `np.random.seed(seed)` then
    `np.random.choice` drew, without reseeding NumPy's global state under every other caller.
    """
    if n is None:
        return list(qids)
    drawn = np.random.RandomState(seed).choice(np.array(qids, dtype=object), n, replace=True)
    return list(dict.fromkeys(str(q) for q in drawn))


def positives(qrels: Mapping[str, Mapping[str, int]], qid: str) -> list[str]:
    return [doc for doc, grade in qrels.get(qid, {}).items() if grade > 0]


def build(qids: list[str], doc_qrels: Mapping, passage_qrels: Mapping,
          search: Callable[[dict[str, str]], dict[str, list[str]]] | None, passage_texts: Mapping[str, str]
          ) -> list[QueryCandidates]:
    """Each query's candidates; `search` maps {passage id: text} to {passage id: top-k document ids} (None: no
    retrieval, judged documents only). A relevant passage missing from `passage_texts` is left out."""
    out, missing = [], 0
    for qid in qids:
        pids = [p for p in positives(passage_qrels, qid) if p in passage_texts]
        missing += len(positives(passage_qrels, qid)) - len(pids)
        out.append(QueryCandidates(qid, pids, positives(doc_qrels, qid)))
    if missing:
        log.warning("%d relevant passages are not in the passage collection and are left out", missing)
    if search is not None:
        wanted = {pid: passage_texts[pid] for item in out for pid in item.passages}
        found = search(wanted) if wanted else {}
        for item in out:
            item.retrieved = {pid: found.get(pid, []) for pid in item.passages}
    return out
