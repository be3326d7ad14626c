# Per-query metric values (trec_eval semantics via ir_measures), one Parquet file per run.
# One job per system and seed evaluates its runs on every reranked query set.


rule evaluate_system:
    input:
        qrels=[qrels_of(qs) for qs in RERANK_QUERYSETS],
        runs=expand("results/runs/{qs}/{{system}}/seed{{seed}}.run", qs=RERANK_QUERYSETS),
    output:
        values=expand("results/eval/{qs}/{{system}}/seed{{seed}}.parquet", qs=RERANK_QUERYSETS),
    params:
        **evaluation_params(RERANK_QUERYSETS),
    wildcard_constraints:
        system="|".join(["random", *MODELS]),
    conda:
        "../envs/posbias.yaml"
    log:
        "logs/evaluate/{system}/seed{seed}.log",
    script:
        "../scripts/evaluate.py"


rule evaluate_retriever:
    input:
        qrels=[qrels_of(qs) for qs in RERANK_QUERYSETS],
        runs=[candidates_of(qs) for qs in RERANK_QUERYSETS],
    output:
        values=expand("results/eval/{qs}/retriever/seed0.parquet", qs=RERANK_QUERYSETS),
    params:
        **evaluation_params(RERANK_QUERYSETS),
    conda:
        "../envs/posbias.yaml"
    log:
        "logs/evaluate/retriever/seed0.log",
    script:
        "../scripts/evaluate.py"


# A run made elsewhere (config `external_runs`), evaluated like ours and placed in the tables.
rule evaluate_external:
    input:
        qrels=lambda wc: [qrels_of(wc.queryset)],
        runs=lambda wc: [EXTERNAL_RUNS[wc.external]["runs"][wc.queryset]],
    output:
        values=["results/eval/{queryset}/{external}/seed0.parquet"],
    params:
        querysets=lambda wc: [wc.queryset],
        metrics=lambda wc: [metrics_of(wc.queryset)],
        rel_levels=lambda wc: [QUERYSETS[wc.queryset]["rel_level"]],
        system=lambda wc: wc.external,
    conda:
        "../envs/posbias.yaml"
    log:
        "logs/evaluate/external/{external}/{queryset}.log",
    script:
        "../scripts/evaluate.py"


if FINETUNED_QUERYSETS:

    rule evaluate_finetuned:
        input:
            qrels=[qrels_of(qs) for qs in FINETUNED_QUERYSETS],
            runs=expand("results/runs-finetuned/{qs}/{{model}}/seed{{seed}}.run", qs=FINETUNED_QUERYSETS),
        output:
            values=expand("results/eval-finetuned/{qs}/{{model}}/seed{{seed}}.parquet", qs=FINETUNED_QUERYSETS),
        params:
            **evaluation_params(FINETUNED_QUERYSETS),
            system=lambda wc: wc.model,
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/evaluate/finetuned/{model}/seed{seed}.log",
        script:
            "../scripts/evaluate.py"


rule evaluate_first_stage:
    input:
        qrels=lambda wc: [qrels_of(wc.queryset)],
        runs=lambda wc: [retrieval_run(wc.retriever, wc.queryset, wc.depth)],
    output:
        values=["results/eval-first-stage/{retriever}/{queryset}/top{depth}.parquet"],
    params:
        metrics=lambda wc: [TABLES["first_stage"]["metrics"]],
        querysets=lambda wc: [wc.queryset],
        rel_levels=lambda wc: [QUERYSETS[wc.queryset]["rel_level"]],
        system=lambda wc: wc.retriever,
    conda:
        "../envs/posbias.yaml"
    log:
        "logs/evaluate/first_stage/{retriever}/{queryset}/top{depth}.log",
    script:
        "../scripts/evaluate.py"
