"""Answer importance (spec §2.1) and the foil (§2.7) on documents written in the Re-DocRED format."""

from __future__ import annotations

import json

import pytest

from posbias.errors import InputError
from posbias.probes.answer import (ANSWER_IMPORTANCE, answer_importance, answer_importance_candidates,
                                   has_similar_label_to_tail, head_sentence_without_tail)
from posbias.probes.foil import (FOIL, foil, foil_candidates, foil_document, is_eligible, unrelated_block,
                                 unrelated_documents)
from posbias.docred.queries import ProbeQuery, build_query_table
from posbias.docred.documents import read_redocred
from posbias.docred.sampling import sample
from posbias.docred.synthetic import write_synthetic_redocred

FILLERS = ["The weather was mild that year .", "Many fans came to the shows .", "Nothing else happened ."]


def document(title: str, sentences: list[str], entities: list[list[tuple[str, int, str]]],
             labels: list[tuple[str, int, int, list[int]]]) -> dict:
    """A Re-DocRED record. `entities` lists each entity's mentions as (name, sent_id, type), in the file's order; a
    name used twice in one sentence takes its next unused occurrence there."""
    sents = [sentence.split() for sentence in sentences]
    used: set[tuple[int, int]] = set()
    vertex_set = []
    for entity in entities:
        mentions = []
        for name, sent_id, entity_type in entity:
            words = name.split()
            tokens = sents[sent_id]
            start = next(i for i in range(len(tokens))
                         if tokens[i:i + len(words)] == words and (sent_id, i) not in used)
            used.add((sent_id, start))
            mentions.append({"name": name, "pos": [start, start + len(words)], "sent_id": sent_id, "type": entity_type})
        vertex_set.append(mentions)
    return {"title": title, "sents": sents, "vertexSet": vertex_set,
            "labels": [{"r": r, "h": h, "t": t, "evidence": evidence} for r, h, t, evidence in labels]}


def good(i: int) -> dict:
    """A candidate of both probes: the head in sentences 0 and 2, the fact (P17) in 2, the tail's name again in 4.
    Head mentions are listed evidence first, as the file's order is not sentence order."""
    head, tail = f"Alpha{i}", f"Land{i}"
    return document(f"Good {i}", [f"{head} is a famous band .", FILLERS[0], f"{head} is based in {tail} .", FILLERS[1],
                                  f"{tail} hosts a festival .", FILLERS[2]],
                    [[(head, 2, "ORG"), (head, 0, "ORG")], [(tail, 2, "LOC")]], [("P17", 0, 1, [2])])


def variant(title: str, i: int, sentences: list[str], head_at: list[int], labels=None, extra=None, tail_names=None):
    """A P17 fact about Alpha<i> in Land<i> in the sentence with 'based', the head mentioned at `head_at`."""
    head, tail = f"Alpha{i}", f"Land{i}"
    sentences = [s.format(h=head, t=tail) for s in sentences]
    evidence = next(k for k, s in enumerate(sentences) if "based" in s)
    tail_entity = [(name, evidence, "LOC") for name in (tail_names or [tail])]
    return document(title, sentences, [[(head, k, "ORG") for k in head_at], tail_entity, *(extra or [])],
                    labels or [("P17", 0, 1, [evidence])])


def answer_world() -> list[dict]:
    docs = [good(i) for i in range(8)]
    docs += [
        # step 1 failures
        variant("Two evidence", 20, ["{h} is a band .", "{h} is based in {t} .", "It is in {t} too ."], [0, 1],
                labels=[("P17", 0, 1, [1, 2])]),
        variant("Head once", 21, [FILLERS[0], "{h} is based in {t} .", FILLERS[1]], [1]),
        document("Two head names", ["Alpha is a band .", "Alpha22 is based in Land22 .", FILLERS[1]],
                 [[("Alpha22", 1, "ORG"), ("Alpha", 0, "ORG")], [("Land22", 1, "LOC")]], [("P17", 0, 1, [1])]),
        variant("Two tail names", 23, ["{h} is a band .", "{h} is based in {t} Land .", FILLERS[1]], [0, 1],
                tail_names=["Land23", "Land"]),
        variant("Head twice in evidence", 24, ["{h} is a band .", "{h} is based in {t} like {h} .", FILLERS[1]],
                [0, 1, 1]),
        # step 2 failures: the only other head sentence is crowded, names the tail, or is evidence of a similar label
        variant("Crowded", 25, ["{h} met {h} .", "{h} is based in {t} .", FILLERS[1]], [1, 0, 0]),
        variant("Tail named", 26, ["{h} loved {t} .", "{h} is based in {t} .", FILLERS[1]], [1, 0]),
        variant("Similar label", 27, ["{h} met Beta27 .", "{h} is based in {t} .", FILLERS[1]], [1, 0],
                extra=[[("Beta27", 0, "PER")]], labels=[("P17", 0, 1, [1]), ("P740", 1, 2, [0])]),
        # step 5: four candidate queries in one document, the last 3 kept
        document("Crowd", ["Zeta is a big firm .", "Zeta is based in Landa .", "Zeta was formed in Townb .",
                           "Zeta is in Regionc .", "Zeta makes Gadgetd .", FILLERS[0]],
                 [[("Zeta", k, "ORG") for k in range(5)], [("Landa", 1, "LOC")], [("Townb", 2, "LOC")],
                  [("Regionc", 3, "LOC")], [("Gadgetd", 4, "MISC")]],
                 [("P17", 0, 1, [1]), ("P740", 0, 2, [2]), ("P131", 0, 3, [3]), ("P1056", 0, 4, [4])]),
        # the first valid head sentence in the file's order is 5, not 0; 3 holds two head mentions
        variant("Order", 28, ["{h} is a band .", FILLERS[0], "{h} is based in {t} .", "{h} and {h} met .",
                              FILLERS[1], "{h} plays loud ."], [2, 3, 3, 5, 0]),
    ]
    return docs


