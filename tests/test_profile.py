"""The SLURM profile against the workflow it runs: GPU requests, rule names, local rules (no SLURM needed)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
PROFILE_DIR = ROOT / "profiles" / "slurm"
# Every rule that fits or encodes a model: one GPU each.
GPU_RULES = ("train", "finetune", "cross_validate_fold", "cross_validate_checkpoint", "rerank", "rerank_checkpoint",
             "rerank_zero_shot", "rerank_zero_shot_model", "dense_encode", "hybrid_retrieve", "probes_score",
             "audit_battery", "audit_finetune", "litm_predict_qa", "litm_predict_kv")
# Rules that run language models: a GPU only when one of them decodes here (an hf_* backend), none for APIs and mocks.
LANGUAGE_MODEL_RULES = ("rerank_listwise", "positions_dense", "probes_rag")
RULE_HEADER = re.compile(r"^[ \t]*(?:rule|checkpoint)(?:[ \t]+(\w+))?[ \t]*:", re.MULTILINE)


@pytest.fixture(scope="module")
def profile() -> dict:
    return yaml.safe_load((PROFILE_DIR / "profile.yaml").read_text())


def rule_blocks(path: Path) -> dict[str, str]:
    """Rule name to the text of its definition; a rule made in a loop is named by its `name:` line."""
    text = path.read_text()
    headers = list(RULE_HEADER.finditer(text))
    blocks = {}
    for header, following in zip(headers, headers[1:] + [None]):
        body = text[header.end():following.start() if following else len(text)]
        name = header.group(1)
        if name is None:
            match = re.search(r"name:\s*f?[\"']([^\"']+)[\"']", body)
            assert match, f"{path.name}: a rule without a name at offset {header.start()}"
            name = match.group(1)
        blocks[name] = body
    return blocks


def workflow_rules() -> set[str]:
    """Every rule's name, a rule made in a loop over Lost in the Middle's tasks once per task."""
    from posbias.reading.predict import TASKS

    names = {name for path in (ROOT / "rules").glob("*.smk") for name in rule_blocks(path)}
    return {name.replace("{_task}", task) for name in names for task in TASKS}


def declared_local(path: Path) -> set[str]:
    """Rules of a file marked `localrule: True`, or named in a `localrules:` directive."""
    text = path.read_text()
    local = {name for name, body in rule_blocks(path).items() if re.search(r"^\s*localrule:\s*True\b", body, re.M)}
    for match in re.finditer(r"^\s*localrules:\s*([\w\s,]+?)\s*$", text, re.MULTILINE):
        local |= {name.strip() for name in match.group(1).split(",") if name.strip()}
    return local


def test_the_profile_is_read_through_its_config_link(profile):
    link = PROFILE_DIR / "config.yaml"
    assert link.is_symlink() and link.resolve() == (PROFILE_DIR / "profile.yaml").resolve()
    assert profile["executor"] == "slurm"
    assert profile["retries"] >= 1  # a resubmitted training job resumes from its saved state


def rules_asking_for_a_gpu() -> set[str]:
    return {name for path in (ROOT / "rules").glob("*.smk") for name, body in rule_blocks(path).items()
            if re.search(r"^\s*gpu=", body, re.M)}


def test_every_rule_that_fits_or_encodes_a_model_and_only_those_asks_for_a_gpu():
    from posbias.reading.predict import TASKS

    asking = {name.replace("{_task}", task) for name in rules_asking_for_a_gpu() for task in TASKS}
    assert asking == {*GPU_RULES, *LANGUAGE_MODEL_RULES}


def test_every_job_that_may_ask_for_a_gpu_claims_its_device():
    """A job counted against `--resources gpu=N` that did not claim its card from the pool would see every card and
    start on the first, beside the job that holds it."""
    for path in (ROOT / "rules").glob("*.smk"):
        for name, body in rule_blocks(path).items():
            if re.search(r"^\s*gpu=", body, re.M):
                script = re.search(r"script:\s*f?[\"']\.\./(scripts/\w+\.py)", body).group(1)
                assert "gpu_slot(snakemake.resources)" in (ROOT / script).read_text(), f"{name}: {script}"


@pytest.mark.parametrize("rule", GPU_RULES)
def test_the_slurm_profile_leaves_the_gpu_to_the_rules(profile, rule):
    resources = profile["set-resources"].get(rule, {})
    assert resources, f"profiles/slurm: no time or memory for {rule}"
    # the rule's gpu=1 becomes --gpus=1; the profile asking again (gpu, gres) would override an API model's gpu=0
    assert "gpu" not in resources and "gres" not in resources


def test_the_dense_index_is_built_on_the_cpu_from_the_vectors_the_gpu_encoded(profile):
    assert "dense_encode" in rules_asking_for_a_gpu() and "dense_index" not in rules_asking_for_a_gpu()
    assert profile["set-threads"]["dense_index"] > 1  # FAISS adds in parallel


def test_every_rule_the_profile_names_exists_in_the_workflow(profile):
    rules = workflow_rules()
    assert {"train", "rerank", "table4"} <= rules  # the parser finds plain, conditional and looped rules
    named = set(profile.get("set-resources", {})) | set(profile.get("set-threads", {}))
    assert named - rules == set(), "profiles/slurm names rules the workflow does not have"


def test_every_resource_is_sized(profile):
    for rule, resources in profile["set-resources"].items():
        assert resources.get("runtime", 0) > 0 and resources.get("mem_mb", 0) > 0, rule
    assert profile["default-resources"]["runtime"] > 0 and profile["default-resources"]["mem_mb"] > 0


def test_table_and_figure_jobs_are_local_rules():
    report = ROOT / "rules" / "evaluation.smk"
    blocks = rule_blocks(report)
    outputs = {name for name in blocks if re.fullmatch(r"table\w*|\w+_(table|tables|figure)", name)}
    assert {"table4", "farrelevant_figure", "outcome_table", "first_stage_table", "dataset_tables"} <= outputs
    assert "{_table}" in blocks  # the baseline tables (BASELINE_TABLES), made in a loop
    outputs.add("{_table}")
    assert outputs - declared_local(report) == set(), "table or figure rules submitted to the cluster"
    assert {"combine_seeds", "combine_finetuned_seeds"} <= declared_local(report)


def test_the_workflow_profile_schedules_greedily_and_runs_one_local_decoder_at_a_time():
    default = yaml.safe_load((ROOT / "profiles" / "default" / "profile.yaml").read_text())
    assert default["scheduler"] == "greedy"
    # the Snakefile sets the limit: the command line's --resources (gpu=N) would replace a profile's
    assert "resources" not in default
    assert 'workflow.global_resources["local_decoder"] = Resource("local_decoder", 1)' in (ROOT / "Snakefile").read_text()
    # every rule that asks for the resource, and only those, runs a language model's decoder
    asking = {name for path in (ROOT / "rules").glob("*.smk") for name, body in rule_blocks(path).items()
              if "local_decoder=" in body}
    assert asking == {"litm_predict_{_task}", "audit_battery"}  # LitM's predictions (a rule per task), the audit


def test_the_long_jobs_beside_the_rankers_and_every_job_before_them_go_first():
    """Lost in the Middle's predictions and the probes' scorers need only their own data (and a scorer its
    checkpoint): with a priority on the whole chain they run beside the rankers instead of alone at the end."""
    early = {name for path in (ROOT / "rules").glob("*.smk") for name, body in rule_blocks(path).items()
             if "priority: RUN_EARLY_PRIORITY" in body}
    assert early == {"litm_synthetic_qa", "litm_build_qa", "litm_build_kv", "litm_predict_{_task}",
                     "probes_synthetic", "probes_build", "probes_score", "audit_corpus", "audit_battery",
                     "audit_finetune"}


def test_a_local_decoder_takes_the_resource_and_a_model_behind_an_api_does_not(tmp_path):
    import subprocess
    import sys

    config = yaml.safe_load((ROOT / "config.yaml").read_text())
    config["litm"]["models"] = ["smollm2", "keep_order"]
    (tmp_path / "config.yaml").write_text(yaml.safe_dump(config))
    snakemake = Path(sys.executable).with_name("snakemake")
    out = subprocess.run([str(snakemake), "-n", "-s", str(ROOT / "Snakefile"), "-d", str(tmp_path), "--configfile",
                          str(tmp_path / "config.yaml"), "--",
                          *(f"results/litm/predictions/qa/{m}/default/closedbook.jsonl.gz"
                            for m in ("smollm2", "keep_order"))],
                         capture_output=True, text=True, check=True).stdout
    jobs = {re.search(r"wildcards: model=(\w+)", job).group(1): re.search(r"resources: (.*)", job).group(1)
            for job in out.split("rule litm_predict_qa:")[1:]}
    assert "local_decoder=1" in jobs["smollm2"] and "local_decoder=0" in jobs["keep_order"]
    assert "gpu=1" in jobs["smollm2"] and "gpu=0" in jobs["keep_order"]  # a mock, like a model behind an API
