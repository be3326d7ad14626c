# Reranking: one job per checkpoint reranks the candidates of every query set in
# `rerank.querysets` (the model is loaded once; run files stay one per query set, each with a
# `.run.json` saying how it was scored: device and the backbone's autocast dtype).
# Cross-validated query sets are reranked fold by fold instead (rules/cross_validation.smk).


if DIRECT_QUERYSETS:

    rule rerank:
        input:
            checkpoint="results/models/{model}/seed{seed}",
            tokens=lambda wc: [tokens_of(collection_of(qs), wc.model) for qs in DIRECT_QUERYSETS],
            queries=[queries_of(qs) for qs in DIRECT_QUERYSETS],
            candidates=[candidates_of(qs) for qs in DIRECT_QUERYSETS],
        output:
            runs=expand("results/runs/{qs}/{{model}}/seed{{seed}}.run", qs=DIRECT_QUERYSETS),
            info=expand("results/runs/{qs}/{{model}}/seed{{seed}}.run.json", qs=DIRECT_QUERYSETS),
        params:
            scoring=SCORING,
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
