"""The layout of a cross-encoder input, and whether a backbone has position embeddings for it.

A document (its token ids) is cut to `max_doc_tokens` and split into windows of `chunk_tokens`
tokens every `stride` tokens (stride == chunk_tokens gives disjoint chunks). Each window becomes
one input `[CLS] query [SEP] window [SEP]`, with the query cut to `max_query_tokens`; with
`pad_query` the query is padded to `max_query_tokens` with masked pad tokens, so every window
starts at the same position (as the study's authors did).

Rankers that read one sequence (`longp`) or encode query and document apart (`biencoder`) lay inputs out in
their tokenizer's own template (`posbias.rankers.pair_template`), so how many positions they need depends on
the tokenizer: `longest_input` counts them for every ranker.

This module imports neither torch nor transformers at load time: the workflow checks model
arguments with it when it builds the graph.
"""

from __future__ import annotations

import functools
import json
import math
from dataclasses import dataclass
from pathlib import Path
from types import SimpleNamespace
from typing import Mapping

from posbias.errors import InputError
from posbias.rankers.catalog import BY_NAME
from posbias.rankers.declaration import InputTemplate

SPECIAL_TOKENS = 3  # the chunked layout: [CLS], [SEP] after the query, [SEP] after the window
SINGLE_TEXT_SPECIAL_TOKENS = 2  # [CLS] text [SEP]: a bi-encoder's guess when its tokenizer is not at hand

# Architectures whose position ids count from padding_idx + 1 (fairseq's convention), so
# max_position_embeddings = usable positions + pad_token_id + 1 (RoBERTa: 514 = 512 + 2).
PADDING_OFFSET_MODEL_TYPES = frozenset({
    "roberta", "roberta-prelayernorm", "xlm-roberta", "xlm-roberta-xl", "camembert", "longformer", "mpnet",
    "data2vec-text", "ibert", "luke", "xmod",
})


@dataclass(frozen=True)
class ChunkGeometry:
    max_query_tokens: int
    chunk_tokens: int
    stride: int
    max_doc_tokens: int
    pad_query: bool = False  # pad the query to max_query_tokens (masked), so documents start at a fixed position

    def __post_init__(self):
        for name in ("max_query_tokens", "chunk_tokens", "stride", "max_doc_tokens"):
            if getattr(self, name) < 1:
                raise InputError(f"chunk geometry: {name} must be positive, got {getattr(self, name)}")
        if self.stride > self.chunk_tokens:
            raise InputError(f"chunk geometry: stride {self.stride} > chunk_tokens {self.chunk_tokens} would skip text")
        if self.max_doc_tokens < self.chunk_tokens:
            raise InputError(f"chunk geometry: max_doc_tokens {self.max_doc_tokens} < chunk_tokens {self.chunk_tokens}")

    @classmethod
    def from_args(cls, args: Mapping) -> "ChunkGeometry":
        """The geometry of a ranker's arguments (`models.<name>.args`)."""
        return cls(args["max_query_tokens"], args["chunk_tokens"], args["stride"], args["max_doc_tokens"],
                   bool(args.get("pad_query", False)))

    @property
    def max_chunks(self) -> int:
        return 1 + math.ceil(max(0, self.max_doc_tokens - self.chunk_tokens) / self.stride)

    def windows(self, n_tokens: int) -> list[tuple[int, int]]:
        """Token spans of the chunks of a document with `n_tokens` tokens (at least one chunk)."""
        n_tokens = min(n_tokens, self.max_doc_tokens)
        spans = [(0, min(self.chunk_tokens, n_tokens))]
        start = self.stride
        while start + self.chunk_tokens - self.stride < n_tokens and len(spans) < self.max_chunks:
            spans.append((start, min(start + self.chunk_tokens, n_tokens)))
            start += self.stride
        return spans


def position_limit(config) -> int | None:
    """How many positions a backbone with this Hugging Face config can encode; None when it has no
    learned position table (ALiBi models extrapolate) or does not say."""
    # MOSAIC BERT's config says model_type bert and 512 max_position_embeddings, which its code never reads: it has
    # no position table, only an ALiBi bias that it builds for `alibi_starting_size` positions and rebuilds longer
    # when an input needs it. So no limit, as for other ALiBi models (alibi_starting_size is a pre-allocation, and
    # the study's LongP reads 1431 tokens with it).
    if getattr(config, "position_embedding_type", None) == "alibi" or getattr(config, "alibi_starting_size", None):
        return None
    limit = getattr(config, "max_position_embeddings", None)
    if not isinstance(limit, int):
        return None
    if getattr(config, "model_type", None) in PADDING_OFFSET_MODEL_TYPES:
        limit -= (getattr(config, "pad_token_id", None) or 0) + 1
    return limit


def geometry_limit(backbone: str, trust_remote_code: bool = False) -> int | None:
    """`position_limit` of a backbone, from its config alone (local files only, never the network);
    None when the config cannot be read here (a hub name not in the local cache)."""
    from posbias.backbones import resolve
    from posbias.staging.offline import NotStagedError

    try:
        path = resolve(backbone)  # an unknown offline: name is an error, not an unreadable config
    except NotStagedError:  # offline and not staged yet: the job that loads it says so
        return None
    found = config_file(path)
    if found is None:
        return None
    plain = plain_config(found)
    if plain is not None:
        return position_limit(plain)
    from transformers import AutoConfig

    try:
        config = AutoConfig.from_pretrained(path, local_files_only=True,
                                            trust_remote_code=trust_remote_code)
    except (OSError, ValueError):
        return None
    return position_limit(config)


