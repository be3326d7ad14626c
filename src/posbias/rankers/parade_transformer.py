"""PARADE Transformer rankers (the study's S C.2, Eq. (1) and footnote 4; heads in
`posbias.rankers.heads.parade_transformer`):

- `parade_transf_rand` (PARADE Transf-RAND-L2): a randomly initialised BERT-architecture aggregator built
  from the backbone's config, `aggregator_layers` layers (2) and `aggregator_heads` heads (4, footnote 4;
  the authors' FlexNeuART code at HEAD ignores that argument and has the backbone's 12). C and S start as the
  backbone's [CLS] and [SEP] word embeddings. Everything outside the backbone trains at the head's rate.
- `parade_transf_pretr` (PARADE Transf-PRETR-L6): a pretrained aggregator (`aggregator`, the paper's
  cross-encoder/ms-marco-MiniLM-L-6-v2), a xavier-initialised projection of the chunk vectors when the widths
  differ, C and S from N(0, 1/width). The aggregator's parameters form the "aggregator" learning-rate group
  (`models.<name>.aggregator_lr`, default head_lr: the authors trained it at the head's 1e-4).
- `parade_transf_pretr_lateir` (PARADE-Transf-Pretr-LATEIR-L6, S C.2 "Miscellaneous"): query and windows
  encoded independently by the backbone (`posbias.rankers.late_interaction`), an interaction Transformer
  per window (`interaction_model`, FlexNeuART's default cross-encoder/ms-marco-MiniLM-L-2-v2), then the
  aggregator as in PRETR. Both pretrained Transformers are in the "aggregator" group (ours: posbias has one
  group for pretrained models on top of the backbone; the authors set only the aggregator's rate, 1e-5).

Pretrained aggregators are auxiliary models (`auxiliary_models`): a checkpoint saves each under
auxiliary/<argument> and loads it from there, with no network.
"""

from __future__ import annotations

from torch import nn

from posbias.backbones import load_tokenizer
from posbias.errors import InputError
from posbias.rankers.base import ChunkRanker
from posbias.rankers.declarations.parade_transformer import FLEXNEUART_INTERACTION, PAPER_AGGREGATOR
from posbias.rankers.encoder import load_backbone
from posbias.rankers.geometry import SPECIAL_TOKENS
from posbias.rankers.heads.parade_transformer import (
    LateInteractionParade, ParadeTransformer, SpecialTokenTransformer, input_width, random_aggregator,
    random_special_vectors, shrink_word_embeddings, special_token_vectors)
from posbias.rankers.late_interaction import LateChunker, LateInteractionEncoder

AGGREGATOR_SPECIALS = 3  # C, S before the chunk vectors and S after them


def check_aggregator_length(ranker: ChunkRanker, aggregator: SpecialTokenTransformer) -> None:
    aggregator.check_length(ranker.geometry.max_chunks + AGGREGATOR_SPECIALS,
                            f"the aggregator's input of {ranker.geometry.max_chunks} chunks", ranker.registry_name)


def load_pretrained(name: str, what: str, trust_remote_code: bool) -> nn.Module:
    """A pretrained encoder fed through `inputs_embeds`: no pooler, word embeddings shrunk (never read)."""
    return shrink_word_embeddings(load_backbone(name, trust_remote_code=trust_remote_code, what=what))


class ParadeTransfRand(ChunkRanker):
    def __init__(self, aggregator_layers: int = 2, aggregator_heads: int = 4, **kwargs):
        self.aggregator_layers, self.aggregator_heads = aggregator_layers, aggregator_heads
        self.trust_remote_code = kwargs.get("trust_remote_code", False)
        super().__init__(**kwargs)

    def make_head(self, backbone):
        model = random_aggregator(backbone.config, self.aggregator_layers, self.aggregator_heads)
        tokenizer = load_tokenizer(backbone.name_or_path, self.trust_remote_code)  # the backbone's vocabulary
        if tokenizer.cls_token_id is None or tokenizer.sep_token_id is None:
            raise InputError("parade_transf_rand: the backbone's tokenizer has no [CLS] or [SEP] to start C and S from")
        cls, sep = special_token_vectors(backbone, [tokenizer.cls_token_id, tokenizer.sep_token_id])
        aggregator = SpecialTokenTransformer(model, backbone.config.hidden_size, cls, sep)
        check_aggregator_length(self, aggregator)
        return ParadeTransformer(aggregator, self.head_dropout)


class ParadeTransfPretr(ChunkRanker):
    def __init__(self, aggregator: str = PAPER_AGGREGATOR, **kwargs):
        self.aggregator_name = aggregator
        self.trust_remote_code = kwargs.get("trust_remote_code", False)
        super().__init__(**kwargs)

    def pretrained_aggregator(self, input_size: int) -> SpecialTokenTransformer:
        model = load_pretrained(self.aggregator_name, "aggregator", self.trust_remote_code)
        cls, sep = random_special_vectors(input_width(model))
        aggregator = SpecialTokenTransformer(model, input_size, cls, sep)
        check_aggregator_length(self, aggregator)
        return aggregator

    def make_head(self, backbone):
        return ParadeTransformer(self.pretrained_aggregator(backbone.config.hidden_size), self.head_dropout)

    def auxiliary_models(self) -> dict[str, nn.Module]:
        return {"aggregator": self.head.aggregator.model}

    def parameter_groups(self) -> dict[str, list[nn.Parameter]]:
        """The pretrained Transformers on top of the backbone (`auxiliary_models`) form the "aggregator"
        group; their C, S and projections stay in "head"."""
        groups = super().parameter_groups()
        pretrained = {id(p) for model in self.auxiliary_models().values() for p in model.parameters()}
        groups["aggregator"] = [p for p in groups["head"] if id(p) in pretrained]
        groups["head"] = [p for p in groups["head"] if id(p) not in pretrained]
        return groups


class ParadeTransfPretrLateir(ParadeTransfPretr):
    def __init__(self, interaction_model: str = FLEXNEUART_INTERACTION, **kwargs):
        self.interaction_name = interaction_model
        super().__init__(**kwargs)

    def make_head(self, backbone):
        model = load_pretrained(self.interaction_name, "interaction model", self.trust_remote_code)
        cls, sep = random_special_vectors(input_width(model))
        interaction = SpecialTokenTransformer(model, backbone.config.hidden_size, cls, sep)
        geometry = self.geometry
        interaction.check_length(geometry.max_query_tokens + geometry.chunk_tokens + SPECIAL_TOKENS + 1,
                                 "the interaction input [C, S, query, S, window, S]", self.registry_name)
        return LateInteractionParade(interaction, self.pretrained_aggregator(interaction.hidden_size),
                                     self.head_dropout)

    def make_encoder(self, backbone, pooling, head):
        if pooling != "cls":
            raise InputError(f"{self.registry_name} reads token states, not pooled chunk vectors: pooling "
                             f"{pooling!r} does not apply (leave it out)")
        return LateInteractionEncoder(backbone)

    def featurizer(self, tokenizer) -> LateChunker:
        return LateChunker(tokenizer, self.geometry)

    def auxiliary_models(self) -> dict[str, nn.Module]:
        return {"aggregator": self.head.aggregator.model, "interaction_model": self.head.interaction.model}
