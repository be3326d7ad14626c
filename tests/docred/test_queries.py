"""The query table (spec §1.2) on small documents written in the released Re-DocRED JSON format."""

from __future__ import annotations

import json

import pytest

from posbias.errors import InputError
from posbias.docred.queries import (
    SKIPPED_RELATIONS, QueryTableCounts, build_query_table, load_templates, longest_name, query_table_with_counts,
    shortest_other_name)
from posbias.docred.documents import Document, Mention, read_redocred

# The 94 relation ids of the spec's Appendix A.
APPENDIX_A = """
P6 P17 P19 P20 P22 P25 P26 P27 P30 P31 P35 P36 P37 P39 P40 P50 P54 P57 P58 P69 P86 P102 P108 P112 P118 P123 P127
P131 P136 P137 P140 P155 P156 P159 P161 P162 P166 P170 P171 P172 P175 P176 P178 P179 P190 P194 P205 P206 P241
P264 P272 P276 P279 P355 P361 P364 P400 P403 P449 P463 P488 P495 P527 P551 P569 P570 P571 P576 P577 P580 P582
P585 P607 P674 P676 P706 P737 P740 P749 P800 P807 P840 P937 P1001 P1056 P1198 P1336 P1344 P1365 P1366 P1376
P1412 P1441 P3373
""".split()


def write_documents(tmp_path, records: list[dict], split: str = "test") -> list[Document]:
    """Write `records` as a Re-DocRED file and read them back."""
    path = tmp_path / f"{split}_revised.json"
    path.write_text(json.dumps(records), encoding="utf-8")
    return read_redocred(path, split)


def mention(name: str, sent_id: int, start: int, type_: str = "ORG") -> dict:
    return {"name": name, "pos": [start, start + len(name.split())], "sent_id": sent_id, "type": type_}


def label(relation: str, head: int, tail: int, evidence: list[int]) -> dict:
    return {"r": relation, "h": head, "t": tail, "evidence": evidence}


def band_document(title: str = "Alpha Band", labels: list[dict] | None = None) -> dict:
    """A document about a band: entity 0 = the band ("Alpha Band", longest "The Alpha Band", listed out of
    sentence order), 1 = Norway, 2 = Oslo, 3 = 1990."""
    return {
        "title": title,
        "sents": [["Alpha", "Band", "is", "a", "rock", "band", "from", "Norway", "."],
                  ["The", "Alpha", "Band", "formed", "in", "Oslo", "in", "1990", "."],
                  ["Alpha", "Band", "toured", "Norway", "."]],
        "vertexSet": [[mention("The Alpha Band", 1, 0), mention("Alpha Band", 0, 0), mention("Alpha Band", 2, 0)],
                      [mention("Norway", 0, 7, "LOC"), mention("Norway", 2, 3, "LOC")],
                      [mention("Oslo", 1, 5, "LOC")],
                      [mention("1990", 1, 7, "TIME")]],
        "labels": labels if labels is not None else [label("P17", 0, 1, [0])],
    }


def other_document(title: str, head: list[dict], tail: list[dict], labels: list[dict]) -> dict:
    """A document with two entities (0 = `head`, 1 = `tail`); the sentences are filler of the right size."""
    sents = [["word"] * 8 for _ in range(3)]
    return {"title": title, "sents": sents, "vertexSet": [head, tail], "labels": labels}


def queries_of(tmp_path, records: list[dict], dedup_records: list[dict] = ()) -> list[tuple[str, str]]:
    documents = write_documents(tmp_path, records)
    dedup = write_documents(tmp_path, list(dedup_records), split="train") if dedup_records else []
    return [(row.qid, row.query) for row in build_query_table(documents, dedup)]


# ---- templates ----

def test_templates_are_those_of_appendix_a():
    templates = load_templates()
    assert len(APPENDIX_A) == 94
    assert sorted(templates) == sorted(APPENDIX_A)
    assert all(template.count("{head}") == 1 and template.endswith("?") for template in templates.values())
    assert not set(SKIPPED_RELATIONS) & set(templates)
    assert templates["P17"] == "Which country is {head} associated with?"
    assert templates["P1412"] == "What languages are spoken, written, or signed by {head}?"


# ---- names ----

def _mention(name: str, sent_id: int, start: int) -> Mention:
    return Mention(name=name, sent_id=sent_id, pos=(start, start + len(name.split())), type="PER")


def test_longest_name_breaks_ties_by_first_mention_in_document_order():
    # "Ray Bob" is listed first but first mentioned later than "Bob Ray" (sentence 0, token 4)
    mentions = [_mention("Ray Bob", 0, 9), _mention("Bob Ray", 1, 0), _mention("Bob Ray", 0, 4), _mention("Bo", 0, 0)]
    assert longest_name(mentions) == "Bob Ray"
    assert longest_name(list(reversed(mentions))) == "Bob Ray"
    # Moving "Ray Bob" before "Bob Ray"'s first mention flips the choice.
    assert longest_name([_mention("Ray Bob", 0, 1), *mentions[1:]]) == "Ray Bob"


