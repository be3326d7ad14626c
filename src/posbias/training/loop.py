"""The training recipe of the long-document study (appendix A.1.2).

Pairwise margin loss (the mean or the sum over an optimizer step's pairs); per step one positive
and one hard negative per query; minibatches with gradient accumulation; AdamW with separate learning
rates for the backbone, the head and (PARADE PRETR) a pretrained aggregator; a linear warm-up over the first 20% of all optimizer
steps, then a constant rate, optionally decayed after each epoch; gradient clipping unless
`max_grad_norm` is None; autocast (bf16, else fp16 on CUDA; bf16 on a CPU when asked) for the backbone, the
scoring head in fp32.
An epoch visits every training query `query_repeats` times, or `queries_per_epoch` of them.
Document token ids come from a token store, a batch at a time.
A training job saves its state every `save_minutes` (or `save_every` steps), and when its SLURM job has less than
`stop_before_limit_minutes` left (`time_limit.py`: training asks squeue itself, since SLURM's warning signal does not
reach it under the Snakemake executor on most clusters), when a warning signal does reach it (SIGUSR1, from
`sbatch --signal=USR1@...`) or when it is asked to stop (SIGTERM: scancel, a pre-empting job): then it saves at the
end of the step and stops (`Preempted`), and the same job resumes from the state (`resume.py`; docs/running.md,
"Pre-emption on SLURM"). A non-finite loss stops it.
"""

from __future__ import annotations

import dataclasses
import logging
import math
import random
import signal
import threading
from time import monotonic
from typing import Mapping

import numpy as np
import torch
from tqdm import tqdm

from posbias.data.token_store import TokenStore
from posbias.device import autocast, autocast_dtype, dtype_name, fp32_matmuls, pick_device
from posbias.errors import InputError, Stopped
from posbias.rankers.base import ChunkRanker
from posbias.rankers.chunking import ChunkBatch
from posbias.rankers.compilation import compiled_backbone
from posbias.rankers.packing import set_packing
from posbias.settings import fingerprint
from posbias.training.freezing import freeze_lower
from posbias.training.loss import pairwise_margin_loss
from posbias.training.prefetch import prepared_ahead
from posbias.training.recipe import TrainingSettings
from posbias.training.resume import Position, TrainingState
from posbias.training.time_limit import JobTimeLimit
from posbias.training.sampler import PairSampler

log = logging.getLogger(__name__)

# The batch type with `pin_memory` and a non-blocking `to`; PARADE LATEIR's and the bi-encoder's batches copy as before.
PINNABLE = ChunkBatch
# Steps whose batches the background thread prepares ahead of the one the device computes (`training.prefetch`).
PREFETCH_DEPTH = 2
# Settings that choose how a step is computed, not what: a saved state resumes under other values of them.
EXECUTION_SETTINGS = ("save_every", "save_minutes", "stop_before_limit_minutes", "device", "gradient_checkpointing",
                      "one_pass", "pass_pairs", "tf32", "prefetch", "compile", "packing")


class Preempted(Stopped):
    """A signal, or the job's time limit drawing near, stopped training after it saved its state; the same job
    resumes from there. A job's log has it as one line, and the job ends with exit status 6."""


class StopSignals:
    """SIGUSR1 (SLURM's warning before the time limit, `--signal=USR1@...`) and SIGTERM (scancel, a pre-empting job,
    the time limit itself) while training: the handler only notes the signal; the loop saves at the end of the step
    and stops. Outside the main thread (where Python cannot install handlers), or when there is no state to save
    (`enabled` false), nothing is caught: the signals keep their default, which ends the process."""

    SIGNALS = (signal.SIGUSR1, signal.SIGTERM)

    def __init__(self, enabled: bool = True):
        self.received: int | None = None
        self.enabled = enabled
        self._previous = {}

    def __enter__(self):
        if self.enabled and threading.current_thread() is threading.main_thread():
            for number in self.SIGNALS:
                self._previous[number] = signal.signal(number, self._note)
        return self

    def _note(self, number, frame) -> None:
        self.received = number

    def __exit__(self, *exc):
        for number, handler in self._previous.items():
            signal.signal(number, handler)
        return False


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def warmup_then_constant(warmup_steps: int):
    return lambda step: min(1.0, (step + 1) / warmup_steps) if warmup_steps > 0 else 1.0


