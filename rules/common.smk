# Helpers shared by the rules: config cross-checks, path builders, wildcard constraints.
# Jobs receive their slice of the config through `params:`; scripts never read `config`.

import re
from pathlib import Path

from snakemake.logging import logger

from posbias.rankers import catalog


class ConfigError(ValueError):
    pass


GENERATED_COLLECTIONS = ("synthetic", "farrelevant")  # written by the embedded generator and FarRelevant builder
SYNTHETIC_QUERYSETS = ("train", "dev", "test")  # what the embedded generator writes
QUERYSETS = config["querysets"]
COLLECTIONS = config.get("collections", {})
RETRIEVERS = config["retrievers"]


def skip_unimplemented_models(cfg):
    """Drop models whose ranker is planned but not implemented yet, saying so once per model."""
    skipped = {m for m, spec in cfg["models"].items() if spec["ranker"] not in catalog.IMPLEMENTED}
    for model in sorted(skipped):
        logger.warning(catalog.not_implemented_message(model, cfg["models"][model]["ranker"]))
    cfg["models"] = {m: spec for m, spec in cfg["models"].items() if m not in skipped}
    for spec in cfg["tables"].values():
        if "models" in spec:
            spec["models"] = [m for m in spec["models"] if m not in skipped]
    if not cfg["models"]:
        raise ConfigError("models: none of the configured rankers is implemented yet")


def check_collections(cfg):
    for name, spec in cfg["querysets"].items():
        collection = spec["collection"]
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
    far = [n for n, s in cfg["querysets"].items() if s["collection"] == "farrelevant"]
    if len(far) > 1:
        raise ConfigError(f"querysets: only one query set may use the farrelevant collection, got {far}")
    used = {s["collection"] for s in cfg["querysets"].values()}
    # FarRelevant documents are built from the generator's passage collection.
    for section, needed_by in (("generator", {"synthetic", "farrelevant"}), ("farrelevant", {"farrelevant"})):
        if used & needed_by and section not in cfg:
            raise ConfigError(f"{section}: required because a query set uses the {sorted(used & needed_by)} "
                              f"collection")


def check_retrievers(cfg):
    retrievers = cfg["retrievers"]
    for name, spec in cfg["querysets"].items():
        if "candidates" not in spec and spec["retriever"] not in retrievers:
            raise ConfigError(f"querysets.{name}.retriever: {spec['retriever']!r} is not a key of retrievers")
    for name, spec in retrievers.items():
        if spec["kind"] == "hybrid":
            partner = retrievers.get(spec["bm25"])
            if partner is None or partner["kind"] != "bm25":
                raise ConfigError(f"retrievers.{name}.bm25: {spec['bm25']!r} is not a bm25 retriever")
    first_stage = cfg["tables"].get("first_stage")
    if first_stage:
        for key, known in (("querysets", cfg["querysets"]), ("retrievers", retrievers)):
            for item in first_stage[key]:
                if item not in known:
                    raise ConfigError(f"tables.first_stage.{key}: {item!r} is not a key of {key}")


def check_models_and_tables(cfg):
    querysets = cfg["querysets"]
    if cfg["training"]["queryset"] not in querysets:
        raise ConfigError(f"training.queryset: {cfg['training']['queryset']!r} is not in querysets")
    for qs in cfg["rerank"]["querysets"]:
        if qs not in querysets:
            raise ConfigError(f"rerank.querysets: {qs!r} is not in querysets")
    for qs in cfg.get("cross_validation", {}).get("querysets", []):
        if qs not in cfg["rerank"]["querysets"]:
            raise ConfigError(f"cross_validation.querysets: {qs!r} is not in rerank.querysets")
        if "folds" not in querysets[qs]:
            raise ConfigError(f"cross_validation.querysets: {qs!r} has no `folds`")
    for name, model in cfg["models"].items():
        baseline = model["baseline"]
        if baseline not in cfg["models"]:
            raise ConfigError(f"models.{name}.baseline: {baseline!r} is not a configured model")
        if cfg["models"][baseline]["ranker"] != "firstp":
            raise ConfigError(f"models.{name}.baseline: {baseline!r} is not a firstp model")
        if model["ranker"] == "firstp" and model["args"]["max_doc_tokens"] != model["args"]["chunk_tokens"]:
            raise ConfigError(f"models.{name}.args: firstp needs max_doc_tokens == chunk_tokens")
        if model["args"]["stride"] > model["args"]["chunk_tokens"]:
            raise ConfigError(f"models.{name}.args.stride: larger than chunk_tokens, text would be skipped")
    for table in ("table1", "table4"):
        spec = cfg["tables"].get(table)
        if spec is None:
            continue
        for m in spec["models"]:
            if m not in cfg["models"]:
                raise ConfigError(f"tables.{table}.models: {m!r} is not a configured model")
            baseline = cfg["models"][m]["baseline"]
            if table == "table1" and baseline not in spec["models"]:
                raise ConfigError(f"tables.{table}.models: {m!r} needs its baseline {baseline!r} in the table")
        for i, column in enumerate(spec["columns"]):
            qs = column["queryset"]
            if qs not in cfg["rerank"]["querysets"]:
                raise ConfigError(f"tables.{table}.columns[{i}].queryset: {qs!r} is not in rerank.querysets")
            if column["metric"] not in querysets[qs]["metrics"]:
                raise ConfigError(f"tables.{table}.columns[{i}].metric: {column['metric']!r} is not in "
                                  f"querysets.{qs}.metrics")
    spec4 = cfg["tables"].get("table4")
    if spec4 and spec4["reference"] not in spec4["models"]:
        raise ConfigError(f"tables.table4.reference: {spec4['reference']!r} is not among tables.table4.models")


