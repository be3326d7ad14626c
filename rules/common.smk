# What every stage's rules share: the config's names (read through CFG, built in the Snakefile by posbias.config),
# wildcard constraints, and the paths of data, token stores, candidates, runs and evaluations that several rules
# files read. A stage's own input functions and paths live in its rules/<stage>.smk (and posbias/<stage>/paths.py).
# Jobs receive their slice of the config through `params:`, always in canonical form (sorted keys); scripts never
# read `config`.

import re
from pathlib import Path

from posbias import names
from posbias.config import canonical
from posbias.config.sections.models import ZERO_SHOT_SEED, tokenizer_key
from posbias.config.sections.querysets import GENERATED_COLLECTIONS, SYNTHETIC_QUERYSETS
from posbias.data import paths as data_paths
from posbias.evaluation import paths as evaluation_paths
from posbias.rerank import paths as rerank_paths
from posbias.retrieval import paths as retrieval_paths
from posbias.training import paths as training_paths

QUERYSETS = CFG.querysets
COLLECTIONS = CFG.collections
RETRIEVERS = CFG.retrievers
TABLES = CFG.tables
MODELS = CFG.models.names
TRAINED_MODELS = CFG.models.trained  # the others are zero-shot: no train, fine-tune or fold jobs
ZERO_SHOT_MODELS = CFG.models.zero_shot  # scored by a torch module from pretrained weights
LISTWISE_MODELS = CFG.models.listwise  # RankGPT: through a language model
SEEDS = CFG.training.seeds
EXTERNAL_RUNS = CFG.external_runs
FINETUNING = CFG.finetuning
RERANK_QUERYSETS = CFG.rerank.querysets
CV_QUERYSETS = CFG.cross_validation.querysets
CV_CHECKPOINT_JOB_MODELS = CFG.cross_validation.checkpoint_job_models  # cross_validation.jobs: per_checkpoint
CV_PER_FOLD_MODELS = [m for m in TRAINED_MODELS if m not in CV_CHECKPOINT_JOB_MODELS]  # cross_validate_fold, merge_folds
DIRECT_QUERYSETS = CFG.rerank.direct
CHECKPOINT_JOB_MODELS = CFG.rerank.checkpoint_job_models  # rerank.jobs: per_checkpoint (rule rerank_checkpoint)
PER_QUERYSET_MODELS = [m for m in TRAINED_MODELS if m not in CHECKPOINT_JOB_MODELS]  # rules rerank and finetune
ZERO_SHOT_JOB_MODELS = CFG.rerank.zero_shot_job_models  # the same for zero-shot models (rule rerank_zero_shot_model)
POOLED_QUERYSETS = CFG.querysets.pooled
FINETUNED_QUERYSETS = list(FINETUNING["querysets"]) if FINETUNING else []
OUTCOME_QUERYSETS = CFG.tables.outcome_querysets
TOKENIZERS = CFG.models.tokenizers
FAR_QUERYSET = CFG.farrelevant.queryset
FAR_QUERYSETS = [FAR_QUERYSET, *([CFG.farrelevant.train_queryset] if CFG.farrelevant.train_queryset else [])]
OUT = CFG.results_dir  # this experiment's tables and figures

# Long jobs that need nothing of the rankers' chain but its data (Lost in the Middle's predictions, the probes'
# scorers) and the instant jobs before them go first, so that they run beside the rankers rather than alone at the
# end. Snakemake does not pass a job's priority on to the jobs it waits for, so each rule of such a chain has one.
RUN_EARLY_PRIORITY = 10


# What a job that runs a network asks for: one GPU. On one machine with several, `--resources gpu=N` lets N such jobs
# run at once and each claims its own device (posbias.gpu_pool, in the job's script); under SLURM the executor turns
# it into --gpus=1. Where there is no GPU the resource asks for nothing real: the jobs run on the CPU.
GPU_JOB = 1


def gpu_for_language_models(*specs):
    """A job that runs language models (`llm.models` specs): a GPU when one of them decodes here (an hf_* backend),
    none when they are APIs or mocks."""
    from posbias.llm.spec import LOCAL_BACKENDS

    return GPU_JOB if any(spec["backend"] in LOCAL_BACKENDS for spec in specs) else 0


def alternatives(names_):
    """A wildcard constraint matching exactly these names (and nothing when empty)."""
    return "|".join(re.escape(n) for n in names_) or "(?!)"


DEBIASED = CFG.models.debiased_collections  # de-biased copies of the training collection: name -> {base, n_splits, seed}


wildcard_constraints:
    collection=alternatives([*GENERATED_COLLECTIONS, *COLLECTIONS, *DEBIASED]),
    queryset=alternatives(QUERYSETS),
    model=alternatives(MODELS),
    retriever=alternatives([*RETRIEVERS, names.GIVEN]),
    tokenizer=alternatives(TOKENIZERS),
    external=alternatives(EXTERNAL_RUNS),
    seed=r"\d+",
    fold=r"\d+",
    depth=r"\d+",
    k=r"\d+",


# --- data ---------------------------------------------------------------------------------------


def collection_of(queryset):
    return QUERYSETS[queryset].collection


def source_docs_of(collection):
    """The documents as the source gives them (what BM25 and the dense encoder index)."""
    if collection in GENERATED_COLLECTIONS:
        return data_paths.docs(collection)
    return data_paths.source_docs(collection)


def queries_of(queryset):
    return data_paths.queries(collection_of(queryset), queryset)


def qrels_of(queryset):
    return data_paths.qrels(collection_of(queryset), queryset)


def tokens_of(collection, model):
    """The token store a model reads the documents of a collection from."""
    return data_paths.tokens(collection, CFG.models.tokenizer_of(model))


# --- retrieval and runs -------------------------------------------------------------------------


def lucene_index_of(collection):
    """A Lucene index named in the config is used as it is; otherwise the workflow builds one."""
    return COLLECTIONS.get(collection, {}).get("lucene_index", retrieval_paths.lucene_index(collection))


def candidates_of(queryset):
    qs = QUERYSETS[queryset]
    return retrieval_paths.candidates(names.GIVEN if qs.candidates else qs.retriever, queryset, qs.depth)


def run_of(queryset, system, seed, setting=rerank_paths.ZERO_SHOT_RUNS):
    """A system's run on a query set: the candidates, a run made elsewhere, or a reranking."""
    if system == names.RETRIEVER:
        return candidates_of(queryset)
    if system in EXTERNAL_RUNS:
        return EXTERNAL_RUNS[system]["runs"][queryset]
    return rerank_paths.run(queryset, system, seed, setting)


# --- evaluation ---------------------------------------------------------------------------------


def evaluated(queryset, system, seed, setting=evaluation_paths.ZERO_SHOT_VALUES):
    return evaluation_paths.values(queryset, system, seed, setting)


def systems_evaluated(queryset, setting=evaluation_paths.ZERO_SHOT_VALUES):
    """Per-seed evaluation files of every system on a query set; for `eval-finetuned`, the fine-tuned models'
    with the retriever and random rows of the zero-shot setting (nothing of theirs is fine-tuned)."""
    return [evaluated(queryset, system, seed, setting if system in CFG.models else evaluation_paths.ZERO_SHOT_VALUES)
            for system, seed in CFG.tables.systems(queryset, setting)]
