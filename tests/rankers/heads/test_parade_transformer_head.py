import math

import pytest
import torch

from posbias.errors import InputError
from posbias.rankers.features import ChunkFeatures, WindowTokenFeatures
from posbias.rankers.heads.parade_transformer import (
    LateInteractionParade, ParadeTransformer, Segment, SpecialTokenTransformer, assemble, random_aggregator,
    random_special_vectors)


def bert_config(hidden=8, **overrides):
    from transformers import BertConfig

    return BertConfig(hidden_size=hidden, intermediate_size=2 * hidden, max_position_embeddings=32, **overrides)


def aggregator(hidden=8, input_size=None, heads=4):
    torch.manual_seed(0)
    model = random_aggregator(bert_config(hidden), layers=2, heads=heads)
    cls, sep = random_special_vectors(hidden)
    return SpecialTokenTransformer(model, input_size or hidden, cls, sep)


def captured_inputs(transformer: SpecialTokenTransformer, call):
    """The keyword inputs the Hugging Face model inside `transformer` gets during `call()`."""
    seen = []
    handle = transformer.model.register_forward_pre_hook(lambda module, args, kwargs: seen.append(kwargs),
                                                         with_kwargs=True)
    call()
    handle.remove()
    return seen


def test_assemble_packs_each_rows_kept_vectors_in_order():
    c, s = torch.tensor([10.0]), torch.tensor([20.0])
    run = torch.tensor([[[1.0], [2.0], [3.0]], [[4.0], [5.0], [6.0]]])
    mask = torch.tensor([[True, True, False], [True, True, True]])
    padded_query = Segment(torch.tensor([[[7.0], [8.0]], [[9.0], [0.5]]]), torch.ones(2, 2, dtype=torch.bool),
                           torch.tensor([[True, False], [True, True]]), 0)
    out = assemble([Segment.special(c, 2, 0), padded_query, Segment.run(run, mask, 1), Segment.special(s, 2, 0)])
    assert out.inputs_embeds[..., 0].tolist() == [[10, 7, 8, 1, 2, 20, 0], [10, 9, 0.5, 4, 5, 6, 20]]
    # a padded query slot keeps its position but is masked; the end of a shorter row is padding
    assert out.attention_mask.tolist() == [[1, 1, 0, 1, 1, 1, 0], [1, 1, 1, 1, 1, 1, 1]]
    assert out.token_type_ids.tolist() == [[0, 0, 0, 1, 1, 0, 0], [0, 0, 0, 1, 1, 1, 0]]


def test_aggregator_input_is_c_s_chunks_s_with_types_and_padding_chunks_left_out():
    head = ParadeTransformer(aggregator()).eval()
    vectors = torch.randn(2, 3, 8)
    mask = torch.tensor([[True, True, False], [True, True, True]])
    [inputs] = captured_inputs(head.aggregator, lambda: head(ChunkFeatures(vectors, mask)))
    embeds, c, s = inputs["inputs_embeds"], head.aggregator.cls, head.aggregator.sep
    assert embeds.shape == (2, 6, 8)
    for row, n in ((0, 2), (1, 3)):
        assert torch.equal(embeds[row, 0], c) and torch.equal(embeds[row, 1], s)
        assert torch.equal(embeds[row, 2:2 + n], vectors[row, :n])
        assert torch.equal(embeds[row, 2 + n], s)
    assert torch.equal(embeds[0, 5], torch.zeros(8))  # the padding chunk's vector never enters
    assert inputs["token_type_ids"].tolist() == [[0, 0, 1, 1, 0, 0], [0, 0, 1, 1, 1, 0]]
    assert inputs["attention_mask"].tolist() == [[1, 1, 1, 1, 1, 0], [1] * 6]


def test_padding_chunks_never_change_the_score(check_padding_chunks_never_change_the_score):
    check_padding_chunks_never_change_the_score(ParadeTransformer(aggregator()).eval())


