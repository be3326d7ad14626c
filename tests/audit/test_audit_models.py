"""The outside models behind the batteries: a sentence-transformers directory scores with its own modules, a posbias
FirstP checkpoint exported as a Hugging Face cross-encoder scores what the checkpoint scores, and the position probe
battery runs on any pair scorer."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from posbias.audit.batteries import probes_battery
from posbias.audit.battery_settings import settings_with
from posbias.audit.results import summarise
from posbias.audit.models import load_pair_model
from posbias.audit.spec import parse_model_spec
from posbias.errors import InputError

PAIRS = [("capital of zorvia", "the capital of zorvia is mendal. green hills roll on."),
         ("who founded kousepan", "kousepan was founded by felix guna."),
         ("capital of zorvia", "green hills")]


def sentence_transformer(backbone: str, path) -> str:
    from sentence_transformers import SentenceTransformer
    from sentence_transformers.sentence_transformer import modules as st

    word = st.Transformer(backbone, max_seq_length=24)
    modules = [word, st.Pooling(word.get_embedding_dimension(), "mean"), st.Normalize()]
    SentenceTransformer(modules=modules, device="cpu").save(str(path))
    return str(path)



def _loaded(ref, device="cpu"):
    """The pair scorer a spec names, as the audit loads it (no language model: no response cache)."""
    return load_pair_model(ref, cache_dir="", cache_mode="off", device=device)

def test_a_sentence_transformers_directory_scores_with_its_own_modules(tiny_backbone, tmp_path):
    from transformers import AutoModel, AutoTokenizer

    path = sentence_transformer(tiny_backbone, tmp_path / "st")
    model = _loaded(parse_model_spec(f"bi-encoder:{path}"), device="cpu")
    tokenizer, encoder = AutoTokenizer.from_pretrained(path), AutoModel.from_pretrained(path).eval()

    def by_hand(text):  # mean of the real tokens' states, L2-normalised
        inputs = tokenizer(text, truncation=True, max_length=24, return_tensors="pt")
        with torch.no_grad():
            states = encoder(**inputs).last_hidden_state[0]
        vector = states.mean(dim=0)
        return vector / vector.norm()

    expected = [float(by_hand(q) @ by_hand(d)) for q, d in PAIRS]
    assert model.score(PAIRS) == pytest.approx(expected, abs=1e-5)
    assert model.describe()["modules"] == "Transformer > Pooling > Normalize" and model.window == 22


def firstp_checkpoint(backbone: str, path, pooling: str = "cls") -> str:
    from posbias.backbones import load_tokenizer
    from posbias.rankers.checkpoint import save_checkpoint
    from posbias.rankers.registry import build_ranker

    torch.manual_seed(3)
    ranker = build_ranker("firstp", dict(backbone=backbone, pooling=pooling, max_query_tokens=8, chunk_tokens=16,
                                         stride=16, max_doc_tokens=16)).eval()
    with torch.no_grad():
        ranker.head.score.weight.normal_()
        ranker.head.score.bias.fill_(0.25)
    save_checkpoint(ranker, load_tokenizer(backbone), str(path))
    return str(path)


def test_an_exported_firstp_scores_what_its_checkpoint_scores(tiny_backbone, tmp_path):
    from posbias.audit.export import export_checkpoint

    checkpoint = firstp_checkpoint(tiny_backbone, tmp_path / "ckpt")
    exported = export_checkpoint(checkpoint, str(tmp_path / "hf"))
    outside = _loaded(parse_model_spec(f"cross-encoder:{exported}"), device="cpu")
    inside = _loaded(parse_model_spec(f"checkpoint:{checkpoint}"), device="cpu")
    assert outside.describe()["architecture"] == "ElectraForSequenceClassification"
    assert outside.max_length == 8 + 16 + 3  # the input length the ranker was trained on
    short = [(q, d) for q, d in PAIRS if inside.count_tokens(d) <= 16]  # both read these whole
    assert len(short) == 3
    assert outside.score(short) == pytest.approx(inside.score(short), abs=1e-5)
    assert len(set(np.round(inside.score(short), 4))) == 3


def test_only_a_first_token_firstp_exports(tiny_backbone, tmp_path):
    from posbias.audit.export import export_checkpoint

    checkpoint = firstp_checkpoint(tiny_backbone, tmp_path / "mean", pooling="mean")
    with pytest.raises(InputError, match=r"cannot export as a sequence-classification model: it pools by mean"):
        export_checkpoint(checkpoint, str(tmp_path / "out"))
    assert not (tmp_path / "out").exists()


def test_the_position_probe_battery_on_a_pair_scorer(tiny_backbone, tmp_path):
    checkpoint = _loaded(parse_model_spec(f"checkpoint:{firstp_checkpoint(tiny_backbone, tmp_path / 'c')}"),
                                 device="cpu")
    settings = {**settings_with(None)["probes"], "n": 6, "positions": 5}
    result = summarise(probes_battery(checkpoint, settings), settings_with(None)["statistics"])
    assert sorted(result.values["position"].unique()) == [0, 1, 2, 3, 4]
    assert result.values.groupby("position")["unit"].nunique().tolist() == [6] * 5
    assert result.extra["first_last"]["n"] == 6
    assert result.curve["n"].tolist() == [6] * 5
