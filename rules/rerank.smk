# Reranking: one job per (query set, checkpoint), so changing one query set's candidates (its depth or
# retriever) reruns only that query set's rerankings. With `rerank.jobs: per_checkpoint` a checkpoint reranks
# all its direct query sets in one job instead (rule rerank_checkpoint): one process start and model load in
# place of one per query set (about 5 s each on a CPU), but a change to any of those query sets reruns them all,
# and the checkpoint's fine-tuning, which that job also does (see below); zero-shot models likewise (rule
# rerank_zero_shot_model). Within such a job a pair that an earlier query set scored is not scored again.
# Both rules run scripts/rerank.py, which takes aligned lists (one entry per query set). Each run gets a
# `.run.json` saying how it was scored: device and the backbone's autocast dtype. Cross-validated query sets
# are reranked fold by fold instead (rules/training.smk); fine-tuned checkpoints rerank in their
# fine-tuning job (rules/training.smk, or rerank_checkpoint).


rule rerank:
    """`results/runs/{queryset}/{model}/seed{seed}.run{,.json}` (one job per query set and checkpoint)

    By hand: `posbias rerank --checkpoint`"""
    input:
        checkpoint=training_paths.checkpoint("{model}", "{seed}"),
        tokens=lambda wc: [tokens_of(collection_of(wc.queryset), wc.model)],
        queries=lambda wc: [queries_of(wc.queryset)],
        candidates=lambda wc: [candidates_of(wc.queryset)],
    output:
        runs=[rerank_paths.run("{queryset}", "{model}", "{seed}")],
        infos=[rerank_paths.run_info(rerank_paths.run("{queryset}", "{model}", "{seed}"))],
    params:
        scoring=lambda wc: CFG.rerank.scoring(wc.model),
        tag=lambda wc: f"{wc.model}-seed{wc.seed}",
    wildcard_constraints:
        queryset=alternatives(DIRECT_QUERYSETS),
        model=alternatives(PER_QUERYSET_MODELS),
    threads: 1
    resources:
        gpu=GPU_JOB,
    benchmark:
        rerank_paths.benchmark("{queryset}", "{model}", "{seed}")
    conda:
        "../envs/posbias.yaml"
    log:
        "logs/rerank/{queryset}/{model}/seed{seed}.log",
    script:
        "../scripts/rerank.py"


# With `finetuning:` the same job then fine-tunes the checkpoint and reranks the fine-tuned query sets
# (what rule finetune does otherwise): its inputs, outputs and params carry the prefix `finetune_`.
rule rerank_checkpoint:
    """the same runs, all query sets of a checkpoint, and its fine-tuning (`rerank.jobs: per_checkpoint`)

    By hand: `posbias rerank --checkpoint`, `posbias finetune`"""
    input:
        checkpoint=training_paths.checkpoint("{model}", "{seed}"),
        tokens=lambda wc: [tokens_of(collection_of(qs), wc.model) for qs in DIRECT_QUERYSETS],
        queries=[queries_of(qs) for qs in DIRECT_QUERYSETS],
        candidates=[candidates_of(qs) for qs in DIRECT_QUERYSETS],
        **(finetuning_inputs("finetune_") if FINETUNING else {}),
    output:
        runs=expand(rerank_paths.run("{queryset}", "{{model}}", "{{seed}}"), queryset=DIRECT_QUERYSETS),
        infos=expand(rerank_paths.run_info(rerank_paths.run("{queryset}", "{{model}}", "{{seed}}")),
                     queryset=DIRECT_QUERYSETS),
        **(finetuning_outputs("finetune_") if FINETUNING else {}),
    params:
        scoring=lambda wc: CFG.rerank.scoring(wc.model),
        tag=lambda wc: f"{wc.model}-seed{wc.seed}",
        **(finetuning_params("finetune_") if FINETUNING else {}),
    wildcard_constraints:
        model=alternatives(CHECKPOINT_JOB_MODELS),
    threads: 1
    resources:
        gpu=GPU_JOB,
    benchmark:
        rerank_paths.model_benchmark("rerank_checkpoint", "{model}", "{seed}")
    conda:
        "../envs/posbias.yaml"
    log:
        "logs/rerank_checkpoint/{model}/seed{seed}.log",
    script:
        "../scripts/rerank.py"


