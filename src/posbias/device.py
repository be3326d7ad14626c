"""Device and precision choice: automatic, overridable from the config."""

from __future__ import annotations

import contextlib
import logging

import torch

from posbias.errors import InputError

log = logging.getLogger(__name__)


def pick_device(requested: str = "auto") -> torch.device:
    if requested == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    try:
        device = torch.device(requested)
    except RuntimeError:  # torch's message lists every device type it knows
        raise InputError(f"device {requested!r} is not a torch device such as cpu, cuda or cuda:1") from None
    if device.type == "cuda" and not torch.cuda.is_available():
        raise InputError(f"device {requested!r} was requested but CUDA is not available")
    return device


def autocast_dtype(device: torch.device, precision: str = "auto") -> torch.dtype | None:
    """The autocast dtype: on CUDA, bf16 where the GPU supports it, else fp16; on a CPU, bf16 only when asked
    for (`auto` stays fp32 there, so a CPU run's numbers do not depend on the CPU it ran on). None means
    full precision."""
    if precision == "fp32":
        return None
    if device.type != "cuda":
        if precision == "fp16":
            raise InputError(f"precision 'fp16' needs a CUDA device, got {device} (bf16 runs on a CPU)")
        if precision == "bf16":
            if not cpu_has_native_bf16():
                log.warning("precision bf16 on a CPU without native bf16 instructions: expect it to be slower "
                            "than fp32")
            return torch.bfloat16
        return None
    if precision == "bf16" or (precision == "auto" and torch.cuda.is_bf16_supported()):
        return torch.bfloat16
    return torch.float16


def cpu_has_native_bf16() -> bool:
    """Whether oneDNN runs bf16 matrix products natively here (AVX512-BF16 or AMX); elsewhere it emulates them."""
    try:
        return bool(torch.ops.mkldnn._is_mkldnn_bf16_supported())
    except (AttributeError, RuntimeError):
        return False


def autocast(device: torch.device, dtype: torch.dtype | None):
    """Autocast to `dtype` (None: full precision, no context). On CUDA, scaled-dot-product attention keeps to the
    flash, memory-efficient and math kernels meanwhile (`attention_without_cudnn`)."""
    if dtype is None:
        return contextlib.nullcontext()
    stack = contextlib.ExitStack()
    stack.enter_context(torch.autocast(device_type=device.type, dtype=dtype))
    if device.type == "cuda":
        stack.enter_context(attention_without_cudnn())
    return stack


def attention_without_cudnn():
    """Leave PyTorch's cuDNN attention out of scaled-dot-product attention. It builds an execution plan for each
    new input shape, and the chunk encoder meets a new chunk width at nearly every call: measured on an H200
    (benchmarks/gpu.md), a bf16 batch of a new width took 180 ms with it against 6 ms without, and bf16 autocast
    reranked at half the speed of fp32."""
    from torch.nn.attention import SDPBackend, sdpa_kernel

    return sdpa_kernel([SDPBackend.FLASH_ATTENTION, SDPBackend.EFFICIENT_ATTENTION, SDPBackend.MATH])


def dtype_name(dtype: torch.dtype | None) -> str:
    """How a job records its autocast dtype: `bf16`, `fp16`, or `fp32` for none."""
    return {torch.bfloat16: "bf16", torch.float16: "fp16", None: "fp32"}[dtype]
