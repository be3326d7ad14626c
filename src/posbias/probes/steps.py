"""Pipeline steps of the bias probes (Fayyaz et al. 2025; spec: shared/specs/probes.md): build each probe's
document pairs from Re-DocRED, score them with one scorer, and report the paired tests.

Files between the steps:
- `pairs/{probe}.jsonl`: one pair per line, `ProbePair.to_dict()` (or `LiteralPair.to_dict()`: a query per side);
- `pairs/heatmap.jsonl`: every query of the table with its whole original document, its head's mention count
  and the document's length in words (the repetition heatmap, spec §4.2);
- `pairs/query_table.json`: what the query table kept and dropped, and each probe's candidate pool;
- `scores/{scorer}.parquet`: per pair, `score_1` = M(query_1, document_1), `score_2`, and whether the scorer cut
  either document off (`truncated_1`, `truncated_2`); `scores/{scorer}.heatmap.parquet`: per query, its score
  against the whole document;
- `rag/answers.parquet`: RAG poisoning's answers and verdicts; `rag/judge_consistency.parquet` and `.json`: the
  judge's swap check (`posbias.probes.judge_swap`), its pairs and its figures.
"""

from __future__ import annotations

import json
import logging
import time
from pathlib import Path
from typing import Mapping, Sequence

import pandas as pd

from posbias.errors import InputError
from posbias.docred.probe_names import SWEEP
from posbias.io import atomic_write
from posbias.probes.declaration import seed_of, variant_of
from posbias.probes.jobs import RagJob, ReportJob
from posbias.probes.declarations import PROBES
from posbias.probes.declarations.foil import FOIL
from posbias.probes.declarations.poison import POISON

log = logging.getLogger(__name__)

HEATMAP = "heatmap"


# --- build ------------------------------------------------------------------------------------------------------


def probe_names() -> tuple[str, ...]:
    """Every probe the stage can build, in the report's order (poison, off by default, last)."""
    return tuple(probe.name for probe in PROBES)


def redocred_files(section: Mapping, synthetic_path: str) -> dict[str, list[dict]]:
    """`probes.redocred` as the build step reads it: `files` and `dedup_files` as {path, split}; the synthetic
    world is one test file at `synthetic_path`, with nothing to deduplicate against."""
    if "synthetic" in section:
        return {"files": [{"path": synthetic_path, "split": "test"}], "dedup_files": []}
    return {"files": list(section["files"]), "dedup_files": list(section.get("dedup_files", []))}


def read_corpus(files: Sequence[Mapping]) -> list:
    """The documents of every `{path, split}` entry, in the order given; an entry's file must have its `sha256`, when
    the entry gives one."""
    from posbias.docred.documents import read_redocred
    from posbias.staging.checksums import verify

    documents = []
    for entry in files:
        if not Path(entry["path"]).exists():
            raise InputError(f"probes.redocred: {entry['path']} does not exist (a Re-DocRED *_revised.json file)")
        verify(entry["path"], entry.get("sha256"), f"probes.redocred's sha256 of {entry['path']}")
        documents += read_redocred(entry["path"], entry["split"])
    return documents


def build(section: Mapping, pairs_out: Mapping[str, str], heatmap_out: str, table_out: str,
          replacements_out: str | None = None, llm: Mapping | None = None, cache: Mapping | None = None) -> None:
    """Write each probe's pairs (`pairs_out`: probe -> path), the heatmap's queries and the query table's counts;
    with the poison probe, also the replacement entities it used (`replacements_out`), asked of the language model
    `llm` through the response cache `cache` when `probes.poison.source` is llm."""
    from posbias.docred.queries import query_table_with_counts

    files, dedup = section["redocred"]["files"], section["redocred"].get("dedup_files", [])
    queries, counts = query_table_with_counts(read_corpus(files), read_corpus(dedup))
    log.info("query table: %s", counts.summary())
    if not dedup:
        log.info("no probes.redocred.dedup_files: the duplicate filter sees only the query files, so the pool is "
                 "larger than the study's (it also filtered against Re-DocRED train and DocRED train_distant)")
    declared, pools = {probe.name: probe for probe in PROBES}, {}
    for probe, out in pairs_out.items():
        if probe == POISON:
            pools[probe], pairs = _poison_pairs(queries, section, replacements_out, llm, cache)
        else:
            pools[probe] = len(declared[probe].pool(queries, section))
            pairs = declared[probe].build(queries, section, section["n"], seed_of(section, probe))
        _write_jsonl(out, [pair.to_dict() for pair in pairs])
        log.info("%s: %d pairs from %d candidates", probe, len(pairs), pools[probe])
    _write_jsonl(heatmap_out, [_heatmap_record(query) for query in queries])
    report = {"query_table": counts.__dict__, "candidates": pools, "n": section["n"],
              "dedup_files": [entry["path"] for entry in dedup]}
    with atomic_write(table_out) as handle:
        json.dump(report, handle, indent=2)
        handle.write("\n")


