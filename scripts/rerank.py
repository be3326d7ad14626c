"""Snakemake entry: rerank query sets' candidates with one checkpoint (rules rerank and rerank_checkpoint:
aligned lists of token stores, queries, candidates and runs, one entry per query set). Under rule
rerank_checkpoint with `finetuning:`, then fine-tune the checkpoint and rerank the fine-tuned query sets."""
from posbias.gpu_pool import gpu_slot
from posbias.logs import job_log
from posbias.rerank.steps import rerank_candidates
from posbias.training.steps import finetune_and_rerank, finetune_job

with job_log(snakemake.log[0]), gpu_slot(snakemake.resources):
    rerank_candidates(snakemake.input.checkpoint, tokens=list(snakemake.input.tokens),
                      queries=list(snakemake.input.queries), candidates=list(snakemake.input.candidates),
                      runs=list(snakemake.output.runs), tag=snakemake.params.tag, scoring=snakemake.params.scoring,
                      threads=snakemake.threads)
    if "finetune_checkpoint" in snakemake.output.keys():
        finetune_and_rerank(finetune_job(snakemake.input.checkpoint, snakemake.input, snakemake.output,
                                         snakemake.params, scoring=snakemake.params.scoring, threads=snakemake.threads,
                                         prefix="finetune_"))
