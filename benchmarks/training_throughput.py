"""Training throughput as training runs: the study's geometries and recipe through `posbias.training.loop.train`.

    python benchmarks/training_throughput.py --quick                        # every preset and mode, tiny, CPU
    python benchmarks/training_throughput.py --backbone bert-base --device cuda --precision bf16 --out DIR
    python benchmarks/training_throughput.py --backbone bert-base --device cuda --precision bf16 \\
        --presets maxp_150 --modes --memory-budget 80        # only the largest micro-batch within 80 GiB

What is timed is `train` itself (the loop a `posbias train` job runs: its sampler, its token store reads, its
background batch preparation, its packing and compile settings, AdamW, the one loss read a step), on synthetic
pairs in a real token store. Nothing is re-implemented here; the measurements hang on hooks:
- seconds a step: the time between consecutive optimizer steps (a global optimizer hook; the loop builds its own
  optimizer), after `--warmup` steps; on CUDA the loop's loss read waits for each step's work, so that is the
  device's step time too;
- tokens and FLOPs: the encoder's `encode`, which every group of chunks goes through, padded or packed, is wrapped
  to note each chunk's real tokens and the width it was computed at (`SlotCounter`);
- host syncs a step (`SyncCounter`): in the last warm-up step (with --warmup 1 the first, set-up included), the
  calls that make the host wait for the device on CUDA (`.item()`, `.tolist()`, a tensor's truth value, `nonzero`,
  boolean-mask indexing), counted with a `TorchFunctionMode`; the optimizer's own step is left out (its counters live
  on the host; fused AdamW on CUDA has none). On a CPU every tensor is in host memory, so the count is an upper
  bound. Not counted when compiled (a mode
  around compiled code would change what is compiled);
- peak memory: `torch.cuda.max_memory_allocated` on CUDA; on a CPU the process's peak resident set (VmHWM, reset
  before each run through /proc/self/clear_refs; `resource`'s lifetime peak where that cannot be reset).

Presets (`PRESETS`): the study's models from config/paper/common.yaml with the backbone swapped: query padded to 32
(`pad_query`), `head_dropout` 0.1, and
- `firstp`: FirstP 512 (one chunk: 32 + 477 document tokens + 3 special tokens);
- `maxp_150`: MaxP, windows of 150 every 100 tokens over the first 1431 (the study's MaxP);
- `maxp_477`: MaxP over three disjoint chunks of 477 (the geometry earlier runs of this benchmark used);
- `parade_attn`: PARADE Attn, windows of 150 every 75 over 1431;
- `longp_4k`: LongP on a Longformer (attention window 512) reading 4061 document tokens: 4096 positions.
Documents: lognormal lengths with the median at 1431 tokens (about half reach the study's 1431 cap; scale.py's mix),
for `longp_4k` at 4061; queries of 3 to 12 words. The recipe from config/paper/recipe.yaml: `batch_size` 1 pair a
pass, `grad_accum` 16, summed margin loss, AdamW, the models' learning rates. Attention dropout is the backbone's
own (BERT's 0.1; `--dropout` replaces it, as a model's `dropout` argument does): with dropout, packed attention runs
over nested tensors, not varlen FlashAttention, which is what training runs.

Backbones (`--backbone`), random weights built from a config (nothing downloaded), the MiniLM WordPiece tokenizer:
`tiny` (2 layers, hidden 64: for the CPU), `minilm` (the offline MiniLM-L6's real weights; the LongP Longformer of
its shape), `bert-base` (12 layers, hidden 768, 12 heads, intermediate 3072, vocabulary 30522: the study's size;
LongP: a Longformer of that size).

Modes (`MODES`): `micro` (the recipe: 16 passes of 1 pair, padded length groups), `micro_packed` (the same packed:
`training.packing: auto` on CUDA; the default is padded since this benchmark's H200 run), `one_pass`,
`one_pass_packed`, `no_prefetch` (one pass packed, the batches prepared in the loop), `compiled` (one pass packed,
`torch.compile`; skipped by --quick on a CPU: minutes of inductor). Ratios are against `micro` in the same run.

Reported per preset and mode: seconds a step, real tokens/s (tokens that are neither a row's padding nor a padded
query's masked slots), the real-token share of the slots computed, host syncs a step, peak memory, model TFLOP/s on
real tokens and the model-FLOP utilisation (MFU) against the card's datasheet peak and, given
`--measured-peak-tflops`, against a measured matmul peak. FLOPs from the backbone's config: per token and layer
2 x the linear layers' weights plus 4 x hidden x the tokens it attends over (a Longformer: its window); a training
step three times the forward. Every layer is counted for every token (the [CLS] shortcut computes less of the last
layer, so MFU is over-stated by at most 1/layers).

`--memory-budget GIB`: for each preset, the largest micro-batch (pairs a pass) whose training steps fit GIB of memory:
doubling from 1, then bisecting, two steps of one pass each (the second with AdamW's states), an out-of-memory error
counting as not fitting (on CUDA the allocator is capped at GIB, so a trial fails fast instead of using the card).

Output (`--out DIR`): training_throughput.json (everything, written after each run), training_throughput.csv and
training_throughput.md. Nothing here is a test; figures go in benchmarks/timings.md (CPU) or benchmarks/gpu.md (GPU).
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import gc
import json
import os
import platform
import resource
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch
from torch.optim.optimizer import register_optimizer_step_post_hook, register_optimizer_step_pre_hook
from torch.overrides import TorchFunctionMode

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "benchmarks"))
from scale import single_token_words  # noqa: E402  (benchmarks/scale.py)

TOKENIZER = "offline:all-MiniLM-L6-v2"  # the bert-base-uncased WordPiece vocabulary (30522)
STUDY_CAP = 1431
LONG_POSITIONS = 4096
LONG_DOC = LONG_POSITIONS - 32 - 3  # [CLS] query(32) [SEP] document [SEP]
MIN_DOC = 20


@dataclass(frozen=True)
class Preset:
    label: str
    model: str  # the model in config/paper/common.yaml whose ranker and arguments it takes
    overrides: dict
    long: bool = False  # a long-sequence (Longformer) backbone


PRESETS = {
    "firstp": Preset("FirstP 512", "firstp", {}),
    "maxp_150": Preset("MaxP 150/100", "maxp", {}),
    "maxp_477": Preset("MaxP 3 x 477", "maxp", {"chunk_tokens": 477, "stride": 477}),
    "parade_attn": Preset("PARADE Attn 150/75", "parade_attn", {}),
    "longp_4k": Preset("LongP 4k (Longformer)", "longp_longformer",
                       {"chunk_tokens": LONG_DOC, "stride": LONG_DOC, "max_doc_tokens": LONG_DOC}, long=True),
}

# Each mode's training settings beside the recipe's.
MODES = {
    "micro": {"one_pass": False, "packing": False},
    "micro_packed": {"one_pass": False, "packing": True},
    "one_pass": {"one_pass": True, "packing": False},
    "one_pass_packed": {"one_pass": True, "packing": True},
    "no_prefetch": {"one_pass": True, "packing": True, "prefetch": False},
    "compiled": {"one_pass": True, "packing": True, "compile": True},
}

# Dense (no sparsity) tensor-core peaks in TFLOP/s, from NVIDIA's datasheets (H100/H200 SXM: "BF16 Tensor Core 1,979
# TFLOPS*", "TF32 989*", "FP32 67", * with sparsity, so dense is half; H100 PCIe 1,513* / 756* / 51; A100: 312 / 156 /
# 19.5 dense). Keys are matched against torch.cuda.get_device_name.
DATASHEET_TFLOPS = {
    "H200": {"bf16": 989.0, "tf32": 494.5, "fp32": 67.0},
    "H100 PCIe": {"bf16": 756.0, "tf32": 378.0, "fp32": 51.0},
    "H100": {"bf16": 989.0, "tf32": 494.5, "fp32": 67.0},
    "A100": {"bf16": 312.0, "tf32": 156.0, "fp32": 19.5},
}


# --- the pieces the measurements hang on -----------------------------------------------------------------------

class SyncCounter(TorchFunctionMode):
    """Counts the calls that wait for the device on CUDA (what `torch.cuda.set_sync_debug_mode` warns of), while
    `counting`. On a GPU only those on a tensor in device memory count; on a CPU every tensor is in host memory, so
    the count is an upper bound: it includes the encoder's planning on the batch's host copy, which waits for nothing
    on a GPU."""

    WAITS = {torch.Tensor.item, torch.Tensor.tolist, torch.Tensor.__bool__, torch.Tensor.__int__,
             torch.Tensor.__float__, torch.Tensor.__index__, torch.Tensor.nonzero, torch.nonzero,
             torch.masked_select, torch.Tensor.masked_select, torch.Tensor.cpu}

    def __init__(self, device: torch.device):
        super().__init__()
        self.count, self.device, self.counting = 0, device, False

    def __torch_function__(self, func, types, args=(), kwargs=None):
        kwargs = kwargs or {}
        if self.counting and self._waits(func, args):
            self.count += 1
        return func(*args, **kwargs)

    def _waits(self, func, args) -> bool:
        waits = func in self.WAITS or (func in (torch.Tensor.__getitem__, torch.Tensor.__setitem__)
                                       and _has_bool_index(args[1] if len(args) > 1 else None))
        return waits and (self.device.type == "cpu" or any(isinstance(a, torch.Tensor) and a.device.type != "cpu"
                                                           for a in args))


def _has_bool_index(index) -> bool:
    items = index if isinstance(index, tuple) else (index,)
    return any(isinstance(item, torch.Tensor) and item.dtype == torch.bool for item in items)


def attended_width(config, width: torch.Tensor | int):
    """The tokens each token attends over in a sequence of `width`: all of them, or a Longformer's window."""
    window = getattr(config, "attention_window", None)
    if window is None:
        return width
    window = max(window) if isinstance(window, (list, tuple)) else window
    return torch.clamp(width, max=window + 1) if isinstance(width, torch.Tensor) else min(width, window + 1)