def _poison_pairs(queries, section: Mapping, replacements_out: str | None, llm: Mapping | None,
                  cache: Mapping | None) -> tuple[int, list]:
    """(the candidate pool, the pairs) of the poison probe: the foil's sample, poisoned with replacements from the
    configured source, which are written to `replacements_out` so that a rerun asks nothing again."""
    from posbias.probes import poison

    settings, foil_authors = section["poison"], variant_of(section, "foil") == "authors"
    sampled = poison.sampled_queries(queries, section["n"], seed_of(section, FOIL), authors=foil_authors)
    if settings["source"] == "file":
        replacements = poison.read_replacements(settings["path"])
    elif settings["source"] == "swap":
        replacements = poison.swap_replacements(queries, sampled, settings.get("seed", 0))
    else:
        replacements = poison.llm_replacements(sampled, _asker(llm, cache, settings))
    pairs = poison.poison(queries, section["n"], seed_of(section, FOIL), replacements,
                          authors=variant_of(section, "poison") == "authors", foil_authors=foil_authors)
    if len(pairs) < 2:  # a paired test needs two
        raise InputError(f"probes.poison: only {len(pairs)} of {len(sampled)} replacements from source "
                         f"{settings['source']!r} are usable (each must be non-empty and must not name the answer)")
    if replacements_out is not None:
        poison.write_replacements(replacements_out, {q.qid: replacements.get(q.qid, "") for q in sampled}, sampled)
    return len(sampled), pairs


def _asker(llm: Mapping | None, cache: Mapping | None, settings: Mapping):
    """prompts -> answers of the poison's language model (greedy, `max_new_tokens`), through the response cache."""
    if llm is None or cache is None:
        raise InputError("probes.poison: source llm needs its language model (probes.poison.model) and llm.cache")
    return asker(llm, cache, settings["model"], settings.get("max_new_tokens", 16), stop=("\n",))


def asker(llm: Mapping, cache: Mapping, name: str, max_new_tokens: int, stop: tuple[str, ...] = ()):
    """prompts -> answers of the language model `llm` (`llm.models.<name>`), greedy, through the response cache."""
    from posbias.llm.generate import open_model
    from posbias.llm.types import Decoding, Request

    model = open_model(llm, cache["dir"], cache["mode"], what=f"llm.models.{name}")
    decoding = Decoding(max_new_tokens=max_new_tokens, stop=stop)

    def ask(prompts: list[str], metas: list[dict] | None = None) -> list[str]:
        """`metas`: what a mock reads (never sent, no part of a real model's cache key)."""
        requests = [Request(prompt=p, meta=m) for p, m in zip(prompts, metas or [{}] * len(prompts), strict=True)]
        return [c.text for c in model.generate(requests, decoding)]

    return ask


