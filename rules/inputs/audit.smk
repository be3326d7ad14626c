# The names and paths of rules/audit.smk (Snakemake's lint keeps functions out of a file with rules).

from posbias.audit.card import CARD, grid_files
from posbias.audit.leaderboard import leaderboard_files
from posbias.audit.mitigation_table import mitigation_files
from posbias.audit.config import EXPORTED
from posbias.audit.battery_settings import GRID_BATTERIES
from posbias.audit.corpus import FILES as AUDIT_CORPUS_FILES
from posbias.audit.steps import battery_files

AUDIT_OUT = f"{OUT}/audit"
AUDIT_CORPUS = f"{OUT}/corpora/nq"  # the real corpus's files (rule audit_corpus)
AUDIT_JOBS = CFG.audit.jobs()
AUDIT_EXPORTS = sorted({path for name in CFG.audit.models for path in CFG.audit.inputs(name)
                        if path.startswith(EXPORTED)})
AUDIT_CARDS = [f"{AUDIT_OUT}/{name}/{CARD}" for name in CFG.audit.models]
AUDIT_LEADERBOARD = leaderboard_files(AUDIT_OUT) if AUDIT_JOBS else {}
# each depth x length grid's heatmap (PNG, PDF) and table of cells
AUDIT_GRIDS = [path for name, battery in AUDIT_JOBS if battery in GRID_BATTERIES
               for path in grid_files(AUDIT_OUT, name, battery).values()]
AUDIT_MITIGATIONS = mitigation_files(AUDIT_OUT) if CFG.audit.mitigated() else {}
# entries mitigated by position_balanced_finetuning whose twin is the workflow's to write (rule audit_finetune)
AUDIT_FINETUNED = [name for name in CFG.audit.mitigated()
                   if CFG.audit.job(name)["mitigation"]["kind"] == "position_balanced_finetuning"
                   and CFG.audit.job(name)["mitigation"]["model"] == f"{AUDIT_OUT}/finetuned/{name}"]
AUDIT_REPORTED = [*AUDIT_CARDS, *AUDIT_LEADERBOARD.values(), *AUDIT_GRIDS, *AUDIT_MITIGATIONS.values()]


def audit_battery_outputs():
    return {key: str(path).replace("NAME", "{name}").replace("BATTERY", "{battery}")
            for key, path in battery_files(AUDIT_OUT, "NAME", "BATTERY").items()}


def audit_battery_results():
    """Every battery's files: the report job reads the summaries and the curves."""
    return [str(path) for name, battery in AUDIT_JOBS for key, path in battery_files(AUDIT_OUT, name, battery).items()
            if key != "values"]