class SlotCounter:
    """Token slots and real tokens the backbone computed, and their FLOPs: it wraps the encoder's `encode`, which
    every group of chunks goes through (the first-token path included), padded to the group's width or packed."""

    def __init__(self, encoder):
        self.config = config = encoder.backbone.config
        # forward FLOPs per token: the linear layers (q, k, v, output; two feed-forward matrices), per layer
        self.per_token = 2 * config.num_hidden_layers * (4 * config.hidden_size ** 2
                                                         + 2 * config.hidden_size * config.intermediate_size)
        self.per_attended = 4 * config.num_hidden_layers * config.hidden_size  # scores and weighted sum
        self.parts: list = []
        original = encoder.encode

        def counted(inputs, packed=None):
            # device tensors, read after the run: each chunk's real tokens, and the row width it was computed at
            self.parts.append((inputs["attention_mask"].sum(dim=1), None if packed is not None
                               else inputs["attention_mask"].shape[1]))
            return original(inputs, packed)

        encoder.encode = counted

    def totals(self) -> dict:
        slots = real = flops = 0.0
        for lengths, width in self.parts:
            lengths = lengths.double().cpu()
            real += float(lengths.sum())
            # model FLOPs on real tokens, each attending over its own chunk; x 3 for forward and backward
            flops += 3 * float((lengths * (self.per_token + self.per_attended
                                           * attended_width(self.config, lengths))).sum())
            slots += float(lengths.sum()) if width is None else len(lengths) * width
        return {"slots": slots, "real": real, "flops": flops}


