"""A pair scorer's depth x length grid (`posbias.audit.batteries.grid_battery`): a sweep per length, asked for by
name (it costs a sweep per length). Its `source` may also name LongEmbed's needle or passkey set
(`{longembed: needle|passkey, ...}`, `posbias.audit.longembed.SOURCE_OPTIONS`)."""

from posbias.audit.battery_declaration import BatteryDeclaration
from posbias.audit.battery_declarations._common import DEPTHS, PASSAGE_SOURCE, SIZED

BATTERIES = (BatteryDeclaration(
    "grid", "posbias.audit.batteries:grid_battery", "pairs", "MRR",
    {"n_queries": 8, "n_distractors": 4, "depths": DEPTHS, "window_multiples": [0.5, 1.0, 1.5, 2.0],
     "lengths": None, "min_doc_tokens": 48, "max_doc_tokens": 1024, "needles": "lexical", "seed": 0,
     "source": None, **SIZED},
    PASSAGE_SOURCE, by_default=False, grid=True,
    title="Depth x length: the needle at each depth of documents of each length", card_order=3,
    units="posbias.audit.sizing:grid_units", planted="posbias.audit.calibration:planted_needle_scorer",
    subject="the needle", unit_noun="questions"),)
