"""The depth x length grid on LongEmbed's synthetic sets (Zhu et al. 2024; dwzhu/LongEmbed, configs `needle` and
`passkey`): a grid battery's `source: {longembed: needle|passkey, ...}`.

LongEmbed's layout (`posbias.data.sources.hf`): `corpus` (`doc_id`, `text`, `context_length`), `queries` (`qid`,
`text`, `context_length`) and `qrels` (`qid`, `doc_id`, `context_length`), every context length (256, 512, ...,
32768, LongEmbed's estimate in tokens: at most 0.75 x length words) in one split, 50 queries and 100 documents per
length. Each query has one relevant document, and LongEmbed ranks it among the documents of the query's own length
group (MTEB's LEMBNeedleRetrieval and LEMBPasskeyRetrieval filter every split on `context_length`). How the
relevant document's answer is placed (the LongEmbed paper, section 3.2 and Figure 3):

- passkey: filler ("The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again.")
  repeated around "<name>'s pass key is <key>. Remember it. <key> is the pass key for <name>." at a random place;
  the query asks "what is the pass key for <name>?". The sentence is found by the name the query asks for;
- needle: one of 100 facts GPT-4 wrote ("The law of gravity was discovered by Sir Isaac Newton.") inserted at a
  random place of Paul Graham's essays; the query asks for it ("Who discovered the law of gravity?"). The files do
  not say which sentence is the fact, so it is recovered: among the document's sentences that no other document of
  its length group holds (the essays are the haystack of every document of a group, as the paper describes them;
  each fact is in one document), the one sharing the most content words with the query (the only such sentence
  when there is one). Were a group's haystacks different, more sentences would be unique and the word overlap alone
  would choose. An answer not found is one InputError naming the query and its document.

Where LongEmbed places each answer once, at a random depth, the grid moves it: the located sentence is cut out and
put back at each of the battery's `depths` (a share of the rest's tokens; at the sentence boundary nearest it,
`posbias.audit.haystack.slots_at`), so every query is measured at every depth and the depths are compared pairwise
on the same queries, as every curve of the audit is. Per query, length and depth the value is the reciprocal rank of
its document so changed among the other documents of its length group (all of them: LongEmbed's protocol; or
`distractors: N` of them, drawn per query from the grid's `seed`), ties as the mean over the tied orders. The
depth the files gave the answer is kept beside (`natural_depth`), and the document as published is ranked too
(`as_published`: LongEmbed's own task, as MRR, per length).

Lengths are the model's own tokens: per length group, the mean over its queries of the relevant document's tokens
(counted sentence by sentence, as the needle's start is); LongEmbed's `context_length` stays beside. Should two
groups come out at the same mean (a tokenizer far from LongEmbed's estimate), the grid is labelled by
`context_length` instead (`length_unit` says which).
"""

from __future__ import annotations

import logging
import random
import re
from collections import Counter
from dataclasses import dataclass
from itertools import accumulate
from typing import Callable, Mapping, Sequence

import numpy as np
import pandas as pd

from posbias.audit.haystack import counted
from posbias.errors import InputError

log = logging.getLogger(__name__)

TASKS = ("needle", "passkey")
# What a LongEmbed source may name: the set (required), where it is (the hub id, a local copy of the repository, or
# a `datasets` builder such as "json" with `data_files`), the revision, the context lengths (default: all), the
# split files, how many other documents of the group to rank against (default: all), the `datasets` cache.
SOURCE_OPTIONS = ("longembed", "path", "revision", "context_lengths", "data_files", "distractors", "cache_dir")
BUILDERS = ("json", "parquet", "csv")  # a `path` that is a builder reads local `data_files`: the workflow's inputs
FILLER_STOPWORDS = frozenset(
    "a an the of in on at to for from by with and or is are was were be been who what when where which why how "
    "does do did has have had it its that this these those as into than then there their his her".split())


def is_longembed(source) -> bool:
    return isinstance(source, Mapping) and "longembed" in source


