# The evaluation stage (posbias.evaluation): every run's per-query values, each query set's systems and seeds pooled,
# and the study's tables and figures from them.

include: "inputs/evaluation.smk"


# --- evaluate --------------------------------------------------------------------------------------------------------
# Per-query metric values (trec_eval semantics via ir_measures), one Parquet file per
# (query set, system, seed): a system is a model, the candidates (`retriever`), the random shuffle
# (`random`) or a run made elsewhere (`external_runs`). Only the query set's own metrics are
# evaluated here; what a single table needs on top (the outcome table's RR@k) has rules of its own,
# so changing a table setting never re-evaluates a run.

rule evaluate:
    """`results/eval/{queryset}/{system}/seed{seed}.parquet`

    By hand: `posbias evaluate --config --system`"""
    input:
        qrels=lambda wc: qrels_of(wc.queryset),
        run=lambda wc: run_of(wc.queryset, wc.system, wc.seed),
    output:
        values=evaluation_paths.values("{queryset}", "{system}", "{seed}"),
    params:
        evaluation=lambda wc: CFG.querysets.evaluation_params(wc.queryset),
        queryset=lambda wc: wc.queryset,
        system=lambda wc: wc.system,
        seed=lambda wc: int(wc.seed),
    wildcard_constraints:
        queryset=alternatives(RERANK_QUERYSETS),
        system=alternatives([names.RETRIEVER, names.RANDOM, *MODELS, *EXTERNAL_RUNS]),
    localrule: True
    conda:
        "../envs/posbias.yaml"
    log:
        "logs/evaluate/{queryset}/{system}/seed{seed}.log",
    script:
        "../scripts/evaluate.py"


if FINETUNED_QUERYSETS:

    rule evaluate_finetuned:
        """`results/eval-finetuned/{queryset}/{system}/seed{seed}.parquet`

        By hand: `posbias evaluate --config --system`"""
        input:
            qrels=lambda wc: qrels_of(wc.queryset),
            run=lambda wc: run_of(wc.queryset, wc.system, wc.seed, rerank_paths.FINETUNED_RUNS),
        output:
            values=evaluation_paths.values("{queryset}", "{system}", "{seed}", evaluation_paths.FINETUNED_VALUES),
        params:
            evaluation=lambda wc: CFG.querysets.evaluation_params(wc.queryset),
            queryset=lambda wc: wc.queryset,
            system=lambda wc: wc.system,
            seed=lambda wc: int(wc.seed),
        wildcard_constraints:
            queryset=alternatives(FINETUNED_QUERYSETS),
            system=alternatives(MODELS),
        localrule: True
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/evaluate_finetuned/{queryset}/{system}/seed{seed}.log",
        script:
            "../scripts/evaluate.py"


# A pooled query set (e.g. TREC DL 2019-2021) stacks its members' per-query values of one system.
if POOLED_QUERYSETS:

    rule pool_evaluations:
        """`results/eval/{pooled queryset}/{system}/seed{seed}.parquet` (its members' values stacked)

        By hand: `posbias pool`"""
        input:
            values=pool_members_evaluated,
        output:
            values=evaluation_paths.values("{queryset}", "{system}", "{seed}"),
        params:
            members=lambda wc: list(QUERYSETS[wc.queryset].pool),
            metrics=lambda wc: list(QUERYSETS[wc.queryset].metrics),
            queryset=lambda wc: wc.queryset,
        wildcard_constraints:
            queryset=alternatives(POOLED_QUERYSETS),
            system=alternatives([names.RETRIEVER, names.RANDOM, *MODELS]),
        localrule: True
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/evaluate/{queryset}/{system}/seed{seed}.log",
        script:
            "../scripts/pool_evaluations.py"


