"""Device and precision choice: automatic, overridable from the config."""

from __future__ import annotations

import contextlib

import torch

from posbias.errors import InputError


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
    """The autocast dtype: bf16 where the GPU supports it, else fp16; None means full precision."""
    if precision == "fp32" or device.type != "cuda":
        if precision in ("bf16", "fp16") and device.type != "cuda":
            raise InputError(f"precision {precision!r} needs a CUDA device, got {device}")
        return None
    if precision == "bf16" or (precision == "auto" and torch.cuda.is_bf16_supported()):
        return torch.bfloat16
    return torch.float16


def autocast(device: torch.device, dtype: torch.dtype | None):
    if dtype is None:
        return contextlib.nullcontext()
    return torch.autocast(device_type=device.type, dtype=dtype)


def dtype_name(dtype: torch.dtype | None) -> str:
    """How a job records its autocast dtype: `bf16`, `fp16`, or `fp32` for none."""
    return {torch.bfloat16: "bf16", torch.float16: "fp16", None: "fp32"}[dtype]
