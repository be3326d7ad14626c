"""Training throughput of one optimizer step, before and after, in one run (issue 33).

    python benchmarks/training_throughput.py                       # the paper's MaxP geometry, on this machine
    python benchmarks/training_throughput.py --device cuda --precision bf16 --peak-tflops 989
    python benchmarks/training_throughput.py --ranker firstp --chunk 477 --doc 477 --pairs 16 --steps 3

The study's recipe: 16 pairs a step (a positive and a hard negative each), the margin loss summed, AdamW; MaxP
reads the query (32 tokens) and three chunks of 477 document tokens. Each mode trains the same freshly built
ranker for `--warmup` + `--steps` steps on the same synthetic pairs (random word pieces; documents of random
lengths up to `--doc` tokens, queries up to 32), and reports per step:

- seconds and real tokens per second (tokens that are neither padding nor a padded query's masked slots);
- the real-token share: real tokens over the token slots the backbone computed;
- host synchronisation points: the operations that make the host wait for the device on CUDA (`.item()`,
  `.tolist()`, a tensor's truth value or number, `nonzero`, boolean-mask indexing), counted with a
  `TorchFunctionMode` on any device, so the CPU shows what a GPU would wait on;
- FLOPs from the backbone's own configuration (2 x the linear layers' weights per token, 4 x width x hidden per
  token for attention, per layer; three times that for a training step), as TFLOP/s over the slots computed,
  and utilisation against `--peak-tflops` where given (on real tokens, as model FLOPs utilisation counts);
- on CUDA, the peak allocated memory.

Modes: `micro` (the recipe as the study ran it: `grad_accum` passes of `batch_size` pairs, here 16 of 1),
`one_pass` (`training.one_pass`: the step's pairs in one pass) and `one_pass_packed` (that pass packed: only real
tokens, attention cut at each chunk's bounds; `training.packing`, on CUDA by default; on a CPU the packed attention
is the sequence-by-sequence reference). Queries are padded to 32 masked slots (`pad_query`, as the study's models;
`--no-pad-query` turns that off). Ratios are against `micro`, measured in the same run. Nothing here is a test;
numbers go in benchmarks/timings.md (CPU) or benchmarks/gpu.md (GPU).
"""

from __future__ import annotations

import argparse
import json
import platform
import time
from pathlib import Path

import numpy as np
import torch
from torch.overrides import TorchFunctionMode

# The training settings and the encoder's packing of each mode.
MODES = {"micro": ({"batch_size": 1, "one_pass": False}, False),
         "one_pass": ({"batch_size": 1, "one_pass": True}, False),
         "one_pass_packed": ({"batch_size": 1, "one_pass": True}, True)}


class SyncCounter(TorchFunctionMode):
    """Counts the calls that wait for the device on CUDA (what `torch.cuda.set_sync_debug_mode` warns of). On a GPU
    only those on a tensor in device memory count; on a CPU every tensor is in host memory, so the count is an upper
    bound: it includes the encoder's planning on the batch's host copy (a `nonzero` and a `tolist` a pass), which
    waits for nothing on a GPU."""

    WAITS = {torch.Tensor.item, torch.Tensor.tolist, torch.Tensor.__bool__, torch.Tensor.__int__,
             torch.Tensor.__float__, torch.Tensor.__index__, torch.Tensor.nonzero, torch.nonzero,
             torch.masked_select, torch.Tensor.masked_select, torch.Tensor.cpu}

    def __init__(self, device: torch.device):
        super().__init__()
        self.count, self.device = 0, device

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        waits = func in self.WAITS or (func in (torch.Tensor.__getitem__, torch.Tensor.__setitem__)
                                       and _has_bool_index(args[1] if len(args) > 1 else None))
        on_device = self.device.type == "cpu" or any(isinstance(a, torch.Tensor) and a.device.type != "cpu"
                                                     for a in args)
        if waits and on_device:
            self.count += 1
        return func(*args, **kwargs)


def _has_bool_index(index) -> bool:
    items = index if isinstance(index, tuple) else (index,)
    return any(isinstance(item, torch.Tensor) and item.dtype == torch.bool for item in items)


