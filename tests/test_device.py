"""`posbias.device`: the autocast context leaves cuDNN attention out on CUDA only, and puts the flags back."""

from __future__ import annotations

import torch

from posbias.device import attention_without_cudnn, autocast


def test_attention_without_cudnn_disables_only_cudnn_and_restores_it():
    before = torch.backends.cuda.cudnn_sdp_enabled()
    with attention_without_cudnn():
        assert not torch.backends.cuda.cudnn_sdp_enabled()
        assert torch.backends.cuda.flash_sdp_enabled() and torch.backends.cuda.mem_efficient_sdp_enabled()
        assert torch.backends.cuda.math_sdp_enabled()
    assert torch.backends.cuda.cudnn_sdp_enabled() == before


def test_autocast_on_a_cpu_leaves_the_attention_kernels_alone():
    with autocast(torch.device("cpu"), torch.bfloat16):
        assert torch.get_autocast_dtype("cpu") == torch.bfloat16 and torch.is_autocast_enabled("cpu")
        assert torch.backends.cuda.cudnn_sdp_enabled()
    assert not torch.is_autocast_enabled("cpu")


def test_full_precision_is_no_context():
    with autocast(torch.device("cpu"), None):
        assert not torch.is_autocast_enabled("cpu")
