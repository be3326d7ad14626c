# Fine-tuned setting (Table 4's second column): each trained checkpoint is fine-tuned on the
# `finetuning.queryset` judgments (FarRelevant train in the study) and reranks `finetuning.querysets`
# in one job; the fine-tuned model is not kept, only its runs.


if FINETUNING:

    rule finetune_rerank:
        input:
            init="results/models/{model}/seed{seed}",
            train_docs=docs_of(collection_of(FINETUNING["queryset"])),
            train_queries=queries_of(FINETUNING["queryset"]),
            train_qrels=qrels_of(FINETUNING["queryset"]),
            train_candidates=candidates_of(FINETUNING["queryset"]),
            docs=[docs_of(collection_of(qs)) for qs in FINETUNED_QUERYSETS],
            queries=[queries_of(qs) for qs in FINETUNED_QUERYSETS],
            candidates=[candidates_of(qs) for qs in FINETUNED_QUERYSETS],
        output:
            runs=expand("results/runs-finetuned/{qs}/{{model}}/seed{{seed}}.run", qs=FINETUNED_QUERYSETS),
        params:
            model=lambda wc: {k: config["models"][wc.model][k] for k in ("ranker", "args", "lr", "head_lr")},
            training={**{k: v for k, v in config["training"].items() if k not in ("seeds", "queryset")},
                      **FINETUNING["training"]},
            seed=lambda wc: int(wc.seed),
            batch_size=config["rerank"]["batch_size"],
            device=config["rerank"]["device"],
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
