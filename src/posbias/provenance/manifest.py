"""The manifest of a results directory: `write_manifest(job)` writes one `provenance.json` (+ `provenance.html`
for the Snakemake report) per results directory: the environment, the config hash, the models' weights, the
checkpoints' sidecars, each run's device and precision, the language models, and every file under `results/` with
its sha256. `manifest_params(cfg)` is what its job receives from a config; `main_environment` what `posbias
provenance` prints.
"""

from __future__ import annotations

import datetime
import json
import logging
import os
from pathlib import Path
from typing import Any, Iterable, Mapping

from posbias.io import atomic_write
from posbias.provenance.environment import FORMAT, LOCK_FILE, environment, now
from posbias.provenance.hashing import config_hash
from posbias.provenance.identity import language_model, pretrained_names, read_sidecar, weights_identity
from posbias.provenance.jobs import ManifestJob
from posbias.staging.checksums import sha256_file

log = logging.getLogger(__name__)

# Files up to this size get a sha256 in the manifest; larger ones (indexes, token stores, collections,
# paper-scale weights) their size and modification time, so writing the manifest stays cheap.
HASH_MAX_BYTES = 64 * 2**20


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


def write_manifest(job: ManifestJob) -> dict:
    """Write the manifest of `job.out` (this experiment's directory below `job.results`) as JSON and HTML."""
    manifest = build_manifest(job.results, job.out, job.config_hash, job.weights, job.llms,
                              exclude=[job.json_path, job.html_path], root=job.root, departures=job.departures)
    with atomic_write(job.json_path) as handle:
        json.dump(manifest, handle, indent=1, sort_keys=False)
        handle.write("\n")
    with atomic_write(job.html_path) as handle:
        handle.write(manifest_html(manifest))
    log.info("provenance of %d files (%d checkpoints, %d runs) in %s", len(manifest["files"]),
             len(manifest["checkpoints"]), len(manifest["runs"]), job.json_path)
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
