import math

import pytest
import torch

from posbias.rankers.features import ChunkFeatures
from posbias.rankers.heads.cedr import (
    KERNEL_MUS, KERNEL_SIGMAS, CedrDrmm, CedrKnrm, CedrPacrr, log_count_histogram, mean_pooled, similarity_matrix,
)

HIDDEN, CHANNELS, QUERY_TOKENS = 4, 3, 5

HEADS = {
    "knrm": lambda p=0.0: CedrKnrm(HIDDEN, CHANNELS, p),
    "pacrr": lambda p=0.0: CedrPacrr(HIDDEN, CHANNELS, QUERY_TOKENS, p),
    "drmm": lambda p=0.0: CedrDrmm(HIDDEN, CHANNELS, QUERY_TOKENS, p),
    "drmm-unmasked": lambda p=0.0: CedrDrmm(HIDDEN, CHANNELS, QUERY_TOKENS, p, mask_query_padding=False),
}


def random_features(seed=0, query=(3, 2), doc=(6, 1), chunks=(2, 1)) -> ChunkFeatures:
    """Two documents: query and document lengths and valid chunks per document, padded to the longest."""
    generator = torch.Generator().manual_seed(seed)
    batch, n_query, n_doc, n_chunks = len(query), max(query), max(doc), max(chunks)
    arange = lambda n: torch.arange(n)[None, :]  # noqa: E731
    return ChunkFeatures(
        pooled=torch.randn(batch, n_chunks, HIDDEN, generator=generator),
        chunk_mask=arange(n_chunks) < torch.tensor(chunks)[:, None],
        query_states=torch.randn(batch, CHANNELS, n_query, HIDDEN, generator=generator),
        query_mask=arange(n_query) < torch.tensor(query)[:, None],
        doc_states=torch.randn(batch, CHANNELS, n_doc, HIDDEN, generator=generator),
        doc_mask=arange(n_doc) < torch.tensor(doc)[:, None])


def padded(features: ChunkFeatures, query: int, doc: int, chunks: int) -> ChunkFeatures:
    """The same documents with more query slots, document tokens and chunks, all padding holding garbage."""
    def grow(t, dim, n):
        return torch.cat([t, 50 * torch.randn(*t.shape[:dim], n, *t.shape[dim + 1:])], dim=dim)

    no = lambda mask, n: torch.cat([mask, torch.zeros(mask.shape[0], n, dtype=torch.bool)], dim=1)  # noqa: E731
    return ChunkFeatures(grow(features.pooled, 1, chunks), no(features.chunk_mask, chunks),
                         grow(features.query_states, 2, query), no(features.query_mask, query),
                         grow(features.doc_states, 2, doc), no(features.doc_mask, doc))


def first(features: ChunkFeatures, query: int, doc: int, chunks: int) -> ChunkFeatures:
    """The first document alone, cut to its own lengths."""
    return ChunkFeatures(features.pooled[:1, :chunks], features.chunk_mask[:1, :chunks],
                         features.query_states[:1, :, :query], features.query_mask[:1, :query],
                         features.doc_states[:1, :, :doc], features.doc_mask[:1, :doc])


def test_similarity_is_the_cosine_and_zero_on_padding():
    query = torch.tensor([[[[3.0, 4.0], [1.0, 0.0], [7.0, 7.0]]]])  # [1, 1 channel, 3, 2]; the last is padding
    doc = torch.tensor([[[[0.0, 2.0], [-1.0, 0.0], [5.0, 5.0]]]])  # the last is padding
    sim = similarity_matrix(query, torch.tensor([[True, True, False]]), doc, torch.tensor([[True, True, False]]))
    expected = [[0.8, -0.6, 0.0], [0.0, -1.0, 0.0], [0.0, 0.0, 0.0]]
    assert sim[0, 0].tolist() == [pytest.approx(row, abs=1e-6) for row in expected]
    # a zero vector (1e-9 on the norms) gives 0, not NaN
    zero = similarity_matrix(torch.zeros(1, 1, 1, 2), torch.tensor([[True]]), doc[:, :, :1], torch.tensor([[True]]))
    assert zero.item() == 0.0


def test_mean_pooled_averages_the_valid_chunks():
    features = ChunkFeatures(torch.tensor([[[1.0, 2.0], [3.0, 6.0], [99.0, 99.0]]]),
                             torch.tensor([[True, True, False]]))
    assert mean_pooled(features)[0].tolist() == [2.0, 4.0]