def test_the_score_reads_the_first_output_vector_after_dropout():
    head = ParadeTransformer(aggregator(hidden=64), head_dropout=0.5)
    seen = []
    head.score.register_forward_pre_hook(lambda module, inputs: seen.append(inputs[0]))
    features = ChunkFeatures(torch.randn(1, 2, 64), torch.tensor([[True, True]]))
    torch.manual_seed(0)
    head.eval()
    head.dropout.train()  # the head's dropout alone (the aggregator has its own, inside)
    head(features)
    head.eval()(features)
    first = head.aggregator.encode(head.sequence(features.pooled, features.chunk_mask))
    assert torch.equal(seen[1], first)  # eval: h0 itself
    dropped = seen[0] == 0
    assert 0 < dropped.sum() < 64 and torch.allclose(seen[0][~dropped], 2 * first[~dropped])


def test_random_aggregator_has_the_asked_shape_and_a_frozen_one_row_word_table():
    model = random_aggregator(bert_config(hidden=12, hidden_act="gelu_new"), layers=3, heads=4)
    assert (model.config.num_hidden_layers, model.config.num_attention_heads, model.config.type_vocab_size) == (3, 4, 2)
    assert model.config.hidden_act == "gelu_new" and model.pooler is None
    table = model.get_input_embeddings()
    assert table.weight.shape == (1, 12) and not table.weight.requires_grad and model.config.vocab_size == 1
    with pytest.raises(InputError, match=r"aggregator_heads \(5\) must divide the backbone's hidden size \(12\)"):
        random_aggregator(bert_config(hidden=12), layers=2, heads=5)


def test_a_wider_or_narrower_input_is_projected_and_c_s_are_the_models_width():
    transformer = aggregator(hidden=8, input_size=20)
    assert transformer.projection.weight.shape == (8, 20)
    assert aggregator(hidden=8).projection is None
    head = ParadeTransformer(transformer).eval()
    assert head(ChunkFeatures(torch.randn(2, 3, 20), torch.ones(2, 3, dtype=torch.bool))).shape == (2,)
    torch.manual_seed(0)
    draws = random_special_vectors(400)
    assert draws.shape == (2, 400) and draws.std().item() == pytest.approx(1 / math.sqrt(400), rel=0.1)


def test_late_interaction_input_per_window_is_c_s_query_s_window_s():
    interaction, aggregate = aggregator(hidden=8), aggregator(hidden=8)
    head = LateInteractionParade(interaction, aggregate).eval()
    torch.manual_seed(1)
    query = torch.randn(2, 3, 8)
    windows = torch.randn(2, 2, 4, 8)
    features = WindowTokenFeatures(
        query_states=query, query_mask=torch.tensor([[True, True, False], [True, True, True]]),
        query_kept=torch.tensor([[True, True, False], [True, True, True]]), window_states=windows,
        window_mask=torch.tensor([[[True] * 4, [True, True, False, False]], [[True] * 3 + [False], [False] * 4]]),
        chunk_mask=torch.tensor([[True, True], [True, False]]))
    [inputs] = captured_inputs(interaction, lambda: head(features))
    embeds, c, s = inputs["inputs_embeds"], interaction.cls, interaction.sep
    assert embeds.shape[0] == 3  # the valid windows only
    expected = [torch.cat([c[None], s[None], query[0, :2], s[None], windows[0, 0], s[None]]),
                torch.cat([c[None], s[None], query[0, :2], s[None], windows[0, 1, :2], s[None]]),
                torch.cat([c[None], s[None], query[1], s[None], windows[1, 0, :3], s[None]])]
    for row, sequence in enumerate(expected):
        assert torch.equal(embeds[row, :len(sequence)], sequence)
    assert inputs["token_type_ids"].tolist() == [[0, 0, 0, 0, 0, 1, 1, 1, 1, 1],
                                                 [0, 0, 0, 0, 0, 1, 1, 1, 0, 0],
                                                 [0, 0, 0, 0, 0, 0, 1, 1, 1, 1]]
    assert inputs["attention_mask"].sum(dim=1).tolist() == [10, 8, 10]
