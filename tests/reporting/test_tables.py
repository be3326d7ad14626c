import numpy as np
import pandas as pd
import pytest
from scipy import stats

from posbias.reporting.tables import (Column, Row, Significance, as_table, build_table, column_header,
                                      duplicate_headers, significance_note)


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
    latex = as_table(table, columns, "A caption.", "tab:x").latex()
    assert "\\toprule" in latex and "\\midrule" in latex and "\\bottomrule" in latex
    maxp_line = next(line for line in latex.splitlines() if line.startswith("MaxP"))
    assert "0.604\\textsuperscript{a} (+49.0\\%)" in maxp_line
    markdown = as_table(table, columns, "A caption.").markdown()
    assert markdown.splitlines()[0] == "| Ranker | dev RR@10 | Avg. gain |"
    assert markdown.splitlines()[2].startswith("| BM25 | ") and markdown.splitlines()[2].endswith("| - |")


def test_a_pair_tested_in_both_directions_is_one_test_of_the_family():
    columns = [Column("dev", "RR@10", 0.05, "dev RR@10")]
    # Table 4's layout: MaxP is the reference (a), SumP the second one (b); the two test each other.
    rows = [Row("maxp", "MaxP", tests={"b": "sump"}), Row("sump", "SumP", gain_over="maxp", tests={"a": "maxp"}),
            Row("firstp", "FirstP", gain_over="maxp", tests={"a": "maxp", "b": "sump"})]
    table = build_table(per_query_frame(), rows, columns, Significance(correction="bonferroni")).set_index("system")
    # maxp-sump, firstp-maxp, firstp-sump; SumP equals FirstP on every query, so the last is no test
    assert (table.attrs["n_tests"], table.attrs["n_no_test"]) == (2, 1)
    assert table.loc["maxp", "p_b"] == table.loc["sump", "p_a"]
    assert table.loc["maxp", "p_adj_b"] == pytest.approx(min(1.0, 2 * table.loc["maxp", "p_b"]))


def test_correction_over_the_table_decides_the_marks():
    rng = np.random.default_rng(3)
    base = rng.uniform(0.2, 0.6, 30)
    rows = [("firstp", "dev", "RR@10", f"q{i}", v) for i, v in enumerate(base)]
    # A small, noisy gain: significant at 0.05 alone, not after Bonferroni over 3 columns.
    shifted = None
    for seed in range(200):
        noise = np.random.default_rng(seed).normal(0.03, 0.06, 30)
        p = stats.ttest_rel(base + noise, base).pvalue
        if 0.02 < p < 0.04:
            shifted = base + noise
            break
    assert shifted is not None
    rows += [("maxp", "dev", "RR@10", f"q{i}", v) for i, v in enumerate(shifted)]
    for k, metric in enumerate(("AP", "nDCG@10")):  # two further columns where MaxP differs from FirstP by noise
        noise = np.random.default_rng(100 + k).normal(0, 0.05, 30)
        rows += [("firstp", "dev", metric, f"q{i}", v) for i, v in enumerate(base)]
        rows += [("maxp", "dev", metric, f"q{i}", v) for i, v in enumerate(base + noise)]
    frame = pd.DataFrame(rows, columns=["system", "queryset", "metric", "qid", "value"])
    columns = [Column("dev", m, 0.05, m) for m in ("RR@10", "AP", "nDCG@10")]
    table_rows = [Row("firstp", "FirstP"), Row("maxp", "MaxP", gain_over="firstp", tests={"a": "firstp"})]
    raw = build_table(frame, table_rows, columns, Significance(correction="none")).set_index(["system", "metric"])
    corrected = build_table(frame, table_rows, columns, Significance(correction="bonferroni"))
    assert raw.loc[("maxp", "RR@10"), "marks"] == "a"
    record = corrected.set_index(["system", "metric"]).loc[("maxp", "RR@10")]
    assert record["marks"] == "" and record["p_adj_a"] == pytest.approx(min(1.0, 3 * record["p_a"]))
    assert corrected.attrs["n_tests"] == 3
    note = significance_note(corrected, columns, Significance(correction="bonferroni"))
    assert "Bonferroni correction over the 3 tests" in note and "RR@10: $p < 0.05$" in note


