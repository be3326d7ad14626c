"""The paper configs: each builds the study's graph, and the three experiments share one results tree
(the same training, tokenisation and index jobs with the same params), so none retrains another's models."""

from __future__ import annotations

import re
import shlex
from pathlib import Path

import pytest

from posbias.config import load_config

from snakemake_runs import ROOT, default_config, run_snakemake, scheduled_jobs, write_config

pytestmark = pytest.mark.slow  # minutes: `make test` starts this file first (tests/conftest.py)

PAPER = ROOT / "config" / "paper"
EXPERIMENTS = ("msmarco_v1", "msmarco_v2", "robust04")
IMPLEMENTED_PAPER_MODELS = 31  # trained ones; E5 and RankGPT are zero-shot


DOCUMENTED = ROOT / "docs" / "reproduction" / "index.md"  # its `<!-- paper_dry_runs -->` block


def documented_dry_runs() -> dict[str, list[str]]:
    """The reproduction page's dry runs, by paper config: each command's words after `snakemake -n -d paper`
    (its targets and `--configfile`), as the page writes them."""
    block = re.search(r"^<!-- paper_dry_runs -->\n```bash\n(.*?)^```$", DOCUMENTED.read_text(encoding="utf-8"),
                      flags=re.M | re.S)
    assert block, f"{DOCUMENTED}: no <!-- paper_dry_runs --> block"
    commands = {}
    for line in block.group(1).splitlines():
        words = shlex.split(line, comments=True)
        assert words[:4] == ["snakemake", "-n", "-d", "paper"], line
        commands[Path(words[words.index("--configfile") + 1]).stem] = words[4:]
    return commands


@pytest.fixture(scope="module")
def dry_runs(tmp_path_factory) -> dict[str, str]:
    """What `snakemake -n` prints for each paper config, all in one working directory (the page's `paper`): the
    reproduction page's commands as written, run once for every test here (tests/test_readme.py leaves them to
    this file)."""
    workdir = tmp_path_factory.mktemp("paper")
    write_config(workdir, default_config())  # present, but a config on the command line replaces it
    return {paper: run_snakemake(workdir, "-n", *(str(ROOT / w) if w.startswith("config/") else w for w in words)).stdout
            for paper, words in documented_dry_runs().items()}


def test_the_reproduction_page_dry_runs_every_paper_config_these_tests_read():
    assert set(documented_dry_runs()) == {*EXPERIMENTS, "study", "farrelevant", "positions", "debias", "chunks"}


@pytest.fixture(scope="module")
def paper_jobs(dry_runs) -> dict[str, list[tuple[str, str]]]:
    return {paper: scheduled_jobs(output) for paper, output in dry_runs.items()}


@pytest.mark.parametrize("paper", [*EXPERIMENTS, "study"])
def test_a_paper_config_replaces_the_default_and_builds_its_graph(paper_jobs, paper):
    rules = {rule for rule, _ in paper_jobs[paper]}
    assert "generate_synthetic" not in rules and {"fetch_documents", "train"} <= rules
    assert sum(rule == "train" for rule, _ in paper_jobs[paper]) == IMPLEMENTED_PAPER_MODELS * 3
    # E5-4K is zero-shot: no train job, one job reranking every query set straight from the pretrained weights
    assert not any("_e5" in wildcards for rule, wildcards in paper_jobs[paper] if rule == "train")
    assert sorted(w.split("model=")[1] for r, w in paper_jobs[paper] if r == "rerank_zero_shot_model") == [
        "firstp_e5", "longp_e5"]
    # a checkpoint reranks all its query sets in one job (rerank.jobs: per_checkpoint): hundreds of jobs, not
    # thousands, on a cluster
    assert "rerank" not in rules and "rerank_zero_shot" not in rules
    reranked_directly = paper != "robust04"  # Robust04's query sets are all cross-validated
    assert sum(rule == "rerank_checkpoint" for rule, _ in paper_jobs[paper]) == IMPLEMENTED_PAPER_MODELS * 3 * \
        reranked_directly
    # RankGPT (GPT-4o-mini, Claude-3-haiku; FirstP and LongP) through the language-model layer, never on MS MARCO
    # dev or Robust04 titles, as the study ran it
    listwise = [w for r, w in paper_jobs[paper] if r == "rerank_listwise"]
    assert listwise and {w.split("model=")[1] for w in listwise} == {"firstp_rankgpt", "longp_rankgpt",
                                                                     "firstp_rankgpt_claude", "longp_rankgpt_claude"}
    assert not any("msmarco_dev" in w or "robust04_title" in w for w in listwise)
    if paper in ("robust04", "study"):
        # one job per checkpoint for all its folds (cross_validation.jobs: per_checkpoint)
        assert {"cross_validate_checkpoint", "fetch_folds"} <= rules and not {"cross_validate_fold",
                                                                              "merge_folds"} & rules
        assert sum(rule == "cross_validate_checkpoint" for rule, _ in paper_jobs[paper]) == IMPLEMENTED_PAPER_MODELS * 3
    if paper in ("msmarco_v2", "study"):
        assert {"dense_encode", "dense_index", "hybrid_retrieve", "pool_evaluations"} <= rules


