# First stage: Lucene BM25 through pyserini, and the random-shuffle baseline.


rule bm25_index:
    input:
        docs="results/data/{collection}/docs.jsonl",
    output:
        index=directory("results/index/{collection}"),
    threads: 2
    conda:
        "../envs/posbias.yaml"
    log:
        "logs/retrieval/bm25_index/{collection}.log",
    script:
        "../scripts/bm25_index.py"


rule bm25_retrieve:
    input:
        index="results/index/{collection}",
        queries="results/data/{collection}/queries/{queryset}.tsv",
    output:
        run="results/candidates/{collection}/{queryset}.run",
    params:
        depth=lambda wc: config["querysets"][wc.queryset]["depth"],
        k1=config["bm25"]["k1"],
        b=config["bm25"]["b"],
    threads: 2
    conda:
        "../envs/posbias.yaml"
    log:
        "logs/retrieval/bm25_retrieve/{collection}/{queryset}.log",
    script:
        "../scripts/bm25_retrieve.py"


rule random_shuffle:
    input:
        candidates=[candidates_of(qs) for qs in RERANK_QUERYSETS],
    output:
        runs=expand("results/runs/{qs}/random/seed{{seed}}.run", qs=RERANK_QUERYSETS),
    params:
        seed=lambda wc: int(wc.seed),
    conda:
        "../envs/posbias.yaml"
    log:
        "logs/retrieval/random_shuffle/seed{seed}.log",
    script:
        "../scripts/random_shuffle.py"
