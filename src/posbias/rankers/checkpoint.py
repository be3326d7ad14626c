"""Self-describing checkpoints: load a trained ranker without the config that made it, and without the network.

Layout of a checkpoint directory:
  backbone/     the fine-tuned backbone and its tokenizer (`save_pretrained`): reusable on its own
  auxiliary/    one `save_pretrained` directory per further pretrained model of the ranker (PARADE PRETR's
                aggregator), by the constructor argument that names it; loading builds them from here
  ranker.pt     the rest of the ranker's state_dict: the head and every module or parameter a ranker adds
  ranker.json   registry name and constructor arguments (`ranker.args`, see `build_ranker`), and the backbone's
                class (`backbone_class`, `module.Class`: MOSAIC BERT's is bert_layers.BertModel of its own code)
  provenance.json  (optional) what made it: code, environment, device, precision, weights, config hash
                (`posbias.provenance.identity`); loading never reads it

Loading is strict on both parts: a parameter missing from `ranker.pt` or from the backbone's weights is
an error, never a freshly initialised weight (`posbias.loaded_weights`), and the backbone must load as the class
it was saved from. A backbone of a model's own code (`trust_remote_code`) is saved with that code.
Checkpoints written before `ranker.pt` existed hold the aggregator's weights in `head.pt`, and those before the
head was called `head` name it `aggregator.`; both still load.
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import torch

from posbias.backbones import from_pretrained
from posbias.errors import InputError, first_line
from posbias.io import atomic_directory, read_json
from posbias.rankers.base import ChunkRanker
from posbias.rankers.checkpoint_files import AUXILIARY, BACKBONE, DESCRIPTION, LEGACY_HEAD, SIDECAR, STATE
from posbias.rankers.registry import build_ranker

LEGACY_PREFIX = "aggregator."  # state_dict keys of the aggregator in checkpoints written before ranker.pt
BACKBONE_PREFIX = "encoder.backbone."  # state_dict keys saved in backbone/ instead


def tensor_bytes(state) -> int:
    """The bytes of the tensors in a state (dicts, lists and tuples of them), each storage counted once (tied
    weights share one): about what torch.save or safetensors writes for it."""
    storages, pending = {}, [state]
    while pending:
        value = pending.pop()
        if isinstance(value, torch.Tensor):
            storage = value.untyped_storage()
            storages[(value.device, storage.data_ptr())] = storage.nbytes()
        elif isinstance(value, dict):
            pending.extend(value.values())
        elif isinstance(value, (list, tuple)):
            pending.extend(value)
    return sum(storages.values())


def save_checkpoint(ranker: ChunkRanker, tokenizer, directory: str, extra: dict | None = None,
                    provenance: dict | None = None) -> None:
    """Write the checkpoint to a staging directory, then move it into place (`posbias.io.atomic_directory`);
    `provenance` goes to its sidecar, inside the same atomic move. A full disk is a `DiskFullError` naming
    `directory` and the bytes of the ranker's tensors."""
    with atomic_directory(directory, needs=tensor_bytes(ranker.state_dict())) as staging:
        ranker.encoder.backbone.save_pretrained(staging / BACKBONE)
        tokenizer.save_pretrained(staging / BACKBONE)
        for argument, model in ranker.auxiliary_models().items():
            model.save_pretrained(staging / AUXILIARY / argument)
        state = {k: v for k, v in ranker.state_dict().items() if not k.startswith(BACKBONE_PREFIX)}
        # through a Python file: torch's own writer reports a full disk as "unexpected pos", without its errno
        with open(staging / STATE, "wb") as out:
            torch.save(state, out)
        description = {"name": ranker.registry_name, "args": ranker.args,
                       "backbone_class": class_name(ranker.encoder.backbone), **(extra or {})}
        (staging / DESCRIPTION).write_text(json.dumps(description, indent=2) + "\n")
        if provenance is not None:
            (staging / SIDECAR).write_text(json.dumps(provenance, indent=2) + "\n")


def _load_rest(ranker: ChunkRanker, path: Path, name: str) -> None:
    """Everything but the backbone, strictly: a key missing on either side is an error, never a fresh weight."""
    state_file = path / STATE if (path / STATE).exists() else path / LEGACY_HEAD
    try:
        state = torch.load(state_file, map_location="cpu")
        if state_file.name == LEGACY_HEAD:
            ranker.head.load_state_dict(state)
            return
        state = {("head." + k[len(LEGACY_PREFIX):] if k.startswith(LEGACY_PREFIX) else k): v for k, v in state.items()}
        missing, unexpected = ranker.load_state_dict(state, strict=False)
    except (RuntimeError, EOFError, pickle.UnpicklingError) as err:  # a damaged file, or another ranker's state
        raise InputError(f"{state_file}: not the state of a {name} ranker ({first_line(err)})") from None
    missing = [k for k in missing if not k.startswith(BACKBONE_PREFIX)]
    if missing or unexpected:
        raise InputError(f"{state_file}: not the state of a {name} ranker (missing {missing[:5]}, "
                         f"unexpected {unexpected[:5]})")


def class_name(model) -> str:
    """`module.Class` of a model, as ranker.json records its backbone's."""
    cls = type(model)
    return f"{cls.__module__}.{cls.__qualname__}"


def _check_backbone_class(ranker: ChunkRanker, recorded: str | None, path: Path) -> None:
    """The backbone reloads as the class it was saved from. A model's own code is imported under a module path
    that names its directory and a hash (transformers_modules.<dir>.<hash>.bert_layers), so the file's module and
    the class are compared."""
    loaded = class_name(ranker.encoder.backbone)
    if recorded and recorded.split(".")[-2:] != loaded.split(".")[-2:]:
        raise InputError(f"{path}: the backbone was saved as {recorded} but loads as {loaded}")


def load_checkpoint(directory: str) -> tuple[ChunkRanker, "object"]:
    """Return the ranker (in eval mode) and its tokenizer; a missing, incomplete or damaged checkpoint is an
    `InputError` naming the directory or its file."""
    from transformers import AutoTokenizer

    path = Path(directory)
    if not path.is_dir():
        raise InputError(f"{directory}: no such checkpoint directory (`posbias train` writes one)")
    missing = [name for name in (DESCRIPTION, BACKBONE) if not (path / name).exists()]
    if not (path / STATE).exists() and not (path / LEGACY_HEAD).exists():
        missing.append(STATE)
    if missing:
        raise InputError(f"{directory} is not a posbias checkpoint: {', '.join(missing)} missing")
    description = read_json(path / DESCRIPTION)
    if not isinstance(description, dict) or not isinstance(description.get("name"), str) \
            or not isinstance(description.get("args"), dict):
        raise InputError(f'{path / DESCRIPTION}: expected an object with a "name" and its "args"')
    args = dict(description["args"])
    args["backbone"] = str(path / BACKBONE)
    args["backbone_layers"] = None  # the saved backbone already has its layer count
    if (path / AUXILIARY).is_dir():
        for auxiliary in sorted((path / AUXILIARY).iterdir()):
            args[auxiliary.name] = str(auxiliary)
    ranker = build_ranker(description["name"], args)  # its backbone's weights are checked as it loads
    _check_backbone_class(ranker, description.get("backbone_class"), path / BACKBONE)
    _load_rest(ranker, path, description["name"])
    ranker.eval()
    tokenizer = from_pretrained(AutoTokenizer, str(path / BACKBONE), "checkpoint's tokenizer",
                                trust_remote_code=bool(args.get("trust_remote_code")))
    return ranker, tokenizer
