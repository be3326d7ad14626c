# The names, paths and input functions of rules/probes.smk (Snakemake's lint keeps functions out of a file
# with rules).

from posbias.outputs import table_files
from posbias.probes import paths as probe_paths
from posbias.probes.paths import (REPLACEMENTS, SYNTHETIC as PROBE_SYNTHETIC, pairs as probe_pairs, report_paths,
                                  sensitivity_paths)
from posbias.probes.steps import redocred_files

PROBES = CFG.probes.data
PROBE_NAMES = CFG.probes.names
PROBE_SCORERS = CFG.probes.scorers


def probe_redocred_files():
    return redocred_files(PROBES["redocred"], PROBE_SYNTHETIC)


def probe_build_inputs():
    """The Re-DocRED files, and the poison's replacement file when it reads one."""
    files = [entry["path"] for group in probe_redocred_files().values() for entry in group]
    poison = PROBES.get("poison", {})
    return files + ([poison["path"]] if "poison" in PROBE_NAMES and poison.get("source") == "file" else [])


def probe_poison_llm():
    """The poison's language model (its job params), when it asks one."""
    poison = PROBES.get("poison", {})
    return CFG.llm.model(poison["model"]) if "poison" in PROBE_NAMES and poison.get("source") == "llm" else None


PROBE_REPLACEMENTS = [REPLACEMENTS] if "poison" in PROBE_NAMES else []


def probe_score_inputs(wildcards):
    inputs = {"pairs": [probe_pairs(p) for p in PROBE_NAMES], "heatmap": probe_pairs("heatmap")}
    checkpoint_dir = CFG.probes.checkpoint(wildcards.scorer)
    return {**inputs, **({"checkpoint": checkpoint_dir} if checkpoint_dir else {})}


PROBE_TABLE, PROBE_FIGURES = report_paths(f"{OUT}/probes", PROBE_NAMES)
PROBE_SENSITIVITY = sensitivity_paths(f"{OUT}/probes", PROBE_NAMES)
PROBE_RAG = PROBES.get("rag")
PROBE_RAG_TABLE = table_files(f"{OUT}/probes", "rag") if PROBE_RAG else {}
PROBES_REPORTED = ([*PROBE_TABLE.values(), *(p for paths in PROBE_FIGURES.values() for p in paths),
                    *PROBE_SENSITIVITY.values(), *PROBE_RAG_TABLE.values()] if PROBES else [])


def probe_report_outputs():
    """The table and figures; the HTML table and PNG figures go into the Snakemake report."""
    outputs = {fmt: report(path, caption="../report/probes_table.rst", category="Bias probes")
               if fmt == "html" else path for fmt, path in PROBE_TABLE.items()}
    for name, (png, pdf) in PROBE_FIGURES.items():
        outputs[f"{name}_png"] = report(png, caption=f"../report/probes_{name}.rst", category="Bias probes")
        outputs[f"{name}_pdf"] = pdf
    for fmt, path in PROBE_SENSITIVITY.items():
        caption = "../report/probes_sensitivity.rst"
        outputs[f"sensitivity_{fmt}"] = report(path, caption=caption, category="Bias probes") if fmt == "html" else path
    return outputs
