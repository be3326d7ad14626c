"""The batteries of position tests, chosen by what the model can do (`posbias.audit.spec.CAPABILITIES`):

- `sweep` (pair scorers: rankers and retrievers): the needle at `n_positions` places of a haystack twice the
  model's window (`posbias.audit.haystack`); per question and position the reciprocal rank of the needle's document
  among it and the distractors (ties: the mean over the tied orders, so a constant score earns what chance does).
  `source: {queries, qrels, passages, pool_size}` takes questions, needles and haystack from a passage collection
  (MS MARCO passages, the FarRelevant builder's) instead of the embedded world;
- `probes` (pair scorers): the position probes of the bias-probes study on its embedded Re-DocRED world: the
  evidence sentence inserted at k = 1..positions of the other sentences, the score at each k (`posbias.probes`),
  and the first-versus-last paired test. `source: {redocred: FILE}` reads a Re-DocRED file (dev_revised.json);
- `reader` (readers): Lost in the Middle's question answering with the gold document at each of k positions;
  per question and position whether the answer holds a gold answer (best-subspan exact match). `source: {qa:
  FILE}` reads retrieval results in the Lost-in-the-Middle authors' format (NQ-open with Contriever's passages);
- `order` (listwise rerankers): the gold document entering RankGPT's list at each input position; per question and
  position the reciprocal rank of the gold document in the output (`source` as the sweep's).

Every battery ends in one value per (unit, position), and the same metric suite makes the curve and its summary
(`posbias.stats.position_curve`): position 0 (the first place, where a truncating model reads) is the reference.
"""

from __future__ import annotations

import copy
import logging
import math
from dataclasses import dataclass, field
from typing import Mapping

import numpy as np
import pandas as pd

from posbias.errors import InputError
from posbias.stats.position_curve import curve_summary, position_curve

log = logging.getLogger(__name__)

BATTERIES = {"pairs": ("sweep", "probes"), "reader": ("reader",), "list": ("order",)}
DEFAULTS = {
    # `source`: null for the embedded data, else the real files (see each battery)
    "sweep": {"n_queries": 12, "n_positions": 6, "n_distractors": 4, "doc_tokens": None, "min_doc_tokens": 96,
              "max_doc_tokens": 1024, "seed": 0, "source": None},
    "probes": {"n_documents": 120, "n": 16, "positions": 8, "rest": "paper", "seed": 0, "source": None},
    "reader": {"n_questions": 12, "n_documents": 5, "max_new_tokens": 24, "source": None},
    "order": {"n_queries": 12, "n_candidates": 5, "source": None},
    # The randomisation (sign-flip) test: a reciprocal rank or a raw score is far from normal, and a drop that
    # every unit shows alike (a deterministic model) has no variance for a t-test to divide by.
    "statistics": {"test": "randomisation", "correction": "holm", "alpha": 0.05, "confidence": 0.95,
                   "n_resamples": 1000, "seed": 0},
}
METRICS = {"sweep": "MRR", "probes": "score", "reader": "accuracy", "order": "MRR"}


def settings_with(overrides: Mapping | None) -> dict:
    """The battery defaults with `overrides` (`{battery: {key: value}}`) applied; unknown keys are refused."""
    merged = copy.deepcopy(DEFAULTS)
    for battery, values in (overrides or {}).items():
        if battery not in merged:
            raise InputError(f"audit settings: unknown battery {battery!r}; known: {', '.join(merged)}")
        unknown = sorted(set(values or {}) - set(merged[battery]))
        if unknown:
            raise InputError(f"audit settings.{battery}: unknown keys {unknown}; known: {sorted(merged[battery])}")
        merged[battery].update(values or {})
    return merged


@dataclass
class BatteryResult:
    battery: str
    metric: str
    values: pd.DataFrame  # unit, position, value (+ the battery's own columns, e.g. tokens)
    curve: pd.DataFrame = field(default=None)
    summary: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)  # battery-specific figures (the first-last probe's paired test)


