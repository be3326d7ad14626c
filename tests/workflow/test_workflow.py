"""The workflow itself: schema validation, a tiny end-to-end run, and incremental reruns."""

from __future__ import annotations

import copy
import gzip
import json
import re
import subprocess
from pathlib import Path

import pandas as pd
import pytest
import yaml

from snakemake_runs import (ROOT, SNAKEMAKE, TARGETS, copy_of_run, default_config, run_snakemake, scheduled_jobs,
                            write_config)

pytestmark = pytest.mark.slow  # minutes: `make test` starts this file first (tests/conftest.py)

# --- validation when the graph is built --------------------------------------------------------


@pytest.mark.parametrize("mutate,expected", [
    (lambda c: c["models"]["maxp"].update(ranker="maxq"), r"'maxq' is not one of"),
    (lambda c: c["models"]["maxp"].update(lr=-1e-5), r"-1e-05 is less than or equal to the minimum of 0"),
    (lambda c: c["models"]["maxp"].pop("head_lr"), r"'head_lr' is a required property"),
    (lambda c: c["models"]["maxp"].update(baseline="nofirstp"), r"models\.maxp\.baseline"),
])
def test_malformed_config_fails_when_the_graph_is_built(tmp_path, mutate, expected):
    config = default_config()
    mutate(config)
    write_config(tmp_path, config)
    result = run_snakemake(tmp_path, "-n", "results/table1.tex", check=False)
    output = result.stdout + result.stderr
    assert result.returncode != 0
    assert re.search(expected, output), output[-2000:]
    if "maxp" in expected or "baseline" not in expected:
        assert "maxp" in output  # the message names the offending key
    assert not (tmp_path / "results").exists()


def test_default_config_builds_the_full_graph(tmp_path):
    config = default_config()
    write_config(tmp_path, config)
    output = run_snakemake(tmp_path, "-n", *TARGETS).stdout
    jobs = scheduled_jobs(output)
    trained = {w for r, w in jobs if r == "train"}
    zero_shot = {m for m, spec in config["models"].items() if spec.get("zero_shot")}
    # (de-biased twins name no ranker of their own)
    listwise = {m for m, spec in config["models"].items() if spec.get("ranker") == "rankgpt"}
    assert zero_shot and listwise  # the E5-style and RankGPT rows: never trained, one run per query set
    zero_shot |= listwise
    assert trained == {f"model={m}, seed={s}" for m in config["models"] if m not in zero_shot
                       for s in config["training"]["seeds"]}
    # rerank.jobs: per_checkpoint: a zero-shot model scores every reranked query set in one job
    assert {w for r, w in jobs if r == "rerank_zero_shot_model"} == {f"model={m}" for m in zero_shot - listwise}
    assert not {w for r, w in jobs if r == "rerank_zero_shot"}
    # RankGPT skips the MS MARCO dev stand-in, as the study did
    assert {w for r, w in jobs if r == "rerank_listwise"} == {f"queryset={qs}, model={m}" for m in listwise
                                                              for qs in ("test", "farrelevant")}
    assert {r for r, _ in jobs} >= {"generate_synthetic", "build_farrelevant", "bm25_index", "bm25_retrieve",
                                    "dense_encode", "dense_index", "hybrid_retrieve", "first_stage_table",
                                    "train", "rerank_checkpoint", "evaluate", "combine_seeds", "table1", "table4",
                                    "table11",
                                    "efficiency_figure", "litm_synthetic_qa", "litm_build_qa", "litm_build_kv",
                                    "litm_predict_qa", "litm_predict_kv", "litm_score_qa", "litm_score_kv",
                                    "litm_report", "probes_synthetic", "probes_build", "probes_score",
                                    "probes_report", "build_sweep", "sweep_report", "position_breakdown",
                                    "audit_export", "audit_battery", "audit_report", "provenance"}
    assert {w for r, w in jobs if r == "probes_score"} == {f"scorer={s}" for s in config["probes"]["scorers"]}
    # rerank.jobs: per_checkpoint: each checkpoint reranks its three query sets and is fine-tuned in one job (but
    # the audit's firstp_cls, which reranks nothing: querysets [])
    reranking = {f"model={m}, seed={s}" for m in config["models"] if config["models"][m].get("querysets") != []
                 for s in config["training"]["seeds"]}
    assert {w for r, w in jobs if r == "rerank_checkpoint"} == trained & reranking and not {"rerank", "finetune"} & {
        r for r, _ in jobs}
    assert trained - reranking == {"model=firstp_cls, seed=1"}


