"""Dataset statistics for Tables 9 (collections) and 10 (query sets).

Tokens are counted as the rankers see them: without special tokens, with a document's title joined
to its text (as `posbias.io.iter_documents` does). Collections are streamed and tokenized in batches
with the fast tokenizer, so a corpus of millions need not fit in memory; a seeded reservoir sample
can stand in for the full collection when tokenizing everything would take too long. A collection
the rankers already tokenised with the same tokenizer is counted from its token store instead.
"""

from __future__ import annotations

import json
import logging
import os
import random
from typing import Callable, Iterable

from tqdm import tqdm

from posbias.backbones import load_tokenizer
from posbias.io import atomic_write, batched, iter_documents, read_qrels, read_queries

log = logging.getLogger(__name__)


def batch_token_counter(name: str) -> Callable[[list[str]], list[int]]:
    """A function counting the tokens (no special tokens) of each text of a batch; `whitespace` splits on spaces.

    The batched counterpart of `posbias.backbones.token_counter`, without its cache: a collection's
    texts are seen once, and caching them would hold the collection in memory.
    """
    if name == "whitespace":
        return lambda texts: [len(text.split()) for text in texts]
    tokenizer = load_tokenizer(name)

    def count(texts: list[str]) -> list[int]:
        if not texts:  # the tokenizer fails on an empty batch
            return []
        # verbose=False: texts longer than the model's maximum length are expected here, not an error.
        encoded = tokenizer(list(texts), add_special_tokens=False, return_attention_mask=False,
                            return_token_type_ids=False, verbose=False)
        return [len(ids) for ids in encoded["input_ids"]]

    return count


def _total_tokens(texts: Iterable[str], count: Callable[[list[str]], list[int]], batch_size: int) -> int:
    return sum(sum(count(batch)) for batch in batched(texts, batch_size))


def _reservoir(items: Iterable[str], size: int, seed: int) -> tuple[int, list[str]]:
    """How many items there were and a uniform sample of `size` of them (all of them if fewer); Algorithm R."""
    rng = random.Random(seed)
    sample: list[str] = []
    seen = 0
    for seen, item in enumerate(items, start=1):
        if len(sample) < size:
            sample.append(item)
        else:
            slot = rng.randrange(seen)
            if slot < size:
                sample[slot] = item
    return seen, sample


def collection_statistics(docs: str | os.PathLike, tokenizer: str, sample: int | None = None, seed: int = 0,
                          batch_size: int = 1000, progress: bool = True) -> dict:
    """`{"n_documents", "avg_tokens", "sampled"}` for a JSONL document file (possibly compressed).

    With `sample`, the average is over a seeded uniform sample of that many documents (all of them
    when the collection is no larger); `n_documents` is always the full count and `sampled` says how
    many documents were tokenized.
    """
    if sample is not None and sample < 1:
        raise ValueError(f"sample must be positive, got {sample}")
    if batch_size < 1:
        raise ValueError(f"batch_size must be positive, got {batch_size}")
    count = batch_token_counter(tokenizer)
    texts = (text for _, text in tqdm(iter_documents(docs), desc=f"statistics {os.path.basename(docs)}",
                                      unit="doc", mininterval=10, disable=not progress))
    if sample is None:
        n_documents = tokens = 0
        for batch in batched(texts, batch_size):
            n_documents += len(batch)
            tokens += sum(count(batch))
        sampled = n_documents
    else:
        n_documents, kept = _reservoir(texts, sample, seed)
        tokens = _total_tokens(kept, count, batch_size)
        sampled = len(kept)
    if not n_documents:
        raise ValueError(f"{docs}: no documents")
    return {"n_documents": n_documents, "avg_tokens": tokens / sampled, "sampled": sampled}


def store_statistics(store_dir: str | os.PathLike, tokenizer: str) -> dict:
    """`collection_statistics` from a token store made with `tokenizer` (it records every document's full
    length), without tokenising anything again."""
    from posbias.data.token_store import TokenStore

    with TokenStore(store_dir) as store:
        if store.meta["tokenizer"] != tokenizer:
            raise ValueError(f"{store_dir} was tokenised with {store.meta['tokenizer']!r}, not {tokenizer!r}")
        return {"n_documents": len(store), "avg_tokens": store.meta["full_tokens"] / len(store),
                "sampled": len(store)}


def queryset_statistics(queries: str | os.PathLike, qrels: str | os.PathLike, tokenizer: str,
                        rel_level: int = 1) -> dict:
    """`{"n_queries", "avg_tokens", "avg_positive_judgments", "n_judged_queries"}` for a query set.

    Positive judgments are those graded `rel_level` or higher, averaged over the judged queries (those
    of the queries file with at least one qrels line); qrels of queries not in the file are ignored.
    """
    texts = read_queries(queries)
    if not texts:
        raise ValueError(f"{queries}: no queries")
    all_judged = read_qrels(qrels)
    judged = {qid: grades for qid, grades in all_judged.items() if qid in texts}
    if not judged:
        raise ValueError(f"{qrels}: none of the queries in {queries} is judged")
    if len(judged) < len(all_judged):
        log.warning("%s: ignoring the judgments of %d queries not in %s",
                    qrels, len(all_judged) - len(judged), queries)
    tokens = _total_tokens(texts.values(), batch_token_counter(tokenizer), batch_size=1000)
    positives = sum(sum(grade >= rel_level for grade in grades.values()) for grades in judged.values())
    return {"n_queries": len(texts), "avg_tokens": tokens / len(texts),
            "avg_positive_judgments": positives / len(judged), "n_judged_queries": len(judged)}


def write_statistics(stats: dict, path: str | os.PathLike) -> None:
    with atomic_write(path) as out:
        json.dump(stats, out, indent=2, sort_keys=True)
        out.write("\n")


def read_statistics(path: str | os.PathLike) -> dict:
    with open(path, encoding="utf-8") as handle:
        return json.load(handle)