def test_longest_name_falls_back_to_lexicographic_order_at_the_same_position():
    assert longest_name([_mention("Abd", 0, 0), _mention("Abc", 0, 0)]) == "Abc"
    assert longest_name([_mention("Abc", 0, 0), _mention("Abd", 0, 0)]) == "Abc"


def test_longest_name_prefers_length_over_position():
    assert longest_name([_mention("Bob", 0, 0), _mention("Robert Ray", 3, 0)]) == "Robert Ray"


def test_shortest_other_name():
    mentions = [_mention("Robert Ray", 0, 0), _mention("Rob", 2, 0), _mention("Bob", 1, 0), _mention("Robby", 0, 5)]
    assert shortest_other_name(mentions, "Robert Ray") == "Bob"  # "Bob" (sentence 1) comes before "Rob" (2)
    assert shortest_other_name(mentions, "Bob") == "Rob"
    assert shortest_other_name([_mention("Rob", 0, 0), _mention("Rob", 1, 0)], "Rob") is None


# ---- the table ----

def test_query_uses_the_longest_head_name_and_the_relation_template(tmp_path):
    row, = build_query_table(write_documents(tmp_path, [band_document()]))
    assert row.query == "Which country is The Alpha Band associated with?"
    assert (row.head_longest, row.tail_longest) == ("The Alpha Band", "Norway")
    assert (row.qid, row.label_index, row.label.relation) == ("test0-0", 0, "P17")


def test_skipped_relations_missing_templates_and_labels_without_evidence(tmp_path):
    labels = [label("P150", 1, 2, [0, 1]), label("P17", 0, 1, []), label("P710", 3, 0, [1]),
              label("P9999", 0, 2, [1]), label("P571", 0, 3, [1])]
    rows, counts = query_table_with_counts(write_documents(tmp_path, [band_document(labels=labels)]))
    assert [(row.qid, row.query) for row in rows] == [("test0-4", "When was The Alpha Band founded?")]
    assert counts == QueryTableCounts(labels=5, skipped_relations=2, no_template=1, duplicates=0, no_evidence=1,
                                      kept=1)
    assert "5 labels" in counts.summary() and "1 queries kept" in counts.summary()


def test_row_fields(tmp_path):
    labels = [label("P17", 0, 1, [0, 2]), label("P571", 0, 3, [1])]
    first, second = build_query_table(write_documents(tmp_path, [band_document(labels=labels)]))
    assert first.head_names == frozenset({"The Alpha Band", "Alpha Band"})
    assert first.tail_names == frozenset({"Norway"})
    assert first.evidence == (0, 2)
    assert [(m.name, m.sent_id) for m in first.head_in_evidence] == [("Alpha Band", 0), ("Alpha Band", 2)]
    assert [m.sent_id for m in first.tail_in_evidence] == [0, 2]
    assert [(m.name, m.sent_id) for m in second.head_in_evidence] == [("The Alpha Band", 1)]
    assert second.tail == first.document.entities[3]


def test_row_order_follows_documents_then_labels(tmp_path):
    first = band_document("Alpha Band", [label("P571", 0, 3, [1]), label("P17", 0, 1, []), label("P17", 0, 1, [0])])
    second = band_document("Beta Band", [label("P159", 0, 2, [1]), label("P571", 0, 3, [1])])
    second["vertexSet"][0] = [mention("Beta Band", 0, 0)]
    second["vertexSet"][3] = [mention("1991", 1, 7, "TIME")]
    documents = write_documents(tmp_path, [first, second])
    assert [row.qid for row in build_query_table(documents)] == ["test0-0", "test0-2", "test1-0", "test1-1"]
    assert [row.qid for row in build_query_table(documents[::-1])] == ["test1-0", "test1-1", "test0-0", "test0-2"]


# ---- the duplicate filter ----

def test_same_head_and_relation_in_another_document_removes_both_queries(tmp_path):
    sweden = other_document("Alpha Band discography", [mention("The Alpha Band", 0, 0)],
                            [mention("Sweden", 1, 0, "LOC")], [label("P17", 0, 1, [1])])
    rows, counts = query_table_with_counts(write_documents(tmp_path, [band_document(), sweden]))
    assert rows == [] and counts.duplicates == 2


def test_a_name_variant_also_finds_duplicates(tmp_path):
    # The other document names the band only by its shorter variant.
    sweden = other_document("Alpha Band discography", [mention("Alpha Band", 0, 0)],
                            [mention("Sweden", 1, 0, "LOC")], [label("P17", 0, 1, [])])
    assert queries_of(tmp_path, [band_document(), sweden]) == []


