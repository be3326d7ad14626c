# Fine-tuning: one job per (model, seed). GPU clusters request a GPU for this rule in their profile.


rule train:
    input:
        docs=docs_of(collection_of(TRAIN_QUERYSET)),
        queries=queries_of(TRAIN_QUERYSET),
        qrels=qrels_of(TRAIN_QUERYSET),
        candidates=candidates_of(TRAIN_QUERYSET),
    output:
        checkpoint=directory("results/models/{model}/seed{seed}"),
    params:
        model=lambda wc: {k: config["models"][wc.model][k] for k in ("ranker", "args", "lr", "head_lr")},
        # The seed list and query set name stay out: adding a seed must not retrain the others.
        training={k: v for k, v in config["training"].items() if k not in ("seeds", "queryset")},
        seed=lambda wc: int(wc.seed),
    threads: 1
    benchmark:
        "results/benchmarks/train/{model}/seed{seed}.tsv"
    conda:
        "../envs/posbias.yaml"
    log:
        "logs/train/{model}/seed{seed}.log",
    script:
        "../scripts/train.py"
