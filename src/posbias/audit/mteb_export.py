"""`posbias audit --export mteb DIR`: an audit as MTEB result files, one per battery, written with mteb's own
`TaskResult` and loaded back with mteb's own loader (`ResultCache.load_results`) before DIR is put in place; never
uploaded (docs/stages/audit.md, "Publishing an audit").

DIR is laid out as mteb's result cache and the results repository (embeddings-benchmark/results) are:
`DIR/results/<model>/<revision>/<Task>.json`, the path `ResultCache.get_task_result_path` gives (a `/` in the model
name becomes `__`), so `mteb.ResultCache(DIR).load_results(require_model_meta=False)` reads it, and the folder under
`results/` drops into a clone of the results repository as it is. No `model_meta.json` is written: posbias does not
know a model's metadata (parameters, licence, training data), and mteb's loaders read a folder without one when
asked (`require_model_meta=False`); for a model mteb lists, `mteb.get_model_meta(name).to_dict()` is the file.

Each battery is a task named `Posbias<Battery>` (`PosbiasSweep`, `PosbiasReaderGrid`): no MTEB task measures
position sensitivity, the prefix keeps the names from ever meaning a registered task, and mteb reads a result of
a task it does not know (`TaskResult.from_disk`, `load_results` without `validate_and_filter`), though its
leaderboard and `TaskResult.task` need the task registered in mteb first. The scores are one split, `test`, with
one subset, `default` (a grid: a subset per length, `<length>_tokens`), in English (`eng-Latn`: the data of every
posbias battery), holding the headline numbers under their ids (`posbias.audit.hub_export.headlines`: `mrr_first`,
`mrr_best`, `mrr_worst`, `psi`, ...; null where the battery has none), the units, and the curve position by position
(mean, interval, corrected p, drop). `main_score` is the metric at the worst position: defined for every battery
(PSI is not, on raw scores), higher is better as MTEB ranks, and low both for a weak model and for one that loses
the text at some position; PSI beside it says which. `dataset_revision` is `posbias-<version>-<settings
fingerprint>`: no Hub dataset revision exists, and the same settings and code give the same units. `mteb_version` is
the mteb that wrote and validated the file (its format's version; posbias, not mteb, ran the evaluation); mteb rounds
the scores to 6 decimals. `model=NAME` and `revision=REV` (`--export "mteb?model=org/name&revision=abc"`) name the
folder; by default the audit's name and the model's pinned revision, else mteb's `no_revision_available`.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Mapping

from posbias.audit.hub_export import (export_inputs, headlines, read_curve,
                                      settings_fingerprint)
from posbias.audit.spec import parse_model_spec
from posbias.errors import InputError
from posbias.io import atomic_directory

OPTIONS = ("model", "revision")
WRITES = ("results",)
SPLIT, SUBSET, LANGUAGES = "test", "default", ["eng-Latn"]
WORD = r"[A-Za-z0-9_][\w.-]*"  # a folder name: not "..", nor hidden
NO_REVISION = "no_revision_available"  # mteb's own word for a model known without a revision
CURVE_COLUMNS = ("position", "tokens", "n", "mean", "ci_low", "ci_high", "p_adjusted", "drop")


def task_name(battery: str) -> str:
    """`reader_grid` -> `PosbiasReaderGrid`."""
    return "Posbias" + "".join(part.capitalize() for part in battery.split("_"))


def check_options(options: Mapping[str, str]) -> str | None:
    """What is wrong with `mteb?key=value` options, or None (checked before an audit runs)."""
    from importlib.util import find_spec

    if find_spec("mteb") is None:
        return "--export mteb needs the mteb package, which validates the files: pip install 'posbias[mteb]'"
    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        return f"--export mteb: unknown option {unknown[0]!r}; known: {', '.join(OPTIONS)}"
    if "model" in options and not re.fullmatch(rf"{WORD}(/{WORD})?", options["model"]):
        return f"--export mteb: model {options['model']!r} must be NAME or ORGANISATION/NAME (letters, digits, . _ -)"
    if "revision" in options and not re.fullmatch(WORD, options["revision"]):
        return f"--export mteb: revision {options['revision']!r} must be one word (letters, digits, . _ -)"
    return None


def _plain(value):
    """JSON for a score: NaN as null, numpy scalars as numbers."""
    value = value.item() if hasattr(value, "item") else value
    return None if isinstance(value, float) and not math.isfinite(value) else value


def subset_scores(record: Mapping, summary: Mapping, curve, subset: str) -> dict:
    """One subset's scores: `main_score` (the metric at the worst position), the headline numbers, the curve."""
    numbers = {headline.number: headline.value for headline in headlines({**record, "summary": summary})}
    rows = [{column: _plain(row[column]) for column in CURVE_COLUMNS if column in curve}
            for _, row in curve.sort_values("position").iterrows()]
    return {"main_score": _plain(summary["worst"]), "hf_subset": subset, "languages": list(LANGUAGES), **numbers,
            "n_units": int(record["n_units"]), "metric": record["metric"], "curve": rows}


