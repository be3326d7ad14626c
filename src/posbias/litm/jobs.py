"""The Lost-in-the-Middle prediction job as a typed value: what it reads, writes and is told, so that the job
function takes one argument and the rule's script and `posbias litm run` each build it in one place."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping


@dataclass(frozen=True)
class Reader:
    """A language model answering the prompts: its name in `llm.models`, its entry there (without the label), the
    response cache, and the decoding settings (`litm.decoding`)."""

    name: str
    spec: Mapping
    cache: Mapping
    decoding: Mapping


@dataclass(frozen=True)
class PredictJob:
    """One reader asked every example of one task (`section`: the task's `litm.<task>` block): `data` maps each
    setting to its data file, `outputs` each `{variant}/{setting}` to its predictions file; `threads` caps a local
    model's CPU threads (the job's share of the cores; None: torch's own)."""

    task: str
    section: Mapping
    reader: Reader
    data: Mapping[str, str]
    outputs: Mapping[str, str]
    threads: int | None = None
