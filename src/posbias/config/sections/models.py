"""`models`: the rankers the study trains and compares (ranker, arguments, learning rates, baseline, seeds); a
de-biased model's block names its original and takes the rest from it."""

from __future__ import annotations

import copy
import dataclasses
import re
from functools import cached_property
from pathlib import Path
from typing import Mapping

from posbias.config.section import ConfigError, Section, require
from posbias.config.canonical import canonical
from posbias.rankers import catalog
from posbias.rankers.registry import tokenizer_name

ZERO_SHOT_SEED = 0  # the one "seed" of a zero-shot model's runs (results/runs/<queryset>/<model>/seed0.run)
DEBIASED_OWN_KEYS = ("label", "debias", "excluded_seeds")  # the rest of a de-biased model's block is its original's


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


def training_recipe(training: Mapping, *overrides: Mapping | None) -> dict:
    """The `training` section as a job's recipe: without the seed list and the query set (adding a seed must
    not retrain the others), with each of `overrides` on top in order."""
    recipe = {k: v for k, v in training.items() if k not in ("seeds", "queryset")}
    for layer in overrides:
        recipe.update(layer or {})
    return canonical(recipe)


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


def reranks(model: Mapping, queryset: str) -> bool:
    """Whether a `models.<name>` block reranks a query set (`querysets`, default all)."""
    return queryset in model.get("querysets", [queryset])


class Models(dict):
    """`CFG.models`: name -> Model (sorted by name), and what the workflow derives from them."""

    def __init__(self, cfg):
        super().__init__({n: Model.from_spec(n, s) for n, s in sorted(cfg.data["models"].items())})
        self._cfg = cfg

    @property
    def names(self) -> list[str]:
        return list(self)

    @property
    def trained(self) -> list[str]:
        """Models with train jobs (one checkpoint per seed); the others are zero-shot."""
        return [m for m, spec in self.items() if not spec.zero_shot]

    @property
    def zero_shot(self) -> list[str]:
        """Zero-shot models scored by a torch module from pretrained weights (the listwise ones are not)."""
        return [m for m, spec in self.items() if spec.zero_shot and not spec.listwise]

    @property
    def listwise(self) -> list[str]:
        """Models ranking through a language model (RankGPT); zero-shot too."""
        return [m for m, spec in self.items() if spec.listwise]

    def reranked_querysets(self, model: str) -> list[str]:
        """The query sets of rerank.querysets a model reranks (`models.<name>.querysets`, default all)."""
        return [qs for qs in self._cfg.rerank.querysets if self[model].reranks(qs)]

    def evaluates(self, model: str, queryset: str) -> bool:
        """Whether a model has values on a query set: one it reranks, or a pool of such query sets only."""
        qs = self._cfg.querysets[queryset]
        return all(map(self[model].reranks, qs.pool)) if qs.pooled else self[model].reranks(queryset)

    def seeds(self, model: str) -> list[int]:
        """The seeds of a model's runs that the tables read (`Model.seeds`)."""
        return self[model].seeds(self._cfg.training.seeds)

    @property
    def excluded_checkpoints(self) -> list[tuple[str, int]]:
        """(model, seed) of the seeds trained but left out of the tables: built anyway, so every seed's loss
        curve exists."""
        return [(m, s) for m, spec in self.items() for s in spec.excluded_seeds]

    @cached_property
    def tokenizers(self) -> dict[str, dict]:
        """One token store per ranker tokenizer, capped at the longest document budget of the models that share
        it (so FirstP and MaxP on one backbone read the same store)."""
        stores: dict[str, dict] = {}
        for model in self.values():
            if model.listwise:
                continue  # reads document texts, not a token store
            name = tokenizer_name(model.args)
            entry = stores.setdefault(tokenizer_key(name), {"name": name, "cap": 0, "trust_remote_code": False})
            entry["cap"] = max(entry["cap"], model.args["max_doc_tokens"])
            entry["trust_remote_code"] |= bool(model.args.get("trust_remote_code"))
        return stores

    def tokenizer_of(self, model: str) -> str:
        """The key of the token store a model reads."""
        return tokenizer_key(tokenizer_name(self[model].args))

    @cached_property
    def debiased_collections(self) -> dict[str, dict]:
        """The de-biased copies of the training collection that models train on (`models.<name>.debias`):
        name -> {base, n_splits, seed}; one copy per distinct (n_splits, seed)."""
        copies = {}
        for model in self.values():
            if model.debias:
                base = self._cfg.querysets[self._cfg.training.queryset].collection
                n_splits, seed = model.debias.get("n_splits", 1), model.debias.get("seed", 0)
                copies[debiased_name(base, n_splits, seed)] = {"base": base, "n_splits": n_splits, "seed": seed}
        return copies

    def training_collection(self, model: str) -> str:
        """The collection whose documents a model trains on: the training query set's, or its de-biased copy."""
        base = self._cfg.querysets[self._cfg.training.queryset].collection
        debias = self[model].debias
        return debiased_name(base, debias.get("n_splits", 1), debias.get("seed", 0)) if debias else base

    def params(self, model: str) -> dict:
        """What a job that builds or fine-tunes a model needs from its `models.<name>` block."""
        spec = self[model]
        return canonical({"ranker": spec.ranker, "args": spec.args, **spec.learning_rates()})

    def training_params(self, model: str, overrides: Mapping | None = None) -> dict:
        """The recipe a model trains with: `training`, the model's own `training` block, then `overrides`
        (a fine-tuning or cross-validation section's)."""
        return training_recipe(self._cfg.data["training"], self[model].training, overrides)


# --- before validation: de-biased models take their original's block --------------------------------------------


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


def prepare(data: dict) -> dict:
    """The originals validated first, so that their errors name them, not a de-biased twin; then the de-biased
    models completed from them."""
    from posbias.config.loader import validate

    if isinstance(data.get("models"), dict):
        validate({**data, "models": {n: m for n, m in data["models"].items() if not _is_debiased(m)}})
    return _with_debiased_models(data)


def derive(cfg: dict) -> None:
    """A listwise ranker (RankGPT) is never trained: it is zero-shot whether or not the config says so."""
    for name, spec in cfg["models"].items():
        if spec["ranker"] in catalog.LISTWISE:
            spec["zero_shot"] = True


# --- checks ------------------------------------------------------------------------------------------------------


def check_models(cfg: dict, warnings: list[str]) -> None:
    models = cfg["models"]
    for name, model in models.items():
        baseline, args = model["baseline"], model["args"]
        require(models, baseline, f"models.{name}.baseline", "a configured model")
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
        refusal = catalog.BY_NAME[model["ranker"]].chunking.refusal(model["ranker"], args["chunk_tokens"],
                                                                     args["stride"], args["max_doc_tokens"])
        if refusal:
            raise ConfigError(f"models.{name}.args: {refusal}")
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


def check(cfg: dict, warnings: list[str]) -> None:
    for check_one in (check_models, check_debias, check_model_arguments, check_backbone_positions, check_recipes):
        check_one(cfg, warnings)


SECTION = Section("models", Path(__file__).with_name("models.schema.yaml"), check=check, prepare=prepare,
                  derive=derive, accessor=Models, complete_schema=catalog.with_rankers)
