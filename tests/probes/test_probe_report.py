import math

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from posbias.probes import report
from posbias.probes.report import (critical_value, heatmap_cells, heatmap_figure, literal_table, probe_table,
                                   sorted_summary, summary_figure, sweep_figure, write_probe_table)
from posbias.stats.document_pairs import correct_together, probe_statistic
from posbias.reporting.figure_files import save_figure
from posbias.reporting.render import MISSING, Cell

N = 40
LABELS = {"dense": "Dense Encoder", "weak": "Weak Encoder"}  # "bm25" falls back to its key
ORDER_INVARIANT = {"position_first_last", "position_sweep"}  # BM25 scores a reordered document the same


def _pair(scorer: str, probe: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    second = rng.normal(1.0, 0.2, N)
    if scorer == "bm25" and probe in ORDER_INVARIANT:
        return second.copy(), second  # identical scores: t = 0, every pair tied
    if scorer == "bm25" and probe == "repetition":
        return second + 0.1, second  # one constant difference: no spread, t undefined (NaN)
    shift = {"dense": 0.3, "weak": 0.0, "bm25": -0.2}[scorer]
    return second + shift + rng.normal(0.0, 0.2, N), second


def _summary(probes=("answer_importance", "position_first_last", "position_sweep", "literal", "brevity",
                     "repetition", "foil"), scorers=("dense", "weak", "bm25")) -> pd.DataFrame:
    conditions = {"position_sweep": [str(k) for k in range(1, 11)], "literal": report.LITERAL_CONDITIONS}
    keys, statistics = [], []
    for probe in probes:
        for condition in conditions.get(probe, [""]):
            for scorer in scorers:
                first, second = _pair(scorer, probe, seed=len(keys))
                if probe == "position_sweep" and condition == "1":
                    first = second.copy()  # position 1 against itself
                keys.append({"probe": probe, "condition": condition, "scorer": scorer})
                statistics.append(probe_statistic(first, second))
    statistics = correct_together(statistics, "holm")
    return pd.DataFrame([{**key, **s.to_dict()} for key, s in zip(keys, statistics)])


@pytest.fixture(scope="module")
def summary() -> pd.DataFrame:
    return _summary()


def _by_scorer(header, body) -> dict[str, dict[str, str | Cell]]:
    return {row[0]: dict(zip(header[1:], row[1:])) for row in body}


def _stat(summary, probe, scorer, condition=""):
    rows = summary[(summary["probe"] == probe) & (summary["scorer"] == scorer) & (summary["condition"] == condition)]
    assert len(rows) == 1
    return rows.iloc[0]


# --- the probe table ---------------------------------------------------------------------------------------------


def test_columns_follow_the_probes_present(summary):
    header, body, _ = probe_table(summary, LABELS, 0.05, "holm")
    assert header == ["Scorer", "Answer ↑", "Position ↓", "Literal ↓", "Brevity ↓", "Repetition ↓",
                      "Foil acc. (%) ↑", "Foil t ↑"]
    assert [row[0] for row in body] == ["Dense Encoder", "Weak Encoder", "bm25"]  # first appearance, label or key

    with_poison = pd.concat([summary, _summary(probes=("poison",))], ignore_index=True)
    assert probe_table(with_poison, LABELS, 0.05, "holm")[0][-2:] == ["Poison acc. (%) ↑", "Poison t ↑"]

    fewer = summary[~summary["probe"].isin(["answer_importance", "foil"])]
    assert probe_table(fewer, LABELS, 0.05, "holm")[0] == ["Scorer", "Position ↓", "Literal ↓", "Brevity ↓",
                                                           "Repetition ↓"]
    no_ss_sl = summary[~((summary["probe"] == "literal") & (summary["condition"] == "SS-SL"))]
    assert "Literal ↓" not in probe_table(no_ss_sl, LABELS, 0.05, "holm")[0]


def test_t_cells_are_marked_by_the_adjusted_p(summary):
    header, body, _ = probe_table(summary, LABELS, 0.05, "holm")
    cells = _by_scorer(header, body)
    columns = {"Answer ↑": ("answer_importance", ""), "Literal ↓": ("literal", "SS-SL"),
               "Brevity ↓": ("brevity", ""), "Foil t ↑": ("foil", "")}
    marks = []
    for scorer, label in (("dense", "Dense Encoder"), ("weak", "Weak Encoder")):
        for column, (probe, condition) in columns.items():
            row = _stat(summary, probe, scorer, condition)
            cell = cells[label][column]
            assert isinstance(cell, Cell) and cell.text == f"{row['t']:.2f}"
            assert cell.superscript == ("*" if row["p_adjusted"] < 0.05 else "")
            marks.append(cell.superscript)
    assert "*" in marks and "" in marks  # both cases are exercised
    strict = _by_scorer(*probe_table(summary, LABELS, 1e-300, "holm")[:2])
    assert strict["Dense Encoder"]["Answer ↑"].superscript == ""


def test_undefined_tests_and_missing_rows_show_a_dash(summary):
    partial = summary[~((summary["probe"] == "brevity") & (summary["scorer"] == "weak"))]
    header, body, _ = probe_table(partial, LABELS, 0.05, "holm")
    cells = _by_scorer(header, body)
    assert math.isnan(_stat(summary, "position_first_last", "bm25")["t"])  # identical scores: no test
    assert cells["bm25"]["Position ↓"] == MISSING
    assert math.isnan(_stat(summary, "repetition", "bm25")["t"])  # None in to_dict -> NaN in the frame
    assert cells["bm25"]["Repetition ↓"] == MISSING
    assert cells["Weak Encoder"]["Brevity ↓"] == MISSING
    assert cells["bm25"]["Brevity ↓"] != MISSING


def test_accuracy_is_the_win_rate_in_percent(summary):
    cells = _by_scorer(*probe_table(summary, LABELS, 0.05, "holm")[:2])
    win_rate = _stat(summary, "foil", "dense")["win_rate"]
    assert cells["Dense Encoder"]["Foil acc. (%) ↑"] == f"{100 * win_rate:.1f}"


def test_caption_names_n_direction_correction_and_alpha(summary):
    _, _, caption = probe_table(summary, LABELS, 0.01, "holm")
    assert f"n = {N} query pairs per probe" in caption
    assert "paired t" in caption and "D1" in caption and "D2" in caption
    assert "↑" in caption and "↓" in caption
    table_rows = summary[summary["probe"].isin(["answer_importance", "position_first_last", "brevity", "repetition",
                                                "foil"]) | (summary["condition"] == "SS-SL")]
    assert f"Holm correction over the {table_rows['p'].notna().sum()} tests of this table" in caption
    assert "adjusted p < 0.01" in caption


def test_literal_table_lists_the_five_conditions(summary):
    header, body, _ = literal_table(summary, LABELS, 0.05)
    assert header == ["Scorer", "LL vs LS", "LL vs SL", "LL vs SS", "SS vs LS", "SS vs SL"]
    assert len(body) == 3 and all(len(row) == 6 for row in body)


def test_write_probe_table(summary, tmp_path):
    outputs = {ext: str(tmp_path / f"probes.{ext}") for ext in ("tex", "csv", "md", "html")}
    write_probe_table(summary, LABELS, 0.05, "holm", outputs)
    for ext in ("tex", "md", "html"):
        text = (tmp_path / f"probes.{ext}").read_text(encoding="utf-8")
        assert "Dense Encoder" in text and "Weak Encoder" in text and "bm25" in text
        assert "nan" not in text.lower().replace("nanc", "")
    assert r"$\uparrow$" in (tmp_path / "probes.tex").read_text(encoding="utf-8")
    assert "LL vs LS" in (tmp_path / "probes.html").read_text(encoding="utf-8")

    written = pd.read_csv(outputs["csv"], dtype={"condition": str}, keep_default_na=False, na_values=[""])
    written["condition"] = written["condition"].fillna("")
    assert len(written) == len(summary) and set(summary.columns) <= set(written.columns)
    assert list(written.loc[written["probe"] == "position_sweep", "condition"].unique()) == [str(k)
                                                                                             for k in range(1, 11)]
    expected = sorted_summary(summary)
    assert written[report.KEYS].equals(expected[report.KEYS])
    for column in ("t", "p", "p_adjusted", "ci_low", "win_rate"):  # full precision, NaN kept
        np.testing.assert_array_equal(written[column].to_numpy(float), expected[column].to_numpy(float))


# --- figures -----------------------------------------------------------------------------------------------------


@pytest.fixture
def captured(monkeypatch):
    """The figure a function draws, kept open (report.save_figure would close it)."""
    figures = []
    monkeypatch.setattr(report, "save_figure", lambda fig, outputs: figures.append(fig))
    yield figures
    for fig in figures:
        report.plt.close(fig)


def _assert_written(tmp_path, name):
    png, pdf = (tmp_path / f"{name}.png").read_bytes(), (tmp_path / f"{name}.pdf").read_bytes()
    assert png.startswith(b"\x89PNG") and pdf.startswith(b"%PDF")


def _heatmap() -> pd.DataFrame:
    documents = {"q1": (2, 200), "q2": (0, 200), "q3": (3, 600), "q4": (1, 130), "q5": (10, 512), "q6": (2, 210)}
    rows = []
    for offset, scorer in enumerate(("dense", "bm25")):
        for i, (qid, (head_count, words)) in enumerate(documents.items()):
            rows.append({"scorer": scorer, "qid": qid, "head_count": head_count, "doc_words": words,
                         "score": 10.0 * offset + i})
    return pd.DataFrame(rows)


def test_heatmap_cells_bin_right_closed_and_drop_outside_rows():
    means, counts, dropped = heatmap_cells(_heatmap())
    assert dropped == 3  # q2: 0 head mentions, q3: 600 words, q4: 130 words (bins are right-closed)
    assert list(means) == ["dense", "bm25"]
    assert [str(r) for r in counts.index] == ["(230, 512]", "(190, 230]", "(160, 190]", "(130, 160]"]
    assert [str(c) for c in counts.columns] == ["(0, 1]", "(1, 2]", "(2, 3]", "(3, 10]"]
    assert counts.loc[pd.Interval(190, 230), pd.Interval(1, 2)] == 2  # q1 and q6
    assert means["dense"].loc[pd.Interval(190, 230), pd.Interval(1, 2)] == pytest.approx((0 + 5) / 2)
    assert means["bm25"].loc[pd.Interval(230, 512), pd.Interval(3, 10)] == pytest.approx(14.0)  # q5
    assert counts.to_numpy().sum() == 3
    assert means["dense"].isna().to_numpy().sum() == 16 - 2  # empty cells stay NaN (drawn blank)


def test_heatmap_rejects_document_features_that_differ_between_scorers():
    heatmap = _heatmap()
    heatmap.loc[heatmap.index[-1], "doc_words"] = 300  # q6 under bm25
    with pytest.raises(ValueError, match="1 queries, e.g. 'q6'"):
        heatmap_cells(heatmap)


def test_heatmap_figure(tmp_path, captured):
    heatmap_figure(_heatmap(), LABELS, [str(tmp_path / "heat.png"), str(tmp_path / "heat.pdf")])
    fig = captured[0]
    assert "3 of 6 queries" in fig._suptitle.get_text()
    titles = [ax.get_title() for ax in fig.axes if ax.get_title()]
    assert titles == ["Dense Encoder", "bm25", "queries per cell"]
    save_figure(fig, [str(tmp_path / "heat.png"), str(tmp_path / "heat.pdf")])  # the real writer
    _assert_written(tmp_path, "heat")


def test_sweep_figure_band_is_the_two_sided_critical_value(summary, tmp_path, captured):
    sweep_figure(summary, LABELS, [])
    ax = captured[0].axes[0]
    legend = [text.get_text() for text in ax.get_legend().get_texts()]
    assert "bm25 (order-invariant: no test)" in legend
    assert "Dense Encoder" in legend and "Weak Encoder" in legend
    value = stats.t.ppf(0.975, N - 1)
    assert critical_value(N) == pytest.approx(value)
    assert any("two-sided 95% critical value" in text for text in legend)
    levels = {round(line.get_ydata()[0], 6) for line in ax.get_lines() if line.get_linestyle() == "--"}
    assert levels == {round(value, 6), round(-value, 6)}
    dense = next(line for line in ax.get_lines() if line.get_label() == "Dense Encoder")
    assert list(dense.get_xdata()) == list(range(1, 11)) and dense.get_ydata()[0] == 0


def test_summary_figure_marks_missing_bars(summary, tmp_path, captured):
    summary_figure(summary, LABELS, [])
    ax = captured[0].axes[0]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["Literal ↓", "Position ↓", "Repetition ↓",
                                                            "Answer importance ↑", "Brevity ↓"]
    assert [t.get_text() for t in ax.texts].count(" n/a") == 2  # bm25: position (tied) and repetition (NaN)
    assert [t.get_text() for t in ax.get_legend().get_texts()] == ["Dense Encoder", "Weak Encoder", "bm25"]


@pytest.mark.parametrize("draw", ["sweep", "summary"])
def test_figures_write_png_and_pdf(summary, tmp_path, draw):
    outputs = [str(tmp_path / f"{draw}.png"), str(tmp_path / f"{draw}.pdf")]
    if draw == "sweep":
        sweep_figure(summary, LABELS, outputs)
    else:
        summary_figure(summary, LABELS, outputs)
    _assert_written(tmp_path, draw)


def test_figures_without_their_probes_still_render(tmp_path):
    only_foil = _summary(probes=("foil",))
    sweep_figure(only_foil, LABELS, [str(tmp_path / "sweep.png"), str(tmp_path / "sweep.pdf")])
    summary_figure(only_foil, LABELS, [str(tmp_path / "axes.png"), str(tmp_path / "axes.pdf")])
    _assert_written(tmp_path, "sweep")
    _assert_written(tmp_path, "axes")
