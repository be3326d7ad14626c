"""`revisions`: the hub revision of each model the config names by hub id; with a language model's and an audit
model's own `revision`, what a job loads (posbias.staging.hub) and `posbias stage` fetches (posbias.config.inputs)."""

from pathlib import Path

from posbias.config.section import Section


def _needs(cfg: dict):
    from posbias.config.inputs import collect

    return collect(cfg)  # a ConfigError where two keys pin one repository at two revisions


def check(cfg: dict, warnings: list[str]) -> None:
    for need in _needs(cfg):
        if need.used_by == [f"revisions.{need.name}"]:
            warnings.append(f"revisions.{need.name}: no model, tokenizer or encoder of this config is "
                            f"{need.name!r}; `posbias stage` would fetch it for nothing")


def accessor(cfg) -> dict[str, str]:
    """`CFG.revisions`: every pinned hub model's revision, whichever key pins it."""
    from posbias.config.inputs import hub_pins

    return hub_pins(_needs(cfg.data))


SECTION = Section("revisions", Path(__file__).with_name("revisions.schema.yaml"), check=check, accessor=accessor)