def test_the_study_asks_for_one_gpu_for_every_job_that_runs_a_network_and_none_for_the_others(dry_runs):
    """What `snakemake -j 8 --resources gpu=N` counts, and the SLURM plugin turns into --gpus=1 (the dry run prints
    each job's resources)."""
    gpu_rules = {"train", "rerank_checkpoint", "rerank_zero_shot_model", "cross_validate_checkpoint", "dense_encode",
                 "hybrid_retrieve"}
    asked = {}
    for job in re.split(r"\n(?=(?:local)?rule \w+:)", dry_runs["study"]):
        rule = re.match(r"(?:local)?rule (\w+):", job)
        resources = re.search(r"^\s*resources: (.*)$", job, re.M)
        if rule and resources:
            asked.setdefault(rule.group(1), set()).add(re.search(r"\bgpu=(\d+)", resources.group(1)).group(1)
                                                       if "gpu=" in resources.group(1) else "none")
    assert gpu_rules <= set(asked)
    assert all(asked[rule] == {"1"} for rule in gpu_rules), {rule: asked[rule] for rule in gpu_rules}
    assert all(asked[rule] == {"none"} for rule in set(asked) - gpu_rules - {"rerank_listwise"})
    assert asked["rerank_listwise"] == {"0"}  # GPT-4o-mini and Claude through their APIs


def test_the_three_experiments_schedule_the_same_training_and_index_jobs(paper_jobs):
    shared = ("train", "tokenize_documents", "bm25_index", "truncate_documents", "fetch_documents")
    # A zero-shot model reads the training collection only where it reranks it (MS MARCO v1 dev), so the token
    # store of a tokenizer no trained model has is not shared.
    cfg = load_config(PAPER / "msmarco_v1.yaml")
    trained = {cfg.models.tokenizer_of(m) for m in cfg.models.trained}
    zero_shot_only = {cfg.models.tokenizer_of(m) for m in cfg.models.zero_shot} - trained

    def jobs(paper, rule):
        return {w for r, w in paper_jobs[paper] if r == rule and ("msmarco_v1" in w or rule == "train")
                and not any(f"tokenizer={t}" in w for t in zero_shot_only)}

    for rule in shared:
        assert jobs("msmarco_v1", rule), rule
        assert jobs("msmarco_v1", rule) == jobs("msmarco_v2", rule) == jobs("robust04", rule), rule


