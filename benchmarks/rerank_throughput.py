"""Reranking and training throughput of posbias's chunk rankers against sentence-transformers'
`CrossEncoder.predict`, on the same backbone, the same (query, document) pairs, the same device,
the same torch thread count and the same precision, all measured in one run.

Backbone: the full 6-layer MiniLM-L6 (`offline:all-MiniLM-L6-v2`, resolved to its local directory with
`posbias.backbones.resolve`). posbias builds it with `posbias.rankers.registry.build_ranker` (a
`BertModel` plus a fresh Linear head on the [CLS] vector); the CrossEncoder is
`CrossEncoder(<that directory>, num_labels=1)` (`BertForSequenceClassification`: the same backbone
weights, a fresh pooler+Linear head). `--backbone DIR` puts another BERT-vocabulary model on both sides
(benchmarks/gpu_check.py: a random-weight BERT-base). The heads differ, so scores are not comparable; what is checked
instead, on `--check-pairs` pairs spread over the length mix, is that both sides feed identical token
ids and type ids, and how far apart the backbones' [CLS] vectors are (max |difference|, and the
max |difference| of FirstP's own head applied to both vectors).

Data (synthetic, seeded): `--pairs` (query, document) pairs, `--depth` candidates per query, every
pair its own document. Document lengths in tokens are drawn from the lognormal of benchmarks/scale.py
(`document_lengths`: median at the 1431-token cap, sigma `--sigma`, so about half the documents reach
the cap and about 14 % are shorter than one 477-token chunk), and texts are made of words that are single
tokens of the MiniLM tokenizer (scale.py's `single_token_words`), so token counts are exact (checked
against the token store). Queries are 3 to 12 such words.

Measured:

  store     `build_token_store(docs, dir, "offline:all-MiniLM-L6-v2", cap=1431)` of the pairs' documents:
            a one-off per collection, reported on its own, and counted in full against each posbias row in the
            ratio "counting the token store's build" (the CrossEncoder tokenises inside `predict`).
  rerank    pairs/s over all pairs, batch `--batch-size` (32), after a warm-up on `--warmup-pairs` pairs; the
            pairs are cut into `--slices` slices of whole queries and the systems take turns slice by slice,
            so a change in the shared machine's load affects them alike (pairs / summed slice times):
            CrossEncoder  `CrossEncoder.predict(pairs, batch_size=32)`, texts in, scores out (its own
                          tokenisation, length sort and padding included). Each document text is cut to
                          its first 477 words (= 477 tokens), so it encodes exactly FirstP's tokens
                          ([CLS] query [SEP] 477 document tokens [SEP]; its own 512-token limit would
                          otherwise give it up to 509 - query tokens).
            FirstP        `posbias.scoring.reranking.rerank` with a `firstp` ranker (query 32, chunk 477,
                          stride 477, max_doc 477): query tokenisation, token store reads, length sort,
                          `Chunker.batch`, forward, scores (the run dict) included.
            MaxP          the same with `maxp` (query 32, chunks of 477 every 477, max_doc 1431: up to 3 chunks).
            *_eager       (`--systems firstp_eager maxp_eager`) the same with the backbone's linear layers eager,
                          not through oneDNN (`posbias.rankers.onednn`): the before of that change, in the same run.
  train     optimizer steps/s of posbias's training step, the pieces of `posbias.training.loop.train`
            called in its order: `Chunker.tokenize_queries`, `Chunker.batch` from `store.ids`, forward,
            `pairwise_margin_loss` (sum, the paper recipe), backward (per forward pass of `--train-batch`
            pairs (1, the paper's), `--train-accum` passes per step (2 here; the paper accumulates 16)), then `loop.optimizer_step` (AdamW, two learning-rate
            groups, no clipping, as config/paper/common.yaml); nothing frozen. `--train-warmup` steps are
            run first and not timed; the median of `--train-steps` timed steps is reported. Models: FirstP
            and MaxP at the rerank geometries, PARADE Attn at `--parade-geometry` (default 32/128/64/384 on
            CPU; the paper's is 32/150/75/1431).

Every posbias row and the CrossEncoder row run on `--device` with `torch.set_num_threads(--threads)`;
`--precision` fp32 (the default) or bf16/fp16 autocast (fp16 on CUDA only) for both sides alike (posbias's
`RankerScorer(precision=...)`, CrossEncoder.predict inside `torch.autocast`). Ratios are against the
CrossEncoder measured in the same run. Timings are wall times on a shared machine; the process's CPU seconds
(all threads, `time.process_time`) are recorded too, and their ratio is the steadier one when other work shares
the cores.

    PYTHONPATH=src .venv/bin/python benchmarks/rerank_throughput.py [--pairs 800] [--threads 2]
        [--device cpu] [--precision fp32] [--json OUT] [--markdown OUT]

The default run takes about 10 minutes on 2 shared CPU cores (MiniLM-L6 reads about 4-8 pairs of 512
tokens per second there); on a GPU, raise --pairs and --train-accum.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import random
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from scale import document_lengths, single_token_words  # noqa: E402  (benchmarks/scale.py)

TOKENIZER = "offline:all-MiniLM-L6-v2"
CAP = 1431
FIRSTP = {"max_query_tokens": 32, "chunk_tokens": 477, "stride": 477, "max_doc_tokens": 477}
MAXP = {"max_query_tokens": 32, "chunk_tokens": 477, "stride": 477, "max_doc_tokens": CAP}
PAPER_PARADE = (32, 150, 75, CAP)


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--pairs", type=int, default=800, help="(query, document) pairs reranked")
    parser.add_argument("--depth", type=int, default=100, help="candidates per query")
    parser.add_argument("--sigma", type=float, default=1.0, help="lognormal sigma of document lengths")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--batch-size", type=int, default=32, help="pairs per rerank batch (both sides)")
    parser.add_argument("--warmup-pairs", type=int, default=64, help="pairs scored before timing, per system")
    parser.add_argument("--slices", type=int, default=4, help="slices of whole queries the systems take turns on")
    parser.add_argument("--repeats", type=int, default=1, help="timed passes per slice and system (median taken)")
    parser.add_argument("--systems", nargs="+", default=["crossencoder", "firstp", "maxp"],
                        choices=["crossencoder", "firstp", "maxp", "firstp_eager", "maxp_eager"],
                        help="*_eager: posbias with its linear layers eager, not through oneDNN (the before)")
    parser.add_argument("--check-pairs", type=int, default=32, help="pairs checked for identical inputs")
    parser.add_argument("--backbone", default=TOKENIZER, help="both sides' backbone: the offline MiniLM-L6, or a "
                        "model directory with a BERT WordPiece vocabulary (gpu_check.py: a random BERT-base)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--threads", type=int, default=os.cpu_count(), help="torch intra-op threads")
    parser.add_argument("--precision", default="fp32", choices=["fp32", "bf16", "fp16"],
                        help="bf16/fp16: autocast for both sides (fp16 on CUDA only)")
    parser.add_argument("--train", nargs="*", default=["firstp", "maxp", "parade_attn"],
                        choices=["firstp", "maxp", "parade_attn"], help="models timed in training (none: skip)")
    parser.add_argument("--train-batch", type=int, default=1, help="pairs per forward pass (paper: 1)")
    parser.add_argument("--train-accum", type=int, default=2, help="forward passes per optimizer step (paper: 16)")
    parser.add_argument("--train-steps", type=int, default=2, help="timed optimizer steps per model")
    parser.add_argument("--train-warmup", type=int, default=1, help="untimed optimizer steps first")
    parser.add_argument("--parade-geometry", type=int, nargs=4, metavar=("QUERY", "CHUNK", "STRIDE", "MAX_DOC"),
                        help=f"PARADE Attn training geometry (default 32 128 64 384 on CPU, the paper's "
                             f"{' '.join(map(str, PAPER_PARADE))} elsewhere)")
    parser.add_argument("--workdir", help="keep the generated documents and token store here")
    parser.add_argument("--json", help="also write the numbers to this JSON file")
    parser.add_argument("--markdown", help="also write the report to this markdown file")
    args = parser.parse_args(argv)
    if args.parade_geometry is None:
        args.parade_geometry = [32, 128, 64, 384] if args.device == "cpu" else list(PAPER_PARADE)
    return args


# --- data ------------------------------------------------------------------------------------------

def make_data(args, tokenizer, workdir: Path) -> dict:
    """Documents (written as JSONL), queries, candidates and training triples; every document is
    `lengths[i]` single-token words."""
    from posbias.io import write_documents

    words = single_token_words(tokenizer)
    lengths = document_lengths(args.pairs, args.sigma, args.seed)
    rng = np.random.default_rng([args.seed, args.pairs, 5])
    texts = {f"D{i}": " ".join(words[rng.integers(len(words), size=int(n))]) for i, n in enumerate(lengths)}
    n_queries = -(-args.pairs // args.depth)
    queries = {f"Q{q}": " ".join(words[rng.integers(len(words), size=int(rng.integers(3, 13)))])
               for q in range(n_queries)}
    doc_ids = list(texts)
    candidates = {f"Q{q}": {d: 0.0 for d in doc_ids[q * args.depth:(q + 1) * args.depth]} for q in range(n_queries)}
    docs_path = workdir / "docs.jsonl"
    write_documents(docs_path, ({"id": d, "text": t} for d, t in texts.items()))
    return {"texts": texts, "lengths": dict(zip(doc_ids, lengths.tolist())), "queries": queries,
            "candidates": candidates, "docs_path": docs_path}


def tokens_per_pair(geometry: dict, query_tokens: int, doc_tokens: int) -> int:
    """Real (unpadded) tokens a ranker of this geometry encodes for one pair, specials included."""
    from posbias.rankers.geometry import ChunkGeometry

    windows = ChunkGeometry(**geometry).windows(doc_tokens)
    return sum(query_tokens + end - start + 3 for start, end in windows)


# --- reranking -------------------------------------------------------------------------------------

def synchronize(device) -> None:
    import torch

    if torch.device(device).type == "cuda":
        torch.cuda.synchronize()


def autocast_for(device: str, precision: str):
    import torch

    if precision == "fp32":
        return contextlib.nullcontext()
    dtype = {"bf16": torch.bfloat16, "fp16": torch.float16}[precision]
    return torch.autocast(device_type=torch.device(device).type, dtype=dtype)


def subset(candidates: dict, pairs: int) -> dict:
    """The first `pairs` pairs of `candidates`, in query order (a warm-up set)."""
    out, left = {}, pairs
    for q, docs in candidates.items():
        if left <= 0:
            break
        out[q] = dict(list(docs.items())[:left])
        left -= len(out[q])
    return out


def pair_list(candidates: dict) -> list[tuple[str, str]]:
    return [(q, d) for q, docs in candidates.items() for d in docs]


def ce_inputs(data: dict, pairs: list[tuple[str, str]], doc_tokens: int) -> list[tuple[str, str]]:
    """(query text, document text cut to its first `doc_tokens` words = tokens) for each (qid, doc id)."""
    return [(data["queries"][q], " ".join(data["texts"][d].split(" ")[:doc_tokens])) for q, d in pairs]


def query_slices(candidates: dict, n: int) -> list[dict]:
    """The candidates cut into `n` slices of whole queries (about equal pair counts)."""
    qids = list(candidates)
    bounds = np.linspace(0, len(qids), min(n, len(qids)) + 1).round().astype(int)
    return [{q: candidates[q] for q in qids[a:b]} for a, b in zip(bounds[:-1], bounds[1:])]


class CrossEncoderSystem:
    def __init__(self, ce, data: dict, args):
        self.ce, self.data, self.args = ce, data, args

    def __call__(self, candidates: dict):
        pairs = ce_inputs(self.data, pair_list(candidates), FIRSTP["max_doc_tokens"])
        with autocast_for(self.args.device, self.args.precision):
            scores = self.ce.predict(pairs, batch_size=self.args.batch_size, show_progress_bar=False)
        synchronize(self.args.device)
        return {"pairs": len(pairs), "finite": bool(np.isfinite(scores).all())}, None


class PosbiasSystem:
    def __init__(self, ranker, tokenizer, store, data: dict, args, onednn: bool = True):
        self.ranker, self.tokenizer, self.store, self.data, self.args = ranker, tokenizer, store, data, args
        self.onednn = onednn  # False: the eager linear layers (`posbias.rankers.onednn` off), the "before"

    def __call__(self, candidates: dict):
        from posbias.scoring.ranker import RankerScorer
        from posbias.scoring.reranking import rerank

        # onednn=False: the eager linear layers, the "before" of posbias.rankers.onednn
        scorer = RankerScorer(self.ranker, self.tokenizer, batch_size=self.args.batch_size, device=self.args.device,
                              precision=self.args.precision, onednn=self.onednn, progress=False)
        run, info = rerank(scorer, self.data["queries"], self.store, candidates)
        synchronize(self.args.device)
        return info, run


def time_systems(systems: dict, data: dict, args) -> tuple[dict, dict]:
    """Each system warmed up on `--warmup-pairs` pairs, then timed over every pair: the pairs are cut into
    `--slices` slices of whole queries and the systems take turns slice by slice (each `--repeats` times,
    median), so a change in the machine's load affects all of them alike. pairs/s = pairs / summed slice times."""
    warm = subset(data["candidates"], args.warmup_pairs)
    for system in systems.values():
        system(warm)
    seconds = {name: [] for name in systems}
    cpu = {name: [] for name in systems}  # process CPU seconds (all threads): less sensitive to a shared machine
    runs: dict = {name: {} for name in systems}
    infos: dict = {name: [] for name in systems}
    for number, part in enumerate(query_slices(data["candidates"], args.slices)):
        for name, system in systems.items():
            times, cpu_times = [], []
            for _ in range(args.repeats):
                start, cpu_start = time.perf_counter(), time.process_time()
                info, run = system(part)
                times.append(time.perf_counter() - start)
                cpu_times.append(time.process_time() - cpu_start)
            seconds[name].append(statistics.median(times))
            cpu[name].append(statistics.median(cpu_times))
            infos[name].append(info)
            if run:
                runs[name].update(run)
        print(f"  slice {number + 1}: " + ", ".join(f"{n} {s[-1]:.1f} s" for n, s in seconds.items()),
              file=sys.stderr)
    results = {}
    for name in systems:
        pairs = sum(info["pairs"] for info in infos[name])
        total = sum(seconds[name])
        results[name] = {"slice_seconds": seconds[name], "seconds": total, "pairs": pairs,
                         "pairs_per_s": pairs / total, "cpu_seconds": sum(cpu[name]),
                         **{k: v for k, v in infos[name][0].items() if k != "pairs"}}
    return results, runs


