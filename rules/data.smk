# Collections in the standard formats: documents JSONL, queries TSV, TREC qrels.


rule generate_synthetic:
    output:
        queries=expand("results/data/synthetic/queries/{qs}.tsv", qs=SYNTHETIC_QUERYSETS),
        qrels=expand("results/data/synthetic/qrels/{qs}.txt", qs=SYNTHETIC_QUERYSETS),
        positions=expand("results/data/synthetic/positions/{qs}.tsv", qs=SYNTHETIC_QUERYSETS),
        passages="results/data/synthetic-passages/docs.jsonl",
        passage_queries="results/data/synthetic-passages/queries/farrelevant.tsv",
        passage_qrels="results/data/synthetic-passages/qrels/farrelevant.txt",
        docs="results/data/synthetic/docs.jsonl",
    params:
        settings=config["generator"]["settings"],
        tokenizer=config["generator"]["tokenizer"],
    conda:
        "../envs/posbias.yaml"
    log:
        "logs/data/generate_synthetic.log",
    script:
        "../scripts/generate_synthetic.py"


rule build_farrelevant:
    input:
        passages="results/data/synthetic-passages/docs.jsonl",
        queries="results/data/synthetic-passages/queries/farrelevant.tsv",
        qrels="results/data/synthetic-passages/qrels/farrelevant.txt",
    output:
        queries=f"results/data/farrelevant/queries/{FAR_QUERYSET}.tsv",
        qrels=f"results/data/farrelevant/qrels/{FAR_QUERYSET}.txt",
        positions=f"results/data/farrelevant/positions/{FAR_QUERYSET}.tsv",
        docs="results/data/farrelevant/docs.jsonl",
    params:
        settings={k: config["farrelevant"][k] for k in ("seed", "n_queries", "first_window", "max_doc_tokens")},
        tokenizer=config["farrelevant"]["tokenizer"],
        queryset=FAR_QUERYSET,
    conda:
        "../envs/posbias.yaml"
    log:
        "logs/data/build_farrelevant.log",
    script:
        "../scripts/build_farrelevant.py"
