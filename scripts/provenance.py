"""Snakemake entry: the results directory's provenance manifest (JSON, and HTML for the report)."""
from pathlib import Path

from posbias.logs import job_log
from posbias.provenance.jobs import ManifestJob
from posbias.provenance.manifest import write_manifest

with job_log(snakemake.log[0]):
    o, p = snakemake.output, snakemake.params
    # the manifest's directory is the experiment's (results/ or results/<experiment>/); the checkout this workflow
    # runs from (scripts/ is one level below it) gives the git state and the lock file
    write_manifest(ManifestJob(o.json, o.html, "results", str(Path(o.json).parent), p.config_hash, p.weights, p.llms,
                               p.departures, root=Path(snakemake.scriptdir).parent))