def input_check(ce, firstp, tokenizer, store, data: dict, run: dict | None, args) -> dict:
    """On `--check-pairs` pairs spread over the length order: identical token and type ids on both
    sides, max |[CLS] difference| of the backbones, and of FirstP's head applied to both [CLS] vectors
    (and to the FirstP scores of the timed run, when there is one)."""
    import torch

    pairs = sorted(pair_list(data["candidates"]),
                   key=lambda qd: (min(data["lengths"][qd[1]], FIRSTP["max_doc_tokens"]), qd))
    picked = [pairs[i] for i in np.linspace(0, len(pairs) - 1, min(args.check_pairs, len(pairs))).astype(int)]
    chunker = firstp.featurizer(tokenizer)
    query_ids = chunker.tokenize_queries([data["queries"][q] for q, _ in picked])
    batch = chunker.batch([(qi, store.ids(int(store.numbers([d])[0]), FIRSTP["max_doc_tokens"]))
                           for qi, (_, d) in zip(query_ids, picked)])
    features = ce.preprocess(ce_inputs(data, picked, FIRSTP["max_doc_tokens"]))
    same_ids = same_types = 0
    for b in range(len(picked)):
        mine = batch.attention_mask[b, 0].bool()
        theirs = features["attention_mask"][b].bool()
        same_ids += batch.input_ids[b, 0][mine].tolist() == features["input_ids"][b][theirs].tolist()
        same_types += batch.token_type_ids[b, 0][mine].tolist() == features["token_type_ids"][b][theirs].tolist()
    device = torch.device(args.device)
    firstp.to(device).eval()
    ce.model.to(device).eval()
    with torch.inference_mode(), autocast_for(args.device, args.precision):
        mine = firstp.encoder(batch.to(device)).pooled[:, 0].float()
        theirs = ce.model.bert(**{k: features[k].to(device) for k in ("input_ids", "attention_mask",
                                                                       "token_type_ids")}).last_hidden_state[:, 0].float()
        head = firstp.head.score
        mine_scores, their_scores = head(mine).squeeze(-1), head(theirs).squeeze(-1)
    result = {"pairs": len(picked), "identical_input_ids": same_ids, "identical_token_type_ids": same_types,
              "max_abs_cls_diff": float((mine - theirs).abs().max()),
              "max_abs_firstp_head_score_diff": float((mine_scores - their_scores).abs().max())}
    if run is not None:
        timed = torch.tensor([run[q][d] for q, d in picked])
        result["max_abs_run_vs_ce_backbone_score_diff"] = float((timed - their_scores.cpu()).abs().max())
    return result


