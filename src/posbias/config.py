"""The one config layer: read, merge, validate, cross-check and derive, for the workflow and the CLI alike.

    cfg = load_config("config/paper/robust04.yaml")       # a file (its `base:` files first)
    cfg = prepare(data)                                     # an already merged mapping (tests, Snakemake)

`prepare` validates against the schema that ships with the package (`config.schema.yaml`), fills its
defaults, makes listwise rankers (RankGPT) zero-shot, and runs every
cross-check; each problem is a `ConfigError` whose message starts with the key it is about. The
returned `Config` holds typed sections and everything the workflow derives from them: the job lists,
the token stores and what each job receives through `params:`. Those params are `canonical` (sorted
keys, integral floats as ints), so a config that only differs in key order or number spelling never
reruns a job.

Layering: a config may name `base:` files (one or a list, relative to the file naming them). They are
merged first, in order, and the file itself on top: mappings merge key by key, anything else (lists
included) is replaced. The paper configs share their models, training recipe and MS MARCO collection
through `config/paper/common.yaml` this way.
"""

from __future__ import annotations

import copy
import dataclasses
import re
from functools import cached_property, lru_cache
from pathlib import Path
from typing import Any, Iterable, Mapping

import yaml

from posbias import names
from posbias.errors import InputError
from posbias.rankers import catalog
from posbias.reporting.columns import FINE_TUNED, column_header

SCHEMA_PATH = Path(__file__).with_name("config.schema.yaml")
GENERATED_COLLECTIONS = ("synthetic", "farrelevant", "sweep")  # by the generator, FarRelevant and sweep builders
SWEEP_COLLECTION = "sweep"  # the position sweep's collection (posbias.sweep; rules/sweep.smk)
# What the sweep reads by default: the embedded generator's passage collection, FarRelevant's source.
GENERATED_PASSAGES = {"docs": "results/data/synthetic-passages/docs.jsonl",
                      "qrels": "results/data/synthetic-passages/qrels/farrelevant.txt"}
SYNTHETIC_QUERYSETS = ("train", "dev", "test")  # what the embedded generator writes
BASELINE_TABLE_NAMES = ("table1", "table5", "table7", "table8")  # one layout, different columns
DEBIAS_TABLE_NAMES = ("table2", "table3")  # de-biased models against the same models trained on original documents
ABLATION_TABLE_NAMES = ("table6",)  # variants of one model against one of them
ZERO_SHOT_SEED = 0  # the one "seed" of a zero-shot model's runs (results/runs/<queryset>/<model>/seed0.run)


class ConfigError(InputError):
    """A config problem; the message starts with the file or the key it is about."""


# --- reading and merging -------------------------------------------------------------------------


def read_config_file(path: str | Path) -> dict:
    """One YAML file as a mapping; a syntax error names the file and line."""
    path = Path(path)
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise ConfigError(f"{path}: no such config file") from None
    except (OSError, UnicodeDecodeError) as err:
        raise ConfigError(f"{path}: cannot be read as a UTF-8 config file ({err})") from None
    try:
        data = yaml.safe_load(text)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"{path}:{mark.line + 1}" if mark else str(path)
        problem = getattr(err, "problem", None) or str(err).splitlines()[0]
        raise ConfigError(f"{where}: YAML syntax error: {problem}") from None
    if not isinstance(data, dict):
        raise ConfigError(f"{path}: a config is a YAML mapping of sections, got {type(data).__name__}")
    return data


# Mappings whose keys are alternatives (one data source or another): a layer that sets one replaces the whole
# mapping, so real Re-DocRED files layered onto the demo config do not keep its synthetic world beside them.
REPLACED_WHOLE = {("probes", "redocred")}


def merge(base: Mapping, top: Mapping, _path: tuple[str, ...] = ()) -> dict:
    """`top` over `base`: mappings merge key by key (but those of `REPLACED_WHOLE`), anything else is replaced."""
    merged = copy.deepcopy(dict(base))
    for key, value in top.items():
        if ((*_path, key) not in REPLACED_WHOLE and isinstance(value, Mapping)
                and isinstance(merged.get(key), Mapping)):
            merged[key] = merge(merged[key], value, (*_path, key))
        else:
            merged[key] = copy.deepcopy(value)
    return merged


def read_layered(path: str | Path, _seen: tuple[Path, ...] = (), _merged: set[Path] | None = None) -> dict:
    """A config file with its `base:` files merged underneath (relative to the file that names them). A base
    that two bases share is merged once, first, so the second cannot undo what the first changed in it."""
    path, merged_files = Path(path), set() if _merged is None else _merged
    if path.resolve() in _seen:
        raise ConfigError(f"{path}: base: files include each other ({' -> '.join(map(str, [*_seen, path]))})")
    data = read_config_file(path)
    bases = data.pop("base", [])
    if isinstance(bases, str):
        bases = [bases]
    if not isinstance(bases, list) or not all(isinstance(b, str) for b in bases):
        raise ConfigError(f"{path}: base: a file name or a list of file names")
    merged: dict = {}
    for base in bases:
        base_path = path.parent / base
        if base_path.resolve() not in merged_files:
            merged = merge(merged, read_layered(base_path, (*_seen, path.resolve()), merged_files))
    merged_files.add(path.resolve())
    return merge(merged, data)


def load_config(*paths: str | Path, overrides: Mapping | None = None) -> "Config":
    """Config files merged in order (each with its bases), `overrides` on top, then `prepare`d."""
    if not paths:
        raise ConfigError("no config file given")
    data: dict = {}
    for path in paths:
        data = merge(data, read_layered(path))
    return prepare(merge(data, overrides or {}))


# --- schema --------------------------------------------------------------------------------------


@lru_cache(maxsize=1)
def _parsed_schema() -> dict:
    from posbias.probes.declarations import with_probes

    # the rankers' and the probes' names come from their declarations (posbias.rankers, posbias.probes)
    return with_probes(catalog.with_rankers(yaml.safe_load(SCHEMA_PATH.read_text(encoding="utf-8"))))


def _schema() -> dict:
    """The schema (parsed once per process; a copy, because validation must not change it)."""
    return copy.deepcopy(_parsed_schema())


def validate(data: dict) -> dict:
    """A copy of `data` checked against the schema, with its defaults filled in."""
    from jsonschema import Draft202012Validator, validators
    from jsonschema.exceptions import best_match

    def fill_defaults(validator, properties, instance, schema):
        if isinstance(instance, dict):
            for key, subschema in properties.items():
                if "default" in subschema and key not in instance:
                    instance[key] = copy.deepcopy(subschema["default"])
        yield from Draft202012Validator.VALIDATORS["properties"](validator, properties, instance, schema)

    Validator = validators.extend(Draft202012Validator, {"properties": fill_defaults})
    data = copy.deepcopy(data)
    error = best_match(Validator(_schema()).iter_errors(data))
    if error is not None:
        raise ConfigError(_schema_problem(error))
    return data


def _key_path(parts: Iterable) -> str:
    return "".join(f"[{p}]" if isinstance(p, int) else f".{p}" for p in parts).lstrip(".")


def _schema_problem(error) -> str:
    """`key.path: problem` of a jsonschema error; an unknown key is named with the keys known there (jsonschema
    only says that it matches no pattern)."""
    if error.validator == "additionalProperties" and isinstance(error.instance, dict):
        known = error.schema.get("properties", {})
        patterns = error.schema.get("patternProperties", {})
        unknown = [name for name in error.instance
                   if name not in known and not any(re.search(pattern, name) for pattern in patterns)]
        if unknown:
            return f"{_key_path([*error.absolute_path, unknown[0]])}: unknown key; known: {', '.join(sorted(known))}"
    return f"{_key_path(error.absolute_path) or '(top level)'}: {error.message}"


# --- canonical params ----------------------------------------------------------------------------


def canonical(value: Any) -> Any:
    """`value` with mappings in sorted key order and integral floats as ints, recursively.

    Snakemake compares a job's params by their printed form, so `{b: 1, a: 2.0}` and `{a: 2, b: 1}`
    would otherwise count as a change and rerun the job."""
    if isinstance(value, Mapping):
        return {str(k): canonical(value[k]) for k in sorted(value, key=str)}
    if isinstance(value, (list, tuple)):
        return [canonical(v) for v in value]
    if isinstance(value, float) and value.is_integer():
        return int(value)
    return value


