"""A posbias FirstP checkpoint saved as a Hugging Face sequence-classification model, so that the audit reads the
same weights through the outside-model path (`posbias.scoring.cross_encoder`) that any hub cross-encoder takes.

Which rankers can be exported: a `firstp` ranker that reads its first token (`pooling: cls`, no query padding) of a
BERT-shaped backbone. Its score is a linear layer on that token's final state, w . h + b. No Hugging Face
classification head is a bare linear layer, but ELECTRA's holds one exactly: out_proj(GELU(dense(h))), and since
GELU(a) - GELU(-a) = a for every a, a `dense` whose first two rows are w and -w (biases b and -b) and an `out_proj`
of (1, -1, 0, ...) gives w . h + b again. ELECTRA's encoder is BERT's, layer for layer and name for name (with the
embedding size equal to the hidden size), so the backbone's weights move over unchanged.

The tokenizer's `model_max_length` becomes the input length the ranker was trained on (query slots, one window and
three special tokens). Read through the outside path the model sees nearly what the checkpoint scores, but not
quite: a Hugging Face pair truncated to that length gives the document the query slots a short query leaves free
(`max_query_tokens` - its tokens more), where the checkpoint reads `chunk_tokens` of it whatever the query.
A document within `chunk_tokens` scores the same both ways (to float rounding).
"""

from __future__ import annotations

from pathlib import Path

import torch

from posbias.errors import InputError
from posbias.io import atomic_directory

EXPORTABLE = ("firstp",)


def _refuse(directory: str, reason: str):
    raise InputError(f"{directory}: cannot export as a sequence-classification model: {reason} (only a FirstP ranker "
                     f"with pooling: cls on a BERT-shaped backbone exports exactly)")


def electra_classifier(ranker, directory: str):
    """The ELECTRA sequence-classification model holding the ranker's backbone and linear head."""
    from transformers import ElectraConfig, ElectraForSequenceClassification

    if ranker.registry_name not in EXPORTABLE:
        _refuse(directory, f"it is a {ranker.registry_name} ranker")
    if ranker.encoder.pooling != "cls":
        _refuse(directory, f"it pools by {ranker.encoder.pooling}")
    if ranker.geometry.pad_query:
        _refuse(directory, "it pads its queries")
    bert = ranker.encoder.backbone
    source = bert.config
    if source.model_type != "bert":
        _refuse(directory, f"its backbone is a {source.model_type}")
    config = ElectraConfig(
        vocab_size=source.vocab_size, embedding_size=source.hidden_size, hidden_size=source.hidden_size,
        num_hidden_layers=source.num_hidden_layers, num_attention_heads=source.num_attention_heads,
        intermediate_size=source.intermediate_size, hidden_act=source.hidden_act,
        hidden_dropout_prob=source.hidden_dropout_prob,
        attention_probs_dropout_prob=source.attention_probs_dropout_prob,
        max_position_embeddings=source.max_position_embeddings, type_vocab_size=source.type_vocab_size,
        layer_norm_eps=source.layer_norm_eps, pad_token_id=source.pad_token_id, num_labels=1,
        architectures=["ElectraForSequenceClassification"])
    model = ElectraForSequenceClassification(config).eval()
    backbone = {k: v for k, v in bert.state_dict().items() if not k.startswith("pooler.")}
    missing, unexpected = model.electra.load_state_dict(backbone, strict=False)
    if unexpected or [k for k in missing if not k.endswith("position_ids")]:
        _refuse(directory, f"its backbone's weights do not map onto ELECTRA's (missing {missing[:3]}, "
                           f"unexpected {unexpected[:3]})")
    linear = ranker.head.score  # nn.Linear(hidden, 1)
    w, b = linear.weight.detach()[0], linear.bias.detach()[0]
    with torch.no_grad():
        head = model.classifier
        head.dense.weight.zero_()
        head.dense.bias.zero_()
        head.dense.weight[0], head.dense.weight[1] = w, -w
        head.dense.bias[0], head.dense.bias[1] = b, -b
        head.out_proj.weight.zero_()
        head.out_proj.bias.zero_()
        head.out_proj.weight[0, 0], head.out_proj.weight[0, 1] = 1.0, -1.0
    return model


def export_checkpoint(checkpoint: str, out: str) -> Path:
    """Write the checkpoint's ranker as an ELECTRA sequence-classification directory (weights, config, tokenizer)."""
    from posbias.rankers.checkpoint import load_checkpoint

    ranker, tokenizer = load_checkpoint(checkpoint)
    model = electra_classifier(ranker, checkpoint)
    geometry = ranker.geometry
    tokenizer.model_max_length = geometry.max_query_tokens + geometry.chunk_tokens + 3
    with atomic_directory(out) as staging:
        model.save_pretrained(staging)
        tokenizer.save_pretrained(staging)
    return Path(out)
