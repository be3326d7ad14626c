"""Render tables given as header and body cells: LaTeX (booktabs), Markdown, or a standalone HTML page.

Cells, headers and captions arrive as plain text; each format escapes them here, so the table
modules never write markup. A cell that needs emphasis or a superscript is a `Cell`, which each
format marks up its own way. In any text, `$...$` is inline math: LaTeX keeps it as written,
Markdown too, and HTML shows it without the dollars. A `Table` holds one table's header, rows, caption and
label; `write_tables` writes the four files (tex, csv, md, html) of one or more tables, and every stage's
tables go through it (or through `write_outputs`, the four files from their texts).
"""

from __future__ import annotations

import functools
import html
import math
import numbers
import re
from dataclasses import dataclass
from pathlib import Path

from posbias.io import atomic_write


STYLESHEET = Path(__file__).with_name("posbias.css")
MISSING = "–"  # a cell without a value: a run made elsewhere that lacks a query set, a test that could not run
NOT_APPLICABLE = "N/A"  # a cell that has no value by design: a zero-shot model in a fine-tuned column
NO_TEST = "no test"  # a comparison whose pairs all tie (p is NaN): printed so, left out of the correction's family


def is_missing(value) -> bool:
    """None or NaN: a value a table shows as `MISSING`."""
    return value is None or (isinstance(value, numbers.Real) and math.isnan(value))


def number(value, digits: int = 3) -> str:
    """A number with `digits` decimals, or `MISSING`."""
    return MISSING if is_missing(value) else f"{value:.{digits}f}"


def percent(share, digits: int = 1) -> str:
    """A share (0.42) as a percentage without the sign (42.0), or `MISSING`."""
    return MISSING if is_missing(share) else f"{100 * share:.{digits}f}"


@dataclass(frozen=True)
class Cell:
    text: str
    superscript: str = ""
    bold: bool = False  # of `text`
    after: str = ""  # plain text after the superscript, e.g. a gain in brackets


_LATEX_SPECIALS = {"\\": r"\textbackslash{}", "{": r"\{", "}": r"\}", "#": r"\#", "$": r"\$", "%": r"\%",
                   "&": r"\&", "_": r"\_", "~": r"\textasciitilde{}", "^": r"\textasciicircum{}",
                   # not special, but LaTeX's default (OT1) fonts print them as ¡, ¿ and an em dash
                   "<": r"\textless{}", ">": r"\textgreater{}", "|": r"\textbar{}"}
_LATEX_SPECIAL = re.compile("|".join(re.escape(c) for c in _LATEX_SPECIALS))
_MATH = re.compile(r"(\$[^$]+\$)")  # a lone `$` (no closing one) is text and gets escaped


_LATEX_ARROWS = {"↑": r"$\uparrow$", "↓": r"$\downarrow$"}  # pdfLaTeX has no glyph for them in text


def escape_latex(text: str) -> str:
    """Text with LaTeX's special characters escaped, `$...$` math left as written, arrows as math."""
    for arrow, math_arrow in _LATEX_ARROWS.items():
        text = text.replace(arrow, math_arrow)
    parts = _MATH.split(text)  # odd positions are math
    return "".join(part if i % 2 else _LATEX_SPECIAL.sub(lambda m: _LATEX_SPECIALS[m.group()], part)
                   for i, part in enumerate(parts))


def latex_label(label: str) -> str:
    """A \\label key: `\\ref` must repeat it verbatim, so characters outside [A-Za-z0-9:.-] become '-'."""
    return re.sub(r"[^A-Za-z0-9:.\-]", "-", label)


def _as_cell(cell: str | Cell) -> Cell:
    return Cell(cell) if isinstance(cell, str) else cell


def _latex_cell(cell: str | Cell) -> str:
    cell = _as_cell(cell)
    text = rf"\textbf{{{escape_latex(cell.text)}}}" if cell.bold else escape_latex(cell.text)
    if cell.superscript:
        text += rf"\textsuperscript{{{escape_latex(cell.superscript)}}}"
    return text + escape_latex(cell.after)


