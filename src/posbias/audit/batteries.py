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
import functools
import logging
import math
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Mapping

import numpy as np

from posbias.errors import InputError

# pandas and the position curve (scipy.stats) are imported by the functions that use them: the config's check
# imports this module for its settings, in every Snakemake and posbias command (about 1 CPU second)
if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger(__name__)

# What each capability runs by default, and what it may be asked for besides (the depth x length grids cost a sweep
# per length: asked for by name)
BATTERIES = {"pairs": ("sweep", "probes"), "reader": ("reader",), "list": ("order",)}
OFFERED = {"pairs": ("sweep", "probes", "grid"), "reader": ("reader", "reader_grid"), "list": ("order",)}


# The sizing settings of a battery (`posbias.audit.sizing`): `detect`, the drop to find at 80% power in the metric's
# units (null: run the configured units as they are), and `max_units`, the most units sizing may ask for (null: all
# the battery's data hold)
SIZED = {"detect": None, "max_units": None}


DEPTHS = [0.0, 0.05, 0.1, 0.25, 0.5, 0.75, 0.9, 0.95, 1.0]  # denser near both ends, where the curves bend
DEFAULTS = {
    # `source`: null for the embedded data, else the real files (see each battery)
    "sweep": {"n_queries": 12, "n_positions": 6, "n_distractors": 4, "doc_tokens": None, "min_doc_tokens": 96,
              "max_doc_tokens": 1024, "seed": 0, "source": None, **SIZED},
    "probes": {"n_documents": 120, "n": 16, "positions": 8, "rest": "paper", "seed": 0, "source": None, **SIZED},
    # `arrange`: the context in retrieval order, or with the best documents at both ends ("ends": the
    # relevance_ordered_context mitigation, posbias.audit.mitigations)
    "reader": {"n_questions": 12, "n_documents": 5, "max_new_tokens": 24, "arrange": "retrieval", "source": None,
               **SIZED},
    # `window`/`step`: RankGPT's sliding windows (null: one window over the list; step: half the window);
    # `consistency_*`: permutation self-consistency (k = 1: off; posbias.rankers.listwise.aggregate)
    "order": {"n_queries": 12, "n_candidates": 5, "window": None, "step": None, "consistency_k": 1,
              "consistency_aggregate": "borda", "consistency_orders": "shuffles", "consistency_seed": 0,
              "source": None, **SIZED},
    "grid": {"n_queries": 8, "n_distractors": 4, "depths": DEPTHS, "window_multiples": [0.5, 1.0, 1.5, 2.0],
             "lengths": None, "min_doc_tokens": 48, "max_doc_tokens": 1024, "needles": "lexical", "seed": 0,
             "source": None, **SIZED},
    "reader_grid": {"n_questions": 8, "n_documents": [3, 5, 10], "depths": [0.0, 0.5, 1.0], "max_new_tokens": 24,
                    "arrange": "retrieval", "source": None, **SIZED},
    # The randomisation (sign-flip) test: a reciprocal rank or a raw score is far from normal, and a drop that
    # every unit shows alike (a deterministic model) has no variance for a t-test to divide by.
    "statistics": {"test": "randomisation", "correction": "holm", "alpha": 0.05, "confidence": 0.95,
                   "n_resamples": 1000, "seed": 0},
}
# A reader's chance floor: an exact-match answer is not guessed from a list of options, so a reader that reads
# nothing scores about 0 (what it knows without the documents is signal, measured from the floor up)
READER_CHANCE = 0.0
RATIO_SCALE = ("MRR", "accuracy")  # metrics with a true zero: PSI and the relative numbers mean something
GRID_BATTERIES = ("grid", "reader_grid")  # depth x length: a curve per length, a heatmap
METRICS = {"sweep": "MRR", "probes": "score", "reader": "accuracy", "order": "MRR", "grid": "MRR",
           "reader_grid": "accuracy"}


# What a `source` names, per battery (`pool_size` is optional, and `<key>_sha256` the sha256 of a file placed by
# hand: the reader's `qa_sha256`, which the battery checks); the grid also reads LongEmbed's needle and passkey
# sets, `{longembed: needle|passkey, ...}` (`posbias.audit.longembed.SOURCE_OPTIONS`)
SOURCE_KEYS = {"sweep": ("queries", "qrels", "passages"), "grid": ("queries", "qrels", "passages"),
               "order": ("queries", "qrels", "passages"), "probes": ("redocred",), "reader": ("qa",),
               "reader_grid": ("qa",)}


