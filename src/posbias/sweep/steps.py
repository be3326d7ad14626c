"""Pipeline steps of the position sweep (build the collection, report its curves) and of the breakdown of a query
set's effectiveness by answer position (`posbias.sweep`)."""

from __future__ import annotations

import logging
from pathlib import Path

import pandas as pd

from posbias.backbones import token_counter
from posbias.errors import InputError
from posbias.io import (nonempty, read_documents, read_qrels, read_queries, read_ranked_run, write_documents,
                        write_qrels, write_queries, write_run)
from posbias.names import RETRIEVER
from posbias.reporting.render import Table, write_tables
from posbias.stats.chance import expected_random
from posbias.sweep.build import SweepSettings, relevant_document, sweep_id, sweep_query
from posbias.sweep.jobs import BreakdownJob, SweepReportJob
from posbias.sweep.positions import read_positions, write_sweep_positions
from posbias.sweep.stats import bins_from_edges, position_breakdown, sweep_curves, sweep_sensitivity, with_ranks

log = logging.getLogger(__name__)

TAG = "sweep"  # the candidate run's tag
SWEEP_LABEL, BREAKDOWN_LABEL, SENSITIVITY_LABEL = "tab:sweep", "tab:position-breakdown", "tab:sweep-sensitivity"


def _ordered_candidates(entries: dict) -> dict[str, float]:
    """A ranked run's entries (doc -> (rank, score)) as doc -> score, best first."""
    return {doc: entries[doc][1] for doc in sorted(entries, key=lambda doc: (-entries[doc][1], entries[doc][0]))}


def _relevant_passage(passage_qrels: dict, passages: dict, qid: str, document: str, where: str) -> str:
    """The query's relevant passage that its FarRelevant document holds (the builder used the first)."""
    judged = sorted(pid for pid, grade in passage_qrels.get(qid, {}).items() if grade > 0)
    texts = [passages[pid] for pid in judged if pid in passages]
    if not texts:
        raise InputError(f"{where}: query {qid} has no relevant passage in the passage collection")
    return next((text for text in texts if text in document), texts[0])


def build_sweep(source: dict, passages: str, passage_qrels: str, settings: dict, tokenizer: str, queryset: str,
                depth: int, out: dict) -> None:
    """Write the sweep collection. `source` names the source query set's `queries`, `qrels`, `docs`, `positions`
    and `candidates` files; `passages` and `passage_qrels` the passage collection its documents were built from
    (relevant passages and the top-up pool); `depth` cuts each query's candidates (the sweep query set's depth:
    the variant is always among them); `out` the `docs`, `queries`, `qrels`, `positions` and `candidates` paths
    written."""
    config = SweepSettings.from_config(settings)
    queries = read_queries(source["queries"])
    judged = read_qrels(source["qrels"])
    starts = read_positions(source["positions"])
    candidates = read_ranked_run(source["candidates"])
    bases = [q for q in queries if q in judged][:config.n_queries]
    if len(bases) < config.n_queries:
        raise InputError(f"{source['queries']}: {len(bases)} judged queries, fewer than sweep.n_queries = "
                         f"{config.n_queries}")
    relevant = {q: relevant_document(judged[q], q, source["qrels"]) for q in bases}
    unretrieved = [q for q in bases if q not in candidates]
    if unretrieved:
        raise InputError(f"{source['candidates']}: no candidates for {len(unretrieved)} swept queries, e.g. "
                         f"{unretrieved[:3]}")
    needed = set(relevant.values()) | {doc for q in bases for doc in candidates[q]}
    documents = read_documents(source["docs"], keep=needed)
    absent = sorted(needed - set(documents))
    if absent:
        raise InputError(f"{source['docs']}: {len(absent)} documents of the swept queries are missing, "
                         f"e.g. {absent[:3]}")
    pool_texts = nonempty(read_documents(passages), passages, "passages")
    passage_judged = read_qrels(passage_qrels)
    relevant_ids = {pid for per_query in passage_judged.values() for pid, grade in per_query.items() if grade > 0}
    pool = [pool_texts[pid] for pid in sorted(pool_texts) if pid not in relevant_ids]
    length = token_counter(tokenizer)

    docs, sweep_queries, sweep_qrels, run, rows = [], {}, {}, {}, []
    for base in bases:
        passage = _relevant_passage(passage_judged, pool_texts, base, documents[relevant[base]], passage_qrels)
        swept = sweep_query(base, documents[relevant[base]], relevant[base], passage, starts.get(base),
                            dict(list(_ordered_candidates(candidates[base]).items())[:depth]), pool, length, config)
        for variant in swept.variants:
            qid, doc_id = sweep_id(base, variant.position), sweep_id(relevant[base], variant.position)
            docs.append({"id": doc_id, "text": variant.text})
            sweep_queries[qid] = queries[base]
            sweep_qrels[qid] = {doc_id: 1}
            run[qid] = swept.variant_candidates(variant)
            rows.append((qid, variant.start, variant.slot, variant.position, base, variant.n_tokens))
        log.info("%s: %d tokens (%d topped up), passage starts %s, %s", base, swept.variants[0].n_tokens,
                 swept.topped_up, [v.start for v in swept.variants],
                 "retrieved" if swept.retrieved else "not retrieved: the variant replaces the last candidate")
    distractors = sorted({doc for scores in run.values() for doc in scores} - {d["id"] for d in docs})
    for path in out.values():
        Path(path).parent.mkdir(parents=True, exist_ok=True)
    write_queries(out["queries"], sweep_queries)
    write_qrels(out["qrels"], sweep_qrels)
    write_sweep_positions(out["positions"], rows)
    write_run(out["candidates"], run, tag=TAG)
    # The document file last: its rules key on it like on the generated collections'.
    write_documents(out["docs"], docs + [{"id": doc, "text": documents[doc]} for doc in distractors])
    lengths = sorted({row[5] for row in rows})
    log.info("sweep %s: %d queries x %d positions, %d variant and %d distractor documents of %d..%d tokens",
             queryset, len(bases), config.n_positions, len(docs), len(distractors), lengths[0], lengths[-1])