def rag(job: RagJob) -> None:
    """RAG poisoning (`posbias.probes.rag`): every reader answers the poison probe's questions from each document and
    without one; the judge (`settings["judge"]`) says which answers hold the gold answer; the answers and the
    accuracy table are written. Then the judge's swap check (`settings["consistency"]`; none without it,
    `posbias.probes.judge_swap`): its pairs and figures are written, and the figures go into the table's caption."""
    from posbias.probes import judge_swap, rag as rag_probe
    from posbias.probes.report import write_rag_table

    settings, cache, outputs = job.settings, job.cache, job.outputs
    items = rag_probe.items(read_jsonl(job.inputs.poison), read_jsonl(job.inputs.foil),
                            {r["qid"]: r for r in read_jsonl(job.inputs.replacements)})
    budget = settings.get("max_new_tokens", 64)
    asks = {name: asker(spec, cache, name, budget) for name, spec in job.readers.items()}
    judge_ask = asker(job.judge, cache, settings["judge"], 8)
    judged = rag_probe.answer_and_judge(items, asks, judge_ask)
    _write_parquet(judged, outputs.answers)
    table = rag_probe.accuracy_table(judged, correction=job.correction)
    for row in table.itertuples():
        log.info("%s %s: accuracy %.3f of %d", row.reader, row.condition, row.accuracy, row.n)
    check = settings.get("consistency") or {}
    started = time.perf_counter()
    pairs = judge_swap.check(judged, items, judge_ask, check.get("sample", 0), check.get("seed", 0))
    figures = {"judge": settings["judge"], "sample": check.get("sample", 0), "seed": check.get("seed", 0),
               **judge_swap.summary(pairs, len(judged)), "seconds": round(time.perf_counter() - started, 2)}
    if len(pairs):
        log.info("swap check of the judge %s: the same decision for %d of %d sampled answers with the model answer "
                 "before the evidence; YES only as the study asks %d, only swapped %d (McNemar p %s); the "
                 "abstention rule overrides %d of them", settings["judge"], figures["agree"], figures["n"],
                 figures["only_original"], figures["only_reordered"], figures["mcnemar_p"], figures["abstentions"])
    if outputs.judge_pairs is not None:
        _write_parquet(pairs, outputs.judge_pairs)
    if outputs.judge_summary is not None:
        with atomic_write(outputs.judge_summary) as handle:
            json.dump(figures, handle, indent=2, sort_keys=True)
            handle.write("\n")
    write_rag_table(table, dict(job.labels), dict(outputs.tables), job.alpha, job.correction,
                    consistency=dict(figures, judge_label=job.judge_label or settings["judge"]))


def _heatmap_record(query) -> dict:
    document = query.document
    return {"qid": query.qid, "query": query.query, "document": document.text, "head_count": len(query.head),
            # the study's length: whitespace words of title + " " + text
            "doc_words": len(f"{document.title} {document.text}".split())}


def _write_jsonl(path: str, records: list[dict]) -> None:
    with atomic_write(path) as handle:
        for record in records:
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")


def read_jsonl(path: str) -> list[dict]:
    with open(path, encoding="utf-8") as handle:
        return [json.loads(line) for line in handle if line.strip()]


# --- score ------------------------------------------------------------------------------------------------------


def sides(record: Mapping) -> tuple[tuple[str, str], tuple[str, str]]:
    """(query, document) of the pair's first and second side: one query for both, or one per side (literal)."""
    query_1 = record.get("query_1", record.get("query"))
    query_2 = record.get("query_2", record.get("query"))
    if query_1 is None or query_2 is None:
        raise InputError(f"probe pair {record.get('qid')!r} of {record.get('probe')!r}: no query")
    return (query_1, record["document_1"]), (query_2, record["document_2"])


def score(spec: Mapping, checkpoint: str | None, pairs: Mapping[str, str], heatmap: str | None,
          out: str, heatmap_out: str | None, threads: int | None = None) -> None:
    """Score every probe's pairs (`pairs`: probe -> pairs file) and, if asked, the heatmap's queries with the scorer
    `spec` (a `probes.scorers` entry) describes, on `threads` CPU threads (default: torch's)."""
    from posbias.scoring.scorers import build_scorer

    if threads:
        import torch

        torch.set_num_threads(threads)
    scorer = build_scorer(spec, checkpoint)
    frames = []
    for probe, path in pairs.items():
        records = read_jsonl(path)
        firsts, seconds = zip(*(sides(record) for record in records)) if records else ((), ())
        scores = scorer.score([*firsts, *seconds])
        truncated = scorer.truncated([d for _, d in (*firsts, *seconds)])
        n = len(records)
        frames.append(pd.DataFrame({
            "probe": probe, "condition": [r.get("condition", "") for r in records], "qid": [r["qid"] for r in records],
            "score_1": scores[:n], "score_2": scores[n:], "truncated_1": truncated[:n], "truncated_2": truncated[n:]}))
        cut = int((truncated[:n] | truncated[n:]).sum())
        log.info("%s: scored %d pairs; %d with a document cut off", probe, n, cut)
    _write_parquet(pd.concat(frames, ignore_index=True), out)
    if heatmap is not None and heatmap_out is not None:
        records = read_jsonl(heatmap)
        values = scorer.score([(r["query"], r["document"]) for r in records])
        frame = pd.DataFrame({key: [r[key] for r in records] for key in ("qid", "head_count", "doc_words")})
        _write_parquet(frame.assign(score=values), heatmap_out)


