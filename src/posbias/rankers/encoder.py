"""The chunk encoder: a Hugging Face backbone that turns chunked cross-encoder inputs into features."""

from __future__ import annotations

import torch
import torch.nn.functional as F
from torch import nn

from posbias.backbones import from_pretrained, load_base_model
from posbias.errors import InputError
from posbias.rankers.chunking import ChunkBatch
from posbias.rankers.features import TOKEN_LAYERS, ChunkFeatures
from posbias.rankers.first_token import first_token_states, supports_first_token_only
from posbias.rankers.packing import PackedChunks, pack, packed_attention_for, use_packing


# The dtypes a backbone's weights may be loaded in (`backbone_dtype`).
WEIGHT_DTYPES = {"float32": torch.float32, "bfloat16": torch.bfloat16}


def load_backbone(name: str, layers: int | None = None, trust_remote_code: bool = False,
                  dropout: float | None = None, what: str = "backbone", dtype: str = "float32") -> nn.Module:
    """Load a pretrained encoder without its pooler, as its own class and with every weight from its checkpoint
    (`posbias.backbones.load_base_model`); `layers` keeps only the first N transformer layers,
    and `dropout` (when given) replaces every dropout probability of the backbone's config. `what` names
    the model in errors (a PARADE ranker's "aggregator" is loaded the same way). `dtype` is the weights'
    dtype (bfloat16 halves their memory; the optimizer's states follow it)."""
    if dtype not in WEIGHT_DTYPES:
        raise InputError(f"backbone_dtype {dtype!r} is not one of {sorted(WEIGHT_DTYPES)}")
    from transformers import AutoConfig

    config = from_pretrained(AutoConfig, name, what, trust_remote_code=trust_remote_code)
    if layers:
        config.num_hidden_layers = layers
    if dropout is not None:
        # Names differ between architectures (hidden_dropout_prob, attention_dropout, ...).
        for key, value in config.to_dict().items():
            if "dropout" in key and isinstance(value, float):
                setattr(config, key, dropout)
    model = load_base_model(name, what, config, trust_remote_code, truncated=bool(layers), dropped=("pooler",),
                            dtype=WEIGHT_DTYPES[dtype])
    if getattr(model, "pooler", None) is not None:
        model.pooler = None  # no ranker reads it: left in, it would be saved, counted and never trained
    return model