# --- typed sections ------------------------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class QuerySet:
    name: str
    metrics: tuple[str, ...]
    alpha: float
    rel_level: int
    collection: str | None = None  # None for a pooled query set
    depth: int | None = None
    retriever: str | None = None
    source: dict | None = None
    folds: list | str | None = None
    candidates: str | None = None  # a given run instead of retrieval
    pool: tuple[str, ...] = ()  # member query sets whose judged queries this one pools

    @property
    def pooled(self) -> bool:
        return bool(self.pool)

    @classmethod
    def from_spec(cls, name: str, spec: Mapping) -> "QuerySet":
        return cls(name=name, metrics=tuple(spec["metrics"]), alpha=spec["alpha"], rel_level=spec["rel_level"],
                   collection=spec.get("collection"), depth=spec.get("depth") if "pool" not in spec else None,
                   retriever=spec.get("retriever") if "pool" not in spec else None, source=spec.get("source"),
                   folds=spec.get("folds"), candidates=spec.get("candidates"), pool=tuple(spec.get("pool", ())))


@dataclasses.dataclass(frozen=True)
class Model:
    name: str
    label: str
    ranker: str
    baseline: str
    lr: float | None  # None for a listwise ranker (never trained)
    head_lr: float | None
    args: dict
    training: dict  # this model's overrides of the training recipe
    aggregator_lr: float | None = None  # a pretrained aggregator's (None: head_lr)
    zero_shot: bool = False  # never trained: one run per query set, from the pretrained weights
    own_seeds: tuple[int, ...] | None = None  # `models.<name>.seeds`, instead of training.seeds
    excluded_seeds: tuple[int, ...] = ()  # trained, but left out of the tables
    querysets: tuple[str, ...] | None = None  # `models.<name>.querysets`: the only ones it reranks (None: all)
    debias: dict | None = None  # `models.<name>.debias`: trained on de-biased documents (original, n_splits, seed)

    @classmethod
    def from_spec(cls, name: str, spec: Mapping) -> "Model":
        return cls(name=name, label=spec["label"], ranker=spec["ranker"], baseline=spec["baseline"],
                   lr=spec.get("lr"), head_lr=spec.get("head_lr"), args=dict(spec["args"]),
                   training=dict(spec.get("training", {})), aggregator_lr=spec.get("aggregator_lr"),
                   zero_shot=bool(spec.get("zero_shot", False)),
                   own_seeds=tuple(spec["seeds"]) if "seeds" in spec else None,
                   excluded_seeds=tuple(spec.get("excluded_seeds", ())),
                   querysets=tuple(spec["querysets"]) if "querysets" in spec else None,
                   debias=dict(spec["debias"]) if "debias" in spec else None)

    @property
    def listwise(self) -> bool:
        """Ranks through a language model (RankGPT): no torch module, no token store, no training."""
        return self.ranker in catalog.LISTWISE

    def reranks(self, queryset: str) -> bool:
        return self.querysets is None or queryset in self.querysets

    def trained_seeds(self, seeds: list[int]) -> list[int]:
        """The seeds this model is trained with: its own list, else training.seeds (none when zero-shot)."""
        return [] if self.zero_shot else list(self.own_seeds if self.own_seeds is not None else seeds)

    def seeds(self, seeds: list[int]) -> list[int]:
        """The seeds the tables read: the trained ones but the excluded ones, or ZERO_SHOT_SEED alone for a
        zero-shot model (its pretrained weights give one run, as the retriever's candidates do)."""
        if self.zero_shot:
            return [ZERO_SHOT_SEED]
        return [s for s in self.trained_seeds(seeds) if s not in self.excluded_seeds]

    def learning_rates(self) -> dict:
        """The learning rates a training job receives (`posbias.training.recipe.TrainingSettings`)."""
        return learning_rates(self.__dict__)


def debiased_name(collection: str, n_splits: int, seed: int) -> str:
    """The name of a collection's de-biased copy (its directory under results/data and results/tokens)."""
    return f"{collection}-debiased-k{n_splits}-seed{seed}"


def learning_rates(model: Mapping) -> dict:
    """A `models.<name>` block's learning rates, as training settings (`aggregator_lr` only where set, so
    the params of models without one do not change)."""
    rates = {"lr": model["lr"], "head_lr": model["head_lr"]}
    if model.get("aggregator_lr") is not None:
        rates["aggregator_lr"] = model["aggregator_lr"]
    return rates


