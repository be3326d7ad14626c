import pytest

from posbias.config.sections.models import training_recipe
from posbias.settings import from_section
from posbias.training.recipe import TrainingSettings

SECTION = dict(queryset="train", seeds=[1, 2], epochs=1, batch_size=1, grad_accum=16, margin=1.0, warmup_fraction=0.2,
               weight_decay=1e-7, freeze_embeddings=False, freeze_layers=0, device="auto", precision="auto",
               max_grad_norm=1.0, save_every=500)
RATES = {"lr": 1e-5, "head_lr": 1e-4}


def settings(recipe):
    return from_section(TrainingSettings, {**RATES, **recipe}, "training")


def test_the_defaults_keep_the_earlier_recipe():
    recipe = settings(training_recipe(SECTION))
    assert (recipe.loss_reduction, recipe.epoch_lr_decay, recipe.negatives, recipe.query_repeats,
            recipe.queries_per_epoch, recipe.max_grad_norm) == ("mean", 1.0, None, 1, None, 1.0)


def test_the_authors_recipe_is_accepted_with_overrides_on_top():
    authors = {**SECTION, "max_grad_norm": None, "loss_reduction": "sum", "epoch_lr_decay": 0.95,
               "negatives": {"pool_depth": 100, "per_query": 5}}
    robust04 = {"epochs": 1, "query_repeats": 100, "negatives": {"pool_depth": 1000, "per_query": 100}}
    recipe = settings(training_recipe(authors, robust04))
    assert recipe.max_grad_norm is None and recipe.loss_reduction == "sum" and recipe.epoch_lr_decay == 0.95
    assert recipe.query_repeats == 100 and recipe.negatives == {"pool_depth": 1000, "per_query": 100}
    assert settings(training_recipe(authors, {"negatives": None})).negatives is None


def test_short_epochs_and_repeated_queries_are_refused_together_by_name():
    short = {**SECTION, "queries_per_epoch": 32}
    with pytest.raises(ValueError, match=r"training.queries_per_epoch \(32\) and training.query_repeats \(100\)"):
        settings(training_recipe(short, {"query_repeats": 100}))
    # an override can drop the section's short epochs
    assert settings(training_recipe(short, {"queries_per_epoch": None, "query_repeats": 100})).query_repeats == 100
    assert settings(training_recipe(short, {"query_repeats": 1})).queries_per_epoch == 32


@pytest.mark.parametrize("bad,message", [
    ({"negatives": {"pool_depth": 5, "per_query": 6}}, r"per_query \(6\) must be between 1 and pool_depth \(5\)"),
    ({"negatives": {"depth": 5, "per_query": 1}}, r"needs exactly the keys \['pool_depth', 'per_query'\]"),
    ({"loss_reduction": "avg"}, "training.loss_reduction: 'avg'"),
    ({"epoch_lr_decay": 1.5}, r"training.epoch_lr_decay: 1.5 is not in \(0, 1\]"),
    ({"query_repeats": 0}, "training.query_repeats: 0"),
    ({"pass_pairs": 0}, "training.pass_pairs: 0 is not at least 1"),
    ({"one_pass": True, "pass_pairs": 4}, r"training.one_pass and training.pass_pairs \(4\) both set"),
])
def test_impossible_settings_name_their_key(bad, message):
    with pytest.raises(ValueError, match=message):
        settings({**training_recipe(SECTION), **bad})


@pytest.mark.parametrize("how,per_pass", [({}, 2), ({"pass_pairs": 6}, 6), ({"pass_pairs": 99}, 32),
                                           ({"one_pass": True}, 32)])
def test_a_pass_holds_the_micro_batch_pass_pairs_or_the_whole_step(how, per_pass):
    """A step of 2 x 16 pairs: passes of batch_size, of pass_pairs (at most the step), or the whole step."""
    assert settings({**training_recipe(SECTION), "batch_size": 2, **how}).pairs_per_pass() == per_pass


def test_every_training_key_of_the_schema_is_a_setting():
    import dataclasses
    from posbias.config import schema as config_schema

    schema = config_schema()
    fields = {f.name for f in dataclasses.fields(TrainingSettings)}
    section = set(schema["properties"]["training"]["properties"]) - {"queryset", "seeds"}
    assert section == fields - {"lr", "head_lr", "aggregator_lr"}  # the learning rates are per model
    assert {"lr", "head_lr", "aggregator_lr"} <= set(schema["properties"]["models"]["additionalProperties"]["properties"])
    assert set(schema["$defs"]["training_overrides"]["properties"]) <= section
