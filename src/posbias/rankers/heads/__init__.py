"""Heads: from a chunk encoder's features (`posbias.rankers.features.ChunkFeatures`) to one score per document.

A head is an `nn.Module` with `forward(features) -> scores [batch]` and a class attribute
`token_layers` saying which token states it reads (None: only the pooled chunk vectors; "last":
the last layer's; "all": the embedding output and every layer's). Heads run in fp32, outside any
autocast, and must give padding (padding-only chunks, padded query or document tokens) no say.
"""
