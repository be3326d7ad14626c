"""Resumable, guarded training: a job killed with SIGKILL after a saved state resumes to the same bits,
a disk that fills is one line and the same command finishes once there is space, a non-finite loss stops the
job by name, stale states are not resumed, and the schedule follows the optimizer steps the fp16 scaler really
took."""

from __future__ import annotations

import os
import re
import signal
import subprocess
import sys
from pathlib import Path

import pytest
import torch
import yaml

from posbias.errors import DiskFullError
from posbias.io import write_qrels, write_queries, write_run
from posbias.rankers.checkpoint import load_checkpoint
from posbias.training.loop import optimizer_step
from posbias.rankers.checkpoint import tensor_bytes
from posbias.training.resume import Position, TrainingState

pytestmark = pytest.mark.slow  # minutes: `make test` starts this file first (tests/conftest.py)

ROOT = Path(__file__).resolve().parents[2]
QUERIES = {f"q{i}": f"capital of land{i}" for i in range(6)}
DOCS = {**{f"pos{i}": f"the capital of land{i} is city{i} and it lies by the sea" for i in range(6)},
        **{f"neg{i}": f"land{i} has green hills and quiet rivers " * (i + 1) for i in range(6)}}
QRELS = {f"q{i}": {f"pos{i}": 1} for i in range(6)}
CANDIDATES = {f"q{i}": {f"pos{i}": 2.0, f"neg{i}": 1.0, f"neg{(i + 1) % 6}": 0.5, f"neg{(i + 2) % 6}": 0.2}
              for i in range(6)}

# Runs `posbias train` in this process. With a number N as first argument, the N-th saved state
# is announced on stdout and the process then waits to be killed.
TRAIN_SCRIPT = """
import sys
from posbias.training import resume
stop_after = int(sys.argv[1])
if stop_after:
    original, saves = resume.TrainingState.save, []
    def save_then_wait(self, *args, **kwargs):
        original(self, *args, **kwargs)
        saves.append(1)
        if len(saves) == stop_after:
            print("SAVED", flush=True)
            sys.stdin.read()  # blocks until the test kills us
    resume.TrainingState.save = save_then_wait
from posbias.cli import main
sys.exit(main(sys.argv[2:]))
"""


@pytest.fixture(scope="module")
def training_inputs(tmp_path_factory, tiny_backbone):
    from posbias.data.token_store import build_token_store
    from posbias.io import write_documents

    root = tmp_path_factory.mktemp("resume")
    write_documents(root / "docs.jsonl", ({"id": d, "text": t} for d, t in DOCS.items()))
    build_token_store(root / "docs.jsonl", root / "tokens", tiny_backbone, 32, progress=False)
    write_queries(root / "queries.tsv", QUERIES)
    write_qrels(root / "qrels.txt", QRELS)
    write_run(root / "candidates.run", CANDIDATES, tag="bm25")
    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    args = dict(backbone=tiny_backbone, max_query_tokens=6, chunk_tokens=8, stride=8, max_doc_tokens=32)
    config["models"] = {
        "firstp": {"label": "FirstP", "ranker": "firstp", "baseline": "firstp", "lr": 1e-3, "head_lr": 1e-2,
                   "args": {**args, "max_doc_tokens": 8}},
        "maxp": {"label": "MaxP", "ranker": "maxp", "baseline": "firstp", "lr": 1e-3, "head_lr": 1e-2, "args": args}}
    config["tables"] = {"table1": {"columns": [{"queryset": "dev", "metric": "RR@10"}]}}  # the two models only
    config.pop("probes")  # its checkpoint scorers name models this config leaves out
    config.pop("audit")  # so does its trained model
    # Dropout stays on (its random state must be restored too); 3 steps per epoch, 2 epochs, a save every step.
    config["training"].update(epochs=2, batch_size=2, grad_accum=1, freeze_embeddings=False, freeze_layers=0,
                              save_every=1, device="cpu")
    (root / "config.yaml").write_text(yaml.safe_dump(config))
    return root


