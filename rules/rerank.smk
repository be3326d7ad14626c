# Reranking the first-stage candidates of a query set with a trained checkpoint.


rule rerank:
    input:
        checkpoint="results/models/{model}/seed{seed}",
        docs=docs_of,
        queries=lambda wc: queries_of(wc.queryset),
        candidates=lambda wc: candidates_of(wc.queryset),
    output:
        run="results/runs/{queryset}/{model}/seed{seed}.run",
    params:
        batch_size=config["rerank"]["batch_size"],
        device=config["rerank"]["device"],
        tag=lambda wc: f"{wc.model}-seed{wc.seed}",
    threads: 1
    benchmark:
        "results/benchmarks/rerank/{queryset}/{model}/seed{seed}.tsv"
    conda:
        "../envs/posbias.yaml"
    log:
        "logs/rerank/{queryset}/{model}/seed{seed}.log",
    script:
        "../scripts/rerank.py"
