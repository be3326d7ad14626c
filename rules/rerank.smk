# Reranking: one job per checkpoint reranks the candidates of every query set in
# `rerank.querysets` (the model is loaded once; run files stay one per query set).
# Cross-validated query sets are reranked fold by fold instead (rules/cross_validation.smk).


if DIRECT_QUERYSETS:

    rule rerank:
        input:
            checkpoint="results/models/{model}/seed{seed}",
            docs=[docs_of(collection_of(qs)) for qs in DIRECT_QUERYSETS],
            queries=[queries_of(qs) for qs in DIRECT_QUERYSETS],
            candidates=[candidates_of(qs) for qs in DIRECT_QUERYSETS],
        output:
            runs=expand("results/runs/{qs}/{{model}}/seed{{seed}}.run", qs=DIRECT_QUERYSETS),
        params:
            batch_size=config["rerank"]["batch_size"],
            device=config["rerank"]["device"],
            tag=lambda wc: f"{wc.model}-seed{wc.seed}",
        threads: 1
        benchmark:
            "results/benchmarks/rerank/{model}/seed{seed}.tsv"
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/rerank/{model}/seed{seed}.log",
        script:
            "../scripts/rerank.py"
