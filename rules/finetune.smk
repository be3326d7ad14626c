# Fine-tuned setting (Table 4's second column): each trained checkpoint is fine-tuned on the
# `finetuning.queryset` judgments (FarRelevant train in the study) into its own checkpoint, which then
# reranks each of `finetuning.querysets` in a job of its own (as rules/rerank.smk does for the trained ones).


if FINETUNING:

    rule finetune:
        input:
            init="results/models/{model}/seed{seed}",
            tokens=lambda wc: tokens_of(collection_of(FINETUNING["queryset"]), wc.model),
            queries=queries_of(FINETUNING["queryset"]),
            qrels=qrels_of(FINETUNING["queryset"]),
            candidates=candidates_of(FINETUNING["queryset"]),
        output:
            checkpoint=directory("results/models-finetuned/{model}/seed{seed}"),
        params:
            model=lambda wc: CFG.model_params(wc.model),
            training=lambda wc: CFG.training_params(wc.model, FINETUNING.get("training")),
            seed=lambda wc: int(wc.seed),
            name=lambda wc: f"{wc.model}-finetuned",
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
            "../scripts/train.py"

    rule rerank_finetuned:
        input:
            checkpoint="results/models-finetuned/{model}/seed{seed}",
            tokens=lambda wc: tokens_of(collection_of(wc.queryset), wc.model),
            queries=lambda wc: queries_of(wc.queryset),
            candidates=lambda wc: candidates_of(wc.queryset),
        output:
            run="results/runs-finetuned/{queryset}/{model}/seed{seed}.run",
            info="results/runs-finetuned/{queryset}/{model}/seed{seed}.run.json",
        params:
            scoring=lambda wc: CFG.scoring(wc.model),
            tag=lambda wc: f"{wc.model}-finetuned-seed{wc.seed}",
        wildcard_constraints:
            queryset=alternatives(FINETUNED_QUERYSETS),
            model=alternatives(TRAINED_MODELS),
        threads: 1
        benchmark:
            "results/benchmarks/rerank_finetuned/{queryset}/{model}/seed{seed}.tsv"
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/rerank_finetuned/{queryset}/{model}/seed{seed}.log",
        script:
            "../scripts/rerank.py"
