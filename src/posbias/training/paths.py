"""Where the training stage's files go (rules/training.smk and `posbias train`, `finetune`, `cross-validate`): each
model's checkpoint per seed, the fine-tuned checkpoints, and the folds' runs of a cross-validated query set. The
functions fill a template's wildcards; the templates are what the rules match (`checkpoint("{model}", "{seed}")`)."""

from posbias.outputs import benchmark_file

MODELS = "results/models"


def checkpoint(model: str, seed: int | str) -> str:
    """A trained model's checkpoint directory for one seed."""
    return f"{MODELS}/{model}/seed{seed}"


def finetuned_checkpoint(model: str, seed: int | str) -> str:
    """A trained checkpoint fine-tuned on `finetuning.queryset` (Table 4's fine-tuned setting)."""
    return f"results/models-finetuned/{model}/seed{seed}"


def fold_run(queryset: str, model: str, seed: int | str, fold: int | str) -> str:
    """One fold's run of a cross-validated query set, before the folds are merged."""
    return f"results/runs-cv/{queryset}/{model}/seed{seed}/fold{fold}.run"


def benchmark(rule: str, model: str, seed: int | str) -> str:
    """The measured time and memory of a job that trains one model's seed (`rule`: train, finetune or
    cross_validate_checkpoint)."""
    return benchmark_file(rule, model, f"seed{seed}")


def fold_benchmark(queryset: str, model: str, seed: int | str, fold: int | str) -> str:
    """The measured time and memory of one fold's job of a cross-validated query set."""
    return benchmark_file("cross_validate_fold", queryset, model, f"seed{seed}", f"fold{fold}")
