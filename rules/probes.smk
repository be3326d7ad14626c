# Bias probes (Fayyaz et al. 2025, "Collapse of Dense Retrievers"): pairs of Re-DocRED documents that differ in one
# property (the evidence first or last, short or long, the head's name literal or not, repeated or not, the answer
# present or not, a foil against the evidence). One job builds every probe's pairs; one job per scorer (a dense
# encoder, BM25, or a trained ranker's checkpoint) scores them all, so a model loads once; one job runs the paired
# tests, corrected together, and draws the table and figures. The data and scoring jobs go first
# (RUN_EARLY_PRIORITY, rules/common.smk): left to the greedy scheduler they ran last, two scorers alone for a minute.


from posbias.outputs import table_files
from posbias.probes.paths import REPLACEMENTS, SYNTHETIC as PROBE_SYNTHETIC, pairs as probe_pairs, report_paths
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
PROBE_RAG = PROBES.get("rag")
PROBE_RAG_TABLE = table_files(f"{OUT}/probes", "rag") if PROBE_RAG else {}
PROBE_REPORTED = ([*PROBE_TABLE.values(), *(p for paths in PROBE_FIGURES.values() for p in paths),
                   *PROBE_RAG_TABLE.values()] if PROBES else [])


def probe_report_outputs():
    """The table and figures; the HTML table and PNG figures go into the Snakemake report."""
    outputs = {fmt: report(path, caption="../report/probes_table.rst", category="Bias probes")
               if fmt == "html" else path for fmt, path in PROBE_TABLE.items()}
    for name, (png, pdf) in PROBE_FIGURES.items():
        outputs[f"{name}_png"] = report(png, caption=f"../report/probes_{name}.rst", category="Bias probes")
        outputs[f"{name}_pdf"] = pdf
    return outputs


if PROBES and "synthetic" in PROBES["redocred"]:

    rule probes_synthetic:
        priority: RUN_EARLY_PRIORITY
        output:
            PROBE_SYNTHETIC,
        params:
            synthetic=canonical(PROBES["redocred"]["synthetic"]),
        threads: 1
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/probes/synthetic.log",
        script:
            "../scripts/probes_synthetic.py"


if PROBES:

    rule probes_build:
        priority: RUN_EARLY_PRIORITY
        input:
            probe_build_inputs(),
        output:
            pairs=[probe_pairs(p) for p in PROBE_NAMES],
            heatmap=probe_pairs("heatmap"),
            query_table="results/probes/pairs/query_table.json",
            replacements=PROBE_REPLACEMENTS,
        params:
            section=canonical({**PROBES, "redocred": probe_redocred_files()}),
            probes=PROBE_NAMES,
            llm=probe_poison_llm(),
            cache=CFG.llm.cache,
        threads: 1
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/probes/build.log",
        script:
            "../scripts/probes_build.py"

    rule probes_score:
        priority: RUN_EARLY_PRIORITY
        input:
            unpack(probe_score_inputs),
        output:
            scores="results/probes/scores/{scorer}.parquet",
            heatmap="results/probes/scores/{scorer}.heatmap.parquet",
        params:
            scorer=lambda wc: CFG.probes.scorer(wc.scorer),
            probes=PROBE_NAMES,
        wildcard_constraints:
            scorer=alternatives(PROBE_SCORERS),
        threads: 1
        benchmark:
            "results/benchmarks/probes/{scorer}.tsv"
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/probes/score/{scorer}.log",
        script:
            "../scripts/probes_score.py"

    rule probes_report:
        localrule: True
        input:
            scores=[f"results/probes/scores/{s}.parquet" for s in PROBE_SCORERS],
            heatmaps=[f"results/probes/scores/{s}.heatmap.parquet" for s in PROBE_SCORERS],
            query_table="results/probes/pairs/query_table.json",
        output:
            **probe_report_outputs(),
        params:
            scorers=PROBE_SCORERS,
            labels={s: CFG.probes.label(s) for s in PROBE_SCORERS},
            correction=PROBES.get("correction"),
            alpha=PROBES.get("alpha"),
            heatmap=canonical(PROBES.get("heatmap", {})),
            tables=PROBE_TABLE,
            figures=PROBE_FIGURES,
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/probes/report.log",
        script:
            "../scripts/probes_report.py"


if PROBE_RAG:

    rule probes_rag:
        input:
            poison=probe_pairs("poison"),
            foil=probe_pairs("foil"),
            replacements=PROBE_REPLACEMENTS,
        output:
            answers="results/probes/rag/answers.parquet",
            **{fmt: report(path, caption="../report/probes_rag.rst", category="Bias probes") if fmt == "html" else path
               for fmt, path in PROBE_RAG_TABLE.items()},
        params:
            settings=canonical(PROBE_RAG),
            readers={name: CFG.llm.model(name) for name in PROBE_RAG["readers"]},
            judge=CFG.llm.model(PROBE_RAG["judge"]),
            cache=CFG.llm.cache,
            labels={name: CFG.llm.label(name) for name in PROBE_RAG["readers"]},
            tables=PROBE_RAG_TABLE,
            correction=PROBES.get("correction"),
            alpha=PROBES.get("alpha"),
        threads: 1
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/probes/rag.log",
        script:
            "../scripts/probes_rag.py"
