"""`posbias audit --export hf DIR`: an audit as the Hugging Face Hub reads evaluation results, written into DIR,
read back with huggingface_hub's own classes before DIR is put in place, and never uploaded (the user pushes DIR
with their own tools: docs/stages/audit.md, "Publishing an audit").

DIR holds

- `.eval_results/posbias-<battery>.yaml`: the Hub's evaluation-results format (`EvalResultEntry`, written with
  `eval_result_entries_to_yaml`), one entry per headline number of the battery (`HEADLINES`): its metric at the
  first, best and worst position, PSI, PSI above chance, the reach (in positions counted from 1, and in tokens where
  the battery has them) and the count of significant drops; a number the battery has not (PSI of raw scores) is left
  out. Each entry's `notes` say what the number is and what made it: the posbias version and commit, the units and
  positions, the data, the settings fingerprint (`posbias.settings.fingerprint` of the record's settings);
- `README.md`: a model card whose front matter is the `model-index` of the same numbers (built with `ModelCardData`
  and `EvalResult`), followed by a section per battery: its curve figure and its summary table;
- `posbias/<battery>.png`: the figures the card shows.

A whole card rather than a section to paste: the Hub reads the `model-index` from README.md's front matter only, and
`ModelCard.load` can then check the file the user pushes, front matter and text together. Pushing DIR whole replaces
a repository's card, so the docs show how to leave an existing card alone (`--exclude README.md`).

Ids. The Hub files an entry under a benchmark dataset (`dataset.id`, a Hub dataset registered as a benchmark, whose
`eval.yaml` declares the `task_id`s). posbias's batteries are not Hub datasets, and none is registered: the default
id, `posbias/<battery>`, names what measured the number. The Hub's docs ask for a registered benchmark, so until one
of that id exists its server-side check may refuse the entries (the card's model-index and figures show regardless;
nothing here can test the server offline). `dataset=OWNER/NAME` (`{battery}` in it is
replaced) points the entries at a benchmark the user registered. The `task_id` is `<battery>_<number>`
(`sweep_psi`, `sweep_mrr_worst`): the format holds one value per entry and no metric name, so the id says which
number it is, and stays unique under any dataset id. The model-index uses the same ids as its metric types, with
the battery as the dataset's config, so each battery stays a result of its own under any dataset id.
Refused with one line, writing nothing: an audit directory without results, a DIR holding files an export does not
write (an export replaces DIR whole), a bad dataset id, and files the library does not read back as written.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from posbias.audit.battery_settings import DECLARED
from posbias.audit.card import SUMMARY_FIELDS, TOKEN_FIELDS, cell_text, curve_plot, heatmap, reach_text, source_label
from posbias.audit.compare import audit_records
from posbias.errors import InputError
from posbias.io import atomic_directory, atomic_write
from posbias.reporting.render import markdown_table
from posbias.settings import fingerprint

DEFAULT_DATASET = "posbias/{battery}"
OPTIONS = ("dataset", "model")  # `hf?dataset=OWNER/NAME&model=NAME`
WRITES = (".eval_results", "README.md", "posbias")  # everything an export puts in DIR
FIGURES = "posbias"
# (summary key, id, what it is): the numbers exported, `{metric}` the battery's own (MRR, accuracy, score)
HEADLINES = (("reference_mean", "{slug}_first", "{metric} at the first position"),
             ("best", "{slug}_best", "{metric} at the best position"),
             ("worst", "{slug}_worst", "{metric} at the worst position"),
             ("psi", "psi", "PSI, 1 - worst/best over positions"),
             ("psi_above_chance", "psi_above_chance", "PSI above chance, (best - worst) / (best - chance)"),
             ("reach", "reach", "reach: the last position before the first significant drop (1 = first)"),
             ("reach_tokens", "reach_tokens", "reach in the model's tokens: where the needle ends at the reach "
                                              "position"),
             ("significant_drops", "significant_drops", "positions significantly below the first"))
TASK_TYPES = {"pairs": "text-ranking", "list": "text-ranking", "reader": "question-answering"}


@dataclass(frozen=True)
class Headline:
    number: str  # which number: mrr_worst, psi, ...
    id: str  # unique within the audit: <battery>_<number>
    name: str  # what it is, in words
    value: float | int | None  # None: the battery has no such number (PSI of raw scores)


def headlines(record: Mapping) -> list[Headline]:
    """Every headline number of the battery, None where it has none (NaN or missing); the reach counted from 1, as
    the card counts it, said to be a lower bound where nothing dropped (the model may read further than tested)."""
    summary, metric = record["summary"], record["metric"]
    slug = re.sub(r"[^a-z0-9]+", "_", metric.lower())
    found = []
    for key, number_id, name in HEADLINES:
        value = summary.get(key)
        if value is None or isinstance(value, bool) or (isinstance(value, float) and not math.isfinite(value)):
            value = None
        elif key == "reach":
            value = int(value) + 1
            name += " (at least: nothing dropped)" if summary.get("reach_censored") else ""
        else:
            value = int(value) if key == "significant_drops" else float(value)
        number_id = number_id.format(slug=slug)
        found.append(Headline(number_id, f"{record['battery']}_{number_id}", name.format(metric=metric), value))
    return found


def provenance(record: Mapping, positions: int) -> str:
    """What made the battery's numbers, in one line: posbias's version and commit, the units and positions, the
    data, the tests and the settings fingerprint (the same settings give the same fingerprint)."""
    environment = record.get("environment", {})
    version = environment.get("packages", {}).get("posbias") or "?"
    code = environment.get("code", {})
    commit = (code.get("commit") or "unknown")[:12] + (" with local changes" if code.get("dirty") else "")
    stats = record["settings"]["statistics"]
    text = (f"posbias {version} (commit {commit}), {record['battery']} battery: {record['n_units']} units x "
            f"{positions} positions, {source_label(record)}; {record['test']} tests, {stats['correction']}, alpha "
            f"{stats['alpha']}; settings fingerprint {settings_fingerprint(record)}")
    lengths = record["summary"].get("lengths")
    if lengths:
        text += f"; at the longest length ({max(lengths, key=float)} tokens)"
    if record.get("mitigation"):
        from posbias.audit.mitigations import describe

        text += f"; mitigated: {describe(record['mitigation'])} of {record['mitigation']['of']}"
    return text


def settings_fingerprint(record: Mapping) -> str:
    return fingerprint(settings=record["settings"])


def check_options(options: Mapping[str, str]) -> str | None:
    """What is wrong with `hf?key=value` options, or None (checked before an audit runs)."""
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    unknown = sorted(set(options) - set(OPTIONS))
    if unknown:
        return f"--export hf: unknown option {unknown[0]!r}; known: {', '.join(OPTIONS)}"
    dataset = options.get("dataset", DEFAULT_DATASET).replace("{battery}", "sweep")
    try:
        validate_repo_id(dataset)
    except HFValidationError as err:
        return f"--export hf: dataset {options.get('dataset')!r} is not a Hub dataset id ({err})"
    if "model" in options and not options["model"].strip():
        return "--export hf: model must not be empty"
    return None


def check_destination(out: Path, writes: Sequence[str], flag: str) -> None:
    """An export replaces `out` whole: refused when it holds anything an export does not write."""
    if out.exists() and not out.is_dir():
        raise InputError(f"--export {flag} {out}: not a directory")
    foreign = sorted(path.name for path in out.iterdir() if path.name not in writes) if out.is_dir() else []
    if foreign:
        raise InputError(f"--export {flag} {out}: holds {', '.join(foreign[:3])}, which an export does not write; "
                         f"give a new or empty directory (an export replaces its directory whole)")


def export_inputs(audit_dir: str | Path, out: str | Path, options: Mapping[str, str] | None, check, writes,
                  flag: str) -> tuple[Path, Path, list[dict], dict]:
    """What an export (this one, the MTEB one) starts from: the audit's records in the card's order, the destination
    checked (`check_destination`) and the options checked by `check`; refused with one line before anything is
    written."""
    options = dict(options or {})
    problem = check(options)
    if problem:
        raise InputError(problem)
    audit_dir, out = Path(audit_dir), Path(out)
    records = ordered_records(audit_dir)
    check_destination(out, writes, flag)
    return audit_dir, out, records, options


def ordered_records(audit_dir: Path) -> list[dict]:
    """The audit's battery records in the card's order (`posbias.audit.compare`'s reader)."""
    return sorted(audit_records(audit_dir).values(), key=lambda r: DECLARED[r["battery"]].card_order)


def read_curve(audit_dir: Path, record: Mapping) -> pd.DataFrame:
    path = audit_dir / f"{record['battery']}.curve.csv"
    if not path.is_file():
        raise InputError(f"{path}: missing: the battery's curve (posbias audit writes it beside {record['battery']}"
                         f".json)")
    return pd.read_csv(path)


def eval_entries(record: Mapping, positions: int, dataset: str) -> list:
    from huggingface_hub import EvalResultEntry
    from huggingface_hub.utils import HFValidationError, validate_repo_id

    made = provenance(record, positions)
    dataset_id = dataset.replace("{battery}", record["battery"])
    try:
        validate_repo_id(dataset_id)
    except HFValidationError as err:
        raise InputError(f"--export hf: dataset {dataset_id!r} is not a Hub dataset id ({err})") from None
    return [EvalResultEntry(dataset_id=dataset_id, task_id=headline.id, value=headline.value,
                            notes=f"{headline.name}. {made}") for headline in headlines(record)
            if headline.value is not None]


def model_index_results(record: Mapping, dataset: str) -> list:
    from huggingface_hub import EvalResult

    battery = record["battery"]
    title = DECLARED[battery].title.format_map(_Blank(record.get("extra", {})))
    return [EvalResult(task_type=TASK_TYPES[DECLARED[battery].capability], task_name=f"Position sensitivity: {title}",
                       dataset_type=dataset.replace("{battery}", battery), dataset_config=battery,
                       dataset_name=f"posbias {battery} ({source_label(record)})", metric_type=headline.id,
                       metric_name=headline.name, metric_value=headline.value) for headline in headlines(record)
            if headline.value is not None]


class _Blank(dict):
    """A title's `{field}` that the record's extras lack stays a plain word."""

    def __missing__(self, key):
        return key


def curve_figure(curve: pd.DataFrame, record: Mapping, path: Path) -> None:
    """The figure the audit's card shows for the battery (its curve, a grid's heatmap) as a PNG file."""
    from posbias.reporting.figure_files import save_figure

    save_figure(heatmap(curve, record) if "length" in curve else curve_plot(curve, record), [str(path)])


def _cell(key: str, summary: Mapping) -> str:
    """A summary number as the card prints it (the reach counted from 1)."""
    if key == "reach" and summary.get("reach") is not None:
        return reach_text(summary)
    return cell_text(summary.get(key), 0 if key in TOKEN_FIELDS else 3)


def battery_section(record: Mapping, curve: pd.DataFrame, figure: str) -> str:
    """A battery's part of the card: its title, figure and summary table (a grid: a column per length)."""
    summary = record["summary"]
    columns = summary.get("lengths") or {None: summary}
    header = ["", *(f"{length} tokens" if length is not None else "value" for length in columns)]
    body = [[label, *(_cell(key, each) for each in columns.values())] for key, label in SUMMARY_FIELDS
            if any(key in each for each in columns.values())]
    caption = (f"The metric suite on the {record['metric']} curve: the first position is the reference, drops are "
               f"corrected paired tests against it, intervals {record['settings']['statistics']['confidence']:.0%} "
               f"bootstraps over units, the reach counted from 1. {provenance(record, curve['position'].nunique())}.")
    title = DECLARED[record["battery"]].title.format_map(_Blank(record.get("extra", {})))
    return "\n".join([f"### {title}", "", f"![{record['battery']} curve]({figure})", "",
                      markdown_table(header, body, caption)])


def card_text(name: str, records: Sequence[Mapping], curves: Sequence[pd.DataFrame], sections: Sequence[str]
              ) -> str:
    """The card's Markdown: the verdict (the audit card's), what the numbers mean, then a section per battery."""
    from posbias.audit.verdict import verdicts

    said = " ".join(f"**{label}:** {text}"
                    for label, text in verdicts(records, {r["battery"]: c for r, c in zip(records, curves)}))
    first = records[0]
    intro = (f"posbias audited `{first['spec']}` ({first['kind']}) for position sensitivity: each battery moves the "
             f"relevant text through the positions of its input and measures the model at each position, on the "
             f"same units everywhere. PSI is 1 - worst/best over positions (0: no position matters); PSI above "
             f"chance is (best - worst) / (best - chance), comparable across metrics; the reach is the last "
             f"position before the first significant drop. The numbers are also in `.eval_results/`.")
    return "\n".join([f"# {name}", "", "## Position sensitivity (posbias audit)", "", said, "", intro, "", *sections])


def export_hub(audit_dir: str | Path, out: str | Path, options: Mapping[str, str] | None = None) -> str:
    """Write the audit in `audit_dir` (`<out>/<name>/`) as Hub evaluation results and a model card into `out`,
    checked by reading every file back with huggingface_hub; returns the line saying what was written."""
    import huggingface_hub
    import yaml
    from huggingface_hub import ModelCard, ModelCardData

    audit_dir, out, records, options = export_inputs(audit_dir, out, options, check_options, WRITES, "hf")
    dataset, name = options.get("dataset", DEFAULT_DATASET), options.get("model") or records[0]["name"]
    curves = [read_curve(audit_dir, record) for record in records]
    entries = {r["battery"]: eval_entries(r, c["position"].nunique(), dataset) for r, c in zip(records, curves)}
    results = [result for record in records for result in model_index_results(record, dataset)]
    with atomic_directory(out) as staging:
        for battery, battery_entries in entries.items():
            if battery_entries:
                with atomic_write(staging / ".eval_results" / f"posbias-{battery}.yaml") as handle:
                    yaml.safe_dump(huggingface_hub.eval_result_entries_to_yaml(battery_entries), handle,
                                   sort_keys=False, allow_unicode=True)
        (staging / FIGURES).mkdir()
        sections = []
        for record, curve in zip(records, curves):
            figure = f"{FIGURES}/{record['battery']}.png"
            curve_figure(curve, record, staging / figure)
            sections.append(battery_section(record, curve, figure))
        data = ModelCardData(model_name=name, eval_results=results, tags=["posbias", "position-bias"])
        card = ModelCard(f"---\n{data.to_yaml()}\n---\n\n{card_text(name, records, curves, sections)}\n")
        with atomic_write(staging / "README.md") as handle:
            handle.write(str(card))
        count = _validated(staging, out, entries, name, results)
    version = huggingface_hub.__version__
    return (f"hf export: {count} eval results in {out / '.eval_results'} (read back by huggingface_hub {version}), "
            f"{out / 'README.md'} (model-index of {len(results)} metrics, read back by ModelCard), "
            f"{len(records)} figures in {out / FIGURES}")


def _validated(staging: Path, out: Path, entries: Mapping[str, list], name: str, results: list) -> int:
    """Read what was written with huggingface_hub's own parsers; anything not read back as built is an error."""
    import yaml
    from huggingface_hub import ModelCard, parse_eval_result_entries

    count = 0
    for battery, built in entries.items():
        if not built:
            continue
        path = staging / ".eval_results" / f"posbias-{battery}.yaml"
        shown = out / ".eval_results" / path.name
        try:
            parsed = parse_eval_result_entries(yaml.safe_load(path.read_text(encoding="utf-8")))
        except (KeyError, TypeError, ValueError, AttributeError) as err:
            raise InputError(f"{shown}: huggingface_hub cannot read it back ({type(err).__name__}: {err}); nothing "
                             f"was exported") from None
        if parsed != built:
            raise InputError(f"{shown}: huggingface_hub reads back {len(parsed)} entries unlike the {len(built)} "
                             f"written; nothing was exported")
        count += len(parsed)
    try:
        card = ModelCard.load(staging / "README.md")
    except ValueError as err:
        raise InputError(f"{out / 'README.md'}: ModelCard cannot read its model-index ({err}); nothing was "
                         f"exported") from None
    if card.data.model_name != name or card.data.eval_results != results:
        raise InputError(f"{out / 'README.md'}: ModelCard reads back another model-index than the one written; "
                         f"nothing was exported")
    missing = [link for link in re.findall(r"!\[[^]]*\]\(([^)]+)\)", card.text) if not (staging / link).is_file()]
    if missing:
        raise InputError(f"{out / 'README.md'}: shows {missing[0]}, which was not written")
    return count
