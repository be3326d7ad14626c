"""Hugging Face hub models and datasets: which names are hub ids, the revision each is loaded at, the lock file in
which `posbias stage` records the commit it fetched, and the local copy a job loads instead of the name.

A revision comes from the config (`revisions: {hub id: revision}`, a local language model's or an audit model's
own `revision`, a dataset source's `revision`). No paper config pins one: a commit cannot be looked up without the
hub, and a made-up one would pin nothing. Instead `posbias stage` resolves each id's commit (huggingface_hub's
`model_info(...).sha`, at the pinned revision or the default branch), downloads that snapshot and records it in
the lock file (`lock_path`: results/staging.lock.yaml, beside the results it makes). Every later load by name
reads that snapshot (`load_target`), so all jobs of a results tree read the same weights whatever the hub's
branch does meanwhile, and the run's manifest names the commit (posbias.provenance.identity). A job offline reads
nothing else; online, an id never staged is fetched by the library as before.
"""

from __future__ import annotations

import functools
import json
import os
import re
from pathlib import Path
from typing import Iterable

import yaml

from posbias.errors import InputError
from posbias.staging.offline import REVISIONS_VARIABLE, is_offline, not_staged

LOCK_VARIABLE = "POSBIAS_STAGING_LOCK"  # another lock file than DEFAULT_LOCK (relative to the run directory)
DEFAULT_LOCK = Path("results") / "staging.lock.yaml"
LOCK_SECTIONS = {"model": "models", "dataset": "datasets"}  # repo type -> its mapping in the lock file
DEFAULT_REVISION = "main"
COMMIT = re.compile(r"^[0-9a-f]{40}$")
REPO_ID = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]*(/[A-Za-z0-9][A-Za-z0-9._-]*)?$")
# Weights and exports for other frameworks, which posbias (PyTorch) never reads: left out of a snapshot.
OTHER_FORMATS = ("*.h5", "*.msgpack", "*.ot", "*.tflite", "*.onnx", "*.onnx_data", "*.mlmodel", "onnx/*",
                 "openvino/*", "coreml/*", "*.mlpackage/*", "tf_model*", "flax_model*", "rust_model*")
LOCK_HEADER = ("# Written by `posbias stage`: the commit of every Hugging Face hub model and dataset it fetched, which\n"
               "# every job of this results tree loads (docs/cluster.md). Delete an entry\n"
               "# to resolve its revision again at the next stage; copy a commit into the config's `revisions` to\n"
               "# pin it for good.\n")


def lock_path() -> Path:
    """The lock file: POSBIAS_STAGING_LOCK, else results/staging.lock.yaml of the run directory (a job's working
    directory, as `posbias stage`'s)."""
    return Path(os.environ.get(LOCK_VARIABLE) or DEFAULT_LOCK).absolute()


def is_hub_id(name: str, repo_type: str = "model") -> bool:
    """Whether `name` is read from the hub: not an `offline:` package, not a path (existing or written as one),
    and shaped as a hub id (a dataset's names its owner: `dwzhu/LongEmbed`; a bare `json` is a `datasets`
    builder)."""
    if name.startswith(("offline:", "/", ".", "~")) or not REPO_ID.match(name) or Path(name).exists():
        return False
    return repo_type == "model" or "/" in name


# --- the lock file ---------------------------------------------------------------------------------------------


@functools.lru_cache(maxsize=4)
def _parsed(path: str, signature: tuple) -> dict:
    try:
        data = yaml.safe_load(Path(path).read_text(encoding="utf-8")) or {}
    except (OSError, UnicodeDecodeError, yaml.YAMLError) as err:
        raise InputError(f"{path}: cannot be read as the staging lock file ({err})") from None
    lock = {section: {} for section in LOCK_SECTIONS.values()}
    for section in LOCK_SECTIONS.values():
        entries = data.get(section) or {} if isinstance(data, dict) else None
        if not isinstance(entries, dict) or not all(isinstance(e, dict) and COMMIT.match(str(e.get("commit", "")))
                                                    for e in entries.values()):
            raise InputError(f"{path}: {section} must map hub ids to {{revision, commit}} (a 40-digit commit); "
                             f"delete the file and run posbias stage again")
        lock[section] = entries
    return lock


def read_lock(path: str | os.PathLike | None = None) -> dict[str, dict[str, dict]]:
    """`{"models": {id: entry}, "datasets": {id: entry}}`, each entry `{revision, commit, ignore}`; empty when
    there is no lock file. Read once per change of the file."""
    path = Path(path or lock_path())
    try:
        stat = path.stat()
    except FileNotFoundError:
        return {section: {} for section in LOCK_SECTIONS.values()}
    return _parsed(str(path), (stat.st_mtime_ns, stat.st_size))


def write_lock(lock: dict[str, dict[str, dict]], path: str | os.PathLike | None = None) -> Path:
    from posbias.io import atomic_write

    path = Path(path or lock_path())
    ordered = {section: dict(sorted(lock.get(section, {}).items())) for section in LOCK_SECTIONS.values()}
    with atomic_write(path) as handle:
        handle.write(LOCK_HEADER)
        yaml.safe_dump(ordered, handle, sort_keys=False, width=120)
    return path


