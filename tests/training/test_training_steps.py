import pytest

from posbias.io import write_queries
from posbias.training.jobs import Recipe, TrainingSet
from posbias.training.steps import fit

RECIPE = dict(epochs=1, batch_size=1, grad_accum=16, margin=1.0, warmup_fraction=0.2, weight_decay=1e-7,
              freeze_embeddings=False, device="cpu", precision="auto", max_grad_norm=None)


class ModelLoaded(Exception):
    pass


def test_a_conflicting_recipe_fails_before_the_model_is_loaded(tmp_path, monkeypatch):
    from posbias.rankers import registry

    def build_ranker(name, args):
        raise ModelLoaded

    monkeypatch.setattr(registry, "build_ranker", build_ranker)  # where the pretrained ranker is built
    write_queries(tmp_path / "q.tsv", {"q1": "a question"})
    model = {"ranker": "maxp", "lr": 1e-5, "head_lr": 1e-4,
             "args": {"backbone": "offline:all-MiniLM-L6-v2", "max_query_tokens": 4, "chunk_tokens": 8, "stride": 8,
                      "max_doc_tokens": 8}}
    missing = str(tmp_path / "missing")
    inputs = TrainingSet(missing, str(tmp_path / "q.tsv"), missing, missing)
    with pytest.raises(ValueError, match=r"training.queries_per_epoch \(32\) and training.query_repeats \(100\)"):
        fit(Recipe(model, {**RECIPE, "queries_per_epoch": 32, "query_repeats": 100}, 1), inputs, {}, threads=1,
            progress=False)
    with pytest.raises(ModelLoaded):  # with a sound recipe the same call gets as far as the model
        fit(Recipe(model, {**RECIPE, "query_repeats": 100}, 1), inputs, {}, threads=1, progress=False)
