"""The evaluation stage's report: the study's tables and figures from the persisted values (`steps`): the
baseline-centred tables (1, 7, 8), the de-biasing tables (2, 3), Table 4, the outcome breakdown, the first-stage
table, the dataset statistics (Tables 9 and 10), the parameter counts (Table 11), the FarRelevant figure and the
efficiency figure.

Every table reads persisted files only (per-query Parquet, statistics JSON), so it is rebuilt in
seconds after a change to its layout or to the statistics settings, without re-evaluating any run.
Each writes LaTeX (booktabs), CSV (every number, p-values included), Markdown and HTML (for the report).
"""

from __future__ import annotations

import logging

import pandas as pd

from posbias.data import statistics as stats
from posbias.io import read_json, read_qrels
from posbias.evaluation.jobs import TableJob
from posbias.evaluation.table_layouts import LAYOUTS
from posbias.names import RANDOM, RETRIEVER
from posbias.plugins import load
from posbias.reporting import dataset_tables as dataset
from posbias.reporting import outcome_table as outcomes
from posbias.reporting.columns import FINE_TUNED, ZERO_SHOT, column_header
from posbias.reporting.render import write_tables
from posbias.reporting.tables import Column, Row, Significance, as_table, build_table, significance_note

log = logging.getLogger(__name__)

TABLE4_LABEL, FIRST_STAGE_LABEL = "tab:farrelevant", "tab:first-stage"


def _write_table(table: pd.DataFrame, columns: list[Column], caption: str, label: str, outputs: dict,
                 row_header: str = "Ranker") -> None:
    write_tables(outputs, table, as_table(table, columns, caption, label, row_header))


def _seeds(n: int) -> str:
    return f"{n} seed{'s' * (n != 1)}"


def _zero_shot_labels(models: dict, shown: list[str]) -> list[str]:
    return [models[m]["label"] for m in shown if models[m].get("zero_shot")]


def _selection_note(models: dict, shown: list[str]) -> str:
    """Caption text naming the seeds trained but left out of the table (`models.<name>.excluded_seeds`)."""
    excluded = [f"{models[m]['label']}: {', '.join(map(str, models[m]['excluded_seeds']))}" for m in shown
                if models[m].get("excluded_seeds")]
    if not excluded:
        return ""
    return (f" Seeds trained but left out (excluded_seeds; their loss curves are in the checkpoints): "
            f"{'; '.join(excluded)}.")


def _not_run(model: dict) -> frozenset[str]:
    """The shown query sets a model does not rerank (`models.<name>.querysets`)."""
    return frozenset(model.get("not_run", ()))


def _not_run_note(models: dict, shown: list[str]) -> str:
    """Caption text naming the models left out of some query sets on purpose (a dash in their cells)."""
    parts = [f"{models[m]['label']} on {', '.join(models[m]['not_run'])}" for m in shown if models[m].get("not_run")]
    return f" Not run (a dash): {'; '.join(parts)}." if parts else ""


def _columns(spec: list[dict], querysets: dict) -> list[Column]:
    return [Column(c["queryset"], c["metric"], querysets[c["queryset"]]["alpha"], column_header(c),
                   c.get("setting", ZERO_SHOT)) for c in spec]


def _read_values(paths: list[str], setting: str = ZERO_SHOT) -> pd.DataFrame:
    frame = pd.concat([pd.read_parquet(p) for p in paths], ignore_index=True)
    return frame.assign(setting=setting)


def _external_rows(external: dict, columns: list[Column], gain_over=lambda spec: spec.get("baseline")) -> list[Row]:
    """Runs made elsewhere that cover at least one of the table's query sets."""
    covered = {c.queryset for c in columns}
    rows = []
    for name, spec in external.items():
        if covered & set(spec["querysets"]):
            reference = gain_over(spec)
            rows.append(Row(name, spec["label"], gain_over=reference, tests={"a": reference} if reference else {},
                            external=True))
    return rows