def pinned(name: str) -> str | None:
    """The config's `revisions` pin of a model, as the Snakefile hands it to jobs (`POSBIAS_REVISIONS`)."""
    try:
        return json.loads(os.environ.get(REVISIONS_VARIABLE) or "{}").get(name)
    except (ValueError, AttributeError):
        raise InputError(f"{REVISIONS_VARIABLE}: not a JSON object of hub id -> revision") from None


def locked(name: str, repo_type: str = "model", revision: str | None = None) -> dict | None:
    """The lock's entry of `name` when it was staged at `revision` (at any, when None)."""
    entry = read_lock()[LOCK_SECTIONS[repo_type]].get(name)
    if entry and (revision is None or revision in (entry.get("revision"), entry["commit"])):
        return entry
    return None


# --- local copies ----------------------------------------------------------------------------------------------


def cached_snapshot(name: str, repo_type: str = "model", revision: str | None = None,
                    ignore: Iterable[str] | None = None) -> str | None:
    """The hub cache's snapshot of `name` at `revision` (a commit, or a branch the cache has a ref of), never the
    network; None when it is missing, or incomplete by the file list staging saw (`ignore`: what it left out)."""
    from huggingface_hub import snapshot_download
    from huggingface_hub.errors import LocalEntryNotFoundError

    try:
        return snapshot_download(name, repo_type=repo_type, revision=revision, local_files_only=True,
                                 ignore_patterns=list(ignore) if ignore else None)
    except (LocalEntryNotFoundError, ValueError):  # not cached, incomplete, or not a valid id
        return None


def load_target(name: str, repo_type: str = "model", revision: str | None = None) -> tuple[str, str | None]:
    """What a job loads for the hub id `name` and the revision to ask for: the staged snapshot's directory (and
    no revision) when the lock holds `name` at `revision` (by default the config's pin, else any); offline, the
    hub cache's copy, or a `NotStagedError`; online, `name` at the lock's commit or `revision`, for the library
    to fetch."""
    revision = revision or (pinned(name) if repo_type == "model" else None)
    entry = locked(name, repo_type, revision)
    if entry:
        path = cached_snapshot(name, repo_type, entry["commit"], entry.get("ignore"))
        if path:
            return path, None
    if not is_offline():
        return name, entry["commit"] if entry else revision
    path = cached_snapshot(name, repo_type, revision)
    if path:
        return path, None
    raise not_staged(f"Hugging Face {repo_type} {name!r}" + (f" at revision {revision}" if revision else ""))


def staged_commit(name: str, repo_type: str = "model") -> str | None:
    """The commit a job loads `name` at, when the lock holds it at the config's pin: what provenance records."""
    entry = locked(name, repo_type, pinned(name) if repo_type == "model" else None)
    return entry["commit"] if entry else None


# --- fetching (posbias stage) ----------------------------------------------------------------------------------


def ignore_patterns(files: Iterable[str]) -> list[str]:
    """What a model's snapshot leaves out: other frameworks' weights, and PyTorch's pickled weights in a folder
    whose safetensors hold the same (transformers reads the safetensors)."""
    folders = sorted({file.rpartition("/")[0] for file in files if file.endswith(".safetensors")})
    return [*OTHER_FORMATS, *(f"{folder}/pytorch_model*.bin*" if folder else "pytorch_model*.bin*"
                              for folder in folders)]


def code_repositories(snapshot: str | os.PathLike) -> set[str]:
    """Other hub repositories whose code a model's `auto_map` runs (`jinaai/jina-bert-implementation--...`):
    transformers fetches them at load time, so they are staged with it."""
    found = set()
    for name in ("config.json", "tokenizer_config.json"):
        try:
            data = json.loads((Path(snapshot) / name).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        auto_map = data.get("auto_map") if isinstance(data, dict) else None
        for value in (auto_map or {}).values():
            for reference in value if isinstance(value, list) else [value]:
                if isinstance(reference, str) and "--" in reference:
                    found.add(reference.split("--", 1)[0])
    return found


def fetch(name: str, repo_type: str = "model", revision: str | None = None) -> tuple[dict, str]:
    """Download the snapshot of `name` at `revision` (default: the hub's default branch) into the hub cache, the
    weights of other frameworks left out; returns its lock entry (`revision`, the `commit` it resolved to, what
    was left out) and its directory."""
    import huggingface_hub

    info = getattr(huggingface_hub, f"{repo_type}_info")(name, revision=revision)
    ignore = ignore_patterns(sibling.rfilename for sibling in info.siblings or ()) if repo_type == "model" else []
    # by the revision itself, not its commit: fetching a branch also writes the cache's ref of it, which
    # transformers reads when it loads remote code by repository name offline
    path = huggingface_hub.snapshot_download(name, repo_type=repo_type, revision=revision,
                                             ignore_patterns=ignore or None)
    commit = Path(path).name  # the cache keeps a snapshot under its commit
    return {"revision": revision or DEFAULT_REVISION, "commit": commit, "ignore": ignore}, path
