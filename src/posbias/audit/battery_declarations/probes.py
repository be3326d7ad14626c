"""The bias probes' controlled pairs, scored by a pair scorer (`posbias.audit.batteries.probes_battery`)."""

from posbias.audit.battery_declaration import BatteryDeclaration
from posbias.audit.battery_declarations._common import SIZED

BATTERIES = (BatteryDeclaration(
    "probes", "posbias.audit.batteries:probes_battery", "pairs", "score",
    {"n_documents": 120, "n": 16, "positions": 8, "rest": "paper", "seed": 0, "source": None, **SIZED},
    ("redocred",), title="Position probe: the evidence sentence moved through its document", card_order=2,
    units="posbias.audit.sizing:probe_units", planted="posbias.audit.calibration:planted_pair_scorer",
    subject="the evidence sentence", unit_noun="documents"),)