def baseline_table(job: TableJob) -> None:
    """Tables 1, 7 and 8: long-document rankers against their FirstP baselines."""
    spec, models, n_seeds = job.spec, job.models, job.n_seeds
    per_query = _read_values(job.averaged)
    querysets, statistics, external = job.querysets, job.statistics, job.external
    columns = _columns(spec["columns"], querysets)
    significance = Significance.from_config(statistics)
    rows = [Row(RETRIEVER, spec["retriever_label"])]
    baselines = [m for m in spec["models"] if models[m]["baseline"] == m]
    rows += [Row(m, models[m]["label"], not_run=_not_run(models[m])) for m in baselines]
    rows += [Row(m, models[m]["label"], gain_over=models[m]["baseline"], tests={"a": models[m]["baseline"]},
                 not_run=_not_run(models[m])) for m in spec["models"] if m not in baselines]
    rows += _external_rows(external, columns)
    rows += _published_rows(spec)
    table = build_table(per_query, rows, columns, significance, name=job.label)
    zero_shot = _zero_shot_labels(models, spec["models"])
    zero_shot_text = (f" Zero-shot rankers ({', '.join(zero_shot)}) are never trained: one run each." if zero_shot
                      else "")
    caption = (f"Rankers against their FirstP baselines. Per-query values are averaged over {_seeds(n_seeds)} "
               f"before testing; relative gains are over the FirstP baseline with the same backbone; "
               f"superscript a: significant difference from that baseline.{zero_shot_text}"
               f"{_not_run_note(models, spec['models'])}{_selection_note(models, spec['models'])}"
               f"{_published_note(spec)} {significance_note(table, columns, significance)}")
    _write_table(table, columns, caption, job.label, job.outputs)


def _published_rows(spec: dict) -> list[Row]:
    """`reference_rows`: published numbers typed into the config, shown below the computed rows."""
    return [Row(f"published:{i}", f"{row['label']} (published)", published=row["values"])
            for i, row in enumerate(spec.get("reference_rows", []))]


def _published_note(spec: dict) -> str:
    rows = spec.get("reference_rows", [])
    if not rows:
        return ""
    sources = "; ".join(f"{row['label']}: {row['source']}" for row in rows)
    return (f" Rows marked (published) are numbers typed into the config from their sources ({sources}), not "
            f"computed here; they take no part in gains or tests.")


def debias_table(job: TableJob) -> None:
    """Tables 2 and 3: each de-biased model under the same model trained on the original documents, with its gain
    over it and a test against it (superscript a). Runs made elsewhere (`job.external`) have no original: not
    shown."""
    models = job.models
    rows = [Row(RETRIEVER, "BM25 (retriever)")]
    for m in job.spec["models"]:
        original = models[m]["debiased_from"]
        rows.append(Row(original, models[original]["label"], not_run=_not_run(models[original])))
        rows.append(Row(m, models[m]["label"], gain_over=original, tests={"a": original}, not_run=_not_run(models[m])))
    lead = ("De-biased training: each model trained on documents cut at random word boundaries and reordered, under "
            "the same model trained on the original documents; both read the original documents at test time")
    _table_against_references(job, rows, lead, "the original model")


def ablation_table(job: TableJob) -> None:
    """Table 6: variants of one model (PARADE Attn with 1 to 6 chunks) against one of them, `spec["reference"]`:
    relative gains over it and a test against it (superscript a). Runs made elsewhere (`job.external`) are not
    variants: not shown."""
    spec, models = job.spec, job.models
    reference = spec["reference"]
    rows = [Row(RETRIEVER, "BM25 (retriever)")]
    rows += [Row(m, models[m]["label"], gain_over=None if m == reference else reference,
                 tests={} if m == reference else {"a": reference}, not_run=_not_run(models[m])) for m in spec["models"]]
    _table_against_references(job, rows, spec.get("caption", "Ablation"), models[reference]["label"])


def model_table(job: TableJob) -> None:
    """A model table in the layout it declares (`spec["layout"]`), by that layout's writer
    (`posbias.evaluation.table_layouts`)."""
    load(LAYOUTS[job.spec["layout"]].write)(job)


