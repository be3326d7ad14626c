"""The evaluation stage's config sections: `statistics` (the paired tests' settings the tables read), `tables` (the
study's tables: their models, columns, references, and what a table job receives) and `external_runs` (runs made
elsewhere, shown as rows of the zero-shot tables)."""

from __future__ import annotations

from pathlib import Path
from typing import Mapping

from posbias import names
from posbias.config.canonical import canonical
from posbias.config.section import ConfigError, Section, require
from posbias.config.sections.querysets import plain_querysets
from posbias.evaluation import paths
from posbias.evaluation.table_layouts import LAYOUTS, with_layouts
from posbias.plugins import load
from posbias.rankers import catalog
from posbias.reporting.columns import FINE_TUNED, column_header


STATISTICS = Section("statistics", Path(__file__).with_name("statistics.schema.yaml"))


def model_tables(tables: Mapping, layout: str | None = None) -> list[str]:
    """The names of the tables with a layout (`tables.<name>.layout`, one of `posbias.evaluation.table_layouts`;
    defaulted by its schema), of `layout` or of any, sorted."""
    return sorted(name for name, spec in tables.items()
                  if "layout" in spec and (layout is None or spec["layout"] == layout))


def model_tables_by_layout(tables: Mapping) -> list[str]:
    """The model tables, layout by layout in the layouts' declared order (`rule all`'s), each layout's sorted."""
    return [table for layout in LAYOUTS for table in model_tables(tables, layout)]