def train_command(root: Path, out: Path, stop_after: int = 0, config: Path | None = None) -> list[str]:
    config = config or root / "config.yaml"
    return [sys.executable, "-c", TRAIN_SCRIPT, str(stop_after), "train", "--config", str(config),
            "--model", "maxp", "--seed", "5", "--tokens", str(root / "tokens"), "--queries",
            str(root / "queries.tsv"), "--qrels", str(root / "qrels.txt"), "--candidates",
            str(root / "candidates.run"), "--out", str(out)]


def scores(checkpoint: Path, root: Path) -> torch.Tensor:
    from posbias.data.token_store import TokenStore
    from posbias.scoring.ranker import RankerScorer
    from posbias.scoring.reranking import rerank

    ranker, tokenizer = load_checkpoint(str(checkpoint))
    with TokenStore(root / "tokens") as store:
        scorer = RankerScorer(ranker, tokenizer, batch_size=4, device="cpu", progress=False)
        run, _ = rerank(scorer, QUERIES, store, CANDIDATES)
    return torch.tensor([run[q][d] for q in sorted(run) for d in sorted(run[q])])


@pytest.mark.parametrize("stop_after", [1, 3])  # after the first step; at the end of the first epoch
def test_a_job_killed_after_a_saved_state_resumes_to_the_same_bits(training_inputs, tmp_path, stop_after):
    root = training_inputs
    subprocess.run(train_command(root, tmp_path / "whole"), check=True, capture_output=True, timeout=300)

    killed = tmp_path / "killed"
    process = subprocess.Popen(train_command(root, killed, stop_after), stdin=subprocess.PIPE,
                               stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    try:
        assert process.stdout.readline().strip() == "SAVED"
        process.send_signal(signal.SIGKILL)
        assert process.wait(timeout=60) == -signal.SIGKILL
    finally:
        process.kill()
    state = Path(f"{killed}.resume") / "state.pt"
    assert state.is_file() and not killed.exists()
    assert torch.load(state, weights_only=False)["position"]["global_step"] == stop_after

    resumed = subprocess.run(train_command(root, killed), check=True, capture_output=True, text=True, timeout=300)
    assert f"resuming from {state} after step {stop_after}" in resumed.stderr
    assert not state.parent.exists()  # removed once the checkpoint is complete

    whole, _ = load_checkpoint(str(tmp_path / "whole"))
    again, _ = load_checkpoint(str(killed))
    for (name, a), (_, b) in zip(whole.state_dict().items(), again.state_dict().items()):
        assert torch.equal(a, b), name
    assert torch.equal(scores(tmp_path / "whole", root), scores(killed, root))


def test_a_disk_that_fills_at_the_checkpoint_is_one_line_and_more_space_lets_the_same_command_finish(
        training_inputs, small_disk, tmp_path):
    config = yaml.safe_load((training_inputs / "config.yaml").read_text())
    config["training"]["save_every"] = 0  # no saved state: the checkpoint is all the job writes to the small disk
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    disk = small_disk("1m")  # the tiny ranker's checkpoint takes about 5 MB
    out = disk.root / "ckpt"
    command = train_command(training_inputs, out, config=tmp_path / "config.yaml")

    failed = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert failed.returncode == 4, failed.stderr
    assert "Traceback" not in failed.stderr
    prefix = "posbias train: error: "  # the log and the progress bar come before it, on stderr too
    errors = [line for line in failed.stderr.splitlines() if prefix in line]
    assert errors == [failed.stderr.strip().splitlines()[-1]]
    assert re.fullmatch(rf"{prefix}no space left on device writing {re.escape(str(out))}: needs about "
                        rf"(\d+\.\d) MB, [\d.]+ (bytes|kB|MB) free on {re.escape(str(disk.root))}", errors[0])
    assert os.listdir(disk.root) == []  # no checkpoint, no hidden staging directory, no state

    disk.resize("64m")
    subprocess.run(command, check=True, capture_output=True, timeout=300)
    ranker, _ = load_checkpoint(str(out))
    assert f"needs about {tensor_bytes(ranker.state_dict()) / 1e6:.1f} MB" in errors[0]  # what the ranker holds
    assert os.listdir(disk.root) == ["ckpt"]


def test_a_state_the_disk_has_no_room_for_leaves_the_last_one_whole(small_disk):
    disk = small_disk("1m")
    optimizer = torch.optim.AdamW(torch.nn.Linear(2, 1).parameters())
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0)
    scaler = torch.amp.GradScaler("cpu", enabled=False)
    state = TrainingState(disk.root / "ckpt.resume", "f")
    first = Position(epoch=0, step=1, global_step=1, epoch_rng=(3, tuple(range(625)), None), losses=[0.5])
    state.save(first, torch.nn.Linear(2, 1), optimizer, scheduler, scaler)
    larger = torch.nn.Linear(600, 600)  # 1.4 MB of weights: no room on a 1 MB disk
    with pytest.raises(DiskFullError, match=rf"^no space left on device writing {re.escape(str(state.path))}: "
                                            rf"needs about 1\.4 MB, [\d.]+ (bytes|kB|MB) free on "):
        state.save(Position(0, 2, 2, first.epoch_rng, [0.5, 0.4]), larger, optimizer, scheduler, scaler)
    assert os.listdir(state.directory) == ["state.pt"]  # the hidden temporary went
    assert torch.load(state.path, weights_only=False)["position"] == first.__dict__