class StepHooks:
    """While entered: the time at the end of every optimizer step, and the sync counter paused during the
    optimizer's own step. The hooks are global (the loop builds its own optimizer); only `train` steps here."""

    def __init__(self, on_step=None, syncs: SyncCounter | None = None):
        self.times: list[float] = []
        self.on_step, self.syncs = on_step, syncs

    def _before(self, optimizer, args, kwargs):
        if self.syncs:
            self.paused, self.syncs.counting = self.syncs.counting, False

    def _after(self, optimizer, args, kwargs):
        self.times.append(time.perf_counter())
        if self.syncs:
            self.syncs.counting = self.paused
        if self.on_step:
            self.on_step(len(self.times))

    def __enter__(self):
        self.handles = [register_optimizer_step_pre_hook(self._before), register_optimizer_step_post_hook(self._after)]
        return self

    def __exit__(self, *exc):
        for handle in self.handles:
            handle.remove()
        return False


class PeakMemory:
    """The peak memory of what runs inside: allocated on CUDA; on a CPU the resident set (VmHWM, reset on entry)."""

    def __init__(self, device: torch.device):
        self.device = device

    def __enter__(self):
        if self.device.type == "cuda":
            torch.cuda.reset_peak_memory_stats(self.device)
        else:
            with contextlib.suppress(OSError):  # Linux 4.0 and later: "5" resets the peak resident set
                Path("/proc/self/clear_refs").write_text("5")
        return self

    def __exit__(self, *exc):
        return False

    def gib(self) -> float:
        if self.device.type == "cuda":
            return torch.cuda.max_memory_allocated(self.device) / 2 ** 30
        with contextlib.suppress(OSError):
            for line in Path("/proc/self/status").read_text().splitlines():
                if line.startswith("VmHWM:"):
                    return int(line.split()[1]) / 2 ** 20  # kB
        return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2 ** 20  # kB on Linux; the process's lifetime