def latex_table(header: list[str], body: list[list[str | Cell]], caption: str, label: str,
                wide: bool = False) -> str:
    """A booktabs table; `wide` uses table* and a smaller font for tables with many columns."""
    env = "table*" if wide else "table"
    lines = [rf"\begin{{{env}}}[t]", r"\centering", r"\scriptsize" if wide else r"\small",
             r"\begin{tabular}{l" + "r" * (len(header) - 1) + "}", r"\toprule",
             " & ".join(escape_latex(h) for h in header) + r" \\", r"\midrule"]
    lines += [" & ".join(_latex_cell(c) for c in cells) + r" \\" for cells in body]
    lines += [r"\bottomrule", r"\end{tabular}", rf"\caption{{{escape_latex(caption)}}}",
              rf"\label{{{latex_label(label)}}}", rf"\end{{{env}}}", ""]
    return "\n".join(lines)


def _markdown_cell(cell: str | Cell) -> str:
    cell = _as_cell(cell)
    text = f"**{cell.text}**" if cell.bold else cell.text
    text += (f"^{cell.superscript}" if cell.superscript else "") + cell.after
    return text.replace("|", r"\|")  # a bare pipe would end the cell


def markdown_table(header: list[str], body: list[list[str | Cell]], caption: str) -> str:
    lines = ["| " + " | ".join(_markdown_cell(h) for h in header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(_markdown_cell(c) for c in cells) + " |" for cells in body]
    return "\n".join(lines) + f"\n\n{caption}\n"


def _html_cell(cell: str | Cell) -> str:
    cell = _as_cell(cell)
    text = f"<b>{html.escape(cell.text)}</b>" if cell.bold else html.escape(cell.text)
    return text + (f"<sup>{html.escape(cell.superscript)}</sup>" if cell.superscript else "") + html.escape(cell.after)


def html_table(header: list[str], body: list[list[str | Cell]], caption: str) -> str:
    """One <table> element, for `html_page`."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    rows = "".join("<tr>" + "".join(f"<td>{_html_cell(c)}</td>" for c in cells) + "</tr>\n" for cells in body)
    return (f"<table><caption>{html.escape(caption.replace('$', ''))}</caption>"
            f"<thead><tr>{head}</tr></thead><tbody>\n{rows}</tbody></table>\n")


@functools.cache
def stylesheet() -> str:
    """posbias.css, the stylesheet every page of posbias shares (the Snakemake report reads the same file)."""
    return STYLESHEET.read_text(encoding="utf-8")


def html_page(*tables: str, title: str = "posbias") -> str:
    """A small self-contained page of `html_table`s and other parts, the shared stylesheet inlined (no external
    assets: the Snakemake report works offline)."""
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>{html.escape(title)}</title><style>\n{stylesheet()}</style></head>"
            f"<body>{''.join(tables)}</body></html>\n")


@dataclass(frozen=True)
class Table:
    """One table, as each format prints it; `wide` (LaTeX) uses table* and a smaller font for many columns."""

    header: list[str]
    rows: list[list[str | Cell]]
    caption: str
    label: str = ""
    wide: bool = False

    def latex(self) -> str:
        return latex_table(self.header, self.rows, self.caption, self.label, self.wide)

    def markdown(self) -> str:
        return markdown_table(self.header, self.rows, self.caption)

    def html(self) -> str:
        """One <table> element (`html_page` makes the page)."""
        return html_table(self.header, self.rows, self.caption)


def write_tables(outputs: dict, csv_frame, *tables: Table) -> None:
    """The four files of `tables`: their LaTeX and Markdown one after another, one HTML page of them all, and
    `csv_frame` (every number, unrounded) as the CSV."""
    write_outputs(outputs, csv_frame, "\n".join(table.latex() for table in tables),
                  "\n".join(table.markdown() for table in tables), html_page(*(table.html() for table in tables)))


def write_outputs(outputs: dict, csv_frame, latex: str, markdown: str, html_text: str) -> None:
    """Write one table's four files, the `tex`, `csv`, `md` and `html` paths of `outputs`, each atomically;
    `csv_frame` is a pandas DataFrame (every number, unrounded)."""
    for key, text in (("tex", latex), ("md", markdown), ("html", html_text)):
        with atomic_write(outputs[key]) as out:
            out.write(text)
    with atomic_write(outputs["csv"]) as out:
        csv_frame.to_csv(out, index=False)
