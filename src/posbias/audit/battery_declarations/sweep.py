"""The needle sweep of a pair scorer (`posbias.audit.batteries.sweep_battery`)."""

from posbias.audit.battery_declaration import BatteryDeclaration
from posbias.audit.battery_declarations._common import PASSAGE_SOURCE, SIZED

BATTERIES = (BatteryDeclaration(
    "sweep", "posbias.audit.batteries:sweep_battery", "pairs", "MRR",
    # `source`: null for the embedded data, else the real files
    {"n_queries": 12, "n_positions": 6, "n_distractors": 4, "doc_tokens": None, "min_doc_tokens": 96,
     "max_doc_tokens": 1024, "seed": 0, "source": None, **SIZED},
    PASSAGE_SOURCE, title="Position sweep: the needle through a haystack of {doc_tokens} tokens", card_order=1,
    units="posbias.audit.sizing:haystack_units", planted="posbias.audit.calibration:planted_needle_scorer",
    subject="the needle", unit_noun="questions"),)
