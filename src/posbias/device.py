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
    if dtype is None:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=dtype)


def dtype_name(dtype: torch.dtype | None) -> str:
    """How a job records its autocast dtype: `bf16`, `fp16`, or `fp32` for none."""
    return {torch.bfloat16: "bf16", torch.float16: "fp16", None: "fp32"}[dtype]