def out_of_memory(error: BaseException) -> bool:
    return isinstance(error, torch.OutOfMemoryError) or "out of memory" in str(error).lower()


# --- backbones, data, the recipe -------------------------------------------------------------------------------

def backbone_shape(name: str) -> dict:
    shapes = {"tiny": dict(num_hidden_layers=2, hidden_size=64, num_attention_heads=2, intermediate_size=256),
              "minilm": dict(num_hidden_layers=6, hidden_size=384, num_attention_heads=12, intermediate_size=1536),
              "bert-base": dict(num_hidden_layers=12, hidden_size=768, num_attention_heads=12, intermediate_size=3072)}
    return shapes[name]


def make_backbones(name: str, workdir: Path) -> dict[str, str]:
    """The chunked rankers' backbone and the LongP Longformer, as Hugging Face directories of random weights built
    from a config (MiniLM: its shipped weights) with the MiniLM tokenizer; dropout as each config's default (0.1)."""
    from transformers import AutoTokenizer, BertConfig, BertModel, LongformerConfig, LongformerModel

    from posbias.backbones import resolve

    tokenizer = AutoTokenizer.from_pretrained(resolve(TOKENIZER))
    shape = dict(vocab_size=tokenizer.vocab_size, **backbone_shape(name))
    made = {}
    for kind in ("chunked", "long"):
        if kind == "chunked" and name == "minilm":
            made[kind] = TOKENIZER
            continue
        path = workdir / f"{name}-{kind}"
        if not (path / "config.json").exists():
            torch.manual_seed(0)
            model = (BertModel(BertConfig(**shape, max_position_embeddings=512)) if kind == "chunked" else
                     # positions count from pad_token_id + 1 (RoBERTa-style): 4096 positions need 4098 rows
                     LongformerModel(LongformerConfig(**shape, attention_window=512,
                                                      pad_token_id=tokenizer.pad_token_id,
                                                      max_position_embeddings=LONG_POSITIONS + 2, type_vocab_size=1)))
            model.save_pretrained(path)
            tokenizer.save_pretrained(path)
            del model
        made[kind] = str(path)
    return made


def paper_config() -> tuple[dict, dict]:
    """The study's models (config/paper/common.yaml) and its training recipe (config/paper/recipe.yaml)."""
    import yaml

    models = yaml.safe_load((ROOT / "config/paper/common.yaml").read_text())["models"]
    recipe = yaml.safe_load((ROOT / "config/paper/recipe.yaml").read_text())["training"]
    return models, recipe


class Data:
    """A token store of synthetic documents made of single-token words (so lengths are exact): a pool of
    MS MARCO-like lengths (median at the 1431 cap) and one for LongP (median at 4061), and queries of 3-12 words;
    each query's training pair is a positive and a negative drawn from its preset's pool."""

    def __init__(self, workdir: Path, pool: int, seed: int = 0):
        from posbias.backbones import load_tokenizer
        from posbias.data.token_store import TokenStore, build_token_store
        from posbias.io import write_documents

        tokenizer = load_tokenizer(TOKENIZER)
        self.words = single_token_words(tokenizer)
        self.rng = np.random.default_rng(seed)
        texts = {}
        for kind, median in (("m", STUDY_CAP), ("l", LONG_DOC)):
            lengths = np.clip(np.rint(self.rng.lognormal(np.log(median), 1.0, pool)), MIN_DOC, median)
            texts.update({f"{kind}{i:05d}": self.text(int(n)) for i, n in enumerate(lengths)})
        write_documents(workdir / "docs.jsonl", ({"id": d, "text": t} for d, t in texts.items()))
        build_token_store(workdir / "docs.jsonl", workdir / "tokens", TOKENIZER, cap=LONG_DOC, progress=False)
        self.store = TokenStore(workdir / "tokens")
        self.pools = {kind: self.store.numbers([d for d in texts if d[0] == kind]) for kind in "ml"}

    def text(self, words: int) -> str:
        return " ".join(self.words[self.rng.integers(len(self.words), size=words)])

    def pairs(self, n: int, long: bool) -> tuple[dict, dict, dict]:
        """`n` queries (texts), their qrels and candidates (store numbers: the positive, then the negative)."""
        pool = self.pools["l" if long else "m"]
        queries = {f"q{i:06d}": self.text(int(self.rng.integers(3, 13))) for i in range(n)}
        qrels, candidates = {}, {}
        for qid in queries:
            positive, negative = self.rng.choice(pool, 2, replace=False)
            qrels[qid] = {self.store.doc_id(int(positive)): 1}
            candidates[qid] = np.array([positive, negative], dtype=np.int32)
        return queries, qrels, candidates