@pytest.mark.parametrize("test", ["t", "wilcoxon", "randomisation"])
def test_a_comparison_whose_queries_all_tie_is_no_test_and_leaves_the_family(test):
    # SumP equals FirstP on every query: p is NaN, not 1; the cell says so; the family holds MaxP's test alone.
    columns = [Column("dev", "RR@10", 0.05, "dev RR@10")]
    rows = [Row("firstp", "FirstP"), Row("maxp", "MaxP", gain_over="firstp", tests={"a": "firstp"}),
            Row("sump", "SumP", gain_over="firstp", tests={"a": "firstp"})]
    significance = Significance(test=test, correction="holm", permutations=999)
    table = build_table(per_query_frame(), rows, columns, significance)
    by_system = table.set_index("system")
    assert np.isnan(by_system.loc["sump", "p_a"]) and np.isnan(by_system.loc["sump", "p_adj_a"])
    assert by_system.loc["sump", "marks"] == "" and by_system.loc["sump", "no_test"] == "a"
    assert table.attrs["n_tests"] == 1 and table.attrs["n_no_test"] == 1
    assert by_system.loc["maxp", "p_adj_a"] == by_system.loc["maxp", "p_a"]  # Holm over a family of one
    assert by_system.loc["maxp", "marks"] == "a"
    markdown = as_table(table, columns, "A caption.").markdown()
    sump_line = next(line for line in markdown.splitlines() if line.startswith("| SumP"))
    assert "(+0.0%) (no test a)" in sump_line
    assert "no test" not in next(line for line in markdown.splitlines() if line.startswith("| MaxP"))
    note = significance_note(table, columns, significance)
    assert "Holm correction over the 1 test of this table" in note
    assert "(no test a): nothing to test against reference a, as every query ties with it" in note
    assert "; 1 comparison, left out of the count of tests and the correction." in note
    assert "no test" not in significance_note(build_table(per_query_frame(), rows[:2], columns, significance),
                                              columns, significance)


def test_randomisation_and_wilcoxon_tests_can_mark_cells():
    columns = [Column("dev", "RR@10", 0.01, "dev RR@10")]
    rows = [Row("firstp", "FirstP"), Row("maxp", "MaxP", gain_over="firstp", tests={"a": "firstp"})]
    for significance in (Significance(test="wilcoxon"), Significance(test="randomisation", permutations=999, seed=1)):
        table = build_table(per_query_frame(), rows, columns, significance).set_index("system")
        assert table.loc["maxp", "marks"] == "a"
    note = significance_note(table, columns, Significance(test="randomisation", permutations=999, seed=1))
    assert "randomisation test (999 permutations, seed 1)" in note


def test_external_runs_show_a_dash_where_they_have_no_values_and_pair_on_common_queries():
    frame = per_query_frame()
    external = frame[(frame.system == "maxp") & (frame.qid != "q0")].assign(system="theirs")
    frame = pd.concat([frame, external], ignore_index=True)
    frame = pd.concat([frame, frame[frame.system != "theirs"].assign(queryset="test")], ignore_index=True)
    columns = [Column("dev", "RR@10", 0.01, "dev RR@10"), Column("test", "RR@10", 0.05, "test RR@10")]
    rows = [Row("firstp", "FirstP"), Row("theirs", "Their run", gain_over="firstp", tests={"a": "firstp"},
                                        external=True)]
    table = build_table(frame, rows, columns).set_index(["system", "queryset"])
    assert table.loc[("theirs", "dev"), "n_queries"] == 29 and table.loc[("theirs", "dev"), "marks"] == "a"
    assert np.isnan(table.loc[("theirs", "test"), "value"])
    markdown = as_table(table.reset_index(), columns, "c").markdown()
    assert "| Their run | " in markdown and "| – |" in markdown
    assert "Their run & 0.604\\textsuperscript{a} (+49.1\\%) & – & +49.1\\%" in as_table(table.reset_index(), columns,
                                                                                       "c", "t").latex()
    with pytest.raises(KeyError, match="no per-query values for system 'theirs'"):
        build_table(frame, [Row("theirs", "Their run")], columns)  # not marked external: an error


def test_setting_column_selects_fine_tuned_values():
    frame = per_query_frame().assign(setting="zero-shot")
    tuned = frame.assign(setting="fine-tuned", value=frame["value"] + 0.1)
    frame = pd.concat([frame, tuned], ignore_index=True)
    columns = [Column("dev", "RR@10", 0.05, "zero-shot"), Column("dev", "RR@10", 0.05, "fine-tuned", "fine-tuned")]
    table = build_table(frame, [Row("maxp", "MaxP")], columns).set_index("setting")
    assert table.loc["fine-tuned", "value"] == pytest.approx(table.loc["zero-shot", "value"] + 0.1)


def tuned_frame() -> pd.DataFrame:
    frame = per_query_frame().assign(setting="zero-shot")
    return pd.concat([frame, frame.assign(setting="fine-tuned", value=frame["value"] + 0.1)], ignore_index=True)


