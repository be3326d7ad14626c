"""Where the Lost-in-the-Middle stage's files go (rules/litm.smk and `posbias litm ...` alike)."""

from posbias.outputs import benchmark_file, figure_files, table_files

CLOSED_BOOK, ORACLE = "closedbook", "oracle"
DATA = "results/litm/data"
SYNTHETIC_RETRIEVAL = f"{DATA}/qa/synthetic-retrieval.jsonl.gz"  # the demo's questions with retrieved documents
EVALUATIONS = "results/litm/eval"


def evaluation(task: str) -> str:
    """Every model's accuracy on one task, by size and position."""
    return f"{EVALUATIONS}/{task}.parquet"


def data_file(task: str, setting: str, root: str = DATA) -> str:
    """Closed-book prompts read the oracle file (its question and answers), as the authors did."""
    return f"{root}/{task}/{ORACLE if setting == CLOSED_BOOK else setting}.jsonl.gz"


PREDICTIONS = "results/litm/predictions"


def prediction(task: str, model: str, key: str, root: str = PREDICTIONS) -> str:
    """A model's predictions of one `{variant}/{setting}` of a task."""
    return f"{root}/{task}/{model}/{key}.jsonl.gz"


def report_files(directory: str, keys: list[str]) -> tuple[dict[str, dict[str, str]], dict[str, list[str]]]:
    """Each reported size's table (tex, csv, md, html) and figure (png, pdf) under `directory`."""
    return ({key: table_files(directory, key) for key in keys},
            {key: figure_files(f"{directory}/figures", key) for key in keys})


def sensitivity_table(directory: str) -> dict[str, str]:
    """Every curve's position sensitivity (PSI, drops, reach: `posbias.stats.position_curve`) under `directory`."""
    return table_files(directory, "sensitivity")


def benchmark(task: str, model: str) -> str:
    """The measured time and memory of one model's predictions on a task's variants."""
    return benchmark_file("litm", task, model)