def paper_mode(preset: str) -> str:
    """The mode (`MODES`) the paper config trains a preset's model in: its `one_pass` and `packing` over the recipe's,
    `packing` off where neither sets it (TrainingSettings' default); a `pass_pairs` between the two has no mode here."""
    from posbias.training.recipe import TrainingSettings

    models, recipe = paper_config()
    training = {**recipe, **models[PRESETS[preset].model].get("training", {})}
    packed = training.get("packing", TrainingSettings.packing) in (True, "auto")
    return ("one_pass" if training.get("one_pass") else "micro") + ("_packed" if packed else "")


def settings_for(recipe: dict, model: dict, args, **mode) -> "TrainingSettings":
    """The study's recipe (batch_size, grad_accum, margin, summed loss, weight decay, no clipping) and the model's
    learning rates, on this device and precision, with a mode's execution settings."""
    from posbias.training.recipe import TrainingSettings

    keys = ("batch_size", "grad_accum", "margin", "loss_reduction", "weight_decay", "max_grad_norm")
    chosen = {key: recipe[key] for key in keys}
    chosen.update({key: mode.pop(key) for key in ("batch_size", "grad_accum") if key in mode})
    return TrainingSettings(lr=model["lr"], head_lr=model["head_lr"], epochs=1, warmup_fraction=0.0,
                            freeze_embeddings=False, device=args.device, precision=args.precision, **chosen, **mode)


def build(preset: Preset, models: dict, backbones: dict, args):
    from posbias.backbones import load_tokenizer
    from posbias.rankers.registry import build_ranker
    from posbias.training.loop import seed_everything

    model = models[preset.model]
    ranker_args = {**model["args"], **preset.overrides, "backbone": backbones["long" if preset.long else "chunked"]}
    ranker_args.pop("trust_remote_code", None)
    if args.dropout is not None:
        ranker_args["dropout"] = args.dropout
    seed_everything(0)
    return build_ranker(model["ranker"], ranker_args), load_tokenizer(ranker_args["backbone"]), model


def release(device: torch.device) -> None:
    gc.collect()
    if device.type == "cuda":
        torch.cuda.empty_cache()


# --- one run: a preset in a mode --------------------------------------------------------------------------------

def run_mode(name: str, mode: str, context: dict, args) -> dict:
    """`train` for `--warmup` + `--steps` steps: the last warm-up step with its host syncs counted, the rest timed."""
    from posbias.training.loop import train

    preset, device = PRESETS[name], context["device"]
    ranker, tokenizer, model = build(preset, context["models"], context["backbones"], args)
    settings = settings_for(context["recipe"], model, args, **MODES[mode],
                            **({"grad_accum": args.grad_accum} if args.grad_accum else {}))
    per_step = settings.batch_size * settings.grad_accum
    queries, qrels, candidates = context["data"].pairs(per_step * (args.warmup + args.steps), preset.long)
    counter = SlotCounter(ranker.encoder)
    # not around compiled code: a mode there changes what is compiled
    syncs = None if settings.compile else SyncCounter(device)

    def at_step(done: int) -> None:
        if syncs and done == args.warmup - 1:
            syncs.counting = True
        if done == args.warmup:  # from here on the steps are timed, without the counter's dispatch in the way
            counter.parts.clear()
            if syncs:
                syncs.__exit__(None, None, None)
                syncs.entered = False

    with PeakMemory(device) as peak, StepHooks(at_step, syncs) as hooks:
        if syncs:
            syncs.__enter__()
            syncs.entered, syncs.counting = True, args.warmup == 1
        try:
            summary = train(ranker, tokenizer, queries, context["data"].store, qrels, candidates, settings, seed=0,
                            progress=False, name=name)
        finally:
            if syncs and syncs.entered:  # stopped before the timed steps
                syncs.__exit__(None, None, None)
    seconds = hooks.times[-1] - hooks.times[args.warmup - 1]
    counted = counter.totals()
    result = {"preset": name, "mode": mode, "steps": args.steps, "pairs_per_step": per_step,
              "packed": bool(summary.get("packed")), "autocast": summary["autocast"],
              "seconds_per_step": seconds / args.steps, "real_tokens_per_second": counted["real"] / seconds,
              "real_token_share": counted["real"] / counted["slots"], "peak_memory_gib": peak.gib(),
              "model_tflops": counted["flops"] / seconds / 1e12,
              "host_syncs_per_step": None if syncs is None else float(syncs.count)}
    for key, peak_tflops in context["peaks"].items():
        result[f"mfu_{key}"] = result["model_tflops"] / peak_tflops
    del ranker
    release(device)
    return result


