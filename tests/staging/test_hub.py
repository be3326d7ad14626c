"""Hub models and datasets: what counts as a hub id, the lock file `posbias stage` writes, and the local copy a job
loads: the staged snapshot, offline nothing else, online the name at its pinned revision."""

from __future__ import annotations

import json

import pytest

from hub_fakes import write_snapshot
from posbias.errors import InputError
from posbias.staging import hub
from posbias.staging.offline import NotStagedError, job_environment

COMMIT, OTHER = "a" * 40, "b" * 40


@pytest.mark.parametrize("name, repo_type, expected", [
    ("bert-base-uncased", "model", True), ("BAAI/bge-m3", "model", True), ("dwzhu/LongEmbed", "dataset", True),
    ("json", "dataset", False),  # a `datasets` builder
    ("offline:all-MiniLM-L6-v2", "model", False), ("/models/bert", "model", False), ("./bert", "model", False),
    ("results/models/firstp/seed1", "model", False), ("org/name with space", "model", False),
])
def test_hub_ids_are_told_from_paths_packages_and_builders(name, repo_type, expected):
    assert hub.is_hub_id(name, repo_type) is expected


def test_an_existing_directory_is_no_hub_id(run_dir):
    (run_dir / "org" / "model").mkdir(parents=True)
    assert not hub.is_hub_id("org/model")


def test_the_lock_file_round_trips_and_a_damaged_one_is_one_error_naming_it(run_dir):
    assert hub.read_lock() == {"models": {}, "datasets": {}}
    lock = {"models": {"org/model": {"revision": "main", "commit": COMMIT, "ignore": ["*.h5"]}}, "datasets": {}}
    path = hub.write_lock(lock)
    assert path == run_dir / "results" / "staging.lock.yaml"
    assert path.read_text().startswith("# Written by `posbias stage`")
    assert hub.read_lock() == lock
    path.write_text("models: {org/model: {revision: main, commit: not-a-commit}}\n")
    with pytest.raises(InputError, match=r"staging\.lock\.yaml: models must map hub ids"):
        hub.read_lock()


def test_a_staged_model_loads_from_its_locked_snapshot_even_where_the_branch_moved_on(run_dir):
    staged = write_snapshot("org/model", COMMIT, {"config.json": "{}"}, branch=None)
    write_snapshot("org/model", OTHER, {"config.json": "{}"})  # main, since the stage
    hub.write_lock({"models": {"org/model": {"revision": "main", "commit": COMMIT, "ignore": []}}})
    assert hub.load_target("org/model") == (str(staged), None)
    assert hub.staged_commit("org/model") == COMMIT


def test_online_a_model_never_staged_is_left_to_the_library_at_its_pin(run_dir, monkeypatch):
    assert hub.load_target("org/absent") == ("org/absent", None)
    monkeypatch.setenv("POSBIAS_REVISIONS", json.dumps({"org/absent": "v2"}))
    assert hub.load_target("org/absent") == ("org/absent", "v2")


def test_a_lock_entry_of_another_revision_than_the_pin_is_not_loaded(run_dir, monkeypatch):
    write_snapshot("org/model", COMMIT, {"config.json": "{}"})
    hub.write_lock({"models": {"org/model": {"revision": "main", "commit": COMMIT, "ignore": []}}})
    monkeypatch.setenv("POSBIAS_REVISIONS", json.dumps({"org/model": "v2"}))
    assert hub.load_target("org/model") == ("org/model", "v2")
    monkeypatch.setenv("POSBIAS_OFFLINE", "1")
    with pytest.raises(NotStagedError, match="model 'org/model' at revision v2 not staged"):
        hub.load_target("org/model")


def test_offline_a_model_never_staged_is_one_line_naming_it_and_the_stage_command(run_dir, monkeypatch):
    monkeypatch.setenv("POSBIAS_OFFLINE", "1")
    monkeypatch.setenv("POSBIAS_STAGE_CONFIG", "config/paper/robust04.yaml")
    with pytest.raises(NotStagedError) as raised:
        hub.load_target("org/absent")
    assert str(raised.value) == ("Hugging Face model 'org/absent' not staged: run posbias stage --config "
                                 "config/paper/robust04.yaml on a machine with internet")


def test_offline_a_snapshot_in_the_cache_serves_though_no_stage_recorded_it(run_dir, monkeypatch):
    cached = write_snapshot("org/model", COMMIT, {"config.json": "{}"})
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")  # the hub's own switch counts as offline too
    assert hub.load_target("org/model") == (str(cached), None)


def test_a_model_s_other_formats_and_duplicate_pickled_weights_are_left_out():
    files = ["config.json", "model.safetensors", "pytorch_model.bin", "tf_model.h5", "onnx/model.onnx",
             "2_Dense/pytorch_model.bin", "1_Pooling/config.json"]
    ignored = hub.ignore_patterns(files)
    from fnmatch import fnmatch
    kept = [f for f in files if not any(fnmatch(f, pattern) for pattern in ignored)]
    # the Dense module has no safetensors of its own: its pickled weights stay
    assert kept == ["config.json", "model.safetensors", "2_Dense/pytorch_model.bin", "1_Pooling/config.json"]


def test_remote_code_in_another_repository_is_found_in_the_auto_map(tmp_path):
    (tmp_path / "config.json").write_text(json.dumps({"auto_map": {
        "AutoConfig": "jinaai/jina-bert-implementation--configuration_bert.JinaBertConfig",
        "AutoModel": "modeling_bert.BertModel"}}))
    assert hub.code_repositories(tmp_path) == {"jinaai/jina-bert-implementation"}


def test_jobs_inherit_the_config_pins_and_offline_the_libraries_switches(monkeypatch):
    monkeypatch.delenv("POSBIAS_OFFLINE", raising=False)
    online = job_environment(["config/paper/robust04.yaml"], {"bert-base-uncased": "v1"})
    assert online == {"POSBIAS_STAGE_CONFIG": "config/paper/robust04.yaml",
                      "POSBIAS_REVISIONS": '{"bert-base-uncased": "v1"}'}
    monkeypatch.setenv("POSBIAS_OFFLINE", "1")
    offline = job_environment(["c.yaml"], {})
    assert offline["HF_HUB_OFFLINE"] == offline["HF_DATASETS_OFFLINE"] == "1"


def test_a_staged_hub_dataset_is_read_from_its_snapshot_offline(run_dir, monkeypatch, tmp_path):
    from posbias.data.sources import hf

    write_snapshot("posbias-tests/longembed", COMMIT, {"needle/corpus.jsonl": '{"doc_id": "n1", "text": "a needle"}\n'},
                   repo_type="dataset")
    hub.write_lock({"models": {}, "datasets": {"posbias-tests/longembed": {"revision": "main", "commit": COMMIT,
                                                                           "ignore": []}}})
    monkeypatch.setenv("POSBIAS_OFFLINE", "1")
    cache = str(tmp_path / "datasets-cache")
    assert list(hf.documents("posbias-tests/longembed", "needle", cache_dir=cache)) == [{"id": "n1", "text": "a needle"}]
    with pytest.raises(NotStagedError, match="Hugging Face dataset 'posbias-tests/other' not staged"):
        list(hf.documents("posbias-tests/other", "needle", cache_dir=cache))
