# Per-query metric values (trec_eval semantics via ir_measures), one Parquet file per run.


rule evaluate_run:
    input:
        qrels=lambda wc: qrels_of(wc.queryset),
        run="results/runs/{queryset}/{system}/seed{seed}.run",
    output:
        values="results/eval/{queryset}/{system}/seed{seed}.parquet",
    params:
        metrics=lambda wc: config["querysets"][wc.queryset]["metrics"],
    wildcard_constraints:
        system="|".join(["random", *MODELS]),
    conda:
        "../envs/posbias.yaml"
    log:
        "logs/evaluate/{queryset}/{system}/seed{seed}.log",
    script:
        "../scripts/evaluate.py"


rule evaluate_retriever:
    input:
        qrels=lambda wc: qrels_of(wc.queryset),
        run=lambda wc: candidates_of(wc.queryset),
    output:
        values="results/eval/{queryset}/retriever/seed0.parquet",
    params:
        metrics=lambda wc: config["querysets"][wc.queryset]["metrics"],
    conda:
        "../envs/posbias.yaml"
    log:
        "logs/evaluate/{queryset}/retriever/seed0.log",
    script:
        "../scripts/evaluate.py"
