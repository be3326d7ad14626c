"""The position probes (spec §2.2, §2.3) and the brevity probe (§2.5) on documents in the Re-DocRED format."""

from __future__ import annotations

import json
import pytest

from posbias.errors import InputError
from posbias.probes.brevity import BREVITY, brevity, brevity_candidates
from posbias.docred.position import FIRST_LAST, SWEEP, first_last, first_last_candidates, sweep, sweep_candidates
from posbias.docred.queries import build_query_table
from posbias.docred.documents import read_redocred


def fact_document(index: int, n_sents: int, evidence_at: int, head_mentions: int = 1, second_label: bool = False):
    """Document `index`: filler sentences, and at `evidence_at` "Head<index> was born in Town<index> ." (P19).
    `head_mentions` > 1 adds the head to filler sentences too; `second_label` adds a P20 label on the same pair."""
    head, tail = f"Head{index}", f"Town{index}"
    sents = [["Filler", f"d{index}", f"s{i}", "says", "nothing", "."] for i in range(n_sents)]
    sents[evidence_at] = [head, "was", "born", "in", tail, "."]
    head_entity = [{"name": head, "pos": [0, 1], "sent_id": evidence_at, "type": "PER"}]
    for extra in range(1, head_mentions):
        sent_id = (evidence_at + extra) % n_sents
        sents[sent_id] = [head, "likes", "tea", "."]
        head_entity.append({"name": head, "pos": [0, 1], "sent_id": sent_id, "type": "PER"})
    labels = [{"r": "P19", "h": 0, "t": 1, "evidence": [evidence_at]}]
    if second_label:
        labels.append({"r": "P20", "h": 0, "t": 1, "evidence": [evidence_at]})
    return {"title": f"Doc {index}", "sents": sents,
            "vertexSet": [head_entity, [{"name": tail, "pos": [4, 5], "sent_id": evidence_at, "type": "LOC"}]],
            "labels": labels}


@pytest.fixture()
def queries(tmp_path):
    documents = [fact_document(i, n_sents=10, evidence_at=i % 10) for i in range(12)]
    documents += [
        fact_document(12, n_sents=4, evidence_at=1),  # too short for first-vs-last (needs more than 4)
        fact_document(13, n_sents=6, evidence_at=2),  # first-vs-last and brevity, not the sweep
        fact_document(14, n_sents=10, evidence_at=3, head_mentions=2),  # the head outside the evidence
        fact_document(15, n_sents=10, evidence_at=3, second_label=True),  # two labels on one (head, tail) pair
    ]
    path = tmp_path / "test_revised.json"
    path.write_text(json.dumps(documents), encoding="utf-8")
    return build_query_table(read_redocred(path, "test"))


def titles(rows) -> set[str]:
    return {q.document.title for q in rows}


def test_candidates_follow_each_probes_filter(queries):
    twelve = {f"Doc {i}" for i in range(12)}
    assert titles(first_last_candidates(queries)) == twelve | {"Doc 13"}
    assert titles(sweep_candidates(queries, positions=10)) == twelve
    assert titles(brevity_candidates(queries, seed=0)) == twelve | {"Doc 12", "Doc 13"}


def test_first_last_moves_only_the_evidence_sentence(queries):
    pairs = first_last(queries, n=5, seed=0)
    assert len(pairs) == 5 and {p.probe for p in pairs} == {FIRST_LAST}
    for pair in pairs:
        index = pair.qid.split("-")[0].removeprefix("test")
        evidence = f"Head{index} was born in Town{index} ."
        assert pair.document_1.startswith(evidence) and pair.document_2.endswith(evidence)
        assert sorted(pair.document_1.split()) == sorted(pair.document_2.split())  # the same sentences
        assert pair.query == "Where was Head%s born?" % index


def test_first_last_sample_is_seeded(queries):
    assert first_last(queries, 5, 0) == first_last(queries, 5, 0)
    assert [p.qid for p in first_last(queries, 5, 0)] != [p.qid for p in first_last(queries, 5, 1)]