def test_the_reversed_name_pair_finds_duplicates(tmp_path):
    # "Norway ... has part ... Alpha Band": another relation, head and tail swapped.
    reversed_fact = other_document("Music of Norway", [mention("Norway", 0, 0, "LOC")],
                                   [mention("Alpha Band", 1, 0)], [label("P527", 0, 1, [1])])
    assert queries_of(tmp_path, [band_document(), reversed_fact]) == []


def test_other_facts_about_the_head_are_not_duplicates(tmp_path):
    # Same head, another relation and another tail: nothing in common with (Alpha Band, P17, Norway).
    label_fact = other_document("Rock Records", [mention("Alpha Band", 0, 0)],
                                [mention("Rock Records", 1, 0)], [label("P264", 0, 1, [1])])
    assert queries_of(tmp_path, [band_document(), label_fact]) == [
        ("test0-0", "Which country is The Alpha Band associated with?"),
        ("test1-0", "Which record label is Alpha Band associated with?")]


def test_skipped_relations_are_not_duplicates(tmp_path):
    # As in the authors' code, P150/P710 labels are dropped before the duplicate index is built.
    many = other_document("Norway", [mention("Norway", 0, 0, "LOC")], [mention("Alpha Band", 1, 0)],
                          [label("P150", 0, 1, [1]), label("P710", 1, 0, [1])])
    assert queries_of(tmp_path, [band_document(), many]) == [
        ("test0-0", "Which country is The Alpha Band associated with?")]


def test_the_own_title_is_not_a_duplicate(tmp_path):
    # The document states (Alpha Band, P17) twice, and a document with the same title states it again: the only
    # title left is the query's own, so every query is kept.
    twice = band_document(labels=[label("P17", 0, 1, [0]), label("P17", 0, 2, [1])])
    same_title = other_document("Alpha Band", [mention("Alpha Band", 0, 0)], [mention("Sweden", 1, 0, "LOC")],
                                [label("P17", 0, 1, [1])])
    assert [qid for qid, _ in queries_of(tmp_path, [twice, same_title])] == ["test0-0", "test0-1", "test1-0"]


def test_dedup_documents_remove_queries_but_never_yield_them(tmp_path):
    sweden = other_document("Alpha Band discography", [mention("Alpha Band", 0, 0)],
                            [mention("Sweden", 1, 0, "LOC")], [label("P17", 0, 1, [1])])
    unrelated = other_document("Oslo", [mention("Oslo", 0, 0, "LOC")], [mention("Norway", 1, 0, "LOC")],
                               [label("P17", 0, 1, [1])])
    band = band_document(labels=[label("P17", 0, 1, [0]), label("P571", 0, 3, [1])])
    documents = write_documents(tmp_path, [band])
    dedup = write_documents(tmp_path, [sweden, unrelated], split="train")
    rows, counts = query_table_with_counts(documents, dedup)
    assert [row.qid for row in rows] == ["test0-1"]
    assert counts == QueryTableCounts(labels=2, skipped_relations=0, no_template=0, duplicates=1, no_evidence=0,
                                      kept=1)
    assert [row.qid for row in build_query_table(documents)] == ["test0-0", "test0-1"]


# ---- malformed input ----

def test_a_label_naming_a_missing_entity_is_an_input_error(tmp_path):
    with pytest.raises(InputError, match=r"test_revised\.json: document 0: label P17 names entity 7"):
        write_documents(tmp_path, [band_document(labels=[label("P17", 0, 7, [0])])])


def test_an_entity_without_mentions_is_an_input_error(tmp_path):
    record = band_document()
    record["vertexSet"][1] = []
    with pytest.raises(InputError, match=r"document test0 \('Alpha Band'\): label 0 names entity 1"):
        build_query_table(write_documents(tmp_path, [record]))


@pytest.mark.parametrize("suffix", [".gz", ".bz2", ".xz"])
def test_a_compressed_redocred_file_is_read_like_the_plain_one(tmp_path, suffix):
    import bz2
    import gzip
    import lzma

    opener = {".gz": gzip.open, ".bz2": bz2.open, ".xz": lzma.open}[suffix]
    path = tmp_path / f"test_revised.json{suffix}"
    with opener(path, "wt", encoding="utf-8") as out:
        json.dump([band_document()], out)
    assert read_redocred(path, "test") == write_documents(tmp_path, [band_document()])


def test_a_damaged_compressed_file_names_the_file(tmp_path):
    path = tmp_path / "test_revised.json.gz"
    path.write_bytes(b"not gzip at all")
    with pytest.raises(InputError, match=r"test_revised\.json\.gz: cannot be read"):
        read_redocred(path, "test")


def test_a_mention_whose_span_leaves_its_sentence_is_an_input_error(tmp_path):
    record = band_document()
    record["vertexSet"][0][0]["pos"] = [0, 99]
    with pytest.raises(InputError, match=r"test_revised\.json: document 0: mention .* spans tokens \[0, 99\) of "
                                         r"sentence 1, which has 9"):
        write_documents(tmp_path, [record])
