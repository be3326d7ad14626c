"""Dataset statistics tables (Tables 9 and 10): compact counts, LaTeX and Markdown rendering."""

from __future__ import annotations

import pytest

from posbias.reporting.dataset_tables import as_table, compact_count, documents_table, queries_table

DOC_STATS = {
    "msmarco_v1_doc": {"n_documents": 3_213_835, "avg_tokens": 1578.26, "sampled": 100_000},
    "robust04": {"n_documents": 528_155, "avg_tokens": 702.04, "sampled": 528_155},
}
QUERY_STATS = {
    "dl_2019": {"n_queries": 43, "avg_tokens": 6.04, "avg_positive_judgments": 153.42, "n_judged_queries": 43},
    "msmarco_dev": {"n_queries": 5193, "avg_tokens": 7.0, "avg_positive_judgments": 1.0, "n_judged_queries": 5193},
}
DOC_COLUMNS = [("label", "Collection"), ("n_documents", "Documents"), ("avg_tokens", "Avg. tokens"),
               ("sampled", "Sampled")]
QUERY_COLUMNS = [("label", "Query set"), ("n_queries", "Queries"), ("avg_tokens", "Avg. tokens"),
                 ("avg_positive_judgments", "Avg. positives")]


@pytest.mark.parametrize("n, text", [
    (0, "0"), (5193, "5193"), (9999, "9999"), (10_000, "10K"), (12_345, "12.3K"), (50_000, "50K"),
    (352_000, "352K"), (528_155, "528K"), (999_960, "1M"), (3_213_835, "3.2M"), (12_000_000, "12M"),
    (52_343_021, "52.3M"), (123_456_789, "123M"),
])
def test_compact_count(n, text):
    assert compact_count(n) == text


def test_compact_count_rejects_negative():
    with pytest.raises(ValueError):
        compact_count(-1)


def test_tables_have_one_row_per_entry_with_labels():
    docs = documents_table(DOC_STATS, labels={"msmarco_v1_doc": "MS MARCO_v1 & docs"})
    assert list(docs.columns) == ["collection", "label", "n_documents", "avg_tokens", "sampled"]
    assert list(docs["label"]) == ["MS MARCO_v1 & docs", "robust04"]  # unlabelled: the name
    queries = queries_table(QUERY_STATS)
    assert list(queries.columns) == ["queryset", "label", "n_queries", "avg_tokens", "avg_positive_judgments"]
    assert queries.set_index("queryset").loc["msmarco_dev", "n_queries"] == 5193


def test_latex_is_booktabs_with_escaped_labels_and_compact_numbers():
    frame = documents_table(DOC_STATS, labels={"msmarco_v1_doc": "MS MARCO_v1 & 100% docs"})
    latex = as_table(frame, DOC_COLUMNS, "Collections.", "tab:documents").latex()
    for command in (r"\toprule", r"\midrule", r"\bottomrule", r"\caption{Collections.}", r"\label{tab:documents}"):
        assert command in latex
    assert r"\begin{tabular}{lrrr}" in latex
    assert r"Collection & Documents & Avg. tokens & Sampled \\" in latex
    assert r"MS MARCO\_v1 \& 100\% docs & 3.2M & 1578.3 & 100K \\" in latex
    assert r"robust04 & 528K & 702.0 & 528K \\" in latex


def test_markdown_has_header_row_and_caption():
    markdown = as_table(queries_table(QUERY_STATS, {"dl_2019": "TREC DL_2019"}), QUERY_COLUMNS, "Query sets.", "tab:queries").markdown()
    lines = markdown.splitlines()
    assert lines[0] == "| Query set | Queries | Avg. tokens | Avg. positives |"
    assert lines[1] == "|---|---|---|---|"
    assert lines[2] == "| TREC DL_2019 | 43 | 6.0 | 153.4 |"  # no LaTeX escaping in Markdown
    assert lines[3] == "| msmarco_dev | 5193 | 7.0 | 1.0 |"
    assert lines[-1] == "Query sets."


def test_text_columns_after_the_first_are_escaped_too():
    frame = documents_table(DOC_STATS, labels={"robust04": "Robust & co"})
    columns = [("label", "Collection"), ("collection", "Name"), ("avg_tokens", "Avg. tokens")]
    assert r"msmarco\_v1\_doc & msmarco\_v1\_doc & 1578.3 \\" in as_table(frame, columns, "c", "tab:x").latex()
    page = as_table(frame, columns, "Collections & more.", "tab:x").html()
    assert "<td>Robust &amp; co</td><td>robust04</td><td>702.0</td>" in page
    assert "<th>Avg. tokens</th>" in page