def test_the_three_experiments_give_the_shared_jobs_identical_params():
    configs = {paper: load_config(PAPER / f"{paper}.yaml") for paper in EXPERIMENTS}
    v1 = configs["msmarco_v1"]
    for paper, cfg in configs.items():
        assert cfg.models.names == v1.models.names, paper
        for model in v1.models.names:  # what every train job receives through params:
            assert cfg.models.params(model) == v1.models.params(model), (paper, model)
            assert cfg.models.training_params(model) == v1.models.training_params(model), (paper, model)
        assert cfg.models.tokenizers == v1.models.tokenizers, paper  # tokenize_documents
        assert cfg.collections["msmarco_v1"] == v1.collections["msmarco_v1"], paper  # bm25_index: expansions
        assert cfg.querysets[cfg.training.queryset] == v1.querysets[v1.training.queryset], paper
        assert cfg.retrievers["bm25"] == v1.retrievers["bm25"], paper


def test_each_experiment_writes_its_tables_into_its_own_directory(dry_runs):
    for paper in (*EXPERIMENTS, "study"):
        output = dry_runs[paper]
        assert f"results/{paper}/table1.tex" in output and " results/table1.tex" not in output, paper


def test_the_pooled_trec_dl_column_stacks_the_three_years(paper_jobs):
    cfg = load_config(PAPER / "msmarco_v2.yaml")
    assert cfg.querysets["dl19_21"].pool == ("dl19", "dl20", "dl21")
    assert {"dl19_21"} <= set(cfg.tables.querysets("table1"))
    pooled = [w for r, w in paper_jobs["msmarco_v2"] if r == "pool_evaluations"]
    assert pooled and all("queryset=dl19_21" in w for w in pooled)


@pytest.mark.parametrize("paper", [*EXPERIMENTS, "study"])
def test_every_ranker_of_the_study_is_scheduled(dry_runs, paper):
    assert "is not implemented yet" not in dry_runs[paper]


def test_the_probes_config_builds_its_graph_from_the_users_redocred_files(tmp_path):
    """config/paper/probes.yaml: one build job reads the four Re-DocRED files where the README says to put them,
    one scoring job per scorer (the paper's six retrievers, BM25, two trained checkpoints), one report."""
    write_config(tmp_path, default_config())
    (tmp_path / "data" / "redocred").mkdir(parents=True)
    for name in ("dev_revised", "test_revised", "train_revised", "train_distant"):
        (tmp_path / "data" / "redocred" / f"{name}.json").write_text("[]")
    output = run_snakemake(tmp_path, "-n", "results/collapse/probes/probes.tex",
                           "--configfile", str(PAPER / "probes.yaml")).stdout
    jobs = scheduled_jobs(output)
    scorers = {w.split("scorer=")[1] for r, w in jobs if r == "probes_score"}
    assert scorers == {"dragon_plus", "dragon_roberta", "contriever_msmarco", "contriever", "cocodr", "retromae",
                       "bm25", "firstp", "maxp"}
    assert {"probes_build", "probes_report"} <= {r for r, _ in jobs} and "probes_synthetic" not in {r for r, _ in jobs}
    assert {w for r, w in jobs if r == "train"} == {f"model={m}, seed=1" for m in ("firstp", "maxp")}


def test_the_audit_config_builds_its_graph_from_the_users_qa_file(tmp_path):
    """config/paper/audit.yaml: one job per audited model and battery (the served reader's two, the served
    reranker's order battery, the embedder's grid on LongEmbed's needle and on its passkey set), the MS MARCO
    passages and dev/small queries the reranker reads fetched first, one report; nothing trained, nothing of the
    study's it builds on."""
    write_config(tmp_path, default_config())
    qa = tmp_path / "data" / "lost-in-the-middle" / "nq-open-contriever-msmarco-retrieved-documents.jsonl.gz"
    qa.parent.mkdir(parents=True)
    qa.write_bytes(b"")
    output = run_snakemake(tmp_path, "-n", "results/real_models/audit/leaderboard.html",
                           "--configfile", str(PAPER / "audit.yaml")).stdout
    jobs = scheduled_jobs(output)
    assert sorted(w for r, w in jobs if r == "audit_battery") == [
        "name=bge_m3_needle, battery=grid", "name=bge_m3_passkey, battery=grid",
        "name=llama31_rankgpt, battery=order", "name=llama31_reader, battery=reader",
        "name=llama31_reader, battery=reader_grid"]
    assert sorted(r for r, _ in jobs if r != "audit_battery") == ["audit_report", "fetch_documents", "fetch_queryset"]
    assert {w for r, w in jobs if r.startswith("fetch_")} == {
        "collection=msmarco_passage", "collection=msmarco_passage, queryset=msmarco_passage_dev_small"}
    assert "results/real_models/audit/bge_m3_passkey/card.html" in output