def _table_against_references(job: TableJob, rows: list[Row], lead: str, reference: str) -> None:
    """A table whose rows gain over, and are tested against, the reference their Row names (Tables 2, 3 and 6)."""
    columns = _columns(job.spec["columns"], job.querysets)
    significance = Significance.from_config(job.statistics)
    table = build_table(_read_values(job.averaged), rows, columns, significance, name=job.label)
    caption = (f"{lead}. Per-query values are averaged over {_seeds(job.n_seeds)} before testing; relative gains "
               f"are over {reference}; superscript a: significant difference from it."
               f"{_not_run_note(job.models, job.spec['models'])} {significance_note(table, columns, significance)}")
    _write_table(table, columns, caption, job.label, job.outputs)


def table4(job: TableJob) -> None:
    """FarRelevant, zero-shot and fine-tuned: gains over, and tests against (a), each row's own reference (MaxP by
    default, `row_references`), and tests against a long-context baseline (b). Its label is `TABLE4_LABEL`."""
    spec, models = job.spec, job.models
    finetuned = [_read_values(job.finetuned, FINE_TUNED)] if job.finetuned else []
    per_query = pd.concat([_read_values(job.averaged), *finetuned], ignore_index=True)
    columns = _columns(spec["columns"], job.querysets)
    significance = Significance.from_config(job.statistics)
    reference = spec["reference"]
    references = row_references(spec)
    second = next((m for m in spec["second_reference"] if m in spec["models"]), None)
    rows = [Row(RANDOM, "random shuffle"), Row(RETRIEVER, spec["retriever_label"])]
    for m in spec["models"]:
        own = references[m]
        tests = {"a": own} if own else {}
        if second and second != m:
            tests["b"] = second
        rows.append(Row(m, models[m]["label"], gain_over=own, tests=tests,
                        not_applicable=frozenset({FINE_TUNED}) if models[m].get("zero_shot") else frozenset(),
                        not_run=_not_run(models[m])))
    rows += _external_rows(job.external, columns, gain_over=lambda _: reference)
    table = build_table(per_query, rows, columns, significance, name=job.label)
    second_text = (f"superscript b: against {models[second]['label']}" if second
                   else "no long-context baseline configured for superscript b")
    settings = sorted({c.setting for c in columns}, reverse=True)
    setting_text = ("zero-shot: models trained on the standard training set; fine-tuned: the same models "
                    "fine-tuned on FarRelevant training queries" if FINE_TUNED in settings
                    else "zero-shot: models trained on the standard training set")
    zero_shot = _zero_shot_labels(models, spec["models"])
    if zero_shot:
        setting_text += f"; never trained, one run each: {', '.join(zero_shot)}"
        setting_text += " (N/A where fine-tuned)" if FINE_TUNED in settings else ""
    caption = (f"FarRelevant ({setting_text}). Per-query values averaged over {_seeds(job.n_seeds)}; "
               f"{_references_text(references, models, reference)}; {second_text}."
               f"{_not_run_note(models, spec['models'])}{_selection_note(models, spec['models'])} "
               f"{significance_note(table, columns, significance)}")
    _write_table(table, columns, caption, job.label, job.outputs)


def row_references(spec: dict) -> dict[str, str | None]:
    """Each Table 4 row's own reference (`row_references`, else `reference`; None: no gain and no test a).

    The study's Table 4 sets each model against its own backbone's MaxP (ELECTRA rows against MaxP (ELECTRA)),
    LongP models against MaxP (BERT). A model that is some row's reference gets no gain and no test a itself.
    """
    own = {m: spec.get("row_references", {}).get(m, spec["reference"]) for m in spec["models"]}
    referenced = {r for r in own.values() if r}
    return {m: None if m in referenced else r for m, r in own.items()}


def _references_text(references: dict[str, str | None], models: dict, default: str) -> str:
    """Caption text: which reference each row's gain and superscript a are computed against."""
    by_reference: dict[str, list[str]] = {}
    for m, r in references.items():
        if r and r != default:
            by_reference.setdefault(r, []).append(models[m]["label"])
    others = "; ".join(f"{', '.join(labels)} over {models[r]['label']}" for r, labels in by_reference.items())
    return (f"relative gains and superscript a are over {models[default]['label']}"
            f"{f', except {others}' if others else ''}; rows without a gain are references or compared with none")


