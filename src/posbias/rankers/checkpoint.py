"""Self-describing checkpoints: load a trained ranker without the config that made it.

Layout of a checkpoint directory:
  backbone/     the fine-tuned backbone and its tokenizer (`save_pretrained`)
  head.pt       the aggregator's weights
  ranker.json   registry name and constructor arguments
"""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import torch

from posbias.backbones import from_pretrained
from posbias.errors import InputError, first_line
from posbias.io import atomic_directory, read_json
from posbias.rankers.registry import ChunkRanker, build_ranker

BACKBONE, HEAD, DESCRIPTION = "backbone", "head.pt", "ranker.json"


def save_checkpoint(ranker: ChunkRanker, tokenizer, directory: str, extra: dict | None = None) -> None:
    """Write the checkpoint to a staging directory, then move it into place (`posbias.io.atomic_directory`)."""
    with atomic_directory(directory) as staging:
        ranker.encoder.backbone.save_pretrained(staging / BACKBONE)
        tokenizer.save_pretrained(staging / BACKBONE)
        torch.save(ranker.aggregator.state_dict(), staging / HEAD)
        description = {"name": ranker.registry_name, "args": ranker.args, **(extra or {})}
        (staging / DESCRIPTION).write_text(json.dumps(description, indent=2) + "\n")


def load_checkpoint(directory: str) -> tuple[ChunkRanker, "object"]:
    """Return the ranker (in eval mode) and its tokenizer; a missing, incomplete or damaged checkpoint is an
    `InputError` naming the directory or its file."""
    from transformers import AutoTokenizer

    path = Path(directory)
    if not path.is_dir():
        raise InputError(f"{directory}: no such checkpoint directory (`posbias train` writes one)")
    missing = [name for name in (DESCRIPTION, HEAD, BACKBONE) if not (path / name).exists()]
    if missing:
        raise InputError(f"{directory} is not a posbias checkpoint: {', '.join(missing)} missing")
    description = read_json(path / DESCRIPTION)
    if not isinstance(description, dict) or not isinstance(description.get("name"), str) \
            or not isinstance(description.get("args"), dict):
        raise InputError(f'{path / DESCRIPTION}: expected an object with a "name" and its "args"')
    args = dict(description["args"])
    args["backbone"] = str(path / BACKBONE)
    args["backbone_layers"] = None  # the saved backbone already has its layer count
    ranker = build_ranker(description["name"], args)
    try:
        ranker.aggregator.load_state_dict(torch.load(path / HEAD, map_location="cpu"))
    except (RuntimeError, EOFError, pickle.UnpicklingError) as err:  # a damaged file, or another ranker's head
        raise InputError(f"{path / HEAD}: not the head of a {description['name']} ranker "
                         f"({first_line(err)})") from None
    ranker.eval()
    tokenizer = from_pretrained(AutoTokenizer, str(path / BACKBONE), "checkpoint's tokenizer",
                                trust_remote_code=bool(args.get("trust_remote_code")))
    return ranker, tokenizer
