"""The arguments of every chunked cross-encoder (`posbias.rankers.base.ChunkRanker`), in its constructor's order,
and the one argument the pipeline reads instead of the ranker."""

from __future__ import annotations

from posbias.rankers.declaration import Argument

POSITIVE = {"type": "integer", "minimum": 1}
SHARE = {"type": "number", "minimum": 0, "maximum": 1}

BACKBONE = Argument("backbone", {"type": "string"}, "HF model directory or name, or offline:all-MiniLM-L6-v2",
                    pretrained=True)
MAX_QUERY_TOKENS = Argument("max_query_tokens", POSITIVE)
CHUNK_TOKENS = Argument("chunk_tokens", POSITIVE)
STRIDE = Argument("stride", POSITIVE, "cedr_* and neural_model1 read greedy disjoint chunks: stride must equal "
                  "chunk_tokens")
MAX_DOC_TOKENS = Argument("max_doc_tokens", POSITIVE)
POOLING = Argument(
    "pooling", {"type": "string", "enum": ["cls", "mean", "max"]},
    "the chunk vector: the [CLS] state (default) or the mean or max of the token states; "
    "parade_transf_pretr_lateir reads token states and takes only the default", default="cls")
BACKBONE_LAYERS = Argument("backbone_layers", POSITIVE, "keep only the first N layers", default=None)
TRUST_REMOTE_CODE = Argument("trust_remote_code", {"type": "boolean"}, "off unless set here", default=False)
DROPOUT = Argument("dropout", SHARE, "replaces every dropout probability of the backbone", default=None)
HEAD_DROPOUT = Argument(
    "head_dropout", SHARE,
    "dropout on the vector the scoring layer reads (default 0; the authors: 0.1). CEDR-*: on the mean [CLS] vector "
    "only, before it joins the interaction features (ours: CEDR's heads have none, so 0 reproduces them); Neural "
    "Model 1: on the token vectors entering its projections (ours)", default=0.0)
PAD_QUERY = Argument(
    "pad_query", {"type": "boolean"},
    "pad the query to max_query_tokens with masked pad tokens, so documents start at a fixed position (default "
    "false; the authors pad)", default=False)
BACKBONE_DTYPE = Argument(
    "backbone_dtype", {"type": "string", "enum": ["float32", "bfloat16"]},
    "the dtype of the backbone's weights (default float32): bfloat16 halves their memory and the optimizer's "
    "states (pure-bf16 training, ours; the study trained with autocast over fp32 weights); the head stays fp32",
    default="float32")

CHUNK_ARGUMENTS = (BACKBONE, MAX_QUERY_TOKENS, CHUNK_TOKENS, STRIDE, MAX_DOC_TOKENS, POOLING, BACKBONE_LAYERS,
                   TRUST_REMOTE_CODE, DROPOUT, HEAD_DROPOUT, PAD_QUERY, BACKBONE_DTYPE)

# Read by the pipeline (which tokenizer fills the token stores), never passed to the ranker.
PIPELINE_ARGUMENTS = (Argument(
    "tokenizer", {"type": "string"},
    "the tokenizer to read with when the backbone's own is not the one (MOSAIC BERT: bert-base-uncased)",
    default=None, pretrained=True),)


def with_chunk_arguments(*own: Argument) -> tuple[Argument, ...]:
    """A subclass's own arguments, then those of `ChunkRanker` it does not redeclare: the order in which
    `build_ranker` records them (a subclass passes `**kwargs` on to its parent)."""
    names = {argument.name for argument in own}
    return (*own, *(argument for argument in CHUNK_ARGUMENTS if argument.name not in names))
