"""How fast a job runs: measured throughput from the benchmark files, else the SLURM profile's time limit.

A measured rate is a number of (query, document) pairs per second, read from a benchmark JSON file that
`measurements.yaml` lists for a device: `benchmarks/rerank_throughput.py`'s output (`rerank.<system>.pairs_per_s`
and `train[].pairs_per_s`), or `benchmarks/training_throughput.py`'s (`results[]`: a preset's pairs a step over its
seconds a step, in the modes that train padded, as training does by default). A rate applies to a job only when the
benchmark ran the same ranker at the same geometry (query, chunk and document tokens, stride), in the same precision
and, for training, with the same pairs per forward pass; the backbone may differ, and the plan says so
(`Rate.backbone`).

Where no measurement fits, a job's time is the profile's `runtime` for its rule (`set-resources`, else
`default-resources`): the limit SLURM would give the job, an upper bound, not a measurement.
"""

from __future__ import annotations

import dataclasses
import functools
import json
from pathlib import Path

import yaml

from posbias.errors import InputError
from posbias.planning.dag import REPOSITORY

MEASUREMENTS = Path(__file__).with_name("measurements.yaml")
PROFILE = REPOSITORY / "profiles" / "slurm" / "profile.yaml"
GEOMETRY_KEYS = ("max_query_tokens", "chunk_tokens", "stride", "max_doc_tokens")


@dataclasses.dataclass(frozen=True)
class Rate:
    pairs_per_second: float
    source: str  # the file and the entry in it
    backbone: str  # what the measurement ran on


def geometry_of(ranker: str, args: dict) -> tuple:
    """What a measured rate must share with a job: the ranker and how it cuts a document."""
    return (ranker, *(args.get(key) for key in GEOMETRY_KEYS))


class Device:
    """One device's measurements (`measurements.yaml`'s `devices.<name>`)."""

    def __init__(self, name: str, spec: dict, rerank_geometry: dict, root: Path = REPOSITORY,
                 training_geometry: dict | None = None):
        self.name = name
        self.label = spec["label"]
        self.gpu_name = spec.get("gpu_name")  # what torch calls such a card; None for the CPU
        self.auto_precision = spec["auto_precision"]
        self._files = [(root / f["path"], f) for f in spec["files"]]
        self._rerank_geometry = {system: geometry_of(g["ranker"], g) for system, g in rerank_geometry.items()}
        self._training_geometry = {preset: geometry_of(g["ranker"], g)
                                   for preset, g in (training_geometry or {}).items()}

    @property
    def files(self) -> dict[str, str]:
        """Each measurement file (relative to the repository) and why it is used."""
        return {self._relative(path): " ".join(spec["why"].split()) for path, spec in self._files}

    def precision(self, requested: str) -> str:
        """The precision a job asking for `requested` (auto, fp32, bf16, fp16) runs in on this device."""
        return self.auto_precision if requested == "auto" else requested

    def rerank_rate(self, geometry: tuple, precision: str) -> Rate | None:
        for path, spec, result in self._results():
            if result["args"]["precision"] != precision:
                continue
            for system, measured in result.get("rerank", {}).items():
                if self._rerank_geometry.get(system) == geometry and measured.get("pairs_per_s"):
                    return Rate(measured["pairs_per_s"], f"{self._relative(path)}: rerank {system}, "
                                f"{measured['pairs_per_s']:.4g} pairs/s ({precision})", spec["backbone"])
        return None

    def train_rate(self, geometry: tuple, precision: str, pass_pairs: int) -> Rate | None:
        for path, spec, result in self._results():
            if "results" in result:  # benchmarks/training_throughput.py
                rate = self._training_benchmark_rate(path, spec, result, geometry, precision, pass_pairs)
                if rate:
                    return rate
                continue
            args = result["args"]
            if args["precision"] != precision or args.get("train_batch") != pass_pairs:
                continue
            for measured in result.get("train", []):
                if geometry_of(measured["model"], measured["geometry"]) == geometry and measured.get("pairs_per_s"):
                    return Rate(measured["pairs_per_s"],
                                f"{self._relative(path)}: train {measured['model']}, {measured['pairs_per_s']:.4g} "
                                f"pairs/s ({precision}, {args['train_batch']} pair a pass x {args['train_accum']} a "
                                f"step)", spec["backbone"])
        return None

    # the training benchmark's padded modes and the pairs a pass each takes (`one_pass`: the whole step)
    PADDED_MODES = {"micro": lambda result: 1, "one_pass": lambda result: result["pairs_per_step"]}

    def _training_benchmark_rate(self, path: Path, spec: dict, report: dict, geometry: tuple, precision: str,
                                 pass_pairs: int) -> Rate | None:
        if report["args"]["precision"] != precision:
            return None
        for measured in report["results"]:
            mode = self.PADDED_MODES.get(measured["mode"])
            if (mode is None or "error" in measured or not measured.get("seconds_per_step")
                    or self._training_geometry.get(measured["preset"]) != geometry
                    or min(pass_pairs, measured["pairs_per_step"]) != mode(measured)):
                continue
            rate, per_pass = measured["pairs_per_step"] / measured["seconds_per_step"], mode(measured)
            return Rate(rate, f"{self._relative(path)}: train {measured['preset']} {measured['mode']}, {rate:.4g} "
                              f"pairs/s ({precision}, {per_pass} pair{'s' * (per_pass > 1)} a pass x "
                              f"{measured['pairs_per_step'] // per_pass} a step)", spec["backbone"])
        return None

    def _results(self):
        for path, spec in self._files:
            yield path, spec, _read_json(path)

    @staticmethod
    def _relative(path: Path) -> str:
        try:
            return str(path.relative_to(REPOSITORY))
        except ValueError:
            return str(path)


