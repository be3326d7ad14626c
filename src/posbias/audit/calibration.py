"""How far the audit's verdicts can be trusted: each battery's false-positive rate and power, measured through the
battery's own code path (its data, its requests, its metric, its test and correction) on mock models with a planted
position effect of known size.

A planted model answers from the `meta` a battery attaches to each request (the unit, the gold item's position and
the number of positions), not from what the text says (the order battery's reads only where the gold passage sits
in RankGPT's prompt), so the curve it makes is known in advance:

- pair batteries with MRR (`sweep`, `grid`): the needle is found (scored above every distractor) with probability
  a(r) at relative position r, and otherwise scored like a distractor, so ranked at random among them. Its
  expected reciprocal rank is a(r) + (1 - a(r)) x chance, so a drop of `size` in MRR is planted as
  a(r) = base - size x shape(r) / (1 - chance).
- readers (`reader`, `reader_grid`, accuracy): the answer is right with probability a(r) = base - size x shape(r).
- `judge` (win rate): the better answer wins with probability a(r) = base - size x shape(r), r = 0 read first, 1
  read second (the planted judge answers from the asking's order, `PlantedJudge`).
- `probes` (a raw score): the score is a standard normal draw less size x shape(r): `size` in the score's standard
  deviations.
- the listwise `order` battery (MRR): a RankGPT request carries no meta for the gold item, so the planted list
  ranker reads the prompt RankGPT builds (its numbered passages) and knows the questions' gold passages; with
  probability a(r), r the gold's place in the window, it answers the gold first, else a random order, which the
  battery's own parser and sliding windows then read. The planted drop is `size` in MRR when one window holds the
  whole list (the battery's default); with shorter windows r is the place in a window and a failed window does not
  leave the gold at random over the list.

Whether a unit succeeds is correlated across its positions (a Gaussian copula with correlation `rho`: a question
found at one position tends to be found at the others, as a real model's easy questions are easy everywhere), so
the tests are paired as they are on a real model. The shapes, r = 0 at the first position (the reference), 1 at
the last (a grid's r is its depth):

- `none`: flat, the null hypothesis: any significant drop is a false positive;
- `drop`: the last position alone `size` below the rest;
- `slope`: falling linearly to `size` at the last position;
- `u`: the middle `size` below both ends, shape 1 - (2r - 1)^2 (Lost in the Middle's U).

For each battery, shape and number of units, `replicates` runs with fresh noise give the share whose curve shows at
least one significant drop (Holm over the curve's positions, as the card reports it): under `none` the family-wise
false-positive rate, else the power. Beside it stands the mean of the minimum detectable drop the card prints
(`posbias.stats.power`): a planted drop of about that size at one position should be found in about 80% of runs.

"""

from __future__ import annotations

import logging
import math
import re
import zlib
from dataclasses import dataclass
from typing import Mapping, Sequence

import numpy as np

from posbias.audit.battery_settings import DECLARED
from posbias.audit.sizing import UNIT_SETTING
from posbias.errors import InputError
from posbias.plugins import load
from posbias.scoring.protocol import Scorer

log = logging.getLogger(__name__)

SHAPES = ("none", "drop", "slope", "u", "detectable")
CALIBRATED = ("sweep", "grid", "probes", "reader", "reader_grid", "order", "judge")
# Each battery runs with its own defaults (`--settings` changes them as the audit's does): a calibration measures
# the tests as the cards use them.
WINDOW = 32  # the planted scorer's window in words: short haystacks, as a calibration needs no long text
BASE = 0.8  # the success probability (MRR: of the needle being found) at the reference position


def shape(kind: str, r: float) -> float:
    """The share of the planted drop at relative position r (0 the reference, 1 the last); `detectable` plants a
    `drop` (`calibrate`)."""
    if kind == "none":
        return 0.0
    if kind == "drop":
        return 1.0 if r >= 1 - 1e-9 else 0.0
    if kind == "slope":
        return float(r)
    if kind == "u":
        return 1.0 - (2 * r - 1) ** 2
    raise InputError(f"calibration: unknown shape {kind!r}; choose from {', '.join(SHAPES)}")


