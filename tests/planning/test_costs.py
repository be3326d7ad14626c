"""The plan's arithmetic on small inputs: training and rerank pairs, hours from a measured rate or the profile's
limit, token stores, vectors, checkpoints and runs on disk, and what the totals add up."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
import yaml

from posbias.command_flags import read_config_object
from posbias.errors import InputError
from posbias.io import write_run
from posbias.planning import Plan, report
from posbias.planning.costs import (LIMIT, LOCAL, MEASURED, OTHER_BACKBONE, Estimator, Item, JobCost,
                                    run_line_bytes, training_pairs, _settings)
from posbias.planning.dag import ScheduledJob
from posbias.planning.rates import Profile, device_named, devices
from posbias.planning.sizes import Count, Sizes

ROOT = Path(__file__).resolve().parents[2]
TINY = ROOT / "config" / "test" / "tiny.yaml"
GEOMETRY = {"max_query_tokens": 8, "chunk_tokens": 16, "stride": 16, "max_doc_tokens": 16}


# --- training pairs ----------------------------------------------------------------------------------------

def settings(**recipe):
    return _settings({"lr": 1e-5, "head_lr": 1e-4},
                     {"epochs": 1, "batch_size": 1, "grad_accum": 16, "margin": 1.0, "warmup_fraction": 0.1,
                      "weight_decay": 0.0, "freeze_embeddings": False, "device": "auto", "precision": "auto",
                      "max_grad_norm": None, **recipe})


def test_training_pairs_follow_the_recipe():
    assert training_pairs(settings(), 100) == 100
    assert training_pairs(settings(epochs=2), 100) == 200
    assert training_pairs(settings(query_repeats=100), 250 * 4 / 5) == 20_000  # a Robust04 fold's four others
    assert training_pairs(settings(queries_per_epoch=30, epochs=3), 100) == 90
    assert training_pairs(settings(queries_per_epoch=300), 100) == 100  # never more than one visit each


# --- hours ------------------------------------------------------------------------------------------------

@pytest.fixture
def measured(tmp_path):
    """A device measured once: FirstP at GEOMETRY, 10 rerank and 2 training pairs a second, fp32, on backbone A."""
    result = {"args": {"precision": "fp32", "train_batch": 1, "train_accum": 16},
              "rerank": {"firstp": {"pairs_per_s": 10.0}},
              "train": [{"model": "firstp", "geometry": GEOMETRY, "pairs_per_s": 2.0}]}
    (tmp_path / "bench.json").write_text(json.dumps(result))
    spec = {"rerank_geometry": {"firstp": {"ranker": "firstp", **GEOMETRY}},
            "devices": {"cpu": {"label": "a test CPU", "auto_precision": "fp32",
                                "files": [{"path": "bench.json", "backbone": "A", "why": "a test"}]}}}
    (tmp_path / "measurements.yaml").write_text(yaml.safe_dump(spec))
    return devices(tmp_path / "measurements.yaml", root=tmp_path)["cpu"]


@pytest.fixture
def profile(tmp_path):
    path = tmp_path / "profile.yaml"
    path.write_text(yaml.safe_dump({"default-resources": {"runtime": 60},
                                    "set-resources": {"train": {"runtime": 900}, "rerank": {"runtime": "3h"}},
                                    "set-threads": {"bm25_index": 8}}))
    return Profile(path)


class FixedSizes(Sizes):
    """Sizes of a config with the query sets' counts given."""

    def __init__(self, cfg, queries: dict[str, int]):
        super().__init__(cfg)
        self._given = queries

    def queries(self, queryset):
        return Count(self._given[queryset], "given") if queryset in self._given else Count(None, "not given")


@pytest.fixture(scope="module")
def tiny():
    return read_config_object(str(TINY))


def model(backbone="A", **geometry):
    return {"ranker": "firstp", "args": {"backbone": backbone, **GEOMETRY, **geometry}, "lr": 1e-5, "head_lr": 1e-4}


def train_job(tiny, backbone="A", **geometry) -> ScheduledJob:
    training = {**tiny.models.training_params("firstp"), "batch_size": 1, "grad_accum": 16, "precision": "auto"}
    return ScheduledJob("train", {"model": "firstp", "seed": "1"}, {"model": model(backbone, **geometry),
                        "training": training}, {}, gpus=1, local=False)


