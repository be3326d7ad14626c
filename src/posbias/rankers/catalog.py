"""The rankers of the long-document study, by registry name, and which of them exist here.

This module imports nothing heavy, so the workflow can sort configured models and check each model's
arguments when it builds the graph, without loading torch. `tests/rankers/test_catalog.py` keeps `IMPLEMENTED` equal to the
registry and `arguments(ranker)` equal to each ranker's constructor arguments.
"""

from __future__ import annotations

IMPLEMENTED = frozenset({"firstp", "maxp", "sump", "avgp", "parade_avg", "parade_max", "parade_attn",
                         "parade_transf_rand", "parade_transf_pretr", "parade_transf_pretr_lateir",
                         "cedr_knrm", "cedr_pacrr", "cedr_drmm", "neural_model1", "longp", "biencoder"})

# Rankers that order a whole candidate list through the language-model layer (`posbias.llm`) instead of scoring
# with a torch module: never trained, their `args` name a language model and a sliding window
# (`posbias.rankers.rankgpt`).
LISTWISE = frozenset({"rankgpt"})

ALL = IMPLEMENTED | LISTWISE  # every ranker of the study (the schema's enum)

# The constructor arguments (`models.<name>.args`) every chunked cross-encoder takes ...
CHUNK_ARGUMENTS = frozenset({
    "backbone", "max_query_tokens", "chunk_tokens", "stride", "max_doc_tokens", "pooling", "backbone_layers",
    "trust_remote_code", "dropout", "head_dropout", "pad_query", "backbone_dtype",
})
# ... and those only some rankers take.
OWN_ARGUMENTS: dict[str, frozenset[str]] = {
    "parade_attn": frozenset({"attention"}),
    "parade_transf_rand": frozenset({"aggregator_layers", "aggregator_heads"}),
    "parade_transf_pretr": frozenset({"aggregator"}),
    "parade_transf_pretr_lateir": frozenset({"aggregator", "interaction_model"}),
    "cedr_drmm": frozenset({"mask_query_padding"}),
    "neural_model1": frozenset({"projection_size"}),
    "biencoder": frozenset({"prefixes", "position_ids"}),
}

# Rankers over greedy disjoint chunks, which refuse overlapping windows (stride must equal chunk_tokens):
# their heads read every document token once (`posbias.rankers.interaction`).
DISJOINT_CHUNKS = frozenset({"cedr_knrm", "cedr_pacrr", "cedr_drmm", "neural_model1"})

# Rankers that read the document in one sequence (chunk_tokens = stride = max_doc_tokens); the FirstP twin of
# such a model (the same ranker at 477 tokens) may be a baseline.
ONE_SEQUENCE = frozenset({"longp", "biencoder"})


def arguments(ranker: str) -> frozenset[str]:
    """The constructor arguments of an implemented ranker."""
    return CHUNK_ARGUMENTS | OWN_ARGUMENTS.get(ranker, frozenset())

