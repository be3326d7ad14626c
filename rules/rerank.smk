# Reranking: one job per (query set, checkpoint), so changing one query set's candidates (its depth or
# retriever) reruns only that query set's rerankings. Each run gets a `.run.json` saying how it was
# scored: device and the backbone's autocast dtype. Cross-validated query sets are reranked fold by
# fold instead (rules/cross_validation.smk); fine-tuned checkpoints rerank in rules/finetune.smk.


rule rerank:
    input:
        checkpoint="results/models/{model}/seed{seed}",
        tokens=lambda wc: tokens_of(collection_of(wc.queryset), wc.model),
        queries=lambda wc: queries_of(wc.queryset),
        candidates=lambda wc: candidates_of(wc.queryset),
    output:
        run="results/runs/{queryset}/{model}/seed{seed}.run",
        info="results/runs/{queryset}/{model}/seed{seed}.run.json",
    params:
        scoring=lambda wc: CFG.scoring(wc.model),
        tag=lambda wc: f"{wc.model}-seed{wc.seed}",
    wildcard_constraints:
        queryset=alternatives(DIRECT_QUERYSETS),
    threads: 1
    benchmark:
        "results/benchmarks/rerank/{queryset}/{model}/seed{seed}.tsv"
    conda:
        "../envs/posbias.yaml"
    log:
        "logs/rerank/{queryset}/{model}/seed{seed}.log",
    script:
        "../scripts/rerank.py"