# --- the largest micro-batch that fits a memory budget ----------------------------------------------------------

def peak_of(name: str, pairs: int, context: dict, args) -> float | None:
    """Peak memory (GiB) of two training steps of one pass of `pairs` pairs (the second with AdamW's states), as
    training runs by default on this device (packing auto); None when it runs out of memory."""
    from posbias.training.loop import train

    preset, device = PRESETS[name], context["device"]
    ranker, tokenizer, model = build(preset, context["models"], context["backbones"], args)
    settings = settings_for(context["recipe"], model, args, batch_size=pairs, grad_accum=1)
    queries, qrels, candidates = context["data"].pairs(2 * pairs, preset.long)
    try:
        with PeakMemory(device) as peak:
            train(ranker, tokenizer, queries, context["data"].store, qrels, candidates, settings, seed=0,
                  progress=False)
        return peak.gib()
    except (RuntimeError, MemoryError) as error:
        if not out_of_memory(error):
            raise
        return None
    finally:
        del ranker
        release(device)


@contextlib.contextmanager
def allocator_capped(device: torch.device, gib: float):
    """On CUDA the caching allocator refuses to hold more than `gib`, so a trial past the budget fails at once."""
    if device.type != "cuda":
        yield
        return
    # `device: auto` gives plain "cuda"; the fraction needs an index (torch 2.11 refuses "cuda" without one)
    device = torch.device("cuda", torch.cuda.current_device() if device.index is None else device.index)
    total = torch.cuda.get_device_properties(device).total_memory / 2 ** 30
    torch.cuda.set_per_process_memory_fraction(min(1.0, gib / total), device)
    try:
        yield
    finally:
        torch.cuda.set_per_process_memory_fraction(1.0, device)


def largest_micro_batch(name: str, budget: float, context: dict, args) -> dict:
    """Doubling from 1 pair while a micro-batch fits `budget` GiB, then bisecting between the last fit and the first
    miss; stops at `--largest-limit` pairs or `--largest-seconds` (then the answer is a lower bound)."""
    trials, deadline = [], time.monotonic() + args.largest_seconds

    def fits(pairs: int) -> bool:
        peak = peak_of(name, pairs, context, args)
        trials.append({"pairs": pairs, "peak_gib": peak})
        return peak is not None and peak <= budget

    fit, miss, pairs = 0, None, 1
    with allocator_capped(context["device"], budget):
        while pairs <= args.largest_limit and time.monotonic() < deadline:
            if not fits(pairs):
                miss = pairs
                break
            fit, pairs = pairs, pairs * 2
        while miss is not None and miss - fit > 1 and time.monotonic() < deadline:
            middle = (fit + miss) // 2
            fit, miss = (middle, miss) if fits(middle) else (fit, middle)
    exact = miss is not None and miss - fit == 1
    return {"preset": name, "budget_gib": budget, "largest_pairs": fit, "exact": exact,
            "why_not_exact": None if exact else ("limit" if miss is None and pairs > args.largest_limit else "time"),
            "trials": trials}


# --- the device, the report -------------------------------------------------------------------------------------

def datasheet_peak(device: torch.device, precision: str, tf32: bool) -> tuple[float, str] | None:
    """The card's dense tensor-core peak at this precision (`DATASHEET_TFLOPS`), and its name; None off CUDA."""
    if device.type != "cuda":
        return None
    name = torch.cuda.get_device_name(device)
    kind = "bf16" if precision in ("bf16", "fp16", "auto") else ("tf32" if tf32 else "fp32")
    for key, peaks in DATASHEET_TFLOPS.items():
        if key in name:
            return peaks[kind], f"{key} {kind} datasheet"
    return None


