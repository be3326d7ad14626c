import dataclasses
import re

import pytest

from posbias.data.synthetic import GeneratorSettings, generate
from posbias.data.vocabulary import RELATION_BY_NAME

SETTINGS = GeneratorSettings(seed=5, n_entities=60, n_train_queries=60, n_dev_queries=40, n_test_queries=8,
                             n_farrelevant_queries=10, first_window=24, min_doc_tokens=30, max_doc_tokens=72,
                             early_fraction=0.85, literal_fraction=0.5, hard_negatives=2, pool_passages=100)


def whitespace(text):
    return len(text.split())


def test_same_seed_same_collection_other_seed_differs():
    a, b = generate(SETTINGS, whitespace), generate(SETTINGS, whitespace)
    assert [d.text for d in a.documents] == [d.text for d in b.documents]
    assert a.queries == b.queries and a.qrels == b.qrels and a.passages == b.passages
    c = generate(dataclasses.replace(SETTINGS, seed=6), whitespace)
    assert [d.text for d in c.documents] != [d.text for d in a.documents]


def test_structure_of_the_query_sets():
    collection = generate(SETTINGS, whitespace)
    docs = {d.doc_id: d for d in collection.documents}
    for name in ("train", "dev"):
        assert all(len(judged) == 1 for judged in collection.qrels[name].values())
        starts = collection.answer_starts[name].values()
        early = sum(start < SETTINGS.first_window for start in starts) / len(starts)
        assert early >= 0.7  # strong early bias, as in MS MARCO
    for judged in collection.qrels["test"].values():
        assert len(judged) >= 3 and set(judged.values()) == {1, 2, 3}
    # each relevant document holds its query's answering passage, and no other document does
    answered_by = {}
    for doc in collection.documents:
        for p in doc.passages:
            if p.answers:
                answered_by.setdefault((p.entity, p.relation), set()).add(doc.doc_id)
    for name in ("train", "dev"):
        for qid, judged in collection.qrels[name].items():
            (doc_id,) = judged
            query = collection.queries[name][qid]
            keys = [(p.entity, p.relation) for p in docs[doc_id].passages if p.answers and p.entity in query.split()]
            assert any(answered_by[key] == {doc_id} for key in keys), (qid, query)
    assert len(collection.passage_qrels) == SETTINGS.n_farrelevant_queries
    assert len(collection.passages) == SETTINGS.n_farrelevant_queries + SETTINGS.pool_passages


def test_settings_reject_unknown_and_missing_keys():
    section = dataclasses.asdict(SETTINGS)
    section["n_entites"] = section.pop("n_entities")
    with pytest.raises(ValueError, match=r"unknown keys \['n_entites'\], missing keys \['n_entities'\]"):
        GeneratorSettings.from_config(section)


def test_query_relations_and_pool_focus():
    settings = dataclasses.replace(SETTINGS, n_entities=120, query_relations=("definition",),
                                   pool_mention_entities=3)
    collection = generate(settings, whitespace)
    questions = [q for qs in collection.queries.values() for q in qs.values()]
    assert all(q.startswith(("what is", "define")) or q.endswith("meaning") for q in questions)
    focus = {q.split()[-1] if not q.endswith("meaning") else q.split()[0]
             for q in list(collection.passage_queries.values())[:3]}
    mentions = [p["text"] for p in collection.passages if any(w in p["text"].split() for w in focus)]
    assert len(mentions) >= 10  # the pool keeps naming the first test entities
    with pytest.raises(ValueError, match="not among the relations in use"):
        generate(dataclasses.replace(SETTINGS, query_relations=("colour",)), whitespace)


def test_hard_negatives_hold_the_query_words_only_far_apart():
    collection = generate(dataclasses.replace(SETTINGS, literal_fraction=1.0), whitespace)
    docs = {d.doc_id: d for d in collection.documents}
    checked = 0
    for name in ("train", "dev", "test"):
        for qid, negatives in collection.hard_negatives[name].items():
            assert len(negatives) == SETTINGS.hard_negatives
            (relevant, *_) = collection.qrels[name][qid]
            entity, relation = next((p.entity, p.relation) for p in docs[relevant].passages if p.answers and any(
                q.format(e=p.entity) == collection.queries[name][qid] for q in RELATION_BY_NAME[p.relation].questions))
            for doc_id in negatives:
                assert doc_id not in collection.qrels[name][qid]
                passages, offsets = docs[doc_id].passages, [0]
                for p in passages:
                    offsets.append(offsets[-1] + whitespace(p.text))
                spans = [(offsets[i], offsets[i + 1]) for i in range(len(passages))]
                on_entity = [spans[i] for i, p in enumerate(passages) if p.entity == entity]
                on_relation = [spans[i] for i, p in enumerate(passages)
                               if p.relation == relation and p.entity != entity]
                assert on_entity and on_relation  # every query word is there for BM25 ...
                assert not any(p.answers and (p.entity, p.relation) == (entity, relation) for p in passages)
                for a in on_entity:  # ... but never within one window of W tokens
                    for b in on_relation:
                        gap = max(b[0] - a[1], a[0] - b[1])
                        assert gap >= SETTINGS.first_window, (qid, doc_id, docs[doc_id].text)
                checked += 1
    n_queries = SETTINGS.n_train_queries + SETTINGS.n_dev_queries + SETTINGS.n_test_queries
    assert checked == n_queries * SETTINGS.hard_negatives


