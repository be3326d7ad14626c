"""What `posbias audit --model <spec>` names: a model kind, where its weights or server are, and options.

    KIND:TARGET[?key=value&key=value...]

- `cross-encoder:DIR-OR-HUB-ID`: a Hugging Face sequence-classification model (`posbias.scoring.cross_encoder`);
  options `revision`, `trust_remote_code`, `max_length`, `batch_size`, and `window`/`stride`/`aggregate` (max or
  first) to read a document window by window with the same model (zero-shot MaxP);
- `bi-encoder:DIR-OR-HUB-ID`: a sentence-transformers model with its own modules (pooling, normalisation) and
  similarity; options `revision`, `trust_remote_code`, `max_length`, `batch_size`, and `calibration_basket`/
  `calibration_strength`/`calibration_depth` to encode with its attention calibrated
  (`posbias.scoring.embedder_calibration`; any one of them turns it on, the others keep their defaults);
- `checkpoint:DIR`: a ranker posbias trained (`posbias train`); option `batch_size`;
- `llm-ranker:BACKEND:MODEL`: a language model asked whether the document is relevant, scored pointwise;
- `rankgpt:BACKEND:MODEL`: the same language models as listwise rerankers (RankGPT's sliding window);
- `reader:BACKEND:MODEL`: a language model answering questions over retrieved documents (Lost in the Middle);
- `judge:BACKEND:MODEL`: a language model judging which of two answers is better, asked in both orders
  (`posbias.judges`);
- `judge-replay:FILE`: a judge's recorded judgments (a `posbias.judges.records` file) answering again; option
  `judge` names the judge where the file holds several; `judge-replay:released:NAME` replays the
  Judging-the-Judges records shipped with the package (`posbias/judges/released/NAME.jsonl.gz`).

For the language-model kinds (llm-ranker, rankgpt, reader, judge), BACKEND is a `posbias.llm` backend (hf_causal,
hf_seq2seq, openai_chat, openai_completions, anthropic_messages, mock) and MODEL what that backend loads or calls; options `wrapper`, `revision`, `base_url`,
`api_key_env`, `context`, `dtype`, `device`, `batch_size`, `trust_remote_code`, and for an API or a server
`max_retries` (a whole number, 0 or more), `retry_wait_s` (seconds, 0 or more) and `timeout_s` (seconds, more
than 0), as a language model's config block has them (`posbias.llm.spec.ModelSpec`). Every kind takes `name` (the
audit's directory and the leaderboard's row; by default made from the target). `trust_remote_code` is false
unless the spec says `trust_remote_code=true`. Keys are never part of a spec: `api_key_env` names the variable.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from urllib.parse import parse_qsl

from posbias.errors import InputError
from posbias.llm.spec import BACKENDS, check_setting

# What each kind can be asked to do: score (query, document) pairs, rerank a list, or answer from documents.
CAPABILITIES = {"cross-encoder": "pairs", "bi-encoder": "pairs", "checkpoint": "pairs", "llm-ranker": "pairs",
                "rankgpt": "list", "reader": "reader", "judge": "judge", "judge-replay": "judge"}
LLM_KINDS = ("llm-ranker", "rankgpt", "reader", "judge")
_HF = ("revision", "trust_remote_code", "max_length", "batch_size")
_LLM = ("wrapper", "revision", "base_url", "api_key_env", "context", "dtype", "device", "batch_size",
        "trust_remote_code", "max_retries", "retry_wait_s", "timeout_s")
CALIBRATION = ("calibration_basket", "calibration_strength", "calibration_depth")  # a bi-encoder's attention
OPTIONS = {"cross-encoder": (*_HF, "window", "stride", "aggregate"), "bi-encoder": (*_HF, *CALIBRATION),
           "checkpoint": ("batch_size",),
           "llm-ranker": _LLM, "rankgpt": _LLM, "reader": _LLM, "judge": _LLM, "judge-replay": ("judge",)}
INTEGERS = ("max_length", "batch_size", "window", "stride", "context", "calibration_basket")
SHARES = ("calibration_strength", "calibration_depth")  # numbers in (0, 1]
BOOLEANS = ("trust_remote_code",)
# How long a language model's API call may keep failing: (smallest value, above it only, a whole number)
RETRY_SETTINGS = {"max_retries": (0, False, True), "retry_wait_s": (0, False, False), "timeout_s": (0, True, False)}


@dataclass(frozen=True)
class ModelRef:
    kind: str
    target: str  # a directory or hub id; BACKEND:MODEL for the language-model kinds
    options: dict = field(default_factory=dict)
    name: str = ""
    spec: str = ""  # as written

    @property
    def capability(self) -> str:
        return CAPABILITIES[self.kind]

    @property
    def backend(self) -> str:
        return self.target.split(":", 1)[0]

    @property
    def llm_model(self) -> str:
        return self.target.split(":", 1)[1]


def default_name(kind: str, target: str, options: dict) -> str:
    """A directory-safe name from the kind, the target's last path part and any view options."""
    last = target.rstrip("/").split("/")[-1].replace("offline:", "")
    view = "-".join(f"{key}{options[key]}" for key in ("window", "aggregate") if key in options)
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", "-".join(part for part in (kind, last, view) if part)).strip("-")