def test_knrm_kernel_features_by_hand():
    head = CedrKnrm(HIDDEN, 1)
    # one channel; query token 0 sees similarities 0.5 and 0.9 (and a padded document token), query token 1 is padding
    sim = torch.tensor([[[[0.5, 0.9, 0.0], [0.0, 0.0, 0.0]]]])
    features = head.kernel_features(sim, torch.tensor([[True, False]]), torch.tensor([[True, True, False]]))
    assert features.shape == (1, len(KERNEL_MUS))

    def kernel(s, mu, sigma):
        return math.exp(-((s - mu) ** 2) / (2 * sigma ** 2))

    expected = [math.log(kernel(0.5, mu, sigma) + kernel(0.9, mu, sigma) + 1e-6)
                for mu, sigma in zip(KERNEL_MUS, KERNEL_SIGMAS)]
    assert features[0].tolist() == pytest.approx(expected, rel=1e-5, abs=1e-6)
    # e.g. the kernel at 0.5 holds exp(0) + exp(-8)
    assert features[0, 7].item() == pytest.approx(math.log(1 + math.exp(-8) + 1e-6), abs=1e-6)


def test_knrm_kernels_are_trainable_and_feature_order_is_kernel_major():
    head = CedrKnrm(HIDDEN, 2)
    assert head.mu.requires_grad and head.sigma.requires_grad
    assert head.score.in_features == 11 * 2 + HIDDEN
    sim = torch.tensor([[[[1.0]], [[-0.9]]]])  # channel 0: exact match; channel 1: similarity -0.9
    features = head.kernel_features(sim, torch.tensor([[True]]), torch.tensor([[True]])).view(11, 2)
    assert features[10, 0].item() == pytest.approx(math.log(1 + 1e-6), abs=1e-6)  # exact-match kernel, channel 0
    assert features[0, 1].item() == pytest.approx(math.log(1 + 1e-6), abs=1e-6)  # kernel at -0.9, channel 1
    features.sum().backward()
    assert head.mu.grad is not None and head.sigma.grad is not None


def test_drmm_histogram_of_a_known_row():
    sim = torch.tensor([[[[-1.0, -0.95, 0.0, 0.3, 1.0, 0.42]]]])  # the last document token is padding
    logs = log_count_histogram(sim, torch.tensor([[True]]), torch.tensor([[True] * 5 + [False]]))
    counts = [0.0] * 11
    for bin_ in (0, 0, 5, 6, 10):
        counts[bin_] += 1
    assert logs[0, 0, 0].tolist() == pytest.approx([math.log(c + 1e-5) for c in counts], abs=1e-6)
    # a padded query row counts nothing
    empty = log_count_histogram(sim, torch.tensor([[False]]), torch.tensor([[True] * 6]))
    assert empty[0, 0, 0].tolist() == pytest.approx([math.log(1e-5)] * 11, abs=1e-6)


def test_drmm_histogram_is_batched_per_channel_and_query_token():
    torch.manual_seed(0)
    sim = torch.rand(2, 3, 4, 7) * 2 - 1
    query_mask, doc_mask = torch.rand(2, 4) > 0.3, torch.rand(2, 7) > 0.3
    logs = log_count_histogram(sim, query_mask, doc_mask)
    for b in range(2):
        for channel in range(3):
            for i in range(4):
                bins = ((sim[b, channel, i] + 1.000001) / 2 * 10).int()
                weights = (doc_mask[b] & query_mask[b, i]).float()
                counts = torch.bincount(bins, weights, 11)
                assert torch.allclose(logs[b, channel, i], (counts + 1e-5).log())


def test_drmm_histogram_passes_no_gradient_the_cls_vector_does():
    head = CedrDrmm(HIDDEN, CHANNELS, QUERY_TOKENS)
    features = random_features()
    for tensor in (features.pooled, features.query_states, features.doc_states):
        tensor.requires_grad_(True)
    head(features).sum().backward()
    assert features.pooled.grad.abs().sum() > 0
    assert features.doc_states.grad is None and features.query_states.grad is None