def config_file(path: str) -> Path | None:
    """The `config.json` of a local model directory, or of a hub name in the local Hugging Face cache (where
    transformers would find it offline); None when there is none."""
    if Path(path).is_dir():
        found = Path(path) / "config.json"
        return found if found.is_file() else None
    from huggingface_hub import try_to_load_from_cache

    try:
        cached = try_to_load_from_cache(path, "config.json")
    except ValueError:  # not a hub name either
        return None
    return Path(cached) if isinstance(cached, str) else None


def plain_config(config_file: Path):
    """A `config.json` read as plain JSON, when it states everything `position_limit` reads; otherwise None
    (then transformers builds the config, with its class defaults). Every workflow command checks the models'
    geometry, and importing transformers to read three numbers would double the time a dry run takes."""
    try:
        config = json.loads(Path(config_file).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    if not isinstance(config, dict) or not isinstance(config.get("max_position_embeddings"), int) \
            or not isinstance(config.get("model_type"), str):
        return None  # a limit under another name (an attribute map) or a class default: transformers knows
    if config["model_type"] in PADDING_OFFSET_MODEL_TYPES and not isinstance(config.get("pad_token_id"), int):
        return None
    return SimpleNamespace(**{key: config.get(key) for key in
                              ("model_type", "max_position_embeddings", "position_embedding_type", "pad_token_id",
                               "alibi_starting_size")})


def longest_input(template: InputTemplate, geometry: ChunkGeometry, tokenizer=None,
                  prefixes: str = "none") -> tuple[int, str]:
    """How many positions the longest input laid out in `template` (the ranker's declaration's) takes with this
    geometry, and how they add up (for errors). CHUNK: `[CLS] query [SEP] window [SEP]`. PAIR: query and document
    in the tokenizer's pair template (RoBERTa's has 4 special tokens, Llama's 2). SINGLE: the longer of query and
    document, each in the tokenizer's single-text template after its prefix (`prefixes`). Without a tokenizer the
    counts are the [CLS]/[SEP] ones, a lower bound the featurizer checks again with the tokenizer."""
    from posbias.rankers.pair_template import PairTemplate, SequenceTemplate, prefix_ids

    query, chunk = geometry.max_query_tokens, geometry.chunk_tokens
    if template is InputTemplate.SINGLE:
        specials = SequenceTemplate.of(tokenizer).special_tokens if tokenizer is not None else SINGLE_TEXT_SPECIAL_TOKENS
        query_prefix, doc_prefix = (len(ids) for ids in prefix_ids(tokenizer, prefixes)) if tokenizer is not None \
            else (0, 0)
        return (max(query + query_prefix, chunk + doc_prefix) + specials,
                f"the longer of max_query_tokens ({query}) + {query_prefix} prefix tokens and max_doc_tokens ({chunk}) "
                f"+ {doc_prefix} prefix tokens, + {specials} special tokens")
    specials = PairTemplate.of(tokenizer).special_tokens if template is InputTemplate.PAIR and tokenizer is not None \
        else SPECIAL_TOKENS
    return (query + chunk + specials,
            f"chunk_tokens ({chunk}) + max_query_tokens ({query}) + {specials} special tokens")


def refuse_overlong(positions: tuple[int, str], limit: int | None, backbone: str) -> None:
    """An InputError when an input needs more positions (`longest_input`) than the backbone has
    (the embedding lookup would fail, or silently wrap on some devices)."""
    length, parts = positions
    if limit is not None and length > limit:
        raise InputError(f"model args: {parts} = {length} positions, but backbone {backbone!r} has {limit} "
                         f"(max_position_embeddings); lower the document or query budget")


@functools.lru_cache(maxsize=16)
def local_tokenizer(name: str, trust_remote_code: bool = False):
    """A tokenizer from local files only (never the network); None when it cannot be read here. Cached: the
    graph check reads the same few tokenizers for many models."""
    from transformers import AutoTokenizer

    from posbias.backbones import resolve

    try:
        return AutoTokenizer.from_pretrained(resolve(name), local_files_only=True, trust_remote_code=trust_remote_code)
    except (OSError, ValueError):
        return None


# More tokens than any template and prefix adds beyond the [CLS]/[SEP] count: a geometry this far below the
# limit fits whatever the tokenizer, so the graph check need not load it.
TEMPLATE_SLACK = 16


def check_geometry(ranker: str, args: Mapping) -> None:
    """Refuse ranker arguments (`models.<name>.args`) whose inputs are longer than their backbone's
    position embeddings. Reads only the backbone's config (and, for rankers in their tokenizer's template,
    the tokenizer); a config that cannot be read offline is not checked here (the ranker checks again with
    the loaded model)."""
    geometry, template = ChunkGeometry.from_args(args), BY_NAME[ranker].template
    trust = bool(args.get("trust_remote_code", False))
    limit = geometry_limit(args["backbone"], trust)
    if limit is None:
        return
    if template.from_tokenizer and longest_input(template, geometry)[0] + TEMPLATE_SLACK <= limit:
        return  # fits with room to spare for any template: no tokenizer to load when the graph is built
    tokenizer = local_tokenizer(args.get("tokenizer", args["backbone"]), trust) if template.from_tokenizer else None
    refuse_overlong(longest_input(template, geometry, tokenizer, args.get("prefixes", "none")), limit,
                    args["backbone"])