def test_the_farrelevant_config_builds_table4_and_figure2_from_ms_marco_passages(dry_runs):
    """config/paper/farrelevant.yaml: one job builds FarRelevant from MS MARCO passages (ir_datasets is read in
    that job, never while the graph is built), BM25 takes the top 100 for its test and training queries, every
    MS MARCO checkpoint reranks zero-shot and is fine-tuned, and Table 4 and Figure 2 (both settings) follow."""
    output = dry_runs["farrelevant"]
    jobs = scheduled_jobs(output)
    rules = [r for r, _ in jobs]
    assert rules.count("build_farrelevant_source") == 1
    assert not {"build_farrelevant", "generate_synthetic"} & set(rules)
    retrieved = {w for r, w in jobs if r == "bm25_retrieve"}
    assert {f"retriever=bm25, queryset={qs}, depth=100" for qs in ("farrelevant", "farrelevant_train")} <= retrieved
    # each checkpoint reranks and is fine-tuned in one job (rerank.jobs: per_checkpoint)
    assert rules.count("train") == rules.count("rerank_checkpoint") == IMPLEMENTED_PAPER_MODELS * 3
    assert "finetune" not in rules
    assert {w.split("model=")[1] for r, w in jobs if r == "rerank_listwise"} >= {"longp_rankgpt", "longp_rankgpt_claude"}
    figure = next(line for line in output.split("rule farrelevant_figure:")[1].splitlines() if "input:" in line)
    assert "eval/farrelevant/per_seed.parquet" in figure and "eval-finetuned/farrelevant/per_seed.parquet" in figure
    assert "results/farrelevant/table4.tex" in output
    # the checkpoints are the MS MARCO experiments' own: the same train jobs with the same params
    far, v1 = load_config(PAPER / "farrelevant.yaml"), load_config(PAPER / "msmarco_v1.yaml")
    assert far.models.trained == v1.models.trained
    assert all(far.models.training_params(m) == v1.models.training_params(m) and far.models.params(m) == v1.models.params(m)
               for m in v1.models.trained)
    assert far.farrelevant.source["kind"] == "ir_datasets" and far.data["farrelevant"]["n_queries"] == 1000


@pytest.fixture(scope="module")
def extra_dry_runs(dry_runs) -> dict[str, list[tuple[str, str]]]:
    """The jobs `snakemake -n` schedules for the de-biasing and chunk-ablation configs."""
    return {paper: scheduled_jobs(dry_runs[paper]) for paper in ("debias", "chunks")}


def test_the_debiasing_config_trains_each_model_twice_and_the_twin_on_a_debiased_copy(extra_dry_runs):
    jobs = extra_dry_runs["debias"]
    trained = {w.split(",")[0].split("model=")[1] for r, w in jobs if r == "train"}
    originals = {"maxp_electra_8109", "parade_attn_electra_8109", "parade_transf_rand_electra_8109", "cedr_knrm_8109"}
    assert trained == {*originals, *(f"{m}_debiased" for m in originals), "firstp_8109", "firstp_electra_8109"}
    assert sum(r == "train" for r, _ in jobs) == 3 * len(trained)
    assert [w for r, w in jobs if r == "debias_documents"] == ["collection=msmarco_v1_8109-debiased-k1-seed0"]
    assert {"table2", "table3"} <= {r for r, _ in jobs}
    fetched = {w for r, w in jobs if r == "fetch_documents"}
    assert fetched == {f"collection={c}" for c in ("msmarco_v1_8109", "needle", "passkey", "msmarco_passage", "nq")}
    assert "build_farrelevant_source" in {r for r, _ in jobs}


