"""Packed encoding: every valid chunk's real tokens in one row, attention kept inside each chunk.

A padded batch computes every slot of every row: the padding after a chunk's last token (up to a quarter of
a length group's row) and, with `pad_query`, the masked slots of a short query (about 13 % of MaxP's slots at
the paper's geometry). Packed, the backbone sees only real tokens: the chunks' tokens one after another in a
single row, each token keeping the position id of its column in the padded layout, so `pad_query`'s fixed
document offset is unchanged, and attention restricted to the token's own chunk by the chunks' cumulative
lengths (`cu_seqlens`). Nothing else in the network mixes tokens, so each chunk's states are the padded
forward's up to float rounding (tests/rankers/test_packing.py).

Attention over the packed row (`packed_attention`, registered with transformers as `posbias_packed`):
- on an Ampere or later GPU in bf16 or fp16 without attention dropout: PyTorch's variable-length FlashAttention
  (`torch.nn.attention.varlen.varlen_attn`);
- otherwise (a CPU, an older GPU, fp32, or dropout while training): scaled dot-product attention over a nested (jagged)
  tensor cut at the same offsets. On a CUDA device that runs the flash or memory-efficient kernels with
  dropout; on a CPU it attends sequence by sequence, the masked reference the padded path is checked against.

Only backbones whose default position ids are the column index (BERT, ELECTRA) are packed: RoBERTa-style
models count positions from the padding token, which a packed row does not carry. A model's own code (remote code)
is never packed: nothing shows its packed forward equals its padded one.
"""

from __future__ import annotations

import warnings
from contextlib import contextmanager
from dataclasses import dataclass

import torch
import torch.nn.functional as F
from torch import nn

from posbias.remote_code import is_remote_code

PACKED_ATTENTION = "posbias_packed"
PACKINGS = ("auto", True, False)  # the `packing` setting: auto packs on CUDA
COLUMN_POSITION_MODEL_TYPES = frozenset({"bert", "electra"})


def supports_packing(backbone: nn.Module) -> bool:
    """A backbone whose attention transformers dispatches by name and whose position ids are columns. Never a
    model's own code: MOSAIC BERT says `model_type: bert` but runs its own attention, which would see the packed
    row without a mask."""
    config = backbone.config
    return (not is_remote_code(backbone) and config.model_type in COLUMN_POSITION_MODEL_TYPES
            and not getattr(config, "is_decoder", False)
            and getattr(config, "position_embedding_type", "absolute") == "absolute"
            and hasattr(config, "_attn_implementation"))


def use_packing(packing: str | bool, backbone: nn.Module, device: torch.device) -> bool:
    """`auto` packs on CUDA, where padded slots cost kernel time; on a CPU the padded length groups run the fused
    attention kernel over a few rows, while the packed reference attends one chunk at a time."""
    if packing not in PACKINGS:
        raise ValueError(f"packing {packing!r} is not one of auto, true, false")
    wanted = packing is True or (packing == "auto" and device.type == "cuda")
    return wanted and supports_packing(backbone)


def set_packing(ranker: nn.Module, packing: str | bool, device: torch.device) -> bool:
    """Set a ranker's `packing` (training's and reranking's setting) and say whether its chunks will be packed on
    `device`. An encoder that reads other batches (PARADE LATEIR's) has no such setting and is never packed."""
    encoder = ranker.encoder
    if not hasattr(encoder, "packing"):
        use_packing(packing, encoder.backbone, device)  # the value is checked all the same
        return False
    encoder.packing = packing
    return not encoder.group_breaks and use_packing(packing, encoder.backbone, device)


@dataclass
class PackedChunks:
    """The real tokens of `chunks` padded rows of `width`, packed in one row."""
    inputs: dict[str, torch.Tensor]  # input_ids, position_ids, token_type_ids: [1, tokens]
    flat_index: torch.Tensor  # [tokens], each token's place in the flattened [chunks x width] layout
    cu_seqlens: torch.Tensor  # int32 [chunks + 1], where each chunk's tokens start and end
    longest: int  # the longest chunk's real tokens
    shortest: int
    chunks: int
    width: int

    def unpack(self, states: torch.Tensor) -> torch.Tensor:
        """[1, tokens, hidden] -> [chunks, width, hidden], zeros where the padded layout has padding."""
        hidden = states.shape[-1]
        padded = states.new_zeros((self.chunks * self.width, hidden))
        return padded.index_copy(0, self.flat_index, states.reshape(-1, hidden)).view(self.chunks, self.width, hidden)

    def attention_kwargs(self) -> dict:
        """What the backbone passes down to every attention call (transformers' flash-attention keyword names)."""
        return {"cu_seq_lens_q": self.cu_seqlens, "cu_seq_lens_k": self.cu_seqlens,
                "max_length_q": self.longest, "max_length_k": self.longest, "min_length_q": self.shortest}


