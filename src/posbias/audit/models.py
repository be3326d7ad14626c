"""Outside models behind the two faces a battery asks for, loaded from the model spec that names them
(`posbias.audit.spec`):

- a pair scorer (`load_pair_model`), one of the kinds of `posbias.scoring`: a Hugging Face cross-encoder
  (`posbias.scoring.cross_encoder`), a sentence-transformers bi-encoder with its own pooling, normalisation and
  similarity modules (`posbias.scoring.bi_encoder`), a posbias checkpoint (`posbias.scoring.ranker.RankerScorer`,
  which the study reranks and the probes score with too) or a language model as a pointwise ranker
  (`posbias.scoring.llm_ranker`);
- a language model (`open_language_model`) for the reader and listwise batteries, answering through the
  response cache like every language model posbias runs.
"""

from __future__ import annotations

from pathlib import Path

from posbias.audit.spec import ModelRef
from posbias.errors import InputError
from posbias.scoring.protocol import Scorer


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


def load_pair_model(ref: ModelRef, cache_dir: str, cache_mode: str, device: str = "auto") -> Scorer:
    """The pair scorer `ref` names (a kind whose capability is `pairs`)."""
    options = ref.options
    if ref.kind == "cross-encoder":
        from posbias.backbones import resolve
        from posbias.scoring.cross_encoder import CrossEncoder

        _local_directory(ref)
        return CrossEncoder(resolve(ref.target), revision=options.get("revision"),
                            trust_remote_code=options.get("trust_remote_code", False), device=device,
                            max_length=options.get("max_length"), batch_size=options.get("batch_size", 32),
                            view_window=options.get("window"), view_stride=options.get("stride"),
                            aggregate=options.get("aggregate", "max"))
    if ref.kind == "bi-encoder":
        from posbias.backbones import resolve
        from posbias.scoring.bi_encoder import SentenceTransformerScorer

        return SentenceTransformerScorer(str(_local_directory(ref) or resolve(ref.target)), ref.target, device,
                                         options.get("trust_remote_code", False), options.get("revision"),
                                         options.get("max_length"), options.get("batch_size", 32),
                                         _calibration(options))
    if ref.kind == "checkpoint":
        from posbias.scoring.ranker import RankerScorer

        return RankerScorer.from_checkpoint(str(_local_directory(ref, required=True)), device=device,
                                            batch_size=options.get("batch_size", 32), precision="fp32", tf32=False,
                                            onednn=False)  # as the probes score a checkpoint (RankerScorer)
    if ref.kind == "llm-ranker":
        from posbias.scoring.llm_ranker import PointwiseLLM

        return PointwiseLLM(open_language_model(ref, cache_dir, cache_mode))
    raise InputError(f"model spec {ref.spec!r}: a {ref.kind} does not score (query, document) pairs")


def _calibration(options: dict):
    """A bi-encoder's attention calibration (`posbias.scoring.embedder_calibration`) when its spec asks for one."""
    from posbias.audit.spec import CALIBRATION

    if not any(key in options for key in CALIBRATION):
        return None
    from posbias.scoring.embedder_calibration import Calibration

    return Calibration(**{key.removeprefix("calibration_"): options[key] for key in CALIBRATION if key in options})


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