def test_an_outcome_depth_at_the_rerank_depth_is_warned_about(tmp_path):
    config = default_config()
    config["tables"]["outcomes"]["k"] = config["querysets"]["dev"]["depth"]
    write_config(tmp_path, config)
    result = run_snakemake(tmp_path, "-n", "results/outcomes.tex")
    assert "tables.outcomes.k: 10 is not below querysets.dev.depth (10)" in result.stdout + result.stderr
    write_config(tmp_path, default_config())
    result = run_snakemake(tmp_path, "-n", "results/outcomes.tex")
    assert "tables.outcomes.k" not in result.stdout + result.stderr


# --- a tiny end-to-end run (finished_run: tests/workflow/conftest.py) -------------------------------------


def test_end_to_end_writes_tables_runs_and_logs(finished_run):
    work = finished_run
    for name in ("table1", "table4", "table7", "outcomes", "first_stage", "table9", "table10"):
        for ext in ("tex", "csv", "md", "html"):
            assert (work / "results" / f"{name}.{ext}").stat().st_size > 0
    for ext in ("png", "pdf"):
        assert (work / "results" / "figures" / f"farrelevant.{ext}").stat().st_size > 0
        assert (work / "results" / "figures" / f"efficiency.{ext}").stat().st_size > 0
    # each run says how long its scoring took (the efficiency figure's times)
    assert json.loads((work / "results/runs/dev/maxp/seed1.run.json").read_text())["scoring_seconds"] > 0
    efficiency = (work / "logs/report/efficiency_figure.log").read_text()
    assert "MaxP: time x" in efficiency and "PARADE Attn: time x" in efficiency
    first_stage = pd.read_csv(work / "results" / "first_stage.csv")
    assert set(first_stage["system"]) == {"bm25", "hybrid"}
    assert set(first_stage["metric"]) == {"R@100", "nDCG@10"}
    table1 = pd.read_csv(work / "results" / "table1.csv")
    assert set(table1["system"]) == {"retriever", "firstp", "maxp", "parade_attn", "firstp_rankgpt", "longp_rankgpt"}
    # RankGPT: not run on dev (a dash, no value, no test); the mock reverses the 6 BM25 candidates
    rankgpt = table1[table1["system"] == "longp_rankgpt"].set_index("queryset")
    assert rankgpt.loc["dev", "n_queries"] == 0 and pd.isna(rankgpt.loc["dev", "value"])
    assert rankgpt.loc["test", "n_queries"] == 4
    assert "Not run (a dash): FirstP RankGPT (mock) on dev; LongP RankGPT (mock) on dev." in \
        (work / "results" / "table1.md").read_text()
    bm25 = (work / "results/candidates/bm25/test/top6.run").read_text().split("\n")[0].split()
    reversed_run = (work / "results/runs/test/longp_rankgpt/seed0.run").read_text().splitlines()
    first = next(line.split() for line in reversed_run if line.split()[0] == bm25[0])
    assert first[3] == "1" and first[2] != bm25[2]  # the BM25 top document is no longer first
    assert json.loads((work / "results/runs/test/longp_rankgpt/seed0.run.json").read_text())["calls"] == 4
    run_lines = (work / "results/runs/dev/maxp/seed1.run").read_text().splitlines()
    fields = run_lines[0].split()
    assert len(fields) == 6 and fields[1] == "Q0" and fields[3] == "1" and fields[5] == "maxp-seed1"
    assert (work / "logs/train/maxp/seed2.log").read_text().count("training maxp") >= 1
    assert (work / "results/benchmarks/train/maxp/seed1.tsv").exists()
    assert (work / "results/benchmarks/rerank_checkpoint/maxp/seed1.tsv").exists()
    checkpoint = work / "results/models/maxp/seed1"
    assert {"ranker.json", "ranker.pt", "backbone"} <= {p.name for p in checkpoint.iterdir()}
    # per-query values are averaged over both seeds before testing
    averaged = pd.read_parquet(work / "results/eval/dev/seed_averaged.parquet")
    assert set(averaged[averaged.system == "maxp"]["n_seeds"]) == {2}
    assert "2 seeds" in (work / "results" / "table1.tex").read_text()
    # RankGPT: test only, and its LongP ties with its FirstP on every query (one mock language model): no test
    assert "Holm correction over the 4 tests" in (work / "results" / "table1.tex").read_text()
    assert "1 comparison, left out of the count of tests" in (work / "results" / "table1.tex").read_text()
    # Table 4: zero-shot and fine-tuned columns; the fine-tuned runs come from their own jobs
    table4 = pd.read_csv(work / "results" / "table4.csv")
    assert set(table4["setting"]) == {"zero-shot", "fine-tuned"}
    assert (work / "results/runs-finetuned/farrelevant/maxp/seed2.run").read_text().split()[5] == "maxp-finetuned-seed2"
    assert (work / "results/models-finetuned/maxp/seed2/ranker.json").exists()  # reranked in the fine-tuning job
    outcomes = pd.read_csv(work / "results" / "outcomes.csv")
    assert set(outcomes["queryset"]) == {"dev", "farrelevant"} and set(outcomes["seed"]) == {0, 1, 2}  # 0: RankGPT
    assert (outcomes[["n_neither", "n_only_a", "n_only_b", "n_both"]].sum(axis=1) == outcomes["n_queries"]).all()
    queries = pd.read_csv(work / "results" / "table10.csv").set_index("queryset")
    assert queries.loc["dev", "n_queries"] == 8 and queries.loc["farrelevant_train", "n_queries"] == 4
    # the position sweep: 2 queries x 3 positions reranked by the trained models (RankGPT skips it)
    sweep = pd.read_csv(work / "results" / "sweep.csv")
    assert set(sweep["model"]) == {"firstp", "maxp", "parade_attn"} and set(sweep["n_queries"]) == {2}
    assert list(sweep[sweep["model"] == "firstp"]["position"]) == [0, 1, 2]
    assert (work / "results" / "figures" / "sweep.png").stat().st_size > 0
    assert "(n = " in (work / "results" / "position_breakdown.md").read_text()


