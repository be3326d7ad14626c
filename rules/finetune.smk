# Fine-tuned setting (Table 4's second column): each trained checkpoint is fine-tuned on the
# `finetuning.queryset` judgments (FarRelevant train in the study) into its own checkpoint, which then
# reranks each of `finetuning.querysets` in the same job, while the model is in memory (loading it again in a
# job per query set costs seconds per job, and every checkpoint is fine-tuned). So changing one of those
# query sets' candidates reruns its fine-tuning jobs too.


if FINETUNING:

    rule finetune:
        input:
            init="results/models/{model}/seed{seed}",
            tokens=lambda wc: tokens_of(collection_of(FINETUNING["queryset"]), wc.model),
            queries=queries_of(FINETUNING["queryset"]),
            qrels=qrels_of(FINETUNING["queryset"]),
            candidates=candidates_of(FINETUNING["queryset"]),
            rerank_tokens=lambda wc: [tokens_of(collection_of(qs), wc.model) for qs in FINETUNED_QUERYSETS],
            rerank_queries=[queries_of(qs) for qs in FINETUNED_QUERYSETS],
            rerank_candidates=[candidates_of(qs) for qs in FINETUNED_QUERYSETS],
        output:
            checkpoint=directory("results/models-finetuned/{model}/seed{seed}"),
            runs=[finetuned_run(qs) for qs in FINETUNED_QUERYSETS],
            infos=[finetuned_run(qs, ".json") for qs in FINETUNED_QUERYSETS],
        params:
            model=lambda wc: CFG.model_params(wc.model),
            training=lambda wc: CFG.training_params(wc.model, FINETUNING.get("training")),
            seed=lambda wc: int(wc.seed),
            name=lambda wc: f"{wc.model}-finetuned",
            scoring=lambda wc: CFG.scoring(wc.model),
            tag=lambda wc: f"{wc.model}-finetuned-seed{wc.seed}",
        wildcard_constraints:
            model=alternatives(TRAINED_MODELS),
        threads: 1
        benchmark:
            "results/benchmarks/finetune/{model}/seed{seed}.tsv"
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/finetune/{model}/seed{seed}.log",
        script:
            "../scripts/finetune.py"
