"""The positions config: schema defaults, cross-checks naming their key, and the graphs that the embedded and tiny
configs build (`snakemake -n`; the paper config's: tests/workflow/test_paper_configs.py)."""

from __future__ import annotations

import copy
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from posbias.config import ConfigError, prepare

ROOT = Path(__file__).resolve().parents[2]


def default_config() -> dict:
    return yaml.safe_load((ROOT / "config.yaml").read_text())


def with_positions(**changes) -> dict:
    config = default_config()
    config["positions"] = {**copy.deepcopy(config["positions"]), **changes}
    return config


def dry_run(workdir: Path, *args: str) -> str:
    result = subprocess.run([sys.executable, "-m", "snakemake", "-s", str(ROOT / "Snakefile"), "-d", str(workdir),
                             "-n", *args], capture_output=True, text=True, timeout=600)
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    return result.stdout


def jobs(output: str) -> dict[str, int]:
    return {m.group(1): int(m.group(2)) for m in re.finditer(r"^(\w+)\s+(\d+)$", output, re.MULTILINE)}


def test_defaults_fill_the_studys_settings():
    config = default_config()
    config["positions"] = {"sets": {"dev": {"kind": "sparse", "queryset": "dev", "passages": "generator"}},
                           "groups": {"dev": {"sets": ["dev"]}}}
    section = prepare(config).data["positions"]
    assert (section["tokenizer"], section["bin_tokens"], section["max_bin"]) == ("bert-base-uncased", 256, 36)
    assert section["matching"] == {"substring_min": 0.8, "subsequence_min": 0.7, "window": 1.2, "step": 0.1,
                                   "bm25_depth": 5, "retriever": "bm25"}
    assert section["dense"] == {"chunk_tokens": 256, "max_chunks": 36, "length_slack": 32, "max_new_tokens": 32,
                                "consistency": {"sample": 50, "seed": 0, "judges": []}}  # the judges' order check: on
    assert section["sets"]["dev"]["seed"] == 0


@pytest.mark.parametrize("change, key", [
    ({"sets": {"x": {"kind": "sparse", "queryset": "nope", "passages": "generator"}}}, "positions.sets.x.queryset"),
    ({"sets": {"x": {"kind": "dense", "queryset": "test", "judge": "gpt"}}}, "positions.sets.x.judge"),
    ({"sets": {"x": {"kind": "dense", "queryset": "test"}}}, "positions.sets.x.passages"),  # oracle, no passages
    ({"sets": {"x": {"kind": "sparse", "queryset": "farrelevant", "passages": "generator"}}},
     "positions.sets.x.passages"),
    ({"groups": {"g": {"sets": ["missing"]}}}, "positions.groups.g.sets"),
    ({"figure1": ["missing"]}, "positions.figure1"),
    ({"matching": {"retriever": "hybrid"}}, "positions.matching.retriever"),
])
def test_cross_checks_name_the_key(change, key):
    config = with_positions(**change)
    if "sets" in change:
        config["positions"]["groups"] = {"g": {"sets": list(change["sets"])}}
        config["positions"].pop("figure1")
    with pytest.raises(ConfigError, match=re.escape(key)):
        prepare(config)


def test_a_sparse_set_needs_passages_and_a_kind_the_schema_knows():
    with pytest.raises(ConfigError, match="passages"):
        prepare(with_positions(sets={"x": {"kind": "sparse", "queryset": "dev"}}))
    with pytest.raises(ConfigError):
        prepare(with_positions(sets={"x": {"kind": "guess", "queryset": "dev"}}))


def test_the_embedded_default_schedules_one_job_per_set_and_a_report(tmp_path):
    (tmp_path / "config.yaml").write_text((ROOT / "config.yaml").read_text())
    found = jobs(dry_run(tmp_path, "results/positions/positions.tex"))
    assert found["positions_sparse"] == 2 and found["positions_dense"] == 1 and found["positions_report"] == 1
    assert found["generate_synthetic"] == 1 and found["bm25_index"] == 1
