import pytest
import torch

from posbias.rankers.features import ChunkFeatures
from posbias.rankers.heads.chunk_scores import ChunkScores


@pytest.mark.parametrize("mode", ChunkScores.MODES)
def test_padding_chunks_never_change_the_score(mode, check_padding_chunks_never_change_the_score):
    check_padding_chunks_never_change_the_score(ChunkScores(8, mode))


def test_chunk_scores_combine_as_named():
    head = ChunkScores(1, "first")
    with torch.no_grad():
        head.score.weight.fill_(1.0)
        head.score.bias.fill_(0.0)
    features = ChunkFeatures(torch.tensor([[[1.0], [3.0], [7.0]]]), torch.tensor([[True, True, False]]))
    expected = {"first": 1.0, "max": 3.0, "sum": 4.0, "mean": 2.0}
    for mode, value in expected.items():
        head.mode = mode
        assert head(features).item() == pytest.approx(value)


@pytest.mark.parametrize("mode", ChunkScores.MODES)
def test_head_dropout_acts_on_the_vector_the_scoring_layer_reads(mode, check_head_dropout):
    check_head_dropout(lambda p: ChunkScores(64, mode, p))