def table(tmp_path, documents: list[dict]) -> list[ProbeQuery]:
    path = tmp_path / "test_revised.json"
    path.write_text(json.dumps(documents), encoding="utf-8")
    return build_query_table(read_redocred(path, "test"))


def titles(rows) -> list[str]:
    return [q.document.title for q in rows]


@pytest.fixture()
def answer_queries(tmp_path):
    return table(tmp_path, answer_world())


def by_title(queries: list[ProbeQuery], title: str) -> ProbeQuery:
    return next(q for q in queries if q.document.title == title)


# ---- answer importance


def test_answer_candidates_follow_each_filter_step(answer_queries):
    candidates = answer_importance_candidates(answer_queries)
    goods = [f"Good {i}" for i in range(8)]
    assert titles(candidates) == goods + ["Crowd"] * 3 + ["Order"]
    crowd = [q.label.relation for q in candidates if q.document.title == "Crowd"]
    assert crowd == ["P740", "P131", "P1056"]  # the last 3 queries of the document


def test_head_sentence_is_the_first_valid_mention_in_file_order_and_never_crowded(answer_queries):
    assert head_sentence_without_tail(by_title(answer_queries, "Order")) == 5
    assert head_sentence_without_tail(by_title(answer_queries, "Crowded")) is None
    assert head_sentence_without_tail(by_title(answer_queries, "Good 0")) == 0


def test_similar_label_covers_relation_tail_head_and_the_tail_name(answer_queries):
    similar = by_title(answer_queries, "Similar label")
    assert has_similar_label_to_tail(similar, 0)  # evidence of a label whose head is our tail
    assert not has_similar_label_to_tail(similar, 2)
    assert has_similar_label_to_tail(by_title(answer_queries, "Tail named"), 0)  # the tail's name, no mention
    good_0 = by_title(answer_queries, "Good 0")
    assert [has_similar_label_to_tail(good_0, i) for i in range(6)] == [False, False, True, False, True, False]


def test_answer_pairs_differ_only_in_the_first_sentence(answer_queries):
    pairs = answer_importance(answer_queries, n=12, seed=0)
    assert {p.probe for p in pairs} == {ANSWER_IMPORTANCE} and len({p.qid for p in pairs}) == 12
    for pair in pairs:
        query = next(q for q in answer_queries if q.qid == pair.qid)
        assert query.tail_longest in pair.document_1 and query.tail_longest not in pair.document_2
        first_1, _, rest_1 = pair.document_1.partition(" . ")
        first_2, _, rest_2 = pair.document_2.partition(" . ")
        assert rest_1 == rest_2 and first_1 != first_2
    good_0 = next(p for p in pairs if p.qid.startswith("test0-"))
    assert good_0.document_1 == f"Alpha0 is based in Land0 . {FILLERS[0]} {FILLERS[1]} {FILLERS[2]}"
    assert good_0.document_2 == f"Alpha0 is a famous band . {FILLERS[0]} {FILLERS[1]} {FILLERS[2]}"


def test_strict_neutral_rest_drops_other_head_sentences(answer_queries):
    order = [q for q in answer_queries if q.document.title == "Order"]
    rows = answer_queries[:8] + order  # the Good documents and Order
    authors = {p.qid: p for p in answer_importance(rows, n=9, seed=0, neutral="authors")}
    strict = {p.qid: p for p in answer_importance(rows, n=9, seed=0)}  # the paper's definition is the default
    qid = order[0].qid
    assert "Alpha28 is a band" in authors[qid].document_1 and "Alpha28 is a band" not in strict[qid].document_1
    assert strict[qid].document_2 == "Alpha28 plays loud . " + " ".join(FILLERS[:2])
    with pytest.raises(InputError, match="probes.variants.neutral"):
        answer_importance(rows, n=1, seed=0, neutral="paper")