def check_source(source: Mapping, where: str) -> None:
    """One InputError naming the key for a LongEmbed source that cannot be read as one."""
    unknown = sorted(set(source) - set(SOURCE_OPTIONS))
    if unknown:
        raise InputError(f"{where}: unknown keys {unknown} of a LongEmbed source; known: {', '.join(SOURCE_OPTIONS)}")
    if source["longembed"] not in TASKS:
        raise InputError(f"{where}.longembed: {source['longembed']!r} is not one of {', '.join(TASKS)}")
    for key in ("path", "revision", "cache_dir"):
        if source.get(key) is not None and not isinstance(source[key], str):
            raise InputError(f"{where}.{key}: expected a string, got {source[key]!r}")
    lengths = source.get("context_lengths")
    if lengths is not None and not (isinstance(lengths, list) and lengths and all(
            isinstance(n, int) and not isinstance(n, bool) and n > 0 for n in lengths)):
        raise InputError(f"{where}.context_lengths: expected a non-empty list of positive integers, got {lengths!r}")
    files = source.get("data_files")
    if files is not None and not (isinstance(files, Mapping) and set(files) == {"corpus", "queries", "qrels"}):
        raise InputError(f"{where}.data_files: expected a mapping of corpus, queries and qrels to files, got {files!r}")
    distractors = source.get("distractors")
    if distractors is not None and not (isinstance(distractors, int) and not isinstance(distractors, bool)
                                        and distractors > 0):
        raise InputError(f"{where}.distractors: expected a positive integer, got {distractors!r}")


def source_inputs(source: Mapping) -> list[str]:
    """The local files a LongEmbed source reads, for the workflow to wait on: `data_files` under a builder such as
    "json"; none for the hub or a local copy of the repository (read when the job runs)."""
    if source.get("path") not in BUILDERS:
        return []
    files = source["data_files"].values()
    return [path for each in files for path in ([each] if isinstance(each, str) else each)]


@dataclass(frozen=True)
class Item:
    """One query of a length group: its relevant document (whitespace-normalised), where the answer sits in it
    (characters start..end), and the other documents it is ranked against."""

    qid: str
    query: str
    context_length: int
    doc_id: str
    text: str
    start: int
    end: int
    others: tuple[str, ...]

    @property
    def needle(self) -> str:
        return self.text[self.start:self.end]


def _one_line(text: str) -> str:
    return " ".join(str(text).split())  # as posbias.data.sources.hf reads every text


def sentence_spans(text: str) -> list[tuple[int, int]]:
    """(start, end) of each sentence of a whitespace-normalised text: cut after ., ! or ? and a space."""
    spans, start = [], 0
    for match in re.finditer(r"(?<=[.!?])\s+", text):
        if match.start() > start:
            spans.append((start, match.start()))
        start = match.end()
    if start < len(text):
        spans.append((start, len(text)))
    return spans


def sentences(text: str) -> list[str]:
    text = _one_line(text)
    return [text[a:b] for a, b in sentence_spans(text)]


def _words(text: str) -> set[str]:
    return {w for w in re.findall(r"[a-z0-9]+", text.lower()) if len(w) > 1 and w not in FILLER_STOPWORDS}


def locate_passkey(query: str, text: str) -> tuple[int, int] | None:
    """The span of "<name>'s pass key is K. Remember it. K is the pass key for <name>." for the name the query
    asks about ("what is the pass key for <name>?"); None when either is not there."""
    asked = re.search(r"pass\s?key\s+for\s+(.+?)\s*[?.!]*\s*$", query, flags=re.I)
    if not asked:
        return None
    name = re.escape(asked.group(1))
    found = (re.search(rf"{name}'s pass\s?key is (\S+?)\. Remember it\. \1 is the pass\s?key for {name}\.", text,
                       flags=re.I)
             or re.search(rf"{name}'s pass\s?key is [^.]*\.", text, flags=re.I))
    return found.span() if found else None


