"""The synthetic Re-DocRED world: the released layout, determinism, unique facts, and candidates for every probe
(the filters of spec shared/specs/probes.md §2, written out here)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

import posbias.docred
from posbias.errors import InputError
from posbias.docred.documents import Document, Label, read_redocred
from posbias.docred.synthetic import RELATION_IDS, SHAPE_SHARES, synthetic_redocred, write_synthetic_redocred

N_DOCUMENTS = 60
SEED = 3


@pytest.fixture(scope="module")
def world_file(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("redocred") / "synthetic_revised.json"
    write_synthetic_redocred(path, seed=SEED, n_documents=N_DOCUMENTS)
    return path


@pytest.fixture(scope="module")
def documents(world_file) -> list[Document]:
    return read_redocred(world_file, "test")


@pytest.fixture(scope="module", params=[N_DOCUMENTS, 500])
def worlds(request, world_file, tmp_path_factory) -> list[Document]:
    """The test world, and a larger one (more names, so more chances of a collision)."""
    if request.param == N_DOCUMENTS:
        return read_redocred(world_file, "test")
    path = tmp_path_factory.mktemp("large") / "synthetic_revised.json"
    write_synthetic_redocred(path, seed=SEED, n_documents=request.param)
    return read_redocred(path, "test")


def at_least(shape: str) -> int:
    return N_DOCUMENTS * SHAPE_SHARES[shape] // 100


# --- the helpers of spec §2, as the authors' code defines them ----------------------------------------------------

def head_names(doc: Document, label: Label) -> set[str]:
    return {m.name for m in doc.entities[label.head]}


def not_repeated_label(doc: Document, label: Label) -> bool:
    return sum((other.head, other.tail) == (label.head, label.tail) for other in doc.labels) == 1


def has_similar_label_to_tail(doc: Document, sent_id: int, label: Label) -> bool:
    if any(sent_id in other.evidence and (other.relation == label.relation or label.tail in (other.tail, other.head))
           for other in doc.labels):
        return True
    return doc.entities[label.tail][0].name in doc.sentence(sent_id)


def single_evidence(doc: Document, label: Label) -> bool:
    """len(evidence_sent_ids) == 1 and exactly one head mention in the evidence sentence."""
    head_in_evidence = [m for m in doc.entities[label.head] if m.sent_id in label.evidence]
    return len(label.evidence) == 1 and len(head_in_evidence) == 1


def position_candidate(doc: Document, label: Label) -> bool:
    """§2.2 step 1 with the sweep's `len(sents) > 8` (§2.3); brevity's filter (§2.5 steps 1-2) is the same."""
    return (single_evidence(doc, label) and len(doc.entities[label.head]) == 1 and len(head_names(doc, label)) == 1
            and not_repeated_label(doc, label) and len(doc.sents) > 8)


def head_without_tail_sentence(doc: Document, label: Label) -> int | None:
    """§2.1 step 2: the first head mention (vertexSet order) in a usable sentence, or None."""
    head = doc.entities[label.head]
    repeated_in = {m.sent_id for m in head if sum(o.sent_id == m.sent_id for o in head) >= 2}
    for mention in head:
        if (mention.sent_id not in label.evidence and mention.sent_id not in repeated_in
                and not has_similar_label_to_tail(doc, mention.sent_id, label)):
            return mention.sent_id
    return None


def answer_importance_candidate(doc: Document, label: Label) -> bool:
    """§2.1 steps 1, 2 and 4 (also the foil's candidates, §2.7)."""
    head, tail = doc.entities[label.head], doc.entities[label.tail]
    if not (single_evidence(doc, label) and len(head) >= 2 and len(head_names(doc, label)) == 1
            and len({m.name for m in tail}) == 1):
        return False
    if head_without_tail_sentence(doc, label) is None:
        return False
    rest_pool = [i for i in range(len(doc.sents)) if not has_similar_label_to_tail(doc, i, label)]
    return not any(tail[0].name in doc.sentence(i) for i in rest_pool)


def repetition_candidate(doc: Document, label: Label) -> bool:
    """§2.6, the filter as coded, plus two distinct head-only sentences (the paper's definition)."""
    if not (single_evidence(doc, label) and not_repeated_label(doc, label)):
        return False
    head_sent_ids = sorted(m.sent_id for m in doc.entities[label.head])
    tail_sent_ids = sorted(m.sent_id for m in doc.entities[label.tail])
    head_wo_tail = [i for i in head_sent_ids if i not in tail_sent_ids]
    no_head_no_tail = [i for i in range(len(doc.sents)) if i not in head_sent_ids and i not in tail_sent_ids]
    return len(head_wo_tail) >= 2 and len(set(head_wo_tail)) >= 2 and len(no_head_no_tail) >= 2


def literal_candidate(doc: Document, label: Label) -> bool:
    """§2.4: more than one head name and one evidence sentence."""
    return len(head_names(doc, label)) > 1 and len(label.evidence) == 1


def titles(documents: list[Document], candidate) -> set[str]:
    return {doc.title for doc in documents for label in doc.labels if candidate(doc, label)}


# --- the file ---------------------------------------------------------------------------------------------------

def test_round_trip_through_the_reader(world_file, documents):
    raw = json.loads(world_file.read_text(encoding="utf-8"))
    assert raw == synthetic_redocred(SEED, N_DOCUMENTS)
    assert len(documents) == N_DOCUMENTS and [d.doc_id for d in documents[:2]] == ["test0", "test1"]
    for record, doc in zip(raw, documents):
        assert set(record) == {"title", "sents", "vertexSet", "labels"}
        assert doc.title == record["title"] and [list(s) for s in doc.sents] == record["sents"]
        assert [(lab.relation, lab.head, lab.tail, list(lab.evidence)) for lab in doc.labels] == \
            [(lab["r"], lab["h"], lab["t"], lab["evidence"]) for lab in record["labels"]]
        starts = [sum(len(s) for s in record["sents"][:i]) for i in range(len(record["sents"]))]
        for e, entity in enumerate(record["vertexSet"]):
            for m, mention in enumerate(entity):
                assert set(mention) == {"name", "pos", "sent_id", "type", "global_pos", "index"}
                first_token = starts[mention["sent_id"]] + mention["pos"][0]
                assert mention["global_pos"] == [first_token, first_token] and mention["index"] == f"{e}_{m}"


def test_every_span_spells_its_name_and_every_evidence_names_head_and_tail(documents):
    for doc in documents:
        assert 9 <= len(doc.sents) <= 12
        for entity in doc.entities:
            assert len({m.type for m in entity}) == 1
            for mention in entity:
                assert " ".join(doc.sents[mention.sent_id][mention.pos[0]:mention.pos[1]]) == mention.name
        assert len(doc.labels) >= 2 and len({label.head for label in doc.labels}) == 1
        assert doc.title == max(head_names(doc, doc.labels[0]), key=len)
        for label in doc.labels:
            assert len(label.evidence) == 1
            (sent_id,) = label.evidence
            assert any(m.sent_id == sent_id for m in doc.entities[label.head])
            assert any(m.sent_id == sent_id for m in doc.entities[label.tail])


def test_tails_only_in_their_evidence_and_neutral_sentences_everywhere(documents):
    for doc in documents:
        for label in doc.labels:
            assert {m.sent_id for m in doc.entities[label.tail]} == set(label.evidence)
            tail_name = doc.entities[label.tail][0].name
            assert [i for i, text in enumerate(doc.sentences) if tail_name in text] == list(label.evidence)
        mentioned = {m.sent_id for entity in doc.entities for m in entity}
        assert len(doc.sents) - len(mentioned) >= 3  # sentences with neither head nor any tail


def test_same_seed_same_bytes_other_seed_differs(tmp_path):
    random.seed(0)  # the global generator's state must not matter
    write_synthetic_redocred(tmp_path / "a.json", seed=11, n_documents=12)
    random.seed(1)
    write_synthetic_redocred(tmp_path / "b.json", seed=11, n_documents=12)
    write_synthetic_redocred(tmp_path / "c.json", seed=12, n_documents=12)
    assert (tmp_path / "a.json").read_bytes() == (tmp_path / "b.json").read_bytes()
    assert (tmp_path / "a.json").read_bytes() != (tmp_path / "c.json").read_bytes()
    assert sorted(p.name for p in tmp_path.iterdir()) == ["a.json", "b.json", "c.json"]  # no temporary file left


def test_every_probe_finds_candidates_in_at_least_the_documented_share(documents):
    assert len(titles(documents, position_candidate)) >= at_least("single")
    assert len(titles(documents, answer_importance_candidate)) >= at_least("repeated")
    assert len(titles(documents, repetition_candidate)) >= at_least("repeated") + at_least("variants")
    assert len(titles(documents, literal_candidate)) >= at_least("variants")
    # the head mentioned once (position) and the head repeated (answer importance) are different documents
    assert not titles(documents, position_candidate) & titles(documents, answer_importance_candidate)


def test_the_foil_finds_an_unrelated_document_for_each_candidate(documents):
    """§2.7: another document with > 3 sentences and neither the query's relation nor its tail type in its first
    two sentences."""
    def beginning(doc: Document) -> tuple[set[str], set[str]]:
        relations = {label.relation for label in doc.labels if min(label.evidence) in (0, 1)}
        types = {entity[0].type for entity in doc.entities if entity[0].sent_id in (0, 1)}
        return relations, types

    candidates = [(doc, label) for doc in documents for label in doc.labels if answer_importance_candidate(doc, label)]
    assert candidates
    for doc, label in candidates:
        tail_type = doc.entities[label.tail][0].type
        assert any(other.title != doc.title and len(other.sents) > 3 and label.relation not in beginning(other)[0]
                   and tail_type not in beginning(other)[1] for other in documents)


def test_shapes_in_small_worlds_follow_the_shares(tmp_path):
    for n_documents in (1, 7, 20):
        write_synthetic_redocred(tmp_path / "small.json", seed=5, n_documents=n_documents)
        docs = read_redocred(tmp_path / "small.json", "test")
        single = sum(len(doc.entities[doc.labels[0].head]) == 1 for doc in docs)
        variants = sum(len(head_names(doc, doc.labels[0])) > 1 for doc in docs)
        repeated = len(docs) - single - variants
        assert len(docs) == n_documents
        for shape, count in (("single", single), ("repeated", repeated), ("variants", variants)):
            assert count >= n_documents * SHAPE_SHARES[shape] // 100, (n_documents, shape)
    assert sum(SHAPE_SHARES.values()) == 100


# --- unique facts -------------------------------------------------------------------------------------------------

def test_no_fact_is_stated_by_two_documents(worlds):
    """The duplicate filter of §1.2 step 4, over every name variant, keeps every label."""
    head_relation: dict[tuple[str, str], set[str]] = {}
    head_tail: dict[tuple[str, str], set[str]] = {}
    for doc in worlds:
        for label in doc.labels:
            tails = {m.name for m in doc.entities[label.tail]}
            for head in head_names(doc, label):
                head_relation.setdefault((head, label.relation), set()).add(doc.title)
                for tail in tails:
                    head_tail.setdefault((head, tail), set()).add(doc.title)
                    head_tail.setdefault((tail, head), set()).add(doc.title)
    for doc in worlds:
        for label in doc.labels:
            tails = {m.name for m in doc.entities[label.tail]}
            elsewhere = set().union(*(head_relation[(h, label.relation)] for h in head_names(doc, label)),
                                    *(head_tail[(h, t)] for h in head_names(doc, label) for t in tails))
            assert elsewhere == {doc.title}, (doc.title, label)


def test_names_are_unique_across_documents(worlds):
    owner: dict[str, str] = {}
    for doc in worlds:
        for entity in doc.entities:
            if entity[0].type == "TIME":  # years may repeat; they are never heads
                continue
            for name in {m.name for m in entity}:
                assert owner.setdefault(name, doc.title) == doc.title, name
    assert len({doc.title for doc in worlds}) == len(worlds)


# --- relations ----------------------------------------------------------------------------------------------------

def test_relations_come_from_a_fixed_set_with_templates(documents):
    templates = Path(posbias.docred.__file__).with_name("templates.tsv").read_text(encoding="utf-8")
    with_template = {line.split("\t")[0] for line in templates.splitlines() if line.strip()}
    assert set(RELATION_IDS) <= with_template and not {"P150", "P710"} & set(RELATION_IDS)
    used = {label.relation for doc in documents for label in doc.labels}
    assert used <= set(RELATION_IDS) and len(used) >= 6
    # one pair of entity types per relation
    types = {(label.relation, doc.entities[label.head][0].type, doc.entities[label.tail][0].type)
             for doc in documents for label in doc.labels}
    assert len(types) == len(used)


# --- bad input ----------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("n_documents", [0, -3])
def test_too_few_documents_is_an_input_error(tmp_path, n_documents):
    with pytest.raises(InputError, match="n_documents"):
        synthetic_redocred(1, n_documents)
    with pytest.raises(InputError, match="n_documents"):
        write_synthetic_redocred(tmp_path / "x.json", 1, n_documents)
    assert not list(tmp_path.iterdir())