@dataclass(frozen=True)
class Plant:
    """One planted effect: its `shape`, its `size` (in the battery's metric; probes: in standard deviations),
    the within-unit correlation `rho` and the noise's `seed` (one per replicate)."""

    shape: str
    size: float
    seed: int
    rho: float = 0.5
    base: float = BASE

    def unit_level(self, unit) -> float:
        """The unit's own standard normal level, shared by all its positions (the copula's common part)."""
        return float(np.random.default_rng([self.seed, zlib.crc32(str(unit).encode())]).standard_normal())

    def latent(self, units: Sequence, rng: np.random.Generator) -> np.ndarray:
        """A standard normal draw per request, correlated `rho` within a unit."""
        common = np.array([self.unit_level(u) for u in units])
        return math.sqrt(self.rho) * common + math.sqrt(1 - self.rho) * rng.standard_normal(len(units))

    def succeeds(self, units: Sequence, positions: Sequence[float], rng: np.random.Generator,
                 scale: float = 1.0) -> np.ndarray:
        """Whether each request succeeds: with probability base - size x shape(r) / scale at its position r."""
        from scipy.stats import norm  # here, not at the top: every `posbias` command reads this module's names

        p = np.array([self.base - self.size * shape(self.shape, r) / scale for r in positions])
        if np.any(p < 0) or np.any(p > 1):
            raise InputError(f"calibration: a {self.shape} drop of {self.size} below {self.base} leaves a "
                             f"probability outside [0, 1]; choose a smaller --size")
        return self.latent(units, rng) < norm.ppf(p)


def _relative(meta: Mapping, coordinates: Sequence[float] | None) -> float:
    index, count = meta["gold_index"], meta["n_items"]
    if coordinates is not None:
        return float(coordinates[index])
    return index / (count - 1) if count > 1 else 0.0


class PlantedScorer(Scorer):
    """A pair scorer with a planted position effect (module docstring): `metric` MRR (found or at random among the
    distractors) or score (probes: a normal draw less the drop). Tokens are whitespace words."""

    window = WINDOW

    def __init__(self, plant: Plant, metric: str, chance: float = 0.0, coordinates: Sequence[float] | None = None):
        self.plant, self.metric, self.chance, self.coordinates = plant, metric, chance, coordinates
        self.calls = 0

    def count_tokens(self, text: str) -> int:
        return len(text.split())

    def score(self, pairs, metas=None) -> np.ndarray:
        if metas is None:
            raise ValueError("a planted scorer reads each pair's meta (unit and position); the battery sent none")
        self.calls += 1
        rng = np.random.default_rng([self.plant.seed, self.calls])
        needles = [i for i, meta in enumerate(metas) if meta.get("gold_index") is not None]
        units = [metas[i]["example_index"] for i in needles]
        positions = [_relative(metas[i], self.coordinates) for i in needles]
        if self.metric == "score":
            scores = np.zeros(len(pairs))
            scores[needles] = self.plant.latent(units, rng) - self.plant.size * np.array(
                [shape(self.plant.shape, r) for r in positions])
            return scores
        # a distractor, and a needle not found, draw from the same uniform: the needle's rank among them is random
        scores = rng.uniform(size=len(pairs))
        found = self.plant.succeeds(units, positions, rng, scale=1 - self.chance)
        scores[np.array(needles, dtype=int)[found]] = 2.0
        return scores


@dataclass
class _Answer:
    text: str
    prompt_tokens: int


class PlantedReader:
    """A reader with a planted position effect: the gold answer with probability base - size x shape(r), else
    "I don't know." (`generate`, as a language model answers the reader batteries)."""

    def __init__(self, plant: Plant):
        self.plant, self.calls = plant, 0

    def generate(self, requests, decoding=None) -> list[_Answer]:
        self.calls += 1
        rng = np.random.default_rng([self.plant.seed, self.calls])
        metas = [request.meta for request in requests]
        right = self.plant.succeeds([m["example_index"] for m in metas], [_relative(m, None) for m in metas], rng)
        return [_Answer(str(m["answer"]) if ok else "I don't know.", 10 * m["n_items"]) for m, ok in zip(metas, right)]


