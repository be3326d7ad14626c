"""Snakemake entry: rerank query sets' candidates with one checkpoint (rules rerank and rerank_checkpoint:
aligned lists of token stores, queries, candidates and runs, one entry per query set). Under rule
rerank_checkpoint with `finetuning:`, then fine-tune the checkpoint and rerank the fine-tuned query sets."""
from posbias.gpu_pool import gpu_slot
from posbias.logs import job_log
from posbias.rerank.steps import rerank_candidates
from posbias.scoring.reranking import Reranking
from posbias.training.steps import finetune_and_rerank, finetune_job

with job_log(snakemake.log[0]), gpu_slot(snakemake.resources):
    i, p = snakemake.input, snakemake.params
    rerank_candidates(i.checkpoint, Reranking(list(i.tokens), list(i.queries), list(i.candidates),
                                              list(snakemake.output.runs), p.tag, p.scoring), snakemake.threads)
    if "finetune_checkpoint" in snakemake.output.keys():
        finetune_and_rerank(finetune_job(i.checkpoint, i, snakemake.output, p, scoring=p.scoring,
                                         threads=snakemake.threads, prefix="finetune_"))
