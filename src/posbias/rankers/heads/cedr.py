"""CEDR heads (MacAvaney et al. 2019): KNRM, PACRR and DRMM on contextualised similarity matrices, plus [CLS].

All three read the same inputs (`token_layers = "all"`): per channel ℓ (the embedding output and
every layer, 13 for BERT-base) the query's token states Q_ℓ (from the first chunk) and the
document's D_ℓ (the greedy disjoint chunks re-joined), and the mean of the valid chunks' pooled
vectors (the AvgP vector; with `pooling: cls` the mean [CLS], as in CEDR). The similarity matrix is

    simmat[ℓ, i, j] = cos(Q_ℓ[i], D_ℓ[j])  (1e-9 added to each norm),  0 where i or j is padding.

Where our inputs differ from CEDR's (a batch is padded only to its longest document and query,
not to a fixed length), padding must still have no say, so (ours, each marked below):

- KNRM sums its kernels over real document tokens only. CEDR sums over the fixed-length padded
  document, where every padded cell (similarity 0) adds K_k(0), a length-dependent constant.
- PACRR ranks (top-k) real document positions only, and its query rows are padded or masked to a
  fixed `query_tokens` (the ranker's max_query_tokens: the MLP's input size depends on it; CEDR fixes
  32 and pads queries), padded rows giving 0 where CEDR's give ReLU of the convolution's bias.
- DRMM adds up its per-query-token scores over real query tokens only (`mask_query_padding`,
  default true); without it, over all `query_tokens` slots as CEDR does.

`head_dropout`: CEDR's heads have no dropout (nor had the study's authors'). Here it acts on the
[CLS] (AvgP) vector only, before it joins the interaction features (ours); 0 reproduces CEDR.
"""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from posbias.rankers.features import ChunkFeatures

NORM_EPSILON = 1e-9  # added to each norm in the cosine (CEDR's SimmatModule)

# KNRM's kernels (CEDR / Xiong et al.): 10 soft-match kernels and one exact-match kernel; trainable.
KERNEL_MUS = (-0.9, -0.7, -0.5, -0.3, -0.1, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0)
KERNEL_SIGMAS = (0.1,) * 10 + (0.001,)
KERNEL_EPSILON = 1e-6  # log(sum + 1e-6)

DRMM_BINS = 11
DRMM_EPSILON = 1e-5  # log(count + 1e-5)
DRMM_HIDDEN = 5

PACRR_NGRAMS = 3  # n-gram (convolution) sizes 1 .. 3
PACRR_FILTERS = 32
PACRR_TOP_K = 2
PACRR_HIDDEN = 32


def similarity_matrix(query_states: torch.Tensor, query_mask: torch.Tensor, doc_states: torch.Tensor,
                      doc_mask: torch.Tensor) -> torch.Tensor:
    """Cosine similarities [batch, channels, query slots, document tokens] of the query's and the
    document's token states ([batch, channels, length, hidden]), 0 wherever either token is padding."""
    query_norm = query_states.norm(dim=-1).unsqueeze(-1) + NORM_EPSILON  # [B, L, Q, 1]
    doc_norm = doc_states.norm(dim=-1).unsqueeze(-2) + NORM_EPSILON  # [B, L, 1, D]
    similarity = query_states @ doc_states.transpose(-1, -2) / (query_norm * doc_norm)
    real = query_mask[:, None, :, None] & doc_mask[:, None, None, :]
    return similarity.masked_fill(~real, 0.0)


def features_similarity(features: ChunkFeatures) -> torch.Tensor:
    return similarity_matrix(features.query_states, features.query_mask, features.doc_states, features.doc_mask)


def mean_pooled(features: ChunkFeatures) -> torch.Tensor:
    """The mean of the valid chunks' pooled vectors [batch, hidden] (CEDR's averaged [CLS], the AvgP vector)."""
    mask = features.chunk_mask.unsqueeze(-1).to(features.pooled.dtype)
    return (features.pooled * mask).sum(dim=1) / mask.sum(dim=1).clamp(min=1)