def test_zero_shot_and_fine_tuned_cells_of_one_query_set_and_metric_show_their_own_values():
    specs = [{"queryset": "dev", "metric": "RR@10"}, {"queryset": "dev", "metric": "RR@10", "setting": "fine-tuned"}]
    assert [column_header(s) for s in specs] == ["dev RR@10", "dev RR@10 (fine-tuned)"]
    assert duplicate_headers({"columns": specs}) == []
    columns = [Column(s["queryset"], s["metric"], 0.05, column_header(s), s.get("setting", "zero-shot"))
               for s in specs]
    table = build_table(tuned_frame(), [Row("maxp", "MaxP"), Row("firstp", "FirstP")], columns)
    values = table.set_index(["system", "setting"])["value"]
    line = next(line for line in as_table(table, columns, "c").markdown().splitlines() if line.startswith("| MaxP"))
    assert line == f"| MaxP | {values[('maxp', 'zero-shot')]:.3f} | {values[('maxp', 'fine-tuned')]:.3f} |"


def test_duplicate_headers_labels_and_columns_are_refused_naming_the_table():
    same_header = [{"queryset": "dev", "metric": "RR@10"},
                   {"queryset": "dev", "metric": "RR@10", "setting": "fine-tuned", "header": "dev RR@10"},
                   {"queryset": "dev", "metric": "AP", "header": "AP"}, {"queryset": "test", "metric": "AP",
                                                                         "header": "AP"}]
    assert duplicate_headers({"columns": same_header}) == ["dev RR@10", "AP"]
    columns = [Column("dev", "RR@10", 0.05, "dev RR@10"), Column("dev", "RR@10", 0.05, "dev RR@10", "fine-tuned")]
    with pytest.raises(ValueError, match=r"^table tab:farrelevant: the header 'dev RR@10' names several columns$"):
        build_table(tuned_frame(), [Row("maxp", "MaxP")], columns, name="tab:farrelevant")
    column = [Column("dev", "RR@10", 0.05, "dev RR@10")]
    with pytest.raises(ValueError, match=r"^table tab:table1: the label 'MaxP' names several rows$"):
        build_table(per_query_frame(), [Row("maxp", "MaxP"), Row("sump", "MaxP")], column, name="tab:table1")
    with pytest.raises(ValueError, match=r"the column dev RR@10 \(zero-shot\) appears more than once"):
        build_table(per_query_frame(), [Row("maxp", "MaxP")], column + [Column("dev", "RR@10", 0.05, "again")])
    with pytest.raises(ValueError, match=r"the system 'maxp' has several rows"):
        build_table(per_query_frame(), [Row("maxp", "MaxP"), Row("maxp", "MaxP again")], column)


def test_html_has_the_marks_and_escapes_labels():
    columns = [Column("dev", "RR@10", 0.01, "dev RR@10")]
    rows = [Row("firstp", "FirstP <base>"), Row("maxp", "MaxP", gain_over="firstp", tests={"a": "firstp"})]
    page = as_table(build_table(per_query_frame(), rows, columns), columns, "Caption with $p < 0.01$.").html()
    assert "<sup>a</sup>" in page and "FirstP &lt;base&gt;" in page and "p &lt; 0.01" in page
    assert "http" not in page  # self-contained: the report works offline


def test_a_zero_shot_row_reads_n_a_where_fine_tuned_and_no_test_involves_it_there():
    frame = tuned_frame()
    # the zero-shot system has no fine-tuned values at all: asking for them would be an error
    frame = frame[~((frame["system"] == "sump") & (frame["setting"] == "fine-tuned"))]
    columns = [Column("dev", "RR@10", 0.05, "zero-shot"), Column("dev", "RR@10", 0.05, "fine-tuned", "fine-tuned")]
    rows = [Row("maxp", "MaxP", tests={"b": "sump"}),
            Row("sump", "E5 (zero-shot)", gain_over="maxp", tests={"a": "maxp"}, not_applicable=frozenset({"fine-tuned"}))]
    table = build_table(frame, rows, columns)
    cells = table.set_index(["system", "setting"])
    assert cells.loc[("sump", "fine-tuned"), "not_applicable"] and np.isnan(cells.loc[("sump", "fine-tuned"), "value"])
    assert not np.isnan(cells.loc[("sump", "zero-shot"), "value"])
    assert pd.isna(cells.loc[("maxp", "fine-tuned")].get("vs_b"))  # MaxP's b-test has no partner there
    assert cells.loc[("maxp", "zero-shot"), "vs_b"] == "sump"
    assert table.attrs["n_tests"] == 1  # the one zero-shot pair
    line = next(line for line in as_table(table, columns, "c").markdown().splitlines() if line.startswith("| E5"))
    assert line.split(" | ")[2] == "N/A"
