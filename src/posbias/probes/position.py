"""The position probes as the stage builds them: the domain's pairs (`posbias.docred.position`: the evidence first
against last, and swept through the document) with what the `probes` section says (the rest of the document, the
sweep's positions)."""

from __future__ import annotations

from typing import Mapping

from posbias.docred import position
from posbias.docred.pairs import ProbePair
from posbias.docred.queries import ProbeQuery
from posbias.probes.declaration import rest_of


def first_last_candidates(queries: list[ProbeQuery], section: Mapping) -> list[ProbeQuery]:
    return position.first_last_candidates(queries, rest_of(section))


def first_last(queries: list[ProbeQuery], section: Mapping, n: int, seed: int) -> list[ProbePair]:
    return position.first_last(queries, n, seed, rest_of(section))


def sweep_candidates(queries: list[ProbeQuery], section: Mapping) -> list[ProbeQuery]:
    return position.sweep_candidates(queries, section["sweep_positions"], rest_of(section))


def sweep(queries: list[ProbeQuery], section: Mapping, n: int, seed: int) -> list[ProbePair]:
    return position.sweep(queries, n, seed, positions=section["sweep_positions"], rest=rest_of(section))