def tokenizer_key(name: str) -> str:
    """A path component for a tokenizer (a hub name, a directory or offline:...)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_.") or "tokenizer"


def tokenizer_name(args: Mapping) -> str:
    """The tokenizer a ranker reads with: its backbone's, unless `args.tokenizer` names another (MOSAIC BERT
    ships none of its own and reads bert-base-uncased tokens)."""
    return args.get("tokenizer", args["backbone"])


def training_recipe(training: Mapping, *overrides: Mapping | None) -> dict:
    """The `training` section as a job's recipe: without the seed list and the query set (adding a seed must
    not retrain the others), with each of `overrides` on top in order."""
    recipe = {k: v for k, v in training.items() if k not in ("seeds", "queryset")}
    for layer in overrides:
        recipe.update(layer or {})
    return canonical(recipe)


# --- the prepared config -------------------------------------------------------------------------


class Config:
    """A validated, cross-checked config and what the workflow derives from it."""

    def __init__(self, data: dict, warnings: list[str]):
        self.data = data
        self.warnings = warnings
        self.querysets = {n: QuerySet.from_spec(n, s) for n, s in data["querysets"].items()}
        self.models = {n: Model.from_spec(n, s) for n, s in sorted(data["models"].items())}
        self.collections: dict = data.get("collections", {})
        self.retrievers: dict = data["retrievers"]
        self.tables: dict = data["tables"]
        self.external_runs: dict = data.get("external_runs", {})
        self.finetuning: dict | None = data.get("finetuning")
        self.seeds: list[int] = list(data["training"]["seeds"])
        self.train_queryset: str = data["training"]["queryset"]
        self.rerank_querysets: list[str] = list(data["rerank"]["querysets"])
        self.cv_querysets: list[str] = list(data.get("cross_validation", {}).get("querysets", []))
        self.finetuned_querysets: list[str] = list(self.finetuning["querysets"]) if self.finetuning else []
        self.outcome_querysets: list[str] = list(self.tables.get("outcomes", {}).get("querysets", []))
        self.far_train_queryset: str | None = data.get("farrelevant", {}).get("train_queryset")
        self.far_source: dict = far_source(data)  # kind synthetic: built by rules/data.smk, else rules/farrelevant.smk
        self.experiment: str | None = data.get("experiment")

    # names
    @property
    def model_names(self) -> list[str]:
        return list(self.models)

    @property
    def trained_models(self) -> list[str]:
        """Models with train jobs (one checkpoint per seed); the others are zero-shot."""
        return [m for m, spec in self.models.items() if not spec.zero_shot]

    @property
    def zero_shot_models(self) -> list[str]:
        """Zero-shot models scored by a torch module from pretrained weights (the listwise ones are not)."""
        return [m for m, spec in self.models.items() if spec.zero_shot and not spec.listwise]

    @property
    def listwise_models(self) -> list[str]:
        """Models ranking through a language model (RankGPT); zero-shot too."""
        return [m for m, spec in self.models.items() if spec.listwise]

    def reranked_querysets(self, model: str) -> list[str]:
        """The query sets of rerank.querysets a model reranks (`models.<name>.querysets`, default all)."""
        return [qs for qs in self.rerank_querysets if self.models[model].reranks(qs)]

    def evaluates(self, model: str, queryset: str) -> bool:
        """Whether a model has values on a query set: one it reranks, or a pool of such query sets only."""
        qs = self.querysets[queryset]
        return all(map(self.models[model].reranks, qs.pool)) if qs.pooled else self.models[model].reranks(queryset)

    def model_seeds(self, model: str) -> list[int]:
        """The seeds of a model's runs that the tables read (`Model.seeds`)."""
        return self.models[model].seeds(self.seeds)

    @property
    def excluded_checkpoints(self) -> list[tuple[str, int]]:
        """(model, seed) of the seeds trained but left out of the tables: built anyway, so every seed's loss
        curve exists."""
        return [(m, s) for m, spec in self.models.items() for s in spec.excluded_seeds]

    @property
    def direct_querysets(self) -> list[str]:
        """Query sets each trained checkpoint reranks directly (cross-validated ones go fold by fold)."""
        return [qs for qs in self.rerank_querysets if qs not in self.cv_querysets]

    @property
    def checkpoint_job_models(self) -> list[str]:
        """Trained models whose checkpoints rerank all their direct query sets in one job
        (`rerank.jobs: per_checkpoint`): those that rerank every direct query set. The others, and every model
        under the default `per_queryset`, get a job per (query set, checkpoint)."""
        if self.data["rerank"].get("jobs", "per_queryset") != "per_checkpoint" or not self.direct_querysets:
            return []
        return [m for m in self.trained_models if all(map(self.models[m].reranks, self.direct_querysets))]

    @property
    def zero_shot_job_models(self) -> list[str]:
        """Zero-shot models that score all the reranked query sets in one job under `rerank.jobs: per_checkpoint`
        (rule rerank_zero_shot_model: one process start and model load, as a checkpoint's job); otherwise, and
        for a model that skips some query set, one job per query set."""
        if self.data["rerank"].get("jobs", "per_queryset") != "per_checkpoint" or not self.rerank_querysets:
            return []
        return [m for m in self.zero_shot_models if all(map(self.models[m].reranks, self.rerank_querysets))]

    @property
    def pooled_querysets(self) -> list[str]:
        return [n for n, q in self.querysets.items() if q.pooled]

    @property
    def evaluated_querysets(self) -> list[str]:
        """Query sets with per-query values of every system: the reranked ones and the pools of them."""
        return [*self.rerank_querysets, *self.pooled_querysets]

    def retrievers_of_kind(self, kind: str) -> list[str]:
        return [r for r, s in self.retrievers.items() if s["kind"] == kind]

    @property
    def baseline_tables(self) -> list[str]:
        return [t for t in BASELINE_TABLE_NAMES if t in self.tables]

    @property
    def debias_tables(self) -> list[str]:
        return [t for t in DEBIAS_TABLE_NAMES if t in self.tables]

    @property
    def ablation_tables(self) -> list[str]:
        return [t for t in ABLATION_TABLE_NAMES if t in self.tables]

    @property
    def far_queryset(self) -> str:
        """The FarRelevant test query set (at most one besides farrelevant.train_queryset)."""
        return next((n for n, q in self.querysets.items() if q.collection == "farrelevant"
                     and n != self.far_train_queryset), "farrelevant")

    # the position sweep and the position breakdown (posbias.sweep)
    @property
    def sweep_queryset(self) -> str | None:
        """The query set of the sweep collection, when a `sweep` section builds one."""
        return next((n for n, q in self.querysets.items() if q.collection == SWEEP_COLLECTION), None)

    @property
    def sweep_models(self) -> list[str]:
        """The sweep report's models: `sweep.models`, else every model that reranks the sweep query set."""
        qs = self.sweep_queryset
        if qs is None or qs not in self.rerank_querysets:
            return []
        shown = self.data["sweep"].get("models") or [m for m in self.models if self.models[m].reranks(qs)]
        first = [m for m in self.tables["table1"]["models"] if m in shown]  # Table 1's order, then the rest
        return first + [m for m in shown if m not in first]

    def positions_file(self, queryset: str) -> str:
        """The true positions a generated collection writes for a query set (qid, start token, ...)."""
        return f"results/data/{self.querysets[queryset].collection}/positions/{queryset}.tsv"

    @property
    def position_breakdown_models(self) -> list[str]:
        """The breakdown's rows: `tables.position_breakdown.models`, else Table 1's models that rerank its query
        set."""
        spec = self.tables.get("position_breakdown")
        if not spec:
            return []
        return list(spec.get("models") or [m for m in self.tables["table1"]["models"]
                                           if self.models[m].reranks(spec["queryset"])])

    @property
    def results_dir(self) -> str:
        """Where this experiment's tables and figures go: `results/`, or `results/<experiment>/`."""
        return f"results/{self.experiment}" if self.experiment else "results"

    # token stores
    @cached_property
    def tokenizers(self) -> dict[str, dict]:
        """One token store per ranker tokenizer, capped at the longest document budget of the models that share
        it (so FirstP and MaxP on one backbone read the same store)."""
        stores: dict[str, dict] = {}
        for model in self.models.values():
            if model.listwise:
                continue  # reads document texts, not a token store
            name = tokenizer_name(model.args)
            entry = stores.setdefault(tokenizer_key(name), {"name": name, "cap": 0, "trust_remote_code": False})
            entry["cap"] = max(entry["cap"], model.args["max_doc_tokens"])
            entry["trust_remote_code"] |= bool(model.args.get("trust_remote_code"))
        return stores

    # de-biased training (the study's RQ3)
    @cached_property
    def debiased_collections(self) -> dict[str, dict]:
        """The de-biased copies of the training collection that models train on (`models.<name>.debias`):
        name -> {base, n_splits, seed}; one copy per distinct (n_splits, seed)."""
        copies = {}
        for model in self.models.values():
            if model.debias:
                base = self.querysets[self.train_queryset].collection
                n_splits, seed = model.debias.get("n_splits", 1), model.debias.get("seed", 0)
                copies[debiased_name(base, n_splits, seed)] = {"base": base, "n_splits": n_splits, "seed": seed}
        return copies

    def training_collection(self, model: str) -> str:
        """The collection whose documents a model trains on: the training query set's, or its de-biased copy."""
        base = self.querysets[self.train_queryset].collection
        debias = self.models[model].debias
        return debiased_name(base, debias.get("n_splits", 1), debias.get("seed", 0)) if debias else base

    def tokenizer_of(self, model: str) -> str:
        """The key of the token store a model reads."""
        return tokenizer_key(tokenizer_name(self.models[model].args))

    # what jobs receive
    def model_params(self, model: str) -> dict:
        """What a job that builds or fine-tunes a model needs from its `models.<name>` block."""
        spec = self.models[model]
        return canonical({"ranker": spec.ranker, "args": spec.args, **spec.learning_rates()})

    def training_params(self, model: str, overrides: Mapping | None = None) -> dict:
        """The recipe a model trains with: `training`, the model's own `training` block, then `overrides`
        (a fine-tuning or cross-validation section's)."""
        return training_recipe(self.data["training"], self.models[model].training, overrides)

    def scoring(self, model: str) -> dict:
        """How a model's rerank jobs score: the `rerank` section's batch size, device and autocast precision;
        a model trained at a precision of its own (`models.<name>.training.precision`) also scores at it."""
        scoring = {k: v for k, v in self.data["rerank"].items() if k not in ("querysets", "jobs")}
        if "precision" in self.models[model].training:
            scoring["precision"] = self.models[model].training["precision"]
        return canonical(scoring)

    def evaluation_params(self, queryset: str) -> dict:
        qs = self.querysets[queryset]
        return canonical({"metrics": list(qs.metrics), "rel_level": qs.rel_level})

    def systems(self, queryset: str, stage: str = "eval") -> list[tuple[str, int]]:
        """(system, seed) pairs a query set's tables compare: the retriever and random rows, every model with
        its seeds (`model_seeds`), and (zero-shot only) the runs made elsewhere for it. The fine-tuned stage
        has no zero-shot models."""
        pairs = [(names.RETRIEVER, 0)] + [(names.RANDOM, s) for s in self.seeds]
        models = self.trained_models if stage == "eval-finetuned" else list(self.models)  # zero-shot: no fine-tuning
        pairs += [(m, s) for m in models if self.evaluates(m, queryset) for s in self.model_seeds(m)]
        if stage == "eval":
            pairs += [(n, 0) for n, spec in self.external_runs.items() if queryset in spec["runs"]]
        return pairs

    def table_querysets(self, table: str, setting: str = "zero-shot") -> list[str]:
        want_finetuned = setting == FINE_TUNED
        return sorted({c["queryset"] for c in self.tables[table]["columns"]
                       if (c.get("setting") == FINE_TUNED) == want_finetuned})

    def table_params(self, table: str) -> dict:
        """What a table job needs: its spec, labels and baselines, its query sets' thresholds, the test recipe.
        Only what the table shows, so changing another query set or table leaves it alone."""
        spec = self.tables[table]
        shown = {c["queryset"] for c in spec["columns"]}
        return canonical({
            "spec": spec,
            "models": {m: {"label": self.models[m].label, "baseline": self.models[m].baseline,
                           "zero_shot": self.models[m].zero_shot, "excluded_seeds": list(self.models[m].excluded_seeds),
                           "not_run": sorted(q for q in shown if not self.evaluates(m, q)),
                           **({"debiased_from": self.models[m].debias["original"]} if self.models[m].debias else {})}
                       for m in self._table_systems(spec)},
            "external": {n: {"label": s["label"], "baseline": s.get("baseline"), "querysets": sorted(s["runs"])}
                         for n, s in self.external_runs.items() if set(s["runs"]) & shown},
            "querysets": {q: {"alpha": self.querysets[q].alpha} for q in sorted(shown)},
            "n_seeds": len(self.seeds),
            "statistics": self.data["statistics"],
        })

    def _table_systems(self, spec: Mapping) -> list[str]:
        """The models a table shows or compares with: its rows, their baselines, Table 4's references and the
        originals of de-biased models."""
        shown = [m for m in [*spec["models"], *spec.get("second_reference", [])] if m in self.models]
        originals = [self.models[m].debias["original"] for m in shown if self.models[m].debias]
        return sorted({*shown, *originals, *(self.models[m].baseline for m in [*shown, *originals])})

    # language models
    @property
    def llm_cache(self) -> dict:
        """The response cache's directory and mode (`llm.cache`)."""
        return canonical(self.data.get("llm", {}).get("cache", {"dir": "cache/llm", "mode": "read_write"}))

    def llm_model(self, name: str) -> dict:
        """A language model's spec as a job receives it (`posbias.llm.spec.ModelSpec` fields; the label is the
        tables' business)."""
        spec = self.data["llm"]["models"][name]
        return canonical({k: v for k, v in spec.items() if k != "label"})

    def llm_label(self, name: str) -> str:
        return self.data["llm"]["models"][name].get("label", name)

    # bias probes
    @property
    def probe_scorers(self) -> list[str]:
        return list(self.data.get("probes", {}).get("scorers", {}))

    def probe_scorer(self, name: str) -> dict:
        """A scorer's section as its job receives it (the label is the report's business)."""
        spec = self.data["probes"]["scorers"][name]
        return canonical({k: v for k, v in spec.items() if k != "label"})

    def probe_checkpoint(self, name: str) -> str | None:
        """The checkpoint directory a `checkpoint` scorer reads (its model's first training seed by default)."""
        spec = self.data["probes"]["scorers"][name]
        if spec["kind"] != "checkpoint":
            return None
        seed = spec.get("seed", self.model_seeds(spec["model"])[0])
        return f"results/models/{spec['model']}/seed{seed}"

    def probe_label(self, name: str) -> str:
        spec = self.data["probes"]["scorers"][name]
        default = self.models[spec["model"]].label if spec["kind"] == "checkpoint" else name
        return spec.get("label", default)

    def folds_count(self, queryset: str) -> int:
        """The number of folds of a cross-validated query set (a user's qid<TAB>fold file is read here)."""
        folds = self.querysets[queryset].folds
        if isinstance(folds, list):
            return len(folds)
        from posbias.io import read_folds

        numbers = set(read_folds(folds).values())
        if numbers != set(range(1, len(numbers) + 1)):
            raise ConfigError(f"querysets.{queryset}.folds: {folds} must number its folds 1..k, "
                              f"got {sorted(numbers)}")
        return len(numbers)


