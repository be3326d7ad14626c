"""Where the position sweep's and the position breakdown's files go (rules/sweep.smk and `posbias sweep ...`)."""

from posbias.data import paths as data_paths
from posbias.outputs import figure_files, table_files

SWEEP_DOCS = data_paths.docs("sweep")


def sweep_report(out: str) -> tuple[dict[str, str], list[str]]:
    """The sweep table (tex, csv, md, html) under an experiment's `out`, and its figure (png, pdf)."""
    return table_files(out, "sweep"), figure_files(f"{out}/figures", "sweep")


def breakdown_table(out: str) -> dict[str, str]:
    return table_files(out, "position_breakdown")


def sensitivity_table(out: str) -> dict[str, str]:
    """The metric suite of each sweep curve (PSI, drops, reach: `posbias.stats.position_curve`)."""
    return table_files(out, "sweep_sensitivity")
