# All systems of a query set in one table; per-query values averaged over seeds before testing. The
# combined files belong to the experiment (its models and seeds): under results/<experiment>/ when named.
# These rules only concatenate small per-query Parquet files: local rules, never queued on a cluster.


rule combine_seeds:
    """`results/[{experiment}/]eval/{queryset}/{per_seed,seed_averaged}.parquet`

    By hand: `posbias study combine-seeds`"""
    localrule: True
    input:
        values=lambda wc: systems_evaluated(wc.queryset),
    output:
        per_seed=evaluation_paths.per_seed(OUT, "{queryset}"),
        averaged=evaluation_paths.seed_averaged(OUT, "{queryset}"),
    wildcard_constraints:
        queryset=alternatives(CFG.rerank.evaluated),
    conda:
        "../envs/posbias.yaml"
    log:
        "logs/stats/combine_seeds/{queryset}.log",
    script:
        "../scripts/combine_seeds.py"


if FINETUNED_QUERYSETS:

    rule combine_finetuned_seeds:
        """the same for the fine-tuned runs

        By hand: `posbias study combine-seeds`"""
        localrule: True
        input:
            values=lambda wc: systems_evaluated(wc.queryset, evaluation_paths.FINE_TUNED),
        output:
            per_seed=evaluation_paths.per_seed(OUT, "{queryset}", evaluation_paths.FINE_TUNED),
            averaged=evaluation_paths.seed_averaged(OUT, "{queryset}", evaluation_paths.FINE_TUNED),
        wildcard_constraints:
            queryset=alternatives(FINETUNED_QUERYSETS),
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/stats/combine_finetuned_seeds/{queryset}.log",
        script:
            "../scripts/combine_seeds.py"


if OUTCOME_QUERYSETS:

    rule combine_cutoff_seeds:
        """the same for the outcome table's RR@k

        By hand: `posbias study combine-seeds`"""
        localrule: True
        input:
            values=lambda wc: [evaluation_paths.values(wc.queryset, model, seed, evaluation_paths.cutoff(wc.k))
                               for model in MODELS if CFG.models.evaluates(model, wc.queryset)
                               for seed in CFG.models.seeds(model)],
        output:
            per_seed=evaluation_paths.per_seed(OUT, "{queryset}", evaluation_paths.cutoff("{k}")),
            averaged=evaluation_paths.seed_averaged(OUT, "{queryset}", evaluation_paths.cutoff("{k}")),
        wildcard_constraints:
            queryset=alternatives(OUTCOME_QUERYSETS),
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/stats/combine_cutoff_seeds/k{k}/{queryset}.log",
        script:
            "../scripts/combine_seeds.py"