skip_unimplemented_models(config)
check_collections(config)
check_retrievers(config)
check_models_and_tables(config)

MODELS = sorted(config["models"])
SEEDS = config["training"]["seeds"]
TRAIN_QUERYSET = config["training"]["queryset"]
RERANK_QUERYSETS = config["rerank"]["querysets"]
CV_QUERYSETS = config.get("cross_validation", {}).get("querysets", [])
# Query sets reranked directly by each trained checkpoint (the cross-validated ones go fold by fold).
DIRECT_QUERYSETS = [qs for qs in RERANK_QUERYSETS if qs not in CV_QUERYSETS]
BM25_RETRIEVERS = [r for r, s in RETRIEVERS.items() if s["kind"] == "bm25"]
HYBRID_RETRIEVERS = [r for r, s in RETRIEVERS.items() if s["kind"] == "hybrid"]


def alternatives(names):
    """A wildcard constraint matching exactly these names (and nothing when empty)."""
    return "|".join(re.escape(n) for n in names) or "(?!)"


wildcard_constraints:
    collection=alternatives([*GENERATED_COLLECTIONS, *COLLECTIONS]),
    queryset=alternatives(QUERYSETS),
    model=alternatives(MODELS),
    retriever=alternatives([*RETRIEVERS, "given"]),
    seed=r"\d+",
    fold=r"\d+",
    depth=r"\d+",


# --- paths --------------------------------------------------------------------------------------


def collection_of(queryset):
    return QUERYSETS[queryset]["collection"]


def source_docs_of(collection):
    """The documents as the source gives them (what BM25 and the dense encoder index)."""
    if collection in GENERATED_COLLECTIONS:
        return f"results/data/{collection}/docs.jsonl"
    return f"results/data/{collection}/source/docs.jsonl"


def docs_of(collection):
    """The documents the rankers read: truncated when the collection asks for it."""
    if collection in COLLECTIONS and "truncate" in COLLECTIONS[collection]:
        return f"results/data/{collection}/docs.truncated.jsonl"
    return source_docs_of(collection)


def queries_of(queryset):
    return f"results/data/{collection_of(queryset)}/queries/{queryset}.tsv"


def qrels_of(queryset):
    return f"results/data/{collection_of(queryset)}/qrels/{queryset}.txt"


def folds_of(queryset):
    return f"results/data/{collection_of(queryset)}/folds/{queryset}.tsv"


def lucene_index_of(collection):
    """A Lucene index named in the config is used as it is; otherwise the workflow builds one."""
    return COLLECTIONS.get(collection, {}).get("lucene_index", f"results/index/{collection}/lucene")


def retrieval_run(retriever, queryset, depth):
    return f"results/candidates/{retriever}/{queryset}/top{depth}.run"


def candidates_of(queryset):
    spec = QUERYSETS[queryset]
    retriever = "given" if "candidates" in spec else spec["retriever"]
    return retrieval_run(retriever, queryset, spec["depth"])


def expansions_input(wildcards):
    """The doc2query file as an input once it exists; until then the index job stops with a clear error,
    and the graph (a dry run) still builds."""
    path = COLLECTIONS.get(wildcards.collection, {}).get("expansions")
    return {"expansions": path} if path and Path(path).exists() else {}


def expansions_param(wildcards):
    return COLLECTIONS.get(wildcards.collection, {}).get("expansions")


for _name, _spec in COLLECTIONS.items():
    if _spec.get("expansions") and not Path(_spec["expansions"]).exists():
        logger.warning(f"collections.{_name}.expansions: {_spec['expansions']} does not exist (yet); "
                       f"its bm25_index job will fail until it does")


def n_folds(queryset):
    folds = QUERYSETS[queryset]["folds"]
    if isinstance(folds, list):
        return len(folds)
    from posbias.io import read_folds  # a user's qid<TAB>fold file, read when the graph is built

    numbers = set(read_folds(folds).values())
    if numbers != set(range(1, len(numbers) + 1)):
        raise ConfigError(f"querysets.{queryset}.folds: {folds} must number its folds 1..k, got {sorted(numbers)}")
    return len(numbers)


def systems_evaluated(queryset):
    """Per-seed evaluation files of every system on a query set."""
    files = [f"results/eval/{queryset}/retriever/seed0.parquet"]
    files += expand("results/eval/{qs}/random/seed{seed}.parquet", qs=queryset, seed=SEEDS)
    files += expand("results/eval/{qs}/{model}/seed{seed}.parquet", qs=queryset, model=MODELS, seed=SEEDS)
    return files


def table_querysets(table):
    return sorted({c["queryset"] for c in config["tables"][table]["columns"]})


def table_params(table):
    """What a table job needs: its spec, model labels and baselines, query set thresholds."""
    return {
        "spec": config["tables"][table],
        "models": {m: {"label": s["label"], "baseline": s["baseline"]} for m, s in config["models"].items()},
        "querysets": {q: {"alpha": s["alpha"]} for q, s in QUERYSETS.items()},
        "n_seeds": len(SEEDS),
    }


# The query set of the FarRelevant collection (check_collections allows at most one).
FAR_QUERYSET = next((q for q, s in QUERYSETS.items() if s["collection"] == "farrelevant"), "farrelevant")
FIGURES = ["results/figures/farrelevant.png", "results/figures/farrelevant.pdf"] if "table4" in config["tables"] else []
FIRST_STAGE_TABLE = ["results/first_stage.tex"] if "first_stage" in config["tables"] else []
REPORTED = ["results/table1.tex", *(["results/table4.tex"] if "table4" in config["tables"] else []),
            *FIGURES, *FIRST_STAGE_TABLE]