def task_result(record: Mapping, curve):
    """The battery's `TaskResult` (mteb's class, so mteb's own checks run on building it)."""
    import mteb
    from mteb.results import TaskResult

    lengths = record["summary"].get("lengths")
    if lengths:
        scores = [subset_scores(record, summary, curve[curve["length"].astype(float) == float(length)],
                                f"{length}_tokens") for length, summary in lengths.items()]
    else:
        scores = [subset_scores(record, record["summary"], curve, SUBSET)]
    version = record.get("environment", {}).get("packages", {}).get("posbias") or "unknown"
    return TaskResult(dataset_revision=f"posbias-{version}-{settings_fingerprint(record)}",
                      task_name=task_name(record["battery"]), mteb_version=mteb.__version__,
                      scores={SPLIT: scores}, evaluation_time=record.get("seconds"))


def model_revision(record: Mapping) -> str:
    """The revision the audit pinned (the spec's `revision`, else the loaded model's), else mteb's placeholder."""
    try:
        pinned = parse_model_spec(record["spec"]).options.get("revision")
    except InputError:
        pinned = None
    return str(pinned or record.get("model", {}).get("revision") or NO_REVISION)


def export_mteb(audit_dir: str | Path, out: str | Path, options: Mapping[str, str] | None = None) -> str:
    """Write the audit in `audit_dir` (`<out>/<name>/`) as MTEB result files under `out`, checked by loading them
    with mteb's own loader; returns the line saying what was written."""
    import mteb
    from mteb.cache import ResultCache

    audit_dir, out, records, options = export_inputs(audit_dir, out, options, check_options, WRITES, "mteb")
    model = options.get("model") or records[0]["name"]
    revision = options.get("revision") or model_revision(records[0])
    if not re.fullmatch(WORD, revision):
        raise InputError(f"--export mteb: the model's revision {revision!r} is no folder name; name one: "
                         f"--export 'mteb?revision=REV' {out}")
    built = []
    for record in records:
        try:
            built.append(task_result(record, read_curve(audit_dir, record)))
        except ValueError as err:  # pydantic's ValidationError is one
            raise InputError(f"{audit_dir / (record['battery'] + '.json')}: mteb refuses it as a result "
                             f"({str(err).splitlines()[0]}); nothing was exported") from None
    with atomic_directory(out) as staging:
        cache = ResultCache(staging)
        for result in built:
            path = cache.get_task_result_path(task_name=result.task_name, model_name=model, model_revision=revision)
            path.parent.mkdir(parents=True, exist_ok=True)
            result.to_disk(path)
        folder = path.parent.relative_to(staging)
        _validated(cache, out, model, revision, built)
    return (f"mteb export: {len(built)} task results in {out / folder} ({', '.join(r.task_name for r in built)}; "
            f"loaded back by mteb {mteb.__version__} ResultCache.load_results)")


def _validated(cache, out: Path, model: str, revision: str, built: list) -> None:
    """Load what was written with mteb's loader; a file it skips or reads otherwise than built is an error."""
    try:
        loaded = cache.load_results(require_model_meta=False, include_remote=False)
    except ValueError as err:
        raise InputError(f"{out}: mteb cannot load the results written ({str(err).splitlines()[0]}); nothing was "
                         f"exported") from None
    found = {(m.model_name, m.model_revision): m.task_results for m in loaded.model_results}
    if list(found) != [(model, revision)]:
        raise InputError(f"{out}: mteb loads the models {sorted(found)}, not ({model!r}, {revision!r}); nothing "
                         f"was exported")
    results = {result.task_name: result for result in found[(model, revision)]}
    for result in built:
        again = results.get(result.task_name)
        if again is None or again.dataset_revision != result.dataset_revision or not _same(again.scores,
                                                                                           result.scores):
            raise InputError(f"{out}: mteb reads {result.task_name} back otherwise than written; nothing was "
                             f"exported")


def _same(a, b) -> bool:
    """Equal up to mteb's rounding of scores to 6 decimals."""
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(_same(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(_same(x, y) for x, y in zip(a, b))
    if isinstance(a, float) and isinstance(b, (int, float)) and not isinstance(b, bool):
        return math.isclose(a, b, abs_tol=1e-6)
    return a == b
