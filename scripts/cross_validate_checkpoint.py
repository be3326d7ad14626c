"""Snakemake entry: every fold of every cross-validated query set for one checkpoint (fine-tune on the other folds,
rerank the fold), resuming by fold, then each query set's merged run."""
from posbias.gpu_pool import gpu_slot
from posbias.logs import job_log
from posbias.training.steps import cross_validate_checkpoint

with job_log(snakemake.log[0]), gpu_slot(snakemake.resources):
    files = zip(snakemake.input.tokens, snakemake.input.queries, snakemake.input.qrels, snakemake.input.candidates,
                snakemake.input.folds, snakemake.output.runs, strict=True)
    querysets = [dict(zip(("tokens", "queries", "qrels", "candidates", "folds", "run"), entry)) for entry in files]
    cross_validate_checkpoint(snakemake.input.init, snakemake.params.model, snakemake.params.training,
                              snakemake.params.seed, querysets, tag=snakemake.params.tag,
                              scoring=snakemake.params.scoring, threads=snakemake.threads, name=snakemake.params.name)
