"""Pipeline steps of the first-relevant-position analysis (the long-document study's appendix B.4, Figures 1
and 7; `posbias.positions`): one job per query set locates the first relevant passage in each relevant
document, by approximate passage matching (sparse labels) or by judging chunks with a language model (dense
labels); one report job writes the table of shares, the figures, and (embedded collection) the agreement with
the generator's known offsets.

Files:
- `results/positions/{set}.tsv`: one row per (query, document), `posbias.positions.shares` columns plus the
  path's own (sparse: the passage, stage, ratio and character offset of the earliest match; dense: the
  document's grade, its chunks, the first relevant chunk and how many answers were unparseable);
- `results/positions/{set}.json`: counts (queries, pairs, matches by stage, judge calls, unparseable answers);
  a dense set's `consistency`: each judge's position consistency on the order check's sample
  (`posbias.positions.order_check`);
- `results/positions/{set}.judgments.parquet` (dense): every chunk's prompt-free record: its first token,
  tokens, the judge's answer and the grade read from it;
- `results/positions/{set}.consistency.parquet` (dense): the order check's pairs, one row per judge and sampled
  chunk: its answer and grade as written and with its sentences reversed (no rows when the check is off).
"""

from __future__ import annotations

import json
import logging
import time
from typing import Mapping, Sequence

import pandas as pd

from posbias.data.first_relevant import ROW_COLUMNS, read_rows
from posbias.io import atomic_write, read_documents, read_qrels, read_queries
from posbias.positions.jobs import DenseJob, ReportJob, SparseJob

log = logging.getLogger(__name__)

SPARSE, DENSE = "sparse", "dense"


def _write_rows(rows: list[dict], extra: tuple[str, ...], out: str) -> pd.DataFrame:
    frame = pd.DataFrame(rows, columns=[*ROW_COLUMNS, *extra])
    with atomic_write(out) as handle:
        frame.to_csv(handle, sep="\t", index=False)
    return frame


def _write_json(data: Mapping, out: str) -> None:
    with atomic_write(out) as handle:
        json.dump(dict(data), handle, indent=2, sort_keys=True)
        handle.write("\n")


def _missing_documents(wanted: set[str], found: Mapping[str, str], docs: str) -> None:
    lost = sorted(wanted - set(found))
    if lost:
        log.warning("%d documents are not in %s and are left out (first: %s)", len(lost), docs, lost[:3])


# --- sparse labels: passages matched to documents ---------------------------------------------------------------


def _searcher(index: str | None, retriever: Mapping | None, depth: int, threads: int):
    """{passage id: text} -> {passage id: top-`depth` document ids} with Lucene BM25, or None without an index."""
    if not index or not depth:
        return None

    def search(passages: dict[str, str]) -> dict[str, list[str]]:
        from posbias.retrieval.bm25 import search as bm25

        run = bm25(index, passages, depth, retriever["k1"], retriever["b"], threads)
        return {pid: sorted(scores, key=lambda d: -scores[d]) for pid, scores in run.items()}

    return search


