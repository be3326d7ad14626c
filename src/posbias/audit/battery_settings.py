"""The audit batteries' settings, from their declarations (`posbias.audit.battery_declarations`): what each
capability runs by default (`BATTERIES`) and may be asked for (`OFFERED`), every battery's defaults (`DEFAULTS`:
`--settings FILE` or `audit.settings` override them), what a battery's `source` names, the function that runs it
(`battery_function`), and the check of an override (`settings_with`). It imports nothing heavy: the config's
check reads it in every Snakemake and posbias command."""

from __future__ import annotations

import copy
from typing import Mapping

from posbias.audit.battery_declarations import DECLARATIONS
from posbias.errors import InputError
from posbias.plugins import load

# Every battery by name, as declared (`posbias.audit.battery_declarations`).
DECLARED = {declaration.name: declaration for declaration in DECLARATIONS}
CAPABILITIES = tuple(dict.fromkeys(declaration.capability for declaration in DECLARATIONS))
# What each capability runs by default, and what it may be asked for besides (the depth x length grids cost a sweep
# per length: asked for by name)
BATTERIES = {capability: tuple(name for name, d in DECLARED.items() if d.capability == capability and d.by_default)
             for capability in CAPABILITIES}
OFFERED = {capability: tuple(name for name, d in DECLARED.items() if d.capability == capability)
           for capability in CAPABILITIES}
DEFAULTS = {
    **{name: copy.deepcopy(dict(declaration.defaults)) for name, declaration in DECLARED.items()},
    # The randomisation (sign-flip) test: a reciprocal rank or a raw score is far from normal, and a drop that
    # every unit shows alike (a deterministic model) has no variance for a t-test to divide by.
    "statistics": {"test": "randomisation", "correction": "holm", "alpha": 0.05, "confidence": 0.95,
                   "n_resamples": 1000, "seed": 0},
}
GRID_BATTERIES = tuple(name for name, declaration in DECLARED.items() if declaration.grid)

# What a `source` names, per battery (`pool_size` is optional, and `<key>_sha256` the sha256 of a file placed by
# hand: the reader's `qa_sha256`, which the battery checks); the grid also reads LongEmbed's needle and passkey
# sets, `{longembed: needle|passkey, ...}` (`posbias.audit.longembed.SOURCE_OPTIONS`)
SOURCE_KEYS = {name: declaration.source_keys for name, declaration in DECLARED.items()}


def battery_function(battery: str):
    """The function that runs a battery, `(model, settings) -> BatteryResult`, its module imported now."""
    return load(DECLARED[battery].run)


def source_files(source: Mapping | None) -> list[str]:
    """The local files a battery's `source` reads (the workflow's job inputs): every path it names, or for LongEmbed
    only its local `data_files` (a hub id is no file)."""
    from posbias.audit.longembed import is_longembed, source_inputs

    if not source:
        return []
    return source_inputs(source) if is_longembed(source) else [path for key, path in source.items()
                                                                if key != "pool_size" and not key.endswith("_sha256")]


CHOICES = {"test": ("t", "wilcoxon", "randomisation", "mcnemar"),
           "correction": ("none", "bonferroni", "holm", "fdr_bh"), "needles": ("lexical", "paraphrased"),
           "rest": ("paper", "authors"), "aggregate": ("max", "first"), "arrange": ("retrieval", "ends"),
           "prompt": ("default", "query_aware"), "combine": ("none", "both_orders", "permutation_self_consistency"),
           "consistency_aggregate": ("borda", "rrf"), "consistency_orders": ("shuffles", "rotations")}

# keys whose default is null: the type a value must have
NULLABLE = {"doc_tokens": int, "lengths": list, "window": int, "step": int, "detect": float, "max_units": int}
POSITIVE = ("detect", "max_units", "repetitions")  # keys whose value must be above 0


def settings_with(overrides: Mapping | None) -> dict:
    """The battery defaults with `overrides` (`{battery: {key: value}}`) applied; unknown keys, values of another
    type than the default's, unknown choices and malformed sources are one InputError naming the key."""
    merged = copy.deepcopy(DEFAULTS)
    if not isinstance(overrides or {}, Mapping):
        raise InputError("audit settings: expected a mapping {battery: {key: value}}")
    for battery, values in (overrides or {}).items():
        if battery not in merged:
            raise InputError(f"audit settings: unknown battery {battery!r}; known: {', '.join(merged)}")
        if not isinstance(values or {}, Mapping):
            raise InputError(f"audit settings.{battery}: expected a mapping of settings, got {values!r}")
        unknown = sorted(set(values or {}) - set(merged[battery]))
        if unknown:
            raise InputError(f"audit settings.{battery}: unknown keys {unknown}; known: {sorted(merged[battery])}")
        for key, value in (values or {}).items():
            _check_setting(battery, key, value, merged[battery][key])
        merged[battery].update(values or {})
    return merged


def _check_setting(battery: str, key: str, value, default) -> None:
    where = f"audit settings.{battery}.{key}"
    if key == "source":
        needed = SOURCE_KEYS[battery]
        if battery == "grid" and isinstance(value, Mapping) and "longembed" in value:  # LongEmbed's needle, passkey
            from posbias.audit.longembed import check_source

            return check_source(value, where)
        if value is not None and (not isinstance(value, Mapping) or set(needed) - set(value)):
            raise InputError(f"{where}: expected null or a mapping with {', '.join(needed)}, got {value!r}")
        return
    wanted = NULLABLE.get(key) or type(default)
    numeric = wanted in (int, float) and isinstance(value, (int, float)) and not isinstance(value, bool) and (
        wanted is float or isinstance(value, int))
    typed = wanted not in (int, float) and isinstance(value, wanted)
    if not (numeric or typed or (value is None and key in NULLABLE)):
        raise InputError(f"{where}: expected {wanted.__name__}{' or null' if key in NULLABLE else ''}, got {value!r}")
    if key in CHOICES and value not in CHOICES[key]:
        raise InputError(f"{where}: {value!r} is not one of {', '.join(CHOICES[key])}")
    if key in POSITIVE and value is not None and not value > 0:
        raise InputError(f"{where}: expected a number above 0, got {value!r}")