def test_hours_come_from_the_measured_rate(tiny, measured, profile):
    estimator = Estimator(tiny, FixedSizes(tiny, {tiny.training.queryset: 7200}), measured, profile, reference={})
    cost = estimator.cost(train_job(tiny))
    assert cost.basis == MEASURED and cost.hours == pytest.approx(7200 / 2.0 / 3600)  # one hour
    assert cost.gpu_hours == pytest.approx(1.0) and cost.cpu_hours == 0
    assert "bench.json: train firstp, 2 pairs/s" in cost.sources[0]


def test_a_rate_of_another_backbone_is_used_and_marked(tiny, measured, profile):
    estimator = Estimator(tiny, FixedSizes(tiny, {tiny.training.queryset: 7200}), measured, profile, reference={})
    cost = estimator.cost(train_job(tiny, backbone="B"))
    assert cost.basis == OTHER_BACKBONE and cost.backbones == ("A", "B") and cost.hours == pytest.approx(1.0)


def test_without_a_measurement_a_job_takes_the_profiles_limit(tiny, measured, profile):
    estimator = Estimator(tiny, FixedSizes(tiny, {tiny.training.queryset: 7200}), measured, profile, reference={})
    cost = estimator.cost(train_job(tiny, chunk_tokens=32))  # a geometry nobody measured
    assert cost.basis == LIMIT and cost.hours == 15.0
    assert "set-resources.train.runtime" in cost.sources[0] and "upper bound, not a measurement" in cost.sources[0]
    # a size the plan does not know is no measurement either
    unsized = Estimator(tiny, FixedSizes(tiny, {}), measured, profile, reference={}).cost(train_job(tiny))
    assert unsized.basis == LIMIT
    # nor is a GPU without measurements
    assert Estimator(tiny, FixedSizes(tiny, {tiny.training.queryset: 7200}), None, profile,
                     reference={}).cost(train_job(tiny)).basis == LIMIT


def test_a_job_past_its_limit_at_the_measured_rate_is_flagged(tiny, measured, profile):
    estimator = Estimator(tiny, FixedSizes(tiny, {tiny.training.queryset: 2 * 16 * 3600}), measured, profile,
                          reference={})
    cost = estimator.cost(train_job(tiny))
    assert cost.hours == pytest.approx(16.0) and "past the profile's 15 h limit" in cost.over_limit


def test_a_checkpoint_job_adds_its_query_sets_reranking(tiny, measured, profile):
    sizes = FixedSizes(tiny, {"dev": 360, "test": 180})
    job = ScheduledJob("rerank_zero_shot_model", {"model": "firstp"},
                       {"model": model(), "scoring": {"precision": "auto"}, "tag": "firstp-zero-shot"},
                       {"queries": ["results/data/synthetic/queries/dev.tsv",
                                    "results/data/synthetic/queries/test.tsv"]}, gpus=1, local=False)
    cost = Estimator(tiny, sizes, measured, profile, reference={}).cost(job)
    depth = tiny.querysets["dev"].depth
    assert cost.basis == MEASURED and cost.hours == pytest.approx((360 + 180) * depth / 10.0 / 3600)


def test_local_jobs_are_not_timed_and_cpu_jobs_count_their_cores(tiny, measured, profile):
    estimator = Estimator(tiny, FixedSizes(tiny, {}), measured, profile, reference={})
    local = estimator.cost(ScheduledJob("table1", {}, {}, {}, gpus=0, local=True))
    assert local.basis == LOCAL and local.hours is None and local.cpu_hours == 0
    index = estimator.cost(ScheduledJob("bm25_index", {"collection": "synthetic"}, {}, {}, gpus=0, local=False))
    assert index.hours == 1.0 and index.cpu_hours == 8.0 and index.gpu_hours == 0  # default 60 min x 8 cores


def test_profile_runtimes_in_minutes_or_spans(profile):
    assert profile.runtime_hours("rerank")[0] == 3.0
    assert profile.runtime_hours("train")[0] == 15.0
    hours, source = profile.runtime_hours("evaluate")
    assert hours == 1.0 and "default-resources.runtime" in source