def test_lost_in_the_middle_with_the_mock_u_curve_gives_its_exact_accuracies(finished_run):
    """The mock answers right iff (index + 0.5) / n < p(position), p = 0.5 + 0.5 (2r - 1)^2 over the relative
    position r, 1 for the oracle and 0.25 closed-book: with 4 questions, 4/4 at both ends and 2/4 in the middle."""
    work = finished_run
    qa = pd.read_csv(work / "results/litm/qa_3.csv")
    curve = qa[qa["level"] == "position"].set_index("gold_index")
    assert curve["accuracy"].to_dict() == {0: 1.0, 1: 0.5, 2: 1.0}
    assert curve.loc[1, "mcnemar_p"] == 0.5  # 2 questions right at the first position only: exact two-sided p
    assert pd.isna(curve.loc[2, "mcnemar_p"])  # right on every question at both ends: no test (not p = 1)
    assert qa[qa["level"] != "position"].set_index("level")["accuracy"].to_dict() == {"closedbook": 0.25,
                                                                                     "oracle": 1.0}
    kv = pd.read_csv(work / "results/litm/kv_4.csv")
    assert kv[kv["level"] == "position"].set_index("gold_index")["accuracy"].to_dict() == {0: 1.0, 1: 0.5, 3: 1.0}
    for name in ("qa_3", "kv_4"):
        for ext in ("png", "pdf"):
            assert (work / "results/litm/figures" / f"{name}.{ext}").stat().st_size > 0
        assert "best − worst" in (work / "results/litm" / f"{name}.md").read_text()
    # predictions keep the authors' layout, so their evaluator could read them
    with gzip.open(work / "results/litm/predictions/qa/u_curve/default/k3_gold_at_1.jsonl.gz", "rt") as handle:
        record = json.loads(handle.readline())
    assert {"question", "answers", "ctxs", "model_answer", "model_prompt", "model_documents"} <= set(record)
    assert record["model_documents"][1]["isgold"] and record["model_prompt"].startswith("Write a high-quality answer")