# --- cross-checks --------------------------------------------------------------------------------


def prepare(data: Mapping) -> Config:
    """Validate, fill defaults, make listwise models zero-shot and cross-check; see the module docstring."""
    data = dict(data)
    _study_sections_together(data)
    if isinstance(data.get("models"), dict):  # the originals first, so that their errors name them, not a twin
        validate({**data, "models": {n: m for n, m in data["models"].items() if not _is_debiased(m)}})
    data = validate(_with_debiased_models(data))
    if "training" not in data:  # without the study: no query sets, models, tables, training or reranking
        data.update(querysets={}, models={}, tables={}, training={"queryset": None, "seeds": []},
                    rerank={"querysets": []})
    warnings: list[str] = []
    _listwise_models_are_zero_shot(data)
    _derive_sweep(data)
    for table in (*BASELINE_TABLE_NAMES, "table11"):  # a table without `models` shows every configured model
        if table in data["tables"]:  # (sorted: the order of the models section must not move rows or rerun the job)
            shown = [m for m, spec in data["models"].items()  # Table 11 counts parameters: a listwise ranker has none
                     if table != "table11" or spec["ranker"] not in catalog.LISTWISE]
            data["tables"][table].setdefault("models", sorted(shown))
    for check in CHECKS:
        check(data, warnings)
    return Config(data, warnings)


# The long-document study's sections: a config has all of them or none (then it runs only the other analyses:
# Lost in the Middle, the probes, the positions of given collections).
STUDY_SECTIONS = ("querysets", "training", "rerank", "models", "tables")


def _study_sections_together(data: Mapping) -> None:
    present = [key for key in STUDY_SECTIONS if key in data]
    if present and len(present) < len(STUDY_SECTIONS):
        missing = [key for key in STUDY_SECTIONS if key not in data]
        raise ConfigError(f"{missing[0]}: missing; the long-document study needs {', '.join(STUDY_SECTIONS)} "
                          f"together (this config sets {', '.join(present)}), or none of them to run only the "
                          f"other analyses")
    if not present and not any(key in data for key in ("litm", "probes", "positions")):
        raise ConfigError(f"(top level): nothing to run: give the long-document study ({', '.join(STUDY_SECTIONS)}), "
                          f"litm, probes or positions")


DEBIASED_OWN_KEYS = ("label", "debias", "excluded_seeds")  # the rest of a de-biased model's block is its original's


def _is_debiased(spec) -> bool:
    return isinstance(spec, dict) and isinstance(spec.get("debias"), dict)


def _with_debiased_models(cfg: dict) -> dict:
    """A de-biased model is its original trained on other documents: its block gives only its label, `debias` and
    maybe `excluded_seeds`, and takes everything else (ranker, args, learning rates, recipe, seeds, baseline) from
    `debias.original`."""
    models = cfg.get("models")
    if not isinstance(models, dict) or not any(_is_debiased(m) for m in models.values()):
        return cfg
    models = dict(models)
    for name, spec in models.items():
        if not _is_debiased(spec):
            continue
        original = spec["debias"].get("original")
        if not isinstance(models.get(original), dict):
            raise ConfigError(f"models.{name}.debias.original: {original!r} is not a configured model")
        if _is_debiased(models[original]):
            raise ConfigError(f"models.{name}.debias.original: {original!r} is itself de-biased")
        extra = sorted(set(spec) - set(DEBIASED_OWN_KEYS))
        if extra:
            raise ConfigError(f"models.{name}: {extra} belong to its original (models.{original}); a de-biased model "
                              f"gives only {list(DEBIASED_OWN_KEYS)}")
        inherited = {k: copy.deepcopy(v) for k, v in models[original].items() if k not in DEBIASED_OWN_KEYS}
        models[name] = {**inherited, **spec}
    return {**cfg, "models": models}


def _listwise_models_are_zero_shot(cfg: dict) -> None:
    """A listwise ranker (RankGPT) is never trained: it is zero-shot whether or not the config says so."""
    for name, spec in cfg["models"].items():
        if spec["ranker"] in catalog.LISTWISE:
            spec["zero_shot"] = True


def sweep_candidates(queryset: str) -> str:
    """The candidate run the sweep builder writes for its query set (that query set's `candidates`)."""
    return f"results/data/{SWEEP_COLLECTION}/candidates/{queryset}.run"


SWEEP_DEFAULTS = {"tokenizer": "tokenizer", "first_window": "first_window", "doc_tokens": "max_doc_tokens"}


def _derive_sweep(cfg: dict) -> None:
    """The sweep query set reranks the builder's candidate run; the `sweep` section's tokenizer, first window and
    document length default to the `farrelevant` section's, its passages to the embedded generator's."""
    for name, spec in cfg["querysets"].items():
        if spec.get("collection") == SWEEP_COLLECTION:
            if spec.setdefault("candidates", sweep_candidates(name)) != sweep_candidates(name):
                raise ConfigError(f"querysets.{name}.candidates: the sweep collection's candidates are its "
                                  f"builder's run ({sweep_candidates(name)})")
    sweep, far = cfg.get("sweep"), cfg.get("farrelevant", {})
    if sweep is None:
        return
    for key, default in SWEEP_DEFAULTS.items():  # where they are missing, check_sweep says so
        if key not in sweep and default in far:
            sweep[key] = far[default]
    if "passages" not in sweep and "generator" in cfg:
        sweep["passages"] = dict(GENERATED_PASSAGES)


