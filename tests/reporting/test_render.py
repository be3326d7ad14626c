import pytest

import math

import numpy as np

from posbias.reporting.render import (MISSING, Cell, escape_latex, html_page, html_table, is_missing, latex_label,
                                      latex_table, markdown_table, number, percent, write_outputs)


@pytest.mark.parametrize("text, escaped", [
    ("msmarco_dev", r"msmarco\_dev"),
    ("a & b 50% #1", r"a \& b 50\% \#1"),
    ("{x} ~y^", r"\{x\} \textasciitilde{}y\textasciicircum{}"),
    ("C:\\runs\\x", r"C:\textbackslash{}runs\textbackslash{}x"),  # one pass: the braces it adds stay as they are
    ("US$ 5", r"US\$ 5"),  # a lone dollar is text
    ("<a|b>", r"\textless{}a\textbar{}b\textgreater{}"),  # OT1 fonts would print ¡a—b¿
    ("dl_19: $p < 0.05$, msmarco_dev: $p < 0.01$", r"dl\_19: $p < 0.05$, msmarco\_dev: $p < 0.01$"),
    ("$a_1$ and b_1", r"$a_1$ and b\_1"),  # math is left as written
    ("plain text", "plain text"),
])
def test_escape_latex_escapes_every_special_character_outside_math(text, escaped):
    assert escape_latex(text) == escaped


def test_latex_label_keeps_only_characters_a_ref_can_repeat():
    assert latex_label("tab:outcomes-msmarco_dev-both") == "tab:outcomes-msmarco-dev-both"
    assert latex_label("tab:first-stage") == "tab:first-stage"
    assert latex_label("tab:a b&c{}") == "tab:a-b-c--"


def test_cells_carry_their_markup_in_each_format():
    header = ["System_name", "RR@10 & more"]
    body = [["Max_P", Cell("0.300", superscript="ab", after=" (+5.0%)")], ["x|y", Cell("0.010", bold=True)]]
    latex = latex_table(header, body, "Caption_1 with $p < 0.05$.", "tab:x_y")
    assert r"System\_name & RR@10 \& more \\" in latex
    assert r"Max\_P & 0.300\textsuperscript{ab} (+5.0\%) \\" in latex
    assert r"x\textbar{}y & \textbf{0.010} \\" in latex
    assert r"\caption{Caption\_1 with $p < 0.05$.}" in latex and r"\label{tab:x-y}" in latex
    markdown = markdown_table(header, body, "c")
    assert "| Max_P | 0.300^ab (+5.0%) |" in markdown and r"| x\|y | **0.010** |" in markdown
    page = html_page(html_table(header, body, "p < 0.05 & $q$"))
    assert "<td>0.300<sup>ab</sup> (+5.0%)</td>" in page and "<td><b>0.010</b></td>" in page
    assert "<th>RR@10 &amp; more</th>" in page and "<caption>p &lt; 0.05 &amp; q</caption>" in page


@pytest.mark.parametrize("value", [None, math.nan, np.float32("nan"), np.float64("nan")])
def test_a_missing_value_prints_as_missing_in_every_format_helper(value):
    assert is_missing(value) and number(value) == MISSING and percent(value) == MISSING


def test_numbers_and_percentages_keep_their_digits_whatever_the_float_type():
    assert [number(0.12345), number(np.float32(0.5), 1), number(2, 2)] == ["0.123", "0.5", "2.00"]
    assert [percent(0.4237), percent(np.float64(1.0), 0)] == ["42.4", "100"]
    assert not is_missing(0.0)


def test_write_outputs_writes_the_four_files(tmp_path):
    import pandas as pd

    outputs = {key: str(tmp_path / f"t.{key}") for key in ("tex", "csv", "md", "html")}
    write_outputs(outputs, pd.DataFrame({"a": [0.123456789]}), "\\begin{table}", "| a |", "<table>")
    assert (tmp_path / "t.tex").read_text() == "\\begin{table}"
    assert (tmp_path / "t.csv").read_text() == "a\n0.123456789\n"
    assert (tmp_path / "t.md").read_text() == "| a |" and (tmp_path / "t.html").read_text() == "<table>"



def test_write_tables_writes_each_table_in_every_format_and_one_page(tmp_path):
    import pandas as pd

    from posbias.reporting.render import Table, write_tables

    first = Table(["Model", "t ↑"], [["A", Cell("1.0", bold=True)]], "First.", "tab:first")
    second = Table(["Model", "t"], [["B", "2.0"]], "Second.", "tab:second", wide=True)
    outputs = {key: str(tmp_path / f"t.{key}") for key in ("tex", "csv", "md", "html")}
    write_tables(outputs, pd.DataFrame({"t": [1.0, 2.0]}), first, second)
    assert (tmp_path / "t.tex").read_text() == first.latex() + "\n" + second.latex()
    assert r"t $\uparrow$ \\" in first.latex() and "\\begin{table*}" in second.latex()
    assert (tmp_path / "t.md").read_text() == first.markdown() + "\n" + second.markdown()
    assert (tmp_path / "t.html").read_text() == html_page(first.html(), second.html())
    assert (tmp_path / "t.csv").read_text() == "t\n1.0\n2.0\n"


def test_arrows_are_math_in_latex_only():
    assert escape_latex("Position ↓, $p$ ↑") == r"Position $\downarrow$, $p$ $\uparrow$"
    assert markdown_table(["t ↑"], [], "c").startswith("| t ↑ |")