def pack(inputs: dict[str, torch.Tensor], host_mask: torch.Tensor) -> PackedChunks:
    """Pack padded `inputs` ([chunks, width] tensors on any device) by `host_mask`, their attention mask as a host
    tensor: the indices are computed on the host and only gathered on the device."""
    chunks, width = host_mask.shape
    real = host_mask.bool()
    rows, columns = real.nonzero(as_tuple=True)  # row-major: each chunk's tokens together and in order
    lengths = real.sum(dim=1)
    cu_seqlens = torch.zeros(chunks + 1, dtype=torch.int32)
    cu_seqlens[1:] = lengths.cumsum(0)
    device = inputs["input_ids"].device
    flat_index = (rows * width + columns).to(device, non_blocking=True)
    packed = {key: value.reshape(-1).index_select(0, flat_index).unsqueeze(0)
              for key, value in inputs.items() if key != "attention_mask"}
    packed["position_ids"] = columns.unsqueeze(0).to(device, non_blocking=True)
    return PackedChunks(packed, flat_index, cu_seqlens.to(device, non_blocking=True),
                        int(lengths.max()) if chunks else 0, int(lengths.min()) if chunks else 0, chunks, width)


def packed_attention(module: nn.Module, query: torch.Tensor, key: torch.Tensor, value: torch.Tensor,
                     attention_mask, dropout: float = 0.0, scaling: float | None = None,
                     cu_seq_lens_q: torch.Tensor | None = None, max_length_q: int | None = None,
                     min_length_q: int | None = None, **_):
    """transformers' attention interface over a packed row: query, key and value [1, heads, tokens, head size];
    returns [1, tokens, heads, head size] and no weights. The lengths' bounds come from the host, so that nothing
    here reads the device's offsets."""
    if cu_seq_lens_q is None:
        raise ValueError("packed attention needs the chunks' cumulative lengths (cu_seq_lens_q)")
    q, k, v = (states[0].transpose(0, 1) for states in (query, key, value))  # [tokens, heads, head size]
    if q.is_cuda and q.dtype in (torch.bfloat16, torch.float16) and dropout == 0.0 and flash_attention_runs(q.device):
        from torch.nn.attention.varlen import varlen_attn

        out = varlen_attn(q, k, v, cu_seq_lens_q, cu_seq_lens_q, max_length_q, max_length_q, scale=scaling)
    else:
        offsets = cu_seq_lens_q.to(torch.int64)

        def jagged(states: torch.Tensor) -> torch.Tensor:  # [chunks, heads, ragged length, head size]
            return torch.nested.nested_tensor_from_jagged(states, offsets=offsets, min_seqlen=min_length_q,
                                                          max_seqlen=max_length_q).transpose(1, 2)

        with warnings.catch_warnings():  # the CPU's dropout fallback warns that nested tensors are a prototype
            warnings.simplefilter("ignore", UserWarning)
            out = F.scaled_dot_product_attention(jagged(q), jagged(k), jagged(v), dropout_p=dropout,
                                                 scale=scaling).transpose(1, 2).values()
    return out.unsqueeze(0), None


def flash_attention_runs(device: torch.device) -> bool:
    """FlashAttention's kernels need an Ampere or later GPU (compute capability 8.0): on an older one (a V100, a T4),
    where bf16 is emulated, the packed row goes through nested-tensor attention instead."""
    return torch.cuda.get_device_capability(device) >= (8, 0)


def _no_mask(*_, **__):
    """A packed row needs no mask: `cu_seqlens` keeps attention inside each chunk."""
    return None


def register() -> None:
    from transformers import AttentionInterface
    from transformers.masking_utils import AttentionMaskInterface

    AttentionInterface.register(PACKED_ATTENTION, packed_attention)
    AttentionMaskInterface.register(PACKED_ATTENTION, _no_mask)


@contextmanager
def packed_attention_for(backbone: nn.Module):
    """The backbone's attention dispatched to `packed_attention` for the duration (its config is shared by every
    layer and read at each call); the backbone's own implementation is restored after, so a saved or reused model
    never names ours."""
    register()
    config = backbone.config
    own = config._attn_implementation
    config._attn_implementation = PACKED_ATTENTION
    try:
        yield
    finally:
        config._attn_implementation = own
