"""`posbias.device`: the autocast context leaves cuDNN attention out on CUDA only, and puts the flags back."""

from __future__ import annotations

import pytest
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


def test_a_job_given_a_gpu_that_torch_cannot_see_stops_at_once(monkeypatch, caplog):
    """device: auto under a scheduler that allotted a GPU, and no GPU visible to torch (a CUDA build on an old
    driver, a CPU build): an error naming the device, the allotment and the build, not a CPU run to the time limit."""
    from posbias.device import pick_device
    from posbias.errors import InputError

    import posbias.device

    monkeypatch.setattr(posbias.device, "_logged", set())  # logged once per process: this test's process may have
    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    for name in ("SLURM_GPUS_ON_NODE", "SLURM_JOB_GPUS", "SLURM_STEP_GPUS", "POSBIAS_POOL_GPUS",
                 "POSBIAS_CPU_DESPITE_ALLOTTED_GPU"):
        monkeypatch.delenv(name, raising=False)
    with caplog.at_level("INFO", logger="posbias.device"):
        assert pick_device("auto").type == "cpu"  # no GPU asked for: the CPU, said in the log
    assert "device: cpu; torch " in caplog.text
    monkeypatch.setenv("SLURM_GPUS_ON_NODE", "1")
    with pytest.raises(InputError, match=r"^device 'auto': the scheduler gave this job a GPU \(SLURM_GPUS_ON_NODE=1\), "
                                         r"but torch sees no GPU \(torch .*\)"):
        pick_device("auto")
    assert pick_device("cpu").type == "cpu"  # asked for by name: the CPU, knowingly
    monkeypatch.delenv("SLURM_GPUS_ON_NODE")
    monkeypatch.setenv("POSBIAS_POOL_GPUS", "0")  # the local pool's first device (posbias.gpu_pool), as SLURM's
    with pytest.raises(InputError, match=r"the scheduler gave this job a GPU \(POSBIAS_POOL_GPUS=0\)"):
        pick_device("auto")
    monkeypatch.setenv("POSBIAS_CPU_DESPITE_ALLOTTED_GPU", "1")  # a test cluster's placeholder GPU
    assert pick_device("auto").type == "cpu"


def test_a_reranking_job_that_asks_for_a_gpu_fails_before_loading_anything(monkeypatch, tmp_path, capsys):
    """The command line's one line and exit status 2 for `--device cuda` where there is none."""
    from posbias.cli import main

    monkeypatch.setattr(torch.cuda, "is_available", lambda: False)
    queries = tmp_path / "queries.tsv"
    queries.write_text("q1\tcapital of zorvia\n")  # read by the flags' checks; the checkpoint never is
    with pytest.raises(SystemExit) as exit_info:
        main(["rerank", "--checkpoint", str(tmp_path), "--tokens", str(tmp_path), "--device", "cuda", "--queries",
              str(queries), "--candidates", str(queries), "--run", str(tmp_path / "run")])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "device 'cuda': a GPU was requested, but torch sees no GPU" in err[0]


@pytest.fixture
def tf32_flags(monkeypatch):
    """The process-wide TF32 flags, put back after the test; `fp32_matmuls` logs afresh."""
    import posbias.device

    def flags():
        return torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32

    monkeypatch.setattr(posbias.device, "_logged", set())
    before = flags()
    yield flags
    torch.backends.cuda.matmul.allow_tf32, torch.backends.cudnn.allow_tf32 = before


def test_a_cpu_run_leaves_the_tf32_flags_alone(tf32_flags):
    from posbias.device import fp32_matmuls

    before = tf32_flags()
    for tf32 in (True, False):
        assert fp32_matmuls(torch.device("cpu"), None, tf32) is None
        assert tf32_flags() == before


@pytest.mark.parametrize(("dtype", "tf32", "mode"), [(None, True, "tf32"), (None, False, "ieee"),
                                                     (torch.bfloat16, True, "ieee")])
def test_tf32_on_a_gpu_only_when_the_run_is_fp32(tf32_flags, caplog, dtype, tf32, mode):
    """training.tf32 / rerank.tf32 on CUDA: TF32 matrix products for an fp32 run; under autocast the fp32 head stays
    full fp32 (the flags only name a device type, so this runs without a GPU). Logged once with the device."""
    from posbias.device import fp32_matmuls

    with caplog.at_level("INFO", logger="posbias.device"):
        assert fp32_matmuls(torch.device("cuda:0"), dtype, tf32) == mode
        fp32_matmuls(torch.device("cuda:0"), dtype, tf32)
    assert tf32_flags() == (mode == "tf32",) * 2
    assert caplog.text.count(f"fp32 matrix products on cuda:0: {mode}") == 1
