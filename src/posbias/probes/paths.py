"""Where the bias probes' files go (rules/probes.smk and `posbias probes ...` alike)."""

from typing import Sequence

from posbias.outputs import benchmark_file, figure_files, table_files

PAIRS = "results/probes/pairs"
SCORES = "results/probes/scores"
RAG = "results/probes/rag"
SYNTHETIC = "results/probes/data/synthetic_revised.json"  # the embedded Re-DocRED-like world


# Each file of a directory takes the directory as `root` (the workflow's by default, a command's --pairs, --scores
# or --out otherwise).
def pairs(probe: str, root: str = PAIRS) -> str:
    """One probe's pairs (`heatmap`: every query against its whole document)."""
    return f"{root}/{probe}.jsonl"


def query_table(root: str = PAIRS) -> str:
    """What the query table kept and dropped, and each probe's candidate pool."""
    return f"{root}/query_table.json"


def replacements(root: str = PAIRS) -> str:
    """The poison probe's wrong entities, kept so that a rerun asks nothing again."""
    return f"{root}/poison_replacements.jsonl"


def scores(scorer: str, root: str = SCORES) -> str:
    """One scorer's scores of every probe's pairs."""
    return f"{root}/{scorer}.parquet"


def heatmap_scores(scorer: str, root: str = SCORES) -> str:
    """One scorer's score of every query against its whole document (the repetition heatmap)."""
    return f"{root}/{scorer}.heatmap.parquet"


def rag_files(root: str = RAG) -> tuple[str, str, str]:
    """RAG poisoning's judged answers, and the judge's swap check: its pairs and its figures."""
    return f"{root}/answers.parquet", f"{root}/judge_consistency.parquet", f"{root}/judge_consistency.json"


QUERY_TABLE, REPLACEMENTS = query_table(), replacements()
RAG_ANSWERS, JUDGE_PAIRS, JUDGE_SUMMARY = rag_files()


def sensitivity_paths(directory: str, probes: Sequence[str]) -> dict[str, str]:
    """The position sweep's metric-suite table (tex, csv, md, html), when the sweep probe runs."""
    return table_files(directory, "sensitivity") if "position_sweep" in probes else {}


def report_paths(directory: str, probes: Sequence[str]) -> tuple[dict[str, str], dict[str, list[str]]]:
    """The probe table's files (tex, csv, md, html) and the figures' PNG and PDF (sweep, if the sweep runs; heatmap;
    summary) under `directory`."""
    names = [name for name in ("sweep", "heatmap", "summary") if name != "sweep" or "position_sweep" in probes]
    return table_files(directory, "probes"), {name: figure_files(f"{directory}/figures", name) for name in names}


def benchmark(scorer: str) -> str:
    """The measured time and memory of one scorer's probes_score job."""
    return benchmark_file("probes", scorer)
