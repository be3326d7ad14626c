"""FarRelevant from real passages (the study's MS MARCO FarRelevant, appendix B.2), or imported as published.

Two sources besides the embedded generator (`farrelevant.source.kind` in the config):

- `ir_datasets`: documents built with `farrelevant.build_document` around the relevant passages of every judged
  query of a training and a test query set (default `msmarco-passage/train` and `msmarco-passage/dev/small`),
  filled with passages of the collection (default `msmarco-passage`, 8.8M passages). The documents of all those
  queries form the corpus the first stage searches; the test and training query sets are seeded random samples
  of the test and training queries (the study: 1K of dev, 50K of train). `per: query` builds one document per
  query around its first relevant passage (the study's text: "each document contained exactly one relevant
  passage", about 0.5M documents); `per: qrel` one per (query, relevant passage), as Table 9's 0.53M and the
  published document ids `<qid>_<pid>` suggest.
- `local`: the authors' published collection (or any built one) in documented files: documents JSONL or TSV
  (the published `AnswerFields.jsonl.gz` with fields `DOCNO` and `text_raw`), queries TSV or JSONL
  (`QuestionFields.jsonl`), TREC qrels, and a position map `doc_id<TAB>start` (the offset of the relevant
  passage in tokens or characters). The published position map's own layout is not documented by the authors;
  convert it to this TSV.

Both write what the embedded builder writes: `docs.jsonl`, `queries/<qs>.tsv`, `qrels/<qs>.txt` and
`positions/<qs>.tsv`, the last with a `doc_id` column besides `qid` and `start` because `per: qrel` gives a
query several documents.
"""

from __future__ import annotations

import logging
import random
import statistics
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Iterable, Iterator, Sequence

from tqdm import tqdm

from posbias import io
from posbias.data import farrelevant
from posbias.data.sources import local
from posbias.errors import InputError

log = logging.getLogger(__name__)

IRDS_DEFAULTS = {"passages": "msmarco-passage", "train": "msmarco-passage/train", "test": "msmarco-passage/dev/small",
                 "per": "query", "target_draw": "after_prefix"}
RELEVANT = -1  # the key of the relevant passage among the pool's indices (see `build_document`)
BATCH = 1024  # texts per tokenizer call when measuring lengths


# --- shared ----------------------------------------------------------------------------------------


@dataclass
class Built:
    """What a source produced, before the split into query sets."""

    queries: dict[str, str]                         # every query with a document
    qrels: dict[str, dict[str, int]]                # qid -> {doc_id: grade}
    starts: dict[str, list[tuple[str, int]]]        # qid -> [(doc_id, token offset of its relevant passage)]
    origin: dict[str, str] = field(default_factory=dict)  # qid -> "test" or "train" (the query set it came from)


def batch_counter(tokenizer: str) -> Callable[[Sequence[str]], list[int]]:
    """Token counts of many texts at once (no special tokens); batched calls of a fast tokenizer are far quicker
    than one call per passage, and nothing is cached (a cache of millions of passages would hold them all)."""
    if tokenizer == "whitespace":
        return lambda texts: [len(t.split()) for t in texts]
    from posbias.backbones import load_tokenizer

    tok = load_tokenizer(tokenizer)
    return lambda texts: [len(ids) for ids in tok(list(texts), add_special_tokens=False)["input_ids"]]


def count_all(texts: Sequence[str], counter, what: str) -> array:
    lengths = array("I")
    for begin in tqdm(range(0, len(texts), BATCH), desc=f"token lengths ({what})", unit="batch", mininterval=10):
        lengths.extend(counter(texts[begin:begin + BATCH]))
    return lengths


def sample(qids: Iterable[str], n: int, rng: random.Random, what: str, where: str) -> list[str]:
    """A seeded random sample of `n` query ids (sorted first, so the sample does not depend on reading order)."""
    ordered = sorted(qids)
    if len(ordered) < n:
        raise InputError(f"{where}: {len(ordered)} {what} queries with a FarRelevant document are too few for "
                         f"a sample of {n}")
    return sorted(rng.sample(ordered, n))


