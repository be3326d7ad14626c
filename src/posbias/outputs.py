"""The file names of a reported table (one per format) and figure (PNG for the report, PDF for the paper), and of a
job's measured time and memory, shared by every stage's paths."""

TABLE_FORMATS = ("tex", "csv", "md", "html")
FIGURE_FORMATS = ("png", "pdf")
BENCHMARKS = "results/benchmarks"


def benchmark_file(*parts: str) -> str:
    """Where Snakemake records a job's wall time, CPU seconds and peak memory (a rule's `benchmark:`):
    `results/benchmarks/<parts>.tsv`, the parts being the job's kind and its wildcards."""
    return f"{BENCHMARKS}/{'/'.join(parts)}.tsv"


def table_files(directory: str, name: str) -> dict[str, str]:
    """A table's four files under `directory`: `{name}.tex`, `.csv`, `.md` and `.html`, by format."""
    return {fmt: f"{directory}/{name}.{fmt}" for fmt in TABLE_FORMATS}


def figure_files(directory: str, name: str) -> list[str]:
    """A figure's PNG and PDF under `directory`."""
    return [f"{directory}/{name}.{ext}" for ext in FIGURE_FORMATS]
