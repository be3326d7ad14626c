"""Snakemake entry: rerank one query set's candidates (rule rerank_zero_shot), or every reranked query set's (rule
rerank_zero_shot_model), with a zero-shot model straight from its pretrained weights."""
from posbias.gpu_pool import gpu_slot
from posbias.logs import job_log
from posbias.rerank.steps import rerank_pretrained
from posbias.scoring.reranking import Reranking


def listed(files) -> list[str]:
    """One file (rule rerank_zero_shot) or a list of them, as a list."""
    return [files] if isinstance(files, str) else list(files)


with job_log(snakemake.log[0]), gpu_slot(snakemake.resources):
    i, p, o = snakemake.input, snakemake.params, snakemake.output
    runs = [o.run] if "run" in o.keys() else list(o.runs)
    rerank_pretrained(p.model, Reranking(listed(i.tokens), listed(i.queries), listed(i.candidates), runs, p.tag,
                                         p.scoring), snakemake.threads)