class Tables(dict):
    """`CFG.tables`: name -> its block, and what a table job receives."""

    def __init__(self, cfg):
        super().__init__(cfg.data["tables"])
        self._cfg = cfg

    def of_layout(self, layout: str | None = None) -> list[str]:
        """The model tables of a layout (or of any), sorted: rule `model_table` writes each."""
        return model_tables(self, layout)

    def by_layout(self) -> list[str]:
        """The model tables, layout by layout in the layouts' order (`rule all`'s)."""
        return model_tables_by_layout(self)

    @property
    def outcome_querysets(self) -> list[str]:
        return list(self.get("outcomes", {}).get("querysets", []))

    def querysets(self, table: str, setting: str = "zero-shot") -> list[str]:
        want_finetuned = setting == FINE_TUNED
        return sorted({c["queryset"] for c in self[table]["columns"]
                       if (c.get("setting") == FINE_TUNED) == want_finetuned})

    def systems(self, queryset: str, setting: str = paths.ZERO_SHOT_VALUES) -> list[tuple[str, int]]:
        """(system, seed) pairs a query set's tables compare: the retriever and random rows, every model with
        its seeds (`CFG.models.seeds`), and (zero-shot only) the runs made elsewhere for it. The fine-tuned setting
        (`setting`: a directory of `posbias.evaluation.paths`) has no zero-shot models."""
        cfg = self._cfg
        pairs = [(names.RETRIEVER, 0)] + [(names.RANDOM, s) for s in cfg.training.seeds]
        # the zero-shot models are never fine-tuned
        models = cfg.models.trained if setting == paths.FINETUNED_VALUES else list(cfg.models)
        pairs += [(m, s) for m in models if cfg.models.evaluates(m, queryset) for s in cfg.models.seeds(m)]
        if setting == paths.ZERO_SHOT_VALUES:
            pairs += [(n, 0) for n, spec in cfg.external_runs.items() if queryset in spec["runs"]]
        return pairs

    def params(self, table: str) -> dict:
        """What a table job needs: its spec, labels and baselines, its query sets' thresholds, the test recipe.
        Only what the table shows, so changing another query set or table leaves it alone."""
        cfg, spec = self._cfg, self[table]
        models = cfg.models
        shown = {c["queryset"] for c in spec["columns"]}
        return canonical({
            "spec": spec,
            "models": {m: {"label": models[m].label, "baseline": models[m].baseline,
                           "zero_shot": models[m].zero_shot, "excluded_seeds": list(models[m].excluded_seeds),
                           "not_run": sorted(q for q in shown if not models.evaluates(m, q)),
                           **({"debiased_from": models[m].debias["original"]} if models[m].debias else {})}
                       for m in self._systems(spec)},
            "external": {n: {"label": s["label"], "baseline": s.get("baseline"), "querysets": sorted(s["runs"])}
                         for n, s in cfg.external_runs.items() if set(s["runs"]) & shown},
            "querysets": {q: {"alpha": cfg.querysets[q].alpha} for q in sorted(shown)},
            "n_seeds": len(cfg.training.seeds),
            "statistics": cfg.data["statistics"],
        })

    def outcome_params(self) -> dict:
        """What the outcome table's job needs (`tables.outcomes`): its query sets with their relevance levels and
        alphas, its spec, and every model's label and baseline."""
        cfg, querysets = self._cfg, self.outcome_querysets
        return {"querysets": querysets,
                "rel_levels": [cfg.querysets[q].rel_level for q in querysets],
                "alphas": [cfg.querysets[q].alpha for q in querysets],
                "spec": canonical(self.get("outcomes")),
                "models": canonical({m: {"label": s.label, "baseline": s.baseline} for m, s in cfg.models.items()})}

    def first_stage_params(self) -> dict:
        """What the first-stage table's job needs (`tables.first_stage`): its spec, its query sets' alphas and the
        test recipe."""
        cfg, spec = self._cfg, self.get("first_stage", {})
        return {"spec": canonical(self.get("first_stage")),
                "querysets": canonical({q: {"alpha": cfg.querysets[q].alpha} for q in spec.get("querysets", [])}),
                "statistics": canonical(cfg.data["statistics"])}

    def table11_params(self) -> dict:
        """What Table 11's job needs (`tables.table11`): its trained models (each read from its first seed's
        checkpoint, in this order), its zero-shot models' blocks, and every shown model's label."""
        models, shown = self._cfg.models, self["table11"]["models"]
        trained = [m for m in shown if m in models.trained]
        return {"trained": trained, "seeds": [models.seeds(m)[0] for m in trained],
                "zero_shot": {m: models.params(m) for m in shown if m in models.zero_shot},
                "labels": {m: models[m].label for m in shown}}

    def dataset_stats_params(self) -> dict:
        """What Tables 9 and 10 and their statistics jobs need (`tables.dataset_stats`): the query sets, their
        collections (each once, in the query sets' order), the tokenizer, the documents sampled, and each query
        set's relevance level."""
        cfg, spec = self._cfg, self["dataset_stats"]
        querysets = list(spec["querysets"])
        return {"querysets": querysets,
                "collections": list(dict.fromkeys(cfg.querysets[q].collection for q in querysets)),
                "tokenizer": spec["tokenizer"], "sample": spec.get("sample_documents"),
                "rel_levels": {q: cfg.querysets[q].rel_level for q in querysets}}

    def farrelevant_figure_params(self) -> dict:
        """What the FarRelevant figure's job needs: Table 4's models, every model's label, its first metric."""
        spec = self["table4"]
        return {"models": spec["models"], "labels": {m: s.label for m, s in self._cfg.models.items()},
                "metric": spec["columns"][0]["metric"]}

    def efficiency_runs(self) -> list[tuple[str, int, str]]:
        """(model, seed, query set) of every run the efficiency figure (the study's Figure 3) times: Table 1's
        models and their baselines on Table 1's zero-shot query sets that are reranked directly (a pooled one by
        its members; cross-validated ones are reranked by fold models, not by the checkpoint Table 1 names)."""
        if "table1" not in self:
            return []
        cfg, shown = self._cfg, set()
        for qs in self.querysets("table1"):
            shown |= set(cfg.querysets[qs].pool) if cfg.querysets[qs].pooled else {qs}
        querysets = [qs for qs in cfg.rerank.direct if qs in shown]
        return [(m, s, qs) for m in self.params("table1")["models"] for s in cfg.models.seeds(m)
                for qs in querysets if cfg.models[m].reranks(qs)]

    def _systems(self, spec: Mapping) -> list[str]:
        """The models a table shows or compares with: its rows, their baselines, Table 4's references and the
        originals of de-biased models."""
        models = self._cfg.models
        shown = [m for m in [*spec["models"], *spec.get("second_reference", [])] if m in models]
        originals = [models[m].debias["original"] for m in shown if models[m].debias]
        return sorted({*shown, *originals, *(models[m].baseline for m in [*shown, *originals])})


def derive_tables(cfg: dict) -> None:
    """A table without `models` shows every configured model where its layout says so (sorted: the order of the
    models section must not move rows or rerun the job); Table 11 counts parameters, so a listwise ranker (which
    has none) is left out."""
    every_model = [t for t, spec in cfg["tables"].items()
                   if "layout" in spec and LAYOUTS[spec["layout"]].every_model_by_default]
    for table in (*sorted(every_model), "table11"):
        if table in cfg["tables"]:
            shown = [m for m, spec in cfg["models"].items()
                     if table != "table11" or spec["ranker"] not in catalog.LISTWISE]
            cfg["tables"][table].setdefault("models", sorted(shown))


