"""PARADE Transf-RAND, Transf-PRETR and Transf-PRETR-LATEIR (`posbias.rankers.parade_transformer`)."""

from __future__ import annotations

from posbias.rankers.declaration import Argument, Chunking, RankerDeclaration
from posbias.rankers.declarations.base import POSITIVE, with_chunk_arguments

FAMILY = "PARADE Transformer"
MODULE = "posbias.rankers.parade_transformer"

PAPER_AGGREGATOR = "cross-encoder/ms-marco-MiniLM-L-6-v2"  # S Tab 1 "PRETR-L6"; the authors' config
FLEXNEUART_INTERACTION = "cross-encoder/ms-marco-MiniLM-L-2-v2"  # FlexNeuART's default; the authors kept it

AGGREGATOR_LAYERS = Argument(
    "aggregator_layers", POSITIVE,
    "parade_transf_rand: layers of the randomly initialised BERT-architecture aggregator, built from the "
    "backbone's config (default 2, the paper's L2)", default=2)
AGGREGATOR_HEADS = Argument(
    "aggregator_heads", POSITIVE,
    "parade_transf_rand: attention heads of the aggregator (default 4, the paper's footnote 4; the authors' code "
    "at HEAD has the backbone's 12); must divide the hidden size. Its word-embedding table is never read "
    "(inputs_embeds) and is kept at one frozen row (ours), so parameter counts are about 23M (BERT-base) below the "
    "study's Table 11 (132-148M), which includes it", default=4)
AGGREGATOR = Argument(
    "aggregator", {"type": "string"},
    "parade_transf_pretr, parade_transf_pretr_lateir: the pretrained aggregator Transformer, HF name or directory "
    "(default cross-encoder/ms-marco-MiniLM-L-6-v2, the paper's PRETR-L6); loaded with its position and "
    "token-type embeddings and LayerNorm, its word-embedding table cut to pad_token_id + 1 frozen rows (never "
    "read; ours); saved in checkpoints under auxiliary/aggregator. Its parameters train at aggregator_lr",
    default=PAPER_AGGREGATOR, pretrained=True)
INTERACTION_MODEL = Argument(
    "interaction_model", {"type": "string"},
    "parade_transf_pretr_lateir: the pretrained interaction Transformer run per window on [C, S, query tokens, S, "
    "window tokens, S], HF name or directory (default cross-encoder/ms-marco-MiniLM-L-2-v2, FlexNeuART's default, "
    "which the authors kept); word embeddings shrunk as for aggregator; trains at aggregator_lr (ours); saved "
    "under auxiliary/interaction_model", default=FLEXNEUART_INTERACTION, pretrained=True)


def _parade(name: str, cls: str, *own: Argument) -> RankerDeclaration:
    return RankerDeclaration(name, FAMILY, Chunking.OVERLAPPING_WINDOWS, with_chunk_arguments(*own),
                             f"{MODULE}:{cls}")


RANKERS = (
    _parade("parade_transf_rand", "ParadeTransfRand", AGGREGATOR_LAYERS, AGGREGATOR_HEADS),
    _parade("parade_transf_pretr", "ParadeTransfPretr", AGGREGATOR),
    _parade("parade_transf_pretr_lateir", "ParadeTransfPretrLateir", INTERACTION_MODEL, AGGREGATOR),
)
