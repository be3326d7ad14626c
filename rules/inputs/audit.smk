# The names and paths of rules/audit.smk (Snakemake's lint keeps functions out of a file with rules).

from posbias.audit.card import CARD, leaderboard_files
from posbias.audit.config import EXPORTED
from posbias.audit.steps import battery_files

AUDIT_OUT = f"{OUT}/audit"
AUDIT_JOBS = CFG.audit.jobs()
AUDIT_EXPORTS = sorted({path for name in CFG.audit.models for path in CFG.audit.inputs(name)
                        if path.startswith(EXPORTED)})
AUDIT_CARDS = [f"{AUDIT_OUT}/{name}/{CARD}" for name in CFG.audit.models]
AUDIT_LEADERBOARD = leaderboard_files(AUDIT_OUT) if AUDIT_JOBS else {}
AUDIT_REPORTED = [*AUDIT_CARDS, *AUDIT_LEADERBOARD.values()]


def audit_battery_outputs():
    return {key: str(path).replace("NAME", "{name}").replace("BATTERY", "{battery}")
            for key, path in battery_files(AUDIT_OUT, "NAME", "BATTERY").items()}


def audit_battery_results():
    """Every battery's files: the report job reads the summaries and the curves."""
    return [str(path) for name, battery in AUDIT_JOBS for key, path in battery_files(AUDIT_OUT, name, battery).items()
            if key != "values"]