def test_drmm_sums_terms_over_real_query_tokens_or_over_every_slot():
    torch.manual_seed(0)
    masked, unmasked = HEADS["drmm"](), HEADS["drmm-unmasked"]()
    unmasked.load_state_dict(masked.state_dict())
    features = first(random_features(), 3, 6, 2)  # 3 real query tokens of QUERY_TOKENS = 5 slots
    cls = mean_pooled(features)
    empty = torch.full((11 * CHANNELS,), math.log(1e-5))  # the histogram features of a padded slot
    padded_term = masked.score(torch.relu(masked.hidden_1(torch.cat([empty, cls[0]])))).item()
    assert unmasked(features).item() == pytest.approx(masked(features).item() + 2 * padded_term, rel=1e-5)


def test_pacrr_takes_the_top_k_real_positions_and_zeros_when_fewer():
    head = CedrPacrr(HIDDEN, 1, 2)
    with torch.no_grad():  # the unigram convolution copies the similarity (all filters alike)
        for convolution in head.convolutions:
            convolution.weight.zero_()
            convolution.bias.zero_()
        head.convolutions[0].weight.fill_(1.0)
    sim = torch.tensor([[[[0.2, 0.9, 0.5, 0.0]]]])  # one query token, the last document token is padding
    doc_mask = torch.tensor([[True, True, True, False]])
    values = head.ngram_features(sim, torch.tensor([[True]]), doc_mask).view(2, 3, 2)
    assert values[0, 0].tolist() == pytest.approx([0.9, 0.5])  # unigram top-2
    assert values[0, 1:].abs().sum() == 0  # bigram, trigram: zero filters
    assert values[1].abs().sum() == 0  # the query slot padded to query_tokens = 2
    # a padded position never enters the top k, even when it holds the largest value
    with torch.no_grad():
        head.convolutions[0].bias.fill_(1.0)
    values = head.ngram_features(sim, torch.tensor([[True]]), doc_mask).view(2, 3, 2)
    assert values[0, 0].tolist() == pytest.approx([1.9, 1.5])
    # one real document token: the second of the top 2 is 0
    single = head.ngram_features(sim[..., :1], torch.tensor([[True]]), doc_mask[:, :1]).view(2, 3, 2)
    assert single[0, 0].tolist() == pytest.approx([1.2, 0.0])


def test_pacrr_ngrams_read_right_and_down_with_zero_padding():
    head = CedrPacrr(HIDDEN, 1, 2)
    with torch.no_grad():
        for convolution in head.convolutions:
            convolution.weight.fill_(1.0)
            convolution.bias.zero_()
    sim = torch.tensor([[[[0.1, 0.2], [0.3, 0.4]]]])
    values = head.ngram_features(sim, torch.tensor([[True, True]]), torch.tensor([[True, True]])).view(2, 3, 2)
    # bigram at (0, 0) sums the 2 x 2 block; at (0, 1) the right column is zero padding
    assert values[0, 1].tolist() == pytest.approx([1.0, 0.6])
    assert values[1, 1].tolist() == pytest.approx([0.7, 0.4])
    assert head.hidden_1.in_features == HIDDEN + 2 * 3 * 2  # sized by query_tokens


@pytest.mark.parametrize("name", HEADS)
def test_padding_never_changes_a_score(name):
    torch.manual_seed(0)
    head = HEADS[name]().eval()
    features = random_features()
    base = head(features)
    assert torch.isfinite(base).all()
    assert torch.allclose(head(padded(features, query=2, doc=4, chunks=2)), base, atol=1e-5)
    assert torch.allclose(head(first(features, 3, 6, 2)), base[:1], atol=1e-5)  # alone == in a batch


@pytest.mark.parametrize("name", HEADS)
def test_head_dropout_acts_on_the_cls_vector_only(name):
    torch.manual_seed(0)
    head = HEADS[name](0.5).train()
    features = random_features()
    features.pooled = torch.ones_like(features.pooled)
    seen = []
    layer = head.score if name == "knrm" else head.hidden_1
    layer.register_forward_pre_hook(lambda module, inputs: seen.append(inputs[0]))
    head(features)
    head.eval()
    head(features)
    (trained, scored) = seen
    cls = trained[..., -HIDDEN:]
    assert set(cls.unique().tolist()) == {0.0, 2.0}  # zeroed, or kept and scaled by 1 / (1 - p)
    assert torch.equal(scored[..., -HIDDEN:], torch.ones_like(cls))  # off when scoring
    assert torch.equal(trained[..., :-HIDDEN], scored[..., :-HIDDEN])  # the interaction features never dropped


def test_query_longer_than_the_head_is_refused():
    head = CedrPacrr(HIDDEN, CHANNELS, 2)
    with pytest.raises(ValueError, match="query slots"):
        head(random_features())