class SlotCounter:
    """Token slots and real tokens the backbone computed, and their FLOPs: it wraps the encoder's `encode`, which
    every group of chunks goes through (the first-token path included), padded to the group's width or packed."""

    def __init__(self, encoder):
        config = encoder.backbone.config
        self.layers, self.hidden = config.num_hidden_layers, config.hidden_size
        self.intermediate = config.intermediate_size
        self.reset()
        original = encoder.encode

        def counted(inputs, packed=None):
            mask = inputs["attention_mask"]
            # tensors, read after the step (outside the sync count): each chunk's real tokens, and the width each
            # of its tokens attends over (the row's, padded; its own chunk's, packed)
            lengths = mask.sum(dim=1)
            self.parts.append((lengths, None if packed is not None else mask.shape[1]))
            return original(inputs, packed)

        encoder.encode = counted

    def reset(self) -> None:
        self.parts = []

    def totals(self) -> dict:
        per_token = 2 * self.layers * (4 * self.hidden ** 2 + 2 * self.hidden * self.intermediate)
        attention = 4 * self.layers * self.hidden  # per token and attended token: the scores and the weighted sum
        slots = flops = real = real_flops = 0.0
        for lengths, width in self.parts:
            lengths = lengths.double()
            real += float(lengths.sum())
            # forward and backward: three times the forward's; real FLOPs attend over the chunk's own tokens
            real_flops += 3 * float((lengths * (per_token + attention * lengths)).sum())
            if width is None:  # packed: only real tokens computed
                slots, flops = slots + float(lengths.sum()), flops + 3 * float((lengths * (per_token + attention
                                                                                           * lengths)).sum())
            else:
                slots += len(lengths) * width
                flops += 3 * len(lengths) * width * (per_token + attention * width)
        return {"slots": slots, "real": real, "flops": flops, "real_flops": real_flops}