def test_the_chunk_ablation_trains_parade_attn_with_one_to_six_chunks_on_a_longer_copy(extra_dry_runs):
    jobs = extra_dry_runs["chunks"]
    trained = {w.split(",")[0].split("model=")[1] for r, w in jobs if r == "train"}
    assert trained == {"firstp_2862", *(f"parade_attn_k{k}" for k in range(1, 7))}
    assert {w for r, w in jobs if r == "truncate_documents"} == {"collection=msmarco_v1_2862"}
    assert "table6" in {r for r, _ in jobs}
    cfg = load_config(PAPER / "chunks.yaml")
    assert [cfg.models[f"parade_attn_k{k}"].args["max_doc_tokens"] for k in range(1, 7)] == [477 * k for k in range(1, 7)]


def test_table5_types_in_the_prior_art_only_as_published_rows():
    spec = load_config(PAPER / "study.yaml").tables["table5"]
    headers = {c["header"] for c in spec["columns"]}
    assert spec["reference_rows"] and all(set(r["values"]) <= headers for r in spec["reference_rows"])
    assert all(r["source"] for r in spec["reference_rows"])


def test_the_debiasing_config_builds_farrelevant_as_the_farrelevant_config_does():
    """One FarRelevant build in a shared results tree: the two sections must stay identical."""
    assert (load_config(PAPER / "debias.yaml").data["farrelevant"]
            == load_config(PAPER / "farrelevant.yaml").data["farrelevant"])


def test_the_positions_config_matches_ms_marco_and_judges_the_dense_sets(dry_runs):
    """config/paper/positions.yaml (appendix B.4): sparse matching for MS MARCO dev and a train sample, LLM chunk
    judging for TREC DL 2019-2021 and Robust04 descriptions, one report with Figures 1 and 7."""
    output = dry_runs["positions"]
    jobs = scheduled_jobs(output)
    rules = [r for r, _ in jobs]
    assert rules.count("positions_report") == rules.count("bm25_index") == 1
    assert sorted(w.split("=")[1] for r, w in jobs if r == "positions_sparse") == ["msmarco_dev", "msmarco_train"]
    assert sorted(w.split("=")[1] for r, w in jobs if r == "positions_dense") == ["dl19", "dl20", "dl21",
                                                                                   "robust04_desc"]
    assert not {"train", "generate_synthetic"} & set(rules)  # judgments and documents, never a model or the generator
    # the passage collection and the passage query sets come through the ordinary fetch rules
    assert "results/data/msmarco_passage/source/docs.jsonl" in output
    assert "results/data/msmarco_passage/qrels/msmarco_passage_train.txt" in output


def test_the_positions_config_breaks_ms_marco_dev_down_by_the_estimated_positions(tmp_path):
    write_config(tmp_path, default_config())
    jobs = scheduled_jobs(run_snakemake(tmp_path, "-n", "results/first_relevant/position_breakdown.tex",
                                        "--configfile", str(PAPER / "positions.yaml")).stdout)
    assert {w for r, w in jobs if r == "positions_sparse"} == {"pset=msmarco_dev"}
    assert "position_breakdown" in {r for r, _ in jobs}


def test_a_probes_only_config_builds_only_the_probes(tmp_path):
    """A config with the probes alone (no query sets, models, tables, training or reranking) is accepted and its
    graph holds the probes' jobs and the provenance manifest, nothing of the long-document study."""
    probes = default_config()["probes"]
    probes["scorers"] = {name: s for name, s in probes["scorers"].items() if s.get("kind") != "checkpoint"}
    write_config(tmp_path, {"probes": probes})
    jobs = scheduled_jobs(run_snakemake(tmp_path, "-n").stdout)
    assert {r for r, _ in jobs} == {"probes_synthetic", "probes_build", "probes_score", "probes_report", "provenance"}
    assert {w.split("scorer=")[1] for r, w in jobs if r == "probes_score"} == set(probes["scorers"])
