# Path builders, input functions and wildcard constraints shared by the rules. The config itself is
# read, checked and derived by posbias.config (CFG, built in the Snakefile); jobs receive their slice
# of it through `params:`, always in canonical form (sorted keys), and scripts never read `config`.

import re
from pathlib import Path

from posbias import names
from posbias.config import canonical
from posbias.config.sections.models import ZERO_SHOT_SEED, tokenizer_key
from posbias.config.sections.querysets import GENERATED_COLLECTIONS, SYNTHETIC_QUERYSETS

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
        return f"results/data/{collection}/docs.jsonl"
    return f"results/data/{collection}/source/docs.jsonl"


def docs_of(collection):
    """The documents the rankers read: truncated when the collection asks for it, de-biased for a de-biased copy
    (which the token store then caps at the rankers' budget)."""
    if collection in DEBIASED:
        return f"results/data/{collection}/docs.jsonl"
    if collection in COLLECTIONS and "truncate" in COLLECTIONS[collection]:
        return f"results/data/{collection}/docs.truncated.jsonl"
    return source_docs_of(collection)


def queries_of(queryset):
    return f"results/data/{collection_of(queryset)}/queries/{queryset}.tsv"


def qrels_of(queryset):
    return f"results/data/{collection_of(queryset)}/qrels/{queryset}.txt"


def folds_of(queryset):
    return f"results/data/{collection_of(queryset)}/folds/{queryset}.tsv"


def tokens_of(collection, model):
    """The token store a model reads the documents of a collection from."""
    return f"results/tokens/{collection}/{CFG.models.tokenizer_of(model)}"


def expansions_input(wildcards):
    """The doc2query file as an input once it exists; until then the index job stops with a clear error,
    and the graph (a dry run) still builds."""
    path = COLLECTIONS.get(wildcards.collection, {}).get("expansions")
    return {"expansions": path} if path and Path(path).exists() else {}


def statistics_input(wildcards):
    """The collection's token store when the rankers tokenise the same documents with the statistics'
    tokenizer (it holds every document's length); otherwise the documents, tokenised here."""
    tokenizer = TABLES["dataset_stats"]["tokenizer"]
    key, collection = tokenizer_key(tokenizer), wildcards.collection
    if TOKENIZERS.get(key, {}).get("name") == tokenizer and docs_of(collection) == source_docs_of(collection):
        return {"tokens": f"results/tokens/{collection}/{key}"}
    return {"docs": source_docs_of(collection)}


# --- retrieval and runs -------------------------------------------------------------------------


def lucene_index_of(collection):
    """A Lucene index named in the config is used as it is; otherwise the workflow builds one."""
    return COLLECTIONS.get(collection, {}).get("lucene_index", f"results/index/{collection}/lucene")


def retrieval_run(retriever, queryset, depth):
    return f"results/candidates/{retriever}/{queryset}/top{depth}.run"


def candidates_of(queryset):
    qs = QUERYSETS[queryset]
    return retrieval_run(names.GIVEN if qs.candidates else qs.retriever, queryset, qs.depth)


def run_of(queryset, system, seed, stage="runs"):
    """A system's run on a query set: the candidates, a run made elsewhere, or a reranking."""
    if system == names.RETRIEVER:
        return candidates_of(queryset)
    if system in EXTERNAL_RUNS:
        return EXTERNAL_RUNS[system]["runs"][queryset]
    return f"results/{stage}/{queryset}/{system}/seed{seed}.run"


def finetuned_run(queryset, suffix=""):
    """A fine-tuned checkpoint's run on a query set, as a pattern in the fine-tuning job's {model} and {seed}."""
    return run_of(queryset, "{model}", "{seed}", stage="runs-finetuned") + suffix


