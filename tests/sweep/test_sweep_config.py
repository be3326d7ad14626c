"""The sweep and position-breakdown config: derived defaults, and one-line errors naming the key."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from posbias.config import ConfigError, prepare
from posbias.sweep.config import GENERATED_PASSAGES, sweep_candidates

ROOT = Path(__file__).resolve().parents[2]
DEFAULT = yaml.safe_load((ROOT / "config.yaml").read_text(encoding="utf-8"))


def config(**changes) -> dict:
    """The embedded default with top-level sections merged (None drops a key), through a JSON copy."""
    data = json.loads(json.dumps(DEFAULT))
    for path, value in changes.items():
        *parents, last = path.split("__")
        target = data
        for key in parents:
            target = target[key]
        if value is None:
            target.pop(last, None)
        else:
            target[last] = value
    return data


def test_defaults_are_derived():
    cfg = prepare(config())
    assert cfg.sweep.queryset == "sweep" and cfg.querysets["sweep"].candidates == sweep_candidates("sweep")
    far = DEFAULT["farrelevant"]
    sweep = cfg.data["sweep"]
    assert (sweep["tokenizer"], sweep["first_window"], sweep["doc_tokens"]) == (
        far["tokenizer"], far["first_window"], far["max_doc_tokens"])
    assert sweep["passages"] == GENERATED_PASSAGES
    assert cfg.sweep.models[:2] == DEFAULT["tables"]["table1"]["models"][:2]  # Table 1's order first
    assert not {"firstp_rankgpt", "longp_rankgpt"} & set(cfg.sweep.models)  # they skip the sweep set
    assert "firstp" in cfg.rerank.checkpoint_job_models and "sweep" in cfg.rerank.direct  # in each checkpoint's job
    assert cfg.sweep.breakdown_models == [m for m in cfg.tables["table1"]["models"] if "rankgpt" not in m]
    assert cfg.querysets.positions_file("dev") == "results/data/synthetic/positions/dev.tsv"


@pytest.mark.parametrize("changes,problem", [
    ({"sweep": None}, r"^sweep: required because query set 'sweep' uses the sweep collection$"),
    ({"sweep__source": "dev"}, r"^sweep.source: 'dev' is not a query set of the farrelevant collection"),
    ({"sweep__source": "nope"}, r"^sweep.source: 'nope' is not a \(not pooled\) key of querysets$"),
    ({"sweep__n_queries": 41}, r"^sweep.n_queries: 41 is more than the 40 queries of 'farrelevant'"),
    ({"sweep__n_positions": 1}, r"^sweep.n_positions: 1 is less than the minimum of 2$"),
    ({"sweep__first_window": 72}, r"^sweep.first_window: 72 is not below sweep.doc_tokens \(72\)"),
    ({"sweep__models": ["firstp_rankgpt"]}, r"^sweep.models: 'firstp_rankgpt' does not rerank 'sweep'"),
    ({"sweep__shape": 3}, r"^sweep.shape: unknown key"),
    ({"querysets__sweep__candidates": "my.run"}, r"^querysets.sweep.candidates: the sweep collection's candidates"),
    ({"querysets__sweep__metrics": ["RR@10"]}, r"^querysets.sweep.metrics: needs RR"),
    ({"querysets__again": {"collection": "sweep", "metrics": ["RR"]}}, r"^querysets: only one query set may use"),
    ({"collections": {"sweep": {"documents": {"kind": "local", "path": "x"}}}}, r"^collections"),
    ({"tables__position_breakdown__queryset": "train"}, r"^tables.position_breakdown.queryset: 'train' is not in"),
    ({"tables__position_breakdown__metric": "AP@5"}, r"^tables.position_breakdown.metric: 'AP@5' is not in"),
    ({"tables__position_breakdown__bins": [48, 24]}, r"^tables.position_breakdown.bins: \[48, 24\] must increase"),
    ({"tables__position_breakdown__bins": [0, 24]}, r"^tables.position_breakdown.bins\[0\]: 0 is less than"),
    ({"tables__position_breakdown__models": ["longp_rankgpt"]}, r"^tables.position_breakdown.models: 'longp_rankgpt' "
                                                                r"does not rerank 'dev'"),
])
def test_problems_name_the_key(changes, problem):
    with pytest.raises(ConfigError, match=problem):
        prepare(config(**changes))


def test_without_farrelevant_and_generator_the_keys_are_required():
    from posbias.sweep.config import check_sweep, derive as derive_sweep

    def prepared(sweep):
        cfg = {"querysets": {"s": {"collection": "sweep"}}, "sweep": sweep}
        derive_sweep(cfg)
        check_sweep(cfg, [])

    for missing in ("tokenizer", "first_window", "doc_tokens"):
        sweep = {"tokenizer": "t", "first_window": 4, "doc_tokens": 10, "passages": {"docs": "p", "qrels": "q"}}
        del sweep[missing]
        with pytest.raises(ConfigError, match=rf"^sweep.{missing}: required \(there is no farrelevant"):
            prepared(sweep)
    with pytest.raises(ConfigError, match=r"^sweep.passages: required \(no embedded generator"):
        prepared({"tokenizer": "t", "first_window": 4, "doc_tokens": 10})


def test_a_sweep_nothing_uses_is_a_warning():
    data = config(querysets__sweep=None, rerank__querysets=["dev", "test", "farrelevant"])
    assert any(w.startswith("sweep: no query set uses the sweep collection") for w in prepare(data).warnings)
    cfg = prepare(config(rerank__querysets=["dev", "test", "farrelevant"]))
    assert cfg.sweep.models == [] and any("is not reranked" in w for w in cfg.warnings)
