# The names, paths and input functions of rules/litm.smk (Snakemake's lint keeps functions out of a file
# with rules).

from posbias.litm import paths as litm_paths
from posbias.litm.paths import CLOSED_BOOK, data_file, prediction as litm_prediction
from posbias.litm.steps import settings as litm_settings, variants_of
from posbias.llm.spec import LOCAL_BACKENDS

LITM = CFG.litm.data
LITM_TASKS = CFG.litm.tasks
LITM_MODELS = CFG.litm.models


def litm_data(task):
    """Setting name -> data file (closed-book prompts read the oracle file)."""
    return {name: data_file(task, name) for name, _, _ in litm_settings(task, LITM[task]) if name != CLOSED_BOOK}


litm_prediction_keys = CFG.litm.prediction_keys
LITM_REPORT = CFG.litm.report_params(f"{OUT}/litm")
LITM_TABLES, LITM_FIGURES = LITM_REPORT["tables"], LITM_REPORT["figures"]
LITM_SENSITIVITY = LITM_REPORT["sensitivity"] if LITM_TASKS else {}
LITM_REPORTED = [path for outputs in LITM_TABLES.values() for path in outputs.values()] + \
                [path for paths in LITM_FIGURES.values() for path in paths] + list(LITM_SENSITIVITY.values())


def litm_qa_source(wildcards):
    source = LITM["qa"]["source"]
    if source["kind"] == "synthetic":
        return {"retrieval": litm_paths.SYNTHETIC_RETRIEVAL}
    return {"retrieval": source["path"]} if source["kind"] == "retrieval" else {}


def litm_report_outputs():
    """The tables and figures; the HTML tables and PNG figures go into the Snakemake report."""
    outputs = []
    for key, table in LITM_TABLES.items():
        outputs += [report(path, caption="../report/litm_table.rst", category="Lost in the Middle",
                           labels={"table": key}) if fmt == "html" else path for fmt, path in table.items()]
    for key, paths in LITM_FIGURES.items():
        outputs += [report(path, caption="../report/litm_figure.rst", category="Lost in the Middle",
                           labels={"figure": key}) if path.endswith(".png") else path for path in paths]
    return outputs + [report(path, caption="../report/litm_sensitivity.rst", category="Lost in the Middle",
                             labels={"table": "sensitivity"}) if fmt == "html" else path
                      for fmt, path in LITM_SENSITIVITY.items()]


# The prediction jobs are long and the rest of the task is instant, so the whole chain goes first (RUN_EARLY_PRIORITY,
# rules/common.smk): left to the greedy scheduler, a task's data job ran last and its predictions alone at the end of
# the demo for 150 s.
