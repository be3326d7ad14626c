"""Every ranker's declaration (`posbias.rankers.declaration`), one module per family, named as the module that
holds its classes. The order is the schema's `ranker` enum and the docs' table."""

from __future__ import annotations

from posbias.rankers.declarations import bi_encoder, chunked, interaction, long_sequence, parade_transformer, rankgpt

DECLARATIONS = (*chunked.RANKERS, *interaction.RANKERS, *parade_transformer.RANKERS, *long_sequence.RANKERS,
                *bi_encoder.RANKERS, *rankgpt.RANKERS)