def _require(known: Iterable[str], value: str, key: str, what: str) -> None:
    if value not in known:
        raise ConfigError(f"{key}: {value!r} is not {what}")


def check_collections(cfg: dict, warnings: list[str]) -> None:
    for name, spec in cfg["querysets"].items():
        if "pool" in spec:
            continue  # check_pools
        collection = spec.get("collection")
        if collection is None:
            raise ConfigError(f"querysets.{name}: needs `collection` (or `pool`, a list of query sets)")
        if collection == "synthetic" and name not in SYNTHETIC_QUERYSETS:
            raise ConfigError(f"querysets.{name}: the synthetic collection has only {SYNTHETIC_QUERYSETS}")
        if collection in GENERATED_COLLECTIONS:
            for key in ("source", "folds"):
                if key in spec:
                    raise ConfigError(f"querysets.{name}.{key}: the generated {collection} collection writes "
                                      f"its own queries and qrels")
            continue
        if collection not in cfg.get("collections", {}):
            raise ConfigError(f"querysets.{name}.collection: {collection!r} is neither a generated collection "
                              f"{GENERATED_COLLECTIONS} nor a key of collections")
        if "source" not in spec:
            raise ConfigError(f"querysets.{name}.source: required for query sets of collection {collection!r}")
        source = spec["source"]
        if source["kind"] == "local" and not {"queries", "qrels"} <= set(source):
            raise ConfigError(f"querysets.{name}.source: a local source needs `queries` and `qrels`")
        if isinstance(spec.get("folds"), list) and source["kind"] != "ir_datasets":
            raise ConfigError(f"querysets.{name}.folds: a list names ir_datasets subsets; use a qid<TAB>fold file")
    for name, spec in cfg.get("collections", {}).items():
        source = spec["documents"]
        if source["kind"] == "local" and "path" not in source:
            raise ConfigError(f"collections.{name}.documents.path: required for a local source")
        if spec.get("expansions") and not Path(spec["expansions"]).exists():
            warnings.append(f"collections.{name}.expansions: {spec['expansions']} does not exist (yet); "
                            f"its bm25_index job will fail until it does")
    far_train = cfg.get("farrelevant", {}).get("train_queryset")
    if far_train and cfg["querysets"].get(far_train, {}).get("collection") != "farrelevant":
        raise ConfigError(f"farrelevant.train_queryset: {far_train!r} is not a query set of the farrelevant collection")
    far = [n for n, s in cfg["querysets"].items() if s.get("collection") == "farrelevant" and n != far_train]
    if len(far) > 1:
        raise ConfigError(f"querysets: only one query set (besides farrelevant.train_queryset) may use the "
                          f"farrelevant collection, got {far}")
    used = {s.get("collection") for s in cfg["querysets"].values()}
    # FarRelevant documents are built from the generator's passage collection, unless farrelevant.source says
    # otherwise (MS MARCO passages, or the published collection).
    far_from_generator = far_source(cfg)["kind"] == "synthetic"
    for section, needed_by in (("generator", {"synthetic", *(["farrelevant"] if far_from_generator else [])}),
                               ("farrelevant", {"farrelevant"})):
        if used & needed_by and section not in cfg:
            raise ConfigError(f"{section}: required because a query set uses the {sorted(used & needed_by)} "
                              f"collection")
    check_farrelevant_source(cfg)


def far_source(cfg: dict) -> dict:
    """`farrelevant.source`; without one, FarRelevant is built from the generator's passages."""
    return cfg.get("farrelevant", {}).get("source", {"kind": "synthetic"})


def check_farrelevant_source(cfg: dict) -> None:
    far = cfg.get("farrelevant")
    if not far:
        return
    source = far_source(cfg)
    if source["kind"] == "local" and far.get("train_queryset") and "train" not in source:
        raise ConfigError("farrelevant.source.train: required for a local source when farrelevant.train_queryset "
                          "names a training query set")
    if source.get("per") == "qrel":  # outcome tables need exactly one relevant document per query
        far_sets = {n for n, s in cfg["querysets"].items() if s.get("collection") == "farrelevant"}
        clash = sorted(far_sets & set(cfg.get("tables", {}).get("outcomes", {}).get("querysets", [])))
        if clash:
            raise ConfigError(f"tables.outcomes.querysets: {clash} can have several relevant documents per query "
                              f"with farrelevant.source.per: qrel")


def check_pools(cfg: dict, warnings: list[str]) -> None:
    """A pooled query set (`pool: [dl19, dl20, dl21]`) stacks the judged queries of reranked query sets."""
    querysets = cfg["querysets"]
    for name, spec in querysets.items():
        if "pool" not in spec:
            continue
        for key in ("collection", "source", "folds", "candidates"):
            if key in spec:
                raise ConfigError(f"querysets.{name}.{key}: a pooled query set takes its queries from `pool`")
        if len(set(spec["pool"])) != len(spec["pool"]):
            raise ConfigError(f"querysets.{name}.pool: lists a query set twice")
        for member in spec["pool"]:
            _require(querysets, member, f"querysets.{name}.pool", "a key of querysets")
            if "pool" in querysets[member]:
                raise ConfigError(f"querysets.{name}.pool: {member!r} is itself pooled")
            _require(cfg["rerank"]["querysets"], member, f"querysets.{name}.pool", "in rerank.querysets")
            missing = [m for m in spec["metrics"] if m not in querysets[member]["metrics"]]
            if missing:
                raise ConfigError(f"querysets.{name}.metrics: {missing} not in querysets.{member}.metrics "
                                  f"(a pool's values are its members')")


def _plain_querysets(cfg: dict) -> list[str]:
    return [n for n, s in cfg["querysets"].items() if "pool" not in s]


def check_retrievers(cfg: dict, warnings: list[str]) -> None:
    retrievers = cfg["retrievers"]
    for name in _plain_querysets(cfg):
        spec = cfg["querysets"][name]
        if "candidates" not in spec:
            _require(retrievers, spec["retriever"], f"querysets.{name}.retriever", "a key of retrievers")
    for name, spec in retrievers.items():
        if spec["kind"] == "hybrid":
            partner = retrievers.get(spec["bm25"])
            if partner is None or partner["kind"] != "bm25":
                raise ConfigError(f"retrievers.{name}.bm25: {spec['bm25']!r} is not a bm25 retriever")
    first_stage = cfg["tables"].get("first_stage")
    if first_stage:
        for qs in first_stage["querysets"]:
            _require(_plain_querysets(cfg), qs, "tables.first_stage.querysets", "a (not pooled) key of querysets")
        for item in first_stage["retrievers"]:
            _require(retrievers, item, "tables.first_stage.retrievers", "a key of retrievers")


def check_training(cfg: dict, warnings: list[str]) -> None:
    if cfg["training"]["queryset"] is None:  # a config without the long-document study
        return
    plain = _plain_querysets(cfg)
    _require(plain, cfg["training"]["queryset"], "training.queryset", "a (not pooled) key of querysets")
    for qs in cfg["rerank"]["querysets"]:
        _require(plain, qs, "rerank.querysets", "a (not pooled) key of querysets")
    if len(set(cfg["rerank"]["querysets"])) != len(cfg["rerank"]["querysets"]):
        raise ConfigError("rerank.querysets: lists a query set twice")
    for qs in cfg.get("cross_validation", {}).get("querysets", []):
        _require(cfg["rerank"]["querysets"], qs, "cross_validation.querysets", "in rerank.querysets")
        if "folds" not in cfg["querysets"][qs]:
            raise ConfigError(f"cross_validation.querysets: {qs!r} has no `folds`")
    finetuning = cfg.get("finetuning")
    if finetuning:
        _require(plain, finetuning["queryset"], "finetuning.queryset", "a (not pooled) key of querysets")
        cv = cfg.get("cross_validation", {}).get("querysets", [])
        for qs in finetuning["querysets"]:
            if qs not in cfg["rerank"]["querysets"] or qs in cv:
                raise ConfigError(f"finetuning.querysets: {qs!r} must be in rerank.querysets and not cross-validated")