def test_farrelevant_hard_negatives_are_drawn_last_and_hold_the_query_words():
    without = generate(SETTINGS, whitespace)
    assert without.passage_negatives == []
    collection = generate(dataclasses.replace(SETTINGS, farrelevant_hard_negatives=3), whitespace)
    # drawn after everything else: the rest of the collection is unchanged
    assert [d.text for d in collection.documents] == [d.text for d in without.documents]
    assert collection.passages == without.passages
    assert len(collection.passage_negatives) == 3 * SETTINGS.n_farrelevant_queries
    relevant = {qid: collection.passages[int(pid[1:])]["text"] for qid, judged in collection.passage_qrels.items()
                for pid in judged}
    for negative in collection.passage_negatives:
        query = collection.passage_queries[negative["qid"]]
        (relation, entity), = {(r.name, m.group(1)) for r in RELATION_BY_NAME.values() for q in r.questions
                               if (m := re.fullmatch(re.escape(q).replace(r"\{e\}", "(\\S+)"), query))}
        assert entity in negative["text"].replace(".", " ").split()  # the entity, and the relation stated for
        stated = [re.escape(t).replace(r"\{e\}", "(\\S+)").replace(r"\{v\}", ".+?")
                  for t in RELATION_BY_NAME[relation].literal]  # other entities, in the question's words
        assert any(m.group(1) != entity for t in stated for m in re.finditer(t, negative["text"]))
        assert relevant[negative["qid"]] not in negative["text"]  # but never the answer


def test_hard_negatives_open_with_the_query_words_the_answer_mostly_does_not():
    """The world property behind the sweep's dip at token 0 (docs/stages/sweep.md): every hard negative
    opens, at token 0, with a passage holding the query's entity or its relation (never its answer), and only
    after it comes filler; the relevant document opens with its answer for a minority of queries. Rankers trained
    on these pairs learn that a query-word sentence at token 0 followed by filler is a hard negative."""
    collection = generate(SETTINGS, whitespace)
    docs = {d.doc_id: d for d in collection.documents}
    opens_with_answer = 0
    for name in ("train", "dev"):
        for qid, negatives in collection.hard_negatives[name].items():
            (relevant,) = collection.qrels[name][qid]
            (span,) = collection.answer_passages[name][qid]
            (answer,) = [p for p in docs[relevant].passages if p.answers and p.text == span["text"]]
            opens_with_answer += span["start"] == 0
            for doc_id in negatives:
                opener = docs[doc_id].passages[0]
                assert opener.entity == answer.entity or opener.relation == answer.relation, (qid, doc_id)
                assert not (opener.answers and (opener.entity, opener.relation) == (answer.entity, answer.relation))
    n_queries = SETTINGS.n_train_queries + SETTINGS.n_dev_queries
    assert 0.1 < opens_with_answer / n_queries < 0.5  # demo (seed 13, MiniLM tokens): 77 of 239 train queries


def test_the_lead_filler_control_changes_only_the_train_hard_negatives():
    """The control of the dip at token 0: with `train_negative_lead_filler` every train hard negative opens with
    a filler sentence (no query word at token 0), and every other document, query and judgment is unchanged."""
    plain = generate(SETTINGS, whitespace)
    control = generate(dataclasses.replace(SETTINGS, train_negative_lead_filler=True), whitespace)
    assert control.queries == plain.queries and control.qrels == plain.qrels
    train_negatives = {d for negatives in plain.hard_negatives["train"].values() for d in negatives}
    plain_docs = {d.doc_id: d for d in plain.documents}
    changed = 0
    for document in control.documents:
        before = plain_docs[document.doc_id]
        if document.doc_id not in train_negatives:
            assert document.passages == before.passages, document.doc_id
            continue
        changed += 1
        opener = document.passages[0]
        assert opener.entity is None and opener.relation is None and not opener.answers
        assert document.passages[1:] == before.passages
    assert changed == len(train_negatives) == SETTINGS.n_train_queries * SETTINGS.hard_negatives
    assert control.passages == plain.passages and control.passage_negatives == plain.passage_negatives
