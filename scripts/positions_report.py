"""Snakemake entry: the table of shares, Figures 1 and 7, and the agreement with the generator's offsets."""
from posbias.logs import job_log
from posbias.positions.jobs import ReportJob
from posbias.positions.steps import report

with job_log(snakemake.log[0]):
    params, given = snakemake.params, snakemake.input
    sets = params.sets
    report(ReportJob(dict(zip(sets, given.rows, strict=True)), dict(zip(sets, given.summaries, strict=True)),
                     params.settings, params.labels, {g: params.groups[g] for g in params.group_order}, params.figure1,
                     params.tables, params.figures, dict(zip(params.truth_sets, given.truth, strict=True)),
                     snakemake.output.agreement, params.judge_tables or {}, params.judge_labels or {},
                     params.oracle_judges))
