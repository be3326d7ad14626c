"""PARADE Transformer heads (Li et al.; the study's S C.2, Eq. (1)): an aggregator Transformer reads the chunk
vectors and its first output vector is scored.

    score = F(AggregTransf(C, cls_1, ..., cls_m)[0])

The aggregator is a Hugging Face encoder fed through `inputs_embeds`: it still adds its own position and
token-type embeddings and LayerNorm (the study's authors kept them), and its input is
`[C, S, cls_1 .. cls_m, S]` with token types `[0, 0, 1 .. 1, 0]`, C and S being trainable vectors. Padding-only
chunks are left out of the sequence: each document's sequence is packed (`assemble`), so the closing S sits
right after its last chunk and a document scores the same alone and in a batch with longer ones. The first
output vector goes through dropout (`head_dropout`) and a Linear(hidden -> 1) (xavier-initialised, as the
authors').

Word embeddings. The aggregator's word-embedding table is never read (every input comes through
`inputs_embeds`). It is cut to the fewest rows the architecture accepts (`pad_token_id + 1`, as RoBERTa's
position ids need the padding row) and frozen, so it neither trains nor counts (ours). The study's Table 11
parameter counts (132-148M for the PARADE Transformers) include the full table (about 23M for BERT's 30522
x 768): compare counts with that in mind.

The late-interaction variant (PARADE-LATEIR, S C.2 "Miscellaneous") adds an interaction Transformer that
builds each window's vector from independently encoded query and window tokens (`LateInteractionParade`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import torch
from torch import nn

from posbias.errors import InputError
from posbias.rankers.features import ChunkFeatures, WindowTokenFeatures
from posbias.rankers.geometry import position_limit


@dataclass
class Segment:
    """A run of vectors in a Transformer's input sequence (`assemble`)."""

    vectors: torch.Tensor  # [sequences, n, width]
    kept: torch.Tensor  # [sequences, n], True where a vector takes a position (the others are left out)
    visible: torch.Tensor  # [sequences, n], True where a kept vector is attended to (False: a masked slot)
    token_type: int

    @classmethod
    def special(cls, vector: torch.Tensor, sequences: int, token_type: int) -> "Segment":
        """One learned vector (C or S) at this point of every sequence."""
        ones = torch.ones((sequences, 1), dtype=torch.bool, device=vector.device)
        return cls(vector.expand(sequences, 1, -1), ones, ones, token_type)

    @classmethod
    def run(cls, vectors: torch.Tensor, mask: torch.Tensor, token_type: int) -> "Segment":
        """Vectors of which only the valid (`mask`) ones take part."""
        return cls(vectors, mask, mask, token_type)


@dataclass
class Assembled:
    inputs_embeds: torch.Tensor  # [sequences, length, width]; zeros after a sequence's end
    attention_mask: torch.Tensor  # [sequences, length], 1 on attended positions
    token_type_ids: torch.Tensor  # [sequences, length]


def assemble(segments: list[Segment]) -> Assembled:
    """Concatenate segments into one padded sequence per row, packing each row's kept vectors to the front in
    order, so padding inside a segment takes no position (positions, and thus scores, do not depend on how
    much padding the batch has). Kept but invisible vectors (a padded query with `pad_query`) take a position
    and are masked."""
    vectors = torch.cat([s.vectors for s in segments], dim=1)
    kept = torch.cat([s.kept for s in segments], dim=1)
    visible = torch.cat([s.visible for s in segments], dim=1) & kept
    types = torch.cat([torch.full_like(s.kept, s.token_type, dtype=torch.long) for s in segments], dim=1)
    # a stable sort by "not kept" moves the kept vectors to the front, in their order
    order = torch.argsort((~kept).to(torch.int8), dim=1, stable=True)
    length = int(kept.sum(dim=1).max())
    order = order[:, :length]
    in_sequence = kept.gather(1, order)
    embeds = vectors.gather(1, order.unsqueeze(-1).expand(-1, -1, vectors.shape[-1]))
    embeds = torch.where(in_sequence.unsqueeze(-1), embeds, torch.zeros_like(embeds))
    attention = visible.gather(1, order)
    return Assembled(embeds, attention.long(), (types.gather(1, order) * in_sequence).long())


def input_width(model: nn.Module) -> int:
    """The width of the vectors a Hugging Face encoder reads through `inputs_embeds` (ELECTRA: its embedding
    size, projected up to the hidden size inside the model)."""
    return model.get_input_embeddings().embedding_dim


