# Fine-tuning: one job per (model, seed). GPU clusters request a GPU for this rule in their profile.
# The job saves its state every `training.save_every` steps beside its output (seed{seed}.resume/);
# a rerun after a kill or a time-out resumes from it.


rule train:
    input:
        tokens=lambda wc: tokens_of(collection_of(TRAIN_QUERYSET), wc.model),
        queries=queries_of(TRAIN_QUERYSET),
        qrels=qrels_of(TRAIN_QUERYSET),
        candidates=candidates_of(TRAIN_QUERYSET),
    output:
        checkpoint=directory("results/models/{model}/seed{seed}"),
    params:
        model=lambda wc: model_params(wc.model),
        training=training_params(),
        seed=lambda wc: int(wc.seed),
        name=lambda wc: wc.model,
    threads: 1
    benchmark:
        "results/benchmarks/train/{model}/seed{seed}.tsv"
    conda:
        "../envs/posbias.yaml"
    log:
        "logs/train/{model}/seed{seed}.log",
    script:
        "../scripts/train.py"