def source_files(source: Mapping | None) -> list[str]:
    """The local files a battery's `source` reads (the workflow's job inputs): every path it names, or for LongEmbed
    only its local `data_files` (a hub id is no file)."""
    from posbias.audit.longembed import is_longembed, source_inputs

    if not source:
        return []
    return source_inputs(source) if is_longembed(source) else [path for key, path in source.items()
                                                                if key != "pool_size" and not key.endswith("_sha256")]
CHOICES = {"test": ("t", "wilcoxon", "randomisation", "mcnemar"),
           "correction": ("none", "bonferroni", "holm", "fdr_bh"), "needles": ("lexical", "paraphrased"),
           "rest": ("paper", "authors"), "aggregate": ("max", "first"), "arrange": ("retrieval", "ends"),
           "consistency_aggregate": ("borda", "rrf"), "consistency_orders": ("shuffles", "rotations")}
# keys whose default is null: the type a value must have
NULLABLE = {"doc_tokens": int, "lengths": list, "window": int, "step": int, "detect": float, "max_units": int}
POSITIVE = ("detect", "max_units")  # keys whose value must be above 0


def settings_with(overrides: Mapping | None) -> dict:
    """The battery defaults with `overrides` (`{battery: {key: value}}`) applied; unknown keys, values of another
    type than the default's, unknown choices and malformed sources are one InputError naming the key."""
    merged = copy.deepcopy(DEFAULTS)
    if not isinstance(overrides or {}, Mapping):
        raise InputError("audit settings: expected a mapping {battery: {key: value}}")
    for battery, values in (overrides or {}).items():
        if battery not in merged:
            raise InputError(f"audit settings: unknown battery {battery!r}; known: {', '.join(merged)}")
        if not isinstance(values or {}, Mapping):
            raise InputError(f"audit settings.{battery}: expected a mapping of settings, got {values!r}")
        unknown = sorted(set(values or {}) - set(merged[battery]))
        if unknown:
            raise InputError(f"audit settings.{battery}: unknown keys {unknown}; known: {sorted(merged[battery])}")
        for key, value in (values or {}).items():
            _check_setting(battery, key, value, merged[battery][key])
        merged[battery].update(values or {})
    return merged


def _check_setting(battery: str, key: str, value, default) -> None:
    where = f"audit settings.{battery}.{key}"
    if key == "source":
        needed = SOURCE_KEYS[battery]
        if battery == "grid" and isinstance(value, Mapping) and "longembed" in value:  # LongEmbed's needle, passkey
            from posbias.audit.longembed import check_source

            return check_source(value, where)
        if value is not None and (not isinstance(value, Mapping) or set(needed) - set(value)):
            raise InputError(f"{where}: expected null or a mapping with {', '.join(needed)}, got {value!r}")
        return
    wanted = NULLABLE.get(key) or type(default)
    numeric = wanted in (int, float) and isinstance(value, (int, float)) and not isinstance(value, bool) and (
        wanted is float or isinstance(value, int))
    typed = wanted not in (int, float) and isinstance(value, wanted)
    if not (numeric or typed or (value is None and key in NULLABLE)):
        raise InputError(f"{where}: expected {wanted.__name__}{' or null' if key in NULLABLE else ''}, got {value!r}")
    if key in CHOICES and value not in CHOICES[key]:
        raise InputError(f"{where}: {value!r} is not one of {', '.join(CHOICES[key])}")
    if key in POSITIVE and value is not None and not value > 0:
        raise InputError(f"{where}: expected a number above 0, got {value!r}")


@dataclass
class BatteryResult:
    battery: str
    metric: str
    values: pd.DataFrame  # unit, position, value (+ the battery's own columns, e.g. tokens)
    curve: pd.DataFrame = field(default=None)
    summary: dict = field(default_factory=dict)
    extra: dict = field(default_factory=dict)  # battery-specific figures (the first-last probe's paired test)


def smallest_adjusted_p(test: str, n_units: int, n_tests: int) -> float:
    """The smallest p the curve's corrected tests can reach: 2 / 2^n for the sign-flip and the exact McNemar test
    over n units (all of them one way), times the tests of a curve (Holm's first step); a t-test has no floor."""
    return 0.0 if test == "t" else min(1.0, n_tests * 2.0 ** (1 - n_units))


