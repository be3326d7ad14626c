"""The probes stage's steps on a synthetic Re-DocRED file: the pairs files, scoring with BM25 (no weights), the
paired tests and their correction families, and the report's files."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from posbias.errors import InputError
from posbias.docred.synthetic import write_synthetic_redocred
from posbias.probes import steps as probes
from posbias.probes.jobs import ReportJob
from posbias.probes.paths import report_paths

SECTION = {"n": 8, "seeds": {"default": 0, "literal": 1}, "sweep_positions": 4, "variants": {},
           "poison": {"source": "swap", "seed": 0},
           "heatmap": {"head_count_bins": [0, 1, 4, 5, 6], "length_bins": [90, 120, 140, 160, 190]}}


@pytest.fixture(scope="module")
def built(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("probes")
    write_synthetic_redocred(root / "test_revised.json", seed=0, n_documents=40)
    section = {**SECTION, "redocred": {"files": [{"path": str(root / "test_revised.json"), "split": "test"}]}}
    probes.build(section, {p: str(root / f"{p}.jsonl") for p in probes.probe_names()}, str(root / "heatmap.jsonl"),
                 str(root / "query_table.json"), str(root / "poison_replacements.jsonl"))
    return root


def test_every_probe_gets_n_pairs_and_the_sweep_n_per_position(built):
    for probe in probes.probe_names():
        records = probes.read_jsonl(str(built / f"{probe}.jsonl"))
        per_query = {"position_sweep": 4, "literal": 5}.get(probe, 1)
        assert len(records) == 8 * per_query, probe
        assert {r["probe"] for r in records} == {probe}
    counts = json.loads((built / "query_table.json").read_text())
    assert counts["query_table"]["kept"] == 95 and counts["candidates"]["literal"] == 10 and counts["n"] == 8


def test_the_position_pairs_hold_the_same_sentences(built):
    for record in probes.read_jsonl(str(built / "position_first_last.jsonl")):
        assert sorted(record["document_1"].split()) == sorted(record["document_2"].split())
        assert record["document_1"] != record["document_2"]


def test_the_poison_pairs_are_the_foils_with_a_poisoned_evidence_sentence_appended(built):
    foil = {r["qid"]: r for r in probes.read_jsonl(str(built / "foil.jsonl"))}
    replacements = {r["qid"]: r["replacement"] for r in probes.read_jsonl(str(built / "poison_replacements.jsonl"))}
    assert set(replacements) == set(foil)
    for record in probes.read_jsonl(str(built / "poison.jsonl")):
        assert record["document_1"] == foil[record["qid"]]["document_1"]  # the evidence document
        assert record["document_2"].startswith(foil[record["qid"]]["document_2"] + " ")
        assert replacements[record["qid"]] in record["document_2"][len(foil[record["qid"]]["document_2"]):]


def test_the_heatmap_lists_every_query_with_its_document(built):
    records = probes.read_jsonl(str(built / "heatmap.jsonl"))
    assert len(records) == 95
    assert all(r["head_count"] >= 1 and r["doc_words"] > len(r["document"].split()) for r in records)  # + title


def test_sides_give_one_query_or_one_per_side():
    pair = {"probe": "brevity", "qid": "q", "query": "Q", "document_1": "a", "document_2": "b"}
    assert probes.sides(pair) == (("Q", "a"), ("Q", "b"))
    literal = {"probe": "literal", "qid": "q", "query_1": "Q1", "document_1": "a", "query_2": "Q2", "document_2": "b"}
    assert probes.sides(literal) == (("Q1", "a"), ("Q2", "b"))
    with pytest.raises(InputError, match="no query"):
        probes.sides({"probe": "brevity", "qid": "q", "document_1": "a", "document_2": "b"})


def test_a_missing_redocred_file_is_named(tmp_path):
    with pytest.raises(InputError, match="probes.redocred: .*nowhere.json does not exist"):
        probes.read_corpus([{"path": str(tmp_path / "nowhere.json"), "split": "test"}])


@pytest.fixture(scope="module")
def scored(built) -> dict[str, str]:
    out = built / "bm25.parquet"
    pairs = {p: str(built / f"{p}.jsonl") for p in probes.probe_names()}
    probes.score({"kind": "bm25", "k1": 0.9, "b": 0.4}, None, pairs, str(built / "heatmap.jsonl"), str(out),
                 str(built / "bm25.heatmap.parquet"))
    return {"bm25": str(out)}


def test_statistics_match_scipy_and_are_corrected_in_their_families(scored):
    summary = probes.statistics(scored, "bonferroni")
    scores = pd.read_parquet(scored["bm25"])
    brevity = scores[scores["probe"] == "brevity"]
    t, p = stats.ttest_rel(brevity["score_1"], brevity["score_2"])
    row = summary[summary["probe"] == "brevity"].iloc[0]
    assert row["t"] == pytest.approx(t) and row["p"] == pytest.approx(p)
    table = summary[summary["family"] == probes.TABLE]
    assert set(zip(table["probe"], table["condition"])) == {
        ("answer_importance", ""), ("position_first_last", ""), ("literal", "SS-SL"), ("brevity", ""),
        ("repetition", ""), ("foil", ""), ("poison", "")}
    defined = table[table["p"].notna()]
    np.testing.assert_allclose(defined["p_adjusted"], np.minimum(defined["p"] * len(defined), 1.0))
    assert len(summary[summary["family"] == probes.OTHER]) == 4  # the other literal conditions
    assert len(summary[summary["family"] == "position_sweep bm25"]) == 4  # the scorer's sweep positions, as in
    # the sensitivity table (`sweep_sensitivity`: one family per scorer's curve)
    # BM25 cannot see order: every position pair is tied
    position = summary[summary["probe"].str.startswith("position")]
    assert (position["ties"] == position["n"]).all()


def test_report_writes_the_table_and_figures(built, scored, tmp_path):
    tables, figures = report_paths(str(tmp_path), probes.probe_names())
    probes.report(ReportJob(scored, {"bm25": str(built / "bm25.heatmap.parquet")}, str(built / "query_table.json"),
                            {"bm25": "BM25"}, "holm", 0.05, SECTION["heatmap"], tables, figures))
    assert set(figures) == {"sweep", "heatmap", "summary"}
    for path in [*tables.values(), *(p for paths in figures.values() for p in paths)]:
        assert Path(path).stat().st_size > 0, path
    assert "| BM25 |" in Path(tables["md"]).read_text()
    csv = pd.read_csv(tables["csv"])
    assert len(csv) == 7 + 8 and "truncated_pairs" in csv.columns
    assert "Poison t" in Path(tables["md"]).read_text()


def test_report_paths_leave_out_the_sweep_figure_when_the_sweep_does_not_run(tmp_path):
    _, figures = report_paths(str(tmp_path), ["brevity"])
    assert set(figures) == {"heatmap", "summary"}


def test_a_poison_without_usable_replacements_is_an_error_naming_the_key(built, tmp_path):
    (tmp_path / "given.jsonl").write_text("")  # no replacement for any query
    section = {**SECTION, "poison": {"source": "file", "path": str(tmp_path / "given.jsonl")},
               "redocred": {"files": [{"path": str(built / "test_revised.json"), "split": "test"}]}}
    with pytest.raises(InputError, match=r"probes.poison: only 0 of 8 replacements from source 'file' are usable"):
        probes.build(section, {"poison": str(tmp_path / "poison.jsonl")}, str(tmp_path / "heatmap.jsonl"),
                     str(tmp_path / "query_table.json"), str(tmp_path / "replacements.jsonl"))
    assert not (tmp_path / "poison.jsonl").exists() and not (tmp_path / "replacements.jsonl").exists()


def test_a_sweep_position_is_a_drop_in_the_probe_summary_exactly_when_the_sensitivity_table_says_so(tmp_path):
    """The sweep's tests (k against k = 1) in one family per scorer in both outputs: with two scorers and three
    places, the adjusted p-values agree with the sensitivity table's count of significant drops for each scorer."""
    from posbias.probes.stats import sweep_sensitivity

    rng = np.random.default_rng(3)
    scores, frames = {}, {}
    for scorer, drops in (("falls", (0.0, 0.05, 0.4)), ("steady", (0.0, 0.002, 0.004))):
        rows = []
        for q in range(12):
            first = 1.0 + rng.normal(0, 0.05)
            for k, drop in enumerate(drops, start=1):
                rows.append({"probe": "position_sweep", "qid": f"q{q}", "condition": str(k),
                             "score_1": first - drop + rng.normal(0, 0.03) * (k > 1), "score_2": first,
                             "truncated_1": False, "truncated_2": False})
        frames[scorer] = pd.DataFrame(rows)
        scores[scorer] = str(tmp_path / f"{scorer}.parquet")
        frames[scorer].to_parquet(scores[scorer])
    summary = probes.statistics(scores, "holm")
    suite = sweep_sensitivity(frames, "holm", 0.05).set_index("scorer")
    for scorer in scores:
        own = summary[(summary["scorer"] == scorer) & summary["p"].notna()]
        assert set(own["family"]) == {f"position_sweep {scorer}"}
        assert int(((own["p_adjusted"] < 0.05) & (own["mean_difference"] < 0)).sum()) == \
            suite.loc[scorer, "significant_drops"]