def parse_model_spec(spec: str) -> ModelRef:
    """A `ModelRef` from a spec string (see the module docstring); anything else is one InputError naming it."""
    where = f"model spec {spec!r}"
    kind, sep, rest = spec.partition(":")
    if not sep or kind not in CAPABILITIES:
        raise InputError(f"{where}: expected KIND:TARGET with KIND one of {', '.join(CAPABILITIES)}")
    target, _, query = rest.partition("?")
    if not target:
        raise InputError(f"{where}: nothing after {kind}: (a directory, a hub id, or BACKEND:MODEL)")
    if kind in LLM_KINDS:
        backend, sep, model = target.partition(":")
        if not sep or backend not in BACKENDS or not model:
            raise InputError(f"{where}: a {kind} is {kind}:BACKEND:MODEL with BACKEND one of {', '.join(BACKENDS)}")
    try:
        pairs = parse_qsl(query, keep_blank_values=True, strict_parsing=bool(query))
    except ValueError:
        raise InputError(f"{where}: options must be key=value pairs joined by &") from None
    options: dict = {}
    for key, value in pairs:
        if key != "name" and key not in OPTIONS[kind]:
            raise InputError(f"{where}: unknown option {key!r} for a {kind}; known: {', '.join(OPTIONS[kind])}, name")
        options[key] = _value(key, value, where)
    name = options.pop("name", "") or default_name(kind, target, options)
    check_name(name, where)
    if ("stride" in options or "aggregate" in options) and "window" not in options:
        raise InputError(f"{where}: stride and aggregate read a document window by window; give window too")
    if options.get("stride", 0) > options.get("window", 0):
        raise InputError(f"{where}: a stride longer than the window skips text between windows")
    if options.get("aggregate", "max") not in ("max", "first"):
        raise InputError(f"{where}: aggregate must be max or first, got {options['aggregate']!r}")
    return ModelRef(kind, target, options, name, spec)


RESERVED = ("exported", "benchmarks")  # the audit directory's own subdirectories (the workflow's): no model's name


def check_name(name: str, where: str) -> str:
    """An audit's name becomes a directory under --out: a plain name, not a path nor a directory the audit uses."""
    if not re.fullmatch(r"[A-Za-z0-9_][A-Za-z0-9_.-]*", name):
        raise InputError(f"{where}: name {name!r} may hold only letters, digits, '.', '_' and '-' (not first)")
    if name in RESERVED:
        raise InputError(f"{where}: name {name!r} is a directory of the audit's own; choose another")
    return name


def _value(key: str, value: str, where: str):
    if key in RETRY_SETTINGS:
        smallest, above, whole = RETRY_SETTINGS[key]
        try:
            number = int(value) if whole else float(value)
        except ValueError:
            number = value  # refused below, by name
        check_setting(f"{where}: option {key}", number, smallest, above, whole)
        return number
    if key in SHARES:
        try:
            share = float(value)
        except ValueError:
            share = -1.0
        if not 0 < share <= 1:
            raise InputError(f"{where}: option {key} must be a number in (0, 1], got {value!r}")
        return share
    if key in INTEGERS:
        if not value.isdigit() or int(value) < 1:
            raise InputError(f"{where}: option {key} must be a positive whole number, got {value!r}")
        return int(value)
    if key in BOOLEANS:
        if value not in ("true", "false"):
            raise InputError(f"{where}: option {key} must be true or false, got {value!r}")
        return value == "true"
    return value
