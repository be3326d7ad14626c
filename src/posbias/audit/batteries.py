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
(`posbias.audit.results`, `posbias.stats.position_curve`): position 0 (the first place, where a truncating model
reads) is the reference. The batteries' settings and defaults are `posbias.audit.battery_settings`.
"""

from __future__ import annotations

import copy
import functools
import logging
from typing import TYPE_CHECKING, Mapping

import numpy as np

from posbias.audit.results import METRICS, BatteryResult, chance, expected_reciprocal_rank
from posbias.errors import InputError

# pandas and the position curve (scipy.stats) are imported by the functions that use them
if TYPE_CHECKING:
    import pandas as pd

log = logging.getLogger(__name__)


# A reader's chance floor: an exact-match answer is not guessed from a list of options, so a reader that reads
# nothing scores about 0 (what it knows without the documents is signal, measured from the floor up)
READER_CHANCE = 0.0


def default_doc_tokens(window: int | None, settings: Mapping) -> int:
    """Twice the model's window (so half the positions lie beyond what a truncating model reads), within the
    battery's bounds."""
    if settings["doc_tokens"]:
        return int(settings["doc_tokens"])
    wanted = 2 * window if window else settings["max_doc_tokens"]
    return int(min(max(wanted, settings["min_doc_tokens"]), settings["max_doc_tokens"]))


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
        # the document's length as the model counts it (the needle's place may move it by a token: the longest)
        doc_length = max(variant.n_tokens for variant in item.variants)
        for variant, score in zip(item.variants, variant_scores):
            rows.append({"unit": item.question.qid, "position": variant.position, "tokens": variant.start,
                         "end": variant.start + needle, "doc_length": doc_length, **(extra or {}),
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
                                "chance": chance(settings["n_distractors"]), **length_unit(model, settings)})


def length_unit(model, settings: Mapping, unit: str | None = None) -> dict:
    """On real text (a `source`), what the values' `doc_length` counts, so the result is also summarised per
    document-length bucket (`posbias.audit.results.by_length`): the model's tokens, or words for a model known only
    by its words; `unit` names another. The embedded world's documents are all built to one length: none."""
    if not settings.get("source"):
        return {}
    counted = unit or ("model tokens" if getattr(model, "token_unit", "tokens") == "tokens" else "words")
    return {"doc_length_unit": counted}


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
                                "chance": chance(settings["n_distractors"]), **length_unit(model, settings)})


def probe_queries(settings: Mapping) -> list:
    """The probe battery's queries: its Re-DocRED `source` file's, or the embedded world's."""
    from posbias.docred.queries import build_query_table
    from posbias.docred.documents import documents_from_records, read_redocred
    from posbias.docred.synthetic import synthetic_redocred

    if settings["source"]:
        documents = read_redocred(settings["source"]["redocred"], "dev")
    else:
        records = synthetic_redocred(settings["seed"], settings["n_documents"])
        documents = documents_from_records(records, "synthetic", "<embedded Re-DocRED world>")
    return build_query_table(documents)


def probes_battery(model, settings: Mapping) -> BatteryResult:
    import pandas as pd
    from posbias.docred import position
    from posbias.stats.document_pairs import probe_statistic

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
    from posbias.reading.metric import best_subspan_em
    from posbias.reading.predict import qa_examples
    from posbias.llm.types import Decoding

    k = settings["n_documents"]
    records = _reader_records(settings, k)
    decoding = Decoding(max_new_tokens=settings["max_new_tokens"])
    cells = [(gold_index, example) for gold_index in range(k) for example in
             qa_examples([_context(record, k, gold_index, settings["arrange"]) for record in records],
                         variant=settings["prompt"])]
    completions = _answers(language_model, [example for _, example in cells], decoding, settings.get("attention"))
    rows = [{"unit": str(example.example_index), "position": gold_index,
             "value": best_subspan_em(completion.text, example.record["answers"])}
            for (gold_index, example), completion in zip(cells, completions, strict=True)]
    return BatteryResult("reader", METRICS["reader"], pd.DataFrame(rows),
                         extra={"n_documents": k, "arrange": settings["arrange"], "prompt": settings["prompt"],
                                "chance": READER_CHANCE, **_attention_extra(settings, [k]),
                                **retrieved_gold_ranks(records, k)})


