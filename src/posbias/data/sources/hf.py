"""Collections from Hugging Face `datasets` in the corpus/queries/qrels layout of LongEmbed.

`dwzhu/LongEmbed` (configs `needle`, `passkey`, and four real-world ones) keeps each config's three
splits as JSONL files `<config>/corpus.jsonl`, `<config>/queries.jsonl` and `<config>/qrels.jsonl`,
declared in the dataset card's `configs:` block. Columns:

- corpus: `doc_id`, `text`, `context_length`
- queries: `qid`, `text`, `context_length`
- qrels: `qid`, `doc_id`, `context_length` (no score column: every pair is relevant, grade 1)

Needle and passkey hold all context lengths (256, 512, ..., 32768 tokens) in one split each, told
apart by the `context_length` column; `context_lengths` selects one or more of them. (Layout from the
dataset card and MTEB's LEMBNeedleRetrieval/LEMBPasskeyRetrieval loaders, which filter on that column.)

Each split is loaded on its own, with `data_files={split: <that split's files>}`: `datasets` (5.x) infers one
schema from a config's first split and casts the others to it, which fails for three splits with
different columns. The config name picks the default files `<config>/<split>.jsonl`; `data_files`
(split -> file or files) replaces them, so `path` may be the hub id (with `revision`), a local copy of
the repository, or `"json"`/`"parquet"` with absolute paths.
"""

from __future__ import annotations

import logging
from typing import Iterable, Iterator, Mapping, Sequence

from posbias.data.sources import SourceError

log = logging.getLogger(__name__)

LONGEMBED = "dwzhu/LongEmbed"
CONTEXT_LENGTH = "context_length"
# The columns each split must have; a `score` column in qrels, if present, gives the grade.
REQUIRED_COLUMNS = {"corpus": ("doc_id", "text"), "queries": ("qid", "text"), "qrels": ("qid", "doc_id")}

ContextLengths = int | Iterable[int] | None
DataFiles = Mapping[str, str | Sequence[str]] | None


def _wanted(context_lengths: ContextLengths) -> set[int] | None:
    """The selected context lengths as a set; None selects every row."""
    if context_lengths is None:
        return None
    wanted = {context_lengths} if isinstance(context_lengths, int) else {int(n) for n in context_lengths}
    if not wanted:
        raise SourceError("an empty list of context lengths selects nothing; leave it out to keep them all")
    return wanted


def load_split(path: str, name: str, split: str, context_lengths: ContextLengths = None, *,
               revision: str | None = None, data_files: DataFiles = None, cache_dir: str | None = None):
    """One split as a `datasets.Dataset`, its columns checked and its rows limited to the chosen context lengths.

    `revision`, `data_files` and `cache_dir` go to `datasets.load_dataset`; `data_files` maps split names to files.
    """
    import datasets

    from posbias.staging.hub import is_hub_id, load_target

    wanted = _wanted(context_lengths)
    where = f"{path} (config {name!r}, split {split!r})"
    if is_hub_id(path, "dataset"):  # the snapshot `posbias stage` fetched; offline, nothing else
        path, revision = load_target(path, "dataset", revision)
    if data_files is None:
        files = f"{name}/{split}.jsonl"  # where LongEmbed keeps every config's splits
    elif split in data_files:
        files = data_files[split]
    else:
        raise SourceError(f"{where}: data_files names no files for this split (it has {sorted(data_files)})")
    try:
        # The files fully define the split, so no config name is passed: a plain directory has no configs.
        dataset = datasets.load_dataset(path, split=split, data_files={split: files}, revision=revision,
                                        cache_dir=cache_dir)
    except Exception as err:  # missing repo, file or split, unreadable JSON: say which split failed
        detail = str(err) if len(str(err)) <= 400 else str(err)[:400] + " ..."  # some list every known extension
        raise SourceError(f"{where} could not be loaded: {type(err).__name__}: {detail}") from err

    needed = REQUIRED_COLUMNS[split] + ((CONTEXT_LENGTH,) if wanted is not None else ())
    for column in needed:
        if column not in dataset.column_names:
            raise SourceError(f"{where} has no column {column!r} (columns: {dataset.column_names})")
    if wanted is not None:
        missing = wanted - set(dataset.unique(CONTEXT_LENGTH))
        if missing:
            raise SourceError(f"{where} has no rows with context_length {sorted(missing)} "
                              f"(available: {sorted(dataset.unique(CONTEXT_LENGTH))})")
        dataset = dataset.filter(lambda length: length in wanted, input_columns=CONTEXT_LENGTH)
        log.info("%s: %d rows with context_length in %s", where, len(dataset), sorted(wanted))
    return dataset


def _one_line(text: str) -> str:
    # One line per record in our formats (queries TSV): collapse every run of whitespace, as the irds source does.
    return " ".join(str(text).split())


def documents(path: str = LONGEMBED, name: str = "needle", context_lengths: ContextLengths = None,
              **load_options) -> Iterator[dict]:
    """Yield `{"id", "text"}` for every document of the corpus split (a `title` column, if any, is prepended).

    `load_options` (`revision`, `data_files`, `cache_dir`) go to `load_split`, as in `queries` and `qrels`.
    A repeated id is an error: ids shared across context lengths would silently merge documents.
    """
    corpus = load_split(path, name, "corpus", context_lengths, **load_options)
    has_title = "title" in corpus.column_names
    seen: set[str] = set()
    for row in corpus:
        doc_id = str(row["doc_id"])
        if doc_id in seen:
            raise SourceError(f"{path} (config {name!r}) corpus: id {doc_id!r} occurs more than once")
        seen.add(doc_id)
        text = f"{row['title']} {row['text']}" if has_title and row["title"] else row["text"]
        yield {"id": doc_id, "text": _one_line(text)}


def queries(path: str = LONGEMBED, name: str = "needle", context_lengths: ContextLengths = None,
            **load_options) -> dict[str, str]:
    """`{qid: text}` from the queries split."""
    split = load_split(path, name, "queries", context_lengths, **load_options)
    result: dict[str, str] = {}
    for row in split:
        qid = str(row["qid"])
        if qid in result:
            raise SourceError(f"{path} (config {name!r}) queries: id {qid!r} occurs more than once")
        result[qid] = _one_line(row["text"])
    return result


def qrels(path: str = LONGEMBED, name: str = "needle", context_lengths: ContextLengths = None,
          **load_options) -> dict[str, dict[str, int]]:
    """`{qid: {doc_id: grade}}` from the qrels split; the grade is the `score` column, or 1 without one."""
    split = load_split(path, name, "qrels", context_lengths, **load_options)
    has_score = "score" in split.column_names
    result: dict[str, dict[str, int]] = {}
    for row in split:
        grade = int(row["score"]) if has_score else 1
        result.setdefault(str(row["qid"]), {})[str(row["doc_id"])] = grade
    return result
