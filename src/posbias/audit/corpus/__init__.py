"""The audit's real corpus: NQ-open questions with the Wikipedia passages that answer them, from the Lost in the
Middle authors' oracle file (shipped in this folder; its README states the source, checksum and licence).

`build_corpus` writes, from its first `n_questions` usable questions (a unique gold passage of at least
`min_words` words, in file order):

- `queries.tsv`, `qrels.txt` and `passages.jsonl` for the sweep and the grid (`source: {queries, qrels,
  passages}`, `posbias.audit.haystack.world_from_files`): each question's gold passage is its needle (at most
  `max_words` words, so that a haystack twice a 256-token window still has room for six places), and the pool is
  the sentences of other questions' gold passages (real Wikipedia text on other topics) that hold none of the
  chosen questions' answers (DPR's matcher, `posbias.reading.matching.has_answer`) and share no title with a needle:
  sentences, not passages, so the needle can stand at many places of a haystack of a few hundred tokens;
- `qa.jsonl.gz` for the readers (`source: {qa}`, Lost in the Middle's retrieval-results format): each question's
  `depth` distractors are the pool passages the MiniLM encoder ranks highest for it (the authors retrieved theirs
  with Contriever from all of Wikipedia, so these are less related to the question: the reader's task is easier
  than theirs, and the card's curves are the model's on this set, not a reproduction of their numbers).
"""

from __future__ import annotations

import gzip
import json
import re
from collections import Counter
from pathlib import Path

import numpy as np

ORACLE = Path(__file__).with_name("nq-open-oracle.jsonl.gz")
ORACLE_SHA256 = "6a7f72b846f663a133ef952244e5a4e43f06bcf190afe34e8fbe687ce0d1653e"
FILES = ("queries.tsv", "qrels.txt", "passages.jsonl", "qa.jsonl.gz")


def oracle_records() -> list[dict]:
    """The shipped oracle file's records, after checking its sha256."""
    from posbias.staging.checksums import verify

    verify(ORACLE, ORACLE_SHA256, "posbias.audit.corpus.ORACLE_SHA256")
    with gzip.open(ORACLE, "rt", encoding="utf-8") as handle:
        return [json.loads(line) for line in handle]


def _gold(record: dict) -> dict:
    return record["ctxs"][0]


def split_sentences(text: str, min_words: int = 5) -> list[str]:
    """A passage's sentences (split after a full stop, question or exclamation mark followed by a space and a
    capital), each of at least `min_words` words; Wikipedia's abbreviations may split a sentence early, which
    leaves real text all the same."""
    parts = re.split(r"(?<=[.!?])\s+(?=[A-Z])", text.strip())
    return [part for part in parts if len(part.split()) >= min_words]


def choose(records: list[dict], n_questions: int, pool_size: int, min_words: int,
           max_words: int = 120) -> tuple[list[int], list[int]]:
    """The chosen questions' indices (the first usable ones) and the pool's (other usable questions' gold passages
    that name none of the chosen answers and share no chosen title)."""
    from posbias.errors import InputError
    from posbias.reading.matching import has_answer

    counts = Counter(_gold(r)["text"] for r in records)
    usable = [i for i, r in enumerate(records)
              if counts[_gold(r)["text"]] == 1 and min_words <= len(_gold(r)["text"].split()) <= max_words]
    if len(usable) < n_questions:
        raise InputError(f"the real corpus holds {len(usable)} usable questions, fewer than n_questions "
                         f"{n_questions}")
    chosen = usable[:n_questions]
    answers = [a for i in chosen for a in records[i]["answers"]]
    titles = {_gold(records[i])["title"] for i in chosen}
    pool = [i for i in usable[n_questions:]
            if _gold(records[i])["title"] not in titles and not has_answer(_gold(records[i])["text"], answers)]
    return chosen, pool[:pool_size]


def build_corpus(out: str | Path, n_questions: int = 60, pool_size: int = 400, depth: int = 20,
                 min_words: int = 50, rank=None) -> dict[str, Path]:
    """Write the batteries' files under `out` (module docstring); `rank` replaces the MiniLM ranker (tests)."""
    from posbias.io import write_documents, write_qrels, write_queries
    from posbias.reading.matching import has_answer
    from posbias.io import write_jsonl
    from posbias.reading.synthetic_qa import dense_ranker

    records = oracle_records()
    chosen, pool = choose(records, n_questions, pool_size, min_words)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    paths = {name: out / name for name in FILES}
    write_queries(paths["queries.tsv"], {f"nq{i:04d}": records[i]["question"] for i in chosen})
    write_qrels(paths["qrels.txt"], {f"nq{i:04d}": {f"p{i:04d}": 1} for i in chosen})
    needles = [{"id": f"p{i:04d}", "title": _gold(records[i])["title"], "text": _gold(records[i])["text"]}
               for i in chosen]
    sentences = [{"id": f"p{i:04d}s{j}", "text": sentence} for i in pool
                 for j, sentence in enumerate(split_sentences(_gold(records[i])["text"]))]
    write_documents(paths["passages.jsonl"], needles + sentences)
    texts = [f"{_gold(records[i])['title']} {_gold(records[i])['text']}" for i in pool]
    scores = (rank or dense_ranker(None))([records[i]["question"] for i in chosen], texts)
    qa = []
    for row, i in enumerate(chosen):
        order = np.argsort(-np.asarray(scores[row], dtype=np.float64), kind="stable")[:depth]
        ctxs = [{"id": f"p{pool[j]:04d}", "title": _gold(records[pool[j]])["title"],
                 "text": _gold(records[pool[j]])["text"], "score": f"{float(scores[row][j]):.6f}",
                 "hasanswer": has_answer(_gold(records[pool[j]])["text"], records[i]["answers"])} for j in order]
        qa.append({"question": records[i]["question"], "answers": records[i]["answers"], "ctxs": ctxs,
                   "nq_annotated_gold": records[i]["nq_annotated_gold"]})
    write_jsonl(paths["qa.jsonl.gz"], qa)
    return paths