def locate_needle(query: str, text: str, shared: Counter) -> tuple[int, int] | None:
    """The span of the sentence that is the needle: among the sentences no other document of the group holds
    (`shared` counts the documents holding each sentence), the only one or the one sharing the most content words
    with the query (the first of equals); None when no sentence is unique, or several are and none shares a word."""
    spans = sentence_spans(text)
    unique = [span for span in spans if shared[text[span[0]:span[1]]] == 1]
    if len(unique) == 1:
        return unique[0]
    asked = _words(query)
    overlap = [len(asked & _words(text[a:b])) for a, b in unique]
    if not unique or max(overlap) == 0:
        return None
    return unique[overlap.index(max(overlap))]


def _load(source: Mapping, split: str):
    from posbias.data.sources import hf

    options = {key: source[key] for key in ("revision", "data_files", "cache_dir") if source.get(key) is not None}
    dataset = hf.load_split(source.get("path") or hf.LONGEMBED, source["longembed"], split,
                            source.get("context_lengths"), **options)
    if hf.CONTEXT_LENGTH not in dataset.column_names:
        raise InputError(f"{source.get('path') or hf.LONGEMBED} (config {source['longembed']!r}, split {split!r}) has "
                         f"no column 'context_length': the grid needs LongEmbed's length groups")
    return dataset


def read_groups(source: Mapping, n_queries: int, seed: int) -> dict[int, list[Item]]:
    """The first `n_queries` queries of each length group (in file order) with their located answers, by
    `context_length`."""
    from posbias.data.sources import hf

    where = f"{source.get('path') or hf.LONGEMBED} ({source['longembed']})"
    corpus: dict[int, dict[str, str]] = {}
    for row in _load(source, "corpus"):
        corpus.setdefault(int(row["context_length"]), {})[str(row["doc_id"])] = _one_line(row["text"])
    relevant: dict[str, list[str]] = {}
    for row in _load(source, "qrels"):
        if (int(row["score"]) if "score" in row else 1) > 0:  # no score column: every pair is relevant
            relevant.setdefault(str(row["qid"]), []).append(str(row["doc_id"]))
    queries: dict[int, list[tuple[str, str]]] = {}
    for row in _load(source, "queries"):
        queries.setdefault(int(row["context_length"]), []).append((str(row["qid"]), _one_line(row["text"])))
    groups: dict[int, list[Item]] = {}
    for length in sorted(queries):
        documents = corpus.get(length, {})
        shared = Counter(s for text in documents.values() for s in set(sentences(text)))
        items = []
        for qid, query in queries[length][:n_queries]:
            docs = relevant.get(qid, [])
            if len(docs) != 1 or docs[0] not in documents:
                raise InputError(f"{where} qrels: query {qid!r} (context_length {length}) needs one relevant document "
                                 f"among the corpus's documents of its length, has {docs}")
            text = documents[docs[0]]
            span = (locate_passkey(query, text) if source["longembed"] == "passkey"
                    else locate_needle(query, text, shared))
            if span is None:
                raise InputError(f"{where}: the answer to query {qid!r} ({query!r}) is not found in its document "
                                 f"{docs[0]!r}")
            others = [documents[d] for d in sorted(documents) if d != docs[0]]
            wanted = source.get("distractors")
            if wanted:
                if wanted > len(others):
                    raise InputError(f"{where}: distractors {wanted} exceeds the {len(others)} other documents of "
                                     f"context_length {length}")
                others = random.Random(f"{seed}:{qid}").sample(others, wanted)
            if not others:
                raise InputError(f"{where}: context_length {length} has no document besides {docs[0]!r} to rank "
                                 f"against")
            items.append(Item(qid, query, length, docs[0], text, *span, tuple(others)))
        groups[length] = items
    if not groups:
        raise InputError(f"{where}: no queries")
    return groups


