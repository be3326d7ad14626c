"""Stand-ins for the staging tests: a snapshot in the Hugging Face cache's own layout, a hub that answers
`model_info`/`dataset_info` and `snapshot_download` for the repositories it is given (writing their snapshots as
the cache keeps them; with `local_files_only` the real huggingface_hub reads that cache), and a config on top of
the tiny one. Nothing here reaches the network."""

from __future__ import annotations

import types
from pathlib import Path

import yaml

TINY = Path(__file__).resolve().parents[2] / "config" / "test" / "tiny.yaml"


def write_snapshot(repo: str, commit: str, files: dict[str, str], branch: str | None = "main",
                   repo_type: str = "model") -> Path:
    """A snapshot of `repo` in the hub cache's layout (blobs skipped: the files are written in place)."""
    from huggingface_hub import constants

    storage = Path(constants.HF_HUB_CACHE) / f"{repo_type}s--{repo.replace('/', '--')}"
    snapshot = storage / "snapshots" / commit
    for name, text in files.items():
        (snapshot / name).parent.mkdir(parents=True, exist_ok=True)
        (snapshot / name).write_text(text)
    if branch:
        (storage / "refs").mkdir(parents=True, exist_ok=True)
        (storage / "refs" / branch).write_text(commit)
    return snapshot


class FakeHub:
    """The hub's answers for `repositories` ({repo: {revision: (commit, {file: text})}}); records every call."""

    def __init__(self, repositories: dict[str, dict[str, tuple[str, dict[str, str]]]]):
        self.repositories = repositories
        self.info_calls: list[tuple[str, str | None]] = []
        self.downloads: list[dict] = []

    def _lookup(self, repo: str, revision: str | None) -> tuple[str, dict[str, str]]:
        # the hub client's own errors need an HTTP response: an OSError says the same to the stage
        versions = self.repositories.get(repo)
        if versions is None:
            raise OSError(f"404 Client Error: repository {repo} not found")
        for name, (commit, files) in versions.items():
            if revision in (name, commit) or (revision is None and name == "main"):
                return commit, files
        raise OSError(f"404 Client Error: revision {revision} of {repo} not found")

    def info(self, repo: str, revision: str | None = None, **_):
        self.info_calls.append((repo, revision))
        commit, files = self._lookup(repo, revision)
        return types.SimpleNamespace(sha=commit, siblings=[types.SimpleNamespace(rfilename=f) for f in files])

    def install(self, monkeypatch) -> "FakeHub":
        import huggingface_hub
        from fnmatch import fnmatch

        real = huggingface_hub.snapshot_download

        def snapshot_download(repo_id, *, repo_type=None, revision=None, local_files_only=False,
                              ignore_patterns=None, **options):
            if local_files_only:  # the cache as it is, read by huggingface_hub itself
                return real(repo_id, repo_type=repo_type, revision=revision, local_files_only=True,
                            ignore_patterns=ignore_patterns, **options)
            self.downloads.append({"repo": repo_id, "revision": revision, "ignore": ignore_patterns})
            commit, files = self._lookup(repo_id, revision)
            kept = {name: text for name, text in files.items()
                    if not any(fnmatch(name, pattern) for pattern in ignore_patterns or ())}
            branch = revision if revision and revision != commit else ("main" if revision is None else None)
            return str(write_snapshot(repo_id, commit, kept, branch, repo_type or "model"))

        monkeypatch.setattr(huggingface_hub, "model_info", self.info)
        monkeypatch.setattr(huggingface_hub, "dataset_info", self.info)
        monkeypatch.setattr(huggingface_hub, "snapshot_download", snapshot_download)
        return self


def write_config(path: Path, **sections) -> Path:
    """A config on top of the tiny one (which names only an offline backbone and mocks) with `sections` merged in."""
    path.write_text(yaml.safe_dump({"base": str(TINY), **sections}, sort_keys=False))
    return path