def summarise(result: BatteryResult, statistics: Mapping, window: int | None = None,
              test: str | None = None) -> BatteryResult:
    """The curve and its summary from the result's values; where the values carry `tokens` (a position's start in
    the model's tokens), the reach is also given in tokens (the mean start at the reach position) and as a
    fraction of the model's `window`."""
    stats = dict(statistics)
    curve = position_curve(result.values, test=test or stats["test"], correction=stats["correction"],
                           alpha=stats["alpha"], confidence=stats["confidence"], n_resamples=stats["n_resamples"],
                           seed=stats["seed"])
    summary = curve_summary(curve)
    if "tokens" in result.values:
        tokens = result.values.groupby("position")["tokens"].mean()
        curve["tokens"] = curve["position"].map(tokens)
        summary["reach_tokens"] = float(tokens[summary["reach"]])
        summary["reach_fraction"] = summary["reach_tokens"] / window if window else math.nan
    result.curve, result.summary = curve, summary
    return result


def expected_reciprocal_rank(target: float, others: np.ndarray) -> float:
    """1/rank of `target` among `others`, averaged over every order of the scores tied with it."""
    higher, tied = int(np.sum(others > target)), int(np.sum(others == target))
    return float(np.mean([1.0 / (higher + j) for j in range(1, tied + 2)]))


def default_doc_tokens(window: int | None, settings: Mapping) -> int:
    """Twice the model's window (so half the positions lie beyond what a truncating model reads), within the
    battery's bounds."""
    if settings["doc_tokens"]:
        return int(settings["doc_tokens"])
    wanted = 2 * window if window else settings["max_doc_tokens"]
    return int(min(max(wanted, settings["min_doc_tokens"]), settings["max_doc_tokens"]))


def sweep_battery(model, settings: Mapping) -> BatteryResult:
    from posbias.audit.haystack import questions_and_pool, sweep_questions

    questions, pool = questions_and_pool(settings["source"])
    doc_tokens = default_doc_tokens(model.window, settings)
    swept = sweep_questions(questions, pool, model.count_tokens, settings["n_queries"], settings["n_positions"],
                            settings["n_distractors"], doc_tokens, settings["seed"])
    pairs, metas = [], []
    for i, item in enumerate(swept):
        common = {"n_items": len(item.variants), "example_index": i, "n_examples": len(swept), "first_item": ""}
        for variant in item.variants:
            pairs.append((item.question.text, variant.text))
            metas.append({**common, "answer": "yes", "gold_index": variant.position})
        for distractor in item.distractors:
            pairs.append((item.question.text, distractor))
            metas.append({**common, "answer": "no", "gold_index": None})
    log.info("sweep: %d questions x %d positions in documents of %d tokens, %d distractors each (%d pairs)",
             len(swept), settings["n_positions"], doc_tokens, settings["n_distractors"], len(pairs))
    scores = model.score(pairs, metas)
    rows, at = [], 0
    for item in swept:
        variant_scores = scores[at:at + len(item.variants)]
        others = scores[at + len(item.variants):at + len(item.variants) + len(item.distractors)]
        at += len(item.variants) + len(item.distractors)
        for variant, score in zip(item.variants, variant_scores):
            rows.append({"unit": item.question.qid, "position": variant.position, "tokens": variant.start,
                         "value": expected_reciprocal_rank(score, others), "score": float(score)})
    return BatteryResult("sweep", METRICS["sweep"], pd.DataFrame(rows),
                         extra={"doc_tokens": doc_tokens, "n_distractors": settings["n_distractors"],
                                "chance": float(np.mean([1 / r for r in range(1, settings["n_distractors"] + 2)]))})


