"""The GPU check's bookkeeping and the training benchmark's arguments, without running a model."""

import importlib.util
import sys
from pathlib import Path

BENCHMARKS = Path(__file__).resolve().parents[2] / "benchmarks"


def _load(name: str):
    sys.path.insert(0, str(BENCHMARKS))
    spec = importlib.util.spec_from_file_location(name, BENCHMARKS / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # a dataclass looks its module up there
    spec.loader.exec_module(module)
    return module


def test_a_run_adds_its_row_to_gpu_md_and_replaces_its_own(tmp_path):
    check = _load("gpu_check")
    table = tmp_path / "gpu.md"
    table.write_text((BENCHMARKS / "gpu.md").read_text())  # the real page carries the markers
    check.update_gpu_md(table, "| 2026-12-01-h200 | H200 | abc | torch | 790 | a | b | c | d | e | f |")
    check.update_gpu_md(table, "| 2026-12-02-h100 | H100 | def | torch | 700 | a | b | c | d | e | f |")
    check.update_gpu_md(table, "| 2026-12-01-h200 | H200 | abd | torch | 795 | a | b | c | d | e | f |")
    text = table.read_text()
    rows = text[text.index(check.TABLE_START):text.index(check.TABLE_END)].splitlines()[3:]
    assert [row.split("|")[3].strip() for row in rows] == ["def", "abd"]


def test_quick_on_a_cpu_leaves_compiling_out_and_keeps_the_recipe_shape():
    throughput = _load("training_throughput")
    args = throughput.parse_args(["--quick"])
    assert "compiled" not in args.modes and args.warmup == 1 and args.grad_accum == 4
    assert throughput.parse_args(["--quick", "--device", "cuda"]).modes == list(throughput.MODES)
    assert set(throughput.PRESETS) == {"firstp", "maxp_150", "maxp_477", "parade_attn", "longp_4k"}


def test_a_longformer_attends_over_its_window_only():
    throughput = _load("training_throughput")

    class Config:
        attention_window = [512, 512]

    assert throughput.attended_width(Config(), 4096) == 513
    assert throughput.attended_width(Config(), 300) == 300
    assert throughput.attended_width(object(), 4096) == 4096
