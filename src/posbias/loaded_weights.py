"""Every weight a loaded model computes with comes from its checkpoint, and every weight of the checkpoint that
belongs to the model is used.

transformers loads whatever names fit: a weight the model has and the checkpoint lacks is initialised at random,
a weight of the checkpoint the model has no place for is dropped, and both only show in a log report. A model
whose class does not match its weights (MOSAIC BERT read as transformers' BERT) would then train and score with
random layers. `check_loading` turns transformers' loading info (`output_loading_info=True`) into an `InputError`
instead, except for what is left out on purpose:

- heads the model does not have: a checkpoint's weights under a name that is none of the model's top-level
  modules (an MLM checkpoint's `cls.*`, ELECTRA's `discriminator_predictions.*`, a causal LM's `lm_head`, BERT's
  `pooler` read by a model without one);
- layers cut off on purpose (`truncated`: the rankers' `backbone_layers`): a checkpoint's weights of a layer
  list's entries past the model's last;
- modules the caller drops after loading (`dropped`: the rankers' pooler), which may be missing.
"""

from __future__ import annotations

import re

from posbias.errors import InputError

SHOWN = 3  # keys named in an error, of each kind
INDEX = re.compile(r"^(.*?)\.(\d+)\.")  # the first list index in a key: `encoder.layer.7.` -> (encoder.layer, 7)


def _own_name(key: str, prefix: str) -> str:
    """A checkpoint key with the base model's prefix (`bert.`) taken off: base and task models name their common
    weights alike after it."""
    return key[len(prefix) + 1:] if prefix and key.startswith(prefix + ".") else key


def _layer_cut_off(model, name: str) -> bool:
    """Whether `name` (prefix taken off) is a weight of a list entry past the model's last (a cut-off layer)."""
    from torch import nn

    found = INDEX.match(name)
    if not found:
        return False
    for owner in (model, getattr(model, "base_model", model)):
        try:
            layers = owner.get_submodule(found.group(1))
        except AttributeError:
            continue
        return isinstance(layers, nn.ModuleList) and int(found.group(2)) >= len(layers)
    return False


def _shown(keys: list[str]) -> str:
    return ", ".join(keys[:SHOWN]) + (f" and {len(keys) - SHOWN} more" if len(keys) > SHOWN else "")


def check_loading(model, info: dict, name: str, what: str, truncated: bool = False,
                  dropped: tuple[str, ...] = ()) -> None:
    """Raise an `InputError` naming the `what` `name`, its class and the first keys, when the model misses
    weights, leaves weights of its own modules unused, or has weights of another shape (see the module's
    docstring for what is left out on purpose)."""
    prefix = getattr(model, "base_model_prefix", "") or ""
    modules = {_own_name(key, prefix).split(".")[0] for key in model.state_dict()}
    missing = sorted(key for key in info.get("missing_keys", ())
                     if _own_name(key, prefix).split(".")[0] not in dropped)
    unused = sorted(key for key in info.get("unexpected_keys", ())
                    if _own_name(key, prefix).split(".")[0] in modules
                    and not (truncated and _layer_cut_off(model, _own_name(key, prefix))))
    mismatched = sorted(f"{key} {tuple(saved)} for {tuple(wanted)}" for key, saved, wanted in
                        info.get("mismatched_keys", ()))
    problems = [f"{len(keys)} {kind}: {_shown(keys)}" for kind, keys in (
        ("missing from the checkpoint (they would be random)", missing),
        ("of the checkpoint unused", unused),
        ("of another shape in the checkpoint", mismatched)) if keys]
    if problems:
        cls = type(model)
        raise InputError(f"the {what} {name!r} does not fit its class {cls.__module__}.{cls.__qualname__}: "
                         f"weights {'; '.join(problems)}. Is the config's model_type or auto_map the checkpoint's?")
