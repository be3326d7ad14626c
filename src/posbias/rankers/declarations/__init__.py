"""Every ranker's declaration (`posbias.rankers.declaration`), one module per family, named as the module that
holds its classes (or holding them itself, see `posbias.rankers.declaration`). A module of this package that
defines `RANKERS` is found by its file (`posbias.plugins`): a new family needs no edit here. The order is the
schema's `ranker` enum and the docs' table: the established families in the order below, then any other family by
its module's name."""

from __future__ import annotations

from posbias.plugins import declared

ESTABLISHED = ("chunked", "interaction", "parade_transformer", "long_sequence", "bi_encoder", "rankgpt")

DECLARATIONS = declared(__name__, "RANKERS", ESTABLISHED)