# The outcome table's RR@k, kept apart from the query set's metrics: k is a table setting.
if OUTCOME_QUERYSETS:

    rule evaluate_cutoff:
        """`results/eval-cutoff/k{k}/{queryset}/{model}/seed{seed}.parquet` (the outcome table's RR@k)

        By hand: `posbias evaluate --metric --system`"""
        input:
            qrels=lambda wc: qrels_of(wc.queryset),
            run=lambda wc: run_of(wc.queryset, wc.system, wc.seed),
        output:
            values=evaluation_paths.values("{queryset}", "{system}", "{seed}", evaluation_paths.cutoff("{k}")),
        params:
            evaluation=lambda wc: {"metrics": [f"RR@{wc.k}"], "rel_level": QUERYSETS[wc.queryset].rel_level},
            queryset=lambda wc: wc.queryset,
            system=lambda wc: wc.system,
            seed=lambda wc: int(wc.seed),
        wildcard_constraints:
            queryset=alternatives(OUTCOME_QUERYSETS),
            system=alternatives(MODELS),
        localrule: True
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/evaluate_cutoff/k{k}/{queryset}/{system}/seed{seed}.log",
        script:
            "../scripts/evaluate.py"


rule evaluate_first_stage:
    """`results/eval-first-stage/{retriever}/{queryset}/top{depth}.parquet`

    By hand: `posbias evaluate --metric --system`"""
    input:
        qrels=lambda wc: qrels_of(wc.queryset),
        run=lambda wc: retrieval_paths.candidates(wc.retriever, wc.queryset, wc.depth),
    output:
        values=evaluation_paths.first_stage_values("{retriever}", "{queryset}", "{depth}"),
    params:
        evaluation=lambda wc: canonical({"metrics": TABLES["first_stage"]["metrics"],
                                         "rel_level": QUERYSETS[wc.queryset].rel_level}),
        queryset=lambda wc: wc.queryset,
        system=lambda wc: wc.retriever,
        seed=0,
    localrule: True
    conda:
        "../envs/posbias.yaml"
    log:
        "logs/evaluate/first_stage/{retriever}/{queryset}/top{depth}.log",
    script:
        "../scripts/evaluate.py"


# --- stats -----------------------------------------------------------------------------------------------------------
# All systems of a query set in one table; per-query values averaged over seeds before testing. The
# combined files belong to the experiment (its models and seeds): under results/<experiment>/ when named.
# These rules only concatenate small per-query Parquet files: local rules, never queued on a cluster.

rule combine_seeds:
    """`results/[{experiment}/]eval/{queryset}/{per_seed,seed_averaged}.parquet`

    By hand: `posbias study combine-seeds`"""
    localrule: True
    input:
        values=lambda wc: systems_evaluated(wc.queryset),
    output:
        per_seed=evaluation_paths.per_seed(OUT, "{queryset}"),
        averaged=evaluation_paths.seed_averaged(OUT, "{queryset}"),
    wildcard_constraints:
        queryset=alternatives(CFG.rerank.evaluated),
    conda:
        "../envs/posbias.yaml"
    log:
        "logs/stats/combine_seeds/{queryset}.log",
    script:
        "../scripts/combine_seeds.py"


if FINETUNED_QUERYSETS:

    rule combine_finetuned_seeds:
        """the same for the fine-tuned runs

        By hand: `posbias study combine-seeds`"""
        localrule: True
        input:
            values=lambda wc: systems_evaluated(wc.queryset, evaluation_paths.FINETUNED_VALUES),
        output:
            per_seed=evaluation_paths.per_seed(OUT, "{queryset}", evaluation_paths.FINETUNED_VALUES),
            averaged=evaluation_paths.seed_averaged(OUT, "{queryset}", evaluation_paths.FINETUNED_VALUES),
        wildcard_constraints:
            queryset=alternatives(FINETUNED_QUERYSETS),
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/stats/combine_finetuned_seeds/{queryset}.log",
        script:
            "../scripts/combine_seeds.py"


if OUTCOME_QUERYSETS:

    rule combine_cutoff_seeds:
        """the same for the outcome table's RR@k

        By hand: `posbias study combine-seeds`"""
        localrule: True
        input:
            values=lambda wc: [evaluation_paths.values(wc.queryset, model, seed, evaluation_paths.cutoff(wc.k))
                               for model in MODELS if CFG.models.evaluates(model, wc.queryset)
                               for seed in CFG.models.seeds(model)],
        output:
            per_seed=evaluation_paths.per_seed(OUT, "{queryset}", evaluation_paths.cutoff("{k}")),
            averaged=evaluation_paths.seed_averaged(OUT, "{queryset}", evaluation_paths.cutoff("{k}")),
        wildcard_constraints:
            queryset=alternatives(OUTCOME_QUERYSETS),
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/stats/combine_cutoff_seeds/k{k}/{queryset}.log",
        script:
            "../scripts/combine_seeds.py"


