"""Why bf16 autocast ran slower than fp32 on an H200 (benchmarks/gpu.md): the same MiniLM-geometry BERT
(random weights, no download), batch 32 x 512 with padding, timed in fp32, under torch.autocast(bf16), and with
bf16 weights, forward alone and forward + backward; then the profiler's top operators of the autocast forward.
With --widths N: batches of N distinct widths in turn (posbias's encoder runs one backbone call per chunk width),
each new width once, in fp32 and bf16 autocast, with PyTorch's cuDNN attention backend on and off.

    python benchmarks/gpu_autocast_probe.py [--device cuda] [--out probe.json] [--widths 60]
"""

from __future__ import annotations

import argparse
import json
import time

import torch
from transformers import BertConfig, BertModel


def batch(device, size=32, length=512, seed=0):
    generator = torch.Generator().manual_seed(seed)
    ids = torch.randint(1000, 30000, (size, length), generator=generator)
    lengths = torch.randint(length // 2, length + 1, (size,), generator=generator)
    mask = (torch.arange(length)[None, :] < lengths[:, None]).long()
    return ids.to(device), mask.to(device), torch.zeros_like(ids).to(device)


def timed(fn, device, repeats=20, warmup=5):
    for _ in range(warmup):
        fn()
    if device.type == "cuda":
        torch.cuda.synchronize()
    start = time.perf_counter()
    for _ in range(repeats):
        fn()
    if device.type == "cuda":
        torch.cuda.synchronize()
    return (time.perf_counter() - start) / repeats * 1000


def varying_widths(model, device, size: int, length: int, n_widths: int) -> dict:
    """Milliseconds per batch over `n_widths` batches, each of a width not seen before in that setting (a fresh
    range per setting, so no setting reuses another's shapes), as a reranking job meets new chunk widths."""
    results = {}
    settings = [("fp32", False, True), ("autocast_bf16_cudnn_on", True, True), ("autocast_bf16_cudnn_off", True, False),
                ("fp32_again", False, True)]
    for i, (name, autocast, cudnn) in enumerate(settings):
        torch.backends.cuda.enable_cudnn_sdp(cudnn)
        widths = [length - 4 * n_widths * (i + 1) + 4 * k for k in range(n_widths)]  # disjoint per setting
        batches = [batch(device, size, w, seed=k) for k, w in enumerate(widths)]
        if device.type == "cuda":
            torch.cuda.synchronize()
        start = time.perf_counter()
        for ids, mask, types in batches:
            with torch.inference_mode(), torch.autocast(device.type, torch.bfloat16, enabled=autocast):
                model(input_ids=ids, attention_mask=mask, token_type_ids=types)
        if device.type == "cuda":
            torch.cuda.synchronize()
        results[f"{name}_ms_per_batch"] = (time.perf_counter() - start) / n_widths * 1000
        results[f"{name}_widths"] = [min(widths), max(widths)]
    torch.backends.cuda.enable_cudnn_sdp(True)
    return results


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--device", default="cuda")
    parser.add_argument("--out")
    parser.add_argument("--size", type=int, default=32, help="sequences per batch")
    parser.add_argument("--length", type=int, default=512, help="tokens per sequence (padded)")
    parser.add_argument("--widths", type=int, default=0, help="only the varying-width test, with this many widths")
    args = parser.parse_args()
    device = torch.device(args.device)
    config = BertConfig(hidden_size=384, num_hidden_layers=6, num_attention_heads=12, intermediate_size=1536,
                        vocab_size=30522, attn_implementation="sdpa")
    torch.manual_seed(0)
    model = BertModel(config).to(device)
    ids, mask, types = batch(device, args.size, args.length)
    results = {}
    if args.widths:
        results = varying_widths(model, device, args.size, args.length, args.widths)
        print(json.dumps(results, indent=1), flush=True)
        if args.out:
            with open(args.out, "w") as handle:
                json.dump(results, handle, indent=1)
        return

    def forward(model_, with_mask=True, autocast=False):
        def run():
            with torch.inference_mode(), torch.autocast(device.type, torch.bfloat16, enabled=autocast):
                model_(input_ids=ids, attention_mask=mask if with_mask else None, token_type_ids=types)
        return run

    def train_step(model_, autocast=False):
        def run():
            with torch.autocast(device.type, torch.bfloat16, enabled=autocast):
                out = model_(input_ids=ids, attention_mask=mask, token_type_ids=types).last_hidden_state[:, 0]
            out.float().sum().backward()
        return run

    results["forward_fp32_ms"] = timed(forward(model), device)
    results["forward_autocast_bf16_ms"] = timed(forward(model, autocast=True), device)
    results["forward_fp32_nomask_ms"] = timed(forward(model, with_mask=False), device)
    results["forward_autocast_bf16_nomask_ms"] = timed(forward(model, with_mask=False, autocast=True), device)
    results["train_fp32_ms"] = timed(train_step(model), device, repeats=10)
    results["train_autocast_bf16_ms"] = timed(train_step(model, autocast=True), device, repeats=10)
    bf16 = BertModel(config).to(device, torch.bfloat16)
    results["forward_bf16_weights_ms"] = timed(forward(bf16), device)
    print(json.dumps(results, indent=1), flush=True)

    activities = [torch.profiler.ProfilerActivity.CPU] + (
        [torch.profiler.ProfilerActivity.CUDA] if device.type == "cuda" else [])
    for name, fn in (("autocast_bf16", forward(model, autocast=True)), ("fp32", forward(model))):
        with torch.profiler.profile(activities=activities) as prof:
            for _ in range(5):
                fn()
            if device.type == "cuda":
                torch.cuda.synchronize()
        sort = "cuda_time_total" if device.type == "cuda" else "cpu_time_total"
        table = prof.key_averages().table(sort_by=sort, row_limit=12)
        results[f"profile_{name}"] = table
        print(f"--- {name}, 5 forwards, by {sort}\n{table}", flush=True)
    if args.out:
        with open(args.out, "w") as handle:
            json.dump(results, handle, indent=1)


if __name__ == "__main__":
    main()