def test_answer_sample_is_seeded(answer_queries):
    assert answer_importance(answer_queries, 6, 0) == answer_importance(answer_queries, 6, 0)
    assert [p.qid for p in answer_importance(answer_queries, 6, 0)] != [
        p.qid for p in answer_importance(answer_queries, 6, 1)]
    with pytest.raises(InputError, match="probes.n"):
        answer_importance(answer_queries, 13, 0)


# ---- foil


def foil_world() -> list[dict]:
    padding = FILLERS + ["The end came ."]
    docs = [good(i) for i in range(6)]
    docs += [
        # states the query's relation (P17) in sentence 0; its types (ORG, MISC) are not the tail's (LOC)
        document("Same relation", ["Gamma is in Kappa .", *padding],
                 [[("Gamma", 0, "ORG")], [("Kappa", 0, "MISC")]], [("P17", 0, 1, [0])]),
        # states P170 in sentence 0: a regex substring test for P17 would exclude it
        document("Creator", ["Delta was created by Sigma .", *padding],
                 [[("Delta", 0, "MISC")], [("Sigma", 0, "PER")]], [("P170", 0, 1, [0])]),
        # an entity of the tail's type (LOC) first mentioned in sentence 0, though listed first in sentence 3
        document("Early place", ["Omega lives near Rho .", FILLERS[0], FILLERS[1], "Omega lives in Rho .", FILLERS[2]],
                 [[("Omega", 3, "PER"), ("Omega", 0, "PER")], [("Rho", 3, "LOC"), ("Rho", 0, "LOC")]],
                 [("P551", 0, 1, [3])]),
        # the same entities first mentioned in sentence 2: eligible
        document("Late place", [FILLERS[0], FILLERS[1], "Psi lives in Tau .", FILLERS[2], "The end came ."],
                 [[("Psi", 2, "PER")], [("Tau", 2, "LOC")]], [("P551", 0, 1, [2])]),
        # three sentences only: never in the pool
        document("Short", ["Chi lives in Phi .", FILLERS[0], FILLERS[1]],
                 [[("Chi", 0, "PER")], [("Phi", 0, "LOC")]], [("P551", 0, 1, [0])]),
        # bug 5: head in sentences 2 and 3 only, so the authors' condition keeps every sentence, the tail-named 4
        # included (the fixed pool leaves it out)
        document("Echo", [FILLERS[0], FILLERS[1], "Echo is a firm .", "Echo is based in Lande .", "Lande is big ."],
                 [[("Echo", 3, "ORG"), ("Echo", 2, "ORG")], [("Lande", 3, "LOC")]], [("P17", 0, 1, [3])]),
        # one question asked three times (three countries): the last 2 kept
        document("Trio", ["Nu is a firm .", "Nu is based in Landx .", "Nu is based in Landy .",
                          "Nu is based in Landz .", FILLERS[0]],
                 [[("Nu", k, "ORG") for k in range(4)], [("Landx", 1, "LOC")], [("Landy", 2, "LOC")],
                  [("Landz", 3, "LOC")]], [("P17", 0, 1, [1]), ("P17", 0, 2, [2]), ("P17", 0, 3, [3])]),
    ]
    return docs


@pytest.fixture()
def foil_queries(tmp_path):
    return table(tmp_path, foil_world())


def pool_entry(queries: list[ProbeQuery], title: str):
    return next(u for u in unrelated_documents(queries) if u.document.title == title)


def test_unrelated_pool_is_distinct_documents_of_more_than_three_sentences(foil_queries):
    pool = [u.document.title for u in unrelated_documents(foil_queries)]
    assert pool == [f"Good {i}" for i in range(6)] + ["Same relation", "Creator", "Early place", "Late place",
                                                      "Echo", "Trio"]
    assert pool_entry(foil_queries, "Good 0").block == f"Alpha0 is a famous band . {FILLERS[0]} " \
                                                       f"Alpha0 is based in Land0 . {FILLERS[1]}"


def test_each_exclusion_of_the_unrelated_document(foil_queries):
    query = by_title(foil_queries, "Good 0")  # P17, tail LOC
    assert not is_eligible(pool_entry(foil_queries, "Good 0"), query)  # same title
    assert is_eligible(pool_entry(foil_queries, "Good 1"), query)
    assert not is_eligible(pool_entry(foil_queries, "Same relation"), query)  # relation stated early
    assert not is_eligible(pool_entry(foil_queries, "Early place"), query)  # tail type first mentioned early
    assert is_eligible(pool_entry(foil_queries, "Late place"), query)


