# Helpers shared by the rules: config cross-checks, path builders, wildcard constraints.
# Jobs receive their slice of the config through `params:`; scripts never read `config`.

import re
from pathlib import Path

from snakemake.logging import logger

from posbias.rankers import catalog
from posbias.settings import training_recipe


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
    far_train = cfg.get("farrelevant", {}).get("train_queryset")
    if far_train and cfg["querysets"].get(far_train, {}).get("collection") != "farrelevant":
        raise ConfigError(f"farrelevant.train_queryset: {far_train!r} is not a query set of the farrelevant collection")
    far = [n for n, s in cfg["querysets"].items() if s["collection"] == "farrelevant" and n != far_train]
    if len(far) > 1:
        raise ConfigError(f"querysets: only one query set (besides farrelevant.train_queryset) may use the "
                          f"farrelevant collection, got {far}")
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
    finetuning = cfg.get("finetuning")
    if finetuning:
        if finetuning["queryset"] not in querysets:
            raise ConfigError(f"finetuning.queryset: {finetuning['queryset']!r} is not in querysets")
        for qs in finetuning["querysets"]:
            if qs not in cfg["rerank"]["querysets"] or qs in cfg.get("cross_validation", {}).get("querysets", []):
                raise ConfigError(f"finetuning.querysets: {qs!r} must be in rerank.querysets and not cross-validated")
    for table in ("table1", "table4", *BASELINE_TABLE_NAMES):
        spec = cfg["tables"].get(table)
        if spec is None:
            continue
        for m in spec["models"]:
            if m not in cfg["models"]:
                raise ConfigError(f"tables.{table}.models: {m!r} is not a configured model")
            baseline = cfg["models"][m]["baseline"]
            if table != "table4" and baseline not in spec["models"]:
                raise ConfigError(f"tables.{table}.models: {m!r} needs its baseline {baseline!r} in the table")
        for i, column in enumerate(spec["columns"]):
            qs = column["queryset"]
            if qs not in cfg["rerank"]["querysets"]:
                raise ConfigError(f"tables.{table}.columns[{i}].queryset: {qs!r} is not in rerank.querysets")
            if column["metric"] not in querysets[qs]["metrics"]:
                raise ConfigError(f"tables.{table}.columns[{i}].metric: {column['metric']!r} is not in "
                                  f"querysets.{qs}.metrics")
            if column.get("setting") == "fine-tuned" and qs not in (finetuning or {}).get("querysets", []):
                raise ConfigError(f"tables.{table}.columns[{i}].setting: fine-tuned needs {qs!r} in "
                                  f"finetuning.querysets")
    spec4 = cfg["tables"].get("table4")
    if spec4 and spec4["reference"] not in spec4["models"]:
        raise ConfigError(f"tables.table4.reference: {spec4['reference']!r} is not among tables.table4.models")
    outcomes = cfg["tables"].get("outcomes")
    if outcomes:
        for qs in outcomes["querysets"]:
            if qs not in cfg["rerank"]["querysets"]:
                raise ConfigError(f"tables.outcomes.querysets: {qs!r} is not in rerank.querysets")
            if outcomes["k"] >= querysets[qs]["depth"]:
                # Legal (runs made elsewhere have other candidates), but our rankers would tie on case (2).
                logger.warning(f"tables.outcomes.k: {outcomes['k']} is not below querysets.{qs}.depth "
                               f"({querysets[qs]['depth']}); rankers reordering the same candidates all find the "
                               f"relevant document in the top k or all miss it, so case (2) stays empty")
        for m in outcomes.get("models", []):
            if m not in cfg["models"]:
                raise ConfigError(f"tables.outcomes.models: {m!r} is not a configured model")
    for qs in cfg["tables"].get("dataset_stats", {}).get("querysets", []):
        if qs not in querysets:
            raise ConfigError(f"tables.dataset_stats.querysets: {qs!r} is not in querysets")


def check_external_runs(cfg):
    for name, spec in cfg.get("external_runs", {}).items():
        if name in cfg["models"]:
            raise ConfigError(f"external_runs.{name}: the name is already a model's")
        for qs in spec["runs"]:
            if qs not in cfg["rerank"]["querysets"]:
                raise ConfigError(f"external_runs.{name}.runs: {qs!r} is not in rerank.querysets")
        if "baseline" in spec and spec["baseline"] not in cfg["models"]:
            raise ConfigError(f"external_runs.{name}.baseline: {spec['baseline']!r} is not a configured model")


