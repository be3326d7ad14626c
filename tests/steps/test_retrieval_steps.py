import pytest

from posbias.io import read_run, write_queries, write_run
from posbias.steps.retrieval import import_run


def test_a_given_run_is_cut_to_depth_by_score(tmp_path):
    write_queries(tmp_path / "q.tsv", {"q1": "a", "q2": "b"})
    write_run(tmp_path / "given.run", {"q1": {"d1": 0.1, "d2": 0.9, "d3": 0.5}}, tag="elsewhere")
    import_run(str(tmp_path / "given.run"), str(tmp_path / "q.tsv"), str(tmp_path / "top2.run"), depth=2)
    assert read_run(tmp_path / "top2.run") == {"q1": {"d2": 0.9, "d3": 0.5}}


def test_a_given_run_for_other_queries_is_refused(tmp_path):
    write_queries(tmp_path / "q.tsv", {"q1": "a"})
    write_run(tmp_path / "given.run", {"q9": {"d1": 1.0}}, tag="elsewhere")
    with pytest.raises(ValueError, match=r"given.run: 1 queries are not in .*q.tsv"):
        import_run(str(tmp_path / "given.run"), str(tmp_path / "q.tsv"), str(tmp_path / "top.run"), depth=5)


def test_training_names_the_queries_file_when_judged_queries_lack_text(tmp_path, tiny_backbone):
    from posbias.io import write_documents
    from posbias.steps.training import fit

    write_queries(tmp_path / "q.tsv", {"q1": "a"})
    write_documents(tmp_path / "d.jsonl", [{"id": "d1", "text": "a"}])
    write_run(tmp_path / "c.run", {"q1": {"d1": 1.0}}, tag="t")
    model = {"ranker": "firstp", "lr": 1e-4, "head_lr": 1e-3,
             "args": {"backbone": tiny_backbone, "max_query_tokens": 4, "chunk_tokens": 8, "stride": 8,
                      "max_doc_tokens": 8}}
    with pytest.raises(KeyError, match=r"1 judged training queries are not in .*q.tsv, e.g. \['q2'\]"):
        fit(model, {}, 1, str(tmp_path / "d.jsonl"), str(tmp_path / "q.tsv"), {"q2": {"d1": 1}},
            str(tmp_path / "c.run"), threads=1)
