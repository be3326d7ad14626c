"""Where the bias probes' files go (rules/probes.smk and `posbias probes ...` alike)."""

from typing import Sequence

from posbias.outputs import figure_files, table_files

PAIRS = "results/probes/pairs"
SYNTHETIC = "results/probes/data/synthetic_revised.json"  # the embedded Re-DocRED-like world
REPLACEMENTS = f"{PAIRS}/poison_replacements.jsonl"
QUERY_TABLE = f"{PAIRS}/query_table.json"  # what the query table kept and dropped, and each probe's pool
SCORES = "results/probes/scores"
RAG = "results/probes/rag"
RAG_ANSWERS, JUDGE_PAIRS, JUDGE_SUMMARY = (f"{RAG}/answers.parquet", f"{RAG}/judge_consistency.parquet",
                                         f"{RAG}/judge_consistency.json")


def pairs(probe: str) -> str:
    return f"{PAIRS}/{probe}.jsonl"


def scores(scorer: str) -> str:
    """One scorer's scores of every probe's pairs."""
    return f"{SCORES}/{scorer}.parquet"


def heatmap_scores(scorer: str) -> str:
    """One scorer's score of every query against its whole document (the repetition heatmap)."""
    return f"{SCORES}/{scorer}.heatmap.parquet"


def sensitivity_paths(directory: str, probes: Sequence[str]) -> dict[str, str]:
    """The position sweep's metric-suite table (tex, csv, md, html), when the sweep probe runs."""
    return table_files(directory, "sensitivity") if "position_sweep" in probes else {}


def report_paths(directory: str, probes: Sequence[str]) -> tuple[dict[str, str], dict[str, list[str]]]:
    """The probe table's files (tex, csv, md, html) and the figures' PNG and PDF (sweep, if the sweep runs; heatmap;
    summary) under `directory`."""
    names = [name for name in ("sweep", "heatmap", "summary") if name != "sweep" or "position_sweep" in probes]
    return table_files(directory, "probes"), {name: figure_files(f"{directory}/figures", name) for name in names}
