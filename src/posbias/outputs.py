"""The file names of a reported table (one per format) and figure (PNG for the report, PDF for the paper), shared by
every stage's paths."""

TABLE_FORMATS = ("tex", "csv", "md", "html")
FIGURE_FORMATS = ("png", "pdf")


def table_files(directory: str, name: str) -> dict[str, str]:
    """A table's four files under `directory`: `{name}.tex`, `.csv`, `.md` and `.html`, by format."""
    return {fmt: f"{directory}/{name}.{fmt}" for fmt in TABLE_FORMATS}


def figure_files(directory: str, name: str) -> list[str]:
    """A figure's PNG and PDF under `directory`."""
    return [f"{directory}/{name}.{ext}" for ext in FIGURE_FORMATS]
