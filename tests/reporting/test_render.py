import pytest

from posbias.reporting.render import Cell, escape_latex, html_page, html_table, latex_label, latex_table, markdown_table


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