def farrelevant_figure(per_seed: str, models: list[str], labels: dict, metric: str, outputs: list[str],
                       finetuned: str | None = None) -> None:
    """Figure 2: zero-shot (and, given the fine-tuned runs' `per_seed`, fine-tuned) values with the random line."""
    from posbias.reporting.figures import farrelevant_bars  # matplotlib: only the figure job pays its import

    frames = [pd.read_parquet(path) for path in (per_seed, *([finetuned] if finetuned else []))]
    frames = [frame[frame["metric"] == metric] for frame in frames]
    farrelevant_bars(frames[0], {m: labels[m] for m in models}, RANDOM, metric, outputs,
                     finetuned=frames[1] if finetuned else None)


def first_stage_table(values: list[str], spec: dict, querysets: dict, statistics: dict, outputs: dict) -> None:
    """Each first-stage retriever on each query set; the first retriever listed is the reference."""
    per_query = _read_values(values)
    columns = [Column(qs, metric, querysets[qs]["alpha"], f"{qs} {metric}")
               for qs in spec["querysets"] for metric in spec["metrics"]]
    significance = Significance.from_config(statistics)
    reference, *others = spec["retrievers"]
    rows = [Row(reference, reference)] + [Row(r, r, gain_over=reference, tests={"a": reference}) for r in others]
    table = build_table(per_query, rows, columns, significance, name=FIRST_STAGE_LABEL)
    caption = (f"First-stage retrievers, top {spec['depth']} candidates per query. Gains are over {reference}; "
               f"superscript a: significant difference from {reference}. "
               f"{significance_note(table, columns, significance)}")
    _write_table(table, columns, caption, FIRST_STAGE_LABEL, outputs, row_header="Retriever")


def outcome_table(per_seed: list[str], qrels: list[str], querysets: list[str], rel_levels: list[int],
                  alphas: list[float], spec: dict, models: dict, outputs: dict) -> None:
    """Lin et al.'s outcome breakdown of each model against its baseline, per seed; p-values corrected
    together with `spec["correction"]` (`tables.outcomes.correction`)."""
    for path, rel_level in zip(qrels, rel_levels, strict=True):
        outcomes.check_one_relevant(read_qrels(path), rel_level, path)
    frame = _read_values(per_seed)
    frame = frame[frame["queryset"].isin(querysets)]
    chosen = spec.get("models") or [m for m, s in models.items() if s["baseline"] != m]
    pairs = [(m, models[m]["baseline"]) for m in chosen if models[m]["baseline"] != m]
    table = outcomes.adjust_p_values(outcomes.build_outcome_table(frame, pairs, spec["k"]), spec["correction"])
    printed = outcomes.parts(table, {m: s["label"] for m, s in models.items()},
                             dict(zip(querysets, alphas, strict=True)))
    write_tables(outputs, table, *printed)


def dataset_tables(collections: dict[str, str], querysets: dict[str, str], tokenizer: str,
                   documents_outputs: dict, queries_outputs: dict) -> None:
    """Tables 9 and 10 from the per-collection and per-query-set statistics files."""
    documents = dataset.documents_table({name: stats.read_statistics(p) for name, p in collections.items()})
    sampled = documents["sampled"] < documents["n_documents"]
    note = (" Averages of " + ", ".join(f"{r.label} over a sample of {r.sampled}"
                                        for r in documents[sampled].itertuples()) + "." if sampled.any() else "")
    columns = [("label", "Collection"), ("n_documents", "# of documents"), ("avg_tokens", "avg. # of tokens")]
    caption = f"Document statistics; tokens of {tokenizer}, without special tokens.{note}"
    write_tables(documents_outputs, documents, dataset.as_table(documents, columns, caption, "tab:documents"))
    queries = dataset.queries_table({name: stats.read_statistics(p) for name, p in querysets.items()})
    columns = [("label", "Query set"), ("n_queries", "# of queries"), ("avg_tokens", "avg. # of tokens"),
               ("avg_positive_judgments", "avg. # of pos. judgments")]
    caption = (f"Query statistics; tokens of {tokenizer}; positive judgments (grade at least the query set's "
               f"rel_level) averaged over the judged queries.")
    write_tables(queries_outputs, queries, dataset.as_table(queries, columns, caption, "tab:queries"))


