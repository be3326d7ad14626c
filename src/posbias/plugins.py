"""The one way posbias finds what can be plugged in (rankers, language-model backends, ...): a folder of declaration
modules, each defining a tuple of declarations under an agreed name, found by its file. A new one is a module in
that folder (and the class it names): no list, `if` or schema enum elsewhere is edited.

A declaration names what it declares as `"module:attribute"`, imported only when it is used (`load`), so reading
the declarations stays cheap: the workflow reads them while it builds its graph."""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any, Sequence


def declared(package: str, attribute: str, first: Sequence[str] = ()) -> tuple:
    """Every declaration in the `attribute` tuple of each module of `package`: the modules named in `first` in that
    order (the order of the schema's enums and the docs' tables), then any other by its module's name."""
    found = sorted(info.name for info in pkgutil.iter_modules(importlib.import_module(package).__path__)
                   if not info.name.startswith("_"))  # a private module holds what declarations share
    order = [*first, *(name for name in found if name not in first)]
    modules = [importlib.import_module(f"{package}.{name}") for name in order]
    return tuple(item for module in modules for item in getattr(module, attribute, ()))


def load(target: str) -> Any:
    """What `"module:attribute"` names, its module imported now."""
    module, _, name = target.partition(":")
    return getattr(importlib.import_module(module), name)
