"""The training recipe of the long-document study (appendix A.1.2).

Pairwise margin loss; per step one positive and one hard negative per query;
minibatches with gradient accumulation; AdamW with separate learning rates for
the backbone and the aggregator head; a linear warm-up over the first 20% of
optimizer steps, then a constant rate; autocast (bf16, else fp16) on CUDA.
"""

from __future__ import annotations

import logging
import math
import random
from dataclasses import dataclass

import numpy as np
import torch
from tqdm import tqdm

from posbias.rankers.chunking import Chunker
from posbias.rankers.registry import ChunkRanker
from posbias.training.device import autocast, autocast_dtype, pick_device
from posbias.training.freezing import freeze_lower
from posbias.training.loss import pairwise_margin_loss
from posbias.training.sampler import PairSampler

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class TrainingSettings:
    lr: float  # backbone learning rate
    head_lr: float  # aggregator learning rate
    epochs: int
    batch_size: int  # pairs per forward pass
    grad_accum: int  # forward passes per optimizer step
    margin: float
    warmup_fraction: float
    weight_decay: float
    freeze_embeddings: bool  # keep the embedding block fixed (saves most optimizer work on CPU)
    device: str
    precision: str
    max_grad_norm: float
    freeze_layers: int = 0  # also keep the first N transformer layers fixed (no backward through them)
    queries_per_epoch: int | None = None  # short epochs (Robust04 fine-tuning): this many sampled queries each


def seed_everything(seed: int) -> None:
    random.seed(seed)
    np.random.seed(seed)
    torch.manual_seed(seed)


def warmup_then_constant(warmup_steps: int):
    return lambda step: min(1.0, (step + 1) / warmup_steps) if warmup_steps > 0 else 1.0


def train(ranker: ChunkRanker, tokenizer, queries: dict[str, str], documents: dict[str, str],
          qrels, candidates, settings: TrainingSettings, seed: int, progress: bool = True) -> dict:
    """Fine-tune `ranker` in place; returns a summary with the loss curve."""
    rng = random.Random(seed)
    device = pick_device(settings.device)
    dtype = autocast_dtype(device, settings.precision)
    ranker.to(device).train()
    sampler = PairSampler(qrels, candidates, documents)
    chunker = Chunker(tokenizer, ranker.geometry)

    # Tokenise once, outside the loop.
    needed = sorted({d for q in sampler.qids for d in (*sampler.positives[q], *sampler.negatives[q])})
    doc_ids = dict(zip(needed, chunker.tokenize_documents([documents[d] for d in needed])))
    query_ids = dict(zip(sampler.qids, chunker.tokenize_queries([queries[q] for q in sampler.qids])))

    freeze_lower(ranker.encoder.backbone, settings.freeze_embeddings, settings.freeze_layers)
    head = {id(p) for p in ranker.head_parameters()}
    backbone_params = [p for p in ranker.parameters() if p.requires_grad and id(p) not in head]
    optimizer = torch.optim.AdamW([
        {"params": backbone_params, "lr": settings.lr},
        {"params": ranker.head_parameters(), "lr": settings.head_lr},
    ], weight_decay=settings.weight_decay)
    pairs_per_step = settings.batch_size * settings.grad_accum
    per_epoch = min(settings.queries_per_epoch or len(sampler.qids), len(sampler.qids))
    steps_per_epoch = math.ceil(per_epoch / pairs_per_step)
    total_steps = steps_per_epoch * settings.epochs
    scheduler = torch.optim.lr_scheduler.LambdaLR(
        optimizer, warmup_then_constant(round(settings.warmup_fraction * total_steps)))
    scaler = torch.amp.GradScaler(device.type, enabled=dtype == torch.float16)

    losses: list[float] = []
    bar = tqdm(total=total_steps, desc=f"training {ranker.registry_name}", unit="step",
               disable=not progress, mininterval=5)
    for _ in range(settings.epochs):
        triples = sampler.epoch(rng)[:per_epoch]
        for step_start in range(0, len(triples), pairs_per_step):
            step_triples = triples[step_start:step_start + pairs_per_step]
            step_loss = 0.0
            for batch_start in range(0, len(step_triples), settings.batch_size):
                part = step_triples[batch_start:batch_start + settings.batch_size]
                batch = chunker.batch([(query_ids[q], doc_ids[d]) for q, pos, neg in part for d in (pos, neg)])
                with autocast(device, dtype):
                    scores = ranker(batch.to(device)).float().view(-1, 2)
                    loss = pairwise_margin_loss(scores[:, 0], scores[:, 1], settings.margin)
                # Weight by the pair count so a short final step averages correctly.
                scaler.scale(loss * len(part) / len(step_triples)).backward()
                step_loss += loss.item() * len(part) / len(step_triples)
            scaler.unscale_(optimizer)
            torch.nn.utils.clip_grad_norm_(ranker.parameters(), settings.max_grad_norm)
            scaler.step(optimizer)
            scaler.update()
            optimizer.zero_grad(set_to_none=True)
            scheduler.step()
            losses.append(step_loss)
            bar.update(1)
            bar.set_postfix(loss=f"{step_loss:.3f}", refresh=False)
    bar.close()
    ranker.eval()
    log.info("trained %s for %d steps on %s (autocast %s); final loss %.4f",
             ranker.registry_name, total_steps, device, dtype, losses[-1] if losses else float("nan"))
    return {"steps": total_steps, "losses": losses, "device": str(device),
            "autocast": str(dtype) if dtype else "fp32", "train_queries": len(sampler.qids)}
