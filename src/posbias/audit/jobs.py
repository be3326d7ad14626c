"""An audit job as a typed value: which model, where its files go, which batteries with which settings, the
language-model response cache, and the mitigation it audits, built in one place by the rule's script, by `posbias
audit` and by a test or notebook calling `posbias.audit.steps.audit`."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence


@dataclass(frozen=True)
class AuditJob:
    """Audit `model` (a model spec, `posbias.audit.spec`) into `out/<name>/`: every battery its kind takes, or
    `batteries`, with `settings` over the batteries' defaults. A language model answers through the response cache
    in `cache_dir` (`cache_mode`: read_write, read_only or off). With a `mitigation` (`posbias.audit.mitigations`)
    the model is audited as that mitigation changes it, compared with the audit named `mitigates`."""

    model: str
    out: str | Path
    batteries: Sequence[str] | None = None
    settings: Mapping | None = None
    name: str | None = None
    cache_dir: str = "cache/llm"
    cache_mode: str = "read_write"
    device: str = "auto"
    mitigation: Mapping | None = None
    mitigates: str | None = None
