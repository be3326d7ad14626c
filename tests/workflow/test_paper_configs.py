"""The paper configs: each builds the study's graph, and the three experiments share one results tree
(the same training, tokenisation and index jobs with the same params), so none retrains another's models."""

from __future__ import annotations

import pytest

from posbias.config import load_config

from test_workflow import ROOT, default_config, run_snakemake, scheduled_jobs, write_config

PAPER = ROOT / "config" / "paper"
EXPERIMENTS = ("msmarco_v1", "msmarco_v2", "robust04")
IMPLEMENTED_PAPER_MODELS = 31  # trained ones; E5 and RankGPT are zero-shot


@pytest.fixture(scope="module")
def dry_runs(tmp_path_factory) -> dict[str, str]:
    """What `snakemake -n` prints for each paper config, all in one working directory."""
    workdir = tmp_path_factory.mktemp("paper")
    write_config(workdir, default_config())  # present, but a config on the command line replaces it
    return {paper: run_snakemake(workdir, "-n", "--configfile", str(PAPER / f"{paper}.yaml")).stdout
            for paper in (*EXPERIMENTS, "study")}


@pytest.fixture(scope="module")
def paper_jobs(dry_runs) -> dict[str, list[tuple[str, str]]]:
    return {paper: scheduled_jobs(output) for paper, output in dry_runs.items()}


@pytest.mark.parametrize("paper", [*EXPERIMENTS, "study"])
def test_a_paper_config_replaces_the_default_and_builds_its_graph(paper_jobs, paper):
    rules = {rule for rule, _ in paper_jobs[paper]}
    assert "generate_synthetic" not in rules and {"fetch_documents", "train"} <= rules
    assert sum(rule == "train" for rule, _ in paper_jobs[paper]) == IMPLEMENTED_PAPER_MODELS * 3
    # E5-4K is zero-shot: no train job, one rerank per query set straight from the pretrained weights
    assert not any("_e5" in wildcards for rule, wildcards in paper_jobs[paper] if rule == "train")
    assert {w.split("model=")[1] for r, w in paper_jobs[paper] if r == "rerank_zero_shot"} == {"firstp_e5", "longp_e5"}
    # RankGPT (GPT-4o-mini, Claude-3-haiku; FirstP and LongP) through the language-model layer, never on MS MARCO
    # dev or Robust04 titles, as the study ran it
    listwise = [w for r, w in paper_jobs[paper] if r == "rerank_listwise"]
    assert listwise and {w.split("model=")[1] for w in listwise} == {"firstp_rankgpt", "longp_rankgpt",
                                                                     "firstp_rankgpt_claude", "longp_rankgpt_claude"}
    assert not any("msmarco_dev" in w or "robust04_title" in w for w in listwise)
    if paper in ("robust04", "study"):
        assert {"cross_validate_fold", "merge_folds", "fetch_folds"} <= rules
    if paper in ("msmarco_v2", "study"):
        assert {"dense_index", "hybrid_retrieve", "pool_evaluations"} <= rules


def test_the_three_experiments_schedule_the_same_training_and_index_jobs(paper_jobs):
    shared = ("train", "tokenize_documents", "bm25_index", "truncate_documents", "fetch_documents")
    # A zero-shot model reads the training collection only where it reranks it (MS MARCO v1 dev), so the token
    # store of a tokenizer no trained model has is not shared.
    cfg = load_config(PAPER / "msmarco_v1.yaml")
    trained = {cfg.tokenizer_of(m) for m in cfg.trained_models}
    zero_shot_only = {cfg.tokenizer_of(m) for m in cfg.zero_shot_models} - trained

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
        assert cfg.model_names == v1.model_names, paper
        for model in v1.model_names:  # what every train job receives through params:
            assert cfg.model_params(model) == v1.model_params(model), (paper, model)
            assert cfg.training_params(model) == v1.training_params(model), (paper, model)
        assert cfg.tokenizers == v1.tokenizers, paper  # tokenize_documents
        assert cfg.collections["msmarco_v1"] == v1.collections["msmarco_v1"], paper  # bm25_index: expansions
        assert cfg.querysets[cfg.train_queryset] == v1.querysets[v1.train_queryset], paper
        assert cfg.retrievers["bm25"] == v1.retrievers["bm25"], paper


def test_each_experiment_writes_its_tables_into_its_own_directory(dry_runs):
    for paper, output in dry_runs.items():
        assert f"results/{paper}/table1.tex" in output and " results/table1.tex" not in output, paper


def test_the_pooled_trec_dl_column_stacks_the_three_years(paper_jobs):
    cfg = load_config(PAPER / "msmarco_v2.yaml")
    assert cfg.querysets["dl19_21"].pool == ("dl19", "dl20", "dl21")
    assert {"dl19_21"} <= set(cfg.table_querysets("table1"))
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
