"""The prepared config: its data (validated, defaults filled, derived), the warnings, and a section's accessor as
an attribute: `CFG.models.trained`, `CFG.sweep.models`, `CFG.litm.tasks`. A section without an accessor gives
its block (None when absent)."""

from __future__ import annotations

from posbias.config.registry import sections


class Config:
    """A validated, cross-checked config; `CFG.<section key>` is that section's accessor, built once."""

    def __init__(self, data: dict, warnings: list[str]):
        self.data = data
        self.warnings = warnings

    def __getattr__(self, key: str):
        section = sections().get(key)
        if section is None:
            raise AttributeError(f"the config has no section {key!r}")
        value = section.accessor(self) if section.accessor else self.data.get(key)
        setattr(self, key, value)  # built once: later lookups find the attribute without coming here
        return value

    @property
    def results_dir(self) -> str:
        """Where this experiment's tables and figures go: `results/`, or `results/<experiment>/`."""
        experiment = self.data.get("experiment")
        return f"results/{experiment}" if experiment else "results"
