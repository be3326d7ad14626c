import logging

import numpy as np
import pytest

from posbias.evaluation.metrics import per_query, trec_eval_order
from posbias.io import read_run, write_queries, write_run
from posbias.retrieval.steps import import_run


def test_a_given_run_is_cut_to_depth_by_score(tmp_path):
    write_queries(tmp_path / "q.tsv", {"q1": "a", "q2": "b"})
    write_run(tmp_path / "given.run", {"q1": {"d1": 0.1, "d2": 0.9, "d3": 0.5}}, tag="elsewhere")
    import_run(str(tmp_path / "given.run"), str(tmp_path / "q.tsv"), str(tmp_path / "top2.run"), depth=2)
    assert read_run(tmp_path / "top2.run") == {"q1": {"d2": 0.9, "d3": 0.5}}


def ranking(run: dict, qid: str) -> list[str]:
    """A query's documents in the order evaluation sees them (trec_eval: score, then doc id descending)."""
    ordered = trec_eval_order(run)[qid]
    return sorted(ordered, key=ordered.get, reverse=True)


def test_a_listwise_run_keeps_its_given_order_through_the_depth_cut_and_evaluation(tmp_path, caplog):
    write_queries(tmp_path / "q.tsv", {"q1": "a", "q2": "b"})
    # q1: a listwise reranker's run, every score 0, the order only in the rank column (not in doc id order).
    # q2: scores 2 > 1 = 1 = 1: the tie among d6, d7, d8 follows the ranks; q3-like doc ids sort otherwise.
    (tmp_path / "given.run").write_text(
        "q1 Q0 d3 1 0 listwise\nq1 Q0 d1 2 0 listwise\nq1 Q0 d4 3 0 listwise\nq1 Q0 d2 4 0 listwise\n"
        "q2 Q0 d8 4 1.0 listwise\nq2 Q0 d5 1 2.0 listwise\nq2 Q0 d6 2 1.0 listwise\nq2 Q0 d7 3 1.0 listwise\n")
    with caplog.at_level(logging.WARNING):
        import_run(str(tmp_path / "given.run"), str(tmp_path / "q.tsv"), str(tmp_path / "top3.run"), depth=3)
    assert "2 of 2 queries have tied scores" in caplog.text
    imported = read_run(tmp_path / "top3.run")
    assert ranking(imported, "q1") == ["d3", "d1", "d4"]  # not d4, d3, d2 (doc id descending)
    assert ranking(imported, "q2") == ["d5", "d6", "d7"]
    assert [line.split()[2] for line in (tmp_path / "top3.run").read_text().splitlines()] == \
        ["d3", "d1", "d4", "d5", "d6", "d7"]  # the rank column agrees
    qrels = {"q1": {"d1": 1}, "q2": {"d6": 1}}
    frame = per_query(qrels, imported, ["RR@3"]).set_index("qid")["value"]
    assert frame.to_dict() == {"q1": 0.5, "q2": 0.5}  # in doc id order, q1's d1 would not even be in the top 3


def test_equal_ranks_and_scores_fall_back_to_doc_id_descending(tmp_path):
    write_queries(tmp_path / "q.tsv", {"q1": "a"})
    (tmp_path / "given.run").write_text("q1 Q0 a 1 0.5 t\nq1 Q0 c 1 0.5 t\nq1 Q0 b 1 0.5 t\n")
    import_run(str(tmp_path / "given.run"), str(tmp_path / "q.tsv"), str(tmp_path / "top2.run"), depth=2)
    assert ranking(read_run(tmp_path / "top2.run"), "q1") == ["c", "b"]


def test_a_run_without_ties_keeps_its_scores_exactly(tmp_path, caplog):
    write_queries(tmp_path / "q.tsv", {"q1": "a"})
    scores = {"d1": float(np.float32(1.0000001)), "d2": float(np.float32(1.0000002)), "d3": 0.1 + 0.2, "d4": -7.0}
    write_run(tmp_path / "given.run", {"q1": scores}, tag="elsewhere")
    with caplog.at_level(logging.WARNING):
        import_run(str(tmp_path / "given.run"), str(tmp_path / "q.tsv"), str(tmp_path / "top3.run"), depth=3)
    assert read_run(tmp_path / "top3.run") == {"q1": {d: scores[d] for d in ("d2", "d1", "d3")}}
    assert "tied scores" not in caplog.text


def test_a_given_run_for_other_queries_is_refused(tmp_path):
    write_queries(tmp_path / "q.tsv", {"q1": "a"})
    write_run(tmp_path / "given.run", {"q9": {"d1": 1.0}}, tag="elsewhere")
    with pytest.raises(ValueError, match=r"given.run: none of its 1 queries is in .*q.tsv"):
        import_run(str(tmp_path / "given.run"), str(tmp_path / "q.tsv"), str(tmp_path / "top.run"), depth=5)


def test_a_given_run_for_more_queries_keeps_the_query_sets_with_a_warning(tmp_path, caplog):
    # the authors' TREC DL 2021 run covers all 477 topics; the judged query set holds 57 of them
    write_queries(tmp_path / "q.tsv", {"q1": "a"})
    write_run(tmp_path / "given.run", {"q1": {"d1": 2.0, "d2": 1.0}, "q9": {"d1": 1.0}}, tag="elsewhere")
    with caplog.at_level(logging.WARNING):
        import_run(str(tmp_path / "given.run"), str(tmp_path / "q.tsv"), str(tmp_path / "top.run"), depth=5)
    assert read_run(tmp_path / "top.run") == {"q1": {"d1": 2.0, "d2": 1.0}}
    assert "1 queries are not in" in caplog.text and "left out" in caplog.text


def test_training_names_the_queries_file_when_judged_queries_lack_text(tmp_path, tiny_backbone):
    from posbias.io import write_documents
    from posbias.training.jobs import Recipe, TrainingSet
    from posbias.training.steps import fit

    write_queries(tmp_path / "q.tsv", {"q1": "a"})
    write_documents(tmp_path / "d.jsonl", [{"id": "d1", "text": "a"}])
    write_run(tmp_path / "c.run", {"q1": {"d1": 1.0}}, tag="t")
    model = {"ranker": "firstp", "lr": 1e-4, "head_lr": 1e-3,
             "args": {"backbone": tiny_backbone, "max_query_tokens": 4, "chunk_tokens": 8, "stride": 8,
                      "max_doc_tokens": 8}}
    with pytest.raises(ValueError, match=r"1 judged training queries are not in .*q.tsv, e.g. \['q2'\]"):
        fit(Recipe(model, {}, 1), TrainingSet(str(tmp_path / "tokens"), str(tmp_path / "q.tsv"), "qrels",
                                              str(tmp_path / "c.run")), {"q2": {"d1": 1}}, threads=1)