def moved(item: Item, depths: Sequence[float], count: Callable[[str], int]) -> dict:
    """The item's document with its answer at each depth: the texts, where the answer starts and ends in the
    model's tokens, the document's length, and the depth the files gave it (a share of the rest's tokens)."""
    from posbias.audit.haystack import slots_at

    before, after = sentences(item.text[:item.start]), sentences(item.text[item.end:])
    units = before + after
    lengths = [count(unit) for unit in units]
    offsets = [0, *accumulate(lengths)]
    needle_tokens = count(item.needle)
    slots = slots_at(lengths, depths)
    return {"texts": [" ".join([*units[:slot], item.needle, *units[slot:]]) for slot in slots],
            "starts": [offsets[slot] for slot in slots], "needle_tokens": needle_tokens,
            "tokens": offsets[-1] + needle_tokens,
            "natural_depth": offsets[len(before)] / offsets[-1] if offsets[-1] else 0.0}


def longembed_grid(model, settings: Mapping):
    """The grid battery on a LongEmbed source (see the module docstring): a `BatteryResult` with a row per query,
    length and depth."""
    from posbias.audit.results import METRICS, BatteryResult, chance, expected_reciprocal_rank

    source, depths = settings["source"], list(settings["depths"])
    groups = read_groups(source, settings["n_queries"], settings["seed"])
    count = counted(model.count_tokens)  # the passkey's filler repeats its five sentences
    rows, published, lengths = [], {}, {}
    for context_length, items in groups.items():
        per_length = []
        for i, item in enumerate(items):
            placed = moved(item, depths, count)
            documents = [*placed["texts"], item.text, *item.others]
            # as the sweep describes its pairs (a mock language model reads the gold depth's index among n_items)
            common = {"n_items": len(depths), "example_index": i, "n_examples": len(items), "first_item": ""}
            metas = ([{**common, "answer": "yes", "gold_index": p} for p in range(len(depths))]
                     + [{**common, "answer": "yes", "gold_index": None}]
                     + [{**common, "answer": "no", "gold_index": None}] * len(item.others))
            scores = np.asarray(model.score([(item.query, d) for d in documents], metas), dtype=float)
            others = scores[len(depths) + 1:]
            published.setdefault(context_length, []).append(expected_reciprocal_rank(scores[len(depths)], others))
            per_length += [{"unit": item.qid, "position": p, "depth": depth, "context_length": context_length,
                            "tokens": start, "end": start + placed["needle_tokens"],
                            "natural_depth": placed["natural_depth"], "doc_tokens": placed["tokens"],
                            "value": expected_reciprocal_rank(score, others), "score": float(score)}
                           for p, (depth, start, score) in enumerate(zip(depths, placed["starts"], scores))]
        lengths[context_length] = round(float(np.mean([row["doc_tokens"] for row in per_length])))
        rows += per_length
    unit = "model tokens"
    if len(set(lengths.values())) < len(lengths):
        log.warning("LongEmbed grid: length groups %s have the same mean length in the model's tokens (%s); the grid "
                    "is labelled by LongEmbed's context_length", sorted(lengths), lengths)
        lengths, unit = {n: n for n in lengths}, "LongEmbed context_length"
    frame = pd.DataFrame(rows)
    frame.insert(3, "length", frame["context_length"].map(lengths))
    n_distractors = sorted({len(item.others) for items in groups.values() for item in items})
    log.info("grid on LongEmbed %s: %s queries x %d depths, context lengths %s (%s: %s), %s other documents each",
             source["longembed"], {n: len(items) for n, items in groups.items()}, len(depths), sorted(groups), unit,
             sorted(lengths.values()), n_distractors)
    extra = {"source": f"LongEmbed {source['longembed']}", "needles": f"LongEmbed {source['longembed']}-set",
             "lengths": sorted(lengths.values()), "length_unit": unit,
             "context_lengths": {str(n): lengths[n] for n in sorted(lengths)}, "depths": depths,
             "n_distractors": n_distractors[0] if len(n_distractors) == 1 else n_distractors,
             "as_published": {str(lengths[n]): float(np.mean(v)) for n, v in sorted(published.items())},
             "natural_depth": {str(lengths[n]): float(frame.loc[frame["context_length"] == n, "natural_depth"].mean())
                               for n in sorted(lengths)}}
    if len(n_distractors) == 1:
        extra["chance"] = chance(n_distractors[0])
    return BatteryResult("grid", METRICS["grid"], frame, extra=extra)
