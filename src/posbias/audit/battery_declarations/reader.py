"""A reader's accuracy as the answer document moves through its context (`posbias.audit.batteries.reader_battery`)."""

from posbias.audit.battery_declaration import BatteryDeclaration
from posbias.audit.battery_declarations._common import SIZED

BATTERIES = (BatteryDeclaration(
    "reader", "posbias.audit.batteries:reader_battery", "reader", "accuracy",
    # `arrange`: the context in retrieval order, or with the best documents at both ends ("ends": the
    # relevance_ordered_context mitigation, posbias.audit.mitigations); `prompt`: Lost in the Middle's template, or
    # its query-aware one, the question before the documents and after them (the query_aware_contextualization
    # mitigation; posbias.reading.variants)
    {"n_questions": 12, "n_documents": 5, "max_new_tokens": 24, "arrange": "retrieval", "prompt": "default",
     "source": None, **SIZED},
    ("qa",), title="Lost in the Middle: the gold document at each position of the context", card_order=4,
    units="posbias.audit.sizing:reader_units", planted="posbias.audit.calibration:planted_reader",
    subject="the gold document", unit_noun="questions"),)