def sparse(job: SparseJob) -> None:
    """Locate each query's relevant passages in its relevant documents and in the BM25 top-k of each passage
    (`job.spec`: the set's `positions.sets` entry, its `sample` and `seed`)."""
    from posbias.backbones import token_counter
    from posbias.positions import candidates as cands
    from posbias.positions.matching import Settings, match, normalise
    from posbias.positions.offsets import TokenOffsets
    from posbias.positions.shares import length_bin, position_bin

    settings, docs, passages = job.settings, job.inputs.docs, job.passages
    matching, bin_tokens = settings["matching"], settings["bin_tokens"]
    doc_queries = read_queries(job.inputs.queries)
    qids = (cands.shared_queries(doc_queries, read_queries(job.passage_queries)) if job.passage_queries
            else list(doc_queries))
    qids = cands.sample_queries(qids, job.spec.get("sample"), job.spec.get("seed", 0))
    doc_qrels, p_qrels = read_qrels(job.inputs.qrels), read_qrels(job.passage_qrels)
    wanted = {p for q in qids for p in cands.positives(p_qrels, q)}
    texts = read_documents(passages, keep=wanted)
    _missing_documents(wanted, texts, passages)
    search = _searcher(job.index, job.retriever, matching["bm25_depth"], job.threads)
    items = cands.build(qids, doc_qrels, p_qrels, search, texts)
    needed = {d for item in items for _, d in item.pairs()}
    documents = read_documents(docs, keep=needed)
    _missing_documents(needed, documents, docs)
    log.info("%d queries (%d in the query set), %d passages, %d candidate pairs over %d documents", len(qids),
             len(doc_queries), len(texts), sum(len(item.pairs()) for item in items), len(documents))
    count = token_counter(settings["tokenizer"])
    options = Settings(matching["substring_min"], matching["subsequence_min"], matching["window"], matching["step"])
    normalised = {pid: normalise(text) for pid, text in texts.items()}
    offsets, norm_docs, rows, stages = {}, {}, [], {"substring": 0, "subsequence": 0, "none": 0}
    started = time.perf_counter()
    for item in items:
        best: dict[str, tuple] = {}  # document -> (token position, passage, match) of the earliest match
        for pid, doc_id in item.pairs():
            if doc_id not in documents:
                continue
            if doc_id not in norm_docs:
                norm_docs[doc_id] = normalise(documents[doc_id])
                offsets[doc_id] = TokenOffsets(documents[doc_id], count)
            found = match(normalised[pid], norm_docs[doc_id], options)
            stages[found.stage if found else "none"] += 1
            if found is None:
                continue
            position = offsets[doc_id].at(found.start)
            if doc_id not in best or position < best[doc_id][0]:
                best[doc_id] = (position, pid, found)
        for doc_id in dict.fromkeys([*item.judged, *best]):
            if doc_id not in documents:
                continue
            tokens = offsets[doc_id].total if doc_id in offsets else TokenOffsets(documents[doc_id], count).total
            position, pid, found = best.get(doc_id, (-1, "", None))
            rows.append({"kind": SPARSE, "qid": item.qid, "doc_id": doc_id,
                         "source": "judged" if doc_id in item.judged else "retrieved", "position": position,
                         "position_bin": position_bin(position, bin_tokens), "doc_tokens": tokens,
                         "length_bin": length_bin(tokens, bin_tokens), "passage_id": pid,
                         "stage": found.stage if found else "", "ratio": round(found.ratio, 4) if found else "",
                         "char_start": found.start if found else -1})
    seconds = time.perf_counter() - started
    frame = _write_rows(rows, ("passage_id", "stage", "ratio", "char_start"), job.outputs.rows)
    located = frame[frame["position_bin"] >= 0]
    summary = {"kind": SPARSE, "queries": len(qids), "documents": len(frame), "located": len(located),
               "matched_queries": int(located["qid"].nunique()), "pair_matches": stages,
               "matching_seconds": round(seconds, 2)}
    _write_json(summary, job.outputs.summary)
    log.info("matched %d of %d candidate pairs (%s) in %.1f s; %d of %d queries located", sum(stages.values())
             - stages["none"], sum(stages.values()), stages, seconds, summary["matched_queries"], len(qids))


# --- dense labels: chunks judged by a language model ------------------------------------------------------------