class PlantedJudge:
    """A judge with a planted position effect: the subject answer (the better one) wins with probability base -
    size x shape(r), r its place (0 read first, 1 second); otherwise the other answer wins (`comparisons` and
    `judge`, as a judge answers the judge battery)."""

    def __init__(self, plant: Plant):
        self.plant, self.calls = plant, 0

    def comparisons(self, settings: Mapping) -> list:
        from posbias.judges.judging import both_orders

        return [asking for q in range(settings["n_questions"])
                for asking in both_orders(f"q{q}", "subject", "other", {"subject": "", "other": ""}, "",
                                          settings["repetitions"])]

    def judge(self, askings, max_new_tokens: int = 0, temperature: float = 0.0) -> list:
        from posbias.judges.records import Judgment

        self.calls += 1
        rng = np.random.default_rng([self.plant.seed, self.calls])
        places = [0 if asking.first == asking.subject else 1 for asking in askings]
        wins = self.plant.succeeds([asking.question for asking in askings], places, rng)
        return [Judgment("planted", asking.question, asking.first, asking.second, asking.subject,
                         ("first", "second")[place if won else 1 - place], asking.repetition)
                for asking, place, won in zip(askings, places, wins)]


class PlantedListRanker:
    """A RankGPT model with a planted position effect: in each window it finds the gold passage (by its text, among
    the numbered passages of the prompt) and ranks it first with probability base - size x shape(r) / (1 - chance),
    r its place in the window; otherwise, and in a window without it, it answers a random order."""

    PASSAGE = re.compile(r"\[(\d+)\] (.*)", re.DOTALL)

    def __init__(self, plant: Plant, gold: Mapping[str, str], chance: float):
        self.plant, self.gold, self.chance, self.calls = plant, dict(gold), chance, 0

    def generate(self, requests, decoding=None, progress=False) -> list:
        from posbias.llm.types import Completion

        answers = []
        for request in requests:
            self.calls += 1
            rng = np.random.default_rng([self.plant.seed, self.calls])
            unit = request.meta["id"].rsplit("@", 1)[0]  # "<qid>@<tag>:<start>-<end>"; a real qid may hold "@"
            passages = [m.group(2) for message in request.messages if message["role"] == "user"
                        for m in [self.PASSAGE.fullmatch(message["content"])] if m]
            order = list(rng.permutation(len(passages)))
            gold = self.gold[unit].split()  # the prompt shows it with single spaces, perhaps cut to its first words
            golden = [i for i, text in enumerate(passages) if text.split() == gold[:len(text.split())]]
            if golden:
                r = golden[0] / (len(passages) - 1) if len(passages) > 1 else 0.0
                if self.plant.succeeds([unit], [r], rng, scale=1 - self.chance)[0]:
                    order = [golden[0], *[i for i in order if i != golden[0]]]
            text = " > ".join(f"[{i + 1}]" for i in order)
            answers.append(Completion(text, "stop", 20 * len(passages), len(order), 0.0, f"planted:{self.calls}",
                                      False))
        return answers


def planted_model(battery: str, plant: Plant, settings: Mapping):
    """The mock a battery reads, with `plant`'s effect in the battery's metric (its declaration's `planted`)."""
    return load(DECLARED[battery].planted)(plant, settings)


def planted_list_ranker(plant: Plant, settings: Mapping) -> "PlantedListRanker":
    """The order battery's: a listwise ranker that puts the gold first as often as the plant says."""
    from posbias.audit.haystack import questions_and_pool
    from posbias.audit.results import chance

    questions, _ = questions_and_pool(settings["source"])
    return PlantedListRanker(plant, {q.qid: q.needle for q in questions}, chance(settings["n_candidates"] - 1))


def planted_judge(plant: Plant, settings: Mapping) -> PlantedJudge:
    return PlantedJudge(plant)


def planted_reader(plant: Plant, settings: Mapping) -> "PlantedReader":
    return PlantedReader(plant)


def planted_pair_scorer(plant: Plant, settings: Mapping) -> "PlantedScorer":
    """The probe battery's: a scorer whose score falls with the evidence's position."""
    return PlantedScorer(plant, "score")


def planted_needle_scorer(plant: Plant, settings: Mapping) -> "PlantedScorer":
    """The sweep's and the grid's: the needle's reciprocal rank among the distractors (the grid's at its depths)."""
    from posbias.audit.results import chance

    return PlantedScorer(plant, "MRR", chance(settings["n_distractors"]), settings.get("depths"))


