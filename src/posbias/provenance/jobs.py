"""The provenance manifest's job as a typed value, built in one place by the rule's script and by `posbias
provenance --write`."""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Mapping


@dataclass(frozen=True)
class ManifestJob:
    """The manifest of `out` (an experiment's directory below `results`), written to `json_path` and `html_path`:
    what `manifest_params` gives its job (the config's hash, the pretrained weights by model, the language models,
    the declared departures) and the checkout whose git state it records (`root`; default: the working
    directory's)."""

    json_path: str
    html_path: str
    results: str
    out: str
    config_hash: str
    weights: Mapping[str, list[str]]
    llms: Mapping[str, Mapping]
    departures: Mapping[str, Mapping] | None = None
    root: str | os.PathLike | None = None