def dense(job: DenseJob) -> None:
    """Judge the chunks of the first `spec["pairs"]` positive (query, document) pairs with the job's judge through
    its response cache. Then the order check (`settings["dense"]["consistency"]`; none without it): the set's judge
    and the job's `order_judges` judge a sample of the chunks with their sentences reversed; the pairs go to
    `outputs.consistency`, each judge's figures into the summary."""
    from posbias.backbones import token_counter
    from posbias.llm.generate import open_model
    from posbias.llm.types import Decoding, Request
    from posbias.positions import judging, order_check
    from posbias.positions.chunks import chunk
    from posbias.positions.pairs import positive_pairs
    from posbias.positions.shares import length_bin

    spec, settings, docs = job.spec, job.settings, job.inputs.docs
    judge, judge_name, cache = job.judge.model, job.judge.name, job.judge.cache
    chunking, bin_tokens = settings["dense"], settings["bin_tokens"]
    texts, judged = read_queries(job.inputs.queries), read_qrels(job.inputs.qrels)
    unknown = sorted(q for q in judged if q not in texts)
    if unknown:
        log.warning("%d judged queries have no text and are left out (first: %s)", len(unknown), unknown[:3])
    pairs = positive_pairs({q: g for q, g in judged.items() if q in texts}, spec.get("pairs"), spec.get("seed", 0))
    documents = read_documents(docs, keep={d for _, d in pairs})
    _missing_documents({d for _, d in pairs}, documents, docs)
    pairs = [(q, d) for q, d in pairs if d in documents]
    oracle = _oracle_passages(job.passages, job.passage_qrels, {q for q, _ in pairs})
    count = token_counter(settings["tokenizer"])
    chunked, requests, judged_chunks = {}, [], []
    for qid, doc_id in pairs:
        pieces = chunk(documents[doc_id], chunking["chunk_tokens"], chunking["max_chunks"], count)
        chunked[(qid, doc_id)] = pieces
        items = judging.chunk_requests(texts[qid], [p.text for p in pieces], oracle.get(qid) if oracle else None)
        requests += [Request(prompt=prompt, meta=meta) for prompt, meta in items]
        judged_chunks += [order_check.Chunk(qid, doc_id, i, texts[qid], piece.text, meta)
                          for i, (piece, (_, meta)) in enumerate(zip(pieces, items))]
    log.info("%d pairs of %d queries, %d chunks to judge with %s", len(pairs), len({q for q, _ in pairs}),
             len(requests), judge_name)
    model = open_model(judge, cache["dir"], cache["mode"], what=f"llm.models.{judge_name}")
    decoding = Decoding(max_new_tokens=chunking["max_new_tokens"])
    started = time.perf_counter()
    completions = model.generate(requests, decoding)
    seconds = time.perf_counter() - started
    answers = iter(completions)
    rows, records, unparseable = [], [], 0
    for qid, doc_id in pairs:
        pieces = chunked[(qid, doc_id)]
        said = [next(answers) for _ in pieces]
        judgments = judging.read_judgments([c.text for c in said])
        first = judging.first_relevant(judgments)
        missing = sum(j.grade is None for j in judgments)
        unparseable += missing
        tokens = count(documents[doc_id])
        rows.append({"kind": DENSE, "qid": qid, "doc_id": doc_id, "source": "judged",
                     "position": pieces[first].start_token if first >= 0 else -1, "position_bin": first,
                     "doc_tokens": tokens, "length_bin": length_bin(tokens, bin_tokens, chunking["length_slack"]),
                     "grade": judged[qid][doc_id], "chunks": len(pieces), "first_chunk": first,
                     "unparseable": missing})
        records += [{"qid": qid, "doc_id": doc_id, "chunk": j.chunk, "start_token": p.start_token, "tokens": p.tokens,
                     "answer": j.answer, "grade": j.grade, "cache_hit": c.cache_hit}
                    for j, p, c in zip(judgments, pieces, said)]
    frame = _write_rows(rows, ("grade", "chunks", "first_chunk", "unparseable"), job.outputs.rows)
    table = pd.DataFrame(records, columns=["qid", "doc_id", "chunk", "start_token", "tokens", "answer", "grade",
                                           "cache_hit"]).astype({"grade": "Int64"})
    with atomic_write(job.outputs.judgments, "wb") as handle:
        table.to_parquet(handle, index=False)
    hits = int(table["cache_hit"].sum()) if len(table) else 0
    located = frame[frame["position_bin"] >= 0]
    check = chunking.get("consistency") or {}
    consistency, checked = _order_check(check, judged_chunks, [c.text for c in completions], model, judge_name,
                                        {name: spec for name, spec in job.order_judges.items()
                                         if name != judge_name}, cache, decoding)
    if job.outputs.consistency is not None:
        with atomic_write(job.outputs.consistency, "wb") as handle:
            checked.to_parquet(handle, index=False)
    summary = {"kind": DENSE, "judge": judge_name, "queries": len({q for q, _ in pairs}), "documents": len(frame),
               "located": len(located), "matched_queries": int(located["qid"].nunique()),
               "judge_calls": len(table), "cache_hits": hits, "unparseable": unparseable,
               "judge_seconds": round(seconds, 2), "consistency": consistency}
    _write_json(summary, job.outputs.summary)
    computed = len(table) - hits
    log.info("%d judgments (%d replayed from the cache, %d computed in %.1f s%s); %d unparseable; a relevant "
             "chunk in %d of %d documents", len(table), hits, computed, seconds,
             f", {computed / seconds:.2f} calls/s" if computed and seconds else "", unparseable, len(located),
             len(frame))
    if len(table) and unparseable == len(table):
        log.warning("no answer of %s held a grade (0-3 after '##final score:'): every document counts as having "
                    "no relevant chunk", judge_name)


