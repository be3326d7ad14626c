"""A judge's preference as the candidate it prefers moves between the two places of a pairwise prompt
(`posbias.audit.judge_battery.judge_battery`)."""

from posbias.audit.battery_declaration import BatteryDeclaration
from posbias.audit.battery_declarations._common import SIZED

BATTERIES = (BatteryDeclaration(
    "judge", "posbias.audit.judge_battery:judge_battery", "judge", "win rate",
    # `n_questions`: the embedded world's questions a live judge compares answers to (a replay: its first
    # questions); `repetitions`: each asking judged again, and `temperature`: above 0, each repetition sampled
    # with its own seed (an API backend; a local one decodes greedily only, and greedy answers repeat, so their
    # repetition stability is 1 by construction); `combine`: each order's verdict as it is, both orders' verdicts
    # made one, a disagreement a tie (the both_orders mitigation), or the majority of `consistency_k` drawn orders
    # (shuffles: each order drawn at random, seeded; rotations: the two in turn; the permutation_self_consistency
    # mitigation, `consistency_aggregate` borda or rrf, alike for two candidates)
    {"n_questions": 12, "repetitions": 1, "temperature": 0.0, "max_new_tokens": 8, "combine": "none",
     "consistency_k": 1, "consistency_aggregate": "borda", "consistency_orders": "shuffles", "consistency_seed": 0,
     **SIZED},
    (), title="A judge: the better answer read first or second", card_order=7,
    units="posbias.audit.sizing:judge_units", planted="posbias.audit.calibration:planted_judge",
    subject="the subject answer", unit_noun="questions"),)