# --- training --------------------------------------------------------------------------------------

def time_training(name: str, geometry: dict, tokenizer, store, data: dict, args) -> dict:
    """Median seconds per optimizer step of posbias's training step (the pieces of `loop.train`)."""
    import torch

    from posbias.rankers.registry import build_ranker
    from posbias.device import autocast, autocast_dtype, pick_device
    from posbias.training.loop import optimizer_step, seed_everything, warmup_then_constant
    from posbias.training.loss import pairwise_margin_loss

    seed_everything(args.seed)
    ranker = build_ranker(name, {"backbone": args.backbone, **geometry})
    device = pick_device(args.device)
    dtype = autocast_dtype(device, args.precision)
    ranker.to(device).train()
    chunker = ranker.featurizer(tokenizer)
    limit = ranker.geometry.max_doc_tokens
    groups = ranker.parameter_groups()
    optimizer = torch.optim.AdamW([{"params": groups["backbone"], "lr": 1e-5},
                                   {"params": groups["head"], "lr": 1e-3}], weight_decay=1e-7)
    steps = args.train_warmup + args.train_steps
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, warmup_then_constant(max(1, round(0.2 * steps))))
    scaler = torch.amp.GradScaler(device.type, enabled=dtype == torch.float16)
    rng = random.Random(args.seed)
    qids, doc_ids = list(data["queries"]), list(data["texts"])
    per_step = args.train_batch * args.train_accum
    triples = [(rng.choice(qids), *map(lambda d: int(store.numbers([d])[0]), rng.sample(doc_ids, 2)))
               for _ in range(steps * per_step)]
    seconds, losses, real_tokens = [], [], 0
    for step in range(steps):
        synchronize(args.device)
        start = time.perf_counter()
        step_triples = triples[step * per_step:(step + 1) * per_step]
        step_loss = 0.0
        for batch_start in range(0, len(step_triples), args.train_batch):
            part = step_triples[batch_start:batch_start + args.train_batch]
            query_ids = chunker.tokenize_queries([data["queries"][q] for q, _, _ in part])
            batch = chunker.batch([(query, store.ids(doc, limit))
                                   for query, (_, pos, neg) in zip(query_ids, part) for doc in (pos, neg)])
            if step >= args.train_warmup:
                real_tokens += int(batch.attention_mask.sum())
            with autocast(device, dtype):
                scores = ranker(batch.to(device)).float().view(-1, 2)
            loss = pairwise_margin_loss(scores[:, 0], scores[:, 1], 1.0, "sum")
            scaler.scale(loss).backward()
            step_loss += loss.item()
        optimizer_step(ranker, optimizer, scheduler, scaler, None)
        synchronize(args.device)
        if step >= args.train_warmup:
            seconds.append(time.perf_counter() - start)
            losses.append(step_loss)
    median = statistics.median(seconds)
    return {"model": name, "geometry": geometry, "pairs_per_step": per_step, "seconds": seconds,
            "steps_per_s": 1 / median, "pairs_per_s": per_step / median,
            "real_tokens_per_document": real_tokens / (per_step * 2 * len(seconds)),
            "losses_finite": all(np.isfinite(losses))}


