"""Where the first-relevant-position analysis's files go (rules/positions.smk and `posbias positions ...` alike)."""

from posbias.data import paths as data_paths
from posbias.outputs import benchmark_file, figure_files, table_files

GENERATOR_PASSAGES = data_paths.ANSWER_PASSAGES  # the embedded generator's answering passages
POSITIONS = "results/positions"


def rows(pset: str, root: str = POSITIONS) -> str:
    """A set's first relevant positions: one row per query and document (TSV); `root`: another directory's (a
    command's --out)."""
    return f"{root}/{pset}.tsv"


def summary(pset: str, root: str = POSITIONS) -> str:
    return f"{root}/{pset}.json"


def judgments(pset: str, root: str = POSITIONS) -> str:
    """A dense set's judged chunks (the judge's answers, with their order check)."""
    return f"{root}/{pset}.judgments.parquet"


def consistency(pset: str, root: str = POSITIONS) -> str:
    return f"{root}/{pset}.consistency.parquet"


def report_paths(directory: str) -> tuple[dict[str, str], dict[str, list[str]], str]:
    """The share table's files (tex, csv, md, html), Figures 1 and 7 (png, pdf) and the agreement CSV."""
    figures = {name: figure_files(f"{directory}/figures", name) for name in ("figure1", "figure7")}
    return table_files(directory, "positions"), figures, f"{directory}/agreement.csv"


def judges_paths(directory: str) -> dict[str, str]:
    """The judges' order check table's files (tex, csv, md, html): each judge's position consistency."""
    return table_files(directory, "judges")


def benchmark(pset: str) -> str:
    """The measured time and memory of one position set's job."""
    return benchmark_file("positions", pset)
