"""Render a table given as header and body cells: LaTeX (booktabs), Markdown, or a standalone HTML page.

Cells arrive formatted. The first column holds labels and is escaped here; other cells may
carry markup of their format (a LaTeX superscript, an HTML <sup>), so they are written as given.
"""

from __future__ import annotations

import html


def escape_latex(text: str) -> str:
    return text.replace("_", r"\_").replace("&", r"\&").replace("%", r"\%") if "$" not in text else text


def latex_table(header: list[str], body: list[list[str]], caption: str, label: str, wide: bool = False) -> str:
    """A booktabs table; `wide` uses table* and a smaller font for tables with many columns."""
    env = "table*" if wide else "table"
    lines = [rf"\begin{{{env}}}[t]", r"\centering", r"\scriptsize" if wide else r"\small",
             r"\begin{tabular}{l" + "r" * (len(header) - 1) + "}", r"\toprule",
             " & ".join(escape_latex(h) for h in header) + r" \\", r"\midrule"]
    lines += [" & ".join([escape_latex(cells[0]), *cells[1:]]) + r" \\" for cells in body]
    lines += [r"\bottomrule", r"\end{tabular}", rf"\caption{{{caption}}}", rf"\label{{{label}}}",
              rf"\end{{{env}}}", ""]
    return "\n".join(lines)


def markdown_table(header: list[str], body: list[list[str]], caption: str) -> str:
    lines = ["| " + " | ".join(header) + " |", "|" + "---|" * len(header)]
    lines += ["| " + " | ".join(cells) + " |" for cells in body]
    return "\n".join(lines) + f"\n\n{caption}\n"


def html_page(header: list[str], body: list[list[str]], caption: str) -> str:
    """A small self-contained page (no external assets: the Snakemake report works offline)."""
    head = "".join(f"<th>{html.escape(h)}</th>" for h in header)
    rows = "".join("<tr>" + f"<td>{html.escape(cells[0])}</td>" + "".join(f"<td>{c}</td>" for c in cells[1:])
                   + "</tr>\n" for cells in body)
    return ("<!DOCTYPE html>\n<html><head><meta charset=\"utf-8\"><style>"
            "table{border-collapse:collapse;font-family:sans-serif;font-size:14px}"
            "th,td{padding:3px 10px;text-align:right}th:first-child,td:first-child{text-align:left}"
            "thead{border-top:2px solid #000;border-bottom:1px solid #000}tbody{border-bottom:2px solid #000}"
            "caption{caption-side:bottom;text-align:left;padding-top:8px;max-width:60em}"
            f"</style></head><body><table><caption>{html.escape(caption.replace('$', ''))}</caption>"
            f"<thead><tr>{head}</tr></thead><tbody>\n{rows}</tbody></table></body></html>\n")