def machine(device: torch.device, args) -> dict:
    import transformers

    info = {"python": platform.python_version(), "torch": torch.__version__, "transformers": transformers.__version__,
            "threads": torch.get_num_threads(), "cpu": platform.processor() or platform.machine(),
            "device": str(device), "precision": args.precision, "backbone": args.backbone,
            "dropout": "the backbone's own (0.1)" if args.dropout is None else args.dropout}
    if device.type == "cuda":
        info.update(gpu=torch.cuda.get_device_name(device), cuda=torch.version.cuda)
    return info


def number(value, digits: int = 3) -> str:
    if value is None:
        return "–"
    return f"{value:.{digits}f}" if isinstance(value, float) else str(value)


def markdown(report: dict) -> str:
    info = report["machine"]
    lines = [f"{info['backbone']} backbone, {info['device']}{' (' + info['gpu'] + ')' if 'gpu' in info else ''}, "
             f"{info['precision']}, attention dropout {info['dropout']}, torch {info['torch']}, {info['threads']} "
             f"threads; {report['args']['steps']} timed steps after {report['args']['warmup']}; the recipe's "
             f"{report['recipe']} pairs a step", ""]
    peaks = report["peaks"]
    mfu = [f"MFU ({key}, {value:g} TFLOP/s)" for key, value in peaks.items()]
    lines += ["| preset | mode | packed | s/step | real tokens/s | x micro | real-token share | host syncs/step | "
              "peak GiB | model TFLOP/s | " + " | ".join(mfu) + " |" if mfu else
              "| preset | mode | packed | s/step | real tokens/s | x micro | real-token share | host syncs/step | "
              "peak GiB | model TFLOP/s |",
              "|---" * (10 + len(mfu)) + "|"]
    base = {r["preset"]: r["real_tokens_per_second"] for r in report["results"] if r.get("mode") == "micro"
            and "error" not in r}
    for r in report["results"]:
        if "error" in r:
            lines.append(f"| {r['preset']} | {r['mode']} | {r['error']} |" + " |" * (8 + len(mfu)))
            continue
        ratio = r["real_tokens_per_second"] / base[r["preset"]] if r["preset"] in base else None
        cells = [r["preset"], r["mode"], "yes" if r["packed"] else "no", number(r["seconds_per_step"]),
                 f"{r['real_tokens_per_second']:.0f}", number(ratio, 2), number(r["real_token_share"]),
                 number(r["host_syncs_per_step"], 0), number(r["peak_memory_gib"], 2), number(r["model_tflops"])]
        cells += [f"{100 * r['mfu_' + key]:.1f} %" for key in peaks]
        lines.append("| " + " | ".join(cells) + " |")
    if report["largest"]:
        lines += ["", "Largest micro-batch (pairs a pass) within the memory budget, packing as training's default:", "",
                  "| preset | budget GiB | largest pairs | exact | trials (pairs: peak GiB) |", "|---|---|---|---|---|"]
        for found in report["largest"]:
            trials = ", ".join(f"{t['pairs']}: {number(t['peak_gib'], 2) if t['peak_gib'] is not None else 'OOM'}"
                               for t in found["trials"])
            lines.append(f"| {found['preset']} | {found['budget_gib']:g} | {found['largest_pairs']} | "
                         f"{'yes' if found['exact'] else 'no (' + found['why_not_exact'] + ')'} | {trials} |")
    return "\n".join(lines) + "\n"


def write(report: dict, out: Path | None) -> None:
    """The JSON (after every run, so a run cut short keeps what it measured), the CSV and the Markdown table."""
    if out is None:
        return
    out.mkdir(parents=True, exist_ok=True)
    (out / "training_throughput.json").write_text(json.dumps(report, indent=1) + "\n")
    rows = [r for r in report["results"] if "error" not in r]
    if rows:
        with open(out / "training_throughput.csv", "w", newline="") as handle:
            writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
            writer.writeheader()
            writer.writerows(rows)
    (out / "training_throughput.md").write_text(markdown(report))