# --- report ----------------------------------------------------------------------------------------------------------
# Tables (LaTeX with booktabs, CSV, Markdown, and HTML for the report) and figures. Tables read only
# persisted files (per-query Parquet, statistics JSON), so they rebuild in seconds.
# `snakemake --report results/report.zip` collects what is marked with report() below.
# Every table and figure job is a local rule (`localrule: True`): it reads a few small files and
# takes seconds, so on a cluster it runs beside Snakemake instead of waiting in the queue. The
# statistics jobs that tokenise whole collections are submitted like any other job.

# Every model table, whatever its layout (tables.<name>.layout: baseline, debias, ablation or another declared in
# posbias.evaluation.table_layouts): one rule, one script.
for _table in CFG.tables.of_layout():

    rule:
        """one rule per model table of the config (`table1`, `table7`, `table8`, `table5`; the de-biasing `table2`,
        `table3`; the ablation `table6`): `results/[{experiment}/]{table}.{tex,csv,md,html}`

        By hand: `posbias study table --name`"""
        name:
            f"{_table}"
        localrule: True
        input:
            averaged=[evaluation_paths.seed_averaged(OUT, qs) for qs in CFG.tables.querysets(_table)],
        output:
            **table_outputs(_table, f"{TABLES[_table]['layout']}_table"),
        params:
            **CFG.tables.params(_table),
            label=f"tab:{_table}",
        conda:
            "../envs/posbias.yaml"
        log:
            f"logs/report/{_table}.log",
        script:
            "../scripts/model_table.py"


if "table4" in TABLES:

    rule table4:
        """`results/[{experiment}/]table4.*` (FarRelevant)

        By hand: `posbias study table --name --finetuned`"""
        localrule: True
        input:
            averaged=[evaluation_paths.seed_averaged(OUT, qs) for qs in CFG.tables.querysets("table4")],
            finetuned=[evaluation_paths.seed_averaged(OUT, qs, evaluation_paths.FINETUNED_VALUES)
                       for qs in CFG.tables.querysets("table4", setting="fine-tuned")],
        output:
            **table_outputs("table4", "table4"),
        params:
            **CFG.tables.params("table4"),
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/report/table4.log",
        script:
            "../scripts/table4.py"

    rule farrelevant_figure:
        """`results/[{experiment}/]figures/farrelevant.{png,pdf}`

        By hand: `posbias study farrelevant-figure`"""
        localrule: True
        input:
            per_seed=evaluation_paths.per_seed(OUT, FAR_QUERYSET),
            # the fine-tuned bars beside the zero-shot ones (the study's Figure 2), when the config fine-tunes
            **({"finetuned": evaluation_paths.per_seed(OUT, FAR_QUERYSET, evaluation_paths.FINETUNED_VALUES)}
               if FAR_QUERYSET in FINETUNED_QUERYSETS else {}),
        output:
            png=report(FIGURES[0], caption="../report/farrelevant_figure.rst", category="Figures"),
            pdf=FIGURES[1],
        params:
            **CFG.tables.farrelevant_figure_params(),
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/report/farrelevant_figure.log",
        script:
            "../scripts/farrelevant_figure.py"


if EFFICIENCY_RUNS:

    rule efficiency_figure:
        """`results/[{experiment}/]figures/efficiency.{png,pdf}`

        By hand: `posbias study efficiency-figure`"""
        localrule: True
        input:
            table=f"{OUT}/table1.csv",
            infos=[rerank_paths.run_info(rerank_paths.run(qs, m, s)) for m, s, qs in EFFICIENCY_RUNS],
        output:
            png=report(EFFICIENCY_FIGURES[0], caption="../report/efficiency_figure.rst", category="Figures"),
            pdf=EFFICIENCY_FIGURES[1],
        params:
            runs=[list(run) for run in EFFICIENCY_RUNS],
            models=CFG.tables.params("table1")["models"],
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/report/efficiency_figure.log",
        script:
            "../scripts/efficiency_figure.py"