def _write_parquet(frame: pd.DataFrame, path: str) -> None:
    with atomic_write(path, "wb") as handle:
        frame.to_parquet(handle, index=False)


# --- report -----------------------------------------------------------------------------------------------------


TABLE, OTHER = "table", "literal"  # families p is corrected over, besides each scorer's sweep ("sweep <scorer>")


def statistics(scores: Mapping[str, str], correction: str) -> pd.DataFrame:
    """One row per (probe, condition, scorer) with the paired statistics of score_1 against score_2 and how many
    pairs had a document the scorer cut off.

    p is corrected (`correction`) within families: the tests the probe table shows (one per probe and scorer), each
    scorer's sweep positions (k against k = 1: the same tests and family as the sensitivity table's, so a place is
    a significant drop in both or in neither), and the other literal conditions; the table's markers do not depend
    on how many sweep positions were run. The `family` column names each row's.
    """
    from posbias.probes.report import COLUMNS
    from posbias.stats.document_pairs import correct_together, probe_statistic

    shown = {(column.probe, column.condition) for column in COLUMNS}
    keys, found, cut = [], [], []
    for scorer, path in scores.items():
        frame = pd.read_parquet(path)
        for (probe, condition), group in frame.groupby(["probe", "condition"], sort=False):
            keys.append((probe, condition, scorer))
            found.append(probe_statistic(group["score_1"].to_numpy(), group["score_2"].to_numpy()))
            cut.append(int((group["truncated_1"] | group["truncated_2"]).sum()))
    families = [TABLE if (probe, condition) in shown else f"{SWEEP} {scorer}" if probe == SWEEP else OTHER
                for probe, condition, scorer in keys]
    for family in dict.fromkeys(families):
        members = [i for i, name in enumerate(families) if name == family]
        for i, corrected in zip(members, correct_together([found[i] for i in members], correction)):
            found[i] = corrected
    return pd.DataFrame([{"probe": p, "condition": c, "scorer": s, **stat.to_dict(), "family": family,
                          "truncated_pairs": t}
                         for (p, c, s), stat, family, t in zip(keys, found, families, cut)])


def report(job: ReportJob) -> None:
    """The probe table (tex, csv, md, html) and figures (sweep, heatmap, summary -> PNG and PDF paths) from every
    scorer's scores, and with `sensitivity` (the same four formats) the position sweep's metric suite per scorer."""
    from posbias.probes import report as render

    scores, labels, correction, alpha = job.scores, job.labels, job.correction, job.alpha
    tables, figures, sensitivity, heatmap = job.tables, job.figures, job.sensitivity, job.heatmap
    summary = statistics(scores, correction)
    with open(job.query_table, encoding="utf-8") as handle:
        log.info("query table and candidate pools: %s", handle.read().strip())
    render.write_probe_table(summary, dict(labels), alpha, correction, dict(tables))
    if "sweep" in figures:
        render.sweep_figure(summary, dict(labels), figures["sweep"])
    if sensitivity:
        from posbias.probes.stats import sweep_sensitivity

        table = sweep_sensitivity({scorer: pd.read_parquet(path) for scorer, path in scores.items()}, correction,
                                  alpha)
        render.write_sensitivity_table(table, dict(labels), correction, alpha, dict(sensitivity))
    frame = pd.concat([pd.read_parquet(path).assign(scorer=scorer) for scorer, path in job.heatmaps.items()],
                      ignore_index=True)
    render.heatmap_figure(frame, dict(labels), figures["heatmap"], head_count_bins=heatmap["head_count_bins"],
                          length_bins=heatmap["length_bins"])
    render.summary_figure(summary, dict(labels), figures["summary"])
    for row in summary[summary["family"] == TABLE].itertuples():
        log.info("%s %s %s: t = %s, win rate %.2f", row.scorer, row.probe, row.condition, row.t, row.win_rate)
