"""A tokenizer's own way of joining a query and a document into one input, applied to token ids.

Cross-encoders with one long sequence read `(query, document)` as their tokenizer joins a text pair:
`[CLS] q [SEP] d [SEP]` for BERT and Big-Bird, `<s> q </s></s> d </s>` for RoBERTa and Longformer,
`<s> q <s> d` for Llama. Documents reach the rankers as token ids (the token store), and transformers 5
keeps the pair template inside the Rust tokenizer, so `PairTemplate.of` reads it off the tokenizer by
encoding one probe pair and locating the two texts' own tokens in it: what comes before the query,
between the two, and after the document are the template's special tokens, with their token types. Where
the template puts nothing between the two texts (SmolLM2's), the end-of-sequence token separates them.
"""

from __future__ import annotations

from dataclasses import dataclass

from posbias.errors import InputError

# Probe texts: common words that every vocabulary the study uses splits the same way alone and in a pair.
PROBE_QUERY, PROBE_DOCUMENT = "hello", "world"


def _find(sequence: list[int], part: list[int], start: int) -> int:
    for index in range(start, len(sequence) - len(part) + 1):
        if sequence[index:index + len(part)] == part:
            return index
    return -1


def _name(tokenizer) -> str:
    return getattr(tokenizer, "name_or_path", type(tokenizer).__name__)


def _pad_id(tokenizer) -> int:
    """The pad token, or the end-of-sequence token for a tokenizer without one (Llama's); padding is masked."""
    pad_id = tokenizer.pad_token_id if tokenizer.pad_token_id is not None else tokenizer.eos_token_id
    if pad_id is None:
        raise InputError(f"tokenizer {_name(tokenizer)!r} has neither a pad nor an end-of-sequence token to pad with")
    return pad_id


@dataclass(frozen=True)
class PairTemplate:
    prefix: tuple[int, ...]  # special tokens before the query ([CLS], <s>)
    middle: tuple[int, ...]  # between query and document ([SEP], </s></s>, <s>)
    suffix: tuple[int, ...]  # after the document ([SEP], </s>, or none)
    # Token types of the parts, or None when the tokenizer emits none (`model_input_names`).
    types: tuple[tuple[int, ...], int, tuple[int, ...], int, tuple[int, ...]] | None
    pad_id: int

    @property
    def special_tokens(self) -> int:
        return len(self.prefix) + len(self.middle) + len(self.suffix)

    @classmethod
    def of(cls, tokenizer) -> "PairTemplate":
        """The pair template of a Hugging Face tokenizer. A tokenizer without a pad token (Llama's) pads
        with its end-of-sequence token; padding is masked either way."""
        name, pad_id = _name(tokenizer), _pad_id(tokenizer)
        query = tokenizer(PROBE_QUERY, add_special_tokens=False)["input_ids"]
        document = tokenizer(PROBE_DOCUMENT, add_special_tokens=False)["input_ids"]
        wants_types = "token_type_ids" in tokenizer.model_input_names
        pair = tokenizer(PROBE_QUERY, PROBE_DOCUMENT, return_token_type_ids=wants_types)
        ids = pair["input_ids"]
        at_query = _find(ids, query, 0)
        at_document = _find(ids, document, at_query + len(query)) if at_query >= 0 else -1
        if at_document < 0:
            raise InputError(f"tokenizer {name!r}: cannot find the pair template (the probe texts "
                             f"{PROBE_QUERY!r} and {PROBE_DOCUMENT!r} are not tokenised alike alone and in a pair)")
        end = at_document + len(document)
        parts = (slice(0, at_query), slice(at_query + len(query), at_document), slice(end, len(ids)))
        types = None
        if wants_types:
            t = pair["token_type_ids"]
            types = (tuple(t[parts[0]]), t[at_query], tuple(t[parts[1]]), t[at_document], tuple(t[parts[2]]))
        middle = tuple(ids[parts[1]])
        if not middle and tokenizer.eos_token_id is not None:
            # A tokenizer that joins a pair with nothing between (GPT-2-style BPE, SmolLM2's) would run the
            # document on from the query: its end-of-sequence token marks the boundary (ours), typed as the query.
            middle = (tokenizer.eos_token_id,)
            if types is not None:
                types = (types[0], types[1], (types[1],), types[3], types[4])
        return cls(tuple(ids[parts[0]]), middle, tuple(ids[parts[2]]), types, pad_id)


@dataclass(frozen=True)
class SequenceTemplate:
    """A tokenizer's special tokens around one text: `[CLS] t [SEP]` for BERT, `<s> t </s>` for RoBERTa,
    `<s> t` for Llama (what a bi-encoder reads its query and its document in)."""

    prefix: tuple[int, ...]
    suffix: tuple[int, ...]
    pad_id: int

    @property
    def special_tokens(self) -> int:
        return len(self.prefix) + len(self.suffix)

    @classmethod
    def of(cls, tokenizer) -> "SequenceTemplate":
        name, pad_id = _name(tokenizer), _pad_id(tokenizer)
        text = tokenizer(PROBE_QUERY, add_special_tokens=False)["input_ids"]
        ids = tokenizer(PROBE_QUERY)["input_ids"]
        at = _find(ids, text, 0)
        if at < 0:
            raise InputError(f"tokenizer {name!r}: cannot find its single-text template (the probe text "
                             f"{PROBE_QUERY!r} is not tokenised alike with and without special tokens)")
        return cls(tuple(ids[:at]), tuple(ids[at + len(text):]), pad_id)


# What a bi-encoder puts before the query's and the document's text (`prefixes`): nothing, as the study's
# authors ran E5-4K, or the E5 models' training convention.
PREFIXES = {"none": ("", ""), "e5": ("query: ", "passage: ")}


def prefix_ids(tokenizer, prefixes: str) -> tuple[tuple[int, ...], tuple[int, ...]]:
    """The token ids of the query's and the document's prefix (no special tokens)."""
    if prefixes not in PREFIXES:
        raise InputError(f"prefixes {prefixes!r} is not one of {sorted(PREFIXES)}")
    return tuple(tuple(tokenizer(text, add_special_tokens=False)["input_ids"]) if text else ()
                 for text in PREFIXES[prefixes])
