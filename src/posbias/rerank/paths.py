"""Where the rerank stage's runs go (rules/rerank.smk, and the fine-tuned and cross-validated runs of the training
stage's jobs): `results/<setting>/<queryset>/<system>/seed<seed>.run`, each with `<run>.json` (how it was scored).
The settings are `runs` (zero-shot: every model as trained on the training query set) and `runs-finetuned`."""

ZERO_SHOT_RUNS = "runs"
FINETUNED_RUNS = "runs-finetuned"
RUNS = f"results/{ZERO_SHOT_RUNS}"


def run(queryset: str, system: str, seed: int | str, setting: str = ZERO_SHOT_RUNS) -> str:
    return f"results/{setting}/{queryset}/{system}/seed{seed}.run"


def run_info(run_file: str) -> str:
    """How a run was scored (device, precision, timing: the efficiency figure reads it), beside the run."""
    return f"{run_file}.json"
