"""Reading a config: files, their `base:` layers, overrides, the schema assembled from the sections' fragments,
defaults, then each section's derivations and checks (`posbias.config.registry`).

    cfg = load_config("config/paper/robust04.yaml")       # a file (its `base:` files first)
    cfg = prepare(data)                                     # an already merged mapping (tests, Snakemake)

`prepare` validates against the assembled schema, fills its defaults, and runs every section's derivation and
check; each problem is a `ConfigError` whose message starts with the key it is about.

Layering: a config may name `base:` files (one or a list, relative to the file naming them). They are
merged first, in order, and the file itself on top: mappings merge key by key, anything else (lists
included) is replaced. The paper configs share their models, training recipe and MS MARCO collection
through `config/paper/common.yaml` this way.
"""

from __future__ import annotations

import copy
import re
from functools import lru_cache
from pathlib import Path
from typing import Iterable, Mapping

import yaml

from posbias.config import study
from posbias.config.prepared import Config
from posbias.config.registry import sections
from posbias.config.section import ConfigError

BASE_SCHEMA = Path(__file__).with_name("base.schema.yaml")  # the top level and the $defs several sections share


# --- reading and merging -------------------------------------------------------------------------


def read_config_file(path: str | Path) -> dict:
    """One YAML file as a mapping; a syntax error names the file and line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such config file") from None
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"{path}: cannot be read as a UTF-8 config file ({err})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else str(path)
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise ConfigError(f"{where}: YAML syntax error: {problem}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a config is a YAML mapping of sections, got {type(data).__name__}")
    return data


# Mappings whose keys are alternatives (one data source or another): a layer that sets one replaces the whole
# mapping, so real Re-DocRED files layered onto the demo config do not keep its synthetic world beside them.
REPLACED_WHOLE = {("probes", "redocred")}


def merge(base: Mapping, top: Mapping, _path: tuple[str, ...] = ()) -> dict:
    """`top` over `base`: mappings merge key by key (but those of `REPLACED_WHOLE`), anything else is replaced."""
    merged = copy.deepcopy(dict(base))
    for key, value in top.items():
        if ((*_path, key) not in REPLACED_WHOLE and isinstance(value, Mapping)
                and isinstance(merged.get(key), Mapping)):
            merged[key] = merge(merged[key], value, (*_path, key))
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def read_layered(path: str | Path, _seen: tuple[Path, ...] = (), _merged: set[Path] | None = None) -> dict:
    """A config file with its `base:` files merged underneath (relative to the file that names them). A base
    that two bases share is merged once, first, so the second cannot undo what the first changed in it."""
    path, merged_files = Path(path), set() if _merged is None else _merged
    if path.resolve() in _seen:
        raise ConfigError(f"{path}: base: files include each other ({' -> '.join(map(str, [*_seen, path]))})")
    data = read_config_file(path)
    bases = data.pop("base", [])
    if isinstance(bases, str):
        bases = [bases]
    if not isinstance(bases, list) or not all(isinstance(b, str) for b in bases):
        raise ConfigError(f"{path}: base: a file name or a list of file names")
    merged: dict = {}
    for base in bases:
        base_path = path.parent / base
        if base_path.resolve() not in merged_files:
            merged = merge(merged, read_layered(base_path, (*_seen, path.resolve()), merged_files))
    merged_files.add(path.resolve())
    return merge(merged, data)


def load_config(*paths: str | Path, overrides: Mapping | None = None) -> Config:
    """Config files merged in order (each with its bases), `overrides` on top, then `prepare`d."""
    if not paths:
        raise ConfigError("no config file given")
    data: dict = {}
    for path in paths:
        data = merge(data, read_layered(path))
    return prepare(merge(data, overrides or {}))



# --- schema --------------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _assembled_schema() -> dict:
    assembled = yaml.safe_load(BASE_SCHEMA.read_text(encoding="utf-8"))
    for key, section in sections().items():
        fragment = yaml.safe_load(section.schema.read_text(encoding="utf-8"))
        assembled["properties"][key] = fragment[key]
        assembled["$defs"].update(fragment.get("$defs", {}))
    for section in sections().values():
        if section.complete_schema:
            assembled = section.complete_schema(assembled)
    return assembled


def schema() -> dict:
    """The config's JSON schema, assembled from the sections' fragments (a copy: validation must not change it)."""
    return copy.deepcopy(_assembled_schema())


def validate(data: dict) -> dict:
    """A copy of `data` checked against the schema, with its defaults filled in."""
    from jsonschema import Draft202012Validator, validators
    from jsonschema.exceptions import best_match

    def fill_defaults(validator, properties, instance, schema):
        if isinstance(instance, dict):
            for key, subschema in properties.items():
                if "default" in subschema and key not in instance:
                    instance[key] = copy.deepcopy(subschema["default"])
        yield from Draft202012Validator.VALIDATORS["properties"](validator, properties, instance, schema)

    Validator = validators.extend(Draft202012Validator, {"properties": fill_defaults})
    data = copy.deepcopy(data)
    error = best_match(Validator(schema()).iter_errors(data))
    if error is not None:
        raise ConfigError(_schema_problem(error))
    return data


def _key_path(parts: Iterable) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts).lstrip(".")


def _schema_problem(error) -> str:
    """`key.path: problem` of a jsonschema error; an unknown key is named with the keys known there (jsonschema
    only says that it matches no pattern)."""
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        known = error.schema.get("properties", {})
        patterns = error.schema.get("patternProperties", {})
        unknown = [name for name in error.instance
                   if name not in known and not any(re.search(pattern, name) for pattern in patterns)]
        if unknown:
            return f"{_key_path([*error.absolute_path, unknown[0]])}: unknown key; known: {', '.join(sorted(known))}"
    return f"{_key_path(error.absolute_path) or '(top level)'}: {error.message}"


# --- preparing -----------------------------------------------------------------------------------


def prepare(data: Mapping) -> Config:
    """Validate, fill defaults, derive and cross-check, section by section; see the module docstring."""
    data = dict(data)
    study.require_together(data)
    for section in sections().values():
        if section.prepare:
            data = section.prepare(data)
    data = validate(data)
    study.fill_absent(data)
    warnings: list[str] = []
    for section in sections().values():
        if section.derive:
            section.derive(data)
    for section in sections().values():
        if section.check:
            section.check(data, warnings)
    return Config(data, warnings)
