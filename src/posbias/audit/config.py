"""The `audit` config section: which models the workflow audits (rules/audit.smk), with which battery settings."""

from __future__ import annotations

import copy
from pathlib import Path

from posbias.config.canonical import canonical
from posbias.config.section import ConfigError, Section, require
from posbias.training import paths as training_paths

EXPORTED = "results/audit/exported"  # where rule audit_export writes a trained model as a cross-encoder


def exported_directory(model: str, seed: int) -> str:
    return f"{EXPORTED}/{model}/seed{seed}"


def _seed(cfg: dict, trained: dict) -> int:
    model = cfg["models"][trained["model"]]
    return trained.get("seed", model.get("seeds", cfg.get("training", {}).get("seeds", [1]))[0])


def entry_of(cfg: dict, name: str) -> dict:
    """`audit.models.<name>`; a mitigated entry (`mitigates`) resolved against the entry it mitigates: that entry's
    model (for debiased_training its trained model's twin, `mitigation.model`), batteries and settings, this
    entry's batteries and settings over them, and the mitigation with `of`, the name it mitigates."""
    entries = cfg["audit"]["models"]
    entry = entries[name]
    if "mitigates" not in entry:
        return entry
    base = entries[entry["mitigates"]]
    resolved = {key: copy.deepcopy(base[key]) for key in ("model", "trained", "batteries") if key in base}
    if entry["mitigation"]["kind"] == "debiased_training" and "trained" in base:
        # the twin's own first seed: its seeds need not be the original's
        resolved["trained"] = {key: value for key, value in base["trained"].items() if key != "seed"}
        resolved["trained"]["model"] = entry["mitigation"].get("model")
    if "batteries" in entry:
        resolved["batteries"] = entry["batteries"]
    settings = copy.deepcopy(base.get("settings") or {})
    for battery, values in (entry.get("settings") or {}).items():
        settings.setdefault(battery, {}).update(values or {})
    resolved["settings"] = settings
    resolved["mitigation"] = {**entry["mitigation"], "of": entry["mitigates"]}
    return resolved


def spec_of(cfg: dict, name: str) -> str:
    """The model spec of `audit.models.<name>`: as written, or the trained model's checkpoint or export path."""
    entry = entry_of(cfg, name)
    if "model" in entry:
        return entry["model"]
    trained = entry["trained"]
    seed = _seed(cfg, trained)
    target = (f"checkpoint:{training_paths.checkpoint(trained['model'], seed)}" if trained["as"] == "checkpoint"
              else f"cross-encoder:{exported_directory(trained['model'], seed)}")
    return target + (f"?{trained['options']}" if trained["options"] else "")


def check(cfg: dict, warnings: list[str]) -> None:
    """Specs parse, batteries suit their kind, trained models exist and are trained, settings keys are known."""
    from posbias.audit.battery_settings import settings_with
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
    for name, written in audit["models"].items():
        where = f"audit.models.{name}"
        try:
            check_name(name, where)
        except InputError as err:
            raise ConfigError(str(err)) from None
        _check_mitigated(cfg, name, written, where)
        entry = entry_of(cfg, name)
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
            if "mitigation" in entry:
                from posbias.audit.mitigations import checked

                checked({k: v for k, v in entry["mitigation"].items() if k != "of"}, ref, f"{where}.mitigation")
        except InputError as err:
            raise ConfigError(f"{where}: {err}") from None


def _check_mitigated(cfg: dict, name: str, entry: dict, where: str) -> None:
    """A mitigated entry mitigates another entry that is not mitigated itself; a de-biased twin is a de-biased
    model of the config whose original is what the base entry audits."""
    if "mitigates" not in entry:
        return
    entries = cfg["audit"]["models"]
    base_name = entry["mitigates"]
    require(entries, base_name, f"{where}.mitigates", "a key of audit.models")
    if base_name == name or "mitigates" in entries[base_name]:
        raise ConfigError(f"{where}.mitigates: {base_name!r} is itself mitigated; name the model it mitigates")
    if entry["mitigation"]["kind"] == "debiased_training":
        base = entries[base_name]
        if "trained" not in base:
            raise ConfigError(f"{where}.mitigation: debiased_training mitigates a trained model; "
                              f"audit.models.{base_name} names none")
        twin = entry["mitigation"].get("model")
        require(cfg["models"], twin, f"{where}.mitigation.model", "a key of models")
        original = (cfg["models"][twin].get("debias") or {}).get("original")
        if original != base["trained"]["model"]:
            raise ConfigError(f"{where}.mitigation.model: {twin!r} is not the de-biased twin of "
                              f"{base['trained']['model']!r} (its debias.original: {original!r})")


