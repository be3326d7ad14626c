"""What a language model is asked (`Request`, `Decoding`) and what it answers (`Completion`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

# `meta["order"]` of a judge's request (the judges' order checks, issue 32): its parts in the order the method
# asks for, or rearranged (a chunk's sentences reversed, the RAG judge's blocks swapped). Real backends never see
# it; the mock `order_biased` answers differently when it is not ORIGINAL_ORDER.
ORIGINAL_ORDER = "original"


@dataclass(frozen=True)
class Decoding:
    """Decoding settings. Greedy by default (temperature 0, top_p 1), as every study here decodes; each field is
    part of the cache key, so changing any of them never replays an answer made under other settings."""

    max_new_tokens: int = 100
    temperature: float = 0.0
    top_p: float = 1.0
    stop: tuple[str, ...] = ()
    seed: int | None = None  # passed to backends that take one (OpenAI); local greedy decoding needs none

    def as_dict(self) -> dict:
        return {"max_new_tokens": self.max_new_tokens, "temperature": self.temperature, "top_p": self.top_p,
                "stop": list(self.stop), "seed": self.seed}


@dataclass(frozen=True)
class Request:
    """One input: a raw text `prompt` (wrapped by the model's `wrapper` before it is sent) or a chat conversation
    `messages` (a tuple of `{"role": ..., "content": ...}` dicts, system first if any).

    `meta` describes the example (its id, the gold answer, the gold position, ...). It is never sent and never
    part of the cache key: only the `mock` backend reads it, and the callers copy it into their records."""

    prompt: str | None = None
    messages: tuple[Mapping[str, str], ...] | None = None
    meta: Mapping[str, Any] = field(default_factory=dict, compare=False)

    def __post_init__(self):
        if (self.prompt is None) == (self.messages is None):
            raise ValueError("a Request has either a prompt or messages")


@dataclass(frozen=True)
class Completion:
    """One answer. `text` is the generated text only (for local models, the generated token ids decoded, never
    the prompt cut off by its decoded length). `sent` is exactly what went to the model after wrapping: the
    final prompt string, or the messages list for chat APIs."""

    text: str
    finish_reason: str | None  # "stop", "length", ... as the backend reports it
    prompt_tokens: int | None
    completion_tokens: int | None
    latency_s: float  # of the original call; a replayed answer keeps the recorded latency
    cache_key: str
    cache_hit: bool
    sent: str | list = ""
