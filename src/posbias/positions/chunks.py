"""Sentence-preserving chunks of a document (the study's `extract_n_chunks`, S B.4): sentences join a chunk
while it stays within `chunk_tokens` tokens (256 BERT tokens in the study), at most `max_chunks` chunks (36).

Deviations, stated: sentences come from pysbd (rule-based, no model download; the study used spaCy's
en_core_web_sm), and a sentence longer than a whole chunk is cut into word runs that fit (the study's code
is not explicit about it). As the study did, the text is first cut to 10 x max_chunks x chunk_tokens
characters, which no 36-chunk prefix exceeds in practice. A chunk's token count is the sum of its sentences'
counts, exact for WordPiece, which never joins across whitespace.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Callable

CHARS_PER_TOKEN_CUT = 10


@functools.lru_cache(maxsize=1)
def _segmenter():
    import pysbd

    return pysbd.Segmenter(language="en", clean=False)


@dataclass(frozen=True)
class Chunk:
    text: str
    start_token: int  # tokens of the chunks before it
    tokens: int


def sentences(text: str) -> list[str]:
    return [s.strip() for s in _segmenter().segment(text) if s.strip()]


def _pieces(sentence: str, limit: int, count_tokens: Callable[[str], int]) -> list[tuple[str, int]]:
    """(text, tokens) runs of a sentence, each within `limit` tokens (a word over the limit stands alone)."""
    count = count_tokens(sentence)
    if count <= limit:
        return [(sentence, count)]
    runs, words, used = [], [], 0
    for word in sentence.split():
        size = count_tokens(word)
        if words and used + size > limit:
            runs.append((" ".join(words), used))
            words, used = [], 0
        words.append(word)
        used += size
    if words:
        runs.append((" ".join(words), used))
    return runs


def chunk(text: str, chunk_tokens: int, max_chunks: int, count_tokens: Callable[[str], int]) -> list[Chunk]:
    """The document's first `max_chunks` chunks."""
    cut = CHARS_PER_TOKEN_CUT * max_chunks * chunk_tokens
    found = sentences(text[:cut])
    if len(text) > cut and len(found) > 1:
        found = found[:-1]  # the cut fell inside the last sentence
    chunks: list[Chunk] = []
    parts, used, start = [], 0, 0
    for sentence in found:
        for piece, size in _pieces(sentence, chunk_tokens, count_tokens):
            if parts and used + size > chunk_tokens:
                chunks.append(Chunk(" ".join(parts), start, used))
                if len(chunks) == max_chunks:
                    return chunks
                start, parts, used = start + used, [], 0
            parts.append(piece)
            used += size
    if parts and len(chunks) < max_chunks:
        chunks.append(Chunk(" ".join(parts), start, used))
    return chunks
