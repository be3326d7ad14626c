"""Self-describing checkpoints: load a trained ranker without the config that made it.

Layout of a checkpoint directory:
  backbone/     the fine-tuned backbone and its tokenizer (`save_pretrained`): what the ranker is built on
  ranker.pt     the whole ranker's state_dict (backbone, aggregator and any module a ranker adds)
  ranker.json   registry name and constructor arguments (`ranker.args`, see `build_ranker`)

Checkpoints written before `ranker.pt` existed hold the aggregator's weights in `head.pt`; they
still load.
"""

from __future__ import annotations

import json
from pathlib import Path

import torch

from posbias.io import atomic_directory
from posbias.rankers.registry import ChunkRanker, build_ranker

STATE_FILE = "ranker.pt"
LEGACY_HEAD_FILE = "head.pt"


def save_checkpoint(ranker: ChunkRanker, tokenizer, directory: str, extra: dict | None = None) -> None:
    """Write the checkpoint to a staging directory, then move it into place (`posbias.io.atomic_directory`)."""
    with atomic_directory(directory) as staging:
        ranker.encoder.backbone.save_pretrained(staging / "backbone")
        tokenizer.save_pretrained(staging / "backbone")
        torch.save(ranker.state_dict(), staging / STATE_FILE)
        description = {"name": ranker.registry_name, "args": ranker.args, **(extra or {})}
        (staging / "ranker.json").write_text(json.dumps(description, indent=2) + "\n")


def load_checkpoint(directory: str) -> tuple[ChunkRanker, "object"]:
    """Return the ranker (in eval mode) and its tokenizer."""
    from transformers import AutoTokenizer

    path = Path(directory)
    description_file = path / "ranker.json"
    if not description_file.exists():
        raise FileNotFoundError(f"{description_file} is missing: {directory} is not a posbias checkpoint")
    description = json.loads(description_file.read_text())
    args = dict(description["args"])
    args["backbone"] = str(path / "backbone")
    args["backbone_layers"] = None  # the saved backbone already has its layer count
    ranker = build_ranker(description["name"], args)
    if (path / STATE_FILE).exists():
        # strict: a key missing on either side is an error, never a silently fresh weight
        ranker.load_state_dict(torch.load(path / STATE_FILE, map_location="cpu"))
    else:
        ranker.aggregator.load_state_dict(torch.load(path / LEGACY_HEAD_FILE, map_location="cpu"))
    ranker.eval()
    tokenizer = AutoTokenizer.from_pretrained(path / "backbone",
                                              trust_remote_code=bool(args.get("trust_remote_code")))
    return ranker, tokenizer