def _write(outputs: dict, frame: pd.DataFrame, header: list, body: list, caption: str, label: str) -> None:

    write_tables(outputs, frame, Table(header, body, caption, label, wide=len(header) > 6))


def sweep_report(job: SweepReportJob) -> None:
    """The sweep's table (tex, csv, md, html) and figure (png and pdf), and with `sensitivity` (the same four
    formats) the metric suite of each curve."""
    # matplotlib (the figure's): only the two report jobs pay its import
    from posbias.sweep.report import (sensitivity_caption, sensitivity_cells, sweep_caption, sweep_cells,
                                      sweep_figure)

    models, metric, statistics, alpha = job.models.labels, job.metric, job.statistics, job.alpha
    n_seeds, zero_shot = job.models.n_seeds, job.models.zero_shot
    frame = pd.read_parquet(job.per_seed)
    frame = frame[frame["system"].isin(models)]
    placed = pd.read_csv(job.positions, sep="\t", dtype={"qid": str, "base": str})
    averaged = with_ranks(frame, metric)
    curves = sweep_curves(averaged, placed, models, metric, statistics, alpha)
    counts = {qid: len(docs) for qid, docs in read_ranked_run(job.candidates).items()}
    random_mrr, random_rank = expected_random(counts)
    header, body = sweep_cells(curves)
    caption = sweep_caption(curves, statistics, job.first_window, random_mrr, random_rank, n_seeds, zero_shot,
                            job.note)
    _write(job.table, curves.assign(random_mrr=random_mrr, random_rank=random_rank), header, body, caption,
           SWEEP_LABEL)
    sweep_figure(curves, job.first_window, random_mrr, job.figure)
    if job.sensitivity:
        suite = sweep_sensitivity(averaged, placed, models, metric, statistics, alpha)
        header, body = sensitivity_cells(suite)
        _write(job.sensitivity, suite, header, body, sensitivity_caption(suite, statistics, n_seeds, zero_shot),
               SENSITIVITY_LABEL)


def breakdown_report(job: BreakdownJob) -> None:
    """The breakdown of `spec["metric"]` on `spec["queryset"]` by position bin (`tables.position_breakdown`)."""
    from posbias.sweep.report import breakdown_caption, breakdown_cells

    spec, positions = job.spec, job.positions
    frame = pd.read_parquet(job.averaged)
    frame = frame[frame["queryset"] == spec["queryset"]]
    starts = read_positions(positions)
    systems = {RETRIEVER: job.retriever_label, **job.models.labels}
    judged = set(frame[frame["metric"] == spec["metric"]]["qid"])
    if not judged & set(starts):
        raise InputError(f"{positions}: none of its queries is among the {len(judged)} evaluated queries of "
                         f"{spec['queryset']}")
    table = position_breakdown(frame, starts, systems, spec["metric"], bins_from_edges(spec["bins"]),
                               job.correction, job.alpha)
    unplaced = len(judged - set(starts))
    header, body = breakdown_cells(table)
    caption = breakdown_caption(table, spec["queryset"], spec["metric"], job.correction, job.models.n_seeds,
                                job.models.zero_shot, Path(positions).name, unplaced)
    _write(job.outputs, table, header, body, caption, BREAKDOWN_LABEL)