def synthetic_pairs(tokenizer, n_pairs: int, doc_tokens: int, query_tokens: int, seed: int):
    """Queries (texts of random word pieces) and documents (random token ids of random lengths)."""
    rng = np.random.default_rng(seed)
    vocabulary = [t for t in tokenizer.get_vocab() if t.isalpha() and len(t) > 2]
    queries = {f"q{i}": " ".join(rng.choice(vocabulary, rng.integers(4, query_tokens))) for i in range(n_pairs)}
    low, high = 1000, tokenizer.vocab_size
    documents = {f"d{i}": rng.integers(low, high, rng.integers(doc_tokens // 4, doc_tokens + 1)).astype(np.int32)
                 for i in range(2 * n_pairs)}
    triples = [(f"q{i}", f"d{2 * i}", f"d{2 * i + 1}") for i in range(n_pairs)]
    return queries, documents, triples


class ArrayStore:
    """What the loop reads of a token store: a document's first `limit` token ids."""

    def __init__(self, documents):
        self.documents = documents

    def ids(self, doc, limit):
        return self.documents[doc][:limit]


def run_mode(mode: str, args, device, dtype) -> dict:
    from posbias.backbones import load_tokenizer
    from posbias.rankers.registry import build_ranker
    from posbias.training.loop import optimizer_step, seed_everything, step_backward
    from posbias.training.recipe import TrainingSettings

    seed_everything(0)
    options, packing = MODES[mode]
    ranker = build_ranker(args.ranker, dict(backbone=args.backbone, max_query_tokens=args.query, dropout=0.0,
                                            chunk_tokens=args.chunk, stride=args.chunk, max_doc_tokens=args.doc,
                                            pad_query=args.pad_query,
                                            **({"backbone_layers": args.layers} if args.layers else {})))
    ranker.to(device).train()
    ranker.encoder.packing = packing
    tokenizer = load_tokenizer(args.backbone)
    chunker = ranker.featurizer(tokenizer)
    settings = TrainingSettings(lr=2e-5, head_lr=1e-3, epochs=1, grad_accum=args.pairs, margin=1.0,
                                warmup_fraction=0.0, weight_decay=0.0, freeze_embeddings=False, device=str(device),
                                precision=args.precision, max_grad_norm=None, loss_reduction="sum", **options)
    queries, documents, triples = synthetic_pairs(tokenizer, args.pairs * (args.warmup + args.steps), args.doc,
                                                  args.query, seed=1)
    store = ArrayStore(documents)
    optimizer = torch.optim.AdamW([p for p in ranker.parameters() if p.requires_grad], lr=settings.lr,
                                  fused=device.type == "cuda")
    scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer, lambda step: 1.0)
    scaler = torch.amp.GradScaler(device.type, enabled=dtype == torch.float16)
    counter = SlotCounter(ranker.encoder)
    seconds, syncs = [], []
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    for step in range(args.warmup + args.steps):
        part = triples[step * args.pairs:(step + 1) * args.pairs]
        if step == args.warmup:
            counter.reset()
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        started = time.perf_counter()
        # the forward and backward passes and the loop's one read of the loss; not the optimizer, whose step
        # counters live on the host on any device (their `.item()` waits for nothing; fused AdamW on CUDA has none)
        with SyncCounter(device) as waits:
            loss = step_backward(ranker, chunker, queries, store, args.doc, part, settings, device, dtype, scaler)
            float(loss)
        optimizer_step(ranker, optimizer, scheduler, scaler, settings.max_grad_norm)
        if device.type == "cuda":
            torch.cuda.synchronize(device)
        if step >= args.warmup:
            seconds.append(time.perf_counter() - started)
            syncs.append(waits.count)
    total, counted = sum(seconds), counter.totals()
    result = {"mode": mode, "steps": args.steps, "seconds_per_step": total / args.steps,
              "real_tokens_per_second": counted["real"] / total,
              "real_token_share": counted["real"] / counted["slots"], "host_syncs_per_step": float(np.mean(syncs)),
              "tflops_computed": counted["flops"] / total / 1e12, "tflops_real": counted["real_flops"] / total / 1e12}
    if args.peak_tflops:
        result["utilisation"] = result["tflops_real"] / args.peak_tflops
    if device.type == "cuda":
        result["peak_memory_gib"] = torch.cuda.max_memory_allocated(device) / 2 ** 30
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--ranker", default="maxp")
    parser.add_argument("--backbone", default="offline:all-MiniLM-L6-v2")
    parser.add_argument("--layers", type=int, help="keep only the first N layers of the backbone")
    parser.add_argument("--query", type=int, default=32, help="query tokens")
    parser.add_argument("--pad-query", action=argparse.BooleanOptionalAction, default=True,
                        help="pad queries to --query masked slots, as the study's trained models do (pad_query)")
    parser.add_argument("--chunk", type=int, default=477, help="document tokens per chunk")
    parser.add_argument("--doc", type=int, default=1431, help="document tokens read (MaxP: three chunks)")
    parser.add_argument("--pairs", type=int, default=16, help="pairs per optimizer step")
    parser.add_argument("--steps", type=int, default=2)
    parser.add_argument("--warmup", type=int, default=1)
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--precision", default="fp32", choices=["fp32", "bf16", "fp16"])
    parser.add_argument("--threads", type=int, help="CPU threads (default: torch's)")
    parser.add_argument("--peak-tflops", type=float, help="the device's peak at --precision, for utilisation")
    parser.add_argument("--modes", nargs="+", default=list(MODES), choices=list(MODES))
    parser.add_argument("--out", help="write the results as JSON here")
    args = parser.parse_args()
    from posbias.device import autocast_dtype, pick_device

    if args.threads:
        torch.set_num_threads(args.threads)
    device = pick_device(args.device)
    dtype = autocast_dtype(device, args.precision)
    results = [run_mode(mode, args, device, dtype) for mode in args.modes]
    base = results[0]
    print(f"{args.ranker}, query {args.query}, chunks of {args.chunk}, {args.doc} document tokens, {args.pairs} "
          f"pairs a step, {args.backbone}{f' ({args.layers} layers)' if args.layers else ''}, {device}, "
          f"{args.precision}, torch {torch.__version__}, {torch.get_num_threads()} threads, {platform.processor()}")
    print("| mode | s/step | real tokens/s | x | real-token share | host syncs/step | TFLOP/s computed | peak GiB |")
    print("|---|---|---|---|---|---|---|---|")
    for r in results:
        print(f"| {r['mode']} | {r['seconds_per_step']:.2f} | {r['real_tokens_per_second']:.0f} | "
              f"{r['real_tokens_per_second'] / base['real_tokens_per_second']:.2f} | {r['real_token_share']:.3f} | "
              f"{r['host_syncs_per_step']:.0f} | {r['tflops_computed']:.3f} | "
              f"{r.get('peak_memory_gib', float('nan')):.2f} |")
    if args.out:
        Path(args.out).write_text(json.dumps({"args": vars(args), "results": results}, indent=1))


if __name__ == "__main__":
    main()