def test_training_benchmark_rates_match_the_pass_and_never_a_packed_mode(tmp_path, tiny, profile):
    """benchmarks/training_throughput.py's JSON: a preset's pairs a step over its seconds a step, the one-pair passes
    for a job of one pair a pass, one pass for a job whose pass is the step; packed modes (training runs padded by
    default) and other presets are not taken."""
    def result(preset, mode, seconds, packed=False):
        return {"preset": preset, "mode": mode, "pairs_per_step": 16, "seconds_per_step": seconds, "packed": packed}

    report = {"args": {"precision": "fp32"},
              "results": [result("first", "micro_packed", 0.5, packed=True), result("first", "micro", 2.0),
                          result("other", "one_pass", 0.1), result("first", "one_pass_packed", 0.2, packed=True),
                          result("first", "one_pass", 0.4)]}
    (tmp_path / "training.json").write_text(json.dumps(report))
    spec = {"rerank_geometry": {}, "training_geometry": {"first": {"ranker": "firstp", **GEOMETRY},
                                                        "other": {"ranker": "maxp", **GEOMETRY}},
            "devices": {"cpu": {"label": "a test CPU", "auto_precision": "fp32",
                                "files": [{"path": "training.json", "backbone": "A", "why": "a test"}]}}}
    (tmp_path / "measurements.yaml").write_text(yaml.safe_dump(spec))
    device = devices(tmp_path / "measurements.yaml", root=tmp_path)["cpu"]
    geometry = ("firstp", *GEOMETRY.values())
    micro, one_pass = device.train_rate(geometry, "fp32", 1), device.train_rate(geometry, "fp32", 16)
    assert micro.pairs_per_second == pytest.approx(8.0) and "1 pair a pass x 16 a step" in micro.source
    assert one_pass.pairs_per_second == pytest.approx(40.0) and "first one_pass" in one_pass.source
    assert device.train_rate(geometry, "fp32", 4) is None  # a pass nobody measured
    assert device.train_rate(geometry, "bf16", 16) is None
    # through the estimator: a one-pass job takes an hour less than the profile's limit would say
    estimator = Estimator(tiny, FixedSizes(tiny, {tiny.training.queryset: 7200}), device, profile, reference={})
    job = train_job(tiny)
    job.params["training"] = {**job.params["training"], "one_pass": True}
    assert estimator.cost(job).hours == pytest.approx(7200 / 40.0 / 3600)


def test_a_gpu_without_measurements_is_refused_by_name():
    with pytest.raises(InputError, match="--gpu a100: no measurements.*h200"):
        device_named("a100")
    device, sentence = device_named("H200")
    assert device.name == "h200" and "NVIDIA H200" in sentence
    assert device.rerank_rate(("firstp", 32, 477, 477, 477), "bf16").pairs_per_second > 0


# --- disk -------------------------------------------------------------------------------------------------

def test_run_line_bytes_is_what_write_run_writes(tmp_path):
    path = tmp_path / "one.run"
    doc = "D" * 8
    write_run(path, {"Q" * 8: {doc: -1.2345678901234567e-05}}, tag="firstp-seed1")
    assert path.stat().st_size == run_line_bytes(8, 1, "firstp-seed1")


def test_token_store_estimate_holds_a_real_store(tiny, token_store):
    from posbias.data.token_store import FILES

    cap = 6
    store = token_store({f"d{i}": "word " * 20 for i in range(5)}, cap=cap)  # every document reaches the cap
    sizes = FixedSizes(tiny, {})
    sizes.documents = lambda collection: Count(5, "given")
    sizes.doc_id_length = lambda collection: Count(2, "given")
    item = Estimator(tiny, sizes, None, Profile(), reference={})._token_store("c", cap)
    tokens = (store.directory / FILES[0]).stat().st_size
    assert tokens == 5 * cap * 4  # the ids themselves, at the cap
    assert tokens < item.bytes <= tokens + 5 * (8 + 4 + 4 + 2)


def test_dense_vectors_and_hnsw_index():
    cfg = read_config_object(str(TINY))  # its own: the test changes the index kind
    sizes = FixedSizes(cfg, {})
    sizes.documents = lambda collection: Count(1000, "given")
    reference = {"encoders": {cfg.retrievers["hybrid"]["encoder"]["model"]: {"dim": 384, "source": "given"}}}
    estimator = Estimator(cfg, sizes, None, Profile(), reference=reference)
    job = ScheduledJob("dense_encode", {"collection": "synthetic", "retriever": "hybrid"}, {}, {}, gpus=1, local=False)
    assert estimator.disk(job)[0].bytes == 1000 * 384 * 4
    cfg.retrievers["hybrid"]["faiss"] = {"index": "hnsw", "m": 32}
    index = ScheduledJob("dense_index", {"collection": "synthetic", "retriever": "hybrid"}, {}, {}, 0, False)
    assert estimator.disk(index)[0].bytes == 1000 * (384 * 4 + 32 * 2 * 4)  # the vectors and their links