def test_a_non_finite_loss_stops_the_job_naming_model_seed_and_step(training_inputs, tmp_path, monkeypatch):
    from posbias.rankers.base import ChunkRanker
    from posbias.training.jobs import Recipe, TrainingSet, TrainJob
    from posbias.training.steps import train_model

    config = yaml.safe_load((training_inputs / "config.yaml").read_text())
    original_forward = ChunkRanker.forward
    calls = []

    def poisoned(self, batch):  # the third forward pass (step 2, first micro-batch) returns NaN scores
        calls.append(1)
        out = original_forward(self, batch)
        return out * float("nan") if len(calls) == 2 else out

    monkeypatch.setattr(ChunkRanker, "forward", poisoned)
    training = {k: v for k, v in config["training"].items() if k not in ("seeds", "queryset")}
    out = tmp_path / "ckpt"
    with pytest.raises(FloatingPointError, match=r"training maxp \(seed 3\): the loss is nan at optimizer step 2 of 6"):
        train_model(TrainJob(Recipe(config["models"]["maxp"], training, 3, "maxp"),
                             TrainingSet(str(training_inputs / "tokens"), str(training_inputs / "queries.tsv"),
                                         str(training_inputs / "qrels.txt"), str(training_inputs / "candidates.run")),
                             str(out), threads=1, progress=False))
    assert not out.exists()


def test_a_state_saved_with_other_settings_is_discarded(tmp_path):
    model = torch.nn.Linear(2, 1)
    optimizer = torch.optim.AdamW(model.parameters())
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0)
    scaler = torch.amp.GradScaler("cpu", enabled=False)
    position = Position(epoch=0, step=1, global_step=1, epoch_rng=(3, tuple(range(625)), None), losses=[0.5])
    TrainingState(tmp_path / "state", "old").save(position, model, optimizer, scheduler, scaler)
    assert TrainingState(tmp_path / "state", "old").restore(model, optimizer, scheduler, scaler) == position
    assert TrainingState(tmp_path / "state", "new").restore(model, optimizer, scheduler, scaler) is None
    assert not (tmp_path / "state").exists()


def test_the_schedule_does_not_advance_when_the_fp16_scaler_skips_the_step():
    model = torch.nn.Linear(2, 1)
    optimizer = torch.optim.SGD(model.parameters(), lr=1.0)
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0)
    scaler = torch.amp.GradScaler("cpu", enabled=True)  # the CPU scaler behaves as the CUDA one
    before = model.weight.detach().clone()
    scaler.scale(model(torch.tensor([[float("inf"), 1.0]])).sum()).backward()
    assert optimizer_step(model, optimizer, scheduler, scaler, max_grad_norm=1.0) is False
    assert scheduler.last_epoch == 0 and torch.equal(model.weight, before)
    scaler.scale(model(torch.tensor([[1.0, 1.0]])).sum()).backward()
    assert optimizer_step(model, optimizer, scheduler, scaler, max_grad_norm=1.0) is True
    assert scheduler.last_epoch == 1 and not torch.equal(model.weight, before)