class Audit:
    """`CFG.audit`: the audited models, their jobs (model x battery) and what each job receives."""

    def __init__(self, cfg):
        self._cfg = cfg
        self.data: dict = cfg.data.get("audit") or {}
        self.models: list[str] = list(self.data.get("models", {}))

    def spec(self, name: str) -> str:
        return spec_of(self._cfg.data, name)

    def mitigated(self) -> list[str]:
        """The entries that mitigate another (`mitigates`): the mitigation table compares them with it."""
        return [name for name in self.models if "mitigates" in self.data["models"][name]]

    def batteries(self, name: str) -> list[str]:
        from posbias.audit.steps import batteries_of
        from posbias.audit.spec import parse_model_spec

        return batteries_of(parse_model_spec(self.spec(name)), entry_of(self._cfg.data, name).get("batteries"))

    def jobs(self) -> list[tuple[str, str]]:
        return [(name, battery) for name in self.models for battery in self.batteries(name)]

    def settings(self, name: str) -> dict:
        """The battery settings of one model: the defaults, audit.settings, then the model's own."""
        from posbias.audit.battery_settings import settings_with

        merged = settings_with(self.data.get("settings"))
        for battery, values in (entry_of(self._cfg.data, name).get("settings") or {}).items():
            merged[battery].update(values)
        return canonical(merged)

    def job(self, name: str) -> dict:
        """What `posbias audit --config ... --name` and rule audit_battery put in the `posbias.audit.jobs.AuditJob` they
        pass to `posbias.audit.steps.audit`."""
        if name not in self.data.get("models", {}):
            from posbias.errors import InputError

            raise InputError(f"audit.models: no model {name!r}; configured: {self.models}")
        job = {"spec": self.spec(name), "settings": self.settings(name), "cache": canonical(self._cfg.llm.cache),
               "batteries": self.batteries(name)}
        mitigation = entry_of(self._cfg.data, name).get("mitigation")
        if mitigation:
            job["mitigation"] = canonical({k: v for k, v in mitigation.items() if k != "of"})
            job["mitigates"] = mitigation["of"]
        return job

    def local_decoder(self, name: str) -> int:
        """1 for a language model that decodes in this process (a reader, a listwise reranker: the workflow runs one
        such job at a time, rules/litm.smk says why), else 0. A pointwise ranker reads one next token per prompt
        (`HFCausal.next_token_logprobs`): compute-bound like any encoder, it runs beside the decoders."""
        from posbias.audit.spec import parse_model_spec
        from posbias.llm.spec import LOCAL_BACKENDS

        ref = parse_model_spec(self.spec(name))
        return int(ref.kind in ("rankgpt", "reader", "judge") and ref.backend in LOCAL_BACKENDS)

    def gpu(self, name: str) -> int:
        """The GPUs a job of the model asks for (the rules' resource `gpu`): none for a language model behind an API
        or a mock, one for everything that runs a network here."""
        from posbias.audit.spec import LLM_KINDS, parse_model_spec
        from posbias.llm.spec import LOCAL_BACKENDS

        ref = parse_model_spec(self.spec(name))
        if ref.kind == "judge-replay":  # recorded judgments: nothing runs
            return 0
        return int(ref.kind not in LLM_KINDS or ref.backend in LOCAL_BACKENDS)

    def finetuned_inputs(self, name: str) -> list[str]:
        """The fine-tuned twin a position_balanced_finetuning entry audits (rule audit_finetune writes it, or a
        directory the entry names)."""
        mitigation = self.job(name).get("mitigation") or {}
        return [mitigation["model"]] if mitigation.get("kind") == "position_balanced_finetuning" else []

    def finetune_job(self, name: str) -> dict:
        """What rule audit_finetune passes to `posbias.audit.balanced_finetuning`: the base model's spec and the
        audit's battery settings (its probes' world is held out of the training questions too)."""
        return {"spec": self.spec(name), "settings": self.settings(name)}

    def inputs(self, name: str) -> list[str]:
        """The files the model's jobs read: a trained checkpoint or the cross-encoder exported from it, and the
        batteries' real sources (files the workflow may make, such as the FarRelevant passage collection)."""
        from posbias.audit.battery_settings import source_files

        from posbias.audit.spec import parse_model_spec

        settings = self.settings(name)
        sources = [path for battery in self.batteries(name) for path in source_files(settings[battery].get("source"))]
        ref = parse_model_spec(self.spec(name))
        if ref.kind == "judge-replay":  # the recorded judgments it replays
            from posbias.judges.judging import records_path

            sources.insert(0, records_path(ref.target))
        trained = entry_of(self._cfg.data, name).get("trained")
        if not trained:
            return sources
        seed = _seed(self._cfg.data, trained)
        return [training_paths.checkpoint(trained["model"], seed) if trained["as"] == "checkpoint"
                else exported_directory(trained["model"], seed)] + sources


SECTION = Section("audit", Path(__file__).with_name("config.schema.yaml"), check=check, accessor=Audit)
