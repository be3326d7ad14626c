"""Snakemake entry: one battery of the position-sensitivity audit for one model (posbias.audit.steps)."""
from pathlib import Path

from posbias.audit.jobs import AuditJob
from posbias.audit.steps import audit
from posbias.gpu_pool import gpu_slot
from posbias.logs import job_log

with job_log(snakemake.log[0]), gpu_slot(snakemake.resources):
    job, wc = snakemake.params.job, snakemake.wildcards
    out = Path(snakemake.output.summary).parent.parent  # <out>/<name>/<battery>.json
    audit(AuditJob(job["spec"], out, [wc.battery], job["settings"], wc.name, job["cache"]["dir"], job["cache"]["mode"],
                   mitigation=job.get("mitigation"), mitigates=job.get("mitigates")))
