"""Outside models behind the two faces a battery asks for (`posbias.audit.spec` names them):

- a pair scorer (`PairModel`): `score(pairs, metas)` gives one relevance score per (query, document) pair, and
  `window` says how many of a document's tokens the model reads at once (`count_tokens` counts them);
- a language model (`open_language_model`) for the reader and listwise batteries, answering through the
  response cache like every language model posbias runs.

Each kind keeps its own loading code: the Hugging Face cross-encoder (`posbias.rankers.cross_encoder`), the
sentence-transformers bi-encoder with its own pooling, normalisation and similarity modules, a posbias checkpoint
(`posbias.probes.scorers.CheckpointScorer`) and the pointwise language-model ranker (`posbias.audit.llm_ranker`).
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from pathlib import Path
from typing import Mapping, Sequence

import numpy as np

from posbias.audit.spec import ModelRef
from posbias.errors import InputError

Pair = tuple[str, str]


class PairModel(ABC):
    """M(query, document) for a batch of pairs."""

    window: int | None = None  # document tokens read at once (None: no limit the audit knows of)

    @abstractmethod
    def score(self, pairs: Sequence[Pair], metas: Sequence[Mapping] | None = None) -> np.ndarray:
        """One float64 score per pair, in order; `metas` describe each pair (only mock language models read them)."""

    @abstractmethod
    def count_tokens(self, text: str) -> int:
        """The text's length in the model's own tokens (no special tokens)."""

    def describe(self) -> dict:
        """What the card's provenance shows of the loaded model."""
        return {"window": self.window}

    def input_count(self, pairs: Sequence[Pair]) -> int:
        """How many inputs the model computes to score `pairs` (one each, unless it reads windows): the cost the
        mitigation table compares."""
        return len(pairs)


