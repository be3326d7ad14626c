"""Identities of what a result was made with: the pretrained weights a config names (`pretrained_names`) and
what each resolves to (`weights_identity(name)`: an `offline:` package's version and its weights' hash, a local
file or directory's content hash, a hub id's commit), a language model's id, backend, revision, SDK and API version
(`language_model(spec)`), and the `provenance.json` sidecar training writes into each checkpoint
(`checkpoint_provenance(...)`, read back by `read_sidecar`).

API keys appear only by the name of the variable that holds them (`api_key_env`), and user names and passwords are
cut out of base URLs.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Mapping
from urllib.parse import urlsplit, urlunsplit

from posbias.llm.spec import LOCAL_BACKENDS
from posbias.provenance.environment import FORMAT, environment, now, package_versions
from posbias.provenance.hashing import config_hash, content_hash
from posbias.rankers.checkpoint_files import SIDECAR

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
