"""De-biased training documents (the long-document study's RQ3; spec: shared/specs/longdoc.md §2): each document's
words are split at random word boundaries and the segments reordered, so that where the answer sits no longer
tells a ranker whether a document is relevant.

The study, following Hofstätter et al. (2021a), "randomly split documents at word boundaries and then concatenated
the shuffled segments", without saying how many splits. The default here is one split with the two segments
always swapped: a random rotation, which moves an answer at the start of a document to a uniform offset.
`n_splits = k` cuts k times and permutes the k + 1 segments uniformly instead (the identity order included).

The transform is applied to every training document alike, positives and negatives, on the whole text before
truncation; otherwise reordering itself would mark the relevant documents. It is deterministic per (document id,
seed): `random.Random` seeded with the string "<seed>:<doc id>", which Python hashes with SHA-512, so the same
document is cut the same way in every process and on every machine. Words are whitespace-separated tokens and are
re-joined with single spaces; a title stays a separate field, in front of the reordered text.
"""

from __future__ import annotations

import random
from typing import Iterable, Iterator, Mapping


def debias(text: str, doc_id: str, seed: int, n_splits: int = 1) -> str:
    """`text` with its words cut at `n_splits` random word boundaries (fewer if the document has fewer) and the
    segments reordered: swapped for one split, uniformly permuted for more. A document of one word is unchanged."""
    if n_splits < 1:
        raise ValueError(f"n_splits must be at least 1, got {n_splits}")
    words = text.split()
    if len(words) < 2:
        return " ".join(words)
    rng = random.Random(f"{seed}:{doc_id}")
    cuts = sorted(rng.sample(range(1, len(words)), min(n_splits, len(words) - 1)))
    bounds = [0, *cuts, len(words)]
    segments = [words[start:end] for start, end in zip(bounds, bounds[1:])]
    if len(segments) == 2:
        segments.reverse()  # the rotation: always swapped, or half the documents would keep their order
    else:
        rng.shuffle(segments)
    return " ".join(word for segment in segments for word in segment)


def debias_documents(records: Iterable[Mapping], seed: int, n_splits: int = 1) -> Iterator[dict]:
    """Document records (`id`, `text`, other fields as they are) with their text de-biased."""
    for record in records:
        yield {**record, "text": debias(record["text"], str(record["id"]), seed, n_splits)}