def decay_learning_rates(optimizer, scheduler, factor: float) -> None:
    """Multiply every parameter group's learning rate by `factor` from now on. LambdaLR recomputes each
    rate as base rate x schedule at every step, so the decay goes into its base rates as well."""
    scheduler.base_lrs = [lr * factor for lr in scheduler.base_lrs]
    for group in optimizer.param_groups:
        group["lr"] *= factor


def optimizer_step(ranker, optimizer, scheduler, scaler, max_grad_norm: float | None) -> bool:
    """Clip (unless `max_grad_norm` is None), step and advance the schedule; returns False when the fp16
    grad scaler skipped the step (inf or NaN gradients: it lowers its scale instead), and then the schedule
    does not advance either."""
    if max_grad_norm is not None:
        scaler.unscale_(optimizer)  # clip the true gradients, not the scaled ones
        torch.nn.utils.clip_grad_norm_(ranker.parameters(), max_grad_norm)
    scale_before = scaler.get_scale() if scaler.is_enabled() else None
    scaler.step(optimizer)
    scaler.update()
    optimizer.zero_grad(set_to_none=True)
    stepped = scale_before is None or scaler.get_scale() >= scale_before
    if stepped:
        scheduler.step()
    return stepped


def parameter_groups(ranker: ChunkRanker, settings: TrainingSettings) -> list[dict]:
    """The optimizer's parameter groups: each of the ranker's groups at its learning rate, frozen parameters left out."""
    rates = settings.learning_rates()
    groups = []
    for group, params in ranker.parameter_groups().items():
        if group not in rates:
            raise ValueError(f"{ranker.registry_name}: parameter group {group!r} has no learning rate "
                             f"(known: {sorted(rates)})")
        trainable = [p for p in params if p.requires_grad]
        if trainable:
            groups.append({"params": trainable, "lr": rates[group], "name": group})
    return groups


def enable_gradient_checkpointing(backbone: torch.nn.Module, name: str) -> None:
    """Hugging Face's gradient checkpointing on the backbone's layers, or an error naming the model."""
    if not getattr(backbone, "supports_gradient_checkpointing", False):
        raise InputError(f"training {name}: training.gradient_checkpointing is set, but the backbone "
                         f"({type(backbone).__name__}) does not support it")
    # Non-reentrant: it also works when no input of a layer needs a gradient (frozen embeddings).
    backbone.activation_checkpointing_enable(activation_checkpointing_kwargs={"use_reentrant": False})


def step_batches(chunker, queries: Mapping[str, str], store: TokenStore, limit: int, step_triples: list,
                 settings: TrainingSettings) -> list[tuple[object, float]]:
    """An optimizer step's input batches in host memory, each with its weight in the step's loss: the step's pairs in
    passes of `settings.pairs_per_pass()` (the recipe's micro-batches of `batch_size`, `pass_pairs`, or all in one
    with `one_pass`), the last pass taking the rest."""
    per_pass = settings.pairs_per_pass()
    passes = []
    for start in range(0, len(step_triples), per_pass):
        part = step_triples[start:start + per_pass]
        query_ids = chunker.tokenize_queries([queries[q] for q, _, _ in part])
        batch = chunker.batch([(query, store.ids(doc, limit))
                               for query, (_, pos, neg) in zip(query_ids, part) for doc in (pos, neg)])
        # A mean is weighted by the pair count, so a short final step averages correctly; a sum adds up.
        passes.append((batch, len(part) / len(step_triples) if settings.loss_reduction == "mean" else 1.0))
    return passes


def pinned(batch, device: torch.device):
    """On CUDA, a batch that can be pinned (`ChunkBatch`) in page-locked memory, so its copy to the device does not
    block the host; other batches, and every batch on a CPU, as they are."""
    return batch.pin_memory() if device.type == "cuda" and isinstance(batch, PINNABLE) else batch


