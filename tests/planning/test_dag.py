"""The plan's jobs are Snakemake's: the same counts, rule by rule, as `snakemake -n` prints for the same config and
targets, with local rules told apart from submitted ones."""

from __future__ import annotations

import re
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from posbias.errors import InputError
from posbias.planning.dag import SNAKEFILE, scheduled_jobs, scheduled_run

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "config" / "test" / "tiny.yaml"


def dry_run_counts(workdir: Path, *targets: str) -> Counter:
    """The "Job stats" table of `snakemake -n --quiet rules`: rule -> jobs (its `total` row left out)."""
    # targets first: --quiet and --configfile take every word after them
    result = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(SNAKEFILE), "-d", str(workdir), *targets,
                             "-n", "--quiet", "rules", "--configfile", str(TINY)],
                            capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stderr[-3000:]
    table = result.stdout.split("Job stats:")[1]
    counts = Counter({rule: int(n) for rule, n in re.findall(r"^(\w+)\s+(\d+)$", table, flags=re.M)})
    assert counts.pop("total") == sum(counts.values())
    return counts


@pytest.mark.parametrize("targets", [(), ("results/table1.tex",)], ids=["all", "table1"])
def test_the_plans_jobs_are_the_dry_runs(tmp_path, targets):
    planned = Counter(job.rule for job in scheduled_jobs(TINY, targets, tmp_path / "plan"))
    (tmp_path / "dry").mkdir()
    assert planned == dry_run_counts(tmp_path / "dry", *targets)
    assert sum(planned.values()) > (40 if targets else 100)  # a real graph, not an empty one


def test_local_rules_are_told_from_submitted_ones():
    jobs = scheduled_jobs(TINY)
    local = {job.rule: job.local for job in jobs}
    # rules/evaluation.smk marks these `localrule: True`; `all` runs nothing
    assert local["evaluate"] and local["table1"] and local["all"]
    assert not local["train"] and not local["bm25_index"] and not local["tokenize_documents"]
    assert {job.gpus for job in jobs if job.rule == "train"} == {1}
    assert {job.gpus for job in jobs if job.rule == "bm25_index"} == {0}


def test_a_directory_that_holds_outputs_plans_only_what_is_left(tmp_path):
    target = "results/data/synthetic/docs.jsonl"
    assert Counter(job.rule for job in scheduled_jobs(TINY, [target], tmp_path)) == Counter({"generate_synthetic": 1})
    (tmp_path / target).parent.mkdir(parents=True)
    (tmp_path / target).write_text('{"id": "d1", "text": "made"}\n')
    assert scheduled_jobs(TINY, [target], tmp_path) == []


def test_an_unknown_target_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match="no-such-file.txt"):
        scheduled_jobs(TINY, ["no-such-file.txt"], tmp_path)


def test_inputs_a_user_provides_are_stood_in_for_only_in_a_fresh_directory(tmp_path):
    """The probes' paper config reads Re-DocRED from data/redocred/ (placed by hand): a plan from scratch takes
    those files as present and names them; a plan of a given run directory without them is an error."""
    probes, target = ROOT / "config" / "paper" / "probes.yaml", "results/collapse/probes/probes.tex"
    jobs, assumed = scheduled_run(probes, [target])
    assert assumed and all(name.startswith("data/redocred/") for name in assumed)
    assert Counter(job.rule for job in jobs)["probes_build"] == 1
    with pytest.raises(InputError, match="Missing input files for rule probes_build.*data/redocred/"):
        scheduled_run(probes, [target], tmp_path)