def run_once(battery: str, plant: Plant, settings: Mapping) -> dict:
    """One replicate: the battery run on the planted model and summarised as an audit summarises it (its test,
    correction and alpha); the verdict and the power figures of its curve (a grid's: its longest length)."""
    from posbias.audit.battery_settings import battery_function
    from posbias.audit.results import battery_test, summarise_result

    model = planted_model(battery, plant, settings[battery])
    result = battery_function(battery)(model, settings[battery])
    test = battery_test(battery, settings["statistics"])
    summarise_result(result, settings["statistics"], model_window(model), test)
    summary = result.summary
    # a grid's verdict: a drop at any of its lengths (each length's curve is its own Holm family)
    drops = [each["significant_drops"] for each in summary.get("lengths", {}).values()] or \
        [summary["significant_drops"]]
    return {"significant": max(drops) > 0, "detectable_drop": summary["detectable_drop"],
            "underpowered": summary["underpowered"], "reference_mean": summary["reference_mean"],
            "worst": summary["worst"], "n_positions": int(result.curve["position"].nunique()), "test": test}


def model_window(model) -> int | None:
    return getattr(model, "window", None)


def calibrate(batteries: Sequence[str], shapes: Sequence[str], units: Sequence[int], size: float, replicates: int,
              rho: float = 0.5, overrides: Mapping | None = None, seed: int = 0, progress=None):
    """One row per (battery, shape, units): `rate` the share of `replicates` with a significant drop (the
    false-positive rate under `none`, else the power) with its Wilson 95% interval, and the mean detectable drop.
    The shape `detectable` plants a drop at the last position of the size the cards stated as detectable under
    `none` (which it needs): its power should be at least 80%; NaN where that drop cannot be planted."""
    import pandas as pd

    from posbias.audit.battery_settings import settings_with

    unknown = sorted(set(batteries) - set(CALIBRATED))
    if unknown:
        raise InputError(f"calibration: cannot calibrate {unknown}; batteries: {', '.join(CALIBRATED)}")
    if "detectable" in shapes and "none" not in shapes:
        raise InputError("calibration: the shape detectable plants the drop the shape none finds detectable: "
                         "ask for none too")
    rows = []
    for battery in batteries:
        for n_units in units:
            merged = {**(overrides or {}).get(battery, {}), UNIT_SETTING[battery]: int(n_units)}
            settings = settings_with({battery: merged, "statistics": (overrides or {}).get("statistics", {})})
            measured = {}
            for kind in sorted(shapes, key=SHAPES.index):  # none first: detectable reads its drop
                planted = ("drop", measured["none"]["detectable_drop"]) if kind == "detectable" else \
                    (kind, 0.0 if kind == "none" else size)
                measured[kind] = _measure(battery, kind, planted, settings, replicates, rho, seed, progress)
                rows.append({**measured[kind], "units": int(n_units)})
    return pd.DataFrame(rows)


def _measure(battery: str, kind: str, planted: tuple[str, float], settings: Mapping, replicates: int, rho: float,
             seed: int, progress) -> dict:
    """`replicates` runs of the battery with one planted effect (`planted`: its shape and size), summed up."""
    from statsmodels.stats.proportion import proportion_confint

    from posbias.audit.results import battery_test

    shape_name, size_here = planted
    runs = []
    try:
        for replicate in range(replicates):
            runs.append(run_once(battery, Plant(shape_name, size_here, seed=seed * 100003 + replicate, rho=rho),
                                 settings))
            if progress:
                progress()
    except InputError:
        if kind != "detectable":
            raise
        log.warning("calibration %s: a drop of %.3f cannot be planted below %s", battery, size_here, BASE)
        if progress:
            progress(replicates - len(runs))
        return {"battery": battery, "test": battery_test(battery, settings["statistics"]), "shape": kind,
                "size": size_here,
                "positions": math.nan, "replicates": replicates, "rate": math.nan, "rate_low": math.nan,
                "rate_high": math.nan, "what": "power at the detectable drop", "alpha": settings["statistics"]["alpha"],
                "detectable_drop": math.nan, "underpowered": math.nan}
    hits = sum(run["significant"] for run in runs)
    low, high = proportion_confint(hits, replicates, alpha=0.05, method="wilson")
    detectable = [run["detectable_drop"] for run in runs if not math.isnan(run["detectable_drop"])]
    return {"battery": battery, "test": runs[0]["test"], "shape": kind, "size": size_here,
            "positions": runs[0]["n_positions"], "replicates": replicates, "rate": hits / replicates,
            "rate_low": low, "rate_high": high,
            "what": {"none": "false-positive rate", "detectable": "power at the detectable drop"}.get(kind, "power"),
            "alpha": settings["statistics"]["alpha"],
            "detectable_drop": float(np.mean(detectable)) if detectable else math.nan,
            "underpowered": float(np.mean([run["underpowered"] for run in runs]))}


