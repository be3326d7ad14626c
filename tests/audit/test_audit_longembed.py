"""The grid on LongEmbed's needle and passkey sets, read from small files in LongEmbed's own layout (a local copy
of dwzhu/LongEmbed: `<set>/{corpus,queries,qrels}.jsonl` with `context_length`), with a mock model that reads the
first words of a document: every cell is known exactly."""

from __future__ import annotations

import json

import numpy as np
import pytest

from posbias.audit.batteries import grid_battery
from posbias.audit.battery_settings import settings_with, source_files
from posbias.audit.results import summarise_grid
from posbias.audit.longembed import locate_needle, locate_passkey, sentences
from posbias.scoring.protocol import Scorer
from posbias.errors import InputError

STATS = settings_with(None)["statistics"]
CHANCE = (1 + 1 / 2 + 1 / 3) / 3  # the relevant document tied with the 2 other documents of its group
# Paul Graham's essays stand in as four-word sentences sharing no word with any query
ESSAY = ["Startups grow very fast.", "Founders write code daily.", "Investors like good teams.",
         "Essays explain hard ideas.", "Cities attract young hackers.", "Programs need careful design.",
         "Lisp macros are powerful.", "Great work takes time.", "Users want simple things.",
         "Ambition often looks odd.", "Schools teach fake work.", "Wealth differs from money."]
FACTS = {"gravity": ("Who discovered the law of gravity?", "The law of gravity was discovered by Isaac Newton."),
         "canberra": ("What is the capital of Australia?", "Canberra became the capital city of Australia in 1913."),
         "everest": (None, "Mount Everest stands between Nepal and China in Asia.")}  # no query asks for it
# where each fact sits in its published document (after that many essay sentences), per context length
PLACES = {256: {"gravity": 1, "canberra": 6, "everest": 3}, 512: {"gravity": 6, "canberra": 0, "everest": 12}}
FILLER = "The grass is green. The sky is blue. The sun is yellow. Here we go. There and back again."
PEOPLE = {"alfaro": ("Douglas Alfaro", 6699), "horton": ("Declan Horton", 4821), "wilcox": ("Denisse Wilcox", 3355)}


class FirstWords(Scorer):
    """Reads the first `window` words of a document; its score is how many of the query's content words it finds
    there (none: 0, tied with every document it finds nothing in)."""

    def __init__(self, window: int):
        self.window = window

    def score(self, pairs, metas=None):
        from posbias.audit.longembed import _words

        return np.array([float(len(_words(q) & _words(" ".join(d.split()[:self.window])))) for q, d in pairs])

    def count_tokens(self, text):
        return len(text.split())


def _write(root, name, corpus, queries, qrels):
    for split, rows in (("corpus", corpus), ("queries", queries), ("qrels", qrels)):
        path = root / name / f"{split}.jsonl"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("".join(json.dumps(row) + "\n" for row in rows), encoding="utf-8")


@pytest.fixture
def longembed(tmp_path):
    """A local copy of LongEmbed: the needle set at two context lengths (3 documents, 2 queries each: the essay's
    first 6 or all 12 sentences with one fact inserted), the passkey set at one (3 documents of filler, 2 queries)."""
    root = tmp_path / "LongEmbed"
    corpus, queries, qrels = [], [], []
    for length, places in PLACES.items():
        essay = ESSAY[:6] if length == 256 else ESSAY
        for fact, (query, needle) in FACTS.items():
            at = places[fact]
            doc_id = f"needle_{length}_{fact}"
            corpus.append({"doc_id": doc_id, "text": "\n".join([*essay[:at], needle, *essay[at:]]),
                           "context_length": length})
            if query:
                queries.append({"qid": f"q_{length}_{fact}", "text": query, "context_length": length})
                qrels.append({"qid": f"q_{length}_{fact}", "doc_id": doc_id, "context_length": length})
    _write(root, "needle", corpus, queries, qrels)
    corpus, queries, qrels = [], [], []
    for person, (name, key) in PEOPLE.items():
        needle = f"{name}'s pass key is {key}. Remember it. {key} is the pass key for {name}."
        corpus.append({"doc_id": f"passkey_256_{person}", "text": f"{FILLER} {FILLER} {needle}", "context_length": 256})
        if person != "wilcox":
            queries.append({"qid": f"p_{person}", "text": f"what is the pass key for {name}?", "context_length": 256})
            qrels.append({"qid": f"p_{person}", "doc_id": f"passkey_256_{person}", "context_length": 256})
    _write(root, "passkey", corpus, queries, qrels)
    return root


