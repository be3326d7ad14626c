"""Where the rerank stage's runs go (rules/rerank.smk, and the fine-tuned and cross-validated runs of the training
stage's jobs): `results/<setting>/<queryset>/<system>/seed<seed>.run`, each with `<run>.json` (how it was scored).
The settings are `runs` (zero-shot: every model as trained on the training query set) and `runs-finetuned`."""

from posbias.outputs import benchmark_file

ZERO_SHOT_RUNS = "runs"
FINETUNED_RUNS = "runs-finetuned"
RUNS = f"results/{ZERO_SHOT_RUNS}"


def run(queryset: str, system: str, seed: int | str, setting: str = ZERO_SHOT_RUNS) -> str:
    return f"results/{setting}/{queryset}/{system}/seed{seed}.run"


def run_info(run_file: str) -> str:
    """How a run was scored (device, precision, timing: the efficiency figure reads it), beside the run."""
    return f"{run_file}.json"


def benchmark(queryset: str, model: str, seed: int | str) -> str:
    """The measured time and memory of one query set's rerank job (rules rerank, rerank_zero_shot, rerank_listwise)."""
    return benchmark_file("rerank", queryset, model, f"seed{seed}")


def model_benchmark(rule: str, model: str, seed: int | str) -> str:
    """The measured time and memory of a job that reranks every query set with one model (`rule`:
    rerank_checkpoint or rerank_zero_shot_model)."""
    return benchmark_file(rule, model, f"seed{seed}")
