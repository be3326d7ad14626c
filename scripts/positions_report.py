"""Snakemake entry: the table of shares, Figures 1 and 7, and the agreement with the generator's offsets."""
from posbias.logs import job_log
from posbias.positions.steps import report

with job_log(snakemake.log[0]):
    params = snakemake.params
    sets = params.sets
    report(dict(zip(sets, snakemake.input.rows, strict=True)), dict(zip(sets, snakemake.input.summaries, strict=True)),
           params.settings, params.labels, {g: params.groups[g] for g in params.group_order}, params.figure1,
           params.tables, params.figures, dict(zip(params.truth_sets, snakemake.input.truth, strict=True)),
           snakemake.output.agreement, params.judge_tables, params.judge_labels, params.oracle_judges)