def grid(root, task, **source):
    return {**settings_with(None)["grid"], "n_queries": 50, "depths": [0.0, 0.5, 1.0],
            "source": {"longembed": task, "path": str(root), "cache_dir": str(root.parent / "hf-cache"), **source}}


def test_the_needle_moves_through_each_length_group_and_is_ranked_among_its_documents(longembed):
    result = summarise_grid(grid_battery(FirstWords(22), grid(longembed, "needle")), STATS)
    values = result.values
    assert sorted(values["unit"].unique()) == ["q_256_canberra", "q_256_gravity", "q_512_canberra", "q_512_gravity"]
    # the essay's 24 or 48 words and the 9-word fact: lengths in the model's own tokens (words here)
    assert result.extra["lengths"] == [33, 57] and result.extra["length_unit"] == "model tokens"
    assert result.extra["context_lengths"] == {"256": 33, "512": 57}
    # the fact starts at word 0, 12 and 24 of the short documents, 0, 24 and 48 of the long ones; the model reads
    # 22 words: it finds the fact at the first two depths of the short documents and only at the start of the long
    curve = result.curve.set_index(["length", "position"])["mean"]
    assert curve.loc[33].tolist() == pytest.approx([1, 1, CHANCE])
    assert curve.loc[57].tolist() == pytest.approx([1, CHANCE, CHANCE])
    gravity = values[values["unit"] == "q_256_gravity"]
    assert gravity["tokens"].tolist() == [0, 12, 24] and gravity["end"].tolist() == [9, 21, 33]
    assert gravity["depth"].tolist() == [0.0, 0.5, 1.0] and set(gravity["context_length"]) == {256}
    assert result.extra["n_distractors"] == 2 and result.extra["chance"] == pytest.approx(CHANCE)
    # as published: gravity after 1 of 6 essay sentences (found), canberra last (not); at 512 the other way round
    assert result.extra["as_published"] == pytest.approx({"33": (1 + CHANCE) / 2, "57": (CHANCE + 1) / 2})
    assert result.extra["natural_depth"] == pytest.approx({"33": (4 / 24 + 1) / 2, "57": (24 / 48 + 0) / 2})
    assert result.summary["lengths"]["57"]["underpowered"]  # two queries: no drop can be significant


def test_context_lengths_select_groups_and_a_moved_document_keeps_every_sentence_once(longembed):
    from collections import Counter

    from posbias.audit.longembed import moved, read_groups

    settings = grid(longembed, "needle", context_lengths=[512])
    values = grid_battery(FirstWords(22), settings).values
    assert set(values["context_length"]) == {512} and values["length"].unique().tolist() == [57]
    [item, _] = read_groups(settings["source"], 50, 0)[512]
    assert item.needle == FACTS["gravity"][1]
    for text in moved(item, [0.0, 0.3, 1.0], lambda t: len(t.split()))["texts"]:
        assert Counter(sentences(text)) == Counter(sentences(item.text))


def test_the_passkey_sentence_is_found_by_the_name_the_query_asks_for(longembed):
    result = grid_battery(FirstWords(20), grid(longembed, "passkey"))
    # 38 filler words, then the 16-word passkey sentence: its first word is read at word 19 too, not at the end
    # (nor where LongEmbed put it, last)
    for _, rows in result.values.groupby("unit"):
        assert rows["tokens"].tolist() == [0, 19, 38] and rows["value"].tolist() == pytest.approx([1, 1, CHANCE])
    assert result.extra["natural_depth"] == {"54": 1.0} and result.extra["as_published"] == {"54": CHANCE}
    text = f"{FILLER} Douglas Alfaro's pass key is 6699. Remember it. 6699 is the pass key for Douglas Alfaro. {FILLER}"
    start, end = locate_passkey("what is the passkey for Douglas Alfaro?", text)
    assert text[start:end] == "Douglas Alfaro's pass key is 6699. Remember it. 6699 is the pass key for Douglas Alfaro."
    assert locate_passkey("what is the pass key for Declan Horton?", text) is None


