"""Saved training state, so a killed or timed-out training job continues where it stopped.

Every `save_every` optimizer steps the loop writes one file, `state.pt`, into a directory beside
the job's output: the whole ranker, optimizer, scheduler and grad scaler, the Python, NumPy and
torch random states, and the position in the sample stream (epoch, step within it, and the sampler's
random state at the start of that epoch, from which the epoch's pairs are drawn again). The file is
replaced atomically, so a kill leaves either the previous state or the new one, and so does a full disk (a
`DiskFullError` naming the file and the bytes of its tensors). Resuming restores all of it, and on a CPU the
result is bit-identical to a run that was never interrupted.

A state records a fingerprint of what it was trained on (ranker, arguments, settings, seed, pairs);
a state with another fingerprint (a changed config) is discarded, never resumed.
"""

from __future__ import annotations

import logging
import random
import shutil
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from posbias.io import atomic_write
from posbias.rankers.checkpoint import tensor_bytes

log = logging.getLogger(__name__)

STATE_FILE = "state.pt"


@dataclass
class Position:
    """Where the loop is: `step` optimizer steps of epoch `epoch` are done (`global_step` in all)."""

    epoch: int
    step: int
    global_step: int
    epoch_rng: tuple  # the sampler's random.Random state when this epoch's pairs were drawn
    losses: list[float]


def _random_states() -> dict:
    numpy_state = np.random.get_state()
    return {
        "python": random.getstate(),
        "numpy": (numpy_state[0], numpy_state[1].tolist(), *numpy_state[2:]),
        "torch": torch.get_rng_state(),
        "cuda": torch.cuda.get_rng_state_all() if torch.cuda.is_available() else [],
    }


def _restore_random_states(states: dict) -> None:
    random.setstate(states["python"])
    name, keys, *rest = states["numpy"]
    np.random.set_state((name, np.asarray(keys, dtype=np.uint32), *rest))
    torch.set_rng_state(states["torch"])
    if states["cuda"] and torch.cuda.is_available():
        torch.cuda.set_rng_state_all(states["cuda"])


class TrainingState:
    """The saved state of one training job, in `directory` (created on the first save)."""

    def __init__(self, directory: str | Path, fingerprint: str):
        self.directory = Path(directory)
        self.path = self.directory / STATE_FILE
        self.fingerprint = fingerprint

    def save(self, position: Position, ranker, optimizer, scheduler, scaler) -> None:
        state = {
            "fingerprint": self.fingerprint,
            "position": position.__dict__,
            "ranker": ranker.state_dict(),
            "optimizer": optimizer.state_dict(),
            "scheduler": scheduler.state_dict(),
            "scaler": scaler.state_dict(),
            "random": _random_states(),
        }
        with atomic_write(self.path, "wb", needs=tensor_bytes(state)) as handle:
            torch.save(state, handle)
        log.info("saved training state after step %d to %s", position.global_step, self.path)

    def restore(self, ranker, optimizer, scheduler, scaler) -> Position | None:
        """Load a saved state into the given objects and return its position; None when there is none
        (or it belongs to other settings, and is then removed)."""
        if not self.path.is_file():
            return None
        state = torch.load(self.path, map_location="cpu", weights_only=False)  # our own file, beside our output
        if state["fingerprint"] != self.fingerprint:
            log.warning("%s was saved by a run with other settings or data; starting from scratch", self.path)
            self.remove()
            return None
        ranker.load_state_dict(state["ranker"])
        optimizer.load_state_dict(state["optimizer"])
        scheduler.load_state_dict(state["scheduler"])
        scaler.load_state_dict(state["scaler"])
        _restore_random_states(state["random"])
        position = Position(**state["position"])
        log.info("resuming from %s after step %d", self.path, position.global_step)
        return position

    def remove(self) -> None:
        shutil.rmtree(self.directory, ignore_errors=True)