def backward_passes(ranker: ChunkRanker, passes: list[tuple[object, float]], settings: TrainingSettings,
                    device: torch.device, dtype, scaler) -> torch.Tensor:
    """The forward and backward passes of one optimizer step's batches (`step_batches`), the gradients accumulated.
    Returns the step's loss as a tensor on the device, so nothing here waits for the device (the caller reads it
    once per step)."""
    total = torch.zeros((), device=device)
    for batch, weight in passes:
        # a pinned batch's copy is queued behind the device's work instead of waiting for it
        on_device = batch.to(device, non_blocking=True) if isinstance(batch, PINNABLE) else batch.to(device)
        with autocast(device, dtype):
            scores = ranker(on_device).float().view(-1, 2)
        loss = pairwise_margin_loss(scores[:, 0], scores[:, 1], settings.margin, settings.loss_reduction)
        scaler.scale(loss * weight).backward()
        total = total + loss.detach() * weight
    return total


def step_backward(ranker: ChunkRanker, chunker, queries: Mapping[str, str], store: TokenStore, limit: int,
                  step_triples: list, settings: TrainingSettings, device: torch.device, dtype, scaler
                  ) -> torch.Tensor:
    """The forward and backward passes of one optimizer step, its batches prepared here (`step_batches`, then
    `backward_passes`); the loop prepares them ahead instead. Returns the step's loss as a tensor on the device."""
    return backward_passes(ranker, step_batches(chunker, queries, store, limit, step_triples, settings), settings,
                           device, dtype, scaler)