def shrink_word_embeddings(model: nn.Module) -> nn.Module:
    """Replace the never-read word-embedding table of an encoder fed through `inputs_embeds` with a frozen one
    of `pad_token_id + 1` rows (the fewest the embedding layers accept), and say so in its config, so that
    `save_pretrained` and `from_pretrained` agree (ours; see the module's docstring)."""
    old = model.get_input_embeddings()
    pad = getattr(model.config, "pad_token_id", None)
    rows = (pad if isinstance(pad, int) and pad >= 0 else 0) + 1
    new = nn.Embedding(rows, old.embedding_dim, padding_idx=old.padding_idx if old.padding_idx is not None
                       and old.padding_idx < rows else None)
    with torch.no_grad():
        new.weight.copy_(old.weight[:rows])
    new.weight.requires_grad_(False)
    model.set_input_embeddings(new)
    model.config.vocab_size = rows
    return model


def random_aggregator(backbone_config, layers: int, heads: int) -> nn.Module:
    """PARADE Transf-RAND's aggregator: a randomly initialised BERT-architecture encoder of `layers` layers and
    `heads` attention heads, built from the backbone's config (width, feed-forward size, activation,
    dropout, LayerNorm epsilon, position count); word embeddings shrunk (`shrink_word_embeddings`)."""
    from transformers import BertConfig, BertModel

    hidden = backbone_config.hidden_size
    if layers < 1 or heads < 1:
        raise InputError(f"parade_transf_rand: aggregator_layers ({layers}) and aggregator_heads ({heads}) must be "
                         f"positive")
    if hidden % heads:
        raise InputError(f"parade_transf_rand: aggregator_heads ({heads}) must divide the backbone's hidden size "
                         f"({hidden})")
    defaults = BertConfig()
    take = lambda key: getattr(backbone_config, key, getattr(defaults, key))  # noqa: E731
    positions = take("max_position_embeddings")
    config = BertConfig(
        vocab_size=1, pad_token_id=0, hidden_size=hidden, num_hidden_layers=layers, num_attention_heads=heads,
        intermediate_size=getattr(backbone_config, "intermediate_size", 4 * hidden), hidden_act=take("hidden_act"),
        hidden_dropout_prob=take("hidden_dropout_prob"),
        attention_probs_dropout_prob=take("attention_probs_dropout_prob"),
        max_position_embeddings=positions if isinstance(positions, int) else defaults.max_position_embeddings,
        # token types [0, 0, 1 .. 1, 0] need two, whatever the backbone has (RoBERTa: one) (ours)
        type_vocab_size=2, initializer_range=take("initializer_range"), layer_norm_eps=take("layer_norm_eps"))
    model = BertModel(config, add_pooling_layer=False)
    return shrink_word_embeddings(model)


def special_token_vectors(backbone: nn.Module, token_ids: list[int]) -> torch.Tensor:
    """The backbone's word embeddings of `token_ids` ([CLS], [SEP]) in its hidden width: PARADE Transf-RAND's
    initial C and S. ELECTRA's word embeddings are narrower than its hidden size and the model projects its
    embedding output up; the raw word embeddings are projected with that same layer (ours: the authors'
    ELECTRA, a base model, has equal widths)."""
    with torch.no_grad():
        vectors = backbone.get_input_embeddings().weight[token_ids].detach().clone()
        hidden = backbone.config.hidden_size
        if vectors.shape[-1] != hidden:
            project = getattr(backbone, "embeddings_project", None)
            if project is None:
                raise InputError(f"parade_transf_rand: the backbone's word embeddings are {vectors.shape[-1]} wide, "
                                 f"not its hidden size {hidden}, and it has no projection (ELECTRA's "
                                 f"embeddings_project) to bring [CLS] and [SEP] to that width")
            vectors = project(vectors)
    return vectors


def random_special_vectors(width: int) -> torch.Tensor:
    """Two vectors drawn from N(0, 1/width): PARADE PRETR's and LATEIR's initial C and S (the authors'
    `rand_special_init`)."""
    return torch.randn(2, width) / math.sqrt(width)


