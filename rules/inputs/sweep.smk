# The names, paths and input functions of rules/sweep.smk (Snakemake's lint keeps functions out of a file
# with rules).

from posbias.sweep.paths import SWEEP_DOCS, breakdown_table, sensitivity_table, sweep_report

SWEEP = CFG.sweep.data
SWEEP_QUERYSET = CFG.sweep.queryset
SWEEP_MODELS = CFG.sweep.models  # empty unless the sweep query set is reranked
SWEEP_TABLE, SWEEP_FIGURE = sweep_report(OUT) if SWEEP_MODELS else ({}, [])
SENSITIVITY_TABLE = sensitivity_table(OUT) if SWEEP_MODELS else {}
BREAKDOWN = TABLES.get("position_breakdown")
BREAKDOWN_TABLE = breakdown_table(OUT) if BREAKDOWN else {}
SWEEP_REPORTED = [*SWEEP_TABLE.values(), *SWEEP_FIGURE, *SENSITIVITY_TABLE.values(), *BREAKDOWN_TABLE.values()]


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