def test_the_audit_exports_a_trained_ranker_and_reports_every_model(finished_run):
    audit = finished_run / "results/audit"
    board = pd.read_csv(audit / "leaderboard.csv")
    assert board[["name", "battery"]].values.tolist() == [
        ["exported_firstp", "sweep"], ["exported_firstp", "probes"], ["exported_firstp", "grid @32"],
        ["exported_firstp", "grid @48"], ["firstp_checkpoint", "sweep"], ["reverse", "order"],
        ["reverse_psc", "order"]]
    # the mock `reverse` puts the gold last-in first: reciprocal rank 1 / (3 - position); self-consistent over 3
    # rotations, the three candidates tie wherever the gold entered: (1 + 1/2 + 1/3) / 3
    assert pd.read_csv(audit / "reverse/order.curve.csv")["mean"].tolist() == pytest.approx([1 / 3, 1 / 2, 1])
    assert pd.read_csv(audit / "reverse_psc/order.curve.csv")["mean"].tolist() == pytest.approx([11 / 18] * 3)
    (row,) = pd.read_csv(audit / "mitigations.csv").to_dict("records")
    assert (row["of"], row["psi_before"], row["psi_after"], row["cost_multiplier"]) == (
        "reverse", pytest.approx(2 / 3), 0, 3)
    assert {path.name for path in (audit / "exported_firstp").glob("grid.heatmap.*")} == {
        f"grid.heatmap.{ext}" for ext in ("png", "pdf", "csv", "md", "tex", "html")}
    exported = json.loads((audit / "exported_firstp/sweep.json").read_text())
    assert exported["model"]["architecture"] == "ElectraForSequenceClassification"
    assert exported["model"]["max_length"] == 8 + 16 + 3  # the tiny FirstP's query slots, window and specials
    assert exported["spec"] == "cross-encoder:results/audit/exported/firstp/seed1"
    for name in ("exported_firstp", "firstp_checkpoint", "reverse"):
        assert "Position-sensitivity audit" in (audit / name / "card.html").read_text()


def test_the_probes_stage_tests_every_probe_with_every_scorer(finished_run):
    work = finished_run
    summary = pd.read_csv(work / "results/probes/probes.csv", keep_default_na=False, na_values=[""])
    assert set(summary["scorer"]) == {"bm25", "dense", "firstp"}
    assert set(summary["probe"]) == {"answer_importance", "position_first_last", "position_sweep", "literal",
                                     "brevity", "repetition", "foil", "poison"}
    replacements = (work / "results/probes/pairs/poison_replacements.jsonl").read_text().splitlines()
    assert len(replacements) == 8
    assert list((work / "cache/llm").glob("echo-*.jsonl"))  # RAG asked the mock through the response cache
    # RAG poisoning: the echoing reader answered every question in every condition; the echoing judge never says YES
    rag = pd.read_csv(work / "results/probes/rag.csv")
    assert set(rag["condition"]) == {"poison_doc", "foil_doc", "evidence_doc", "no_doc"}
    assert (rag["n"] == 8).all() and (rag["accuracy"] == 0).all()
    answers = pd.read_parquet(work / "results/probes/rag/answers.parquet")
    no_doc = answers[answers["condition"] == "no_doc"]["answer"]
    assert len(answers) == 32 and no_doc.str.startswith("Answer the question. Only give me the answer").all()
    # the judge's swap check (50 by default: all 32 verdicts): the echoing judge never says YES in either layout
    swap = json.loads((work / "results/probes/rag/judge_consistency.json").read_text())
    assert (swap["n"], swap["eligible"], swap["agreement"], swap["mcnemar_p"]) == (32, 32, 1.0, None)
    assert len(pd.read_parquet(work / "results/probes/rag/judge_consistency.parquet")) == 32
    assert "The judge (echo) decides alike" in (work / "results/probes/rag.md").read_text()
    assert (summary["n"] == 8).all()
    # BM25 is order-invariant: reordering sentences ties every pair, so the position probes have no test
    bm25 = summary[(summary["scorer"] == "bm25") & summary["probe"].str.startswith("position")]
    assert (bm25["ties"] == 8).all()
    # FirstP reads 16 tokens of documents of 90-190 words: every pair is cut off
    assert (summary.loc[summary["scorer"] == "firstp", "truncated_pairs"] == 8).all()
    for name in ("sweep", "heatmap", "summary"):
        assert (work / "results/probes/figures" / f"{name}.png").stat().st_size > 0
    table = (work / "results/probes/probes.md").read_text()
    assert all(label in table for label in ("| bm25 |", "| dense |", "| FirstP |"))  # a checkpoint: its model's label


