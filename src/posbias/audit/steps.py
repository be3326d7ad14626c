"""Run an audit: load the model a spec names, run each battery it can take, and write per battery

    <out>/<name>/<battery>.parquet     one value per (unit, position), the battery's own columns too
    <out>/<name>/<battery>.curve.csv   the metric suite's curve (mean, bootstrap interval, corrected tests)
    <out>/<name>/<battery>.json        the summary (PSI, drops, primacy, recency, reach), the battery's extras,
                                       the settings, the model as loaded and the environment

The cards and the leaderboard are made from these files alone (`write_reports`, `posbias.audit.card`), so one job
per model and battery can make them in the workflow, and `posbias audit` writes the same files in one go.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Mapping

from posbias.audit.battery_settings import BATTERIES, OFFERED, battery_function
from posbias.audit.jobs import AuditJob
from posbias.audit.results import battery_test, summarise_result
from posbias.audit.sizing import run_sized
from posbias.audit.spec import ModelRef, check_name, parse_model_spec
from posbias.errors import InputError
from posbias.io import atomic_write

log = logging.getLogger(__name__)


def batteries_of(ref: ModelRef, asked: list[str] | None = None) -> list[str]:
    """The batteries `asked` for (default: the model's capability's defaults, `BATTERIES`), refused when the model
    cannot take one (`OFFERED`: the defaults and the depth x length grids)."""
    offered = OFFERED[ref.capability]
    for battery in asked or []:
        if battery not in offered:
            raise InputError(f"model spec {ref.spec!r}: a {ref.kind} takes the batteries {', '.join(offered)}, "
                             f"not {battery!r}")
    return list(asked or BATTERIES[ref.capability])


def battery_files(out: str | Path, name: str, battery: str) -> dict[str, Path]:
    directory = Path(out) / name
    return {"values": directory / f"{battery}.parquet", "curve": directory / f"{battery}.curve.csv",
            "summary": directory / f"{battery}.json"}


def load_model(ref: ModelRef, cache_dir: str, cache_mode: str, device: str):
    """What the batteries of `ref` read: a pair scorer, or a language model (readers, listwise rankers)."""
    from posbias.audit.models import load_pair_model, open_language_model

    if ref.capability == "pairs":
        return load_pair_model(ref, cache_dir, cache_mode, device)
    if ref.kind == "judge-replay":
        from posbias.judges.judging import ReplayJudge

        return ReplayJudge(ref.target, ref.options.get("judge"))
    if ref.kind == "judge":
        from posbias.judges.judging import LiveJudge

        return LiveJudge(open_language_model(ref, cache_dir, cache_mode), ref.name)
    return open_language_model(ref, cache_dir, cache_mode)


class CountedModel:
    """The model a battery reads, counting the inputs it computes: (query, document) inputs for a pair scorer (times
    its windows, `posbias.scoring.protocol.Scorer.input_count`), prompts for a language model (a listwise call is
    one). The mitigation table's cost multiplier is the ratio of these counts."""

    def __init__(self, model):
        self.model, self.inputs = model, 0

    def __getattr__(self, name):
        return getattr(self.model, name)

    def score(self, pairs, metas=None):
        self.inputs += self.model.input_count(pairs)
        return self.model.score(pairs, metas)

    def generate(self, requests, *args, **kwargs):
        self.inputs += len(requests)
        return self.model.generate(requests, *args, **kwargs)

    def judge(self, askings, *args, **kwargs):  # a judge's prompts (a replay's: the recorded judgments it reads)
        self.inputs += len(askings)
        return self.model.judge(askings, *args, **kwargs)