def summarise(result: BatteryResult, statistics: Mapping, window: int | None = None,
              test: str | None = None) -> BatteryResult:
    """The curve and its summary from the result's values; where the values carry `tokens` (a position's start in
    the model's tokens), the reach is also given in tokens (the mean start at the reach position) and as a
    fraction of the model's `window`: where the needle ends at the reach position (none when nothing dropped in
    documents shorter than the window: the reach is then only where the document ends). `underpowered`: too few
    units for any drop to reach significance; `detectable_drop`: the drop below the first position, in the
    metric's units, that the curve's tests find with 80% power (`posbias.stats.power`; NaN when underpowered)."""
    from posbias.stats.position_curve import curve_summary, position_curve
    from posbias.stats.power import minimum_detectable_drop
    stats, test = dict(statistics), test or statistics["test"]
    curve = position_curve(result.values, test=test, correction=stats["correction"], alpha=stats["alpha"],
                           confidence=stats["confidence"], n_resamples=stats["n_resamples"], seed=stats["seed"],
                           ratio_scale=result.metric in RATIO_SCALE)
    # a grid's depths are denser near the ends: its middle is weighted by the depth each stands for
    depths = result.values.groupby("position")["depth"].first() if "depth" in result.values else None
    summary = curve_summary(curve, coordinates=depths, chance=result.extra.get("chance"))
    floor = smallest_adjusted_p(test, int(curve["n"].min()), len(curve) - 1)
    summary["underpowered"] = bool(floor >= stats["alpha"])
    summary["detectable_drop"] = minimum_detectable_drop(result.values, curve.attrs["reference"], stats["alpha"],
                                                         floor_p=floor, bounded=result.metric in RATIO_SCALE)
    if "tokens" in result.values:
        tokens = result.values.groupby("position")["tokens"].mean()
        curve["tokens"] = curve["position"].map(tokens)
        # the last token the model was shown to read: where the needle ends at the reach position
        summary["reach_tokens"] = float(result.values.groupby("position")["end"].mean()[summary["reach"]])
        length = result.values["length"].iloc[0] if "length" in result.values else result.extra.get("doc_tokens")
        short = summary["reach_censored"] and length and window and length < window
        summary["reach_fraction"] = summary["reach_tokens"] / window if window and not short else math.nan
    result.curve, result.summary = curve, summary
    return result


def battery_test(battery: str, statistics: Mapping) -> str:
    """The paired test of a battery's curve: a reader's right and wrong answers take the exact McNemar test, every
    other battery the configured `statistics.test`."""
    return "mcnemar" if battery.startswith("reader") else statistics["test"]


def summarise_result(result: BatteryResult, statistics: Mapping, window: int | None, test: str) -> BatteryResult:
    """The curve and summary of a battery's result: one curve, or a grid's curve per length."""
    return (summarise_grid if "length" in result.values else summarise)(result, statistics, window, test)


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


def chance(n_distractors: int) -> float:
    """The needle's expected reciprocal rank among `n_distractors` when the scores say nothing."""
    from posbias.sweep.stats import expected_random

    return expected_random({"needle": n_distractors + 1})[0]


def rank_swept(model, swept: list, extra: Mapping | None = None) -> list[dict]:
    """Score every variant and distractor of the swept questions in one call; a row per (question, variant): the
    needle's reciprocal rank among its question's distractors (`extra` joins each row)."""
    pairs, metas = [], []
    for i, item in enumerate(swept):
        common = {"n_items": len(item.variants), "example_index": i, "n_examples": len(swept), "first_item": ""}
        for variant in item.variants:
            pairs.append((item.question.text, variant.text))
            metas.append({**common, "answer": "yes", "gold_index": variant.position})
        for distractor in item.distractors:
            pairs.append((item.question.text, distractor))
            metas.append({**common, "answer": "no", "gold_index": None})
    scores = model.score(pairs, metas)
    rows, at = [], 0
    for item in swept:
        variant_scores = scores[at:at + len(item.variants)]
        others = scores[at + len(item.variants):at + len(item.variants) + len(item.distractors)]
        at += len(item.variants) + len(item.distractors)
        needle = model.count_tokens(item.question.needle)
        for variant, score in zip(item.variants, variant_scores):
            rows.append({"unit": item.question.qid, "position": variant.position, "tokens": variant.start,
                         "end": variant.start + needle, **(extra or {}),
                         "value": expected_reciprocal_rank(score, others), "score": float(score)})
    return rows


