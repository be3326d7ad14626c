"""The `audit` config section: which models the workflow audits (rules/audit.smk), with which battery settings."""

from __future__ import annotations

from pathlib import Path

from posbias.config.canonical import canonical
from posbias.config.section import ConfigError, Section, Stage, require

EXPORTED = "results/audit/exported"  # where rule audit_export writes a trained model as a cross-encoder


def exported_directory(model: str, seed: int) -> str:
    return f"{EXPORTED}/{model}/seed{seed}"


def _seed(cfg: dict, trained: dict) -> int:
    model = cfg["models"][trained["model"]]
    return trained.get("seed", model.get("seeds", cfg.get("training", {}).get("seeds", [1]))[0])


def spec_of(cfg: dict, name: str) -> str:
    """The model spec of `audit.models.<name>`: as written, or the trained model's checkpoint or export path."""
    entry = cfg["audit"]["models"][name]
    if "model" in entry:
        return entry["model"]
    trained = entry["trained"]
    seed = _seed(cfg, trained)
    target = (f"checkpoint:results/models/{trained['model']}/seed{seed}" if trained["as"] == "checkpoint"
              else f"cross-encoder:{exported_directory(trained['model'], seed)}")
    return target + (f"?{trained['options']}" if trained["options"] else "")


def check(cfg: dict, warnings: list[str]) -> None:
    """Specs parse, batteries suit their kind, trained models exist and are trained, settings keys are known."""
    from posbias.audit.batteries import settings_with
    from posbias.audit.steps import batteries_of
    from posbias.audit.spec import check_name, parse_model_spec
    from posbias.errors import InputError
    from posbias.rankers import catalog

    audit = cfg.get("audit")
    if not audit:
        return
    try:
        settings_with(audit.get("settings"))
    except InputError as err:
        raise ConfigError(f"audit.settings: {err}") from None
    for name, entry in audit["models"].items():
        where = f"audit.models.{name}"
        try:
            check_name(name, where)
        except InputError as err:
            raise ConfigError(str(err)) from None
        trained = entry.get("trained")
        if trained:
            require(cfg["models"], trained["model"], f"{where}.trained.model", "a key of models")
            model = cfg["models"][trained["model"]]
            if model.get("zero_shot") or model.get("ranker") in catalog.LISTWISE:
                raise ConfigError(f"{where}.trained.model: {trained['model']!r} is never trained")
            seeds = model.get("seeds", cfg.get("training", {}).get("seeds", []))
            if "seed" in trained and trained["seed"] not in seeds:
                raise ConfigError(f"{where}.trained.seed: {trained['seed']} is not a training seed of "
                                  f"{trained['model']!r} ({seeds})")
        try:
            ref = parse_model_spec(spec_of(cfg, name))
            batteries_of(ref, entry.get("batteries"))
            settings_with(entry.get("settings"))
        except InputError as err:
            raise ConfigError(f"{where}: {err}") from None


class Audit:
    """`CFG.audit`: the audited models, their jobs (model x battery) and what each job receives."""

    def __init__(self, cfg):
        self._cfg = cfg
        self.data: dict = cfg.data.get("audit") or {}
        self.models: list[str] = list(self.data.get("models", {}))

    def spec(self, name: str) -> str:
        return spec_of(self._cfg.data, name)

    def batteries(self, name: str) -> list[str]:
        from posbias.audit.steps import batteries_of
        from posbias.audit.spec import parse_model_spec

        return batteries_of(parse_model_spec(self.spec(name)), self.data["models"][name].get("batteries"))

    def jobs(self) -> list[tuple[str, str]]:
        return [(name, battery) for name in self.models for battery in self.batteries(name)]

    def settings(self, name: str) -> dict:
        """The battery settings of one model: the defaults, audit.settings, then the model's own."""
        from posbias.audit.batteries import settings_with

        merged = settings_with(self.data.get("settings"))
        for battery, values in (self.data["models"][name].get("settings") or {}).items():
            merged[battery].update(values)
        return canonical(merged)

    def job(self, name: str) -> dict:
        """What `posbias audit --config ... --name` and rule audit_battery pass to `posbias.audit.steps.audit`."""
        if name not in self.data.get("models", {}):
            from posbias.errors import InputError

            raise InputError(f"audit.models: no model {name!r}; configured: {self.models}")
        return {"spec": self.spec(name), "settings": self.settings(name), "cache": canonical(self._cfg.llm.cache)}

    def local_decoder(self, name: str) -> int:
        """1 for a language model that decodes in this process (a reader, a listwise reranker: the workflow runs one
        such job at a time, rules/litm.smk says why), else 0. A pointwise ranker reads one next token per prompt
        (`HFCausal.next_token_logprobs`): compute-bound like any encoder, it runs beside the decoders."""
        from posbias.audit.spec import parse_model_spec
        from posbias.llm.spec import LOCAL_BACKENDS

        ref = parse_model_spec(self.spec(name))
        return int(ref.kind in ("rankgpt", "reader") and ref.backend in LOCAL_BACKENDS)

    def inputs(self, name: str) -> list[str]:
        """The files the model's jobs read: a trained checkpoint or the cross-encoder exported from it, and the
        batteries' real sources (files the workflow may make, such as the FarRelevant passage collection)."""
        settings = self.settings(name)
        sources = [path for battery in self.batteries(name) for key, path in (settings[battery]["source"] or {}).items()
                   if key != "pool_size"]
        trained = self.data["models"][name].get("trained")
        if not trained:
            return sources
        seed = _seed(self._cfg.data, trained)
        return [f"results/models/{trained['model']}/seed{seed}" if trained["as"] == "checkpoint"
                else exported_directory(trained["model"], seed)] + sources


SECTION = Section("audit", Path(__file__).with_name("config.schema.yaml"), check=check, accessor=Audit,
                  stage=Stage("rules/audit.smk", "AUDIT_REPORTED", "posbias.audit.cli"))