def test_the_positions_stage_reports_the_judges_order_check(finished_run):
    work = finished_run
    # the 11 judged chunks of two or more sentences, all sampled (50 by default) and judged again reversed: the
    # mock oracle answers from the truth in either order, so it is consistent by construction
    oracle = json.loads((work / "results/positions/test.json").read_text())["consistency"]["oracle"]
    assert (oracle["sampled"], oracle["eligible"], oracle["n"], oracle["agreement"]) == (11, 11, 11, 1.0)
    judges = pd.read_csv(work / "results/positions/judges.csv")
    assert judges[["set", "judge", "n", "only_original", "only_reordered"]].values.tolist() == [["test", "oracle", 11,
                                                                                                  0, 0]]
    assert len(pd.read_parquet(work / "results/positions/test.consistency.parquet")) == 11
    assert "consistency is 1 by construction" in (work / "results/positions/judges.md").read_text()


def test_changing_one_learning_rate_reruns_only_that_model(finished_run, tmp_path):
    work = finished_run
    config = yaml.safe_load((work / "config.yaml").read_text())
    assert scheduled_jobs(run_snakemake(work, "-n", *TARGETS).stdout) == []
    changed = copy.deepcopy(config)
    changed["models"]["maxp"]["lr"] = 2e-4
    other = tmp_path / "changed.yaml"
    other.write_text(yaml.safe_dump(changed, sort_keys=False))
    # targets first: --configfile takes every argument that follows it
    jobs = scheduled_jobs(run_snakemake(work, "-n", *TARGETS, "--configfile", str(other)).stdout)
    rules = {rule for rule, _ in jobs}
    assert rules == {"train", "rerank_checkpoint", "evaluate", "combine_seeds",
                     "evaluate_finetuned", "combine_finetuned_seeds", "evaluate_cutoff", "combine_cutoff_seeds",
                     "table1", "table7", "table4", "table11", "farrelevant_figure", "outcome_table", "efficiency_figure",
                     "sweep_report", "position_breakdown", "provenance"}
    for rule, wildcards in jobs:
        if rule in ("train", "rerank_checkpoint", "evaluate", "evaluate_finetuned", "evaluate_cutoff"):
            assert "maxp" in wildcards, (rule, wildcards)
    assert sum(rule == "train" for rule, _ in jobs) == 2  # both seeds of maxp, nothing else


def test_statistics_settings_rebuild_only_the_tables_from_persisted_values(finished_run, tmp_path):
    work = finished_run
    changed = yaml.safe_load((work / "config.yaml").read_text())
    changed["statistics"].update(test="randomisation", correction="fdr_bh", permutations=999)
    other = tmp_path / "statistics.yaml"
    other.write_text(yaml.safe_dump(changed, sort_keys=False))
    jobs = scheduled_jobs(run_snakemake(work, "-n", *TARGETS, "--configfile", str(other)).stdout)
    # the outcome table has a correction of its own (tables.outcomes.correction): left alone
    assert {rule for rule, _ in jobs} == {"table1", "table7", "table4", "first_stage_table", "efficiency_figure",
                                          "sweep_report", "position_breakdown", "provenance"}