class ChunkEncoder(nn.Module):
    """Encodes only the valid chunks of a batch. Returns `ChunkFeatures`: one vector per chunk (the
    [CLS] vector, or the element-wise mean or max of the token vectors), and, when `token_layers`
    asks for them, the token states of the query and of the re-joined document.

    Two things keep the backbone from computing what nobody reads. Chunks are encoded in groups of
    similar length (`length_groups`), each cut to its own longest chunk, so a document's short last
    window is not padded to the batch's longest; or, packed (`packing`, on CUDA by default), all valid
    chunks' real tokens run as one row with attention kept inside each chunk (`posbias.rankers.packing`).
    And a [CLS]-pooled encoder without token states runs the last layer for the first token only
    (`posbias.rankers.first_token`). All give the plain forward's numbers up to float rounding.
    """

    POOLINGS = ("cls", "mean", "max")
    group_breaks: tuple[int, ...] = ()  # lengths no group may straddle (a subclass whose inputs depend on it)
    # Whether chunks are packed into one row with variable-length attention (`posbias.rankers.packing`): auto packs
    # on CUDA; training and reranking set it from their `packing` setting.
    packing: str | bool = "auto"

    def __init__(self, backbone: nn.Module, pooling: str = "cls", token_layers: str | None = None):
        super().__init__()
        if pooling not in self.POOLINGS:
            raise InputError(f"pooling {pooling!r} is not one of {self.POOLINGS}")
        if token_layers not in TOKEN_LAYERS:
            raise ValueError(f"token_layers {token_layers!r} is not one of {TOKEN_LAYERS}")
        self.backbone = backbone
        self.pooling = pooling
        self.token_layers = token_layers
        self.hidden_size = backbone.config.hidden_size
        self.first_token_only = (pooling == "cls" and token_layers is None
                                 and supports_first_token_only(backbone))

    def forward(self, batch: ChunkBatch) -> ChunkFeatures:
        valid = batch.chunk_mask
        # Which chunks, how long and in which groups, decided on the host copy (no wait for a device); the
        # tensors on the device are only gathered by index.
        host = batch.on_host()
        valid_rows = host.chunk_mask.reshape(-1).nonzero().squeeze(1)
        mask = host.attention_mask.reshape(-1, host.attention_mask.shape[-1])[valid_rows]
        # A chunk's length runs to its last real token (a padded query's slots are masked inside it).
        positions = torch.arange(1, mask.shape[1] + 1)
        lengths = (mask.bool() * positions).amax(dim=1)
        device = batch.input_ids.device

        def on_device(index: torch.Tensor) -> torch.Tensor:
            return index.to(device, non_blocking=True)

        keys = ["input_ids", "attention_mask"] + (["token_type_ids"] if getattr(self.backbone.config,
                                                                                "type_vocab_size", 0) > 1 else [])
        keys += ["global_attention_mask"] if batch.global_attention_mask is not None else []
        rows_on_device = on_device(valid_rows)
        inputs = {key: getattr(batch, key).reshape(-1, mask.shape[1]).index_select(0, rows_on_device) for key in keys}
        # Inputs that depend on their length (`group_breaks`) are never packed.
        if not self.group_breaks and use_packing(self.packing, self.backbone, device):
            # Cut to the longest chunk, then packed: no row is padded at all.
            width = int(lengths.max()) if len(lengths) else 0
            part = {key: value[:, :width] for key, value in inputs.items()}
            hidden, states = self.encode(part, pack(part, mask[:, :width]))
            if states is not None:
                states = F.pad(states, (0, 0, 0, mask.shape[1] - width))
        else:
            hidden, states = self.encode_in_length_groups(inputs, lengths, mask.shape[1], on_device)
        pooled = hidden.new_zeros((valid.numel(), hidden.shape[-1])).index_copy(0, rows_on_device, hidden)
        pooled = pooled.view(*valid.shape, hidden.shape[-1])
        features = ChunkFeatures(pooled, valid)
        if self.token_layers is None:
            return features
        return self.token_states(features, batch, states)

    def encode_in_length_groups(self, inputs: dict[str, torch.Tensor], lengths: torch.Tensor, width: int,
                                on_device) -> tuple[torch.Tensor, torch.Tensor | None]:
        """`encode` run on groups of chunks of similar length, each cut to its longest (`length_groups`); the
        results in the chunks' own order, token states padded back to `width`."""
        order = torch.argsort(lengths, descending=True, stable=True)
        sorted_lengths = lengths[order].tolist()  # host tensors: no device waits
        pooled_parts, state_parts = [], []
        for start, end in length_groups(sorted_lengths, self.group_breaks):
            rows, longest = on_device(order[start:end]), sorted_lengths[start]
            pooled, states = self.encode({key: value[rows, :longest] for key, value in inputs.items()})
            pooled_parts.append(pooled)
            if states is not None:  # back to the batch's length, so token positions stay as laid out
                state_parts.append(F.pad(states, (0, 0, 0, width - longest)))
        restore = on_device(torch.argsort(order))
        return torch.cat(pooled_parts)[restore], torch.cat(state_parts)[restore] if state_parts else None

    def encode(self, inputs: dict[str, torch.Tensor],
               packed: PackedChunks | None = None) -> tuple[torch.Tensor, torch.Tensor | None]:
        """Pooled vectors [chunks, hidden] of a group of chunks, and their token states
        [chunks, layers, length, hidden] when `token_layers` asks for them. With `packed`, the backbone runs on
        the packed row and its states are laid out as `inputs` again."""

        def run(**options):
            if packed is None:
                return self.backbone(**inputs, **options)
            with packed_attention_for(self.backbone):
                return self.backbone(**packed.inputs, **packed.attention_kwargs(), **options)

        def padded(states: torch.Tensor) -> torch.Tensor:
            return states if packed is None else packed.unpack(states)

        if self.first_token_only:
            return first_token_states(self.backbone, inputs, run=lambda: padded(run().last_hidden_state)), None
        output = run(output_hidden_states=self.token_layers == "all")
        tokens = padded(output.last_hidden_state)
        real = inputs["attention_mask"].unsqueeze(-1).bool()
        if self.pooling == "cls":
            pooled = tokens[:, 0]
        elif self.pooling == "max":
            pooled = tokens.masked_fill(~real, float("-inf")).max(dim=1).values
        else:
            weights = real.to(tokens.dtype)
            pooled = (tokens * weights).sum(dim=1) / weights.sum(dim=1)
        if self.token_layers is None:
            return pooled, None
        if self.token_layers == "all" and output.hidden_states is None:  # MOSAIC BERT's code returns none
            raise InputError(f"backbone {type(self.backbone).__qualname__} does not return every layer's states, "
                             "which this ranker's head reads (token_layers: all)")
        states = (torch.stack([padded(layer) for layer in output.hidden_states], dim=1)
                  if self.token_layers == "all" else tokens.unsqueeze(1))
        return pooled, states

    @staticmethod
    def token_states(features: ChunkFeatures, batch: ChunkBatch, states: torch.Tensor) -> ChunkFeatures:
        """Add the query's and the document's token states, from the states of the valid chunks
        ([valid chunks, layers, length, hidden]); padding-only chunks are zeros and never gathered."""
        n_batch, n_chunks = batch.chunk_mask.shape
        _, n_layers, length, hidden = states.shape
        full = states.new_zeros((n_batch, n_chunks, n_layers, length, hidden))
        full[batch.chunk_mask] = states
        query_slots = batch.query_mask.shape[1]
        features.query_states = full[:, 0, :, 1:1 + query_slots]  # the query is the same in every chunk
        joined = full.transpose(1, 2).reshape(n_batch, n_layers, n_chunks * length, hidden)
        index = batch.doc_positions[:, None, :, None].expand(-1, n_layers, -1, hidden)
        features.doc_states = joined.gather(2, index)
        features.query_mask, features.doc_mask = batch.query_mask, batch.doc_mask
        return features


# A group of chunks is cut at its longest, so each chunk in it is padded by at most this share of that.
GROUP_PADDING = 0.25


def length_groups(lengths: list[int], breaks: tuple[int, ...] = ()) -> list[tuple[int, int]]:
    """Cut lengths sorted longest first into runs [start, end) whose chunks are each at least
    (1 - GROUP_PADDING) of the run's first: encoding a run padded to its first wastes at most that share
    of any chunk's row, and a batch of similar chunks stays one run. No run holds lengths on both sides of
    a length in `breaks` (one above it and one at or below)."""
    groups, start = [], 0
    for index, length in enumerate(lengths):
        straddles = any(length <= cut < lengths[start] for cut in breaks)
        if straddles or length < (1 - GROUP_PADDING) * lengths[start]:
            groups.append((start, index))
            start = index
    if lengths:
        groups.append((start, len(lengths)))
    return groups