def check_tables(cfg: dict, warnings: list[str]) -> None:
    models, querysets, tables = cfg["models"], cfg["querysets"], cfg["tables"]
    evaluated = [*cfg["rerank"]["querysets"], *(n for n, s in querysets.items() if "pool" in s)]
    finetuned = (cfg.get("finetuning") or {}).get("querysets", [])
    for table in ("table1", "table4", *(t for t in model_tables_by_layout(tables) if t != "table1")):
        spec = tables.get(table)
        if spec is None:
            continue
        if len(set(spec["models"])) != len(spec["models"]):
            raise ConfigError(f"tables.{table}.models: lists a model twice")
        for m in spec["models"]:
            require(models, m, f"tables.{table}.models", "a configured model")
        layout = LAYOUTS[spec["layout"]] if "layout" in spec else None
        if layout and layout.check:
            load(layout.check)(table, spec, cfg)
        headers = []
        for i, column in enumerate(spec["columns"]):
            key, qs = f"tables.{table}.columns[{i}]", column["queryset"]
            require(evaluated, qs, f"{key}.queryset", "in rerank.querysets or a pooled query set")
            if column["metric"] not in querysets[qs]["metrics"]:
                raise ConfigError(f"{key}.metric: {column['metric']!r} is not in querysets.{qs}.metrics")
            if column.get("setting") == FINE_TUNED and qs not in finetuned:
                raise ConfigError(f"{key}.setting: fine-tuned needs {qs!r} in finetuning.querysets")
            header = column_header(column)
            if header in headers:
                raise ConfigError(f"{key}.header: {header!r} is also the header of "
                                  f"tables.{table}.columns[{headers.index(header)}]")
            headers.append(header)
        if "retriever_label" in spec and spec["retriever_label"] in {models[m]["label"] for m in spec["models"]}:
            raise ConfigError(f"tables.{table}.retriever_label: {spec['retriever_label']!r} is also a model's label")
        for i, row in enumerate(spec.get("reference_rows", [])):
            unknown = sorted(set(row["values"]) - set(headers))
            if unknown:
                raise ConfigError(f"tables.{table}.reference_rows[{i}].values: {unknown} are not headers of "
                                  f"tables.{table}.columns")
    spec4 = tables.get("table4")
    if spec4:
        require(spec4["models"], spec4["reference"], "tables.table4.reference", "among tables.table4.models")
        references = {"tables.table4.reference": spec4["reference"]}
        for row, reference in spec4["row_references"].items():
            require(spec4["models"], row, "tables.table4.row_references", "among tables.table4.models")
            if reference is not None:
                require(spec4["models"], reference, f"tables.table4.row_references.{row}",
                         "among tables.table4.models")
                references[f"tables.table4.row_references.{row}"] = reference
        for key, reference in references.items():
            if models[reference].get("zero_shot") and finetuned:
                raise ConfigError(f"{key}: {reference!r} is zero-shot, so it has no fine-tuned value to compute the "
                                  f"fine-tuned gains over")
    outcomes = tables.get("outcomes")
    if outcomes:
        for qs in outcomes["querysets"]:
            require(cfg["rerank"]["querysets"], qs, "tables.outcomes.querysets", "in rerank.querysets")
            if outcomes["k"] >= querysets[qs]["depth"]:
                # Legal (runs made elsewhere have other candidates), but our rankers would tie on case (2).
                warnings.append(f"tables.outcomes.k: {outcomes['k']} is not below querysets.{qs}.depth "
                                f"({querysets[qs]['depth']}); rankers reordering the same candidates all find the "
                                f"relevant document in the top k or all miss it, so case (2) stays empty")
        for m in outcomes.get("models", []):
            require(models, m, "tables.outcomes.models", "a configured model")
    for qs in tables.get("dataset_stats", {}).get("querysets", []):
        require(plain_querysets(cfg), qs, "tables.dataset_stats.querysets", "a (not pooled) key of querysets")
    for m in tables.get("table11", {}).get("models", []):
        require(models, m, "tables.table11.models", "a configured model")
        if models[m]["ranker"] in catalog.LISTWISE:
            raise ConfigError(f"tables.table11.models: {m!r} ranks through a language model and has no parameters "
                              f"of its own to count")


TABLES = Section("tables", Path(__file__).with_name("tables.schema.yaml"), check=check_tables,
                 derive=derive_tables, accessor=Tables, complete_schema=with_layouts)


def check_external_runs(cfg: dict, warnings: list[str]) -> None:
    for name, spec in cfg.get("external_runs", {}).items():
        if name in cfg["models"]:
            raise ConfigError(f"external_runs.{name}: the name is already a model's")
        for qs in spec["runs"]:
            require(cfg["rerank"]["querysets"], qs, f"external_runs.{name}.runs", "in rerank.querysets")
        if "baseline" in spec:
            require(cfg["models"], spec["baseline"], f"external_runs.{name}.baseline", "a configured model")
    labels = {m["label"]: f"models.{n}" for n, m in cfg["models"].items()}
    for name, spec in cfg.get("external_runs", {}).items():
        if spec["label"] in labels:
            raise ConfigError(f"external_runs.{name}.label: {spec['label']!r} is also the label of "
                              f"{labels[spec['label']]} (table rows would be ambiguous)")
        labels[spec["label"]] = f"external_runs.{name}"


EXTERNAL_RUNS = Section("external_runs", Path(__file__).with_name("external_runs.schema.yaml"),
                        check=check_external_runs,
                  accessor=lambda cfg: cfg.data.get("external_runs", {}))


SECTIONS = (STATISTICS, TABLES, EXTERNAL_RUNS)
