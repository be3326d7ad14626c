"""Where the evaluation stage's files go (rules/evaluation.smk and `posbias evaluate`, `pool`, `study ...`): every
run's per-query values (Parquet) under `results/<setting>/`, each query set's
values of every system and seed stacked and seed-averaged under an experiment's `out` directory, and the dataset
statistics. The functions fill a template's wildcards; the templates are what the rules match."""

ZERO_SHOT_VALUES = "eval"
FINETUNED_VALUES = "eval-finetuned"


def cutoff(k: int | str) -> str:
    """The setting of the outcome table's values at a cut-off: RR@k."""
    return f"eval-cutoff/k{k}"


def values(queryset: str, system: str, seed: int | str, setting: str = ZERO_SHOT_VALUES) -> str:
    """One run's per-query values."""
    return f"results/{setting}/{queryset}/{system}/seed{seed}.parquet"


def first_stage_values(retriever: str, queryset: str, depth: int | str) -> str:
    """A retriever's candidates evaluated on their own (the first-stage table)."""
    return f"results/eval-first-stage/{retriever}/{queryset}/top{depth}.parquet"


def per_seed(out: str, queryset: str, setting: str = ZERO_SHOT_VALUES) -> str:
    """Every system's and seed's values of a query set, stacked (under an experiment's `out`)."""
    return f"{out}/{setting}/{queryset}/per_seed.parquet"


def seed_averaged(out: str, queryset: str, setting: str = ZERO_SHOT_VALUES) -> str:
    return f"{out}/{setting}/{queryset}/seed_averaged.parquet"


STATISTICS = "results/stats"  # the dataset statistics, one JSON file per collection and query set


def collection_statistics(collection: str) -> str:
    return f"{STATISTICS}/collections/{collection}.json"


def queryset_statistics(queryset: str) -> str:
    return f"{STATISTICS}/querysets/{queryset}.json"
