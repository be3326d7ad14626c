"""Poison vs evidence (spec §2.8, §3.2): the foil with a poisoned evidence sentence appended, against the evidence.

poison = the foil (`" H " " H " ` + S^{+h}_{-t}) + S_ev with the answer (tail) replaced by a wrong entity, so it
states a false fact in the words of the true one. The pairs are the foil's (same sample, same evidence
documents): **document_1 = the evidence document, document_2 = the poisoned document**, so a positive t and a win
rate above 0.5 mean the evidence scored higher, as for the foil.

The replacement entity comes from one of three sources (`probes.poison.source`):
- `llm`: a configured language model asked the study's prompt (below), greedily, through the response cache;
  its answer's first line, stripped of quotes and a final period;
- `file`: a JSONL file of `{"qid": ..., "replacement": ...}` the user made (e.g. the study's GPT-4o answers);
- `swap`: offline and deterministic, a deviation from the study: the longest name of an entity of the tail's
  type from another document, drawn with a seed per query.

The study appends the poisoned sentence without a separator and replaces the tail's longest name as a string,
so a sentence that names the tail otherwise stays true (spec bug 10). Here every tail mention in the evidence
sentence is replaced at its token span and the sentence is joined with a space (`authors=True` restores the
string replacement and the missing space).
"""

from __future__ import annotations

import json
import logging
import random
from pathlib import Path
from typing import Callable, Mapping, Sequence

from posbias.errors import InputError
from posbias.probes.declarations.poison import POISON
from posbias.probes.foil import foil
from posbias.docred.pairs import ProbePair, evidence_sentence_id
from posbias.docred.queries import ProbeQuery, longest_name

log = logging.getLogger(__name__)

SOURCES = ("llm", "file", "swap")
# The study's poison-generation prompt (its code, §3.2), trailing space included.
PROMPT = ("In the sentence: '{evidence}', replace the entity '{tail}' with a different entity that makes sense in "
          "context but is completely different. Output only the replacement entity. replacement entity: ")


def prompt(query: ProbeQuery) -> str:
    return PROMPT.format(evidence=query.document.sentence(evidence_sentence_id(query)), tail=query.tail_longest)


def clean_answer(text: str) -> str:
    """A model's answer as an entity name: its first non-empty line, without surrounding quotes or a final period."""
    line = next((line.strip() for line in text.splitlines() if line.strip()), "")
    return line.rstrip(".").strip("'\"` ").rstrip(".").strip()


def poisoned_sentence(query: ProbeQuery, replacement: str, authors: bool = False) -> str:
    """S_ev with the tail replaced: every tail mention in it at its token span (in Re-DocRED's tokenisation), or,
    with `authors`, the tail's longest name as a string (unchanged where the sentence names it otherwise)."""
    evidence = evidence_sentence_id(query)
    if authors:
        return query.document.sentence(evidence).replace(query.tail_longest, replacement)
    tokens = list(query.document.sents[evidence])
    spans = sorted({mention.pos for mention in query.tail if mention.sent_id == evidence}, reverse=True)
    for start, end in spans:  # from the end, so earlier offsets stay valid
        tokens[start:end] = [replacement]
    return " ".join(tokens)


def poison(queries: list[ProbeQuery], n: int, seed: int, replacements: Mapping[str, str],
           authors: bool = False, foil_authors: bool = False) -> list[ProbePair]:
    """The foil's pairs (its sample: `n`, `seed`, `foil_authors`) with document_2 poisoned; a query without a usable
    replacement (missing, empty, or naming the answer itself, as a small model that repeats the sentence does) or
    whose evidence sentence does not name the tail is left out, and the log counts them."""
    by_qid = {q.qid: q for q in queries}
    pairs, skipped = [], []
    for pair in foil(queries, n, seed, authors=foil_authors):
        query = by_qid[pair.qid]
        replacement = replacements.get(pair.qid, "")
        sentence = poisoned_sentence(query, replacement, authors) if replacement else ""
        if not replacement or any(name in replacement for name in query.tail_names) or sentence == \
                query.document.sentence(evidence_sentence_id(query)):
            skipped.append(pair.qid)
            continue
        separator = "" if authors else " "
        pairs.append(ProbePair(POISON, pair.qid, pair.query, pair.document_1, pair.document_2 + separator + sentence))
    if skipped:
        log.warning("poison: %d of %d queries left out (no replacement, one naming the answer, or an evidence sentence "
                    "that does not name the tail), e.g. %s", len(skipped), len(skipped) + len(pairs), skipped[:3])
    return pairs


def sampled_queries(queries: list[ProbeQuery], n: int, seed: int, authors: bool = False) -> list[ProbeQuery]:
    """The queries the foil (and so the poison) samples, in sample order."""
    by_qid = {q.qid: q for q in queries}
    return [by_qid[pair.qid] for pair in foil(queries, n, seed, authors=authors)]


def swap_replacements(queries: list[ProbeQuery], sampled: Sequence[ProbeQuery], seed: int) -> dict[str, str]:
    """For each sampled query, the longest name of an entity of its tail's type from another document, drawn
    with `random.Random(f"{seed}:{qid}")` from the names in sorted order (so the draw does not depend on set
    order or on which other queries are sampled)."""
    names_by_type: dict[str, set[tuple[str, str]]] = {}
    for document in {q.document.doc_id: q.document for q in queries}.values():
        for entity in document.entities:
            if entity:
                names_by_type.setdefault(entity[0].type, set()).add((document.title, longest_name(entity)))
    chosen = {}
    for query in sampled:
        pool = sorted({name for title, name in names_by_type.get(query.tail[0].type, ())
                       if title != query.document.title and name not in query.tail_names})
        if pool:
            chosen[query.qid] = random.Random(f"{seed}:{query.qid}").choice(pool)
    return chosen


def llm_replacements(sampled: Sequence[ProbeQuery], ask: Callable[[list[str]], list[str]]) -> dict[str, str]:
    """The replacements a language model gives (`ask`: prompts -> answers, in order) to the study's prompt."""
    answers = ask([prompt(query) for query in sampled])
    return {query.qid: clean_answer(answer) for query, answer in zip(sampled, answers)}


def read_replacements(path: str | Path) -> dict[str, str]:
    """A JSONL file of `{"qid": ..., "replacement": ...}`; a malformed line is an InputError naming it."""
    found = {}
    with open(path, encoding="utf-8") as handle:
        for number, line in enumerate(handle, start=1):
            if not line.strip():
                continue
            try:
                record = json.loads(line)
                found[str(record["qid"])] = str(record["replacement"])
            except (json.JSONDecodeError, KeyError, TypeError):
                raise InputError(f"{path}:{number}: expected a JSON object with qid and replacement") from None
    return found


def write_replacements(path: str | Path, replacements: Mapping[str, str],
                       sampled: Sequence[ProbeQuery] = ()) -> None:
    """One JSON line per query: qid and replacement, and for each of `sampled` its gold answer (the tail's longest
    name) and evidence sentence, which RAG's judge reads."""
    from posbias.io import atomic_write

    known = {query.qid: query for query in sampled}
    with atomic_write(str(path)) as handle:
        for qid, replacement in replacements.items():
            record = {"qid": qid, "replacement": replacement}
            if qid in known:
                query = known[qid]
                record.update(gold=query.tail_longest,
                              evidence=query.document.sentence(evidence_sentence_id(query)))
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