@functools.cache
def _read_json(path: Path) -> dict:
    if not path.is_file():
        raise InputError(f"{MEASUREMENTS.name} names {path}, which does not exist")
    return json.loads(path.read_text(encoding="utf-8"))


def devices(path: Path = MEASUREMENTS, root: Path = REPOSITORY) -> dict[str, Device]:
    spec = yaml.safe_load(path.read_text(encoding="utf-8"))
    return {name: Device(name, device, spec["rerank_geometry"], root, spec.get("training_geometry", {}))
            for name, device in spec["devices"].items()}


def device_named(name: str | None, known: dict[str, Device] | None = None) -> tuple[Device | None, str]:
    """The device a plan is for, and a sentence saying which and why: `name` (`--gpu`), else this machine: its
    GPU when torch sees one (measured or not), else its CPU. A GPU without measurements gives None (every rate
    then falls back to the profile)."""
    known = devices() if known is None else known
    if name:
        key = name.lower()
        if key not in known or key == "cpu":
            raise InputError(f"--gpu {name}: no measurements for it; measured GPUs: "
                             f"{', '.join(k for k in known if k != 'cpu') or 'none'} "
                             f"(src/posbias/planning/measurements.yaml)")
        return known[key], f"{known[key].label} (--gpu {name})"
    gpu = _this_machines_gpu()
    if gpu is None:
        return known["cpu"], f"{known['cpu'].label}: this machine has no GPU that torch sees"
    for device in known.values():
        if device.gpu_name == gpu:
            return device, f"this machine's {gpu}"
    return None, f"this machine's {gpu}, which has no measurements: every job at the profile's limit"


def _this_machines_gpu() -> str | None:
    try:
        import torch
    except ImportError:
        return None
    return torch.cuda.get_device_name(0) if torch.cuda.is_available() else None


class Profile:
    """The SLURM profile's time limits and cores per rule (`profiles/slurm/profile.yaml`)."""

    def __init__(self, path: Path = PROFILE):
        self.path = path
        spec = yaml.safe_load(path.read_text(encoding="utf-8"))
        self._resources = spec.get("set-resources", {}) or {}
        self._default = spec.get("default-resources", {}) or {}
        self._threads = spec.get("set-threads", {}) or {}

    def runtime_hours(self, rule: str) -> tuple[float | None, str]:
        """The `runtime` a job of `rule` gets, in hours, and where it comes from."""
        own = self._resources.get(rule, {}).get("runtime")
        value, where = (own, f"set-resources.{rule}.runtime") if own is not None else (
            self._default.get("runtime"), "default-resources.runtime")
        if value is None:
            return None, f"{self._name()} gives {rule} no runtime"
        hours = _minutes(value) / 60
        return hours, (f"{self._name()} {where} ({_human_hours(hours)}): the profile's limit, an upper bound, "
                       f"not a measurement")

    def threads(self, rule: str) -> int:
        return int(self._threads.get(rule, 1))

    def _name(self) -> str:
        try:
            return str(self.path.relative_to(REPOSITORY))
        except ValueError:
            return str(self.path)


def _minutes(value) -> float:
    """Snakemake's runtime: a number of minutes, or a span such as "2h" (humanfriendly, as Snakemake reads it)."""
    if isinstance(value, (int, float)):
        return float(value)
    from humanfriendly import parse_timespan

    return parse_timespan(str(value)) / 60


def _human_hours(hours: float) -> str:
    return f"{hours:g} h" if hours >= 1 else f"{hours * 60:g} min"
