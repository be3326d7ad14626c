"""What an audit battery declares (`posbias.audit.battery_declarations`, one module per battery, found by its file):
its name, the function that runs it as `"module:function"` (imported only when it runs), the capability of the
models it audits (`pairs`: a (query, document) scorer; `reader`; `list`: a listwise ranker), the metric of its
values, whether that capability runs it by default or only when asked for by name, whether it is a depth x length
grid, its settings' defaults, the files its `source` names, and what the rest of the audit asks of it: the card's
heading and place, how many units its data hold (`posbias.audit.sizing`) and the mock with a planted effect that
calibration runs it on (`posbias.audit.calibration`)."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Mapping


@dataclass(frozen=True)
class BatteryDeclaration:
    name: str
    run: str  # "module:function", called with (model, settings) and returning a BatteryResult
    capability: str
    metric: str  # the value per unit and position: MRR, accuracy, score
    defaults: Mapping = field(default_factory=dict)
    source_keys: tuple[str, ...] = ()  # what a `source` mapping must name (besides `pool_size` and sha256s)
    by_default: bool = True  # run unless the battery list is given; else only when asked for by name
    grid: bool = False  # depth x length: a curve per length, a heatmap
    title: str = ""  # the card's heading of its section; `{name}` fields come from the result's `extra`
    card_order: int = 0  # where its section sits on a card (ascending)
    units: str = ""  # "module:function": (its settings) -> how many units its data hold
    planted: str = ""  # "module:function": (plant, its settings) -> the mock with a planted effect
    # how a card's verdict names what moves and what it counts (`posbias.audit.verdict`)
    subject: str = "the relevant text"
    unit_noun: str = "units"