def write_splits(built: Built, splits: dict[str, list[str]], out_dir: str | Path) -> None:
    out = Path(out_dir)
    for name, qids in splits.items():
        io.write_queries(out / "queries" / f"{name}.tsv", {q: built.queries[q] for q in qids})
        io.write_qrels(out / "qrels" / f"{name}.txt", {q: built.qrels[q] for q in qids})
        write_qrel_positions(out / "positions" / f"{name}.tsv", {q: built.starts[q] for q in qids})


def write_qrel_positions(path: str | Path, starts: dict[str, list[tuple[str, int]]]) -> None:
    """`qid<TAB>start<TAB>doc_id` per relevant document: the embedded builder's `qid, start` plus the document,
    since a query has several under `per: qrel`."""
    with io.atomic_write(path) as out:
        out.write("qid\tstart\tdoc_id\n")
        for qid, rows in starts.items():
            for doc_id, start in rows:
                out.write(f"{qid}\t{start}\t{doc_id}\n")


def split_seeds(settings: dict, source: dict) -> random.Random:
    """The sampling generator: its own seed (`source.sample_seed`, default `farrelevant.seed`), so the query
    samples do not move when the building draws change."""
    return random.Random(f"farrelevant-sample-{source.get('sample_seed', settings['seed'])}")


# --- built from a passage collection through ir_datasets -------------------------------------------


@dataclass
class QuerySet:
    dataset_id: str
    queries: dict[str, str]
    positives: dict[str, list[str]]  # qid -> relevant passage ids, sorted
    grades: dict[str, dict[str, int]]


def read_queryset(dataset_id: str) -> QuerySet:
    """Judged queries with at least one relevant passage; a judged query without text is an error."""
    from posbias.data.sources import irds

    texts, judged = irds.queries(dataset_id), irds.qrels(dataset_id)
    positives = {q: sorted(d for d, g in docs.items() if g > 0) for q, docs in judged.items()}
    positives = {q: pids for q, pids in positives.items() if pids}
    missing = sorted(q for q in positives if not texts.get(q))
    if missing:
        raise InputError(f"{irds.file_of(dataset_id, 'queries')}: {len(missing)} queries judged in {dataset_id} "
                         f"have no text, e.g. {missing[:3]}")
    return QuerySet(dataset_id, {q: texts[q] for q in positives}, positives,
                    {q: {d: g for d, g in judged[q].items() if g > 0} for q in positives})


class Reservoir:
    """A uniform random sample of at most `size` items of a stream of unknown length (Vitter's algorithm R)."""

    def __init__(self, size: int, rng: random.Random):
        self.size, self.rng, self.items, self.seen = size, rng, [], 0

    def offer(self, item) -> None:
        if len(self.items) < self.size:
            self.items.append(item)
        else:
            slot = self.rng.randrange(self.seen + 1)
            if slot < self.size:
                self.items[slot] = item
        self.seen += 1


