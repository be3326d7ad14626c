"""Every ranker's declaration (`posbias.rankers.declaration`), one module per family, named as the module that
holds its classes (or holding them itself, see `posbias.rankers.declaration`). A module of this package that
defines `RANKERS` is found by its file: a new family needs no edit here. The order is the schema's `ranker` enum
and the docs' table: the established families in the order below, then any other family by its module's name."""

from __future__ import annotations

import importlib
import pkgutil

ESTABLISHED = ("chunked", "interaction", "parade_transformer", "long_sequence", "bi_encoder", "rankgpt")


def _family_modules() -> list[str]:
    found = sorted(info.name for info in pkgutil.iter_modules(__path__))
    return [*ESTABLISHED, *(name for name in found if name not in ESTABLISHED)]


DECLARATIONS = tuple(declaration for name in _family_modules()
                     for declaration in getattr(importlib.import_module(f"{__name__}.{name}"), "RANKERS", ()))