def _order_check(check: Mapping, chunks: list, answers: list[str], model, judge_name: str,
                 others: Mapping[str, Mapping], cache: Mapping, decoding) -> tuple[dict, pd.DataFrame]:
    """The order check (`posbias.positions.order_check`) of the set's judge (`model`, whose answers to `chunks`
    are `answers`) and of `others`: {judge: its figures}, and every judge's pairs."""
    from posbias.llm.generate import open_model
    from posbias.llm.types import ORIGINAL_ORDER, Request
    from posbias.positions import order_check

    sample, eligible = order_check.draw(chunks, check.get("sample", 0), check.get("seed", 0))
    results, frames = {}, []
    if not sample:
        if check.get("sample"):
            log.warning("order check: no judged chunk has two sentences to reorder; nothing to check")
        return results, order_check.pairs(judge_name, [], [], [])
    for name in [judge_name, *others]:
        asked = model if name == judge_name else open_model(others[name], cache["dir"], cache["mode"],
                                                             what=f"llm.models.{name}")
        todo = [] if name == judge_name else [ORIGINAL_ORDER]  # the set's judge keeps its verdicts from above
        todo.append(order_check.REVERSED)
        started = time.perf_counter()
        said = {order: asked.generate([Request(prompt=p, meta=m) for p, m in order_check.requests(sample, order)],
                                      decoding) for order in todo}
        seconds = time.perf_counter() - started
        original = ([c.text for c in said[ORIGINAL_ORDER]] if ORIGINAL_ORDER in said
                    else [answers[each.index] for each in sample])
        pairs = order_check.pairs(name, sample, original, [c.text for c in said[order_check.REVERSED]])
        calls = [c for completions in said.values() for c in completions]
        hits = sum(c.cache_hit for c in calls)
        results[name] = {**order_check.summary(pairs, eligible), "calls": len(calls), "cache_hits": hits,
                         "seconds": round(seconds, 2)}
        frames.append(pairs)
        found = results[name]
        log.info("order check of %s: %d of %d eligible chunks (two or more sentences) judged again reversed; same "
                 "relevance decision %d of %d graded in at least one order, same grade %d of %d graded in both, "
                 "same answer %d of %d; relevant only as written %d, only reversed %d (%s: p %s); %d "
                 "unparseable in either order, %d in both; %d calls (%d replayed) in %.1f s", name, found["sampled"],
                 eligible, found["agree"], found["n"], found["same_grade"], found["graded"], found["same_answer"],
                 found["sampled"], found["only_original"], found["only_reordered"], found["test"],
                 "none" if found["mcnemar_p"] is None else f"{found['mcnemar_p']:.3g}", found["unparseable"],
                 found["no_grade"], len(calls), hits, seconds)
    return results, pd.concat(frames, ignore_index=True)


def _oracle_passages(passages: str | None, passage_qrels: str | None, qids: set[str]) -> dict[str, list[str]]:
    if not passages or not passage_qrels:
        return {}
    qrels = read_qrels(passage_qrels)
    wanted = {p for q in qids for p, g in qrels.get(q, {}).items() if g > 0}
    texts = read_documents(passages, keep=wanted)
    return {q: [texts[p] for p, g in qrels.get(q, {}).items() if g > 0 and p in texts] for q in qids}


# --- report -----------------------------------------------------------------------------------------------------


