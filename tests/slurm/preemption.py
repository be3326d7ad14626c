"""Helpers of run_preemption_test.sh (not a pytest module): the profile's warning signal (if any) and the config's
stop margin, the training speed of a calibration run, what the two attempts' logs say, and the two checkpoints
compared tensor by tensor.

    python preemption.py signal PROFILE     -> "FORM SECONDS" of the train rule's --signal=FORM@SECONDS, or "none 0"
    python preemption.py margin CONFIG      -> training.stop_before_limit_minutes of the config, in seconds
    python preemption.py rate TRAIN_LOG     -> "STEPS SECONDS": optimizer steps and seconds of training
    python preemption.py attempts SNAKEMAKE_LOG TRAIN_LOG STOP  -> checks both attempts, prints what they did; STOP
                                               is the signal expected (SIGUSR1) or "time-limit"
    python preemption.py compare REFERENCE_CHECKPOINT CHECKPOINT  -> every tensor bit-identical, or exit status 1
"""

from __future__ import annotations

import json
import re
import sys
from datetime import datetime
from pathlib import Path

SIGNAL = re.compile(r"--signal=((?:[BR]+:)?[A-Z0-9]+)@(\d+)")
# what the training loop and its job log write (posbias.training.loop, posbias.training.resume, posbias.logs); a
# log line may follow a progress bar's last frame on the same line
STAMP = r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d),\d+ INFO \S+: "
DEVICE = re.compile(STAMP + r"device: ")
SAVED = re.compile(STAMP + r"saved training state after step (\d+) to (\S+)")
PREEMPTED = re.compile(r"job stopped: training (\S+) \(seed (\d+)\): (signal SIG\w+|\d+ s left of SLURM job \d+ "
                       r"\(training.stop_before_limit_minutes: [\d.]+\)) at optimizer step (\d+) of (\d+)")
RESUMED = re.compile(STAMP + r"resuming from (\S+) after step (\d+)")
TRAINED = re.compile(STAMP + r"trained (\S+) for (\d+) steps on")


def fail(message: str) -> None:
    print(f"[test-slurm-preempt] ERROR: {message}", file=sys.stderr)
    raise SystemExit(1)


def profile_signal(profile: str) -> None:
    import yaml

    extra = yaml.safe_load(Path(profile).read_text())["set-resources"]["train"].get("slurm_extra", "")
    match = SIGNAL.search(extra)
    print(*(match.groups() if match else ("none", 0)))


def stop_margin(config: str) -> None:
    from posbias.config import load_config

    print(round(60 * load_config(config).data["training"]["stop_before_limit_minutes"]))


def when(match: re.Match | None) -> datetime | None:
    return datetime.strptime(match.group(1), "%Y-%m-%d %H:%M:%S") if match else None


def training_rate(log: str) -> None:
    """Steps and seconds of training in a finished job's log: from its device line (the model is loaded) to the line
    saying it trained, so start-up is left out."""
    text = Path(log).read_text()
    start, trained = DEVICE.search(text), TRAINED.search(text)
    if not (start and trained):
        fail(f"{log}: no device line or no 'trained ... for N steps' line")
    print(trained.group(3), max((when(trained) - when(start)).total_seconds(), 1.0))


def attempts(snakemake_log: str, train_log: str, expected_stop: str) -> None:
    """The first attempt (its log, printed by Snakemake's --show-failed-logs when the job failed) saw its time limit
    near (or received the signal), saved its state and stopped; the second resumed from that state and finished."""
    first = Path(snakemake_log).read_text()
    saved = SAVED.findall(first)
    preempted = PREEMPTED.search(first)
    if not preempted:
        signals = re.findall(r"signal (SIG\w+)", first)
        fail(f"the first attempt was not stopped by its time limit or a signal (no 'job stopped: training ...' in {snakemake_log}"
             + (f"; it mentions {sorted(set(signals))}" if signals else "") + ")")
    name, seed, stop, step, total = preempted.groups()
    step, total = int(step), int(total)
    stopped_by = stop.removeprefix("signal ") if stop.startswith("signal ") else "time-limit"
    if stopped_by != expected_stop:
        fail(f"the first attempt stopped on {stop!r}, not on {expected_stop}")
    if not saved or int(saved[-1][1]) != step:
        fail(f"the first attempt stopped at step {step} but its log has no 'saved training state after step {step}'")
    if not 0 < step < total:
        fail(f"training stopped at step {step} of {total}: not during training")
    second = Path(train_log).read_text()
    resumed = RESUMED.search(second)
    if not resumed or int(resumed.group(3)) != step:
        fail(f"the second attempt did not resume after step {step} ({train_log}: "
             f"{resumed.group(0) if resumed else 'no resuming line'})")
    trained = TRAINED.search(second)
    if not trained or int(trained.group(3)) != total:
        fail(f"the second attempt did not finish the {total} steps ({train_log})")
    started, saved_at = when(DEVICE.search(first)), when(SAVED.search(first))
    print(f"{stop} at step {step} of {total} (training from {started:%H:%M:%S}, state saved {saved_at:%H:%M:%S}), "
          f"resumed after step {int(resumed.group(3))} ({when(resumed):%H:%M:%S}), {total} steps done "
          f"({when(trained):%H:%M:%S})")
    print(f"{saved_at:%Y-%m-%dT%H:%M:%S}")


def tensors(directory: Path) -> dict[str, object]:
    """Every tensor of a checkpoint: the safetensors files (the backbone's) and the rest of the ranker (ranker.pt)."""
    import torch
    from safetensors.torch import load_file

    found = {}
    for path in sorted(directory.rglob("*.safetensors")):
        for key, tensor in load_file(path).items():
            found[f"{path.relative_to(directory)}:{key}"] = tensor
    for path in sorted(directory.rglob("*.pt")):
        for key, tensor in torch.load(path, map_location="cpu").items():
            found[f"{path.relative_to(directory)}:{key}"] = tensor
    return found


def compare(reference: str, checkpoint: str) -> None:
    import torch

    ref, got = tensors(Path(reference)), tensors(Path(checkpoint))
    if not ref:
        fail(f"{reference}: no tensors")
    if ref.keys() != got.keys():
        fail(f"the checkpoints hold different tensors: only in the reference {sorted(ref.keys() - got.keys())[:5]}, "
             f"only in the resumed run {sorted(got.keys() - ref.keys())[:5]}")
    differing = [key for key in ref if ref[key].dtype != got[key].dtype or ref[key].shape != got[key].shape
                 or not torch.equal(ref[key], got[key])]
    if differing:
        worst = max(differing, key=lambda k: (ref[k].float() - got[k].float()).abs().max().item()
                    if ref[k].shape == got[k].shape else float("inf"))
        fail(f"{len(differing)} of {len(ref)} tensors differ from the uninterrupted run's, e.g. {worst}")
    losses = [json.loads((Path(d) / "ranker.json").read_text())["training"]["losses"] for d in (reference, checkpoint)]
    if losses[0] != losses[1]:
        fail("the loss curves in ranker.json differ")
    files = sorted({key.split(":", 1)[0] for key in ref})
    print(f"{len(ref)} tensors ({sum(t.numel() for t in ref.values())} numbers; {', '.join(files)}) bit-identical, "
          f"and the {len(losses[0])} step losses equal")


if __name__ == "__main__":
    command, *args = sys.argv[1:]
    {"signal": profile_signal, "margin": stop_margin, "rate": training_rate, "attempts": attempts, "compare": compare}[command](*args)
