"""Device and precision choice: automatic, overridable from the config."""

from __future__ import annotations

import contextlib
import logging
import os

import torch

from posbias.errors import InputError
from posbias.gpu_pool import CLAIMED_VARIABLE

log = logging.getLogger(__name__)


# Where a scheduler says it gave the job GPUs (SLURM sets these for --gpus / --gres=gpu; the local GPU pool its own):
# a count (0: none), then lists of devices (where "0" is the first device)
ALLOTTED_GPU_COUNT = "SLURM_GPUS_ON_NODE"
ALLOTTED_GPU_VARIABLES = (ALLOTTED_GPU_COUNT, "SLURM_JOB_GPUS", "SLURM_STEP_GPUS", CLAIMED_VARIABLE)
# set (to 1) where the allotted GPU is known not to be one: a test cluster whose GPU resource is a placeholder
CPU_DESPITE_ALLOTTED_GPU = "POSBIAS_CPU_DESPITE_ALLOTTED_GPU"
_logged: set[str] = set()


def allotted_gpus() -> str | None:
    """The scheduler's word that this job has GPUs (`NAME=value`), or None."""
    if os.environ.get(CPU_DESPITE_ALLOTTED_GPU) == "1":
        return None
    for name in ALLOTTED_GPU_VARIABLES:
        value = os.environ.get(name, "").strip()
        if value and not (name == ALLOTTED_GPU_COUNT and value == "0"):
            return f"{name}={value}"
    return None


def torch_build() -> str:
    """torch's version and the CUDA it was built for (a CPU build has none)."""
    return f"torch {torch.__version__}, " + (f"built for CUDA {torch.version.cuda}" if torch.version.cuda
                                             else "a CPU build (no CUDA)")


def _no_gpu(requested: str, why: str) -> InputError:
    return InputError(f"device {requested!r}: {why}, but torch sees no GPU ({torch_build()}); a CUDA build needs a "
                      f"driver at least as new as its CUDA (docs: installation), and device: cpu runs on the CPU "
                      f"knowingly")


def pick_device(requested: str = "auto") -> torch.device:
    """The torch device of `requested` (auto: CUDA when there is a GPU, else the CPU), logged once per process.
    A job that asks for a GPU, by name or by the scheduler's allotment, and finds none stops here rather than
    running on the CPU until its time limit."""
    if requested == "auto":
        allotted = allotted_gpus()
        if allotted and not torch.cuda.is_available():
            raise _no_gpu(requested, f"the scheduler gave this job a GPU ({allotted})")
        device = torch.device("cuda" if torch.cuda.is_available() else "cpu")
    else:
        try:
            device = torch.device(requested)
        except RuntimeError:  # torch's message lists every device type it knows
            raise InputError(f"device {requested!r} is not a torch device such as cpu, cuda or cuda:1") from None
        if device.type == "cuda" and not torch.cuda.is_available():
            raise _no_gpu(requested, "a GPU was requested")
    _log_once(device)
    return device


def _log_once(device: torch.device) -> None:
    described = str(device)
    if device.type == "cuda":
        index = device.index if device.index is not None else torch.cuda.current_device()
        described += f" ({torch.cuda.get_device_name(index)})"
    if described not in _logged:
        _logged.add(described)
        log.info("device: %s; %s", described, torch_build())


def fp32_matmuls(device: torch.device, dtype: torch.dtype | None, tf32: bool) -> str | None:
    """How a GPU computes fp32 matrix products and convolutions: on TF32 tensor cores (inputs rounded to 10-bit
    mantissas, sums in fp32; several times fp32's speed on Ampere and later) where the run is in fp32 (`dtype` None)
    and `tf32` is set, else in full fp32 ("ieee"), so that under autocast the fp32 head stays full fp32. Set for the
    process and logged once; returns the mode. On a CPU nothing is set (None): oneDNN's own fp32 setting stays."""
    if device.type != "cuda":
        return None
    mode = "tf32" if tf32 and dtype is None else "ieee"
    # torch's older per-library flags: the newer per-backend `fp32_precision`, set for CUDA alone, makes
    # torch.get_float32_matmul_precision (which inductor reads) raise, and set_float32_matmul_precision("high")
    # would switch oneDNN's CPU matrix products too.
    torch.backends.cuda.matmul.allow_tf32 = torch.backends.cudnn.allow_tf32 = mode == "tf32"
    described = f"fp32 matrix products on {device}: {mode}"
    if described not in _logged:
        _logged.add(described)
        log.info("%s", described)
    return mode


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