def finetuning_inputs(prefix=""):
    """The fine-tuning job's inputs (rules finetune and rerank_checkpoint): the `finetuning.queryset` judgments
    it trains on, and what it reranks (`finetuning.querysets`). Keys take `prefix` where a job has inputs of
    its own under the same names."""
    inputs = dict(
        tokens=lambda wc: tokens_of(collection_of(FINETUNING["queryset"]), wc.model),
        queries=queries_of(FINETUNING["queryset"]),
        qrels=qrels_of(FINETUNING["queryset"]),
        candidates=candidates_of(FINETUNING["queryset"]),
        rerank_tokens=lambda wc: [tokens_of(collection_of(qs), wc.model) for qs in FINETUNED_QUERYSETS],
        rerank_queries=[queries_of(qs) for qs in FINETUNED_QUERYSETS],
        rerank_candidates=[candidates_of(qs) for qs in FINETUNED_QUERYSETS],
    )
    return {prefix + key: value for key, value in inputs.items()}


def finetuning_outputs(prefix=""):
    """The fine-tuned checkpoint and its runs (rules finetune and rerank_checkpoint)."""
    outputs = {  # a dict literal: `checkpoint` is a Snakemake keyword at the start of a line
        "checkpoint": directory("results/models-finetuned/{model}/seed{seed}"),
        "runs": [finetuned_run(qs) for qs in FINETUNED_QUERYSETS],
        "infos": [finetuned_run(qs, ".json") for qs in FINETUNED_QUERYSETS],
    }
    return {prefix + key: value for key, value in outputs.items()}


def finetuning_params(prefix=""):
    """What the fine-tuning job receives besides files (rules finetune and rerank_checkpoint)."""
    params = dict(
        model=lambda wc: CFG.models.params(wc.model),
        training=lambda wc: CFG.models.training_params(wc.model, FINETUNING.get("training")),
        seed=lambda wc: int(wc.seed),
        name=lambda wc: f"{wc.model}-finetuned",
        tag=lambda wc: f"{wc.model}-finetuned-seed{wc.seed}",
    )
    return {prefix + key: value for key, value in params.items()}


# --- evaluation ---------------------------------------------------------------------------------


def evaluated(queryset, system, seed, stage="eval"):
    return f"results/{stage}/{queryset}/{system}/seed{seed}.parquet"


def systems_evaluated(queryset, stage="eval"):
    """Per-seed evaluation files of every system on a query set; for `eval-finetuned`, the fine-tuned models'
    with the retriever and random rows of the zero-shot setting (nothing of theirs is fine-tuned)."""
    return [evaluated(queryset, system, seed, stage if system in CFG.models else "eval")
            for system, seed in CFG.tables.systems(queryset, stage)]


def pool_members_evaluated(wildcards):
    return [evaluated(member, wildcards.system, wildcards.seed) for member in QUERYSETS[wildcards.queryset].pool]


# --- tables and figures -------------------------------------------------------------------------


def table_outputs(name, caption, category="Tables"):
    """The four files of a table; the HTML one goes into the Snakemake report."""
    return {
        "tex": f"{OUT}/{name}.tex",
        "csv": f"{OUT}/{name}.csv",
        "md": f"{OUT}/{name}.md",
        "html": report(f"{OUT}/{name}.html", caption=f"../report/{caption}.rst", category=category,
                       labels={"table": name}),
    }


FIGURES = [f"{OUT}/figures/farrelevant.png", f"{OUT}/figures/farrelevant.pdf"] if "table4" in TABLES else []


def efficiency_runs():
    """(model, seed, query set) of every run the efficiency figure (the study's Figure 3) times: Table 1's models
    and their baselines on Table 1's zero-shot query sets that are reranked directly (a pooled one by its members;
    cross-validated ones are reranked by fold models, not by the checkpoint Table 1 names)."""
    if "table1" not in TABLES:
        return []
    shown = set()
    for qs in CFG.tables.querysets("table1"):
        shown |= set(QUERYSETS[qs].pool) if QUERYSETS[qs].pooled else {qs}
    querysets = [qs for qs in DIRECT_QUERYSETS if qs in shown]
    params = CFG.tables.params("table1")["models"]
    return [(m, s, qs) for m in params for s in CFG.models.seeds(m) for qs in querysets if CFG.models[m].reranks(qs)]