def check_model_arguments(cfg: dict, warnings: list[str]) -> None:
    """Each model's `args` are arguments its ranker takes (`tokenizer` is read by the pipeline, not the ranker)."""
    for name, spec in cfg["models"].items():
        if spec["ranker"] in catalog.LISTWISE:
            continue  # the schema lists RankGPT's arguments ($defs/rankgpt_args)
        known = catalog.arguments(spec["ranker"]) | {"tokenizer"}
        unknown = sorted(set(spec["args"]) - known)
        if unknown:
            raise ConfigError(f"models.{name}.args.{unknown[0]}: not an argument of ranker {spec['ranker']!r}; "
                              f"it takes {', '.join(sorted(known))}")


def check_models(cfg: dict, warnings: list[str]) -> None:
    models = cfg["models"]
    for name, model in models.items():
        baseline, args = model["baseline"], model["args"]
        _require(models, baseline, f"models.{name}.baseline", "a configured model")
        # A FirstP baseline: `firstp`, or the FirstP twin of a one-sequence or listwise model (`longp` at 477
        # tokens, RankGPT over 512-token sentence prefixes).
        twins = {*catalog.ONE_SEQUENCE, *catalog.LISTWISE}
        if models[baseline]["ranker"] not in {"firstp", *twins}:
            raise ConfigError(f"models.{name}.baseline: {baseline!r} is not a firstp model (nor a FirstP twin: "
                              f"{', '.join(sorted(twins))})")
        if (model["ranker"] in catalog.LISTWISE) != (models[baseline]["ranker"] in catalog.LISTWISE):
            raise ConfigError(f"models.{name}.baseline: a listwise model and its baseline {baseline!r} must both be "
                              f"listwise (RankGPT's FirstP twin reads sentence prefixes: args.first_tokens)")
        unknown = sorted(set(model.get("querysets", [])) - set(cfg["rerank"]["querysets"]))
        if unknown:
            raise ConfigError(f"models.{name}.querysets: {unknown} not in rerank.querysets")
        missing = sorted(set(model.get("querysets", cfg["rerank"]["querysets"]))
                         - set(models[baseline].get("querysets", cfg["rerank"]["querysets"])))
        if missing:
            raise ConfigError(f"models.{name}.querysets: its baseline {baseline!r} does not rerank {missing}")
        if model["ranker"] in catalog.LISTWISE:
            continue  # no chunk geometry; its args are checked by check_language_models
        if model.get("zero_shot") and ("seeds" in model or "excluded_seeds" in model):
            raise ConfigError(f"models.{name}: a zero-shot model is never trained, so it takes no seeds or "
                              f"excluded_seeds")
        seeds = model.get("seeds", cfg.get("training", {}).get("seeds", []))
        stray = sorted(set(model.get("excluded_seeds", [])) - set(seeds))
        if stray:
            raise ConfigError(f"models.{name}.excluded_seeds: {stray} are not among its seeds {seeds}")
        if not set(seeds) - set(model.get("excluded_seeds", [])):
            raise ConfigError(f"models.{name}.excluded_seeds: every seed is excluded; the tables would have no run")
        kind = {True: "zero-shot", False: "trained"}
        if bool(model.get("zero_shot")) != bool(models[baseline].get("zero_shot")):
            raise ConfigError(f"models.{name}.baseline: {name!r} is {kind[bool(model.get('zero_shot'))]} but its "
                              f"baseline {baseline!r} is {kind[bool(models[baseline].get('zero_shot'))]}; a model "
                              f"and its FirstP baseline are both trained or both zero-shot")
        if model["ranker"] == "firstp" and args["max_doc_tokens"] != args["chunk_tokens"]:
            raise ConfigError(f"models.{name}.args: firstp needs max_doc_tokens == chunk_tokens")
        if model["ranker"] in catalog.ONE_SEQUENCE and not args["chunk_tokens"] == args["stride"] == args["max_doc_tokens"]:
            raise ConfigError(f"models.{name}.args: {model['ranker']} reads the document in one sequence, "
                              f"chunk_tokens, stride and max_doc_tokens must be equal")
        if model["ranker"] in catalog.DISJOINT_CHUNKS and args["stride"] != args["chunk_tokens"]:
            raise ConfigError(f"models.{name}.args.stride: {model['ranker']} reads greedy disjoint chunks, "
                              f"stride must equal chunk_tokens")
        if args["stride"] > args["chunk_tokens"]:
            raise ConfigError(f"models.{name}.args.stride: larger than chunk_tokens, text would be skipped")
        if args["chunk_tokens"] > args["max_doc_tokens"]:
            raise ConfigError(f"models.{name}.args.chunk_tokens: larger than max_doc_tokens")
    stores: dict[str, tuple[str, str]] = {}
    for name, model in models.items():  # one token store directory per tokenizer name
        if model["ranker"] in catalog.LISTWISE:
            continue
        tokenizer = tokenizer_name(model["args"])
        other = stores.setdefault(tokenizer_key(tokenizer), (tokenizer, name))
        if other[0] != tokenizer:
            raise ConfigError(f"models.{name}.args: tokenizer {tokenizer!r} and {other[0]!r} (models.{other[1]}) "
                              f"would share the token store results/tokens/<collection>/{tokenizer_key(tokenizer)}")
    labels = [m["label"] for m in models.values()]
    for label in {label for label in labels if labels.count(label) > 1}:
        clash = sorted(n for n, m in models.items() if m["label"] == label)
        raise ConfigError(f"models.{clash[1]}.label: {label!r} is also the label of models.{clash[0]} "
                          f"(table rows would be ambiguous)")


def check_debias(cfg: dict, warnings: list[str]) -> None:
    """A de-biased model is its original's ranker and args trained on other documents; the tables pair them."""
    models = cfg["models"]
    for name, model in models.items():
        if "debias" not in model:
            continue
        key, original = f"models.{name}.debias", model["debias"]["original"]
        if model.get("zero_shot"):
            raise ConfigError(f"{key}: de-biasing changes training documents, so its original {original!r} must be "
                              f"trained (not zero_shot)")
    for table in DEBIAS_TABLE_NAMES:
        spec = cfg["tables"].get(table)
        for m in (spec or {}).get("models", []):
            _require(models, m, f"tables.{table}.models", "a configured model")
            if "debias" not in models[m]:
                raise ConfigError(f"tables.{table}.models: {m!r} has no models.{m}.debias")


def check_tables(cfg: dict, warnings: list[str]) -> None:
    models, querysets, tables = cfg["models"], cfg["querysets"], cfg["tables"]
    evaluated = [*cfg["rerank"]["querysets"], *(n for n, s in querysets.items() if "pool" in s)]
    finetuned = (cfg.get("finetuning") or {}).get("querysets", [])
    for table in ("table1", "table4", *BASELINE_TABLE_NAMES[1:], *DEBIAS_TABLE_NAMES, *ABLATION_TABLE_NAMES):
        spec = tables.get(table)
        if spec is None:
            continue
        if len(set(spec["models"])) != len(spec["models"]):
            raise ConfigError(f"tables.{table}.models: lists a model twice")
        for m in spec["models"]:
            _require(models, m, f"tables.{table}.models", "a configured model")
            baseline = models[m]["baseline"]
            if table in BASELINE_TABLE_NAMES and baseline not in spec["models"]:
                raise ConfigError(f"tables.{table}.models: {m!r} needs its baseline {baseline!r} in the table")
        headers = []
        for i, column in enumerate(spec["columns"]):
            key, qs = f"tables.{table}.columns[{i}]", column["queryset"]
            _require(evaluated, qs, f"{key}.queryset", "in rerank.querysets or a pooled query set")
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
    for table in ABLATION_TABLE_NAMES:
        if table in tables:
            _require(tables[table]["models"], tables[table]["reference"], f"tables.{table}.reference",
                     f"among tables.{table}.models")
    spec4 = tables.get("table4")
    if spec4:
        _require(spec4["models"], spec4["reference"], "tables.table4.reference", "among tables.table4.models")
        references = {"tables.table4.reference": spec4["reference"]}
        for row, reference in spec4["row_references"].items():
            _require(spec4["models"], row, "tables.table4.row_references", "among tables.table4.models")
            if reference is not None:
                _require(spec4["models"], reference, f"tables.table4.row_references.{row}",
                         "among tables.table4.models")
                references[f"tables.table4.row_references.{row}"] = reference
        for key, reference in references.items():
            if models[reference].get("zero_shot") and finetuned:
                raise ConfigError(f"{key}: {reference!r} is zero-shot, so it has no fine-tuned value to compute the "
                                  f"fine-tuned gains over")
    outcomes = tables.get("outcomes")
    if outcomes:
        for qs in outcomes["querysets"]:
            _require(cfg["rerank"]["querysets"], qs, "tables.outcomes.querysets", "in rerank.querysets")
            if outcomes["k"] >= querysets[qs]["depth"]:
                # Legal (runs made elsewhere have other candidates), but our rankers would tie on case (2).
                warnings.append(f"tables.outcomes.k: {outcomes['k']} is not below querysets.{qs}.depth "
                                f"({querysets[qs]['depth']}); rankers reordering the same candidates all find the "
                                f"relevant document in the top k or all miss it, so case (2) stays empty")
        for m in outcomes.get("models", []):
            _require(models, m, "tables.outcomes.models", "a configured model")
    for qs in tables.get("dataset_stats", {}).get("querysets", []):
        _require(_plain_querysets(cfg), qs, "tables.dataset_stats.querysets", "a (not pooled) key of querysets")
    for m in tables.get("table11", {}).get("models", []):
        _require(models, m, "tables.table11.models", "a configured model")
        if models[m]["ranker"] in catalog.LISTWISE:
            raise ConfigError(f"tables.table11.models: {m!r} ranks through a language model and has no parameters "
                              f"of its own to count")