def sweep_battery(model, settings: Mapping) -> BatteryResult:
    import pandas as pd
    from posbias.audit.haystack import counted, questions_and_pool, sweep_questions

    questions, pool = questions_and_pool(settings["source"])
    doc_tokens = default_doc_tokens(model.window, settings)
    swept = sweep_questions(questions, pool, counted(model.count_tokens), settings["n_queries"],
                            settings["n_positions"], settings["n_distractors"], doc_tokens, settings["seed"])
    log.info("sweep: %d questions x %d positions in documents of %d tokens, %d distractors each", len(swept),
             settings["n_positions"], doc_tokens, settings["n_distractors"])
    return BatteryResult("sweep", METRICS["sweep"], pd.DataFrame(rank_swept(model, swept)),
                         extra={"doc_tokens": doc_tokens, "n_distractors": settings["n_distractors"],
                                "chance": chance(settings["n_distractors"])})


def grid_lengths(window: int | None, settings: Mapping) -> list[int]:
    """The grid's document lengths in the model's tokens: `lengths` as given, else `window_multiples` of the
    model's window (of `max_doc_tokens` for a model without a known window), each within the battery's bounds."""
    if settings["lengths"]:
        return sorted({int(n) for n in settings["lengths"]})
    base = window or settings["max_doc_tokens"] / max(settings["window_multiples"])
    return sorted({int(min(max(round(m * base), settings["min_doc_tokens"]), settings["max_doc_tokens"]))
                   for m in settings["window_multiples"]})


def grid_battery(model, settings: Mapping) -> BatteryResult:
    """The needle at each depth (a share of the document) in documents of each length: one sweep per length; on
    LongEmbed's needle or passkey set (`source: {longembed: ...}`), its own lengths and answers
    (`posbias.audit.longembed`)."""
    import pandas as pd
    from posbias.audit.haystack import counted, questions_and_pool, sweep_questions
    from posbias.audit.longembed import is_longembed, longembed_grid

    if is_longembed(settings["source"]):
        return longembed_grid(model, settings)
    questions, pool = questions_and_pool(settings["source"], settings["needles"])
    depths, rows = list(settings["depths"]), []
    lengths, count = grid_lengths(model.window, settings), counted(model.count_tokens)
    for doc_tokens in lengths:
        swept = sweep_questions(questions, pool, count, settings["n_queries"], len(depths),
                                settings["n_distractors"], doc_tokens, settings["seed"], depths)
        rows += [{**row, "depth": depths[row["position"]]}
                 for row in rank_swept(model, swept, {"length": doc_tokens})]
    log.info("grid: %d questions x %d depths x lengths %s tokens, %s needles", settings["n_queries"], len(depths),
             lengths, settings["needles"])
    return BatteryResult("grid", METRICS["grid"], pd.DataFrame(rows),
                         extra={"lengths": lengths, "depths": depths, "needles": settings["needles"],
                                "n_distractors": settings["n_distractors"],
                                "chance": chance(settings["n_distractors"])})


def probe_queries(settings: Mapping) -> list:
    """The probe battery's queries: its Re-DocRED `source` file's, or the embedded world's."""
    from posbias.probes.queries import build_query_table
    from posbias.probes.redocred import documents_from_records, read_redocred
    from posbias.probes.synthetic import synthetic_redocred

    if settings["source"]:
        documents = read_redocred(settings["source"]["redocred"], "dev")
    else:
        records = synthetic_redocred(settings["seed"], settings["n_documents"])
        documents = documents_from_records(records, "synthetic", "<embedded Re-DocRED world>")
    return build_query_table(documents)