def build_from_passages(source: dict, settings: dict, tokenizer: str, out_dir: str | Path, queryset: str,
                        train_queryset: str | None = None) -> dict:
    """Build FarRelevant from a passage collection read through ir_datasets; returns counts (also logged)."""
    from posbias.data.sources import irds

    src = {**IRDS_DEFAULTS, **source}
    # Both sets make up the corpus, whether or not a training query set is written: the test queries' candidates
    # must not depend on it.
    sets = {"test": read_queryset(src["test"]), "train": read_queryset(src["train"])}
    both = set(sets["test"].positives) & set(sets["train"].positives)
    if both:
        raise InputError(f"{irds.file_of(src['train'], 'queries')}: {len(both)} queries are also in {src['test']}, "
                         f"e.g. {sorted(both)[:3]}")
    # The documents: one per query (its first relevant passage) or one per (query, relevant passage).
    units = [(name, q, pid) for name, qs in sets.items() for q in sorted(qs.positives)
             for pid in (qs.positives[q] if src["per"] == "qrel" else qs.positives[q][:1])]
    needed = {pid for _, _, pid in units}
    judged_relevant = {pid for qs in sets.values() for pids in qs.positives.values() for pid in pids}
    log.info("%s: %s judged queries; %d documents to build around %d relevant passages (per %s)",
             src["passages"], {n: len(qs.positives) for n, qs in sets.items()}, len(units), len(needed), src["per"])

    # Memory: one pass over the collection keeps the texts of the needed relevant passages (one per document,
    # about 0.5M for MS MARCO) and a seeded uniform reservoir of `pool_size` passages never judged relevant, from
    # which each document samples its filler with replacement. Random access into the whole collection instead
    # would need ir_datasets' docstore (about 14 GB on disk, built by a full pass too) or all 8.8M texts in memory
    # (several GB in Python strings). Measured with tracemalloc on fixtures of 12-word passages: with pool_size 100
    # the build peaked at 0.44 MB for 2K and for 20K passages; with no bound, at 3 MB for 20K. A pooled passage
    # costs its text (about 0.4 KB for MS MARCO's 330 characters) and 4 bytes of length: 1M cost about 0.4 GB.
    # Passages relevant to any query of either set never fill a document: a passage relevant to query A placed
    # in B's document would make that document relevant to A without a judgment (the study rejects passages
    # relevant to the query itself; this is stricter).
    relevant_texts: dict[str, str] = {}
    pool = Reservoir(source["pool_size"], random.Random(f"farrelevant-pool-{settings['seed']}"))
    n_passages = n_rejected = 0
    for passage in irds.documents(src["passages"]):
        n_passages += 1
        pid, text = passage["id"], passage["text"]
        if pid in needed:
            relevant_texts[pid] = text
        elif pid in judged_relevant:
            n_rejected += 1
        elif text:  # an empty passage would add nothing to a document
            pool.offer(text)
    absent = [(name, pid) for name, _, pid in units if not relevant_texts.get(pid)]
    if absent:
        name = absent[0][0]  # the query set whose qrels name the first missing passage
        pids = sorted({pid for _, pid in absent})
        raise InputError(f"{irds.file_of(sets[name].dataset_id, 'qrels')}: {len(pids)} relevant passages are "
                         f"not in {src['passages']} or have no text, e.g. {pids[:3]}")
    texts = pool.items
    if not texts:
        raise InputError(f"{irds.file_of(src['passages'], 'docs')}: no passage left to fill documents with "
                         f"(every one is judged relevant)")
    log.info("read %d passages: %d relevant ones kept, %d judged relevant left out of the pool, a pool of %d "
             "(pool_size %d)", n_passages, len(relevant_texts), n_rejected, len(texts), source["pool_size"])

    counter = batch_counter(tokenizer)
    pool_lengths = count_all(texts, counter, "pool")
    relevant_ids = sorted(relevant_texts)
    relevant_lengths = dict(zip(relevant_ids, count_all([relevant_texts[p] for p in relevant_ids], counter,
                                                        "relevant passages")))

    first_window, cap = settings["first_window"], settings["max_doc_tokens"]
    rng = random.Random(settings["seed"])
    built = Built({}, {}, {})
    lengths: list[int] = []
    too_long: list[str] = []
    keys = range(len(texts))

    def documents() -> Iterator[dict]:
        for name, qid, pid in tqdm(units, desc="FarRelevant documents", unit="doc", mininterval=10):
            n_rel = relevant_lengths[pid]
            if first_window + 1 + n_rel > cap:  # cannot start after the first window within the cap
                too_long.append(pid)
                continue
            doc = farrelevant.build_document(RELEVANT, keys, lambda k: n_rel if k == RELEVANT else pool_lengths[k],
                                             rng, first_window, cap, src["target_draw"])
            doc_id = f"{qid}_{pid}"
            built.queries[qid] = sets[name].queries[qid]
            built.origin[qid] = name
            built.qrels.setdefault(qid, {})[doc_id] = sets[name].grades[qid][pid]
            built.starts.setdefault(qid, []).append((doc_id, doc.relevant_start))
            lengths.append(doc.n_tokens)
            yield {"id": doc_id, "text": " ".join(relevant_texts[pid] if k == RELEVANT else texts[k]
                                                  for k in doc.passages)}

    out = Path(out_dir)
    io.write_documents(out / "docs.jsonl", documents())
    if too_long:
        log.warning("%d relevant passages are longer than %d tokens and cannot start after token %d within %d "
                    "tokens: their documents are left out (e.g. %s)", len(too_long), cap - first_window - 1,
                    first_window, cap, too_long[:3])
    if not lengths:
        raise InputError(f"{src['test']}: no FarRelevant document could be built")
    rng_split = split_seeds(settings, source)
    splits = {queryset: sample([q for q, o in built.origin.items() if o == "test"], settings["n_queries"],
                               rng_split, "test", src["test"])}
    if train_queryset:
        splits[train_queryset] = sample([q for q, o in built.origin.items() if o == "train"],
                                        settings["n_train_queries"], rng_split, "training", src["train"])
    write_splits(built, splits, out)
    starts = [s for rows in built.starts.values() for _, s in rows]
    counts = {"passages": n_passages, "pool": len(texts), "documents": len(lengths), "skipped": len(too_long),
              "queries": {n: len(q) for n, q in splits.items()}}
    log.info("built %d FarRelevant documents (%d skipped), %d to %d tokens (mean %.0f); relevant passages start at "
             "token %d..%d; query sets %s", len(lengths), len(too_long), min(lengths), max(lengths),
             statistics.fmean(lengths), min(starts), max(starts), counts["queries"])
    return counts