def test_sweep_puts_the_evidence_at_each_position_and_pairs_it_with_the_first(queries):
    pairs = sweep(queries, n=3, seed=0, positions=10)
    assert len(pairs) == 3 * 10 and {p.probe for p in pairs} == {SWEEP}
    for pair in pairs:
        sentences = [s for s in pair.document_1.split(" . ") if s]
        k = int(pair.condition)
        assert sentences[k - 1].startswith("Head")  # the evidence is the k-th sentence
        assert pair.document_2.startswith("Head") and sorted(pair.document_1.split()) == sorted(
            pair.document_2.split())
    assert all(p.document_1 == p.document_2 for p in pairs if p.condition == "1")


def test_brevity_pairs_the_evidence_with_the_evidence_and_its_document(queries):
    pairs = brevity(queries, n=6, seed=0)
    assert {p.probe for p in pairs} == {BREVITY} and len({p.qid for p in pairs}) == 6
    for pair in pairs:
        assert pair.document_2.startswith(pair.document_1 + " ")
        assert pair.document_1.startswith("Head") and pair.document_1.count(" . ") == 0


def test_more_pairs_than_candidates_is_an_input_error(queries):
    with pytest.raises(InputError, match="probes.n"):
        sweep(queries, n=13, seed=0)


def _table(tmp_path, documents):
    path = tmp_path / "test_revised.json"
    path.write_text(json.dumps(documents), encoding="utf-8")
    return build_query_table(read_redocred(path, "test"))


def test_the_paper_keeps_the_answer_and_the_head_out_of_the_rest(tmp_path):
    """The paper: the other sentences hold "no ... additional evidence". A rest that names the answer (annotated or
    not) or spells the head without an annotation is out under `rest: paper`; the authors' filter kept it."""
    clean = fact_document(0, n_sents=10, evidence_at=2)
    answer_annotated = fact_document(1, n_sents=10, evidence_at=2)
    answer_annotated["sents"][7] = ["Town1", "is", "large", "."]
    answer_annotated["vertexSet"][1].append({"name": "Town1", "pos": [0, 1], "sent_id": 7, "type": "LOC"})
    answer_unannotated = fact_document(2, n_sents=10, evidence_at=2)
    answer_unannotated["sents"][8] = ["They", "left", "town2", "later", "."]  # the answer, in another case
    head_unannotated = fact_document(3, n_sents=10, evidence_at=2)
    head_unannotated["sents"][5] = ["Later", "Head3", "moved", "."]
    queries = _table(tmp_path, [clean, answer_annotated, answer_unannotated, head_unannotated])
    everyone = {f"Doc {i}" for i in range(4)}
    for candidates in (lambda rest: first_last_candidates(queries, rest),
                       lambda rest: sweep_candidates(queries, 10, rest),
                       lambda rest: brevity_candidates(queries, 0, rest)):
        assert titles(candidates("paper")) == {"Doc 0"}
        assert titles(candidates("authors")) == everyone
    assert titles(first_last_candidates(queries)) == {"Doc 0"}  # the paper's definition is the default


def test_an_answer_given_only_as_a_demonym_leaves_the_query_out(tmp_path):
    """"French" for France: the document "with the answer" would not contain it."""
    demonym = fact_document(0, n_sents=10, evidence_at=2)
    demonym["sents"][2] = ["Head0", "is", "a", "French", "singer", "."]
    demonym["vertexSet"][1] = [{"name": "France", "pos": [3, 4], "sent_id": 2, "type": "LOC"}]
    queries = _table(tmp_path, [demonym, fact_document(1, n_sents=10, evidence_at=2)])
    assert titles(brevity_candidates(queries, 0)) == {"Doc 1"}
    assert titles(brevity_candidates(queries, 0, "authors")) == {"Doc 0", "Doc 1"}


def test_every_sweep_position_is_a_distinct_document_under_the_paper(tmp_path):
    """With 9 sentences (8 others) the authors' sweep appends the evidence at k = 9 and k = 10 alike."""
    queries = _table(tmp_path, [fact_document(0, n_sents=9, evidence_at=2), fact_document(1, n_sents=10, evidence_at=2)])
    assert titles(sweep_candidates(queries, 10, "authors")) == {"Doc 0", "Doc 1"}
    assert titles(sweep_candidates(queries, 10)) == {"Doc 1"}
    pairs = sweep(queries, n=1, seed=0, positions=10)
    assert len({p.document_1 for p in pairs}) == 10
