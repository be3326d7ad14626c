"""`llm`: the language models (backend, model, wrapper, sampling) that RankGPT, Lost in the Middle, the probes and
the positions' judges name, and their response cache."""

from __future__ import annotations

from pathlib import Path

from posbias.config.canonical import canonical
from posbias.config.section import ConfigError, Section, require
from posbias.rankers import catalog


class LanguageModels:
    """`CFG.llm`: a language model's spec and label as jobs and tables want them, and the cache."""

    def __init__(self, cfg):
        self._data = cfg.data.get("llm", {})

    @property
    def cache(self) -> dict:
        """The response cache's directory and mode (`llm.cache`)."""
        return canonical(self._data.get("cache", {"dir": "cache/llm", "mode": "read_write"}))

    def model(self, name: str) -> dict:
        """A language model's spec as a job receives it (`posbias.llm.spec.ModelSpec` fields; the label is the
        tables' business)."""
        return canonical({k: v for k, v in self._data["models"][name].items() if k != "label"})

    def label(self, name: str) -> str:
        return self._data["models"][name].get("label", name)


def check(cfg: dict, warnings: list[str]) -> None:
    """RankGPT models name language models of `llm.models` that hold a conversation, and fit their window."""
    known = cfg.get("llm", {}).get("models", {})
    for name, model in cfg["models"].items():
        if model["ranker"] in catalog.LISTWISE:
            require(known, model["args"]["llm"], f"models.{name}.args.llm", "a key of llm.models")
            args = model["args"]
            wrapper = known[args["llm"]].get("wrapper", "none")
            if wrapper not in ("chat_template", "messages"):
                raise ConfigError(f"llm.models.{args['llm']}.wrapper: RankGPT ({name}) sends a conversation, which "
                                  f"needs chat_template (a local model) or messages (a chat API or the mock), not "
                                  f"{wrapper!r}")
            if args["step"] > args["window"]:
                raise ConfigError(f"models.{name}.args.step: {args['step']} is larger than the window "
                                  f"({args['window']}); candidates would be skipped")
            if (args["first_tokens"] is None) != (args["first_tokenizer"] is None):
                raise ConfigError(f"models.{name}.args: first_tokens and first_tokenizer go together")


def with_backends(schema: dict) -> dict:
    """`schema` (the parsed config schema) with the declared backends as the `backend` enum of a language model,
    and what each one is as its description."""
    from posbias.llm.spec import DECLARED

    backend = schema["$defs"]["llm_model"]["properties"]["backend"]
    backend["enum"] = list(DECLARED)
    backend["description"] = "; ".join(f"{name}: {d.description}" for name, d in DECLARED.items())
    return schema


SECTION = Section("llm", Path(__file__).with_name("llm.schema.yaml"), check=check, accessor=LanguageModels,
                  complete_schema=with_backends)