# --- imported as built ------------------------------------------------------------------------------


def _records(path: str, fields: dict) -> Iterator[tuple[str, str]]:
    """`(id, text)` of a JSONL file with the configured field names, or of a TSV `id<TAB>text` file."""
    if local.file_format(path) == "tsv":
        for line_no, line in io.numbered_lines(path):
            parts = line.split("\t")
            if len(parts) != 2 or not parts[0]:
                raise io.FormatError(path, line_no, "expected 'id<TAB>text'")
            yield parts[0], parts[1]
        return
    id_field, text_field = fields.get("id", "id"), fields.get("text", "text")
    for line_no, record in io.json_objects(path):
        if id_field not in record or not isinstance(record.get(text_field), str):
            raise io.FormatError(path, line_no, f"expected an id field {id_field!r} and a string field "
                                                f"{text_field!r} (farrelevant.source.fields)")
        yield str(record[id_field]), record[text_field]


def read_positions(path: str) -> dict[str, int]:
    """`doc_id<TAB>start` lines (a header line `doc_id<TAB>start` may come first)."""
    starts: dict[str, int] = {}
    for line_no, line in io.numbered_lines(path):
        parts = line.split("\t")
        if line_no == 1 and parts[-1] == "start":
            continue
        if len(parts) != 2 or not parts[1].isdigit():
            raise io.FormatError(path, line_no, "expected 'doc_id<TAB>start', start a non-negative integer")
        if parts[0] in starts:
            raise io.FormatError(path, line_no, f"document {parts[0]} is listed twice")
        starts[parts[0]] = int(parts[1])
    return starts


