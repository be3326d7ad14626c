# Fine-tuned setting (Table 4's second column): each trained checkpoint is fine-tuned on the
# `finetuning.queryset` judgments (FarRelevant train in the study) and reranks `finetuning.querysets`
# in one job; the fine-tuned model is not kept, only its runs.


if FINETUNING:

    rule finetune_rerank:
        input:
            init="results/models/{model}/seed{seed}",
            train_tokens=lambda wc: tokens_of(collection_of(FINETUNING["queryset"]), wc.model),
            train_queries=queries_of(FINETUNING["queryset"]),
            train_qrels=qrels_of(FINETUNING["queryset"]),
            train_candidates=candidates_of(FINETUNING["queryset"]),
            tokens=lambda wc: [tokens_of(collection_of(qs), wc.model) for qs in FINETUNED_QUERYSETS],
            queries=[queries_of(qs) for qs in FINETUNED_QUERYSETS],
            candidates=[candidates_of(qs) for qs in FINETUNED_QUERYSETS],
        output:
            runs=expand("results/runs-finetuned/{qs}/{{model}}/seed{{seed}}.run", qs=FINETUNED_QUERYSETS),
            info=expand("results/runs-finetuned/{qs}/{{model}}/seed{{seed}}.run.json", qs=FINETUNED_QUERYSETS),
        params:
            model=lambda wc: model_params(wc.model),
            training=training_params(FINETUNING.get("training")),
            seed=lambda wc: int(wc.seed),
            name=lambda wc: wc.model,
            scoring=SCORING,
            tag=lambda wc: f"{wc.model}-finetuned-seed{wc.seed}",
        threads: 1
        benchmark:
            "results/benchmarks/finetune_rerank/{model}/seed{seed}.tsv"
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/finetune_rerank/{model}/seed{seed}.log",
        script:
            "../scripts/finetune_rerank.py"