if "outcomes" in TABLES:

    rule outcome_table:
        """`results/[{experiment}/]outcomes.*`

        By hand: `posbias study outcomes`"""
        localrule: True
        input:
            per_seed=[evaluation_paths.per_seed(OUT, qs, evaluation_paths.cutoff(TABLES.get("outcomes", {}).get("k")))
                      for qs in OUTCOME_QUERYSETS],
            qrels=[qrels_of(qs) for qs in OUTCOME_QUERYSETS],
        output:
            **table_outputs("outcomes", "outcomes"),
        params:
            **CFG.tables.outcome_params(),
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/report/outcome_table.log",
        script:
            "../scripts/outcome_table.py"


if "first_stage" in TABLES:

    rule first_stage_table:
        """`results/[{experiment}/]first_stage.*`

        By hand: `posbias study first-stage`"""
        localrule: True
        input:
            values=expand(evaluation_paths.first_stage_values("{r}", "{qs}", "{depth}"),
                          r=TABLES["first_stage"]["retrievers"],
                          qs=TABLES["first_stage"]["querysets"],
                          depth=TABLES["first_stage"]["depth"]),
        output:
            **table_outputs("first_stage", "first_stage"),
        params:
            **CFG.tables.first_stage_params(),
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/report/first_stage_table.log",
        script:
            "../scripts/first_stage_table.py"


if "dataset_stats" in TABLES:
    STATS = CFG.tables.dataset_stats_params()
    STATS_QUERYSETS, STATS_COLLECTIONS = STATS["querysets"], STATS["collections"]

    rule collection_statistics:
        """`results/stats/collections/*.json`

        By hand: `posbias study collection-stats`"""
        input:
            unpack(statistics_input),
        output:
            stats=evaluation_paths.collection_statistics("{collection}"),
        params:
            tokenizer=STATS["tokenizer"],
            sample=STATS["sample"],
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/stats/collection_statistics/{collection}.log",
        script:
            "../scripts/collection_statistics.py"

    rule queryset_statistics:
        """`results/stats/querysets/*.json`

        By hand: `posbias study queryset-stats`"""
        input:
            queries=lambda wc: queries_of(wc.queryset),
            qrels=lambda wc: qrels_of(wc.queryset),
        output:
            stats=evaluation_paths.queryset_statistics("{queryset}"),
        params:
            tokenizer=STATS["tokenizer"],
            rel_level=lambda wc: STATS["rel_levels"][wc.queryset],
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/stats/queryset_statistics/{queryset}.log",
        script:
            "../scripts/queryset_statistics.py"

    rule dataset_tables:
        """`results/[{experiment}/]table9.*` and `table10.*`

        By hand: `posbias study dataset-tables`"""
        localrule: True
        input:
            collections=expand(evaluation_paths.collection_statistics("{c}"), c=STATS_COLLECTIONS),
            querysets=expand(evaluation_paths.queryset_statistics("{qs}"), qs=STATS_QUERYSETS),
        output:
            **{f"documents_{k}": v for k, v in table_outputs("table9", "table9").items()},
            **{f"queries_{k}": v for k, v in table_outputs("table10", "table10").items()},
        params:
            collections=STATS_COLLECTIONS,
            querysets=STATS_QUERYSETS,
            tokenizer=STATS["tokenizer"],
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/report/dataset_tables.log",
        script:
            "../scripts/dataset_tables.py"


if "table11" in TABLES:
    TABLE11 = CFG.tables.table11_params()

    rule table11:
        """`results/[{experiment}/]table11.*` (parameters per ranker)

        By hand: `posbias study table11`"""
        localrule: True
        input:
            checkpoints=[training_paths.checkpoint(m, s) for m, s in zip(TABLE11["trained"], TABLE11["seeds"])],
        output:
            **table_outputs("table11", "table11"),
        params:
            **{k: TABLE11[k] for k in ("trained", "zero_shot", "labels")},
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/report/table11.log",
        script:
            "../scripts/table11.py"
