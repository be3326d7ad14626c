"""The training stage's jobs as typed values: what a job reads (`inputs`), writes (`outputs`) and is told
(`params`), so that each job function takes one argument, and a rule's script and a `posbias` command each build
it from their own names (`snakemake.input`, the command's flags) in one place.

A training job trains one model (`Recipe`) on one set of files (`TrainingSet`); the fine-tuned setting and the
cross-validation folds also rerank with the model they trained (`posbias.scoring.reranking.Reranking`)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from posbias.scoring.reranking import Reranking


@dataclass(frozen=True)
class Recipe:
    """How one model is trained: its `models.<name>` block, its training recipe (the config's `training` with a
    job's overrides), the seed, and the model's name for logs and checkpoints."""

    model: Mapping
    training: Mapping
    seed: int
    name: str | None = None


@dataclass(frozen=True)
class TrainingSet:
    """The files a ranker trains on: the collection's token store, the queries, their judgments and candidates."""

    tokens: str
    queries: str
    qrels: str
    candidates: str

    def files(self) -> dict[str, str]:
        return {"tokens": self.tokens, "queries": self.queries, "qrels": self.qrels, "candidates": self.candidates}


@dataclass(frozen=True)
class TrainJob:
    """Rule train and `posbias train`: one model and seed trained from its pretrained backbone (or from
    `init_checkpoint`) into `checkpoint`."""

    recipe: Recipe
    inputs: TrainingSet
    checkpoint: str
    threads: int
    init_checkpoint: str | None = None
    progress: bool = True


@dataclass(frozen=True)
class FinetuneJob:
    """Rules finetune and rerank_checkpoint, and `posbias finetune`: a trained checkpoint fine-tuned on `inputs`
    into `checkpoint`, then reranking `reranking`'s query sets (Table 4's fine-tuned setting)."""

    recipe: Recipe
    init_checkpoint: str
    inputs: TrainingSet
    reranking: Reranking
    checkpoint: str
    threads: int
    progress: bool = True


@dataclass(frozen=True)
class FoldJob:
    """Rule cross_validate_fold and `posbias cross-validate fold`: a trained checkpoint fine-tuned on every fold of
    `folds` but `fold`, then reranking `fold`'s queries into `run`."""

    recipe: Recipe
    init_checkpoint: str
    inputs: TrainingSet
    folds: str
    fold: int
    run: str
    tag: str
    scoring: Mapping
    threads: int
    progress: bool = True


@dataclass(frozen=True)
class CrossValidatedSet:
    """One cross-validated query set of a checkpoint's job: its training files, its folds and its merged run."""

    inputs: TrainingSet
    folds: str
    run: str


@dataclass(frozen=True)
class CheckpointFoldsJob:
    """Rule cross_validate_checkpoint and `posbias cross-validate checkpoint`: every fold of every query set in
    `querysets` for one trained checkpoint, one after another, resuming by fold, then each set's merged run."""

    recipe: Recipe
    init_checkpoint: str
    querysets: list[CrossValidatedSet]
    tag: str
    scoring: Mapping
    threads: int
    progress: bool = True
