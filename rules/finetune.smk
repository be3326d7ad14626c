# Fine-tuned setting (Table 4's second column): each trained checkpoint is fine-tuned on the
# `finetuning.queryset` judgments (FarRelevant train in the study) into its own checkpoint, which then
# reranks each of `finetuning.querysets` in the same job, while the model is in memory (loading it again in a
# job per query set costs seconds per job, and every checkpoint is fine-tuned). So changing one of those
# query sets' candidates reruns its fine-tuning jobs too. With `rerank.jobs: per_checkpoint` the
# checkpoint's one job in rules/rerank.smk (rerank_checkpoint) fine-tunes it instead.

include: "inputs/finetune.smk"


if FINETUNING:

    rule finetune:
        """`results/models-finetuned/{model}/seed{seed}/` and
        `results/runs-finetuned/{queryset}/{model}/seed{seed}.run{,.json}` (Table 4's fine-tuned checkpoints,
        reranked in the same job)

        By hand: `posbias finetune`"""
        input:
            init=training_paths.checkpoint("{model}", "{seed}"),
            **finetuning_inputs(),
        output:
            **finetuning_outputs(),
        params:
            scoring=lambda wc: CFG.rerank.scoring(wc.model),
            **finetuning_params(),
        wildcard_constraints:
            model=alternatives(PER_QUERYSET_MODELS),
        threads: 1
        resources:
            gpu=GPU_JOB,
        benchmark:
            "results/benchmarks/finetune/{model}/seed{seed}.tsv"
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/finetune/{model}/seed{seed}.log",
        script:
            "../scripts/finetune.py"
