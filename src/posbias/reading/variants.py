"""The prompt variants a config names (spec §1.5, §1.8), as the authors' command-line flags:

- `default`: documents in the order of the data file, the plain template;
- `query_aware`: the question (or key) before and after the data (`--query-aware-contextualization`);
- `random_order`: distractors shuffled around the gold document and the "ordered randomly" instruction
  (`--use-random-ordering --prompt-mention-random-ordering`, appendix C); QA only;
- `random_distractors`: the default prompt; what differs is the data (random passages as distractors,
  appendix B), which the data step provides.
"""

from __future__ import annotations

from dataclasses import dataclass

from posbias.errors import InputError


@dataclass(frozen=True)
class Variant:
    name: str
    query_aware: bool = False
    mention_random_ordering: bool = False  # the instruction says the results are ordered randomly
    use_random_ordering: bool = False  # the distractors are shuffled
    tasks: tuple[str, ...] = ("qa", "kv")


VARIANTS = {v.name: v for v in (
    Variant("default"),
    Variant("query_aware", query_aware=True),
    Variant("random_order", mention_random_ordering=True, use_random_ordering=True, tasks=("qa",)),
    Variant("random_distractors", tasks=("qa",)),
)}


def variant(name: str, task: str) -> Variant:
    """The variant called `name`, refused (naming it) if unknown or not defined for `task`."""
    if name not in VARIANTS:
        raise InputError(f"variant {name!r} is not one of {', '.join(VARIANTS)}")
    found = VARIANTS[name]
    if task not in found.tasks:
        raise InputError(f"variant {name!r} is defined for {', '.join(found.tasks)} only, not for task {task!r}")
    return found