def probes_battery(model, settings: Mapping) -> BatteryResult:
    from posbias.probes import position
    from posbias.probes.queries import build_query_table
    from posbias.probes.redocred import documents_from_records, read_redocred
    from posbias.probes.stats import probe_statistic
    from posbias.probes.synthetic import synthetic_redocred

    if settings["source"]:
        documents = read_redocred(settings["source"]["redocred"], "dev")
    else:
        records = synthetic_redocred(settings["seed"], settings["n_documents"])
        documents = documents_from_records(records, "synthetic", "<embedded Re-DocRED world>")
    queries = build_query_table(documents)
    moved = position.sweep(queries, settings["n"], settings["seed"], settings["positions"], settings["rest"])
    ends = position.first_last(queries, settings["n"], settings["seed"], settings["rest"])
    scores = model.score([(p.query, p.document_1) for p in moved] + [(p.query, d) for p in ends
                                                                     for d in (p.document_1, p.document_2)])
    rows = [{"unit": p.qid, "position": int(p.condition) - 1, "value": float(s)}
            for p, s in zip(moved, scores[:len(moved)])]
    first, last = scores[len(moved)::2], scores[len(moved) + 1::2]
    statistic = probe_statistic(first, last)
    return BatteryResult("probes", METRICS["probes"], pd.DataFrame(rows),
                         extra={"first_last": {"n": statistic.n, "t": statistic.t, "p": statistic.p,
                                               "mean_difference": statistic.mean_difference,
                                               "win_rate": statistic.win_rate}})


def reader_battery(language_model, settings: Mapping) -> BatteryResult:
    from posbias.audit.haystack import WORLD
    from posbias.litm.metric import best_subspan_em
    from posbias.litm.predict import qa_examples
    from posbias.litm.qa_builder import build_position
    from posbias.litm.qa_data import read_qa_records
    from posbias.litm.synthetic_qa import synthetic_qa_records
    from posbias.llm.types import Decoding

    k = settings["n_documents"]
    if settings["source"]:
        records = read_qa_records(settings["source"]["qa"], require_gold=True, limit=settings["n_questions"])
    else:
        records = synthetic_qa_records(WORLD, settings["n_questions"])
    decoding = Decoding(max_new_tokens=settings["max_new_tokens"])
    rows = []
    for gold_index in range(k):
        examples = qa_examples([build_position(record, k, gold_index) for record in records])
        completions = language_model.generate([example.request() for example in examples], decoding)
        rows += [{"unit": str(example.example_index), "position": gold_index,
                  "value": best_subspan_em(completion.text, example.record["answers"])}
                 for example, completion in zip(examples, completions)]
    return BatteryResult("reader", METRICS["reader"], pd.DataFrame(rows), extra={"n_documents": k})


def order_battery(language_model, settings: Mapping) -> BatteryResult:
    from posbias.audit.haystack import questions_and_pool
    from posbias.rankers.rankgpt import RankGPTSettings, rerank_query

    questions, _ = questions_and_pool(settings["source"])
    n, size = settings["n_queries"], settings["n_candidates"]
    if n + size - 1 > len(questions):
        raise InputError(f"audit order battery: n_queries + n_candidates - 1 = {n + size - 1} exceeds the world's "
                         f"{len(questions)} questions")
    others = questions[n:n + size - 1]  # each a fact about another entity
    texts = {f"d{i}": q.needle for i, q in enumerate(others)}
    rankgpt = RankGPTSettings(window=max(size, 2), step=1)
    rows = []
    for question in questions[:n]:
        texts["gold"] = question.needle
        for position in range(size):
            order = [f"d{i}" for i in range(size - 1)]
            order.insert(position, "gold")
            out, _ = rerank_query(language_model, f"{question.qid}@{position}", question.text, order,
                                  texts.__getitem__, rankgpt)
            rows.append({"unit": question.qid, "position": position, "value": 1.0 / (out.index("gold") + 1)})
    return BatteryResult("order", METRICS["order"], pd.DataFrame(rows), extra={"n_candidates": size})