def parse_args(argv=None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--backbone", default="tiny", choices=["tiny", "minilm", "bert-base"])
    parser.add_argument("--presets", nargs="*", default=list(PRESETS), choices=list(PRESETS))
    parser.add_argument("--modes", nargs="*", choices=list(MODES), help="default: every mode (--quick on a CPU: "
                        "all but compiled)")
    parser.add_argument("--steps", type=int, default=3, help="timed optimizer steps per run")
    parser.add_argument("--warmup", type=int, default=2, help="untimed optimizer steps first (at least 1; the "
                        "last has its host syncs counted)")
    parser.add_argument("--grad-accum", type=int, help="pairs a step (default: the recipe's 16; --quick: 4)")
    parser.add_argument("--device", default="cpu")
    parser.add_argument("--precision", default="fp32", choices=["fp32", "bf16", "fp16"])
    parser.add_argument("--tf32", action=argparse.BooleanOptionalAction, default=True,
                        help="fp32 runs on TF32 tensor cores on a GPU (training.tf32); picks the datasheet peak")
    parser.add_argument("--dropout", type=float, help="replace the backbone's dropout (default: its own, 0.1)")
    parser.add_argument("--threads", type=int, help="CPU threads (default: torch's)")
    parser.add_argument("--peak-tflops", type=float, help="the card's peak at this precision (default: the "
                        "datasheet table for H100/H200/A100)")
    parser.add_argument("--measured-peak-tflops", type=float, help="a measured matmul peak, reported beside")
    parser.add_argument("--memory-budget", type=float, metavar="GIB", help="also find each preset's largest "
                        "micro-batch within GIB of memory")
    parser.add_argument("--largest-limit", type=int, default=4096, help="pairs the search stops at")
    parser.add_argument("--largest-seconds", type=float, default=120, help="time per preset for the search")
    parser.add_argument("--pool", type=int, default=256, help="documents per length pool")
    parser.add_argument("--quick", action="store_true", help="2 steps (1 warm-up, 1 timed) of 4 pairs a run; on a "
                        "CPU without compiled; the search (with --memory-budget) stops at 8 pairs")
    parser.add_argument("--workdir", help="keep the backbones and the token store here (default: a temporary one)")
    parser.add_argument("--out", help="write training_throughput.{json,csv,md} into this folder")
    args = parser.parse_args(argv)
    if args.quick:
        args.steps, args.warmup, args.pool, args.largest_limit = 1, 1, 64, min(args.largest_limit, 8)
        args.grad_accum = args.grad_accum or 4
    if args.modes is None:
        args.modes = [m for m in MODES if not (m == "compiled" and args.quick and args.device == "cpu")]
    if args.warmup < 1:
        parser.error("--warmup must be at least 1: a step's time runs from the end of the one before")
    return args


def main(argv=None) -> dict:
    args = parse_args(argv)
    from transformers.utils import logging as hf_logging

    from posbias.device import pick_device

    hf_logging.set_verbosity_error()
    if args.threads:
        torch.set_num_threads(args.threads)
    device = pick_device(args.device)
    if device.type == "cuda":
        torch.backends.cuda.matmul.allow_tf32 = args.tf32
    peaks = {}
    sheet = datasheet_peak(device, args.precision, args.tf32)
    if args.peak_tflops:
        peaks["given"] = args.peak_tflops
    elif sheet:
        peaks[sheet[1]] = sheet[0]
    if args.measured_peak_tflops:
        peaks["measured matmul"] = args.measured_peak_tflops
    models, recipe = paper_config()
    out = Path(args.out) if args.out else None
    report = {"args": vars(args), "machine": machine(device, args), "peaks": peaks,
              "recipe": f"{args.grad_accum or recipe['grad_accum']} x {recipe['batch_size']}",
              "results": [], "largest": []}
    with tempfile.TemporaryDirectory(prefix="training-throughput-") as temporary:
        workdir = Path(args.workdir or temporary)
        workdir.mkdir(parents=True, exist_ok=True)
        context = {"device": device, "models": models, "recipe": recipe, "peaks": peaks,
                   "backbones": make_backbones(args.backbone, workdir), "data": Data(workdir, args.pool)}
        for name in args.presets:
            for mode in args.modes:
                started = time.perf_counter()
                try:
                    result = run_mode(name, mode, context, args)
                except Exception as error:  # noqa: BLE001  (an out-of-memory run is a finding; the rest go on)
                    if not out_of_memory(error):
                        raise
                    result = {"preset": name, "mode": mode, "error": "out of memory"}
                    release(device)
                print(f"{name} {mode}: {time.perf_counter() - started:.1f} s", file=sys.stderr, flush=True)
                report["results"].append(result)
                write(report, out)
            if args.memory_budget:
                report["largest"].append(largest_micro_batch(name, args.memory_budget, context, args))
                write(report, out)
        context["data"].store.close()
    print(markdown(report))
    return report


if __name__ == "__main__":
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    main()