def report(job: ReportJob) -> None:
    """The table of shares (with each dense set's judge's order consistency beside its verdicts), Figures 7 (every
    group) and 1, the agreement of the sets with a truth file with the known offsets (an empty table when there is
    none), and the judges' order check table."""
    from posbias.positions import report as draw
    from posbias.positions.shares import share_table
    from posbias.data.answer_passages import agreement, read_truth
    from posbias.reporting.render import Table, write_tables

    settings, labels, groups, figures = job.settings, job.labels, job.groups, job.figures
    frames = {name: read_rows(path) for name, path in job.rows.items()}
    counts = {}
    for name, path in job.summaries.items():
        with open(path, encoding="utf-8") as handle:
            counts[name] = json.load(handle)
    table = share_table(frames, {n: c["queries"] for n, c in counts.items()}, labels,
                        {n: c.get("unparseable", 0) for n, c in counts.items()})
    for row in table.itertuples():
        log.info("%s: %d documents, first relevant in bin 0 %.1f %%, bin 1 %.1f %%, later %.1f %%, none %.1f %%; "
                 "coverage %.1f %% of %d queries", row.set, row.documents, 100 * row.share_bin0,
                 100 * row.share_bin1, 100 * row.share_bin2_plus, 100 * row.share_none, 100 * row.coverage,
                 row.queries)
    own = {name: counts[name].get("consistency", {}).get(counts[name].get("judge"), {}) for name in frames}
    table = table.assign(**{f"order_{key}": [own[name].get(key) for name in table["set"]]
                            for key in ("n", "agreement", "ci_low", "ci_high", "mcnemar_p")})
    bin_tokens = settings["bin_tokens"]
    header, body = _table_cells(table, counts, own)
    caption = (f"Where the first relevant passage sits: the share of relevant documents whose first relevant "
               f"passage (sparse labels: matched MS MARCO-style passages) or first relevant chunk (dense labels: "
               f"chunks of at most {settings['dense']['chunk_tokens']} tokens judged by a language model with "
               f"UMBRELA's prompt, grade 1 or more) starts in the first, second or a later bin of {bin_tokens} "
               f"tokens, or nowhere (no match; no chunk judged relevant). Coverage: queries with at least one "
               f"located position. Judge consistent: the share of a sample of the judged chunks (two or more "
               f"sentences, graded in at least one order) that the set's judge calls relevant or not alike with the "
               f"chunk's sentences reversed, 95% Wilson interval in brackets (the judges table has the rest).")
    write_tables(dict(job.tables), table, Table(header, body, caption, "tab:positions"))
    draw.figure(_with_kind(frames, counts), groups, list(groups), bin_tokens, settings["max_bin"], figures["figure7"])
    draw.figure(_with_kind(frames, counts), groups, job.figure1, bin_tokens, settings["max_bin"], figures["figure1"])
    parts = [agreement(frames[name], read_truth(path), bin_tokens, name) for name, path in job.truth.items()]
    result = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(
        columns=["set", "truth_pairs", "estimated_pairs", "located", "located_share", "bin_agreement",
                 "mean_abs_token_error", "exact_position_share", "other_documents_located"])
    for row in result.itertuples():
        log.info("agreement with the generator's offsets, %s: %d of %d pairs located; bin agrees for %.1f %% of "
                 "them, mean absolute error %.2f tokens; %d other documents located", row.set, row.located,
                 row.truth_pairs, 100 * row.bin_agreement, row.mean_abs_token_error, row.other_documents_located)
    with atomic_write(job.agreement) as handle:
        result.to_csv(handle, index=False)
    if job.judge_tables:
        _judges_table(counts, labels, job.judge_labels, job.oracle_judges, job.judge_tables)


JUDGE_COLUMNS = ("set", "label", "judge", "judge_label", "eligible", "sampled", "n", "agree", "agreement", "ci_low",
                 "ci_high", "positive_original", "positive_reordered", "only_original", "only_reordered", "mcnemar_p",
                 "clusters", "graded", "same_grade", "grade_agreement", "same_answer", "answer_agreement",
                 "unparseable", "no_grade", "calls", "cache_hits")  # no seconds: a measured time would make every
                                                                    # run's table differ (the log line and the set's
                                                                    # counts JSON keep them)


