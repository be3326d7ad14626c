# The position sweep (posbias.sweep): FarRelevant's relevant passages moved through fixed documents, reranked by
# every model like any other query set (rules/rerank.smk: the sweep query set is in rerank.querysets), reported as
# MRR and mean rank per position. And the breakdown of a query set's effectiveness by where its answer starts.
# The report rules read small Parquet files: local rules.

include: "inputs/sweep.smk"


if SWEEP_QUERYSET:

    rule build_sweep:
        """`results/data/sweep/docs.jsonl` with the sweep query set's queries, qrels, positions and candidates

        By hand: `posbias sweep build`"""
        input:
            **sweep_source_inputs(),
        output:
            **sweep_outputs(SWEEP_QUERYSET),
        params:
            **CFG.sweep.build_args(),
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/sweep/build_sweep.log",
        script:
            "../scripts/sweep_build.py"


if SWEEP_MODELS:

    rule sweep_report:
        """`results/[{experiment}/]sweep.*`, `sweep_sensitivity.*` (each curve's PSI, drops and reach) and
        `figures/sweep.{png,pdf}`

        By hand: `posbias sweep report`"""
        localrule: True
        input:
            per_seed=evaluation_paths.per_seed(OUT, SWEEP_QUERYSET),
            positions=CFG.querysets.positions_file(SWEEP_QUERYSET),
            candidates=candidates_of(SWEEP_QUERYSET),
        output:
            **{fmt: report(path, caption="../report/sweep_table.rst", category="Position sweep")
               if fmt == "html" else path for fmt, path in SWEEP_TABLE.items()},
            png=report(SWEEP_FIGURE[0], caption="../report/sweep_figure.rst", category="Position sweep"),
            pdf=SWEEP_FIGURE[1],
            **{f"sensitivity_{fmt}": report(path, caption="../report/sweep_sensitivity.rst", category="Position sweep")
               if fmt == "html" else path for fmt, path in SENSITIVITY_TABLE.items()},
        params:
            **CFG.sweep.report_args(),
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/sweep/sweep_report.log",
        script:
            "../scripts/sweep_report.py"


if BREAKDOWN:

    rule position_breakdown:
        """`results/[{experiment}/]position_breakdown.*`

        By hand: `posbias sweep breakdown`"""
        localrule: True
        input:
            averaged=evaluation_paths.seed_averaged(OUT, BREAKDOWN["queryset"]),
            positions=BREAKDOWN.get("positions", CFG.querysets.positions_file(BREAKDOWN["queryset"])),
        output:
            **{fmt: report(path, caption="../report/sweep_breakdown.rst", category="Position sweep")
               if fmt == "html" else path for fmt, path in BREAKDOWN_TABLE.items()},
        params:
            **CFG.sweep.breakdown_args(),
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/sweep/position_breakdown.log",
        script:
            "../scripts/sweep_breakdown.py"