def pad_query_slots(similarity: torch.Tensor, query_mask: torch.Tensor,
                    slots: int) -> tuple[torch.Tensor, torch.Tensor]:
    """The similarity matrix and query mask with the query dimension padded (zeros, masked) to `slots`."""
    have = similarity.shape[2]
    if have > slots:
        raise ValueError(f"{have} query slots, more than the head's {slots} (max_query_tokens)")
    if have == slots:
        return similarity, query_mask
    return F.pad(similarity, (0, 0, 0, slots - have)), F.pad(query_mask, (0, slots - have), value=False)


class CedrKnrm(nn.Module):
    """CEDR-KNRM: RBF kernel pooling per channel and query token, summed over query tokens, and [CLS];
    one linear layer scores the (kernels x channels + hidden) features."""

    token_layers = "all"

    def __init__(self, hidden_size: int, channels: int, head_dropout: float = 0.0):
        super().__init__()
        self.mu = nn.Parameter(torch.tensor(KERNEL_MUS))
        self.sigma = nn.Parameter(torch.tensor(KERNEL_SIGMAS))
        self.dropout = nn.Dropout(head_dropout)
        self.score = nn.Linear(len(KERNEL_MUS) * channels + hidden_size, 1)

    def kernel_features(self, similarity: torch.Tensor, query_mask: torch.Tensor,
                        doc_mask: torch.Tensor) -> torch.Tensor:
        """[batch, kernels x channels] (kernel-major, as CEDR): Σ_i log(Σ_j K_k(s[ℓ,i,j]) + 1e-6) over real
        query tokens i (a padded query row gives 0) and real document tokens j (ours: see the module doc)."""
        offset = similarity.unsqueeze(-1) - self.mu  # [B, L, Q, D, K]
        values = torch.exp(-0.5 * offset * offset / self.sigma / self.sigma)
        pooled = (values * doc_mask[:, None, None, :, None].to(values.dtype)).sum(dim=3)  # [B, L, Q, K]
        logs = torch.log(pooled + KERNEL_EPSILON) * query_mask[:, None, :, None].to(pooled.dtype)
        return logs.sum(dim=2).transpose(1, 2).flatten(1)

    def forward(self, features: ChunkFeatures) -> torch.Tensor:
        kernels = self.kernel_features(features_similarity(features), features.query_mask, features.doc_mask)
        cls = self.dropout(mean_pooled(features))
        return self.score(torch.cat([kernels, cls], dim=1)).squeeze(-1)


class CedrPacrr(nn.Module):
    """CEDR-PACRR: n x n convolutions (n = 1..3) over the channels of the similarity matrix, max over
    filters, the top 2 document positions per query token, flattened over `query_tokens` query slots,
    with [CLS] into a 3-layer MLP."""

    token_layers = "all"

    def __init__(self, hidden_size: int, channels: int, query_tokens: int, head_dropout: float = 0.0):
        super().__init__()
        self.query_tokens = query_tokens
        self.convolutions = nn.ModuleList(nn.Conv2d(channels, PACRR_FILTERS, n) for n in range(1, PACRR_NGRAMS + 1))
        self.dropout = nn.Dropout(head_dropout)
        self.hidden_1 = nn.Linear(hidden_size + query_tokens * PACRR_NGRAMS * PACRR_TOP_K, PACRR_HIDDEN)
        self.hidden_2 = nn.Linear(PACRR_HIDDEN, PACRR_HIDDEN)
        self.score = nn.Linear(PACRR_HIDDEN, 1)

    def ngram_features(self, similarity: torch.Tensor, query_mask: torch.Tensor,
                       doc_mask: torch.Tensor) -> torch.Tensor:
        """[batch, query_tokens x n-grams x k] (query-major, as CEDR)."""
        similarity, query_mask = pad_query_slots(similarity, query_mask, self.query_tokens)
        outside = ~doc_mask[:, None, :]  # [B, 1, D]
        parts = []
        for convolution in self.convolutions:
            n = convolution.kernel_size[0]
            # zero padding right and bottom: the n-gram at (i, j) reads rows i..i+n-1, columns j..j+n-1
            grid = torch.relu(convolution(F.pad(similarity, (0, n - 1, 0, n - 1))))  # [B, filters, Q, D]
            strongest = grid.max(dim=1).values.masked_fill(outside, float("-inf"))  # real positions only (ours)
            if strongest.shape[2] < PACRR_TOP_K:
                strongest = F.pad(strongest, (0, PACRR_TOP_K - strongest.shape[2]), value=float("-inf"))
            top = strongest.topk(PACRR_TOP_K, dim=2).values
            parts.append(torch.where(torch.isinf(top), torch.zeros_like(top), top))  # fewer than k: zeros
        values = torch.cat(parts, dim=2) * query_mask.unsqueeze(-1).to(similarity.dtype)  # padded rows: 0 (ours)
        return values.flatten(1)

    def forward(self, features: ChunkFeatures) -> torch.Tensor:
        ngrams = self.ngram_features(features_similarity(features), features.query_mask, features.doc_mask)
        cls = self.dropout(mean_pooled(features))
        hidden = torch.relu(self.hidden_1(torch.cat([ngrams, cls], dim=1)))
        return self.score(torch.relu(self.hidden_2(hidden))).squeeze(-1)


