"""Cut documents to their first N tokens of a named tokenizer (the study: MS MARCO documents to 1431 BERT tokens).

A cut keeps the original text up to the end of the N-th token, found with the fast tokenizer's offset
mapping, so the kept text is the document's own characters, not a detokenised approximation; with a
WordPiece tokenizer (BERT) it re-tokenises to exactly N tokens. Tokens are counted without special tokens.
Long documents are tokenised only as far as needed (a head ending at a word boundary).
Documents stream from JSONL to JSONL in batches, so a corpus of millions need not fit in memory.
"""

from __future__ import annotations

import json
import logging
import os
import re
from typing import Iterator, NamedTuple

from tqdm import tqdm

from posbias.backbones import load_tokenizer
from posbias.errors import InputError
from posbias.io import atomic_write, batched, document_records

log = logging.getLogger(__name__)

# Only a head of each text, this many characters per kept token, is tokenised at first (BERT averages
# 4-5 on English); a text whose head has too few tokens to decide the cut is then tokenised in full.
CHARS_PER_TOKEN = 10
_LAST_GAP = re.compile(r"[ \t\n\r]+[^ \t\n\r]*$")


class TruncationCounts(NamedTuple):
    documents: int
    cut: int


def fast_tokenizer(tokenizer):
    """The tokenizer itself, or `load_tokenizer(name)`; one without offset mappings (a slow one) is an error."""
    if isinstance(tokenizer, str):
        tokenizer = load_tokenizer(tokenizer)
    if not getattr(tokenizer, "is_fast", False):
        raise InputError(f"{type(tokenizer).__name__} is a slow tokenizer; truncation needs the offset mapping "
                         f"of a fast (Rust `tokenizers`) one")
    return tokenizer


def _head(text: str, chars: int) -> str:
    """The text before its last run of spaces, tabs or newlines within the first `chars` characters.

    Tokenizers split words at these characters, so the head ends with a whole word and its tokens are
    exactly the first tokens of the whole text: a long document need not be tokenised in full.
    """
    if len(text) <= chars:
        return text
    last_gap = _LAST_GAP.search(text, 0, chars)
    return text[:last_gap.start()] if last_gap else text


def _cut_points(texts: list[str], tokenizer, max_tokens: int) -> list[int | None]:
    """Where each text's `max_tokens`-th token ends, or None for a text no longer than that."""
    if not texts:  # the tokenizer fails on an empty batch
        return []
    # One token more than the limit tells a long text from one of exactly max_tokens.
    encoded = tokenizer(texts, add_special_tokens=False, return_offsets_mapping=True, return_attention_mask=False,
                        return_token_type_ids=False, truncation=True, max_length=max_tokens + 1)
    return [offsets[max_tokens - 1][1] if len(offsets) > max_tokens else None
            for offsets in encoded["offset_mapping"]]


def truncate_texts(texts: list[str], tokenizer, max_tokens: int,
                   chars_per_token: int = CHARS_PER_TOKEN) -> list[str]:
    """Each text cut to its first `max_tokens` tokens; texts no longer than that are returned as they are."""
    if max_tokens < 1:
        raise InputError(f"max_tokens must be positive, got {max_tokens}")
    heads = [_head(text, chars_per_token * (max_tokens + 1)) for text in texts]
    # A head with more than max_tokens tokens fixes the cut; one without says nothing about the rest of
    # its text, so those texts are tokenised in full.
    ends = _cut_points(heads, tokenizer, max_tokens)
    unsure = [i for i, end in enumerate(ends) if end is None and len(heads[i]) < len(texts[i])]
    for i, end in zip(unsure, _cut_points([texts[i] for i in unsure], tokenizer, max_tokens)):
        ends[i] = end
    return [text if end is None else text[:end] for text, end in zip(texts, ends)]


def _records(path: str | os.PathLike) -> Iterator[dict]:
    for record in document_records(path):
        title = record.pop("title", None)
        if title:
            # The budget covers what a ranker reads, title included (as `posbias.io.read_documents` joins them).
            record["text"] = f"{title} {record['text']}"
        yield record


def truncate_documents(source: str | os.PathLike, target: str | os.PathLike, tokenizer, max_tokens: int,
                       batch_size: int = 256, progress: bool = True) -> TruncationCounts:
    """Write `target` (JSONL) with every document of `source` (JSONL, possibly compressed) cut to `max_tokens`.

    `tokenizer` is a name for `posbias.backbones.load_tokenizer` or a fast tokenizer. A `title` field is
    folded into the text before counting. Other fields pass through. Returns how many documents were read
    and how many were cut.
    """
    tokenizer = fast_tokenizer(tokenizer)
    documents = cut = 0
    records = tqdm(_records(source), desc=f"truncate to {max_tokens}", unit="doc", mininterval=10,
                   disable=not progress)
    with atomic_write(target) as out:
        for batch in batched(records, batch_size):
            texts = [record["text"] for record in batch]
            for record, text in zip(batch, truncate_texts(texts, tokenizer, max_tokens)):
                cut += len(text) < len(record["text"])
                out.write(json.dumps({**record, "text": text}, ensure_ascii=False) + "\n")
            documents += len(batch)
        if not documents:  # raised before the output is renamed into place: nothing is written
            raise InputError(f"{source}: no documents to truncate: the file is empty")
    log.info("%s: cut %d of %d documents to %d tokens", source, cut, documents, max_tokens)
    return TruncationCounts(documents, cut)