class SpecialTokenTransformer(nn.Module):
    """A Hugging Face encoder read through `inputs_embeds`, with its own trainable C ([CLS]-like) and S
    ([SEP]-like) vectors, and a Linear projection (xavier-initialised, as the authors') of the vectors it is
    given when their width differs from its input width. `encode(segments)` returns the first output vector
    of each sequence."""

    def __init__(self, model: nn.Module, input_size: int, cls: torch.Tensor, sep: torch.Tensor):
        super().__init__()
        self.model = model
        width = input_width(model)
        if cls.shape != (width,) or sep.shape != (width,):
            raise ValueError(f"C and S must be {width}-wide vectors, got {tuple(cls.shape)} and {tuple(sep.shape)}")
        self.projection = None
        if input_size != width:
            self.projection = nn.Linear(input_size, width)
            nn.init.xavier_uniform_(self.projection.weight)
        self.cls = nn.Parameter(cls.clone())
        self.sep = nn.Parameter(sep.clone())
        self.hidden_size = model.config.hidden_size
        # token types only where the model has more than one (RoBERTa-like encoders have one: all zeros)
        self.uses_token_types = getattr(model.config, "type_vocab_size", 0) > 1
        self.position_limit = position_limit(model.config)

    def check_length(self, length: int, what: str, name: str) -> None:
        if self.position_limit is not None and length > self.position_limit:
            raise InputError(f"{name}: {what} needs {length} positions, but the model has {self.position_limit} "
                             f"(max_position_embeddings); lower chunk_tokens, max_query_tokens or max_doc_tokens")

    def project(self, vectors: torch.Tensor) -> torch.Tensor:
        return vectors if self.projection is None else self.projection(vectors)

    def C(self, sequences: int, token_type: int = 0) -> Segment:  # noqa: N802 (the paper's name)
        return Segment.special(self.cls, sequences, token_type)

    def S(self, sequences: int, token_type: int = 0) -> Segment:  # noqa: N802
        return Segment.special(self.sep, sequences, token_type)

    def encode(self, segments: list[Segment]) -> torch.Tensor:
        sequence = assemble(segments)
        inputs = {"inputs_embeds": sequence.inputs_embeds, "attention_mask": sequence.attention_mask}
        if self.uses_token_types:
            inputs["token_type_ids"] = sequence.token_type_ids
        return self.model(**inputs).last_hidden_state[:, 0]


class ParadeTransformer(nn.Module):
    """PARADE Transformer: the aggregator reads `[C, S, cls_1 .. cls_m, S]` (token types `[0, 0, 1 .. 1, 0]`,
    padding-only chunks left out), and its first output vector, after dropout, is scored."""

    token_layers = None

    def __init__(self, aggregator: SpecialTokenTransformer, head_dropout: float = 0.0):
        super().__init__()
        self.aggregator = aggregator
        self.dropout = nn.Dropout(head_dropout)
        self.score = nn.Linear(aggregator.hidden_size, 1)
        nn.init.xavier_uniform_(self.score.weight)

    def sequence(self, vectors: torch.Tensor, mask: torch.Tensor) -> list[Segment]:
        """The aggregator's input for chunk vectors [batch, chunks, width] and their mask."""
        n, aggregator = len(vectors), self.aggregator
        return [aggregator.C(n), aggregator.S(n), Segment.run(aggregator.project(vectors), mask, 1), aggregator.S(n)]

    def score_chunks(self, vectors: torch.Tensor, mask: torch.Tensor) -> torch.Tensor:
        first = self.aggregator.encode(self.sequence(vectors, mask))
        return self.score(self.dropout(first)).squeeze(-1)

    def forward(self, features: ChunkFeatures) -> torch.Tensor:
        return self.score_chunks(features.pooled, features.chunk_mask)


class LateInteractionParade(ParadeTransformer):
    """PARADE-LATEIR: query and windows come encoded on their own (`WindowTokenFeatures`). For each valid window
    an interaction Transformer reads `[C, S, q_1 .. q_n, S, w_1 .. w_k, S]` (its own C and S; token types
    `[0, 0, 0 .. 0, 0, 1 .. 1, 1]` as in a cross-encoder's input, ours: the authors' code gives all zeros;
    padded query slots with `pad_query` keep their positions, masked), and its first output vector is the
    window's vector; the aggregator then scores the windows as in `ParadeTransformer`."""

    def __init__(self, interaction: SpecialTokenTransformer, aggregator: SpecialTokenTransformer,
                 head_dropout: float = 0.0):
        super().__init__(aggregator, head_dropout)
        self.interaction = interaction

    def window_vectors(self, features: WindowTokenFeatures) -> torch.Tensor:
        """[batch, chunks, interaction hidden]: each valid window's interaction vector; zeros elsewhere."""
        valid = features.chunk_mask
        pair = valid.nonzero()[:, 0]  # the pair of each valid window
        interaction, n = self.interaction, int(valid.sum())
        query = interaction.project(features.query_states)[pair]
        window = interaction.project(features.window_states[valid])
        window_mask = features.window_mask[valid]
        segments = [interaction.C(n), interaction.S(n),
                    Segment(query, features.query_kept[pair], features.query_mask[pair], 0), interaction.S(n),
                    Segment.run(window, window_mask, 1), interaction.S(n, 1)]
        first = interaction.encode(segments)
        vectors = first.new_zeros((*valid.shape, first.shape[-1]))
        vectors[valid] = first
        return vectors

    def forward(self, features: WindowTokenFeatures) -> torch.Tensor:
        return self.score_chunks(self.window_vectors(features), features.chunk_mask)
