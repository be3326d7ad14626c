import numpy as np
import pandas as pd

from posbias.reporting.tables import Column, Row, build_table, to_latex, to_markdown


def per_query_frame():
    rng = np.random.default_rng(1)
    rows = []
    base = rng.uniform(0.2, 0.6, 30)
    for system, shift in [("retriever", -0.1), ("firstp", 0.0), ("maxp", 0.2), ("sump", 0.0)]:
        values = np.clip(base + shift + (rng.normal(0, 0.01, 30) if shift else 0), 0, 1)
        rows += [(system, "dev", "RR@10", f"q{i}", v) for i, v in enumerate(values)]
    return pd.DataFrame(rows, columns=["system", "queryset", "metric", "qid", "value"])


def test_table_marks_gains_and_renders():
    columns = [Column("dev", "RR@10", 0.01, "dev RR@10")]
    rows = [Row("retriever", "BM25"), Row("firstp", "FirstP"),
            Row("maxp", "MaxP", gain_over="firstp", tests={"a": "firstp"}),
            Row("sump", "SumP", gain_over="firstp", tests={"a": "firstp"})]
    table = build_table(per_query_frame(), rows, columns)
    maxp = table.set_index("system").loc["maxp"]
    assert maxp["marks"] == "a" and maxp["p_a"] < 0.01 and maxp["gain"] > 0.3
    assert table.set_index("system").loc["sump", "marks"] == ""  # identical to FirstP: no mark
    latex = to_latex(table, columns, "A caption.", "tab:x")
    assert "\\toprule" in latex and "\\midrule" in latex and "\\bottomrule" in latex
    maxp_line = next(line for line in latex.splitlines() if line.startswith("MaxP"))
    assert "$^{a}$" in maxp_line and "\\%" in maxp_line
    markdown = to_markdown(table, columns, "A caption.")
    assert markdown.splitlines()[0] == "| Ranker | dev RR@10 | Avg. gain |"
    assert markdown.splitlines()[2].startswith("| BM25 | ") and markdown.splitlines()[2].endswith("| - |")