EFFICIENCY_RUNS = efficiency_runs()
EFFICIENCY_FIGURES = [f"{OUT}/figures/efficiency.png", f"{OUT}/figures/efficiency.pdf"] if EFFICIENCY_RUNS else []
REPORTED = [
    *(f"{OUT}/{t}.tex" for t in CFG.tables.baseline),
    *(f"{OUT}/{t}.tex" for t in [*CFG.tables.debias, *CFG.tables.ablation]),
    *([f"{OUT}/table4.tex"] if "table4" in TABLES else []),
    *FIGURES,
    *EFFICIENCY_FIGURES,
    *([f"{OUT}/first_stage.tex"] if "first_stage" in TABLES else []),
    *([f"{OUT}/outcomes.tex"] if "outcomes" in TABLES else []),
    *([f"{OUT}/table9.tex", f"{OUT}/table10.tex"] if "dataset_stats" in TABLES else []),
    *([f"{OUT}/table11.tex"] if "table11" in TABLES else []),
]


# --- Lost in the Middle (rules/litm.smk) ----------------------------------------------------------

from posbias.steps.litm import CLOSED_BOOK, data_file, settings as litm_settings, variants_of
from posbias.llm.spec import LOCAL_BACKENDS

LITM = CFG.data.get("litm") or {}
LITM_TASKS = [task for task in ("qa", "kv") if LITM.get(task)]
LITM_MODELS = LITM.get("models", [])
SIZE_KEY = {"qa": "k", "kv": "n"}


def litm_data(task):
    """Setting name -> data file (closed-book prompts read the oracle file)."""
    return {name: data_file(task, name) for name, _, _ in litm_settings(task, LITM[task]) if name != CLOSED_BOOK}


def litm_prediction_keys(task):
    """`{variant}/{setting}` of every prediction file of a task, per model."""
    return [f"{variant}/{name}" for name, _, _ in litm_settings(task, LITM[task])
            for variant in variants_of(task, LITM[task], name)]


def litm_prediction(task, model, key):
    return f"results/litm/predictions/{task}/{model}/{key}.jsonl.gz"


def litm_reported(task):
    return [f"{task}_{item[SIZE_KEY[task]]}" for item in LITM[task]["sizes"]]


LITM_TABLES = {key: {fmt: f"{OUT}/litm/{key}.{fmt}" for fmt in ("tex", "csv", "md", "html")}
               for task in LITM_TASKS for key in litm_reported(task)}
LITM_FIGURES = {key: [f"{OUT}/litm/figures/{key}.png", f"{OUT}/litm/figures/{key}.pdf"]
                for task in LITM_TASKS for key in litm_reported(task)}
LITM_REPORTED = [path for outputs in LITM_TABLES.values() for path in outputs.values()] + \
                [path for paths in LITM_FIGURES.values() for path in paths]


def litm_qa_source(wildcards):
    source = LITM["qa"]["source"]
    if source["kind"] == "synthetic":
        return {"retrieval": "results/litm/data/qa/synthetic-retrieval.jsonl.gz"}
    return {"retrieval": source["path"]} if source["kind"] == "retrieval" else {}


def litm_report_outputs():
    """The tables and figures; the HTML tables and PNG figures go into the Snakemake report."""
    outputs = []
    for key, table in LITM_TABLES.items():
        outputs += [report(path, caption="../report/litm_table.rst", category="Lost in the Middle",
                           labels={"table": key}) if fmt == "html" else path for fmt, path in table.items()]
    for key, paths in LITM_FIGURES.items():
        outputs += [report(path, caption="../report/litm_figure.rst", category="Lost in the Middle",
                           labels={"figure": key}) if path.endswith(".png") else path for path in paths]
    return outputs


# --- bias probes (rules/probes.smk) ---------------------------------------------------------------

from posbias.steps.probes import redocred_files, report_paths, table_paths

PROBES = CFG.data.get("probes") or {}
PROBE_NAMES = PROBES.get("probes", [])
PROBE_SCORERS = CFG.probes.scorers
PROBE_SYNTHETIC = "results/probes/data/synthetic_revised.json"