def parameter_table(checkpoints: dict[str, str], labels: dict[str, str], outputs: dict,
                    zero_shot: dict[str, dict] | None = None) -> None:
    """Table 11: each model's parameters, counted in its trained checkpoint (every group the ranker trains:
    the backbone, the head and any pretrained aggregator), or for a zero-shot model (`zero_shot`: its
    `models.<name>` block) in the ranker its pretrained weights give. Rows follow `labels`."""
    from posbias.rankers.checkpoint import load_checkpoint
    from posbias.rankers.registry import pretrained_ranker

    records = []
    for model in labels:
        ranker, _ = load_checkpoint(checkpoints[model]) if model in checkpoints else pretrained_ranker(zero_shot[model])
        counts = ranker.parameter_counts()
        records.append({"model": model, "label": labels[model], "ranker": ranker.registry_name,
                        "parameters": sum(counts.values()), "backbone": counts["backbone"],
                        "outside_backbone": sum(counts.values()) - counts["backbone"]})
        del ranker
    frame = pd.DataFrame.from_records(records, columns=["model", "label", "ranker", "parameters", "backbone",
                                                        "outside_backbone"])
    columns = [("label", "Ranker"), ("parameters", "# of parameters"), ("backbone", "backbone"),
               ("outside_backbone", "outside the backbone")]
    caption = ("Parameters per ranker, counted in its trained checkpoint (first seed; zero-shot models: their "
               "pretrained weights); outside the backbone: "
               "the head and any aggregator. Unused weights (the backbone's pooler, a Transformer aggregator's "
               "word embeddings) are not part of our rankers, so they are not counted.")
    write_tables(outputs, frame, dataset.as_table(frame, columns, caption, "tab:parameters"))


def scoring_times(infos: list[str], runs: list[list]) -> pd.Series:
    """Seconds of scoring per model: summed over its query sets (each run's `scoring_seconds`, written by the
    rerank job), averaged over its seeds. `runs` names the (model, seed, query set) of each `.run.json`."""
    frame = pd.DataFrame([{"model": model, "seed": seed, "queryset": queryset,
                           "seconds": read_json(path)["scoring_seconds"]}
                          for path, (model, seed, queryset) in zip(infos, runs, strict=True)])
    return frame.groupby(["model", "seed"])["seconds"].sum().groupby("model").mean()


def efficiency_figure(table: str, infos: list[str], runs: list[list], models: dict,
                      outputs: list[str]) -> pd.DataFrame:
    """The study's Figure 3: each Table 1 ranker's scoring time relative to its FirstP baseline against its average
    gain over that baseline (Table 1's "Avg. gain": the mean of its relative gains over the columns). Returns the
    points (model, label, relative_time, gain)."""
    from posbias.reporting.figures import efficiency_scatter  # matplotlib: only the figure job pays its import

    seconds = scoring_times(infos, runs)
    gains = pd.read_csv(table).groupby("system")["gain"].mean()  # NaN gains (baselines, N/A cells) are skipped
    shown = [m for m, spec in models.items() if spec["baseline"] != m and m in gains.index]
    untimed = [m for m in shown if not (seconds[m] > 0 and seconds[models[m]["baseline"]] > 0)]
    if untimed:  # a mock language model answers in no measurable time: no ratio to plot
        log.info("efficiency: left out, no scoring time measured: %s", ", ".join(models[m]["label"] for m in untimed))
    points = pd.DataFrame([{"model": m, "label": models[m]["label"], "gain": gains[m],
                            "relative_time": seconds[m] / seconds[models[m]["baseline"]]}
                           for m in shown if m not in untimed])
    log.info("efficiency: %s", "; ".join(f"{p.label}: time x{p.relative_time:.2f}, gain {100 * p.gain:+.1f}%"
                                         for p in points.itertuples()))
    efficiency_scatter(points, outputs)
    return points