def log_count_histogram(similarity: torch.Tensor, query_mask: torch.Tensor, doc_mask: torch.Tensor,
                        bins: int = DRMM_BINS) -> torch.Tensor:
    """DRMM's histograms [batch, channels, query slots, bins]: log(count + 1e-5), where a similarity s
    falls in bin int((s + 1.000001) / 2 · (bins − 1)) and only real document tokens count (a padded
    query row counts nothing). Batched with scatter_add; not differentiable (CEDR's is not either)."""
    with torch.no_grad():
        index = ((similarity + 1.000001) / 2 * (bins - 1)).long().clamp_(0, bins - 1)
        weights = (query_mask[:, None, :, None] & doc_mask[:, None, None, :]).to(similarity.dtype)
        counts = similarity.new_zeros((*similarity.shape[:3], bins))
        counts.scatter_add_(3, index, weights.expand(index.shape).contiguous())
    return torch.log(counts + DRMM_EPSILON)


class CedrDrmm(nn.Module):
    """CEDR-DRMM: per query token, its histograms over all channels with [CLS] into Linear(. -> 5), ReLU,
    Linear(5 -> 1); the score is the sum over query tokens. The histograms carry no gradient: the
    backbone learns through [CLS] only (as in CEDR)."""

    token_layers = "all"

    def __init__(self, hidden_size: int, channels: int, query_tokens: int, head_dropout: float = 0.0,
                 mask_query_padding: bool = True):
        super().__init__()
        self.query_tokens = query_tokens
        self.mask_query_padding = mask_query_padding
        self.dropout = nn.Dropout(head_dropout)
        self.hidden_1 = nn.Linear(DRMM_BINS * channels + hidden_size, DRMM_HIDDEN)
        self.score = nn.Linear(DRMM_HIDDEN, 1)

    def forward(self, features: ChunkFeatures) -> torch.Tensor:
        similarity, query_mask = pad_query_slots(features_similarity(features), features.query_mask,
                                                 self.query_tokens)
        histogram = log_count_histogram(similarity, query_mask, features.doc_mask)  # [B, L, Q, bins]
        per_token = histogram.permute(0, 2, 3, 1).flatten(2)  # [B, Q, bins x channels], bin-major as CEDR
        cls = self.dropout(mean_pooled(features))
        cls = cls.unsqueeze(1).expand(-1, per_token.shape[1], -1)
        terms = self.score(torch.relu(self.hidden_1(torch.cat([per_token, cls], dim=2)))).squeeze(-1)  # [B, Q]
        if self.mask_query_padding:
            # ours: CEDR sums all 32 slots; each padded one (an empty histogram) adds a term that depends on
            # [CLS] alone, so the query's length sets how much extra weight [CLS] gets
            terms = terms * query_mask.to(terms.dtype)
        return terms.sum(dim=1)
