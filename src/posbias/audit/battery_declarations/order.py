"""A listwise ranker's preference for where the relevant candidate sits (`posbias.audit.batteries.order_battery`)."""

from posbias.audit.battery_declaration import BatteryDeclaration
from posbias.audit.battery_declarations._common import PASSAGE_SOURCE, SIZED

BATTERIES = (BatteryDeclaration(
    "order", "posbias.audit.batteries:order_battery", "list", "MRR",
    # `window`/`step`: RankGPT's sliding windows (null: one window over the list; step: half the window);
    # `consistency_*`: permutation self-consistency (k = 1: off; posbias.rankers.listwise.aggregate)
    {"n_queries": 12, "n_candidates": 5, "window": None, "step": None, "consistency_k": 1,
     "consistency_aggregate": "borda", "consistency_orders": "shuffles", "consistency_seed": 0, "source": None,
     **SIZED},
    PASSAGE_SOURCE, title="Listwise order: the gold document entering the list at each position", card_order=6,
    units="posbias.audit.sizing:order_units", planted="posbias.audit.calibration:planted_list_ranker",
    subject="the gold document", unit_noun="queries"),)