def run_battery(model, ref: ModelRef, battery: str, settings: Mapping, out: str | Path,
                mitigation: Mapping | None = None) -> dict:
    """Run one battery and write its three files; returns the summary record (with the `mitigation` it audits, as
    `posbias.audit.mitigations.checked` gave it, and the model that mitigates: `of`)."""
    from posbias.provenance.environment import environment

    started = time.perf_counter()
    counted = CountedModel(model)
    # the window in the unit the positions are counted in (a model known only by its words: none)
    window = getattr(model, "window", None) if getattr(model, "token_unit", "tokens") == "tokens" else None
    test = battery_test(battery, settings["statistics"])
    def run(own):
        counted.inputs = 0  # the reported run's inputs: a sizing's first run is not the battery's cost per unit
        return battery_function(battery)(counted, own)

    result, sizing = run_sized(battery, settings, run,
                               lambda result: summarise_result(result, settings["statistics"], window, test))
    result.extra["model_inputs"] = counted.inputs
    seconds = time.perf_counter() - started
    described = model.describe() if hasattr(model, "describe") else _language_model(model)
    record = {"name": ref.name, "spec": ref.spec, "kind": ref.kind, "battery": battery, "metric": result.metric,
              "test": test, "n_units": int(result.values["unit"].nunique()),
              "summary": result.summary, "extra": result.extra,
              "settings": {battery: settings[battery], "statistics": settings["statistics"]},
              "model": described, "seconds": round(seconds, 3), "environment": environment(),
              **({"sizing": sizing} if sizing else {}),
              **({"mitigation": dict(mitigation)} if mitigation else {})}
    files = battery_files(out, ref.name, battery)
    files["values"].parent.mkdir(parents=True, exist_ok=True)
    with atomic_write(files["values"], "wb") as handle:
        result.values.to_parquet(handle, index=False)
    with atomic_write(files["curve"]) as handle:
        result.curve.to_csv(handle, index=False)
    with atomic_write(files["summary"]) as handle:  # last: the workflow's job keys on it
        json.dump(record, handle, indent=1, sort_keys=True, default=_plain)
    log.info("%s %s: %s at the first position %.3f, PSI %.3f, %d significant drops, reach %s (%.0f s; a grid: its "
             "longest length)", ref.name,
             battery, result.metric, result.summary["reference_mean"], result.summary["psi"],
             result.summary["significant_drops"], result.summary["reach"], seconds)
    return record


def _language_model(model) -> dict:
    spec = model.spec
    return {"backend": spec.backend, "model": spec.model, "wrapper": spec.wrapper, "revision": spec.revision,
            "context": spec.context}


def _plain(value):
    """JSON for numpy scalars."""
    return value.item() if hasattr(value, "item") else str(value)


def audit(job: AuditJob) -> list[dict]:
    """Audit one model: every battery it takes (or those asked for), each battery's files under out/<name>/. With
    a mitigation (`posbias.audit.mitigations`), the model as that mitigation changes it, recorded as mitigating
    the audit named `job.mitigates` (its batteries are compared with that audit's in the mitigation table)."""
    from posbias.audit import mitigations
    from posbias.audit.battery_settings import settings_with

    ref = parse_model_spec(job.model)
    if job.name:
        ref = ModelRef(ref.kind, ref.target, ref.options, check_name(job.name, "--name"), ref.spec)
    chosen = batteries_of(ref, job.batteries)
    mitigation, mitigates = job.mitigation, job.mitigates
    if mitigation and not mitigates:
        raise InputError("--mitigation needs --mitigates: the name of the audit it is compared with")
    ref, merged = mitigations.apply(ref, settings_with(job.settings), mitigation)
    if mitigation:
        mitigation = {**mitigations.checked(mitigation, ref, "--mitigation"),
                      "of": check_name(mitigates, "--mitigates")}
        if mitigates == ref.name:
            raise InputError(f"--mitigates {mitigates!r}: a mitigated audit needs a name of its own (--name)")
    model = load_model(ref, job.cache_dir, job.cache_mode, job.device)
    return [run_battery(model, ref, battery, merged, job.out, mitigation) for battery in chosen]


def write_reports(out: str | Path, jobs: list[tuple[str, str]] | None = None) -> list[Path]:
    """Every audited model's card, each grid's heatmap and table, the leaderboard of `out` and, where an audit
    mitigates another, the mitigation table (restricted to the (name, battery) `jobs` when given)."""
    from posbias.audit.card import beside, read_records, write_card, write_grid_files
    from posbias.audit.leaderboard import leaderboard_files, write_leaderboard
    from posbias.audit.mitigation_table import mitigation_files, write_mitigations
    from posbias.provenance.manifest import environment_rows

    found = read_records(out, jobs)
    if not found:
        raise InputError(f"{out}: no audit results (run `posbias audit --model ... --out {out}` first)")
    cards = [write_card(out, name, records, environment_rows(records[0]["environment"]), beside(found, name))
             for name, records in found.items()]
    for records in found.values():
        for record in records:
            if "lengths" in record["summary"]:
                write_grid_files(out, record)
    write_leaderboard(found, leaderboard_files(out))
    if any(record.get("mitigation") for records in found.values() for record in records):
        write_mitigations(out, found, mitigation_files(out))
    return cards
