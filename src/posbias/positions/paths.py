"""Where the first-relevant-position analysis's files go (rules/positions.smk and `posbias positions ...` alike)."""

from posbias.data import paths as data_paths
from posbias.outputs import figure_files, table_files

GENERATOR_PASSAGES = data_paths.ANSWER_PASSAGES  # the embedded generator's answering passages


def report_paths(directory: str) -> tuple[dict[str, str], dict[str, list[str]], str]:
    """The share table's files (tex, csv, md, html), Figures 1 and 7 (png, pdf) and the agreement CSV."""
    figures = {name: figure_files(f"{directory}/figures", name) for name in ("figure1", "figure7")}
    return table_files(directory, "positions"), figures, f"{directory}/agreement.csv"


def judges_paths(directory: str) -> dict[str, str]:
    """The judges' order check table's files (tex, csv, md, html): each judge's position consistency."""
    return table_files(directory, "judges")
