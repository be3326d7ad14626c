"""`posbias stage`: what it fetches (at the revision the config pins, or the commit it resolves and locks), what it
lists without the network (--dry-run), what it says of files placed by hand, and which inputs a target needs."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from hub_fakes import TINY, write_config
from posbias.cli import main
from posbias.staging import hub
from posbias.config.inputs import FILE, HUB_MODEL, Need, select

COMMIT, OTHER = "c" * 40, "d" * 40
TOKENIZER = "posbias-tests/tokenizer"
FILES = {"config.json": "{}", "tokenizer.json": "{}", "model.safetensors": "w", "pytorch_model.bin": "w",
         "tf_model.h5": "w"}


def staged_config(run_dir: Path, **extra) -> Path:
    """The tiny config with a collection whose truncation reads the hub tokenizer TOKENIZER."""
    (run_dir / "docs.jsonl").write_text('{"id": "d1", "text": "a document"}\n')
    collection = {"documents": {"kind": "local", "path": "docs.jsonl"},
                  "truncate": {"tokenizer": TOKENIZER, "max_tokens": 10}, **extra.pop("collection", {})}
    return write_config(run_dir / "staged.yaml", collections={"c": collection}, **extra)


def stage(capsys, *args: str) -> tuple[int, str, str]:
    try:
        status = main(["stage", *args])
    except SystemExit as exit_:
        status = exit_.code
    out = capsys.readouterr()
    return status, out.out, out.err


def row(out: str, name: str) -> str:
    return next(line for line in out.splitlines() if f"  {name}  " in line)


def test_stage_resolves_an_unpinned_model_s_commit_downloads_it_and_locks_it(fake_hub, run_dir, capsys):
    fake = fake_hub({TOKENIZER: {"main": (COMMIT, FILES)}})
    status, out, err = stage(capsys, "--config", str(staged_config(run_dir)))
    assert status == 0, err
    assert row(out, TOKENIZER).startswith("fetched ") and f"commit {COMMIT}" in row(out, TOKENIZER)
    assert fake.info_calls == [(TOKENIZER, None)]  # model_info(...).sha: no revision in the config
    # PyTorch only: the safetensors, not their pickled copy nor TensorFlow's weights
    snapshot = Path(row(out, TOKENIZER).split()[4])
    assert sorted(p.name for p in snapshot.iterdir()) == ["config.json", "model.safetensors", "tokenizer.json"]
    entry = hub.read_lock()["models"][TOKENIZER]
    assert (entry["revision"], entry["commit"]) == ("main", COMMIT)

    # the jobs load that snapshot, and the manifest names its commit
    from posbias.backbones import locate
    from posbias.provenance.identity import weights_identity

    assert locate(TOKENIZER) == (str(snapshot), None)
    assert weights_identity(TOKENIZER)["revision"] == COMMIT

    status, out, _ = stage(capsys, "--config", str(staged_config(run_dir)))  # again: nothing to fetch
    assert status == 0 and row(out, TOKENIZER).startswith("present ") and len(fake.downloads) == 1


def test_a_pinned_revision_is_what_stage_fetches_records_and_jobs_load(fake_hub, run_dir, capsys, monkeypatch):
    fake = fake_hub({TOKENIZER: {"main": (OTHER, FILES), "v1": (COMMIT, FILES)}})
    config = staged_config(run_dir, revisions={TOKENIZER: "v1"})
    status, out, err = stage(capsys, "--config", str(config))
    assert status == 0, err
    assert fake.info_calls == [(TOKENIZER, "v1")] and fake.downloads[0]["revision"] == "v1"
    assert hub.read_lock()["models"][TOKENIZER] == {"revision": "v1", "commit": COMMIT,
                                                    "ignore": hub.ignore_patterns(FILES)}
    # a job gets the pin from the Snakefile (POSBIAS_REVISIONS) and loads the snapshot staged for it
    from posbias.command_flags import read_config_object
    from posbias.provenance.identity import weights_identity
    from posbias.staging.offline import job_environment

    for variable, value in job_environment([str(config)], read_config_object(str(config)).revisions).items():
        monkeypatch.setenv(variable, value)
    path, revision = hub.load_target(TOKENIZER)
    assert Path(path).name == COMMIT and revision is None
    assert weights_identity(TOKENIZER) == {"name": TOKENIZER, "kind": "hub", "revision": COMMIT, "pinned": "v1"}


def test_two_keys_pinning_one_repository_at_two_revisions_are_refused(run_dir, capsys):
    config = staged_config(run_dir, revisions={TOKENIZER: "v1"},
                           llm={"models": {"local": {"backend": "hf_causal", "model": TOKENIZER, "revision": "v2"}}})
    status, _, err = stage(capsys, "--config", str(config), "--dry-run")
    assert status == 2
    assert err.strip().endswith(f"{TOKENIZER} at revision v1, but llm.models.local.revision wants v2; one results "
                                "tree reads one version of it") and len(err.strip().splitlines()) == 1


def test_a_dry_run_reads_only_the_disk(fake_hub, run_dir, capsys):
    fake = fake_hub({TOKENIZER: {"main": (COMMIT, FILES)}})
    status, out, err = stage(capsys, "--config", str(staged_config(run_dir)), "--dry-run")
    assert status == 0, err
    assert row(out, TOKENIZER).startswith("to fetch ")
    assert row(out, "offline:all-MiniLM-L6-v2").startswith("present ")  # a package: installed
    assert "sha256" not in row(out, "docs.jsonl")  # a collection of yours: no reader checks a hash, none is taken
    assert out.splitlines()[-1] == "3 inputs: 2 present, 1 to fetch"  # the documents file, MiniLM; the tokenizer
    assert fake.info_calls == [] and fake.downloads == [] and not hub.lock_path().exists()


def test_a_file_placed_by_hand_that_is_missing_is_listed_with_where_it_goes(run_dir, capsys):
    config = staged_config(run_dir, collection={"expansions": "data/d2q.tsv"}, revisions={})
    status, out, _ = stage(capsys, "--config", str(config), "--dry-run")
    assert status == 0  # a dry run only reports
    assert re.match(r"missing +file +data/d2q\.tsv +put it at data/d2q\.tsv +doc2query expansions",
                    row(out, "data/d2q.tsv"))


def test_a_stage_that_leaves_an_input_missing_ends_in_one_line(fake_hub, run_dir, capsys):
    fake_hub({TOKENIZER: {"main": (COMMIT, FILES)}})
    config = staged_config(run_dir, collection={"expansions": "data/d2q.tsv"})
    status, out, err = stage(capsys, "--config", str(config))
    assert status == 2 and row(out, TOKENIZER).startswith("fetched ")  # the rest is staged all the same
    assert err.splitlines()[-1] == ("posbias stage: error: 1 of 4 inputs are not staged (data/d2q.tsv: put it at "
                                    "data/d2q.tsv); the table says what each needs")  # after the config's warning


def test_a_file_without_a_sha256_gets_one_to_pin(run_dir, capsys):
    (run_dir / "d2q.tsv").write_text("d1\tsome expansion\n")
    import hashlib
    digest = hashlib.sha256(b"d1\tsome expansion\n").hexdigest()
    status, out, _ = stage(capsys, "--config", str(staged_config(run_dir, collection={"expansions": "d2q.tsv"})),
                           "--dry-run")
    assert status == 0
    assert row(out, "d2q.tsv").endswith(f"pin it: collections.c.expansions_sha256: {digest}")


def test_a_file_with_another_sha256_is_one_line_with_both_hashes_and_exit_2(run_dir, capsys):
    (run_dir / "d2q.tsv").write_text("d1\tsome expansion\n")
    import hashlib
    found = hashlib.sha256(b"d1\tsome expansion\n").hexdigest()
    expected = "0123456789abcdef" * 4
    config = staged_config(run_dir, collection={"expansions": "d2q.tsv", "expansions_sha256": expected})
    for args in ([], ["--dry-run"]):  # a dry run refuses it too: nothing downstream should start from it
        status, out, err = stage(capsys, "--config", str(config), *args)
        assert status == 2
        assert row(out, "d2q.tsv").startswith("wrong sha256 ")
        assert err == (f"posbias stage: error: d2q.tsv: sha256 {found} is not the {expected} that "
                       f"collections.c.expansions_sha256 expects (another version of the file, or a damaged copy)\n")


def test_a_download_that_fails_is_its_row_s_reason_and_the_stage_fails(fake_hub, run_dir, capsys):
    fake_hub({})  # the hub knows no such repository
    status, out, err = stage(capsys, "--config", str(staged_config(run_dir)))
    assert status == 2
    assert row(out, TOKENIZER).startswith("failed ") and "repository posbias-tests/tokenizer not found" in out
    assert not hub.read_lock()["models"]


def test_remote_code_of_another_repository_is_staged_with_its_model(fake_hub, run_dir, capsys):
    code = "posbias-tests/code"
    config_json = json.dumps({"auto_map": {"AutoModel": f"{code}--modeling.Model"}})
    fake_hub({TOKENIZER: {"main": (COMMIT, {**FILES, "config.json": config_json})},
              code: {"main": (OTHER, {"modeling.py": "class Model: pass\n"})}})
    status, out, err = stage(capsys, "--config", str(staged_config(run_dir)))
    assert status == 0, err
    assert f"with the code of {code}" in row(out, TOKENIZER)
    assert hub.read_lock()["models"][code]["commit"] == OTHER


def test_select_keeps_what_the_scheduled_jobs_read():
    encoder = Need(HUB_MODEL, "org/encoder", used_by=["retrievers.hybrid.encoder.model"])
    tokenizer = Need(HUB_MODEL, "org/tok", used_by=["models.firstp.args.tokenizer"])
    redocred = Need(FILE, "data/redocred/test_revised.json", used_by=["probes.redocred.files[0].path"])
    store = Need(HUB_MODEL, "org/bert", used_by=["collections.c.truncate.tokenizer"])
    needs = [encoder, tokenizer, redocred, store]
    assert select(needs, [("dense_encode", {"collection": "synthetic", "retriever": "hybrid"})]) == [encoder]
    assert select(needs, [("probes_build", {})]) == [redocred]
    # a token store is named by its tokenizer (org/bert -> org_bert)
    assert select(needs, [("tokenize_documents", {"collection": "x", "tokenizer": "org_bert"})]) == [store]


@pytest.mark.slow
def test_a_target_stages_only_what_its_jobs_read(run_dir, capsys):
    """Through a dry run of the workflow (the tiny config's only outside input is the offline MiniLM)."""
    status, out, err = stage(capsys, "--config", str(TINY), "--dry-run", "results/candidates/bm25/dev/top6.run")
    assert status == 0, err
    assert out.splitlines()[-1] == "0 inputs"  # BM25 over the generated collection reads nothing from outside
    status, out, err = stage(capsys, "--config", str(TINY), "--dry-run", "results/vectors/synthetic/hybrid")
    assert status == 0, err
    assert out.splitlines()[-1] == "1 input: 1 present" and "offline:all-MiniLM-L6-v2" in out


PAPER_CONFIGS = sorted(path for path in (TINY.parents[1] / "paper").glob("*.yaml")
                       if path.name not in ("common.yaml", "recipe.yaml"))  # layers of the others, not configs


@pytest.mark.parametrize("config", PAPER_CONFIGS, ids=lambda path: path.stem)
def test_a_dry_run_of_every_paper_config_lists_what_is_missing_without_the_network(config, run_dir, capsys,
                                                                                  monkeypatch):
    import socket

    from ir_datasets.util import Cache, Download

    def refuse(*args, **kwargs):
        raise AssertionError("a dry run reached for the network or a download")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    for cls in (Download, Cache):
        monkeypatch.setattr(cls, "path", refuse)
    status, out, err = stage(capsys, "--config", str(config), "--dry-run")
    assert status == 0, err
    rows = out.splitlines()[1:-1]
    assert rows and all(line.startswith(("present ", "to fetch ", "missing ")) for line in rows), out
    assert re.search(r"^to fetch +hub model +bert-base-uncased ", out, flags=re.M)  # every one reads BERT
    assert re.fullmatch(r"\d+ inputs: .*", out.splitlines()[-1])


def test_directory_stages_for_that_run_directory_from_anywhere(fake_hub, run_dir, capsys):
    """`--directory RUN` (snakemake's -d): the lock file goes to RUN/results/, as the jobs of that run read it, a
    relative path in the config is read from RUN, as the jobs read it, and the config is named from where the
    command runs; a dry run does not make a missing directory."""
    fake_hub({TOKENIZER: {"main": (COMMIT, FILES)}})
    config = staged_config(run_dir)
    status, _, err = stage(capsys, "--dry-run", "--config", config.name, "--directory", "nowhere")
    assert status == 2 and err.strip() == "posbias stage: error: --directory nowhere: not a directory (a dry run makes none)"
    assert not (run_dir / "nowhere").exists()
    status, out, _ = stage(capsys, "--config", config.name, "--directory", "paper")
    assert status == 2 and row(out, "docs.jsonl").startswith("missing ")  # relative paths: from the run directory
    (run_dir / "docs.jsonl").rename(run_dir / "paper" / "docs.jsonl")
    status, out, err = stage(capsys, "--config", config.name, "--directory", "paper")
    assert status == 0, err
    assert row(out, TOKENIZER).startswith("present ")  # fetched by the stage before
    assert (run_dir / "paper" / "results" / "staging.lock.yaml").is_file()
    assert not (run_dir / "results").exists()