class CrossEncoderModel(PairModel):
    def __init__(self, ref: ModelRef, device: str = "auto"):
        from posbias.backbones import resolve
        from posbias.rankers.cross_encoder import CrossEncoder

        options = ref.options
        _local_directory(ref)
        self.model = CrossEncoder(resolve(ref.target), revision=options.get("revision"),
                                  trust_remote_code=options.get("trust_remote_code", False), device=device,
                                  max_length=options.get("max_length"), batch_size=options.get("batch_size", 32))
        self.view = (options["window"], options.get("stride", options["window"]), options.get("aggregate", "max")) \
            if "window" in options else None
        # the most of a document the model reads in one pair: its limit less the special tokens (a query's tokens
        # come out of it too, so a long query leaves less)
        room = self.model.max_length - self.model.tokenizer.num_special_tokens_to_add(pair=True)
        if self.view and not (self.view[1] <= self.view[0] <= room):
            raise InputError(f"model spec {ref.spec!r}: windows need stride <= window <= {room} (the model's limit "
                             f"less its special tokens), got window {self.view[0]} and stride {self.view[1]}")
        # the model's own reach, windows or not: the batteries size their haystacks and grid lengths by it and the
        # reach fraction divides by it, so a window-aggregation mitigation is swept over its base's documents
        self.window = room

    def score(self, pairs, metas=None) -> np.ndarray:
        pairs = list(pairs)
        scores = self.model.score_windows(pairs, *self.view) if self.view else self.model.score(pairs)
        return np.asarray(scores, dtype=np.float64)

    def count_tokens(self, text: str) -> int:
        return len(self.model.tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"])

    def input_count(self, pairs: Sequence[Pair]) -> int:
        if not self.view:
            return len(pairs)
        return sum(len(self.model.windows(document, self.view[0], self.view[1])) for _, document in pairs)

    def describe(self) -> dict:
        config = self.model.config
        return {"architecture": (config.architectures or ["?"])[0], "labels": config.num_labels,
                "max_length": self.model.max_length, "window": self.window,
                "view": f"windows of {self.view[0]} every {self.view[1]}, {self.view[2]}" if self.view else "FirstP"}


class SentenceTransformerModel(PairModel):
    """A sentence-transformers model as it comes: its modules pool and normalise, its own similarity scores."""

    def __init__(self, ref: ModelRef, device: str = "auto"):
        from sentence_transformers import SentenceTransformer

        from posbias.backbones import resolve
        from posbias.device import pick_device

        options = ref.options
        path = _local_directory(ref) or resolve(ref.target)
        try:
            self.model = SentenceTransformer(str(path), device=str(pick_device(device)),
                                             trust_remote_code=options.get("trust_remote_code", False),
                                             revision=options.get("revision"))
        except (OSError, ValueError) as err:
            raise InputError(f"cannot load {ref.target!r} as a sentence-transformers model: "
                             f"{str(err).splitlines()[0]}") from None
        if "max_length" in options:
            self.model.max_seq_length = min(options["max_length"], self.model.max_seq_length)
        self.batch_size = options.get("batch_size", 32)
        self.window = self.model.max_seq_length - self.model.tokenizer.num_special_tokens_to_add(pair=False)
        # by side and text: a sweep's distractors recur at every position
        self._vectors: dict[tuple, np.ndarray] = {}

    def _encode(self, texts: Sequence[str], encode) -> np.ndarray:
        """Vectors of `texts` by `encode_query` or `encode_document`: each applies the model's own prompt for its
        side (E5's "query: ", a BGE instruction), when the model has one."""
        new = [text for text in dict.fromkeys(texts) if (encode.__name__, text) not in self._vectors]
        if new:
            vectors = encode(new, batch_size=self.batch_size, convert_to_numpy=True, show_progress_bar=False)
            self._vectors.update(((encode.__name__, text), vector) for text, vector in zip(new, vectors))
        return np.stack([self._vectors[(encode.__name__, text)] for text in texts])

    def score(self, pairs, metas=None) -> np.ndarray:
        import torch

        queries = self._encode([q for q, _ in pairs], self.model.encode_query)
        documents = self._encode([d for _, d in pairs], self.model.encode_document)
        similarity = self.model.similarity_pairwise(torch.from_numpy(queries), torch.from_numpy(documents))
        return similarity.double().numpy()

    def count_tokens(self, text: str) -> int:
        return len(self.model.tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"])

    def describe(self) -> dict:
        modules = [type(module).__name__ for module in self.model]
        return {"modules": " > ".join(modules), "similarity": str(self.model.similarity_fn_name),
                "max_seq_length": self.model.max_seq_length, "window": self.window}


class CheckpointModel(PairModel):
    """A ranker posbias trained, read as its geometry reads (FirstP: the first chunk)."""

    def __init__(self, ref: ModelRef, device: str = "auto"):
        from posbias.probes.scorers import CheckpointScorer

        directory = _local_directory(ref, required=True)
        self.scorer = CheckpointScorer(str(directory), batch_size=ref.options.get("batch_size", 32), device=device,
                                       precision="fp32")
        self.window = self.scorer.limit

    def score(self, pairs, metas=None) -> np.ndarray:
        return self.scorer.score(list(pairs))

    def count_tokens(self, text: str) -> int:
        return len(self.scorer.tokenizer(text, add_special_tokens=False, verbose=False)["input_ids"])

    def describe(self) -> dict:
        ranker = self.scorer.ranker
        return {"ranker": ranker.registry_name, "backbone": ranker.backbone_name, "window": self.window}


def _local_directory(ref: ModelRef, required: bool = False) -> Path | None:
    """The target as a local directory, refused when it looks like a path that is not there (a hub id has one
    slash and no leading dot or slash; offline: names resolve elsewhere)."""
    target = ref.target
    path = Path(target)
    if path.is_dir():
        return path
    looks_local = required or target.startswith((".", "/", "~")) or target.count("/") > 1 or path.exists()
    if looks_local and not target.startswith("offline:"):
        raise InputError(f"model spec {ref.spec!r}: {target} is not a directory")
    return None


def load_pair_model(ref: ModelRef, cache_dir: str, cache_mode: str, device: str = "auto") -> PairModel:
    """The pair scorer `ref` names (a kind whose capability is `pairs`)."""
    if ref.kind == "cross-encoder":
        return CrossEncoderModel(ref, device)
    if ref.kind == "bi-encoder":
        return SentenceTransformerModel(ref, device)
    if ref.kind == "checkpoint":
        return CheckpointModel(ref, device)
    if ref.kind == "llm-ranker":
        from posbias.audit.llm_ranker import PointwiseLLM

        return PointwiseLLM(open_language_model(ref, cache_dir, cache_mode))
    raise InputError(f"model spec {ref.spec!r}: a {ref.kind} does not score (query, document) pairs")


DEFAULT_WRAPPERS = {"hf_causal": "chat_template", "openai_chat": "messages", "anthropic_messages": "messages"}
_SPEC_FIELDS = ("wrapper", "revision", "base_url", "api_key_env", "context", "max_retries", "retry_wait_s", "timeout_s")


def open_language_model(ref: ModelRef, cache_dir: str, cache_mode: str):
    """The `posbias.llm.LanguageModel` of a language-model kind, answering through the response cache."""
    from posbias.llm.cache import ResponseCache
    from posbias.llm.generate import LanguageModel
    from posbias.llm.spec import ModelSpec

    # RankGPT sends chat messages: a backend without a chat template of its own takes them as they are
    wrapper = ref.options.get("wrapper", DEFAULT_WRAPPERS.get(ref.backend, "messages" if ref.kind == "rankgpt"
                                                              else "none"))
    section = {"backend": ref.backend, "model": ref.llm_model, "wrapper": wrapper,
               **{key: ref.options[key] for key in _SPEC_FIELDS if key in ref.options and key != "wrapper"},
               "options": {key: value for key, value in ref.options.items() if key not in _SPEC_FIELDS}}
    spec = ModelSpec.from_config(section, f"model spec {ref.spec!r}")
    return LanguageModel(spec, ResponseCache(cache_dir, cache_mode), name=ref.name)