def test_p17_does_not_exclude_p170_unless_authors(foil_queries):
    query = by_title(foil_queries, "Good 0")
    creator = pool_entry(foil_queries, "Creator")
    assert is_eligible(creator, query)
    assert not is_eligible(creator, query, authors=True)


def test_foil_candidates_fixed_and_authors_tail_count(foil_queries):
    trio = [q.tail_longest for q in foil_candidates(foil_queries) if q.document.title == "Trio"]
    assert trio == ["Landy", "Landz"]  # the last 2 queries of one question
    fixed = set(titles(foil_candidates(foil_queries)))
    assert fixed == {f"Good {i}" for i in range(6)} | {"Echo", "Trio"}
    assert set(titles(foil_candidates(foil_queries, authors=True))) == fixed - {"Echo"}  # spec bug 5


def test_foil_pairs_put_the_evidence_first(foil_queries):
    pairs = foil(foil_queries, n=9, seed=0)
    pool = unrelated_documents(foil_queries)
    blocks = {u.block: u for u in pool}
    assert {p.probe for p in pairs} == {FOIL} and len({p.qid for p in pairs}) == 9
    for pair in pairs:
        position, query = next((i, q) for i, q in enumerate(foil_queries) if q.qid == pair.qid)
        evidence = query.document.sentence(query.evidence[0])
        # document_1: block + S_ev + block, the block from an eligible unrelated document, drawn with the row seed
        block, _, after = pair.document_1.partition(" " + evidence + " ")
        assert after == block and block in blocks and is_eligible(blocks[block], query)
        eligible = [u for u in pool if is_eligible(u, query)]
        assert block == sample(eligible, 1, position)[0].block == unrelated_block(query, position, pool)
        assert query.tail_longest in pair.document_1
        # document_2: the foil, no answer
        head = query.head_longest
        assert pair.document_2 == f'" {head} " " {head} " ' + query.document.sentence(head_sentence_without_tail(query))
        assert query.tail_longest not in pair.document_2
    good_3 = next(p for p in pairs if p.qid.startswith("test3-"))
    assert good_3.document_2 == '" Alpha3 " " Alpha3 " Alpha3 is a famous band .'
    assert foil(foil_queries, n=9, seed=0) == pairs


def test_no_eligible_unrelated_document_is_an_input_error(tmp_path):
    queries = table(tmp_path, [good(0)])
    with pytest.raises(InputError, match="no unrelated document"):
        foil(queries, n=1, seed=0)
    assert foil_document(queries[0], 0) == '" Alpha0 " " Alpha0 " Alpha0 is a famous band .'


# ---- a synthetic world


def test_synthetic_world_yields_pairs_for_both_probes(tmp_path):
    path = tmp_path / "synthetic_revised.json"
    write_synthetic_redocred(path, seed=3, n_documents=60)
    queries = build_query_table(read_redocred(path, "test"))
    answer_rows = answer_importance_candidates(queries)
    assert len(answer_rows) >= 20
    for pair in answer_importance(queries, n=len(answer_rows), seed=0):
        query = next(q for q in queries if q.qid == pair.qid)
        assert query.tail_longest in pair.document_1 and query.tail_longest not in pair.document_2
    pairs = foil(queries, n=len(foil_candidates(queries)), seed=0)
    assert len(pairs) >= 20
    assert all(next(q for q in queries if q.qid == p.qid).tail_longest not in p.document_2 for p in pairs)


def demonym(i: int) -> dict:
    """`good(i)` whose fact sentence names the answer only by a demonym ('a Landish band' for Land<i>): the
    annotators tie the mention to Land<i>, but the text never spells it."""
    record = good(i)
    record["title"] = f"Demonym {i}"
    record["sents"][2] = [f"Alpha{i}", "is", "a", "Landish", "band", "."]
    record["vertexSet"][1] = [{"name": f"Land{i}", "pos": [3, 4], "sent_id": 2, "type": "LOC"}]
    return record


def test_an_answer_given_only_as_a_demonym_is_no_candidate(tmp_path):
    """The document "with the answer" must hold it: answer importance and the paper's foil leave the demonym out;
    the authors' foil keeps it."""
    path = tmp_path / "test_revised.json"
    path.write_text(json.dumps([good(0), demonym(1)]), encoding="utf-8")
    queries = build_query_table(read_redocred(path, "test"))
    assert {q.document.title for q in answer_importance_candidates(queries)} == {"Good 0"}
    assert {q.document.title for q in foil_candidates(queries)} == {"Good 0"}
    assert {q.document.title for q in foil_candidates(queries, authors=True)} == {"Good 0", "Demonym 1"}