# --- report ----------------------------------------------------------------------------------------

def geometry_text(g: dict) -> str:
    return f"q{g['max_query_tokens']}/c{g['chunk_tokens']}/s{g['stride']}/d{g['max_doc_tokens']}"


def markdown(result: dict) -> str:
    r = result["rerank"]
    ce = r.get("crossencoder")
    store_s = result["store"]["seconds"]
    lines = ["| system | geometry | throughput | ratio vs CrossEncoder | ratio counting the token store's build | "
             "CPU-time ratio (with the build) | real tokens encoded per (query, document) | time (s) |",
             "| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: |"]
    names = {"crossencoder": "sentence-transformers `CrossEncoder.predict`",
             "firstp": "posbias FirstP `rerank`", "maxp": "posbias MaxP `rerank`",
             "firstp_eager": "posbias FirstP `rerank`, eager linears",
             "maxp_eager": "posbias MaxP `rerank`, eager linears"}
    geometries = {"crossencoder": "text cut to 477 tokens", "firstp": geometry_text(FIRSTP),
                  "maxp": geometry_text(MAXP)}
    geometries.update(firstp_eager=geometries["firstp"], maxp_eager=geometries["maxp"])
    for system in ("crossencoder", "firstp_eager", "firstp", "maxp_eager", "maxp"):
        if system not in r:
            continue
        row = r[system]
        ratio = f"{row['pairs_per_s'] / ce['pairs_per_s']:.2f}" if ce else ""
        # posbias reads a token store built once per collection: counted here in full against its pairs.
        build, build_cpu = (0.0, 0.0) if system == "crossencoder" else (store_s, result["store"]["cpu_seconds"])
        with_store = f"{(ce['seconds'] / ce['pairs']) / ((row['seconds'] + build) / row['pairs']):.2f}" if ce else ""
        cpu_ratio = (f"{(ce['cpu_seconds'] / ce['pairs']) / ((row['cpu_seconds'] + build_cpu) / row['pairs']):.2f}"
                     if ce else "")
        lines.append(f"| {names[system]} | {geometries[system]} | {row['pairs_per_s']:.2f} pairs/s | {ratio} | "
                     f"{with_store} | {cpu_ratio} | {result['tokens_per_pair'][system.removesuffix('_eager')]:.0f} | "
                     f"{row['seconds']:.1f} |")
    for row in result["train"]:
        lines.append(f"| posbias {row['model']} training step ({row['pairs_per_step']} pairs) | "
                     f"{geometry_text(row['geometry'])} | {row['steps_per_s']:.3f} steps/s "
                     f"({row['pairs_per_s']:.2f} pairs/s) | | | | {row['real_tokens_per_document']:.0f} | "
                     f"{statistics.median(row['seconds']):.1f} per step |")
    s = result["store"]
    lines.append("")
    lines.append(f"Token store (one-off per collection): {s['documents']:,} documents, {s['tokens']:,} tokens "
                 f"(mean {s['tokens'] / s['documents']:.0f}, {100 * s['capped']:.0f} % at the 1431 cap, "
                 f"{100 * s['shorter_than_chunk']:.0f} % under 477), built in {s['seconds']:.2f} s "
                 f"({s['tokens'] / s['seconds']:,.0f} tokens/s); counts equal the drawn lengths: {s['exact']}.")
    c = result.get("check")
    if c:
        extra = (f"; FirstP scores of the timed run vs the same head on CrossEncoder's [CLS]: max |diff| "
                 f"{c['max_abs_run_vs_ce_backbone_score_diff']:.2e}" if "max_abs_run_vs_ce_backbone_score_diff" in c
                 else "")
        lines.append(f"Same inputs ({c['pairs']} pairs across the length order): identical input ids "
                     f"{c['identical_input_ids']}/{c['pairs']}, token type ids {c['identical_token_type_ids']}/"
                     f"{c['pairs']}; backbone [CLS] vectors (posbias FirstP encoder vs CrossEncoder.model.bert, one "
                     f"batch): max |diff| {c['max_abs_cls_diff']:.2e}; FirstP's head on both: max |diff| "
                     f"{c['max_abs_firstp_head_score_diff']:.2e}{extra}. Scores themselves differ by design "
                     f"(FirstP: Linear on [CLS]; CrossEncoder: pooler + Linear, then a sigmoid; both heads untrained).")
    a, m = result["args"], result["machine"]
    lines.append(f"Pairs: {r.get('firstp', r.get('crossencoder', {})).get('pairs', a['pairs'])} ({a['depth']} per "
                 f"query), batch {a['batch_size']}, warm-up {a['warmup_pairs']} pairs, then the systems take turns on "
                 f"{a['slices']} slices of whole queries ({a['repeats']} pass(es) each, median); training: batch {a['train_batch']} pair(s) x {a['train_accum']} per step, "
                 f"{a['train_warmup']} untimed + median of {a['train_steps']} timed steps, loss sum, AdamW, nothing "
                 f"frozen. Model load: posbias {result['load_s']['posbias']:.1f} s, CrossEncoder "
                 f"{result['load_s']['crossencoder']:.1f} s (not in the throughputs).")
    lines.append(f"Device {a['device']}, precision {a['precision']}, torch threads {m['torch_threads']}; "
                 f"{m['cpus']} CPUs, load average {m['load_average_at_start'][0]:.2f} at start, "
                 f"{m['load_average_at_end'][0]:.2f} at end (shared machine); torch {m['torch']}, transformers "
                 f"{m['transformers']}, sentence-transformers {m['sentence_transformers']}; code {m['commit'][:10]}"
                 f"{' (src modified)' if m['src_modified'] else ''}; total {result['total_s'] / 60:.1f} min.")
    return "\n".join(lines)