def probe_pairs(probe):
    return f"results/probes/pairs/{probe}.jsonl"


def probe_redocred_files():
    return redocred_files(PROBES["redocred"], PROBE_SYNTHETIC)


def probe_build_inputs():
    """The Re-DocRED files, and the poison's replacement file when it reads one."""
    files = [entry["path"] for group in probe_redocred_files().values() for entry in group]
    poison = PROBES.get("poison", {})
    return files + ([poison["path"]] if "poison" in PROBE_NAMES and poison.get("source") == "file" else [])


def probe_poison_llm():
    """The poison's language model (its job params), when it asks one."""
    poison = PROBES.get("poison", {})
    return CFG.llm.model(poison["model"]) if "poison" in PROBE_NAMES and poison.get("source") == "llm" else None


PROBE_REPLACEMENTS = ["results/probes/pairs/poison_replacements.jsonl"] if "poison" in PROBE_NAMES else []


def probe_score_inputs(wildcards):
    inputs = {"pairs": [probe_pairs(p) for p in PROBE_NAMES], "heatmap": "results/probes/pairs/heatmap.jsonl"}
    checkpoint_dir = CFG.probes.checkpoint(wildcards.scorer)
    return {**inputs, **({"checkpoint": checkpoint_dir} if checkpoint_dir else {})}


PROBE_TABLE, PROBE_FIGURES = report_paths(f"{OUT}/probes", PROBE_NAMES)
PROBE_RAG = PROBES.get("rag")
PROBE_RAG_TABLE = table_paths(f"{OUT}/probes", "rag") if PROBE_RAG else {}
PROBE_REPORTED = ([*PROBE_TABLE.values(), *(p for paths in PROBE_FIGURES.values() for p in paths),
                   *PROBE_RAG_TABLE.values()] if PROBES else [])


def probe_report_outputs():
    """The table and figures; the HTML table and PNG figures go into the Snakemake report."""
    outputs = {fmt: report(path, caption="../report/probes_table.rst", category="Bias probes")
               if fmt == "html" else path for fmt, path in PROBE_TABLE.items()}
    for name, (png, pdf) in PROBE_FIGURES.items():
        outputs[f"{name}_png"] = report(png, caption=f"../report/probes_{name}.rst", category="Bias probes")
        outputs[f"{name}_pdf"] = pdf
    return outputs


# --- first relevant positions (rules/positions.smk) -----------------------------------------------

from posbias.steps.positions import report_paths as positions_report_paths

POSITIONS = CFG.data.get("positions") or {}
POSITION_SETS = POSITIONS.get("sets", {})
SPARSE_SETS = [name for name, spec in POSITION_SETS.items() if spec["kind"] == "sparse"]
DENSE_SETS = [name for name, spec in POSITION_SETS.items() if spec["kind"] == "dense"]
GENERATOR_PASSAGES = "results/data/synthetic/passages"  # the embedded generator's answering passages
POSITION_TABLE, POSITION_FIGURES, POSITION_AGREEMENT = positions_report_paths(f"{OUT}/positions")
POSITIONS_REPORTED = ([*POSITION_TABLE.values(), *(p for paths in POSITION_FIGURES.values() for p in paths),
                       POSITION_AGREEMENT] if POSITIONS else [])


def position_set_inputs(wildcards):
    """A set's documents, queries and qrels; its relevant passages (sparse: what is matched; dense: what a mock
    oracle judge reads); the passage query set's queries; and the Lucene index the passages search (sparse)."""
    spec = POSITION_SETS[wildcards.pset]
    queryset = spec["queryset"]
    inputs = {"docs": source_docs_of(collection_of(queryset)), "queries": queries_of(queryset),
              "qrels": qrels_of(queryset)}
    passages = spec.get("passages")
    if passages == "generator":
        inputs.update(passages=f"{GENERATOR_PASSAGES}/docs.jsonl",
                      passage_qrels=f"{GENERATOR_PASSAGES}/qrels/{queryset}.txt")
    elif passages:
        inputs.update(passages=source_docs_of(collection_of(passages)), passage_qrels=qrels_of(passages),
                      passage_queries=queries_of(passages))
    if spec["kind"] == "sparse" and POSITIONS["matching"]["bm25_depth"]:
        inputs["index"] = lucene_index_of(collection_of(queryset))
    return inputs


