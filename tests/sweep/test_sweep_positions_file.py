"""Position files: the generator's (header qid, start), the sweep's (more columns), an estimator's (no header,
NA where nothing was found); bad lines name the file and line."""

from __future__ import annotations

import pytest

from posbias.io import FormatError
from posbias.sweep.positions import read_positions, write_sweep_positions


def test_formats(tmp_path):
    generator = tmp_path / "dev.tsv"
    generator.write_text("qid\tstart\ndev0000\t12\ndev0001\t0\n")
    assert read_positions(generator) == {"dev0000": 12, "dev0001": 0}
    swept = tmp_path / "sweep.tsv"
    write_sweep_positions(swept, [("far0@p0", 0, 0, 0, "far0", 70), ("far0@p1", 14, 2, 1, "far0", 70)])
    assert read_positions(swept) == {"far0@p0": 0, "far0@p1": 14}
    reordered = tmp_path / "reordered.tsv"
    reordered.write_text("start\tqid\tscore\n7\tq1\t0.5\n")
    assert read_positions(reordered) == {"q1": 7}
    estimated = tmp_path / "estimated.tsv"
    estimated.write_text("q1\t120\nq2\tNA\nq3\t\n")
    assert read_positions(estimated) == {"q1": 120}


@pytest.mark.parametrize("text,problem", [
    ("query\tposition\nq1\t3\n", r"1: a header must name the columns qid and start"),
    ("q1\t3\nq1\t4\n", r"2: query q1 has two positions"),
    ("q1\t3\nq2\t-4\n", r"2: expected a query id and a start token >= 0"),
    ("q1\t3\nq2\n", r"2: expected 'qid<TAB>start'"),
])
def test_bad_lines(tmp_path, text, problem):
    path = tmp_path / "bad.tsv"
    path.write_text(text)
    with pytest.raises(FormatError, match=problem):
        read_positions(path)


def test_a_first_relevant_positions_file_gives_each_query_its_earliest_start_in_its_judged_documents(tmp_path):
    path = tmp_path / "dev.tsv"
    path.write_text("kind\tqid\tdoc_id\tsource\tposition\tposition_bin\tdoc_tokens\tlength_bin\n"
                    "sparse\tq1\tD1\tjudged\t58\t2\t68\t2\n"
                    "sparse\tq1\tD2\tjudged\t30\t1\t60\t2\n"
                    "sparse\tq1\tD9\tretrieved\t0\t0\t59\t2\n"    # a BM25 document of the passage: not judged
                    "sparse\tq2\tD3\tjudged\t\t\t50\t2\n"          # no match: the query is left out
                    "dense\tq3\tD4\tjudged\t-1\t\t40\t1\n"         # no chunk judged relevant: left out too
                    "dense\tq4\tD5\tjudged\t24\t1\t70\t2\n")
    assert read_positions(path) == {"q1": 30, "q4": 24}
