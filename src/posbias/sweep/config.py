"""The `sweep` config section: the position sweep (the relevant passage moved through FarRelevant-style
documents) and the position breakdown table (`tables.position_breakdown`), both read by rules/sweep.smk."""

from __future__ import annotations

from pathlib import Path

from posbias.config.canonical import canonical
from posbias.config.section import ConfigError, Section, require
from posbias.config.sections.models import reranks
from posbias.config.sections.querysets import GENERATED_COLLECTIONS, plain_querysets
from posbias.data import paths as data_paths

SWEEP_COLLECTION = "sweep"  # the position sweep's collection
# What the sweep reads by default: the embedded generator's passage collection, FarRelevant's source.
GENERATED_PASSAGES = {"docs": data_paths.docs(data_paths.PASSAGE_COLLECTION),
                      "qrels": data_paths.qrels(data_paths.PASSAGE_COLLECTION, data_paths.PASSAGE_QUERYSET)}
SWEEP_DEFAULTS = {"tokenizer": "tokenizer", "first_window": "first_window", "doc_tokens": "max_doc_tokens"}


def sweep_candidates(queryset: str) -> str:
    """The candidate run the sweep builder writes for its query set (that query set's `candidates`)."""
    return f"{data_paths.DATA}/{SWEEP_COLLECTION}/candidates/{queryset}.run"


def derive(cfg: dict) -> None:
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
    require(plain_querysets(cfg), source, "sweep.source", "a (not pooled) key of querysets")
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
        require(cfg["models"], m, "sweep.models", "a configured model")
        if not reranks(cfg["models"][m], name):
            raise ConfigError(f"sweep.models: {m!r} does not rerank {name!r} (models.{m}.querysets)")


def check_position_breakdown(cfg: dict, warnings: list[str]) -> None:
    """The breakdown reads a reranked query set's metric and a positions file for it."""
    spec = cfg["tables"].get("position_breakdown")
    if not spec:
        return
    key, qs = "tables.position_breakdown", spec["queryset"]
    require(cfg["rerank"]["querysets"], qs, f"{key}.queryset", "in rerank.querysets")
    if spec["metric"] not in cfg["querysets"][qs]["metrics"]:
        raise ConfigError(f"{key}.metric: {spec['metric']!r} is not in querysets.{qs}.metrics")
    if any(b <= a for a, b in zip(spec["bins"], spec["bins"][1:])):
        raise ConfigError(f"{key}.bins: {spec['bins']} must increase")
    if "positions" not in spec and cfg["querysets"][qs]["collection"] not in GENERATED_COLLECTIONS:
        raise ConfigError(f"{key}.positions: required for {qs!r} (only generated collections write positions)")
    for m in spec.get("models", []):
        require(cfg["models"], m, f"{key}.models", "a configured model")
        if not reranks(cfg["models"][m], qs):
            raise ConfigError(f"{key}.models: {m!r} does not rerank {qs!r} (models.{m}.querysets)")


def check(cfg: dict, warnings: list[str]) -> None:
    check_sweep(cfg, warnings)
    check_position_breakdown(cfg, warnings)


class Sweep:
    """`CFG.sweep`: the section's block (empty without one), its query set and the models its report shows."""

    def __init__(self, cfg):
        self._cfg = cfg
        self.data: dict = cfg.data.get("sweep") or {}

    @property
    def queryset(self) -> str | None:
        """The query set of the sweep collection, when a `sweep` section builds one."""
        return next((n for n, q in self._cfg.querysets.items() if q.collection == SWEEP_COLLECTION), None)

    @property
    def models(self) -> list[str]:
        """The sweep report's models: `sweep.models`, else every model that reranks the sweep query set."""
        cfg, qs = self._cfg, self.queryset
        if qs is None or qs not in cfg.rerank.querysets:
            return []
        shown = self.data.get("models") or [m for m in cfg.models if cfg.models[m].reranks(qs)]
        first = [m for m in cfg.tables["table1"]["models"] if m in shown]  # Table 1's order, then the rest
        return first + [m for m in shown if m not in first]

    @property
    def breakdown_models(self) -> list[str]:
        """The breakdown's rows: `tables.position_breakdown.models`, else Table 1's models that rerank its query
        set."""
        cfg, spec = self._cfg, self._cfg.tables.get("position_breakdown")
        if not spec:
            return []
        return list(spec.get("models") or [m for m in cfg.tables["table1"]["models"]
                                           if cfg.models[m].reranks(spec["queryset"])])

    # what the jobs receive besides files (rules/sweep.smk's params and `posbias sweep ...` alike)
    def build_args(self) -> dict:
        queryset = self.queryset
        return dict(settings=canonical({k: self.data[k] for k in ("n_queries", "n_positions", "doc_tokens", "seed")}),
                    tokenizer=self.data["tokenizer"], queryset=queryset, depth=self._cfg.querysets[queryset].depth)

    def report_args(self) -> dict:
        cfg, models = self._cfg, self._cfg.models
        return dict(models={m: models[m].label for m in self.models}, metric="RR",
                    statistics=canonical(cfg.data["statistics"]),
                    alpha=cfg.querysets[self.queryset].alpha if self.queryset else None,
                    first_window=self.data.get("first_window"), n_seeds=len(cfg.training.seeds),
                    zero_shot=[models[m].label for m in self.models if models[m].zero_shot],
                    note=self.data.get("note", ""))

    def breakdown_args(self) -> dict:
        cfg, models, spec = self._cfg, self._cfg.models, self._cfg.tables["position_breakdown"]
        return dict(spec=canonical({k: spec[k] for k in ("queryset", "metric", "bins")}),
                    models={m: models[m].label for m in self.breakdown_models},
                    retriever_label=spec.get("retriever_label"), correction=cfg.data["statistics"]["correction"],
                    alpha=cfg.querysets[spec["queryset"]].alpha, n_seeds=len(cfg.training.seeds),
                    zero_shot=[models[m].label for m in self.breakdown_models if models[m].zero_shot])


SECTION = Section("sweep", Path(__file__).with_name("config.schema.yaml"), check=check, derive=derive,
                  accessor=Sweep)
