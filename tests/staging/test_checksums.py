"""Files placed by hand, checked against the sha256 their config keeps: by `posbias stage` (test_stage_command.py)
and again by the job that reads each, so that a run without a stage refuses a wrong file too."""

from __future__ import annotations

import hashlib

import pytest

from posbias.cli import main
from posbias.staging.checksums import ChecksumError, sha256_of, verify

WRONG = "f" * 64


def test_a_directory_s_sha256_is_over_its_files_names_and_hashes(tmp_path):
    (tmp_path / "NEWS_data" / "FT").mkdir(parents=True)
    (tmp_path / "NEWS_data" / "FT" / "FT911_1").write_text("one")
    first = sha256_of(tmp_path)
    (tmp_path / "NEWS_data" / "FT" / "FT911_1").rename(tmp_path / "NEWS_data" / "FT" / "FT911_2")
    assert sha256_of(tmp_path) != first  # a renamed file is another copy
    line = f"NEWS_data/FT/FT911_2\t{hashlib.sha256(b'one').hexdigest()}\n"
    assert sha256_of(tmp_path) == hashlib.sha256(line.encode()).hexdigest()


def test_nothing_is_checked_without_a_sha256_and_a_match_passes(tmp_path):
    path = tmp_path / "f.txt"
    path.write_text("x")
    verify(path, None, "key")
    verify(path, hashlib.sha256(b"x").hexdigest().upper(), "key")  # as a config may spell it
    with pytest.raises(ChecksumError, match=f"f.txt: sha256 {hashlib.sha256(b'x').hexdigest()} is not the {WRONG} "
                                            "that key expects"):
        verify(path, WRONG, "key")


def test_the_bm25_index_command_refuses_expansions_of_another_sha256(tmp_path, capsys):
    docs, expansions = tmp_path / "docs.jsonl", tmp_path / "d2q.tsv"
    docs.write_text('{"id": "d1", "text": "a document"}\n')
    expansions.write_text("d1\tsome expansion\n")
    with pytest.raises(SystemExit) as exit_:
        main(["index", "--docs", str(docs), "--index", str(tmp_path / "index"), "--expansions", str(expansions),
              "--expansions-sha256", WRONG])
    assert exit_.value.code == 2
    found = hashlib.sha256(b"d1\tsome expansion\n").hexdigest()
    assert capsys.readouterr().err == (f"posbias index: error: {expansions}: sha256 {found} is not the {WRONG} that "
                                       "collections.<name>.expansions_sha256 expects (another version of the file, "
                                       "or a damaged copy)\n")
    assert not (tmp_path / "index").exists()


def test_the_probes_refuse_a_re_docred_file_of_another_sha256(tmp_path):
    from posbias.probes.steps import read_corpus

    path = tmp_path / "dev_revised.json"
    path.write_text("[]")
    with pytest.raises(ChecksumError, match=f"dev_revised.json: sha256 .* is not the {WRONG}"):
        read_corpus([{"path": str(path), "split": "validation", "sha256": WRONG}])


def test_the_reader_batteries_refuse_a_qa_file_of_another_sha256(tmp_path):
    from posbias.audit.batteries import _reader_records
    from posbias.audit.battery_settings import source_files

    path = tmp_path / "nq-open.jsonl.gz"
    path.write_bytes(b"")
    source = {"qa": str(path), "qa_sha256": WRONG}
    assert source_files(source) == [str(path)]  # the hash is no input file of the job
    with pytest.raises(ChecksumError, match="the reader source's qa_sha256 expects"):
        _reader_records({"source": source, "n_questions": 1}, 3)


def test_lost_in_the_middle_refuses_its_qa_file_of_another_sha256(tmp_path):
    from posbias.litm.steps import build_qa

    path = tmp_path / "retrieval.jsonl.gz"
    path.write_bytes(b"")
    section = {"source": {"kind": "retrieval", "path": str(path), "sha256": WRONG}, "sizes": [{"k": 3, "positions": [0]}]}
    with pytest.raises(ChecksumError, match="litm.qa.source.sha256 expects"):
        build_qa(section, str(path), {})
