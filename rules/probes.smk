# Bias probes (Fayyaz et al. 2025, "Collapse of Dense Retrievers"): pairs of Re-DocRED documents that differ in one
# property (the evidence first or last, short or long, the head's name literal or not, repeated or not, the answer
# present or not, a foil against the evidence). One job builds every probe's pairs; one job per scorer (a dense
# encoder, BM25, or a trained ranker's checkpoint) scores them all, so a model loads once; one job runs the paired
# tests, corrected together, and draws the table and figures. The data and scoring jobs go first
# (RUN_EARLY_PRIORITY, rules/common.smk): left to the greedy scheduler they ran last, two scorers alone for a minute.

include: "inputs/probes.smk"


if PROBES and "synthetic" in PROBES["redocred"]:

    rule probes_synthetic:
        """`results/probes/data/synthetic_revised.json` (the demo's Re-DocRED)

        By hand: `posbias probes build`"""
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
        """`results/probes/pairs/{probe}.jsonl`, `heatmap.jsonl`, `query_table.json`

        By hand: `posbias probes build`"""
        priority: RUN_EARLY_PRIORITY
        input:
            probe_build_inputs(),
        output:
            pairs=[probe_pairs(p) for p in PROBE_NAMES],
            heatmap=probe_pairs("heatmap"),
            query_table=probe_paths.QUERY_TABLE,
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
        """`results/probes/scores/{scorer}.parquet`, `{scorer}.heatmap.parquet` (one job per scorer)

        By hand: `posbias probes score`"""
        priority: RUN_EARLY_PRIORITY
        input:
            unpack(probe_score_inputs),
        output:
            scores=probe_paths.scores("{scorer}"),
            heatmap=probe_paths.heatmap_scores("{scorer}"),
        params:
            scorer=lambda wc: CFG.probes.scorer(wc.scorer),
            probes=PROBE_NAMES,
        wildcard_constraints:
            scorer=alternatives(PROBE_SCORERS),
        threads: 1
        resources:
            gpu=GPU_JOB,
        benchmark:
            probe_paths.benchmark("{scorer}")
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/probes/score/{scorer}.log",
        script:
            "../scripts/probes_score.py"

    rule probes_report:
        """`results/[{experiment}/]probes/probes.{tex,csv,md,html}`, `sensitivity.*` (the position sweep's PSI, drops
        and reach per scorer), `figures/{sweep,heatmap,summary}.{png,pdf}`

        By hand: `posbias probes report`"""
        localrule: True
        input:
            scores=[probe_paths.scores(s) for s in PROBE_SCORERS],
            heatmaps=[probe_paths.heatmap_scores(s) for s in PROBE_SCORERS],
            query_table=probe_paths.QUERY_TABLE,
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
            sensitivity=PROBE_SENSITIVITY,
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/probes/report.log",
        script:
            "../scripts/probes_report.py"


if PROBE_RAG:

    rule probes_rag:
        """`results/probes/rag/answers.parquet`, `judge_consistency.{parquet,json}` (the judge's swap check),
        `results/[{experiment}/]probes/rag.{tex,csv,md,html}` (`probes.rag`)

        By hand: `posbias probes rag`"""
        input:
            poison=probe_pairs("poison"),
            foil=probe_pairs("foil"),
            replacements=PROBE_REPLACEMENTS,
        output:
            answers=probe_paths.RAG_ANSWERS,
            judge_pairs=probe_paths.JUDGE_PAIRS,
            judge_summary=probe_paths.JUDGE_SUMMARY,
            **{fmt: report(path, caption="../report/probes_rag.rst", category="Bias probes") if fmt == "html" else path
               for fmt, path in PROBE_RAG_TABLE.items()},
        params:
            settings=canonical(PROBE_RAG),
            readers={name: CFG.llm.model(name) for name in PROBE_RAG["readers"]},
            judge=CFG.llm.model(PROBE_RAG["judge"]),
            cache=CFG.llm.cache,
            labels={name: CFG.llm.label(name) for name in PROBE_RAG["readers"]},
            judge_label=CFG.llm.label(PROBE_RAG["judge"]),
            tables=PROBE_RAG_TABLE,
            correction=PROBES.get("correction"),
            alpha=PROBES.get("alpha"),
        threads: 1
        resources:
            gpu=gpu_for_language_models(*(CFG.llm.model(name) for name in [*PROBE_RAG["readers"], PROBE_RAG["judge"]])),
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/probes/rag.log",
        script:
            "../scripts/probes_rag.py"
