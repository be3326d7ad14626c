"""The audit's real corpus: the shipped file is the pinned one, and the batteries' files built from it read back
through the batteries' own readers."""

from __future__ import annotations

import hashlib

import numpy as np
import pytest

from posbias.audit.corpus import ORACLE, ORACLE_SHA256, build_corpus, choose, oracle_records
from posbias.reading.matching import has_answer


def overlap_ranker(questions, texts):
    """Word overlap in place of the MiniLM encoder (the real one is tested where it is defined)."""
    return np.array([[len(set(q.lower().split()) & set(t.lower().split())) for t in texts] for q in questions],
                    dtype=float)


def test_the_shipped_file_is_the_pinned_one():
    assert hashlib.sha256(ORACLE.read_bytes()).hexdigest() == ORACLE_SHA256
    records = oracle_records()
    assert len(records) == 2655 and all(r["ctxs"][0]["isgold"] for r in records[:50])


def test_the_pool_holds_no_chosen_answer_and_no_needle():
    records = oracle_records()
    chosen, pool = choose(records, 20, 200, 50)
    answers = [a for i in chosen for a in records[i]["answers"]]
    assert len(chosen) == 20 and len(pool) == 200 and not set(chosen) & set(pool)
    assert not any(has_answer(records[i]["ctxs"][0]["text"], answers) for i in pool)


def test_the_built_files_read_back_through_the_batteries_readers(tmp_path):
    from posbias.audit.haystack import world_from_files
    from posbias.reading.qa_builder import build_position
    from posbias.reading.qa_data import read_qa_records

    paths = build_corpus(tmp_path, n_questions=12, pool_size=100, depth=8, rank=overlap_ranker)
    questions, pool = world_from_files(paths["queries.tsv"], paths["qrels.txt"], paths["passages.jsonl"], 5000)
    assert len(questions) == 12 and len(pool) > 300  # the pool's 100 passages, sentence by sentence
    assert all(len(text.split()) < 80 for text in pool)
    records = read_qa_records(str(paths["qa.jsonl.gz"]), require_gold=True)
    assert len(records) == 12 and all(len(r["ctxs"]) == 8 for r in records)
    built = build_position(records[0], 5, 2)
    assert built["ctxs"][2]["isgold"] and len(built["ctxs"]) == 5


def test_sentences_split_at_full_stops_before_a_capital():
    from posbias.audit.corpus import split_sentences

    assert split_sentences("The first one is here. It has 3.5 parts in all. ok. The end comes right now.") == \
        ["The first one is here.", "It has 3.5 parts in all. ok.", "The end comes right now."]


def test_too_many_questions_is_one_clear_error(tmp_path):
    from posbias.errors import InputError

    with pytest.raises(InputError, match="usable questions, fewer than n_questions 5000"):
        build_corpus(tmp_path, n_questions=5000, rank=overlap_ranker)


def test_a_card_sets_the_same_model_s_curves_on_the_real_corpus_beside_the_embedded_world_s(tmp_path):
    from posbias.audit.jobs import AuditJob
    from posbias.audit.steps import audit, write_reports

    paths = build_corpus(tmp_path / "nq", n_questions=12, pool_size=100, depth=8, rank=overlap_ranker)
    source = {"queries": str(paths["queries.tsv"]), "qrels": str(paths["qrels.txt"]),
              "passages": str(paths["passages.jsonl"])}
    spec, settings = "llm-ranker:mock:oracle", {"sweep": {"n_queries": 6, "n_positions": 4, "doc_tokens": 240}}
    audit(AuditJob(spec, tmp_path / "a", ["sweep"], settings, "oracle", str(tmp_path / "cache"), "off"))
    audit(AuditJob(spec, tmp_path / "a", ["sweep"], {"sweep": {**settings["sweep"], "source": source}}, "oracle_nq",
                   str(tmp_path / "cache"), "off"))
    write_reports(tmp_path / "a")
    card = (tmp_path / "a" / "oracle" / "card.html").read_text()
    assert "The same battery on other data" in card
    assert "<td>oracle_nq</td><td>nq</td><td>6</td>" in card and "<td>embedded synthetic world</td>" in card
    assert "The same battery on other data" in (tmp_path / "a" / "oracle_nq" / "card.html").read_text()