def _local_queryset(spec: dict, fields: dict) -> tuple[dict[str, str], dict[str, dict[str, int]]]:
    """The queries of the queries file that have a relevant document. The qrels may judge more queries (the
    published dev_official_sample1K links the qrels of all of dev_official): those are not in the set."""
    texts = dict(_records(spec["queries"], fields))
    judged = {q: {d: g for d, g in docs.items() if g > 0} for q, docs in io.read_qrels(spec["qrels"]).items()
              if q in texts}
    judged = {q: docs for q, docs in judged.items() if docs}
    empty = sorted(q for q in judged if not texts[q].strip())
    if empty:
        raise InputError(f"{spec['queries']}: {len(empty)} queries judged in {spec['qrels']} have no text, "
                         f"e.g. {empty[:3]}")
    if not judged:
        raise InputError(f"{spec['qrels']}: judges no query of {spec['queries']} relevant")
    return {q: texts[q] for q in judged}, judged


def import_local(source: dict, settings: dict, tokenizer: str, out_dir: str | Path, queryset: str,
                 train_queryset: str | None = None) -> dict:
    """Import a built FarRelevant collection (documents, query sets, position map) into the standard files."""
    fields = source.get("fields", {})
    sets = {"test": _local_queryset(source["test"], fields)}
    if train_queryset:
        sets["train"] = _local_queryset(source["train"], fields)
    rng_split = split_seeds(settings, source)
    splits = {"test": sample(sets["test"][1], settings["n_queries"], rng_split, "test", source["test"]["queries"])}
    if train_queryset:
        splits["train"] = sample(sets["train"][1], settings["n_train_queries"], rng_split, "training",
                                 source["train"]["queries"])
    wanted = {d: name for name, qids in splits.items() for q in qids for d in sets[name][1][q]}
    positions = read_positions(source["positions"])
    unplaced = sorted(d for d in wanted if d not in positions)
    if unplaced:
        raise InputError(f"{source['positions']}: no position for {len(unplaced)} relevant documents of the "
                         f"sampled queries, e.g. {unplaced[:3]}")
    in_chars = source.get("position_unit", "tokens") == "chars"
    counter = batch_counter(tokenizer) if in_chars else None
    starts: dict[str, int] = {}
    paths = source["documents"] if isinstance(source["documents"], list) else [source["documents"]]

    def documents() -> Iterator[dict]:
        seen: set[str] = set()
        for path in paths:
            for doc_id, text in tqdm(_records(path, fields), desc=f"FarRelevant documents ({Path(path).name})",
                                     unit="doc", mininterval=10):
                if doc_id in seen:
                    raise InputError(f"{path}: document {doc_id} is listed twice")
                seen.add(doc_id)
                if doc_id in wanted:
                    start = positions[doc_id]
                    if in_chars:  # a character offset becomes a token offset: the tokens of the text before it
                        if start >= len(text):
                            raise InputError(f"{source['positions']}: document {doc_id} starts its relevant "
                                             f"passage at character {start}, past the end of its text in {path}")
                        start = counter([text[:start]])[0]
                    starts[doc_id] = start
                yield {"id": doc_id, "text": text}

    count = io.write_documents(Path(out_dir) / "docs.jsonl", documents())
    absent = sorted(d for d in wanted if d not in starts)
    if absent:
        name = wanted[absent[0]]
        raise InputError(f"{source[name]['qrels']}: {len(absent)} relevant documents are not in "
                         f"{', '.join(paths)}, e.g. {absent[:3]}")
    early = sum(1 for s in starts.values() if s <= settings["first_window"])
    if early:
        log.warning("%d relevant passages start within the first %d tokens", early, settings["first_window"])
    built = Built({q: t for texts, _ in sets.values() for q, t in texts.items()},
                  {q: docs for _, judged in sets.values() for q, docs in judged.items()},
                  {q: [(d, starts[d]) for d in sets[name][1][q]] for name, qids in splits.items() for q in qids})
    names = {"test": queryset, "train": train_queryset}
    write_splits(built, {names[n]: qids for n, qids in splits.items()}, out_dir)
    counts = {"documents": count, "queries": {names[n]: len(q) for n, q in splits.items()}}
    log.info("imported %d FarRelevant documents; query sets %s; relevant passages start at token %d..%d",
             count, counts["queries"], min(starts.values()), max(starts.values()))
    return counts