def train(ranker: ChunkRanker, tokenizer, queries: dict[str, str], store: TokenStore, qrels,
          candidates: Mapping[str, np.ndarray], settings: TrainingSettings, seed: int, progress: bool = True,
          state_dir: str | None = None, name: str | None = None) -> dict:
    """Fine-tune `ranker` in place; returns a summary with the loss curve.

    `candidates` holds each query's candidates as numbers of `store` (`sampler.candidate_numbers`).
    With `state_dir`, the state is saved there every `settings.save_every` optimizer steps and a
    saved state is resumed. `name` (the config's model name) is used in messages.
    """
    name = name or ranker.registry_name
    rng = random.Random(seed)
    device = pick_device(settings.device)
    dtype = autocast_dtype(device, settings.precision)
    matmuls = fp32_matmuls(device, dtype, settings.tf32)
    packed = set_packing(ranker, settings.packing, device)
    ranker.to(device).train()
    store.check_tokenizer(tokenizer, ranker.geometry.max_doc_tokens)
    sampler = PairSampler(qrels, candidates, store, negatives=settings.negatives, seed=seed)
    chunker = ranker.featurizer(tokenizer)
    limit = ranker.geometry.max_doc_tokens

    freeze_lower(ranker.encoder.backbone, settings.freeze_embeddings, settings.freeze_layers)
    if settings.gradient_checkpointing:
        enable_gradient_checkpointing(ranker.encoder.backbone, name)
    # fused on CUDA: one kernel for every parameter's update instead of several per tensor (the same algorithm;
    # on a CPU the default implementation, so CPU runs keep their numbers)
    optimizer = torch.optim.AdamW(parameter_groups(ranker, settings), weight_decay=settings.weight_decay,
                                  fused=device.type == "cuda")
    pairs_per_step = settings.batch_size * settings.grad_accum
    visits = len(sampler.qids) * settings.query_repeats
    per_epoch = min(settings.queries_per_epoch or visits, visits)
    steps_per_epoch = math.ceil(per_epoch / pairs_per_step)
    total_steps = steps_per_epoch * settings.epochs
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, warmup_then_constant(round(settings.warmup_fraction * total_steps)))
    scaler = torch.amp.GradScaler(device.type, enabled=dtype == torch.float16)

    state = None
    position = Position(epoch=0, step=0, global_step=0, epoch_rng=rng.getstate(), losses=[])
    if state_dir:
        # What the saved state must agree on; how often it is saved and how steps are computed may change.
        recipe = {k: v for k, v in dataclasses.asdict(settings).items() if k not in EXECUTION_SETTINGS}
        state = TrainingState(state_dir, fingerprint(ranker=ranker.registry_name, args=ranker.args, settings=recipe,
                                                     seed=seed, pairs=sampler.fingerprint()))
        position = state.restore(ranker, optimizer, scheduler, scaler) or position

    def prepare(step_triples: list) -> list[tuple[object, float]]:
        """A step's host work before its passes: its batches tokenised, collated and, on CUDA, pinned."""
        return [(pinned(batch, device), weight)
                for batch, weight in step_batches(chunker, queries, store, limit, step_triples, settings)]

    bar = tqdm(total=total_steps, initial=position.global_step, desc=f"training {name}", unit="step",
               disable=not progress, mininterval=5)
    saved_at = monotonic()
    # only with a state to save: stopping early without one would throw the training away
    time_limit = JobTimeLimit(settings.stop_before_limit_minutes) if state is not None else None
    with StopSignals(enabled=state is not None) as signals, compiled_backbone(ranker, settings.compile):
        for epoch in range(position.epoch, settings.epochs):
            if epoch == position.epoch:
                rng.setstate(position.epoch_rng)  # draw this epoch's pairs again, as the first time
            epoch_rng = rng.getstate()
            triples = sampler.epoch(rng, settings.query_repeats)[:per_epoch]
            steps = range(position.step if epoch == position.epoch else 0, steps_per_epoch)
            step_pairs = [triples[step * pairs_per_step:(step + 1) * pairs_per_step] for step in steps]
            depth = PREFETCH_DEPTH if settings.prefetch else 0
            with prepared_ahead(prepare, step_pairs, depth) as prepared:  # stopped at the epoch's end or an error
                for step, passes in zip(steps, prepared):
                    # the one wait for the device in a step: its loss, checked before the optimizer uses its gradients
                    step_loss = backward_passes(ranker, passes, settings, device, dtype, scaler).item()
                    if not math.isfinite(step_loss):
                        raise FloatingPointError(
                            f"training {name} (seed {seed}): the loss is {step_loss} at optimizer step "
                            f"{position.global_step + 1} of {total_steps}; stopping rather than saving a poisoned "
                            f"checkpoint (lower the learning rate, or use precision fp32 or bf16)")
                    optimizer_step(ranker, optimizer, scheduler, scaler, settings.max_grad_norm)
                    position.losses.append(step_loss)
                    position.global_step += 1
                    bar.update(1)
                    bar.set_postfix(loss=f"{step_loss:.3f}", refresh=False)
                    if not state or position.global_step >= total_steps:
                        continue
                    due = (settings.save_every and position.global_step % settings.save_every == 0) or (
                        settings.save_minutes and monotonic() - saved_at >= 60 * settings.save_minutes)
                    out_of_time = time_limit.due()
                    if due or signals.received or out_of_time:
                        position.epoch, position.step, position.epoch_rng = epoch, step + 1, epoch_rng
                        state.save(position, ranker, optimizer, scheduler, scaler)
                        saved_at = monotonic()
                    if signals.received or out_of_time:
                        why = (f"signal {signal.Signals(signals.received).name}" if signals.received else
                               f"{time_limit.seconds_left():.0f} s left of SLURM job {time_limit.job_id} "
                               f"(training.stop_before_limit_minutes: {settings.stop_before_limit_minutes:g})")
                        raise Preempted(f"training {name} (seed {seed}): {why} at optimizer step "
                                        f"{position.global_step} of {total_steps}; the state is saved in "
                                        f"{state.directory}, and the same job resumes from it")
            if settings.epoch_lr_decay != 1.0:
                decay_learning_rates(optimizer, scheduler, settings.epoch_lr_decay)
    bar.close()
    if settings.gradient_checkpointing:
        ranker.encoder.backbone.activation_checkpointing_disable()
    ranker.eval()
    losses = position.losses
    log.info("trained %s for %d steps on %s (autocast %s, head fp32); final loss %.4f",
             name, total_steps, device, dtype_name(dtype), losses[-1] if losses else float("nan"))
    return {"steps": total_steps, "losses": losses, "device": str(device), "autocast": dtype_name(dtype),
            "train_queries": len(sampler.qids), **({"fp32_matmul": matmuls} if matmuls else {}),
            **({"packed": True} if packed else {})}
