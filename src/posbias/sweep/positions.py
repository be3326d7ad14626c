"""Position files: `qid<TAB>start` (the token where a query's first relevant passage starts), with or without a
header, extra columns ignored. The embedded generator and the FarRelevant builder write true positions, the
sweep builder its variants' (plus slot, position, base query and length); estimated first-relevant positions of
real collections come in the same two columns."""

from __future__ import annotations

import os

from posbias.io import FormatError, atomic_write, numbered_lines

MISSING = ("", "na", "nan", "none")  # a start that was not found (compared in lower case)
ANALYSIS_COLUMNS = ("qid", "source", "position")  # what marks a positions file (posbias.data.first_relevant)
SWEEP_COLUMNS = ("qid", "start", "slot", "position", "base", "doc_tokens")


def read_positions(path: str | os.PathLike) -> dict[str, int]:
    """`{qid: start}`. A first line whose second field is not a number is a header naming `qid` and `start`;
    a start of NA (or empty) leaves the query out. A file of the first-relevant-position analysis
    (results/positions/{set}.tsv, one row per query and document) gives each query's earliest start in its
    judged relevant documents."""
    if _is_analysis_file(path):
        from posbias.data.first_relevant import first_relevant_starts, read_rows

        return first_relevant_starts(read_rows(str(path)))
    positions: dict[str, int] = {}
    columns, first = (0, 1), True
    for line_no, line in numbered_lines(path):
        fields = line.split("\t")
        header, first = first and len(fields) >= 2, False
        if header and not fields[1].strip().lstrip("-").isdigit():
            names = [f.strip() for f in fields]
            if "qid" not in names or "start" not in names:
                raise FormatError(path, line_no, f"a header must name the columns qid and start, got {names}")
            columns = (names.index("qid"), names.index("start"))
            continue
        if len(fields) <= max(columns):
            raise FormatError(path, line_no, "expected 'qid<TAB>start'")
        qid, start = fields[columns[0]].strip(), fields[columns[1]].strip()
        if qid and start.lower() in MISSING:
            continue  # an estimator that found no relevant passage for the query
        if not qid or not start.isdigit():
            raise FormatError(path, line_no, f"expected a query id and a start token >= 0, got {qid!r}, {start!r}")
        if qid in positions:
            raise FormatError(path, line_no, f"query {qid} has two positions")
        positions[qid] = int(start)
    return positions


def write_sweep_positions(path: str | os.PathLike, rows: list[tuple]) -> None:
    """The sweep's positions file: one row per sweep query, in `SWEEP_COLUMNS` order."""
    with atomic_write(path) as out:
        out.write("\t".join(SWEEP_COLUMNS) + "\n")
        for row in rows:
            out.write("\t".join(str(value) for value in row) + "\n")


def _is_analysis_file(path: str | os.PathLike) -> bool:
    for _, line in numbered_lines(path):
        return set(ANALYSIS_COLUMNS) <= {field.strip() for field in line.split("\t")}
    return False