def _judges_table(counts: Mapping[str, Mapping], labels: Mapping[str, str], judge_labels: Mapping[str, str],
                  oracle_judges: Sequence[str], outputs: Mapping[str, str]) -> None:
    """One row per dense set and judge of its order check (`posbias.positions.order_check`)."""
    from posbias.reporting.consistency import agreement_text, p_text
    from posbias.reporting.render import MISSING, Table, is_missing, percent, write_tables

    rows = [{"set": name, "label": labels.get(name, name), "judge": judge,
             "judge_label": judge_labels.get(judge, judge), **figures}
            for name, count in counts.items() for judge, figures in count.get("consistency", {}).items()]
    frame = pd.DataFrame(rows, columns=list(JUDGE_COLUMNS))
    header = ["Query set", "Judge", "Chunks", "Same decision", "Relevant: as written / reversed",
              "Sign-flip p (clusters)", "Same grade", "Same answer", "Unparseable"]
    body = [[row["label"], row["judge_label"], f"{row['sampled']} of {row['eligible']}", agreement_text(row),
             f"{row['positive_original']} / {row['positive_reordered']}",
             p_text(row) if is_missing(row["mcnemar_p"]) else f"{p_text(row)} ({row['clusters']})",
             f"{percent(row['grade_agreement'])}% of {row['graded']}" if row["graded"] else MISSING,
             f"{percent(row['answer_agreement'])}%", f"{row['unparseable']} ({row['no_grade']} in both)"]
            for row in rows]
    built = sorted({judge_labels.get(j, j) for j in oracle_judges if (frame["judge"] == j).any()})
    oracle = (f" {', '.join(built)}: a mock that answers from the generator's truth, the same truth for a chunk in "
              f"either order, so its consistency is 1 by construction: its rows test the check's bookkeeping, not "
              f"a judge." if built else "")
    caption = ("The judges' own position bias (UMBRELA chunk grading): a seeded sample of the judged chunks with "
               "two or more sentences (Chunks: sampled of eligible), each judged again with its sentences in reverse "
               "order, the query and prompt unchanged. Same decision: relevant (grade 1 or more) or not in both "
               "orders, over the chunks graded in at least one order (an unparseable answer counting as not "
               "relevant, as the position estimate reads it; a chunk graded in neither order decided nothing and is "
               "left out, so a judge that never answers in UMBRELA's format shows –); 95% Wilson interval in "
               "brackets. Sign-flip p: the two-sided test of relevant as written against relevant reversed (does the "
               "judge favour one order?), clustered by document and query (the sampled chunks of one document "
               "judged for one query are one cluster; their number in parentheses): the sign-flip test of each "
               "cluster's net change, one test per row, uncorrected; no test where no chunk changed its decision. "
               "Same grade: among the chunks graded in both orders. Same answer: the identical answer text, of all "
               "sampled chunks, which shows order sensitivity even when no answer holds a grade. "
               f"Unparseable: chunks without a grade in either order (in both).{oracle}")
    if not rows:
        caption += " No dense set took the order check (positions.dense.consistency.sample: 0)."
    write_tables(dict(outputs), frame, Table(header, body, caption, "tab:positions-judges"))


def _with_kind(frames: Mapping[str, pd.DataFrame], counts: Mapping[str, Mapping]) -> dict[str, pd.DataFrame]:
    return {name: frame.assign(kind=counts[name]["kind"]) for name, frame in frames.items()}


def _table_cells(table: pd.DataFrame, counts: Mapping[str, Mapping],
                 own: Mapping[str, Mapping]) -> tuple[list[str], list[list[str]]]:
    from posbias.reporting.consistency import agreement_text

    header = ["Query set", "Labels", "Queries", "Coverage", "Documents", "Bin 0", "Bin 1", "Bin ≥ 2", "None",
              "Unparseable", "Judge consistent"]
    percent = lambda value: "–" if pd.isna(value) else f"{100 * value:.1f}%"  # noqa: E731
    body = [[row.label, counts[row.set]["kind"], str(row.queries), percent(row.coverage), str(row.documents),
             percent(row.share_bin0), percent(row.share_bin1), percent(row.share_bin2_plus), percent(row.share_none),
             str(row.unparseable_judgments) if counts[row.set]["kind"] == DENSE else "–",
             agreement_text(own[row.set])]
            for row in table.itertuples()]
    return header, body
