"""A reader's depth x context-size grid (`posbias.audit.batteries.reader_grid_battery`), asked for by name."""

from posbias.audit.battery_declaration import BatteryDeclaration
from posbias.audit.battery_declarations._common import SIZED

BATTERIES = (BatteryDeclaration(
    "reader_grid", "posbias.audit.batteries:reader_grid_battery", "reader", "accuracy",
    {"n_questions": 8, "n_documents": [3, 5, 10], "depths": [0.0, 0.5, 1.0], "max_new_tokens": 24,
     "arrange": "retrieval", "prompt": "default", "source": None, **SIZED},  # `arrange`, `prompt`: as the reader's
    ("qa",), by_default=False, grid=True,
    title="Depth x length: the gold document at each depth of contexts of k documents", card_order=5,
    units="posbias.audit.sizing:reader_units", planted="posbias.audit.calibration:planted_reader",
    subject="the gold document", unit_noun="questions"),)