def test_the_needle_is_the_sentence_no_other_document_holds_that_shares_the_query_s_words():
    from collections import Counter

    text = "Startups grow very fast. Water boils at one hundred degrees. The law of gravity was found by Newton."
    shared = Counter({s: 3 for s in sentences(text)})
    shared["Startups grow very fast."] = 3
    shared["Water boils at one hundred degrees."] = shared["The law of gravity was found by Newton."] = 1
    start, end = locate_needle("Who discovered the law of gravity?", text, shared)
    assert text[start:end] == "The law of gravity was found by Newton."
    assert locate_needle("What is the capital of Peru?", text, shared) is None  # two unique, neither shares a word
    only = Counter({"Startups grow very fast.": 2, "Water boils at one hundred degrees.": 2,
                    "The law of gravity was found by Newton.": 1})
    assert text[slice(*locate_needle("What is the capital of Peru?", text, only))].startswith("The law")


def test_a_sample_of_the_group_s_documents_and_a_missing_answer(longembed, tmp_path):
    result = grid_battery(FirstWords(22), grid(longembed, "needle", distractors=1))
    assert result.extra["n_distractors"] == 1 and result.extra["chance"] == pytest.approx(0.75)
    with pytest.raises(InputError, match=r"distractors 5 exceeds the 2 other documents of context_length 256"):
        grid_battery(FirstWords(22), grid(longembed, "needle", distractors=5))
    lines = (longembed / "passkey" / "corpus.jsonl").read_text().replace("Douglas Alfaro", "Someone Else")
    (longembed / "passkey" / "corpus.jsonl").write_text(lines)
    with pytest.raises(InputError, match=r"the answer to query 'p_alfaro' .* is not found in its document "
                                         r"'passkey_256_alfaro'"):
        grid_battery(FirstWords(22), grid(longembed, "passkey"))


@pytest.mark.parametrize("source, message", [
    ({"longembed": "haystack"}, r"grid.source.longembed: 'haystack' is not one of needle, passkey"),
    ({"longembed": "needle", "lengths": [256]}, r"grid.source: unknown keys \['lengths'\]"),
    ({"longembed": "needle", "context_lengths": [0]}, r"grid.source.context_lengths: expected a non-empty list"),
    ({"longembed": "needle", "distractors": 0}, r"grid.source.distractors: expected a positive integer"),
    ({"longembed": "needle", "data_files": {"corpus": "c.jsonl"}}, r"grid.source.data_files: expected a mapping"),
])
def test_a_malformed_longembed_source_is_one_line_naming_the_key(source, message):
    with pytest.raises(InputError, match=message):
        settings_with({"grid": {"source": source}})


def test_the_workflow_waits_on_local_files_only():
    assert source_files({"longembed": "needle", "path": "dwzhu/LongEmbed", "revision": "abc"}) == []
    files = {"corpus": "data/needle/corpus.jsonl", "queries": "data/needle/queries.jsonl",
             "qrels": ["data/needle/qrels.jsonl"]}
    assert source_files({"longembed": "needle", "path": "json", "data_files": files}) == [
        "data/needle/corpus.jsonl", "data/needle/queries.jsonl", "data/needle/qrels.jsonl"]
    assert source_files({"queries": "q.tsv", "qrels": "r.txt", "passages": "p.jsonl", "pool_size": 9}) == [
        "q.tsv", "r.txt", "p.jsonl"]


def test_a_longembed_grid_writes_its_files_card_and_a_leaderboard_row_per_length(longembed, tmp_path):
    from posbias.audit.spec import parse_model_spec
    from posbias.audit.steps import run_battery, write_reports

    settings = {**settings_with(None), "grid": grid(longembed, "needle")}
    record = run_battery(FirstWords(22), parse_model_spec("cross-encoder:first-words?name=first_words"), "grid",
                         settings, tmp_path / "out")
    assert record["n_units"] == 4 and set(record["summary"]["lengths"]) == {"33", "57"}
    assert record["extra"]["source"] == "LongEmbed needle"
    [card] = write_reports(tmp_path / "out")
    assert card.is_file()
    board = (tmp_path / "out" / "leaderboard.csv").read_text()
    assert "grid @33" in board and "grid @57" in board