def test_an_external_run_is_evaluated_and_placed_in_the_tables(finished_run, tmp_path):
    work = copy_of_run(finished_run, tmp_path / "work")
    lines = (work / "results/candidates/bm25/dev/top6.run").read_text().splitlines()
    dropped = lines[0].split()[0]  # a run made elsewhere may lack queries: compared on the common ones
    external = work / "their-dev.run.gz"
    with gzip.open(external, "wt") as out:
        out.writelines(line.replace(" bm25", " theirs") + "\n" for line in lines if line.split()[0] != dropped)
    config = yaml.safe_load((work / "config.yaml").read_text())
    config["external_runs"] = {"theirs": {"label": "Their BM25", "runs": {"dev": str(external)},
                                          "baseline": "firstp"}}
    other = work / "external.yaml"
    other.write_text(yaml.safe_dump(config, sort_keys=False))
    jobs = scheduled_jobs(run_snakemake(work, "-n", *TARGETS, "--configfile", str(other)).stdout)
    # the outcome table compares our models only: it is left alone
    assert {rule for rule, _ in jobs} == {"evaluate", "combine_seeds", "table1", "table7", "efficiency_figure",
                                          "position_breakdown", "provenance"}
    run_snakemake(work, "-j", "2", *TARGETS, "--configfile", str(other))
    table1 = pd.read_csv(work / "results" / "table1.csv").set_index(["system", "queryset"])
    n_dev = table1.loc[("firstp", "dev"), "n_queries"]
    assert table1.loc[("theirs", "dev"), "n_queries"] == n_dev - 1
    assert table1.loc[("theirs", "dev"), "vs_a"] == "firstp"
    assert pd.isna(table1.loc[("theirs", "test"), "value"])  # no run for test: a dash
    assert "| Their BM25 | " in (work / "results" / "table1.md").read_text()


def dry_run_with(work: Path, other: Path, change, *options: str) -> list[tuple[str, str]]:
    """The jobs a dry run schedules after `change` is applied to the finished run's config (written to `other`)."""
    config = yaml.safe_load((work / "config.yaml").read_text())
    change(config)
    other.write_text(yaml.safe_dump(config, sort_keys=False))
    return scheduled_jobs(run_snakemake(work, "-n", *TARGETS, *options, "--configfile", str(other)).stdout)


def test_the_same_config_with_sorted_keys_and_other_number_spellings_reruns_nothing(finished_run, tmp_path):
    config = yaml.safe_load((finished_run / "config.yaml").read_text())
    config["training"]["margin"] = 1  # 1.0 in the run's config: the same number
    other = tmp_path / "sorted.yaml"
    other.write_text(yaml.safe_dump(config, sort_keys=True))  # as yaml.safe_dump writes it by default
    assert other.read_text() != (finished_run / "config.yaml").read_text()
    assert scheduled_jobs(run_snakemake(finished_run, "-n", *TARGETS, "--configfile", str(other)).stdout) == []


def per_queryset(config: dict) -> None:
    config["rerank"]["jobs"] = "per_queryset"