BASELINE_TABLE_NAMES = ("table1", "table7", "table8")  # the same layout, different columns

skip_unimplemented_models(config)
check_collections(config)
check_retrievers(config)
check_models_and_tables(config)
check_external_runs(config)

MODELS = sorted(config["models"])
SEEDS = config["training"]["seeds"]
TRAIN_QUERYSET = config["training"]["queryset"]
RERANK_QUERYSETS = config["rerank"]["querysets"]
CV_QUERYSETS = config.get("cross_validation", {}).get("querysets", [])
# Query sets reranked directly by each trained checkpoint (the cross-validated ones go fold by fold).
DIRECT_QUERYSETS = [qs for qs in RERANK_QUERYSETS if qs not in CV_QUERYSETS]
BM25_RETRIEVERS = [r for r, s in RETRIEVERS.items() if s["kind"] == "bm25"]
HYBRID_RETRIEVERS = [r for r, s in RETRIEVERS.items() if s["kind"] == "hybrid"]


def tokenizer_key(name):
    """A path component for a tokenizer (a hub name, a directory or offline:...)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "_", name).strip("_.") or "tokenizer"


# One token store per (collection, ranker tokenizer): capped at the longest document budget of the
# models that share the tokenizer, so FirstP and MaxP on one backbone read the same store.
TOKENIZERS = {}
for _spec in config["models"].values():
    _entry = TOKENIZERS.setdefault(tokenizer_key(_spec["args"]["backbone"]),
                                   {"name": _spec["args"]["backbone"], "cap": 0, "trust_remote_code": False})
    _entry["cap"] = max(_entry["cap"], _spec["args"]["max_doc_tokens"])
    _entry["trust_remote_code"] |= bool(_spec["args"].get("trust_remote_code"))


def alternatives(names):
    """A wildcard constraint matching exactly these names (and nothing when empty)."""
    return "|".join(re.escape(n) for n in names) or "(?!)"


wildcard_constraints:
    collection=alternatives([*GENERATED_COLLECTIONS, *COLLECTIONS]),
    queryset=alternatives(QUERYSETS),
    model=alternatives(MODELS),
    retriever=alternatives([*RETRIEVERS, "given"]),
    tokenizer=alternatives(TOKENIZERS),
    external=alternatives(config.get("external_runs", {})),
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


def tokens_of(collection, model):
    """The token store a model reads the documents of a collection from."""
    return f"results/tokens/{collection}/{tokenizer_key(config['models'][model]['args']['backbone'])}"


def model_params(model):
    """What a job that builds or fine-tunes a model needs from its `models.<name>` block."""
    return {k: config["models"][model][k] for k in ("ranker", "args", "lr", "head_lr")}


def training_params(overrides=None):
    """The training recipe a job gets (`posbias.settings.training_recipe`)."""
    return training_recipe(config["training"], overrides)


# How rerank jobs score: batch size, device and the backbone's autocast precision.
SCORING = {k: v for k, v in config["rerank"].items() if k != "querysets"}


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


TABLES = config["tables"]
EXTERNAL_RUNS = config.get("external_runs", {})
FINETUNING = config.get("finetuning")
FINETUNED_QUERYSETS = FINETUNING["querysets"] if FINETUNING else []
OUTCOME_QUERYSETS = TABLES.get("outcomes", {}).get("querysets", [])
BASELINE_TABLES = [t for t in BASELINE_TABLE_NAMES if t in TABLES]


def metrics_of(queryset):
    """The metrics stored per query: the configured ones, plus RR@k where the outcome table needs it."""
    metrics = list(QUERYSETS[queryset]["metrics"])
    if queryset in OUTCOME_QUERYSETS and f"RR@{TABLES['outcomes']['k']}" not in metrics:
        metrics.append(f"RR@{TABLES['outcomes']['k']}")
    return metrics


def evaluation_params(querysets):
    """What evaluate.py needs per query set, in the order of `querysets`."""
    return {"querysets": list(querysets), "metrics": [metrics_of(qs) for qs in querysets],
            "rel_levels": [QUERYSETS[qs]["rel_level"] for qs in querysets]}


def systems_evaluated(queryset, stage="eval"):
    """Per-seed evaluation files of every system on a query set; `eval-finetuned` for fine-tuned models
    (the retriever and random rows are shared with the zero-shot setting)."""
    files = [f"results/eval/{queryset}/retriever/seed0.parquet"]
    files += expand("results/eval/{qs}/random/seed{seed}.parquet", qs=queryset, seed=SEEDS)
    files += expand("results/{stage}/{qs}/{model}/seed{seed}.parquet", stage=stage, qs=queryset, model=MODELS,
                    seed=SEEDS)
    if stage == "eval":
        files += [f"results/eval/{queryset}/{name}/seed0.parquet" for name, spec in EXTERNAL_RUNS.items()
                  if queryset in spec["runs"]]
    return files


def table_querysets(table):
    return sorted({c["queryset"] for c in TABLES[table]["columns"] if c.get("setting") != "fine-tuned"})


def finetuned_table_querysets(table):
    return sorted({c["queryset"] for c in TABLES[table]["columns"] if c.get("setting") == "fine-tuned"})


def table_params(table):
    """What a table job needs: its spec, labels and baselines, query set thresholds, the test recipe."""
    return {
        "spec": TABLES[table],
        "models": {m: {"label": s["label"], "baseline": s["baseline"]} for m, s in config["models"].items()},
        # only the runs made elsewhere that this table shows, so adding one elsewhere does not rebuild it
        "external": {n: {"label": s["label"], "baseline": s.get("baseline"), "querysets": sorted(s["runs"])}
                     for n, s in EXTERNAL_RUNS.items()
                     if set(s["runs"]) & {c["queryset"] for c in TABLES[table]["columns"]}},
        "querysets": {q: {"alpha": s["alpha"]} for q, s in QUERYSETS.items()},
        "n_seeds": len(SEEDS),
        "statistics": config["statistics"],
    }


def table_outputs(name, caption, category="Tables"):
    """The four files of a table; the HTML one goes into the Snakemake report."""
    return {
        "tex": f"results/{name}.tex",
        "csv": f"results/{name}.csv",
        "md": f"results/{name}.md",
        "html": report(f"results/{name}.html", caption=f"../report/{caption}.rst", category=category,
                       labels={"table": name}),
    }


# The FarRelevant test query set (check_collections allows one, besides the training split).
FAR_TRAIN_QUERYSET = config.get("farrelevant", {}).get("train_queryset")
FAR_QUERYSET = next((q for q, s in QUERYSETS.items() if s["collection"] == "farrelevant" and q != FAR_TRAIN_QUERYSET),
                    "farrelevant")
FAR_QUERYSETS = [FAR_QUERYSET, *([FAR_TRAIN_QUERYSET] if FAR_TRAIN_QUERYSET else [])]
FIGURES = ["results/figures/farrelevant.png", "results/figures/farrelevant.pdf"] if "table4" in TABLES else []
FIRST_STAGE_TABLE = ["results/first_stage.tex"] if "first_stage" in TABLES else []
OUTCOME_TABLE = ["results/outcomes.tex"] if "outcomes" in TABLES else []
DATASET_TABLES = ["results/table9.tex", "results/table10.tex"] if "dataset_stats" in TABLES else []
REPORTED = [*(f"results/{t}.tex" for t in BASELINE_TABLES), *(["results/table4.tex"] if "table4" in TABLES else []),
            *FIGURES, *FIRST_STAGE_TABLE, *OUTCOME_TABLE, *DATASET_TABLES]


def statistics_input(wildcards):
    """The collection's token store when the rankers tokenise the same documents with the statistics'
    tokenizer (it holds every document's length); otherwise the documents, tokenised here."""
    tokenizer = TABLES["dataset_stats"]["tokenizer"]
    key, collection = tokenizer_key(tokenizer), wildcards.collection
    if TOKENIZERS.get(key, {}).get("name") == tokenizer and docs_of(collection) == source_docs_of(collection):
        return {"tokens": f"results/tokens/{collection}/{key}"}
    return {"docs": source_docs_of(collection)}
