# The training stage (posbias.training): each model trained per seed, the fine-tuned setting and cross-validation.

include: "inputs/training.smk"


# --- train -----------------------------------------------------------------------------------------------------------
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
        training_paths.benchmark("train", "{model}", "{seed}")
    conda:
        "../envs/posbias.yaml"
    log:
        "logs/train/{model}/seed{seed}.log",
    script:
        "../scripts/train.py"


# --- finetune --------------------------------------------------------------------------------------------------------
# Fine-tuned setting (Table 4's second column): each trained checkpoint is fine-tuned on the
# `finetuning.queryset` judgments (FarRelevant train in the study) into its own checkpoint, which then
# reranks each of `finetuning.querysets` in the same job, while the model is in memory (loading it again in a
# job per query set costs seconds per job, and every checkpoint is fine-tuned). So changing one of those
# query sets' candidates reruns its fine-tuning jobs too. With `rerank.jobs: per_checkpoint` the
# checkpoint's one job in rules/rerank.smk (rerank_checkpoint) fine-tunes it instead.

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
            training_paths.benchmark("finetune", "{model}", "{seed}")
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/finetune/{model}/seed{seed}.log",
        script:
            "../scripts/finetune.py"


# --- cross validation ------------------------------------------------------------------------------------------------
# Cross-validation (Robust04 in the study): for each fold of a query set, every trained
# checkpoint is fine-tuned on the other folds and reranks the held-out fold (the fold models are
# not kept); the fold runs are merged into results/runs/{queryset}/{model}/seed{seed}.run.
# `cross_validation.jobs: per_fold` gives each fold its own job and each query set a merge job;
# `per_checkpoint` gives a checkpoint one job for all its folds and query sets, resuming by fold
# (src/posbias/training/steps.py).

if CV_QUERYSETS and CV_CHECKPOINT_JOB_MODELS:

    rule cross_validate_checkpoint:
        """the merged runs of every cross-validated query set of a checkpoint, all its folds in one job that resumes
        by fold (`cross_validation.jobs: per_checkpoint`; `seed{seed}.run.resume/` while it runs)

        By hand: `posbias cross-validate checkpoint`"""
        input:
            init=training_paths.checkpoint("{model}", "{seed}"),
            tokens=lambda wc: [tokens_of(collection_of(qs), wc.model) for qs in CV_QUERYSETS],
            queries=[queries_of(qs) for qs in CV_QUERYSETS],
            qrels=[qrels_of(qs) for qs in CV_QUERYSETS],
            candidates=[candidates_of(qs) for qs in CV_QUERYSETS],
            folds=[folds_of(qs) for qs in CV_QUERYSETS],
        output:
            runs=expand(rerank_paths.run("{queryset}", "{{model}}", "{{seed}}"), queryset=CV_QUERYSETS),
        params:
            **checkpoint_params(),
            scoring=lambda wc: CFG.rerank.scoring(wc.model),
        wildcard_constraints:
            model=alternatives(CV_CHECKPOINT_JOB_MODELS),
        threads: 1
        resources:
            gpu=GPU_JOB,
        benchmark:
            training_paths.benchmark("cross_validate_checkpoint", "{model}", "{seed}")
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/cross_validate_checkpoint/{model}/seed{seed}.log",
        script:
            "../scripts/cross_validate_checkpoint.py"


if CV_QUERYSETS and CV_PER_FOLD_MODELS:

    rule cross_validate_fold:
        """`results/runs-cv/{queryset}/{model}/seed{seed}/fold{k}.run`

        By hand: `posbias cross-validate fold`"""
        input:
            init=training_paths.checkpoint("{model}", "{seed}"),
            tokens=lambda wc: tokens_of(collection_of(wc.queryset), wc.model),
            queries=lambda wc: queries_of(wc.queryset),
            qrels=lambda wc: qrels_of(wc.queryset),
            candidates=lambda wc: candidates_of(wc.queryset),
            folds=lambda wc: folds_of(wc.queryset),
        output:
            run=training_paths.fold_run("{queryset}", "{model}", "{seed}", "{fold}"),
            info=rerank_paths.run_info(training_paths.fold_run("{queryset}", "{model}", "{seed}", "{fold}")),
        params:
            **fold_params(),
            scoring=lambda wc: CFG.rerank.scoring(wc.model),
        wildcard_constraints:
            queryset=alternatives(CV_QUERYSETS),
            model=alternatives(CV_PER_FOLD_MODELS),
        threads: 1
        resources:
            gpu=GPU_JOB,
        benchmark:
            training_paths.fold_benchmark("{queryset}", "{model}", "{seed}", "{fold}")
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/cross_validate_fold/{queryset}/{model}/seed{seed}/fold{fold}.log",
        script:
            "../scripts/cross_validate_fold.py"

    rule merge_folds:
        """`results/runs/{queryset}/{model}/seed{seed}.run` from the fold runs

        By hand: `posbias cross-validate merge`"""
        input:
            runs=lambda wc: [training_paths.fold_run(wc.queryset, wc.model, wc.seed, fold)
                             for fold in range(1, CFG.querysets.folds_count(wc.queryset) + 1)],
            folds=lambda wc: folds_of(wc.queryset),
        output:
            run=rerank_paths.run("{queryset}", "{model}", "{seed}"),
        params:
            tag=lambda wc: run_tag(wc.model, wc.seed),
        wildcard_constraints:
            queryset=alternatives(CV_QUERYSETS),
            model=alternatives(CV_PER_FOLD_MODELS),
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/merge_folds/{queryset}/{model}/seed{seed}.log",
        script:
            "../scripts/merge_folds.py"