def test_a_checkpoint_is_its_parameters_in_float32(tiny):
    reference = {"backbones": {"big": {"parameters": 1000, "hub_bytes_per_parameter": 2, "source": "given"}}}
    estimator = Estimator(tiny, FixedSizes(tiny, {}), None, Profile(), reference=reference)
    [checkpoint] = [i for i in estimator.disk(train_job(tiny, backbone="big")) if i.what.startswith("checkpoint")]
    assert checkpoint.bytes == 4000
    [weights] = [i for i in estimator.downloads(train_job(tiny, backbone="big")) if i.key == "hub:big"]
    assert weights.bytes == 2000
    assert estimator.parameters("unlisted").value is None


def test_an_offline_backbone_is_counted_from_its_weights(tiny):
    count = Estimator(tiny, FixedSizes(tiny, {}), None, Profile(), reference={}).parameters("offline:all-MiniLM-L6-v2")
    assert 20e6 < count.value < 25e6 and "counted in" in count.source  # MiniLM-L6: about 22.7M


# --- sizes ------------------------------------------------------------------------------------------------

def test_sizes_from_ir_datasets_metadata_and_from_files(tmp_path):
    cfg = read_config_object(str(ROOT / "config" / "paper" / "msmarco_v1.yaml"))
    import ir_datasets

    shipped = json.loads((Path(ir_datasets.__file__).parent / "etc" / "metadata.json").read_text())
    sizes = Sizes(cfg, tmp_path)
    assert sizes.queries("msmarco_dev").value == shipped["msmarco-document/dev"]["queries"]["count"]
    assert sizes.documents("msmarco_v1").value == shipped["msmarco-document"]["docs"]["count"]
    # a query set already fetched into the run directory is counted there
    queries = tmp_path / "results" / "data" / "msmarco_v1" / "queries" / "dl19.tsv"
    queries.parent.mkdir(parents=True)
    queries.write_text("1\tone\n2\ttwo\n")
    assert sizes.queries("dl19") == Count(2, "lines of results/data/msmarco_v1/queries/dl19.tsv")


# --- totals -----------------------------------------------------------------------------------------------

def cost(rule, hours, basis, gpus=0, local=False, disk=(), downloads=()):
    return JobCost(ScheduledJob(rule, {"n": str(id(disk))}, {}, {}, gpus, local), hours, basis,
                   (f"source of {rule}",) if basis != LOCAL else (), threads=2, disk=list(disk),
                   downloads=list(downloads))


def test_totals_add_up_and_a_shared_download_counts_once():
    archive = Item("ir_datasets archive", 1000, "given", key="archive")
    costs = [cost("train", 2.0, MEASURED, gpus=1, disk=[Item("checkpoint (x)", 400, "given")]),
             cost("train", 15.0, LIMIT, gpus=1, disk=[Item("checkpoint (y)", None, "unknown")]),
             cost("fetch_documents", 12.0, LIMIT, downloads=[archive]),
             cost("fetch_queryset", 1.0, LIMIT, downloads=[archive, Item("queries", 10, "given", key="q")]),
             cost("evaluate", None, LOCAL, local=True)]
    plan = Plan("c.yaml", ["all"], "a device", None, costs, {}, [], [], "2026-01-01", "abc1234", False)
    totals = report.summarise(plan).totals
    assert totals["jobs"] == 5 and totals["submitted"] == 4 and totals["local"] == 1
    assert totals["gpu_hours"] == 17.0 and totals["gpu_hours_by_basis"] == {MEASURED: 2.0, LIMIT: 15.0}
    assert totals["cpu_hours"] == (12.0 + 1.0) * 2  # hours x the job's cores
    assert totals["disk_bytes"] == 400 and totals["download_bytes"] == 1010
    text = report.text(plan)
    assert "train (1)" in text  # the checkpoint of unknown size is listed, not counted
    rows = report.summarise(plan).rows.set_index("rule")
    assert rows.loc["fetch_documents", "download_bytes"] == 1000 and rows.loc["fetch_queryset", "download_bytes"] == 10