rule rerank_zero_shot:
    """`results/runs/{queryset}/{model}/seed0.run{,.json}` (zero-shot models: no train job)

    By hand: `posbias rerank --model`"""
    input:
        tokens=lambda wc: tokens_of(collection_of(wc.queryset), wc.model),
        queries=lambda wc: queries_of(wc.queryset),
        candidates=lambda wc: candidates_of(wc.queryset),
    output:
        run=rerank_paths.run("{queryset}", "{model}", ZERO_SHOT_SEED),
        info=rerank_paths.run_info(rerank_paths.run("{queryset}", "{model}", ZERO_SHOT_SEED)),
    params:
        model=lambda wc: CFG.models.params(wc.model),
        scoring=lambda wc: CFG.rerank.scoring(wc.model),
        tag=lambda wc: f"{wc.model}-zero-shot",
    wildcard_constraints:
        queryset=alternatives(RERANK_QUERYSETS),
        model=alternatives([m for m in ZERO_SHOT_MODELS if m not in ZERO_SHOT_JOB_MODELS]),
    threads: 1
    resources:
        gpu=GPU_JOB,
    benchmark:
        rerank_paths.benchmark("{queryset}", "{model}", ZERO_SHOT_SEED)
    conda:
        "../envs/posbias.yaml"
    log:
        f"logs/rerank/{{queryset}}/{{model}}/seed{ZERO_SHOT_SEED}.log",
    script:
        "../scripts/rerank_zero_shot.py"


# `rerank.jobs: per_checkpoint`: a zero-shot model scores every reranked query set in one job, as a checkpoint does.
rule rerank_zero_shot_model:
    """the same runs, all query sets of a zero-shot model (`rerank.jobs: per_checkpoint`)

    By hand: `posbias rerank --model`"""
    input:
        tokens=lambda wc: [tokens_of(collection_of(qs), wc.model) for qs in RERANK_QUERYSETS],
        queries=[queries_of(qs) for qs in RERANK_QUERYSETS],
        candidates=[candidates_of(qs) for qs in RERANK_QUERYSETS],
    output:
        runs=expand(rerank_paths.run("{queryset}", "{{model}}", ZERO_SHOT_SEED), queryset=RERANK_QUERYSETS),
        infos=expand(rerank_paths.run_info(rerank_paths.run("{queryset}", "{{model}}", ZERO_SHOT_SEED)),
                     queryset=RERANK_QUERYSETS),
    params:
        model=lambda wc: CFG.models.params(wc.model),
        scoring=lambda wc: CFG.rerank.scoring(wc.model),
        tag=lambda wc: f"{wc.model}-zero-shot",
    wildcard_constraints:
        model=alternatives(ZERO_SHOT_JOB_MODELS),
    threads: 1
    resources:
        gpu=GPU_JOB,
    benchmark:
        rerank_paths.model_benchmark("rerank_zero_shot_model", "{model}", ZERO_SHOT_SEED)
    conda:
        "../envs/posbias.yaml"
    log:
        f"logs/rerank_zero_shot_model/{{model}}/seed{ZERO_SHOT_SEED}.log",
    script:
        "../scripts/rerank_zero_shot.py"


# RankGPT and any other listwise ranker: the candidates' texts (untruncated: the study's RankGPT reads whole
# documents, or its own sentence prefixes for FirstP) go to a language model through the response cache
# (llm.cache). Zero-shot, so one run per query set, like the models above.
rule rerank_listwise:
    """`results/runs/{queryset}/{model}/seed0.run{,.json}` (RankGPT: through `llm.models`, `cache/llm/`)

    By hand: `posbias rerank --model`"""
    input:
        docs=lambda wc: source_docs_of(collection_of(wc.queryset)),
        queries=lambda wc: queries_of(wc.queryset),
        candidates=lambda wc: candidates_of(wc.queryset),
    output:
        run=rerank_paths.run("{queryset}", "{model}", ZERO_SHOT_SEED),
        info=rerank_paths.run_info(rerank_paths.run("{queryset}", "{model}", ZERO_SHOT_SEED)),
    params:
        args=lambda wc: canonical(CFG.models[wc.model].args),
        llm=lambda wc: CFG.llm.model(CFG.models[wc.model].args["llm"]),
        llm_name=lambda wc: CFG.models[wc.model].args["llm"],
        cache=CFG.llm.cache,
        tag=lambda wc: f"{wc.model}-zero-shot",
    wildcard_constraints:
        queryset=alternatives(RERANK_QUERYSETS),
        model=alternatives(LISTWISE_MODELS),
    threads: 1
    resources:
        gpu=lambda wc: gpu_for_language_models(CFG.llm.model(CFG.models[wc.model].args["llm"])),
    benchmark:
        rerank_paths.benchmark("{queryset}", "{model}", ZERO_SHOT_SEED)
    conda:
        "../envs/posbias.yaml"
    log:
        f"logs/rerank/{{queryset}}/{{model}}/seed{ZERO_SHOT_SEED}.log",
    script:
        "../scripts/rerank_listwise.py"