def check_external_runs(cfg: dict, warnings: list[str]) -> None:
    for name, spec in cfg.get("external_runs", {}).items():
        if name in cfg["models"]:
            raise ConfigError(f"external_runs.{name}: the name is already a model's")
        for qs in spec["runs"]:
            _require(cfg["rerank"]["querysets"], qs, f"external_runs.{name}.runs", "in rerank.querysets")
        if "baseline" in spec:
            _require(cfg["models"], spec["baseline"], f"external_runs.{name}.baseline", "a configured model")
    labels = {m["label"]: f"models.{n}" for n, m in cfg["models"].items()}
    for name, spec in cfg.get("external_runs", {}).items():
        if spec["label"] in labels:
            raise ConfigError(f"external_runs.{name}.label: {spec['label']!r} is also the label of "
                              f"{labels[spec['label']]} (table rows would be ambiguous)")
        labels[spec["label"]] = f"external_runs.{name}"


def check_backbone_positions(cfg: dict, warnings: list[str]) -> None:
    """Refuse a chunk geometry longer than the backbone's position embeddings, before any job runs (backbones
    whose config is not on this machine are checked by the ranker when it loads them)."""
    from posbias.rankers import check_geometry

    for name, model in cfg["models"].items():
        if model["ranker"] in catalog.LISTWISE:
            continue
        try:
            check_geometry(model["ranker"], model["args"])
        except ValueError as err:
            raise ConfigError(f"models.{name}.args: {str(err).removeprefix('model args: ')}") from None


def check_recipes(cfg: dict, warnings: list[str]) -> None:
    """Build every training recipe a job will get (the model's own block, then the fine-tuning and
    cross-validation overrides), so an inconsistent recipe fails when the graph is built."""
    from posbias.settings import from_section
    from posbias.training.recipe import TrainingSettings

    layers = {"": None, "finetuning.training": (cfg.get("finetuning") or {}).get("training"),
              "cross_validation.training": cfg.get("cross_validation", {}).get("training")}
    for name, model in cfg["models"].items():
        if model["ranker"] in catalog.LISTWISE:
            continue  # never trained
        for where, overrides in layers.items():
            if where and overrides is None:
                continue
            recipe = training_recipe(cfg["training"], model.get("training"), overrides)
            try:
                from_section(TrainingSettings, {**learning_rates(model), **recipe}, "training")
            except ValueError as err:
                source = f"{where} for models.{name}" if where else f"models.{name}"
                raise ConfigError(f"{str(err)} (in the recipe of {source})") from None


# What the workflow writes directly under results/ (shared by every experiment in the tree).
RESULTS_DIRECTORIES = ("data", "tokens", "index", "candidates", "models", "models-finetuned", "runs", "runs-cv",
                       "runs-finetuned", "eval", "eval-finetuned", "eval-cutoff", "eval-first-stage", "stats",
                       "benchmarks", "figures", "positions")


def check_language_models(cfg: dict, warnings: list[str]) -> None:
    """RankGPT models and the Lost-in-the-Middle stage name language models of `llm.models`; positions fit."""
    known = cfg.get("llm", {}).get("models", {})
    for name, model in cfg["models"].items():
        if model["ranker"] in catalog.LISTWISE:
            _require(known, model["args"]["llm"], f"models.{name}.args.llm", "a key of llm.models")
            args = model["args"]
            wrapper = known[args["llm"]].get("wrapper", "none")
            if wrapper not in ("chat_template", "messages"):
                raise ConfigError(f"llm.models.{args['llm']}.wrapper: RankGPT ({name}) sends a conversation, which "
                                  f"needs chat_template (a local model) or messages (a chat API or the mock), not "
                                  f"{wrapper!r}")
            if args["step"] > args["window"]:
                raise ConfigError(f"models.{name}.args.step: {args['step']} is larger than the window "
                                  f"({args['window']}); candidates would be skipped")
            if (args["first_tokens"] is None) != (args["first_tokenizer"] is None):
                raise ConfigError(f"models.{name}.args: first_tokens and first_tokenizer go together")
    litm = cfg.get("litm")
    if not litm:
        return
    for m in litm["models"]:
        _require(known, m, "litm.models", "a key of llm.models")
    for task, size in (("qa", "k"), ("kv", "n")):
        for i, item in enumerate(litm.get(task, {}).get("sizes", [])):
            outside = [p for p in item["positions"] if p >= item[size]]
            if outside:
                raise ConfigError(f"litm.{task}.sizes[{i}].positions: {outside} are not below {size} = {item[size]} "
                                  f"(positions are 0-based)")
        sizes = [item[size] for item in litm.get(task, {}).get("sizes", [])]
        if len(set(sizes)) != len(sizes):
            raise ConfigError(f"litm.{task}.sizes: lists {size} = {sizes} with repeats")
    qa = litm.get("qa")
    if qa and qa["source"]["kind"] == "synthetic" and "generator" not in cfg:
        raise ConfigError("litm.qa.source: the synthetic source asks about the embedded world, which needs `generator`")
    if qa and qa["source"]["kind"] == "files" and "random_order" in qa["variants"]:
        raise ConfigError("litm.qa.variants: random_order reorders distractors, which needs the retrieval results "
                          "(source kind retrieval or synthetic), not already-built files")
    if not (litm.get("qa") or litm.get("kv")):
        raise ConfigError("litm: needs `qa`, `kv` or both")


def check_probes(cfg: dict, warnings: list[str]) -> None:
    """A checkpoint scorer names a trained model (and one of its seeds); the heatmap names scorers."""
    probes = cfg.get("probes")
    if not probes:
        return
    for name, scorer in probes["scorers"].items():
        if scorer["kind"] != "checkpoint":
            continue
        where = f"probes.scorers.{name}.model"
        _require(cfg["models"], scorer["model"], where, "a key of models")
        model = cfg["models"][scorer["model"]]
        if model.get("zero_shot") or model["ranker"] in catalog.LISTWISE:
            raise ConfigError(f"{where}: {scorer['model']!r} is never trained, so it has no checkpoint to score with")
        seeds = model.get("seeds", cfg.get("training", {}).get("seeds", []))
        if "seed" in scorer and scorer["seed"] not in seeds:
            raise ConfigError(f"probes.scorers.{name}.seed: {scorer['seed']} is not a training seed of "
                              f"{scorer['model']!r} ({seeds})")
    if "poison" in probes["probes"] and "poison" not in probes:
        raise ConfigError("probes.probes: poison needs probes.poison (its replacements' source: llm, file or swap)")
    if probes.get("poison", {}).get("source") == "llm":
        _require(cfg.get("llm", {}).get("models", {}), probes["poison"]["model"], "probes.poison.model",
                 "a key of llm.models")
    if "rag" in probes:
        if "poison" not in probes["probes"]:
            raise ConfigError("probes.rag: RAG poisoning reads the poison probe's documents; list poison under "
                              "probes.probes")
        known = cfg.get("llm", {}).get("models", {})
        for name in probes["rag"]["readers"]:
            _require(known, name, "probes.rag.readers", "a key of llm.models")
        _require(known, probes["rag"]["judge"], "probes.rag.judge", "a key of llm.models")
    for key in ("head_count_bins", "length_bins"):
        bins = probes["heatmap"][key]
        if any(b >= a for a, b in zip(bins[1:], bins)):
            raise ConfigError(f"probes.heatmap.{key}: {bins} must increase")


