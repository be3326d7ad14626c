"""`external_runs`: runs made elsewhere, shown as rows of the zero-shot tables."""

from __future__ import annotations

from pathlib import Path

from posbias.config.section import ConfigError, Section, require


def check(cfg: dict, warnings: list[str]) -> None:
    for name, spec in cfg.get("external_runs", {}).items():
        if name in cfg["models"]:
            raise ConfigError(f"external_runs.{name}: the name is already a model's")
        for qs in spec["runs"]:
            require(cfg["rerank"]["querysets"], qs, f"external_runs.{name}.runs", "in rerank.querysets")
        if "baseline" in spec:
            require(cfg["models"], spec["baseline"], f"external_runs.{name}.baseline", "a configured model")
    labels = {m["label"]: f"models.{n}" for n, m in cfg["models"].items()}
    for name, spec in cfg.get("external_runs", {}).items():
        if spec["label"] in labels:
            raise ConfigError(f"external_runs.{name}.label: {spec['label']!r} is also the label of "
                              f"{labels[spec['label']]} (table rows would be ambiguous)")
        labels[spec["label"]] = f"external_runs.{name}"


SECTION = Section("external_runs", Path(__file__).with_name("external_runs.schema.yaml"), check=check,
                  accessor=lambda cfg: cfg.data.get("external_runs", {}))
