"""Snakemake entry: FarRelevant effectiveness per model, zero-shot and fine-tuned, with the random baseline."""
from posbias.logs import job_log
from posbias.evaluation.report import farrelevant_figure

with job_log(snakemake.log[0]):
    farrelevant_figure(snakemake.input.per_seed, snakemake.params.models, snakemake.params.labels,
                       snakemake.params.metric, [snakemake.output.png, snakemake.output.pdf],
                       finetuned=snakemake.input.get("finetuned"))
