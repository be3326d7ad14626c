# Helpers shared by the rules: config cross-checks, path builders, wildcard constraints.
# Jobs receive their slice of the config through `params:`; scripts never read `config`.


class ConfigError(ValueError):
    pass


SYNTHETIC_QUERYSETS = ("train", "dev", "test")  # what the embedded generator writes
MODELS = sorted(config["models"])
SEEDS = config["training"]["seeds"]
TRAIN_QUERYSET = config["training"]["queryset"]
RERANK_QUERYSETS = config["rerank"]["querysets"]


def check_config(cfg):
    """Cross-references the schema cannot express; each error names the key."""
    querysets = cfg["querysets"]
    for name, spec in querysets.items():
        if spec["collection"] == "synthetic" and name not in SYNTHETIC_QUERYSETS:
            raise ConfigError(f"querysets.{name}: the synthetic collection has only {SYNTHETIC_QUERYSETS}")
    far = [n for n, s in querysets.items() if s["collection"] == "farrelevant"]
    if len(far) > 1:
        raise ConfigError(f"querysets: only one query set may use the farrelevant collection, got {far}")
    if cfg["training"]["queryset"] not in querysets:
        raise ConfigError(f"training.queryset: {cfg['training']['queryset']!r} is not in querysets")
    for qs in cfg["rerank"]["querysets"]:
        if qs not in querysets:
            raise ConfigError(f"rerank.querysets: {qs!r} is not in querysets")
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
    for table, spec in cfg["tables"].items():
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
    spec4 = cfg["tables"]["table4"]
    if spec4["reference"] not in spec4["models"]:
        raise ConfigError(f"tables.table4.reference: {spec4['reference']!r} is not among tables.table4.models")


check_config(config)


wildcard_constraints:
    collection="synthetic|farrelevant",
    queryset="|".join(config["querysets"]),
    model="|".join(MODELS),
    seed=r"\d+",


def collection_of(queryset):
    return config["querysets"][queryset]["collection"]


def docs_of(wildcards):
    return f"results/data/{collection_of(wildcards.queryset)}/docs.jsonl"


def queries_of(queryset):
    return f"results/data/{collection_of(queryset)}/queries/{queryset}.tsv"


def qrels_of(queryset):
    return f"results/data/{collection_of(queryset)}/qrels/{queryset}.txt"


def candidates_of(queryset):
    return f"results/candidates/{collection_of(queryset)}/{queryset}.run"


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
        "querysets": {q: {"alpha": s["alpha"]} for q, s in config["querysets"].items()},
        "n_seeds": len(SEEDS),
    }


# The query set of the FarRelevant collection (check_config allows at most one).
FAR_QUERYSET = next((q for q, s in config["querysets"].items() if s["collection"] == "farrelevant"), "farrelevant")
FIGURES = ["results/figures/farrelevant.png", "results/figures/farrelevant.pdf"]
