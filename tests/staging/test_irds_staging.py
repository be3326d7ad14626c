"""ir_datasets offline: the files a part of a dataset reads, found without downloading; a job refusing a part that
was not staged, in one line, before ir_datasets tries the network; `posbias stage` fetching through ir_datasets' own
downloads; and the copy of TREC Disks 4 and 5 placed by hand, checked against its sha256."""

from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

from posbias.data.sources import irds
from posbias.staging.checksums import ChecksumError
from posbias.staging.irds import stored_files
from posbias.staging.offline import NotStagedError

HOME = Path(os.environ["IR_DATASETS_HOME"])  # the tests' own (tests/conftest.py)
ROBUST04 = "disks45/nocr/trec-robust-2004"


@pytest.fixture
def no_downloads(monkeypatch):
    from ir_datasets.util import Cache, Download

    def refuse(self, *args, **kwargs):
        raise AssertionError("ir_datasets was asked to download")

    for cls in (Download, Cache):
        monkeypatch.setattr(cls, "path", refuse)
        monkeypatch.setattr(cls, "stream", refuse)


def test_the_files_of_a_part_are_found_without_a_download(no_downloads):
    docs = stored_files(ROBUST04, "docs")
    assert [(f.path, f.manual) for f in docs] == [(HOME / "disks45" / "corpus", True)]
    assert "place the uncompressed source here" in docs[0].instructions
    assert [f.path for f in stored_files("antique/test", "queries")] == [HOME / "antique" / "test" / "queries.txt"]


def test_offline_a_part_never_staged_is_one_line_before_any_download(no_downloads, monkeypatch):
    monkeypatch.setenv("POSBIAS_OFFLINE", "1")
    monkeypatch.setenv("POSBIAS_STAGE_CONFIG", "my.yaml")
    with pytest.raises(NotStagedError) as raised:
        irds.queries("vaswani")
    assert str(raised.value) == (f"ir_datasets vaswani queries ({HOME / 'vaswani' / 'queries.txt'}) not staged: run "
                                 f"posbias stage --config my.yaml on a machine with internet")


@pytest.fixture
def antique_downloads(monkeypatch):
    """ir_datasets' downloads of antique/test, answered with small files (the real ones are on the network)."""
    from ir_datasets.util import Download

    fetched = []

    def path(self, force=True):
        target = Path(self._cache_path)
        if force and not target.exists():
            target.parent.mkdir(parents=True, exist_ok=True)
            target.write_text("3097310\twhat causes severe swelling and pain in the knees\n")
            fetched.append(target)
        return target

    monkeypatch.setattr(Download, "path", path)
    yield fetched
    shutil.rmtree(HOME / "antique", ignore_errors=True)


def test_stage_fetches_a_part_through_ir_datasets_and_offline_jobs_then_read_it(antique_downloads, tmp_path,
                                                                               monkeypatch, capsys):
    from posbias.config.inputs import IRDS, Need
    from posbias.staging.steps import stage

    need = Need(IRDS, "antique/test", part="queries", used_by=["querysets.antique.source"])
    assert stage([need], fetch=False)[0].status == "to fetch" and not antique_downloads
    assert stage([need], fetch=True)[0].status == "fetched"
    assert antique_downloads == [HOME / "antique" / "test" / "queries.txt"]
    assert stage([need], fetch=True)[0].status == "present" and len(antique_downloads) == 1
    monkeypatch.setenv("POSBIAS_OFFLINE", "1")
    assert irds.queries("antique/test") == {"3097310": "what causes severe swelling and pain in the knees"}


@pytest.fixture
def disks45_copy():
    """A copy of Disks 4 and 5 placed by hand (one file, unless another test's fixture placed a fuller one)."""
    corpus = HOME / "disks45" / "corpus"
    made = not corpus.exists()
    if made:
        (corpus / "NEWS_data").mkdir(parents=True)
        (corpus / "NEWS_data" / "README").write_text("TREC Disks 4 and 5\n")
    yield corpus
    if made:
        shutil.rmtree(corpus)


def test_documents_placed_by_hand_of_another_sha256_are_refused_before_they_are_read(disks45_copy):
    from posbias.data.steps import fetch_documents

    source = {"kind": "ir_datasets", "id": ROBUST04, "manual_sha256": "e" * 64}
    with pytest.raises(ChecksumError, match=f"{disks45_copy}: sha256 [0-9a-f]{{64}} is not the {'e' * 64} that the "
                                            f"source's manual_sha256 \\({ROBUST04}\\) expects"):
        fetch_documents(source, str(disks45_copy.parent / "never-written.jsonl"))
