"""The training recipe a job follows (`training` in the config, with a model's learning rates).

Checked without torch, so the workflow can build every job's recipe when it builds the graph:
`posbias.settings.from_section(TrainingSettings, {"lr": ..., "head_lr": ..., **recipe}, "training")`.
The defaults of the keys added for the study's authors' recipe keep the earlier behaviour.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

LOSS_REDUCTIONS = ("mean", "sum")
NEGATIVES_KEYS = ("pool_depth", "per_query")


@dataclass(frozen=True)
class TrainingSettings:
    lr: float  # backbone learning rate
    head_lr: float  # learning rate of everything outside the backbone, unless a ranker says otherwise
    epochs: int
    batch_size: int  # pairs per forward pass
    grad_accum: int  # forward passes per optimizer step
    margin: float
    warmup_fraction: float
    weight_decay: float
    freeze_embeddings: bool  # keep the embedding block fixed (saves most optimizer work on CPU)
    device: str
    precision: str
    max_grad_norm: float | None  # None: no gradient clipping (the authors')
    freeze_layers: int = 0  # also keep the first N transformer layers fixed (no backward through them)
    queries_per_epoch: int | None = None  # short epochs: this many sampled queries each (None: all)
    save_every: int = 0  # optimizer steps between saved states a killed job resumes from (0: never)
    # minutes between saved states (0: never by time); a signal (SIGUSR1, SIGTERM) or the job's limit near (below) also
    # saves, then stops
    save_minutes: float = 0.0
    # in a SLURM job: save and stop when less than this is left of its time limit (0: never; `time_limit.py`)
    stop_before_limit_minutes: float = 0.0
    loss_reduction: str = "mean"  # the margin loss of an optimizer step's pairs: their mean or their sum
    epoch_lr_decay: float = 1.0  # every learning rate is multiplied by this after each epoch
    # {pool_depth, per_query}: per query, per_query negatives drawn once from its top pool_depth
    # non-relevant candidates; None: every step draws from all its non-relevant candidates
    negatives: Mapping[str, int] | None = None
    query_repeats: int = 1  # visits of each training query per epoch
    aggregator_lr: float | None = None  # a pretrained aggregator's learning rate (PARADE PRETR); None: head_lr
    # recompute the backbone's layer activations during the backward pass: memory for time (large models, long inputs)
    gradient_checkpointing: bool = False
    # all of an optimizer step's pairs (batch_size x grad_accum) in one forward and backward pass: the same objective
    # and, in fp32 with dropout off, the same gradients as the micro-batches, with one launch of every kernel
    # instead of grad_accum (on a GPU the micro-batches of the study's recipe, one pair each, leave it waiting)
    one_pass: bool = False
    # pairs per forward and backward pass within an optimizer step, between the micro-batches and `one_pass`: None
    # (the default) means `batch_size`, the recipe's micro-batches; a step's last pass takes what is left. A value above
    # the step's pairs is the whole step, not an error: it is a memory ceiling measured per model and card, and one
    # ceiling serves every recipe layered over the model's (a fine-tuning's smaller step too). `one_pass` stays as the
    # readable shorthand for "the whole step"; both set is an error rather than a precedence rule, since the two may
    # come from different config layers (`training`, `models.<name>.training`) and a silent winner would hide which
    # one a model trains with.
    pass_pairs: int | None = None
    # the step's chunks packed into one row with variable-length attention (`posbias.rankers.packing`; auto: on CUDA).
    # Off by default: with the attention dropout training keeps, packed attention runs over nested tensors, measured
    # slower than the padded length groups on an H200 (benchmarks/gpu.md, 2026-11-28)
    packing: str | bool = False
    # on a GPU, fp32 matrix products on TF32 tensor cores when the run is in fp32 (`posbias.device.fp32_matmuls`)
    tf32: bool = True
    # the next steps' batches prepared in a background thread (pinned on CUDA) while the device computes: the same
    # batches, so the same weights (`posbias.training.prefetch`)
    prefetch: bool = True
    # torch.compile the backbone (`posbias.rankers.compilation`): minutes of compiling for faster steps on a GPU
    compile: bool = False

    def learning_rates(self) -> dict[str, float]:
        """The learning rate of each parameter group (`posbias.rankers.base.PARAMETER_GROUPS`)."""
        return {"backbone": self.lr, "head": self.head_lr,
                "aggregator": self.head_lr if self.aggregator_lr is None else self.aggregator_lr}

    def pairs_per_pass(self) -> int:
        """Pairs in each forward and backward pass of an optimizer step (`one_pass`, `pass_pairs`, else the
        micro-batches): only how a step is computed, never which pairs it has (`batch_size` x `grad_accum`)."""
        step = self.batch_size * self.grad_accum
        return step if self.one_pass else min(self.pass_pairs or self.batch_size, step)

    def __post_init__(self):
        if self.pass_pairs is not None and self.pass_pairs < 1:
            raise ValueError(f"training.pass_pairs: {self.pass_pairs} is not at least 1 (null: batch_size)")
        if self.one_pass and self.pass_pairs is not None:
            raise ValueError(f"training.one_pass and training.pass_pairs ({self.pass_pairs}) both set a step's pass "
                             f"size; keep one of them (one_pass: false, or pass_pairs: null, in the block that should "
                             f"not set it)")
        if self.packing not in ("auto", True, False):
            raise ValueError(f"training.packing: {self.packing!r} is not one of auto, true, false")
        if self.loss_reduction not in LOSS_REDUCTIONS:
            raise ValueError(f"training.loss_reduction: {self.loss_reduction!r} is not one of {LOSS_REDUCTIONS}")
        if not 0 < self.epoch_lr_decay <= 1:
            raise ValueError(f"training.epoch_lr_decay: {self.epoch_lr_decay} is not in (0, 1]")
        if self.query_repeats < 1:
            raise ValueError(f"training.query_repeats: {self.query_repeats} is not at least 1")
        if self.queries_per_epoch is not None and self.query_repeats > 1:
            raise ValueError(f"training.queries_per_epoch ({self.queries_per_epoch}) and training.query_repeats "
                             f"({self.query_repeats}) both set how many pairs an epoch has; keep one of them")
        if self.negatives is not None:
            if sorted(self.negatives) != sorted(NEGATIVES_KEYS):
                raise ValueError(f"training.negatives: needs exactly the keys {list(NEGATIVES_KEYS)}, "
                                 f"got {sorted(self.negatives)}")
            if not 1 <= self.negatives["per_query"] <= self.negatives["pool_depth"]:
                raise ValueError(f"training.negatives: per_query ({self.negatives['per_query']}) must be between 1 "
                                 f"and pool_depth ({self.negatives['pool_depth']})")
