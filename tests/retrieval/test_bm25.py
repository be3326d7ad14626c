"""Lucene BM25 through pyserini, on a small collection written in the real formats."""

import os
import subprocess
import sys

import pytest

from posbias.errors import InputError
from posbias.io import read_run, write_documents, write_queries
from posbias.retrieval.steps import index, random_shuffle, retrieve


@pytest.fixture(scope="module")
def collection(tmp_path_factory):
    root = tmp_path_factory.mktemp("bm25")
    docs = [{"id": "d1", "text": "the capital of zorvia is mendal"},
            {"id": "d2", "text": "zorvia zorvia zorvia has green hills"},
            {"id": "d3", "text": "the bakery opens early on sundays"},
            {"id": "d4", "text": "mount kel is the tallest mountain of brel"}]
    write_documents(root / "docs.jsonl", docs)
    write_queries(root / "queries.tsv", {"q1": "capital of zorvia", "q2": "tallest mountain brel",
                                         "q3": "nothing matches xyzzy"})
    index(str(root / "docs.jsonl"), str(root / "index"), threads=1)
    return root


def test_bm25_ranks_lexical_matches_and_respects_depth(collection):
    run_path = collection / "bm25.run"
    retrieve(str(collection / "index"), str(collection / "queries.tsv"), str(run_path), k=2, k1=0.9, b=0.4,
             threads=1)
    run = read_run(run_path)
    assert list(run["q1"])[0] in {"d1", "d2"} and set(run["q1"]) == {"d1", "d2"}
    assert max(run["q2"], key=run["q2"].get) == "d4"
    assert all(len(scores) <= 2 for scores in run.values())
    assert "q3" not in run  # no match, no lines


def test_a_search_loads_no_neural_library(collection):
    """BM25 jobs start the JVM and nothing else: pyserini's search module would import torch, transformers
    and the OpenAI client on the way (seconds per job)."""
    script = ("import sys; from posbias.retrieval.steps import retrieve; "
              f"retrieve({str(collection / 'index')!r}, {str(collection / 'queries.tsv')!r}, "
              f"{str(collection / 'fresh.run')!r}, k=2, k1=0.9, b=0.4, threads=1); "
              "print(sorted({'torch', 'transformers', 'openai', 'sklearn'} & set(sys.modules)))")
    env = {key: value for key, value in os.environ.items() if key != "OPENAI_API_KEY"}
    result = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=120)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip().splitlines()[-1] == "[]"
    assert read_run(collection / "fresh.run")["q1"]


def test_random_shuffle_keeps_candidates_and_is_seeded(collection):
    candidates = collection / "cand.run"
    candidates.write_text("".join(f"q1 Q0 d{i} {i} {10 - i}.0 bm25\n" for i in range(1, 9)))
    random_shuffle(str(candidates), str(collection / "r1.run"), seed=1)
    random_shuffle(str(candidates), str(collection / "r1b.run"), seed=1)
    random_shuffle(str(candidates), str(collection / "r2.run"), seed=2)
    r1, r1b, r2 = (read_run(collection / n) for n in ("r1.run", "r1b.run", "r2.run"))
    assert set(r1["q1"]) == {f"d{i}" for i in range(1, 9)}
    assert r1 == r1b and r1 != r2


def test_doc2query_expansions_are_indexed_with_their_documents(collection, tmp_path):
    expansions = tmp_path / "d2q.tsv"
    expansions.write_text("d3\twhen does the bakery open pastries\n")
    index(str(collection / "docs.jsonl"), str(tmp_path / "expanded"), threads=2, expansions=str(expansions))
    write_queries(tmp_path / "q.tsv", {"q": "pastries"})
    retrieve(str(tmp_path / "expanded"), str(tmp_path / "q.tsv"), str(tmp_path / "x.run"), k=3, k1=0.9, b=0.4,
             threads=2)
    assert list(read_run(tmp_path / "x.run")["q"]) == ["d3"]  # found only through its expansion
    # the plain index does not know the word
    retrieve(str(collection / "index"), str(tmp_path / "q.tsv"), str(tmp_path / "plain.run"), k=3, k1=0.9, b=0.4,
             threads=1)
    assert read_run(tmp_path / "plain.run") == {}


def test_missing_expansion_file_is_a_clear_error(collection, tmp_path):
    with pytest.raises(InputError, match="nowhere.tsv"):
        index(str(collection / "docs.jsonl"), str(tmp_path / "never"), threads=1,
              expansions=str(tmp_path / "nowhere.tsv"))
    assert not (tmp_path / "never").exists()


def test_an_index_on_a_full_disk_is_one_line_and_leaves_no_index(collection, small_disk):
    """Anserini logs a failed write and raises nothing; the index it leaves has no segments_N file."""
    from posbias.errors import InfrastructureError

    disk = small_disk("16k")
    with pytest.raises(InfrastructureError, match=r"index: Lucene ended without writing its segments_N file"):
        index(str(collection / "docs.jsonl"), str(disk.root / "index"), threads=1)
    assert not (disk.root / "index").exists()
