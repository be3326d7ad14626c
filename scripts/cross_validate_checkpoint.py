"""Snakemake entry: every fold of every cross-validated query set for one checkpoint (fine-tune on the other folds,
rerank the fold), resuming by fold, then each query set's merged run."""
from posbias.gpu_pool import gpu_slot
from posbias.logs import job_log
from posbias.training.jobs import CheckpointFoldsJob, CrossValidatedSet, Recipe, TrainingSet
from posbias.training.steps import cross_validate_checkpoint

with job_log(snakemake.log[0]), gpu_slot(snakemake.resources):
    params, inputs = snakemake.params, snakemake.input
    files = zip(inputs.tokens, inputs.queries, inputs.qrels, inputs.candidates, inputs.folds, snakemake.output.runs,
                strict=True)
    querysets = [CrossValidatedSet(TrainingSet(tokens, queries, qrels, candidates), folds, run)
                 for tokens, queries, qrels, candidates, folds, run in files]
    cross_validate_checkpoint(CheckpointFoldsJob(Recipe(params.model, params.training, params.seed, params.name),
                                                 inputs.init, querysets, tag=params.tag, scoring=params.scoring,
                                                 threads=snakemake.threads))