def retrieved_gold_ranks(records: list[dict], k: int) -> dict:
    """Where the retriever itself ranked an answer-bearing document among each question's first k: the share of
    questions at each rank (`gold_rank_shares`, over the `gold_rank_questions` that have one in the first k). The
    battery moves the gold document through every rank alike; these shares say how often a real context puts it
    at each, so a rearrangement of the context (the relevance-ordered mitigation) is judged where it matters
    (`posbias.audit.mitigation_table.mitigation_frame`). Empty when no question's first k hold an answer."""
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
            # the list's length in words: the gold passage is what differs between questions' lists
            rows.append({"unit": question.qid, "position": position, "entered_window": entered,
                         "doc_length": sum(len(text.split()) for text in texts.values()),
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
    return BatteryResult("order", METRICS["order"],
                         frame[["unit", "position", "entered_window", "doc_length", "value"]],
                         extra={"n_candidates": size, "windows": [list(w) for w in windows],
                                "chance": chance(size - 1),
                                # the listwise model's tokenizer is not reachable through every backend
                                **length_unit(language_model, settings, "words"),
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
    from posbias.reading.metric import best_subspan_em
    from posbias.reading.predict import qa_examples
    from posbias.llm.types import Decoding

    records = _reader_records(settings, max(settings["n_documents"]))
    decoding = Decoding(max_new_tokens=settings["max_new_tokens"])
    depths = list(settings["depths"])
    cells = [(k, position, depth, example) for k in sorted(settings["n_documents"])
             for position, depth in enumerate(depths)
             for example in qa_examples([_context(record, k, round(depth * (k - 1)), settings["arrange"])
                                         for record in records], variant=settings["prompt"])]
    completions = _answers(language_model, [example for *_, example in cells], decoding, settings.get("attention"))
    frame = pd.DataFrame([{"unit": str(example.example_index), "position": position, "depth": depth, "k": k,
                           "prompt_tokens": completion.prompt_tokens,
                           "value": best_subspan_em(completion.text, example.record["answers"])}
                          for (k, position, depth, example), completion in zip(cells, completions, strict=True)])
    # each context length in the model's own tokens: the mean prompt at that many documents
    frame["length"] = frame.groupby("k")["prompt_tokens"].transform("mean").round().astype(int)
    return BatteryResult("reader_grid", METRICS["reader_grid"], frame.drop(columns="prompt_tokens"),
                         extra={"n_documents": sorted(settings["n_documents"]), "depths": depths,
                                "arrange": settings["arrange"], "prompt": settings["prompt"], "chance": READER_CHANCE,
                                **_attention_extra(settings, [k for k, *_ in cells]),
                                "lengths": sorted(frame["length"].unique().tolist())})


def _answers(language_model, examples: list, decoding, attention: Mapping | None = None) -> list:
    """The model's completions of every example in one request list: a batching backend then fills its batches
    across positions (sorted by prompt length), where one call per position would leave them part-empty. With an
    attention mitigation each request carries it and its documents (`posbias.reading.attention_mitigations`; the
    hf_causal backend reads them, and the mitigation enters the response cache's key)."""
    requests = [example.request() for example in examples]
    if attention:
        import posbias.reading.attention_mitigations  # noqa: F401 (registers the backend's answerer)
        from posbias.llm.types import Request

        requests = [Request(prompt=request.prompt, meta={**request.meta, "attention": dict(attention),
                                                         "documents": [dict(item) for item in example.items]})
                    for request, example in zip(requests, examples, strict=True)]
    return language_model.generate(requests, decoding)


def _attention_extra(settings: Mapping, document_counts: list[int]) -> dict:
    """With an attention mitigation, its setting and the model passes it takes per prompt (mean over prompts of
    `document_counts` documents each): the mitigation table's cost multiplier counts them."""
    attention = settings.get("attention")
    if not attention:
        return {}
    from posbias.reading.attention_mitigations import passes_per_prompt

    passes = [passes_per_prompt(attention, k) for k in document_counts]
    return {"attention": dict(attention), "passes_per_prompt": sum(passes) / len(passes)}


def _context(record: Mapping, k: int, rank: int, arrange: str) -> dict:
    """The record with k documents, the gold one at retrieval rank `rank` (0 first) among k - 1 distractors, in
    retrieval order or arranged with the best at both ends (`posbias.reading.qa_builder.ends_first`)."""
    from posbias.reading.qa_builder import build_position, ends_first

    built = build_position(record, k, rank)
    return {**built, "ctxs": ends_first(built["ctxs"])} if arrange == "ends" else built


def _reader_records(settings: Mapping, k: int) -> list[dict]:
    """The reader batteries' questions with their retrieved documents (at least k - 1 distractors each)."""
    from posbias.reading.qa_data import read_qa_records

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
    from posbias.reading.synthetic_qa import synthetic_qa_records

    return synthetic_qa_records(WORLD, n_questions, depth=depth)
