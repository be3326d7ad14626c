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
    commits = [row.split("|")[3].strip() for row in rows]
    assert commits[-2:] == ["def", "abd"] and "abc" not in commits  # after the page's own rows


def test_the_row_shows_the_mode_the_paper_config_trains_in(tmp_path):
    """MFU cells: the paper config's mode (common.yaml's one pass for MaxP, one-pair passes for LongP) / the best."""
    check = _load("gpu_check")
    throughput = _load("training_throughput")
    assert throughput.paper_mode("maxp_150") == "one_pass" and throughput.paper_mode("longp_4k") == "micro"
    results = [{"preset": "maxp_150", "mode": mode, "mfu_measured matmul": mfu}
               for mode, mfu in (("micro", 0.03), ("one_pass", 0.18), ("one_pass_packed", 0.19))]
    results += [{"preset": "longp_4k", "mode": "one_pass", "mfu_measured matmul": 0.04}]
    (tmp_path / "training").mkdir()
    (tmp_path / "training" / "training_throughput.json").write_text(check.json.dumps({"results": results}))
    cells = [c.strip() for c in check.gpu_md_row(tmp_path, {"commit": "abc", "torch": "2", "torch_cuda": "13"})
             .split("|")]
    assert cells[7] == "18.0 % / 19.0 % (one_pass_packed)"
    assert cells[10] == "– / 4.0 % (one_pass)"  # LongP's one-pair passes did not run


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