def probes_battery(model, settings: Mapping) -> BatteryResult:
    import pandas as pd
    from posbias.probes import position
    from posbias.probes.stats import probe_statistic

    queries = probe_queries(settings)
    moved = position.sweep(queries, settings["n"], settings["seed"], settings["positions"], settings["rest"])
    ends = position.first_last(queries, settings["n"], settings["seed"], settings["rest"])
    # each pair's meta says where its evidence sits (the unit and position a mock model reads, as the sweep's do)
    order = {qid: i for i, qid in enumerate(dict.fromkeys(p.qid for p in moved + ends))}
    metas = [{"answer": "yes", "example_index": order[p.qid], "gold_index": int(p.condition) - 1,
              "n_items": settings["positions"]} for p in moved]
    metas += [{"answer": "yes", "example_index": order[p.qid], "gold_index": k, "n_items": 2} for p in ends
              for k in (0, 1)]
    scores = model.score([(p.query, p.document_1) for p in moved] + [(p.query, d) for p in ends
                                                                     for d in (p.document_1, p.document_2)], metas)
    rows = [{"unit": p.qid, "position": int(p.condition) - 1, "value": float(s)}
            for p, s in zip(moved, scores[:len(moved)])]
    first, last = scores[len(moved)::2], scores[len(moved) + 1::2]
    statistic = probe_statistic(first, last)
    return BatteryResult("probes", METRICS["probes"], pd.DataFrame(rows),
                         extra={"first_last": {"n": statistic.n, "t": statistic.t, "p": statistic.p,
                                               "mean_difference": statistic.mean_difference,
                                               "win_rate": statistic.win_rate}})


def reader_battery(language_model, settings: Mapping) -> BatteryResult:
    import pandas as pd
    from posbias.litm.metric import best_subspan_em
    from posbias.litm.predict import qa_examples
    from posbias.llm.types import Decoding

    k = settings["n_documents"]
    records = _reader_records(settings, k)
    decoding = Decoding(max_new_tokens=settings["max_new_tokens"])
    cells = [(gold_index, example) for gold_index in range(k) for example in
             qa_examples([_context(record, k, gold_index, settings["arrange"]) for record in records])]
    completions = _answers(language_model, [example for _, example in cells], decoding)
    rows = [{"unit": str(example.example_index), "position": gold_index,
             "value": best_subspan_em(completion.text, example.record["answers"])}
            for (gold_index, example), completion in zip(cells, completions, strict=True)]
    return BatteryResult("reader", METRICS["reader"], pd.DataFrame(rows),
                         extra={"n_documents": k, "arrange": settings["arrange"], "chance": READER_CHANCE,
                                **retrieved_gold_ranks(records, k)})


def retrieved_gold_ranks(records: list[dict], k: int) -> dict:
    """Where the retriever itself ranked an answer-bearing document among each question's first k: the share of
    questions at each rank (`gold_rank_shares`, over the `gold_rank_questions` that have one in the first k). The
    battery moves the gold document through every rank alike; these shares say how often a real context puts it
    at each, so a rearrangement of the context (the relevance-ordered mitigation) is judged where it matters
    (`posbias.audit.card.mitigation_frame`). Empty when no question's first k hold an answer."""
    ranks = [next((i for i, ctx in enumerate(record["ctxs"][:k]) if ctx.get("hasanswer")), None)
             for record in records]
    found = [rank for rank in ranks if rank is not None]
    if not found:
        return {}
    return {"gold_rank_shares": [found.count(rank) / len(found) for rank in range(k)],
            "gold_rank_questions": len(found)}