def git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=Path(__file__).resolve().parents[1], capture_output=True,
                              text=True, check=True).stdout.strip()
    except (OSError, subprocess.CalledProcessError):
        return ""


def main() -> None:
    args = parse_args()
    started = time.perf_counter()
    import sentence_transformers
    import torch
    import transformers
    from transformers.utils import logging as hf_logging

    from posbias.backbones import load_tokenizer, resolve
    from posbias.data.token_store import TokenStore, build_token_store
    from posbias.rankers.registry import build_ranker

    torch.set_num_threads(args.threads)
    hf_logging.set_verbosity_error()
    machine = {"cpus": os.cpu_count(), "torch_threads": torch.get_num_threads(), "python": platform.python_version(),
               "torch": torch.__version__, "transformers": transformers.__version__,
               "sentence_transformers": sentence_transformers.__version__, "load_average_at_start": os.getloadavg(),
               "commit": git("rev-parse", "HEAD"), "src_modified": bool(git("status", "--porcelain", "--", "src"))}
    if torch.device(args.device).type == "cuda":
        machine["gpu"] = torch.cuda.get_device_name(torch.device(args.device))
    workdir = Path(args.workdir) if args.workdir else Path(tempfile.mkdtemp(prefix="rerank-throughput-"))
    workdir.mkdir(parents=True, exist_ok=True)
    try:
        tokenizer = load_tokenizer(TOKENIZER)
        data = make_data(args, tokenizer, workdir)
        store_dir = workdir / "tokens"
        shutil.rmtree(store_dir, ignore_errors=True)
        start, cpu_start = time.perf_counter(), time.process_time()
        build_token_store(data["docs_path"], store_dir, TOKENIZER, cap=CAP, progress=False)
        store_s, store_cpu = time.perf_counter() - start, time.process_time() - cpu_start
        store = TokenStore(store_dir)
        numbers = store.numbers(list(data["lengths"]))
        drawn = np.array(list(data["lengths"].values()))
        lengths = np.asarray(store.lengths[numbers])
        store_info = {"seconds": store_s, "cpu_seconds": store_cpu, "documents": len(store),
                      "tokens": int(lengths.sum()),
                      "exact": bool((lengths == drawn).all()), "capped": float((drawn >= CAP).mean()),
                      "shorter_than_chunk": float((drawn < 477).mean())}
        query_tokens = {q: len(ids) for q, ids in zip(data["queries"], tokenizer(
            list(data["queries"].values()), add_special_tokens=False)["input_ids"])}
        pairs = pair_list(data["candidates"])
        tokens = {name: float(np.mean([tokens_per_pair(g, min(query_tokens[q], 32), data["lengths"][d])
                                        for q, d in pairs])) for name, g in (("firstp", FIRSTP), ("maxp", MAXP))}
        tokens["crossencoder"] = tokens["firstp"]

        print(f"{len(pairs)} pairs, token store built in {store_s:.1f} s; loading models", file=sys.stderr)
        start = time.perf_counter()
        rankers = {"firstp": build_ranker("firstp", {"backbone": args.backbone, **FIRSTP}),
                   "maxp": build_ranker("maxp", {"backbone": args.backbone, **MAXP})}
        posbias_load = (time.perf_counter() - start) / 2
        from sentence_transformers import CrossEncoder

        start = time.perf_counter()
        ce = CrossEncoder(resolve(args.backbone), num_labels=1, device=args.device)
        ce_load = time.perf_counter() - start
        systems = {name: CrossEncoderSystem(ce, data, args) if name == "crossencoder"
                   else PosbiasSystem(rankers[name.removesuffix("_eager")], tokenizer, store, data, args,
                                      onednn=not name.endswith("_eager")) for name in args.systems}
        print(f"reranking with {', '.join(systems)}", file=sys.stderr)
        rerank_results, runs = time_systems(systems, data, args)
        check = input_check(ce, rankers["firstp"], tokenizer, store, data, runs.get("firstp") or None, args) \
            if args.check_pairs else None
        del rankers, ce
        train = []
        geometries = {"firstp": FIRSTP, "maxp": MAXP,
                      "parade_attn": dict(zip(("max_query_tokens", "chunk_tokens", "stride", "max_doc_tokens"),
                                              args.parade_geometry))}
        for name in args.train:
            print(f"training steps of {name}", file=sys.stderr)
            train.append(time_training(name, geometries[name], tokenizer, store, data, args))
            print(f"  {train[-1]['steps_per_s']:.3f} steps/s", file=sys.stderr)
        store.close()
    finally:
        if not args.workdir:
            shutil.rmtree(workdir, ignore_errors=True)
    machine["load_average_at_end"] = os.getloadavg()
    result = {"machine": machine, "args": vars(args), "store": store_info, "tokens_per_pair": tokens,
              "rerank": rerank_results, "check": check, "train": train,
              "load_s": {"posbias": posbias_load, "crossencoder": ce_load}, "total_s": time.perf_counter() - started}
    report = markdown(result)
    result["markdown"] = report
    if args.json:
        from posbias.io import atomic_write

        with atomic_write(args.json) as out:
            json.dump(result, out, indent=2)
            out.write("\n")
    if args.markdown:
        from posbias.io import atomic_write

        command = " ".join(["benchmarks/rerank_throughput.py", *sys.argv[1:]])
        with atomic_write(args.markdown) as out:
            out.write(f"# Rerank throughput\n\n`{command}`\n\n{report}\n")
    print(report)


if __name__ == "__main__":
    main()
