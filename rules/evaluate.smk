# Per-query metric values (trec_eval semantics via ir_measures), one Parquet file per
# (query set, system, seed): a system is a model, the candidates (`retriever`), the random shuffle
# (`random`) or a run made elsewhere (`external_runs`). Only the query set's own metrics are
# evaluated here; what a single table needs on top (the outcome table's RR@k) has rules of its own,
# so changing a table setting never re-evaluates a run.

include: "inputs/evaluate.smk"


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
            run=lambda wc: run_of(wc.queryset, wc.system, wc.seed, rerank_paths.FINE_TUNED),
        output:
            values=evaluation_paths.values("{queryset}", "{system}", "{seed}", evaluation_paths.FINE_TUNED),
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
