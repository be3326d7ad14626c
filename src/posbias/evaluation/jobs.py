"""A model table's job as a typed value: what it reads, what it is told and where it writes, built in one place by
the rule's script and by `posbias study table`, and the one argument every table layout's writer takes
(`posbias.evaluation.table_layouts`) and Table 4's."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping, Sequence


@dataclass(frozen=True)
class TableJob:
    """A table of models: the seed-averaged per-query values of the query sets it shows (`averaged`; Table 4 also
    reads the fine-tuned ones, `finetuned`), what `CFG.tables.params` gives its job (the table's `spec`, each shown
    model's label, baseline and runs not made, the runs made elsewhere (`external`), the query sets' alphas, the
    number of seeds, the paired tests' settings), its LaTeX label and its files by format (`outputs`)."""

    averaged: Sequence[str]
    spec: Mapping
    models: Mapping
    external: Mapping
    querysets: Mapping
    n_seeds: int
    statistics: Mapping
    label: str
    outputs: Mapping[str, str]
    finetuned: Sequence[str] = field(default_factory=tuple)

    @classmethod
    def from_params(cls, averaged: Sequence[str], params: Mapping, label: str, outputs: Mapping[str, str],
                    finetuned: Sequence[str] = ()) -> "TableJob":
        """The job of a table whose `CFG.tables.params` are `params` (a rule's params carry the same names)."""
        return cls(list(averaged), params["spec"], params["models"], params["external"], params["querysets"],
                   params["n_seeds"], params["statistics"], label, dict(outputs), list(finetuned))