def _reranks(model: Mapping, queryset: str) -> bool:
    return queryset in model.get("querysets", [queryset])


def check_sweep(cfg: dict, warnings: list[str]) -> None:
    """One sweep query set at most, built from a FarRelevant query set, reranked whole and scored by RR."""
    swept = [n for n, s in cfg["querysets"].items() if s.get("collection") == SWEEP_COLLECTION]
    sweep = cfg.get("sweep")
    if len(swept) > 1:
        raise ConfigError(f"querysets: only one query set may use the sweep collection, got {swept}")
    if swept and sweep is None:
        raise ConfigError(f"sweep: required because query set {swept[0]!r} uses the sweep collection")
    if sweep is None:
        return
    for key, default in SWEEP_DEFAULTS.items():
        if key not in sweep:
            raise ConfigError(f"sweep.{key}: required (there is no farrelevant.{default} to default to)")
    if "passages" not in sweep:
        raise ConfigError("sweep.passages: required (no embedded generator whose passages it could default to)")
    if not swept:
        warnings.append("sweep: no query set uses the sweep collection (collection: sweep), so nothing is swept")
        return
    name, source = swept[0], sweep["source"]
    spec = cfg["querysets"][name]
    _require(_plain_querysets(cfg), source, "sweep.source", "a (not pooled) key of querysets")
    if cfg["querysets"][source]["collection"] != "farrelevant":
        raise ConfigError(f"sweep.source: {source!r} is not a query set of the farrelevant collection (the sweep "
                          f"moves the one relevant passage of FarRelevant documents)")
    far = cfg.get("farrelevant", {})
    if source != far.get("train_queryset") and sweep["n_queries"] > far.get("n_queries", sweep["n_queries"]):
        raise ConfigError(f"sweep.n_queries: {sweep['n_queries']} is more than the {far['n_queries']} queries of "
                          f"{source!r} (farrelevant.n_queries)")
    if "RR" not in spec["metrics"]:
        raise ConfigError(f"querysets.{name}.metrics: needs RR (the sweep report reads the relevant document's "
                          f"rank as 1/RR)")
    if sweep["first_window"] >= sweep["doc_tokens"]:
        raise ConfigError(f"sweep.first_window: {sweep['first_window']} is not below sweep.doc_tokens "
                          f"({sweep['doc_tokens']}); no position would lie beyond it")
    if name not in cfg["rerank"]["querysets"]:
        warnings.append(f"rerank.querysets: the sweep query set {name!r} is not reranked, so there is no sweep report")
    for m in sweep.get("models", []):
        _require(cfg["models"], m, "sweep.models", "a configured model")
        if not _reranks(cfg["models"][m], name):
            raise ConfigError(f"sweep.models: {m!r} does not rerank {name!r} (models.{m}.querysets)")


def check_position_breakdown(cfg: dict, warnings: list[str]) -> None:
    """The breakdown reads a reranked query set's metric and a positions file for it."""
    spec = cfg["tables"].get("position_breakdown")
    if not spec:
        return
    key, qs = "tables.position_breakdown", spec["queryset"]
    _require(cfg["rerank"]["querysets"], qs, f"{key}.queryset", "in rerank.querysets")
    if spec["metric"] not in cfg["querysets"][qs]["metrics"]:
        raise ConfigError(f"{key}.metric: {spec['metric']!r} is not in querysets.{qs}.metrics")
    if any(b <= a for a, b in zip(spec["bins"], spec["bins"][1:])):
        raise ConfigError(f"{key}.bins: {spec['bins']} must increase")
    if "positions" not in spec and cfg["querysets"][qs]["collection"] not in GENERATED_COLLECTIONS:
        raise ConfigError(f"{key}.positions: required for {qs!r} (only generated collections write positions)")
    for m in spec.get("models", []):
        _require(cfg["models"], m, f"{key}.models", "a configured model")
        if not _reranks(cfg["models"][m], qs):
            raise ConfigError(f"{key}.models: {m!r} does not rerank {qs!r} (models.{m}.querysets)")


def check_positions(cfg: dict, warnings: list[str]) -> None:
    """The first-relevant-position analysis: its sets name query sets with documents, passages and judges that
    exist; its groups name its sets; Figure 1 names groups."""
    section = cfg.get("positions")
    if not section:
        return
    querysets, models = cfg["querysets"], cfg.get("llm", {}).get("models", {})
    for name, spec in section["sets"].items():
        where = f"positions.sets.{name}"
        _require(querysets, spec["queryset"], f"{where}.queryset", "a key of querysets")
        if "collection" not in querysets[spec["queryset"]]:
            raise ConfigError(f"{where}.queryset: {spec['queryset']!r} is pooled; name one of its members")
        passages = spec.get("passages")
        if passages == "generator":
            if "generator" not in cfg or querysets[spec["queryset"]]["collection"] != "synthetic":
                raise ConfigError(f"{where}.passages: generator passages exist only for the embedded collection's "
                                  f"query sets (collection synthetic, with `generator`)")
        elif passages is not None:
            _require(querysets, passages, f"{where}.passages", "generator or a key of querysets")
            if "collection" not in querysets[passages]:
                raise ConfigError(f"{where}.passages: {passages!r} is pooled; name the passage query set itself")
        if spec["kind"] == "dense":
            judge = spec.get("judge", section["dense"].get("judge"))
            if judge is None:
                raise ConfigError(f"{where}.judge: a dense set needs a judge (or positions.dense.judge)")
            _require(models, judge, f"{where}.judge" if "judge" in spec else "positions.dense.judge",
                     "a key of llm.models")
            if models[judge]["backend"] == "mock" and models[judge]["model"] == "oracle" and passages is None:
                raise ConfigError(f"{where}.passages: the mock oracle judge answers from the relevant passages; "
                                  f"set passages: generator")
    depth, retriever = section["matching"]["bm25_depth"], section["matching"]["retriever"]
    if depth and any(s["kind"] == "sparse" for s in section["sets"].values()):
        _require(cfg["retrievers"], retriever, "positions.matching.retriever", "a key of retrievers")
        if cfg["retrievers"][retriever]["kind"] != "bm25":
            raise ConfigError(f"positions.matching.retriever: {retriever!r} is not a bm25 retriever")
    for group, spec in section["groups"].items():
        for name in spec["sets"]:
            _require(section["sets"], name, f"positions.groups.{group}.sets", "a key of positions.sets")
    for group in section.get("figure1", []):
        _require(section["groups"], group, "positions.figure1", "a key of positions.groups")


def check_experiment(cfg: dict, warnings: list[str]) -> None:
    if cfg.get("experiment") in RESULTS_DIRECTORIES:
        raise ConfigError(f"experiment: {cfg['experiment']!r} is a directory the workflow writes under results/; "
                          f"choose another name")


def check_reproduction(cfg: dict, warnings: list[str]) -> None:
    """Published numbers (`reproduction`) name a configured table, one of its rows and one of its column headers,
    so that a typo is an error here, not a cell the reproduction table reports as never computed."""
    for table, spec in (cfg.get("reproduction") or {}).items():
        key, shown = f"reproduction.{table}", cfg["tables"].get(table)
        if shown is None:
            raise ConfigError(f"{key}: tables.{table} is not configured")
        originals = [(cfg["models"][m].get("debias") or {}).get("original") for m in shown["models"]]
        rows = [names.RETRIEVER, *([names.RANDOM] if table == "table4" else []), *shown["models"],
                *(o for o in originals if o)]
        headers = [column_header(c) for c in shown["columns"]]
        for system, values in spec["values"].items():
            if system not in rows:
                raise ConfigError(f"{key}.values.{system}: not a row of tables.{table} (its models, "
                                  f"{names.RETRIEVER}{', ' + names.RANDOM if table == 'table4' else ''})")
            unknown = [h for h in values if h not in headers]
            if unknown:
                raise ConfigError(f"{key}.values.{system}: {unknown[0]!r} is not a header of tables.{table}.columns; "
                                  f"headers: {', '.join(map(repr, headers))}")


CHECKS = (check_experiment, check_collections, check_pools, check_retrievers, check_training, check_models,
          check_debias, check_model_arguments, check_tables,
          check_external_runs, check_backbone_positions, check_recipes, check_language_models, check_probes,
          check_sweep, check_position_breakdown, check_positions, check_reproduction)