def order_battery(language_model, settings: Mapping) -> BatteryResult:
    """The gold document entering RankGPT's list at each input position (so, with sliding windows shorter than the
    list, in each window: `entered_window` counts them in the order they are ranked, from the back); with
    permutation self-consistency (`consistency_k` > 1) each list is ranked in k orders of its candidates and the
    rankings aggregated, the gold's reciprocal rank taken over tied aggregate scores as the sweep takes it."""
    import pandas as pd
    from posbias.audit.haystack import questions_and_pool
    from posbias.rankers.listwise.windows import sliding_windows
    from posbias.rankers.rankgpt import RankGPTSettings

    questions, _ = questions_and_pool(settings["source"])
    n, size = settings["n_queries"], settings["n_candidates"]
    if n + size - 1 > len(questions):
        raise InputError(f"audit order battery: n_queries + n_candidates - 1 = {n + size - 1} exceeds the world's "
                         f"{len(questions)} questions")
    window = max(min(settings["window"] or size, size), 2)
    rankgpt = RankGPTSettings(window=window, step=settings["step"] or max(window // 2, 1), rank_end=size)
    windows = sliding_windows(size, rankgpt.window, rankgpt.step, rankgpt.rank_end)
    others = questions[n:n + size - 1]  # each a fact about another entity
    texts = {f"d{i}": q.needle for i, q in enumerate(others)}
    rows, taus = [], {"reversed": [], "shuffled": []}
    for number, question in enumerate(questions[:n]):
        texts["gold"] = question.needle
        ranker = _ListRanker(language_model, question, texts, rankgpt, settings)
        outputs = {}
        for position in range(size):
            order = [f"d{i}" for i in range(size - 1)]
            order.insert(position, "gold")
            scores, calls = ranker.rank(order, str(position))
            outputs[position] = sorted(scores, key=lambda doc: (-scores[doc], doc))
            entered = next(i for i, (start, end) in enumerate(windows) if start <= position < end)
            rows.append({"unit": question.qid, "position": position, "entered_window": entered,
                         "value": expected_reciprocal_rank(scores["gold"],
                                                           np.array([v for d, v in scores.items() if d != "gold"])),
                         **call_costs(calls)})
        # the same candidates in reverse and in a seeded shuffle of the first input: does the output follow them?
        first = [f"d{i}" for i in range(size - 1)]
        first.insert(0, "gold")
        shuffled = list(np.random.default_rng([number, size]).permutation(first))
        for kind, order in (("reversed", first[::-1]), ("shuffled", shuffled)):
            scores, _ = ranker.rank(order, kind)
            taus[kind].append(rank_agreement(outputs[0], sorted(scores, key=lambda doc: (-scores[doc], doc))))
    frame = pd.DataFrame(rows)
    costs = frame[list(COST_COLUMNS)].mean().to_dict()
    consistency = {key: settings[key] for key in settings if key.startswith("consistency_")}
    # the values stay what the curve reads: measured seconds would make two runs' files differ
    return BatteryResult("order", METRICS["order"], frame[["unit", "position", "entered_window", "value"]],
                         extra={"n_candidates": size, "windows": [list(w) for w in windows],
                                "chance": chance(size - 1),
                                **{f"per_list_{k}": float(v) for k, v in costs.items()},
                                **{f"kendall_tau_{kind}": float(np.mean(values)) for kind, values in taus.items()},
                                **(consistency if settings["consistency_k"] > 1 else {})})


class _ListRanker:
    """One question's candidates ranked by RankGPT: once in the order given, or (permutation self-consistency) in
    k orders drawn from the candidate set alone, the k rankings aggregated. `rank` gives a score per candidate
    (higher first; one list: minus its rank) and the model calls it took."""

    def __init__(self, language_model, question, texts: Mapping[str, str], rankgpt, settings: Mapping):
        self.model, self.question, self.texts, self.rankgpt = language_model, question, texts, rankgpt
        self.k, self.settings = settings["consistency_k"], settings

    def _rerank(self, order: list[str], tag: str, calls: list) -> list[str]:
        from posbias.rankers.rankgpt import rerank_query

        out, _ = rerank_query(self.model, f"{self.question.qid}@{tag}", self.question.text, order,
                              self.texts.__getitem__, self.rankgpt, calls)
        return out

    def rank(self, order: list[str], tag: str) -> tuple[dict[str, float], list]:
        from posbias.rankers.listwise.aggregate import aggregate, input_orders

        calls: list = []
        if self.k == 1:
            return {doc: -float(rank) for rank, doc in enumerate(self._rerank(order, tag, calls))}, calls
        seed = [self.settings["consistency_seed"], self.question.qid]
        rankings = [self._rerank(each, f"{tag}#{j}", calls)
                    for j, each in enumerate(input_orders(order, self.k, seed, self.settings["consistency_orders"]))]
        return aggregate(rankings, self.settings["consistency_aggregate"]), calls


COST_COLUMNS = ("calls", "prompt_tokens", "completion_tokens", "seconds", "malformed", "out_of_range", "repeated",
                "missing")


def call_costs(calls: list) -> dict:
    """What one reranked list cost (model calls, prompt and completion tokens, seconds) and what its answers
    needed mending, by kind (`posbias.rankers.listwise.parsing.answer_faults`)."""
    from posbias.rankers.listwise.parsing import FAULTS, answer_faults

    faults = [answer_faults(completion.text, size) for size, completion in calls]
    return {"calls": len(calls), "prompt_tokens": sum(c.prompt_tokens or 0 for _, c in calls),
            "completion_tokens": sum(c.completion_tokens or 0 for _, c in calls),
            "seconds": sum(c.latency_s for _, c in calls), **{kind: sum(f[kind] for f in faults) for kind in FAULTS}}


def rank_agreement(first: list[str], second: list[str]) -> float:
    """Kendall's tau between two orders of the same items (1: the same order; -1: reversed)."""
    from scipy.stats import kendalltau

    return float(kendalltau([first.index(item) for item in first], [second.index(item) for item in first]).statistic)


def reader_grid_battery(language_model, settings: Mapping) -> BatteryResult:
    """Lost in the Middle's question answering with k documents for each k of `n_documents` (the context's length,
    in the model's own tokens: the mean prompt its backend counted) and the gold document at each depth
    (gold index round(depth x (k - 1)))."""
    import pandas as pd
    from posbias.litm.metric import best_subspan_em
    from posbias.litm.predict import qa_examples
    from posbias.llm.types import Decoding

    records = _reader_records(settings, max(settings["n_documents"]))
    decoding = Decoding(max_new_tokens=settings["max_new_tokens"])
    depths = list(settings["depths"])
    cells = [(k, position, depth, example) for k in sorted(settings["n_documents"])
             for position, depth in enumerate(depths)
             for example in qa_examples([_context(record, k, round(depth * (k - 1)), settings["arrange"])
                                         for record in records])]
    completions = _answers(language_model, [example for *_, example in cells], decoding)
    frame = pd.DataFrame([{"unit": str(example.example_index), "position": position, "depth": depth, "k": k,
                           "prompt_tokens": completion.prompt_tokens,
                           "value": best_subspan_em(completion.text, example.record["answers"])}
                          for (k, position, depth, example), completion in zip(cells, completions, strict=True)])
    # each context length in the model's own tokens: the mean prompt at that many documents
    frame["length"] = frame.groupby("k")["prompt_tokens"].transform("mean").round().astype(int)
    return BatteryResult("reader_grid", METRICS["reader_grid"], frame.drop(columns="prompt_tokens"),
                         extra={"n_documents": sorted(settings["n_documents"]), "depths": depths,
                                "arrange": settings["arrange"], "chance": READER_CHANCE,
                                "lengths": sorted(frame["length"].unique().tolist())})


def _answers(language_model, examples: list, decoding) -> list:
    """The model's completions of every example in one request list: a batching backend then fills its batches
    across positions (sorted by prompt length), where one call per position would leave them part-empty."""
    return language_model.generate([example.request() for example in examples], decoding)


def _context(record: Mapping, k: int, rank: int, arrange: str) -> dict:
    """The record with k documents, the gold one at retrieval rank `rank` (0 first) among k - 1 distractors, in
    retrieval order or arranged with the best at both ends (`posbias.litm.qa_builder.ends_first`)."""
    from posbias.litm.qa_builder import build_position, ends_first

    built = build_position(record, k, rank)
    return {**built, "ctxs": ends_first(built["ctxs"])} if arrange == "ends" else built


def _reader_records(settings: Mapping, k: int) -> list[dict]:
    """The reader batteries' questions with their retrieved documents (at least k - 1 distractors each)."""
    from posbias.litm.qa_data import read_qa_records

    if settings["source"]:
        from posbias.staging.checksums import verify

        source = settings["source"]
        verify(source["qa"], source.get("qa_sha256"), "the reader source's qa_sha256")
        return read_qa_records(source["qa"], require_gold=True, limit=settings["n_questions"])
    return copy.deepcopy(_embedded_qa_records(settings["n_questions"], max(50, 2 * k)))


@functools.lru_cache(maxsize=8)
def _embedded_qa_records(n_questions: int, depth: int) -> list[dict]:
    """The embedded world's questions with their retrieved documents, retrieved once per process (the retrieval
    loads an encoder; a calibration asks for the same records hundreds of times)."""
    from posbias.audit.haystack import WORLD
    from posbias.litm.synthetic_qa import synthetic_qa_records

    return synthetic_qa_records(WORLD, n_questions, depth=depth)


def summarise_grid(result: BatteryResult, statistics: Mapping, window: int | None = None,
                   test: str | None = None) -> BatteryResult:
    """A grid's curve per length (the metric suite at each, `summarise`), stacked with a `length` column; the
    summary is the longest length's, with every length's under `lengths`."""
    import pandas as pd
    curves, summaries = [], {}
    for length, part in result.values.groupby("length", sort=True):
        one = summarise(BatteryResult(result.battery, result.metric, part.reset_index(drop=True),
                                      extra={"chance": result.extra.get("chance")}), statistics, window, test)
        curves.append(one.curve.assign(length=length))
        summaries[str(length)] = one.summary
    result.curve = pd.concat(curves, ignore_index=True)
    result.summary = {**summaries[str(max(result.values["length"]))], "lengths": summaries}
    return result
