# Fine-tuning: one job per (model, seed). GPU clusters request a GPU for this rule in their profile.
# The job saves its state every `training.save_every` steps beside its output (seed{seed}.resume/);
# a rerun after a kill or a time-out resumes from it.


rule train:
    """`results/models/{model}/seed{seed}/` (`backbone/`, `ranker.pt`, `ranker.json`; `seed{seed}.resume/` while it
    runs)

    By hand: `posbias train`"""
    input:
        tokens=lambda wc: tokens_of(CFG.models.training_collection(wc.model), wc.model),  # de-biased models: a copy
        queries=lambda wc: queries_of(CFG.training.queryset),  # lambdas: a config without the study has none
        qrels=lambda wc: qrels_of(CFG.training.queryset),
        candidates=lambda wc: candidates_of(CFG.training.queryset),
    output:
        checkpoint=directory(training_paths.checkpoint("{model}", "{seed}")),
    params:
        model=lambda wc: CFG.models.params(wc.model),
        training=lambda wc: CFG.models.training_params(wc.model),
        seed=lambda wc: int(wc.seed),
        name=lambda wc: wc.model,
    wildcard_constraints:
        model=alternatives(TRAINED_MODELS),
    threads: 1
    resources:
        gpu=GPU_JOB,
    benchmark:
        "results/benchmarks/train/{model}/seed{seed}.tsv"
    conda:
        "../envs/posbias.yaml"
    log:
        "logs/train/{model}/seed{seed}.log",
    script:
        "../scripts/train.py"
