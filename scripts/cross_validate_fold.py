"""Snakemake entry: fine-tune a trained checkpoint on every fold but one, rerank that fold."""
from posbias.gpu_pool import gpu_slot
from posbias.logs import job_log
from posbias.training.jobs import FoldJob, Recipe, TrainingSet
from posbias.training.steps import cross_validate_fold

with job_log(snakemake.log[0]), gpu_slot(snakemake.resources):
    params, inputs = snakemake.params, snakemake.input
    cross_validate_fold(FoldJob(Recipe(params.model, params.training, params.seed, params.name), inputs.init,
                                TrainingSet(inputs.tokens, inputs.queries, inputs.qrels, inputs.candidates),
                                folds=inputs.folds, fold=params.fold, run=snakemake.output.run, tag=params.tag,
                                scoring=params.scoring, threads=snakemake.threads))
