"""`posbias audit` from a scratch directory, offline, on a local cross-encoder: the batteries' files, the card and
the leaderboard; a bad spec, a missing directory and a model without a classification head are one line each."""

from __future__ import annotations

import json

import pandas as pd
import pytest
import yaml

from posbias.cli import main

SMALL = {"sweep": {"n_queries": 6, "n_positions": 4, "n_distractors": 2, "doc_tokens": 80},
         "probes": {"n": 4, "positions": 4}, "statistics": {"n_resamples": 200}}


@pytest.fixture
def scratch(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "small.yaml").write_text(yaml.safe_dump(SMALL))
    return tmp_path


def cross_encoder(backbone, path):
    import torch
    from transformers import AutoModelForSequenceClassification, AutoTokenizer

    torch.manual_seed(1)
    AutoModelForSequenceClassification.from_pretrained(backbone, num_labels=1).save_pretrained(path)
    AutoTokenizer.from_pretrained(backbone).save_pretrained(path)
    return str(path)


def test_audit_a_local_cross_encoder_offline(tiny_backbone, scratch, monkeypatch):
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    model = cross_encoder(tiny_backbone, scratch / "my-ce")
    assert main(["audit", "--model", "cross-encoder:my-ce?max_length=40", "--out", "audits",
                 "--settings", "small.yaml"]) == 0
    audited = scratch / "audits" / "cross-encoder-my-ce"
    for battery in ("sweep", "probes"):
        record = json.loads((audited / f"{battery}.json").read_text())
        assert record["kind"] == "cross-encoder" and record["battery"] == battery and record["n_units"] == 4 + 2 * (
            battery == "sweep")
        assert len(pd.read_csv(audited / f"{battery}.curve.csv")) == 4
    card = (audited / "card.html").read_text()
    assert "ElectraForSequenceClassification" not in card and "BertForSequenceClassification" in card
    assert card.count('src="data:image/png;base64,') == 2 and "Provenance" in card
    assert "smallest drop found with 80% power" in card
    board = pd.read_csv(scratch / "audits" / "leaderboard.csv")
    assert board[["name", "battery"]].values.tolist() == [["cross-encoder-my-ce", "sweep"],
                                                          ["cross-encoder-my-ce", "probes"]]
    assert "detectable_drop" in board and "Detectable" in (scratch / "audits" / "leaderboard.md").read_text()
    written = {path.name for path in (scratch / "audits").iterdir()}
    assert {f"leaderboard.{fmt}" for fmt in ("csv", "md", "tex", "html")} <= written
    # a second model joins the same leaderboard; --report-only rewrites it from the files
    assert main(["audit", "--model", f"cross-encoder:{model}?window=8&stride=8&name=windowed", "--out", "audits",
                 "--settings", "small.yaml", "--battery", "sweep", "--no-report"]) == 0
    assert len(pd.read_csv(scratch / "audits" / "leaderboard.csv")) == 2
    assert main(["audit", "--report-only", "--out", "audits"]) == 0
    assert pd.read_csv(scratch / "audits" / "leaderboard.csv")["name"].tolist()[-1] == "windowed"


@pytest.mark.parametrize("spec, message", [
    ("crossencoder:my-ce", "model spec 'crossencoder:my-ce': expected KIND:TARGET with KIND one of"),
    ("cross-encoder:./nowhere", "model spec 'cross-encoder:./nowhere': ./nowhere is not a directory"),
    ("cross-encoder:BACKBONE", "has no sequence-classification head (its architectures: BertModel)"),
    ("reader:mock:u_curve", "a reader takes the batteries reader, reader_grid, not 'sweep'"),
    ("cross-encoder:BACKBONE_CE?window=8&stride=16", "a stride longer than the window skips text"),
    ("rankgpt:mock:identity?name=exported", "name 'exported' is a directory of the audit's own"),
])
def test_bad_models_get_one_line(tiny_backbone, scratch, capsys, spec, message):
    if "BACKBONE_CE" in spec:
        spec = spec.replace("BACKBONE_CE", cross_encoder(tiny_backbone, scratch / "ce"))
    spec = spec.replace("BACKBONE", tiny_backbone)
    capsys.readouterr()  # what making the test's model printed
    with pytest.raises(SystemExit) as exit_:
        main(["audit", "--model", spec, "--out", "audits", "--battery", "sweep"])
    assert exit_.value.code == 2
    error = capsys.readouterr().err.strip()
    assert error.startswith("posbias audit: error: ") and message in error and "\n" not in error
    assert not (scratch / "audits").exists()


def test_flags_that_do_not_go_together(scratch, capsys):
    for argv in (["audit", "--out", "a"], ["audit", "--model", "rankgpt:mock:identity", "--config", "c.yaml",
                                           "--out", "a"], ["audit", "--report-only", "--model", "x:y", "--out", "a"]):
        with pytest.raises(SystemExit) as exit_:
            main(argv)
        assert exit_.value.code == 2
    assert "give --model, or --config with --name" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["audit", "--model", "rankgpt:mock:identity", "--name", "../escape", "--out", "a"])
    assert "--name: name '../escape' may hold only letters" in capsys.readouterr().err