def position_judge(name):
    """The llm.models key that judges a dense set's chunks."""
    return POSITION_SETS[name].get("judge", POSITIONS["dense"].get("judge"))


def position_truth():
    """Set -> the generator's known answer offsets, for sets on the embedded collection."""
    return {name: f"{GENERATOR_PASSAGES}/positions/{spec['queryset']}.tsv" for name, spec in POSITION_SETS.items()
            if "generator" in CFG.data and collection_of(spec["queryset"]) == "synthetic"}


def position_figure1():
    return POSITIONS.get("figure1") or list(POSITIONS.get("groups", {}))[:3]


def position_report_outputs():
    """The table, figures and agreement CSV; the HTML table and PNG figures go into the Snakemake report."""
    outputs = {fmt: report(path, caption="../report/positions_table.rst", category="First relevant position")
               if fmt == "html" else path for fmt, path in POSITION_TABLE.items()}
    for name, (png, pdf) in POSITION_FIGURES.items():
        outputs[f"{name}_png"] = report(png, caption=f"../report/positions_{name}.rst",
                                        category="First relevant position")
        outputs[f"{name}_pdf"] = pdf
    outputs["agreement"] = POSITION_AGREEMENT
    return outputs


# --- position sweep and position breakdown (rules/sweep.smk) ------------------------------------------

SWEEP = CFG.data.get("sweep") or {}
SWEEP_QUERYSET = CFG.sweep.queryset
SWEEP_MODELS = CFG.sweep.models  # empty unless the sweep query set is reranked
SWEEP_TABLE = {fmt: f"{OUT}/sweep.{fmt}" for fmt in ("tex", "csv", "md", "html")} if SWEEP_MODELS else {}
SWEEP_FIGURE = [f"{OUT}/figures/sweep.png", f"{OUT}/figures/sweep.pdf"] if SWEEP_MODELS else []
BREAKDOWN = TABLES.get("position_breakdown")
BREAKDOWN_TABLE = {fmt: f"{OUT}/position_breakdown.{fmt}" for fmt in ("tex", "csv", "md", "html")} if BREAKDOWN else {}
SWEEP_REPORTED = [*SWEEP_TABLE.values(), *SWEEP_FIGURE, *BREAKDOWN_TABLE.values()]


def sweep_source_inputs():
    """The source query set's files the sweep builder reads (documents as the source wrote them: the builder
    finds the relevant passage in them), and the passage collection they were built from."""
    source = SWEEP["source"]
    return dict(queries=queries_of(source), qrels=qrels_of(source), docs=source_docs_of(collection_of(source)),
                positions=CFG.querysets.positions_file(source), candidates=candidates_of(source),
                passages=SWEEP["passages"]["docs"], passage_qrels=SWEEP["passages"]["qrels"])


def sweep_outputs(queryset):
    """The sweep collection's files; the candidate run is the query set's `candidates` (config.sweep_candidates)."""
    return dict(docs="results/data/sweep/docs.jsonl", queries=queries_of(queryset), qrels=qrels_of(queryset),
                positions=CFG.querysets.positions_file(queryset), candidates=QUERYSETS[queryset].candidates)


def farrelevant_source_inputs():
    """A local import's files, so that replacing one rebuilds; ir_datasets reads (and downloads) in the job."""
    source = CFG.farrelevant.source
    if source["kind"] != "local":
        return {}
    documents = source["documents"] if isinstance(source["documents"], list) else [source["documents"]]
    sets = [source[s] for s in ("test", "train") if s in source]
    return {"documents": documents, "positions": source["positions"],
            "queries": [s["queries"] for s in sets], "qrels": [s["qrels"] for s in sets]}