def test_with_a_job_per_query_set_new_candidates_of_one_query_set_rerun_only_its_rerankings(finished_run, tmp_path):
    work = copy_of_run(finished_run, tmp_path / "copy")
    config = yaml.safe_load((work / "config.yaml").read_text())
    per_queryset(config)
    (work / "per_queryset.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    candidates = work / "results/candidates/bm25/test/top6.run"
    lines = candidates.read_text().splitlines(keepends=True)
    candidates.unlink()  # a hard link to the shared run's file: it is written anew, newer, and one line shorter
    candidates.write_text("".join(lines[:-1]))
    # The run's jobs were one per checkpoint, whose params and inputs differ from a query set's job: only changed
    # files trigger here, so what reruns is what reads test's candidates.
    jobs = scheduled_jobs(run_snakemake(work, "-n", *TARGETS, "--rerun-triggers", "mtime",
                                        "--configfile", str(work / "per_queryset.yaml")).stdout)
    assert {rule for rule, _ in jobs} == {"random_shuffle", "rerank", "rerank_listwise", "evaluate",
                                          "combine_seeds", "table1", "table7", "efficiency_figure", "provenance"}
    for rule, wildcards in jobs:
        if rule in ("random_shuffle", "rerank", "rerank_listwise", "evaluate", "combine_seeds"):
            assert "queryset=test" in wildcards, (rule, wildcards)
    assert sum(rule == "rerank" for rule, _ in jobs) == 6  # three models, two seeds


def test_switching_to_a_reranking_job_per_query_set_reruns_the_rerankings_but_trains_nothing(finished_run, tmp_path):
    # each run's job now reads one query set's files: Snakemake reruns a job whose set of inputs changed
    rules = {rule for rule, _ in dry_run_with(finished_run, tmp_path / "per_queryset.yaml", per_queryset)}
    assert {"rerank", "finetune"} <= rules and not rules & {"rerank_checkpoint", "train", "bm25_retrieve"}


def test_with_a_job_per_checkpoint_one_query_sets_depth_reruns_every_checkpoints_reranking(finished_run, tmp_path):
    jobs = dry_run_with(finished_run, tmp_path / "per_checkpoint_depth.yaml",
                        lambda config: config["querysets"]["test"].update(depth=5))
    reranked = sorted(wildcards for rule, wildcards in jobs if rule == "rerank_checkpoint")
    assert reranked == [f"model={m}, seed={s}" for m in ("firstp", "maxp", "parade_attn") for s in (1, 2)]
    assert not {rule for rule, _ in jobs} & {"rerank", "finetune"}  # the checkpoint's job fine-tunes it too


def test_the_jobs_per_query_set_write_the_runs_the_job_per_checkpoint_wrote(finished_run, tmp_path):
    work = copy_of_run(finished_run, tmp_path / "copy")
    config = yaml.safe_load((work / "config.yaml").read_text())
    per_queryset(config)
    (work / "per_queryset.yaml").write_text(yaml.safe_dump(config, sort_keys=False))
    runs = {"rerank": "results/runs/test/maxp/seed1.run",
            "finetune": "results/runs-finetuned/farrelevant/maxp/seed1.run"}
    before = {run: (work / run).read_text() for run in runs.values()}
    result = run_snakemake(work, "-j", "1", *runs.values(), "--forcerun", "rerank", "finetune",
                           "--configfile", str(work / "per_queryset.yaml"))
    assert sorted(rule for rule, _ in scheduled_jobs(result.stderr)) == ["finetune", "rerank"]  # a run logs to stderr
    assert (work / "logs/rerank/test/maxp/seed1.log").exists()
    for run, text in before.items():  # the same scores as the checkpoint's job wrote
        assert (work / run).read_text() == text, run
        assert json.loads((work / f"{run}.json").read_text())["scoring_seconds"] > 0


def test_the_outcome_tables_depth_never_reaches_the_evaluation_of_the_query_sets(finished_run, tmp_path):
    jobs = dry_run_with(finished_run, tmp_path / "outcome_k.yaml", lambda c: c["tables"]["outcomes"].update(k=3))
    assert {rule for rule, _ in jobs} == {"evaluate_cutoff", "combine_cutoff_seeds", "outcome_table", "provenance"}


def test_one_query_sets_alpha_rebuilds_only_the_tables_that_show_it(finished_run, tmp_path):
    jobs = dry_run_with(finished_run, tmp_path / "alpha.yaml", lambda c: c["querysets"]["test"].update(alpha=0.01))
    assert {rule for rule, _ in jobs} == {"table1", "table7", "first_stage_table", "efficiency_figure", "provenance"}


def test_report_zip_holds_the_tables_and_figures(finished_run, tmp_path):
    import zipfile

    work = copy_of_run(finished_run, tmp_path / "copy")
    run_snakemake(work, "--report", "results/report.zip")
    names = zipfile.ZipFile(work / "results" / "report.zip").namelist()
    for name in ("table1.html", "table4.html", "table7.html", "outcomes.html", "table9.html", "farrelevant.png",
                 "efficiency.png", "sweep.html", "sweep.png", "position_breakdown.html", "provenance.html"):
        assert any(n.endswith("/" + name) for n in names), (name, names)
    page = zipfile.ZipFile(work / "results" / "report.zip").read("report/report.html").decode()
    assert "<script src=\"http" not in page and "<link href=\"http" not in page  # nothing fetched: works offline
    assert "Provenance" in page  # the manifest's category


def test_the_manifest_covers_every_table_run_and_checkpoint_with_the_configs_hash(finished_run):
    from posbias.config import load_config
    from posbias.provenance.hashing import config_hash
    from posbias.staging.checksums import sha256_file

    work = finished_run
    manifest = json.loads((work / "results/provenance.json").read_text())
    assert manifest["config_hash"] == config_hash(load_config(str(work / "config.yaml")).data)
    assert manifest["environment"]["code"]["commit"] and manifest["environment"]["lock"]["sha256"]
    files = {f["path"]: f for f in manifest["files"]}
    for made in ("results/table1.tex", "results/table1.csv", "results/figures/sweep.png", "results/litm/qa_3.csv",
                 "results/runs/dev/maxp/seed1.run", "results/models/maxp/seed1/ranker.json"):
        assert files[made]["sha256"] == sha256_file(work / made), made
    checkpoints = {c["path"]: c["provenance"] for c in manifest["checkpoints"]}
    assert {f"results/models/{m}/seed{s}" for m in ("firstp", "maxp", "parade_attn") for s in (1, 2)} <= set(checkpoints)
    assert all(p and p["device"] == "cpu" and p["precision"]["autocast"] for p in checkpoints.values())
    assert {r["path"] for r in manifest["runs"]} >= {"results/runs/dev/maxp/seed1.run"}
    assert manifest["weights"][0]["kind"] == "local" and manifest["weights"][0]["sha256"]  # the tiny BERT


def test_changing_the_generator_reruns_everything_downstream(finished_run, tmp_path):
    work = finished_run
    changed = yaml.safe_load((work / "config.yaml").read_text())
    changed["generator"]["settings"]["seed"] += 1
    other = tmp_path / "generator.yaml"
    other.write_text(yaml.safe_dump(changed, sort_keys=False))
    # targets first: --configfile takes every argument that follows it
    jobs = scheduled_jobs(run_snakemake(work, "-n", *TARGETS, "--configfile", str(other)).stdout)
    rules = [rule for rule, _ in jobs]
    assert "generate_synthetic" in rules and rules.count("train") == 3 * 2


def test_lint_is_clean():
    result = subprocess.run([*SNAKEMAKE, "-s", str(ROOT / "Snakefile"), "-d", str(ROOT), "--lint"],
                            capture_output=True, text=True, timeout=120)
    assert result.returncode == 0, result.stdout + result.stderr


def test_a_debiased_model_trains_on_a_debiased_copy_and_reads_the_original_documents(tmp_path):
    """The graph of a de-biased twin: one debias_documents job, its own token store for training, the original
    collection's store for reranking, and Table 2 pairing it with its original."""
    config = yaml.safe_load((ROOT / "config" / "test" / "tiny.yaml").read_text())
    config["models"]["maxp_debiased"] = {"label": "MaxP (de-biased)", "debias": {"original": "maxp"}}
    config["tables"]["table2"] = {"models": ["maxp_debiased"],
                                  "columns": [{"queryset": "dev", "metric": "RR@10"},
                                              {"queryset": "farrelevant", "metric": "RR"}]}
    write_config(tmp_path, config)
    output = run_snakemake(tmp_path, "-n", "-p", "results/table2.tex").stdout
    jobs = scheduled_jobs(output)
    assert [w for r, w in jobs if r == "debias_documents"] == ["collection=synthetic-debiased-k1-seed0"]
    trained = {w for r, w in jobs if r == "train"}  # the table reads every system's per-query values
    assert trained >= {f"model={m}, seed={s}" for m in ("maxp", "maxp_debiased") for s in (1, 2)}
    stores = {w.split(",")[0] for r, w in jobs if r == "tokenize_documents"}
    # the sweep's too: a checkpoint's job reranks every query set (rerank.jobs: per_checkpoint)
    assert stores == {"collection=synthetic", "collection=synthetic-debiased-k1-seed0", "collection=farrelevant",
                      "collection=sweep"}
    train_inputs = re.findall(r"rule train:\n\s+input: ([^\n]+)\n\s+output: results/models/(\w+)/seed1", output)
    reads_copy = {model: "synthetic-debiased-k1-seed0/" in inputs for inputs, model in train_inputs}
    assert reads_copy == {"firstp": False, "maxp": False, "parade_attn": False, "maxp_debiased": True}
