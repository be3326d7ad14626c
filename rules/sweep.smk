# The position sweep (posbias.sweep): FarRelevant's relevant passages moved through fixed documents, reranked by
# every model like any other query set (rules/rerank.smk: the sweep query set is in rerank.querysets), reported as
# MRR and mean rank per position. And the breakdown of a query set's effectiveness by where its answer starts.
# The report rules read small Parquet files: local rules.


from posbias.sweep.paths import SWEEP_DOCS, breakdown_table, sweep_report

SWEEP = CFG.sweep.data
SWEEP_QUERYSET = CFG.sweep.queryset
SWEEP_MODELS = CFG.sweep.models  # empty unless the sweep query set is reranked
SWEEP_TABLE, SWEEP_FIGURE = sweep_report(OUT) if SWEEP_MODELS else ({}, [])
BREAKDOWN = TABLES.get("position_breakdown")
BREAKDOWN_TABLE = breakdown_table(OUT) if BREAKDOWN else {}
SWEEP_REPORTED = [*SWEEP_TABLE.values(), *SWEEP_FIGURE, *BREAKDOWN_TABLE.values()]


def sweep_source_inputs():
    """The source query set's files the sweep builder reads (documents as the source wrote them: the builder
    finds the relevant passage in them), and the passage collection they were built from."""
    source = SWEEP["source"]
    return dict(queries=queries_of(source), qrels=qrels_of(source), docs=source_docs_of(collection_of(source)),
                positions=CFG.querysets.positions_file(source), candidates=candidates_of(source),
                passages=SWEEP["passages"]["docs"], passage_qrels=SWEEP["passages"]["qrels"])


def sweep_outputs(queryset):
    """The sweep collection's files; the candidate run is the query set's `candidates` (config.sweep_candidates)."""
    return dict(docs=SWEEP_DOCS, queries=queries_of(queryset), qrels=qrels_of(queryset),
                positions=CFG.querysets.positions_file(queryset), candidates=QUERYSETS[queryset].candidates)


if SWEEP_QUERYSET:

    rule build_sweep:
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
        localrule: True
        input:
            per_seed=f"{OUT}/eval/{SWEEP_QUERYSET}/per_seed.parquet",
            positions=CFG.querysets.positions_file(SWEEP_QUERYSET),
            candidates=candidates_of(SWEEP_QUERYSET),
        output:
            **{fmt: report(path, caption="../report/sweep_table.rst", category="Position sweep")
               if fmt == "html" else path for fmt, path in SWEEP_TABLE.items()},
            png=report(SWEEP_FIGURE[0], caption="../report/sweep_figure.rst", category="Position sweep"),
            pdf=SWEEP_FIGURE[1],
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
        localrule: True
        input:
            averaged=f"{OUT}/eval/{BREAKDOWN['queryset']}/seed_averaged.parquet",
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