def calibration_tables(frame) -> list:
    """The calibration as tables: one row per battery and units, the false-positive rate beside each shape's
    power, and the mean detectable drop the cards print."""
    from posbias.reporting.render import Table, number

    shapes = [kind for kind in SHAPES if kind in set(frame["shape"])]
    rows = []
    for (battery, units), part in frame.groupby(["battery", "units"], sort=False):
        by_shape = part.set_index("shape")
        cells = [battery, by_shape["test"].iloc[0], str(units), str(int(by_shape["positions"].dropna().iloc[0]))]
        for kind in shapes:
            row = by_shape.loc[kind] if kind in by_shape.index else None
            cells.append("–" if row is None else f"{number(row['rate'], 2)} [{number(row['rate_low'], 2)}, "
                                                  f"{number(row['rate_high'], 2)}]")
        cells.append(number(by_shape.loc["none", "detectable_drop"], 3) if "none" in by_shape.index else "–")
        rows.append(cells)
    first = frame.iloc[0]
    sized = frame[~frame["shape"].isin(["none", "detectable"])]["size"]
    size = number(sized.iloc[0], 2) if len(sized) else "–"
    header = ["battery", "test", "units", "positions",
              *[{"none": "false positives", "detectable": "power at the detectable drop"}.get(kind, f"power: {kind}")
                for kind in shapes], "detectable drop"]
    planted = (f"the power against a planted drop of {size} (MRR, accuracy; the probes' score in standard "
               f"deviations) at its deepest point" if len(sized) else "the power against the planted drop")
    caption = (f"Share of {first['replicates']} replicates whose curve shows a significant drop (Holm over the "
               f"curve's positions, alpha {first['alpha']}), with Wilson 95% intervals: under no effect the "
               f"family-wise false-positive rate, else {planted}. Detectable drop: the mean minimum "
               f"drop the card prints as detectable at 80% power under no effect; power at the detectable drop: that "
               f"drop planted at the last position, found in at least 80% of runs if the cards' claim holds (empty: "
               f"too large to plant below the success rate of 0.8). Mock models, posbias.audit.calibration.")
    return [Table(header, rows, caption, "tab:calibration", wide=True)]


def power_figure(frame):
    """Power (and the false-positive rate) against the number of units, a panel per battery."""
    from posbias.reporting.figure_files import plt

    batteries = list(dict.fromkeys(frame["battery"]))
    fig, axes = plt.subplots(1, len(batteries), figsize=(3.2 * len(batteries), 3.0), squeeze=False, sharey=True)
    for ax, battery in zip(axes[0], batteries):
        part = frame[frame["battery"] == battery]
        for kind, lines in part.groupby("shape", sort=False):
            lines = lines.sort_values("units")
            ax.errorbar(lines["units"], lines["rate"], yerr=[lines["rate"] - lines["rate_low"],
                                                             lines["rate_high"] - lines["rate"]],
                        marker="o", capsize=2, label="false positives" if kind == "none" else kind)
        ax.axhline(part["alpha"].iloc[0], color="grey", linestyle=":", linewidth=1)
        ax.axhline(0.8, color="grey", linestyle="--", linewidth=1)
        ax.set_title(battery)
        ax.set_xlabel("units")
        ax.set_ylim(0, 1.02)
    axes[0][0].set_ylabel("share with a significant drop")
    axes[0][-1].legend(fontsize=7)
    return fig


def write_calibration(frame, out) -> list[str]:
    """calibration.{csv,md,tex,html} and calibration.{png,pdf} under `out`."""
    from pathlib import Path

    from posbias.reporting.figure_files import save_figure
    from posbias.reporting.render import write_tables

    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    outputs = {fmt: str(out / f"calibration.{fmt}") for fmt in ("csv", "md", "tex", "html")}
    write_tables(outputs, frame, *calibration_tables(frame))
    figures = [str(out / "calibration.png"), str(out / "calibration.pdf")]
    save_figure(power_figure(frame), figures)
    return [*outputs.values(), *figures]
