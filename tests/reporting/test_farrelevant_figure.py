"""Figure 2: FarRelevant bars per model, zero-shot and fine-tuned side by side, with the random-shuffle line."""

from __future__ import annotations

import pandas as pd

from posbias.reporting import figures


def frame(values: dict[str, list[float]]) -> pd.DataFrame:
    """Per-seed values (two queries per seed) of each system."""
    rows = [{"system": system, "seed": seed, "qid": q, "metric": "RR", "value": v}
            for system, per_seed in values.items() for seed, v in enumerate(per_seed, start=1) for q in ("1", "2")]
    return pd.DataFrame(rows)


def draw(monkeypatch, tmp_path, finetuned):
    drawn = {}
    real_save = figures.save_figure

    def keep(fig, outputs):
        drawn["fig"] = fig
        drawn["texts"] = [t.get_text() for t in fig.axes[0].texts]
        drawn["legend"] = [t.get_text() for t in fig.axes[0].get_legend().get_texts()]
        drawn["bars"] = [(round(p.get_x() + p.get_width() / 2, 3), round(p.get_height(), 3))
                         for p in fig.axes[0].patches]
        real_save(fig, outputs)

    monkeypatch.setattr(figures, "save_figure", keep)
    zero = frame({"random": [0.05], "firstp": [0.02, 0.04], "maxp": [0.3, 0.2], "longp_e5": [0.06]})
    outputs = [str(tmp_path / "f.png"), str(tmp_path / "f.pdf")]
    figures.farrelevant_bars(zero, {"firstp": "FirstP", "maxp": "MaxP", "longp_e5": "E5"}, "random", "RR", outputs,
                             finetuned=finetuned)
    assert all((tmp_path / name).stat().st_size > 0 for name in ("f.png", "f.pdf"))
    return drawn


def test_zero_shot_and_fine_tuned_bars_with_the_random_line(monkeypatch, tmp_path):
    tuned = frame({"random": [0.05], "firstp": [0.09, 0.09], "maxp": [0.33, 0.33]})  # E5 is never fine-tuned
    drawn = draw(monkeypatch, tmp_path, tuned)
    assert drawn["legend"] == ["random shuffle (0.050)", "zero-shot", "fine-tuned"]
    # three zero-shot bars left of their tick, two fine-tuned ones right of it, N/A for E5
    assert drawn["bars"] == [(-0.2, 0.03), (0.8, 0.25), (1.8, 0.06), (0.2, 0.09), (1.2, 0.33)]
    assert drawn["texts"] == ["N/A"]


def test_without_fine_tuned_runs_only_the_zero_shot_bars(monkeypatch, tmp_path):
    drawn = draw(monkeypatch, tmp_path, None)
    assert drawn["legend"] == ["random shuffle (0.050)", "zero-shot"]
    assert drawn["bars"] == [(0.0, 0.03), (1.0, 0.25), (2.0, 0.06)] and drawn["texts"] == []
