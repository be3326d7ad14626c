# The position-sensitivity audit (posbias.audit): one job per audited model and battery (a model loads once per
# job; the batteries of one model run in parallel), a trained model exported as a Hugging Face cross-encoder where
# the config audits it so, and one local job for the cards and the leaderboard. A language model answers through
# the config's response cache (llm.cache), as in every other stage.

include: "inputs/audit.smk"


if AUDIT_EXPORTS:

    rule audit_export:
        """`results/audit/exported/{model}/seed{seed}/` (a trained FirstP as a Hugging Face cross-encoder)

        By hand: `posbias export-hf`"""
        input:
            checkpoint=training_paths.checkpoint("{model}", "{seed}"),
        output:
            directory(f"{EXPORTED}/{{model}}/seed{{seed}}"),
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/audit/export/{model}/seed{seed}.log",
        script:
            "../scripts/audit_export.py"


# A bi-encoder fine-tuned on position-balanced examples (posbias.audit.balanced_finetuning), the twin an entry
# mitigated by position_balanced_finetuning audits; its directory is that job's input.
if AUDIT_FINETUNED:

    rule audit_finetune:
        """`results/audit/finetuned/{name}/` (the base bi-encoder fine-tuned with the answer balanced over the
        start, middle and end of documents, on questions disjoint from the audit's)

        By hand: `posbias audit-finetune --config --name --out`"""
        output:
            directory(f"{AUDIT_OUT}/finetuned/{{name}}"),
        params:
            job=lambda wc: CFG.audit.finetune_job(wc.name),
        wildcard_constraints:
            name=alternatives(AUDIT_FINETUNED),
        threads: 2
        resources:
            gpu=lambda wc: CFG.audit.gpu(wc.name),
        priority: RUN_EARLY_PRIORITY  # before the audit job that reads it
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/audit/finetune/{name}.log",
        script:
            "../scripts/audit_finetune.py"


# The audit's real corpus (posbias.audit.corpus): NQ-open questions and Wikipedia passages from the file shipped
# with the package, as the files a battery's `source` reads. Built only where a source names them.
rule audit_corpus:
    """`results/corpora/nq/{queries.tsv,qrels.txt,passages.jsonl,qa.jsonl.gz}` (the real corpus shipped with the
    package, as the batteries' source files; built where a source names them)

    By hand: `posbias audit-corpus`"""
    output:
        **{name.split(".")[0]: f"{AUDIT_CORPUS}/{name}" for name in AUDIT_CORPUS_FILES},
    priority: RUN_EARLY_PRIORITY  # before the early audit jobs that read it
    conda:
        "../envs/posbias.yaml"
    log:
        "logs/audit/corpus.log",
    script:
        "../scripts/audit_corpus.py"


if AUDIT_JOBS:

    rule audit_battery:
        """`results/audit/{name}/{battery}.{parquet,curve.csv,json}` (one job per audited model and battery)

        By hand: `posbias audit --config --name --battery --no-report`"""
        input:
            lambda wc: CFG.audit.inputs(wc.name) + CFG.audit.finetuned_inputs(wc.name),
        output:
            **audit_battery_outputs(),
        params:
            job=lambda wc: CFG.audit.job(wc.name),
        wildcard_constraints:
            name=alternatives(CFG.audit.models),
            battery="sweep|probes|grid|reader|reader_grid|order|judge",
        threads: 1
        # A local language model that decodes (SmolLM2 as a reader) shares the decoders' resource with Lost in the
        # Middle's predictions (rules/litm.smk): one at a time. The jobs need only their model (and a trained
        # checkpoint): they go early, beside the rankers, not alone at the end.
        resources:
            local_decoder=lambda wc: CFG.audit.local_decoder(wc.name),
            gpu=lambda wc: CFG.audit.gpu(wc.name),
        priority: RUN_EARLY_PRIORITY
        benchmark:
            f"{AUDIT_OUT}/benchmarks/{{name}}/{{battery}}.tsv"
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/audit/{name}/{battery}.log",
        script:
            "../scripts/audit_battery.py"

    rule audit_report:
        """`results/audit/{name}/card.html` and `results/audit/leaderboard.{tex,csv,md,html}`

        By hand: `posbias audit --report-only`"""
        localrule: True
        input:
            audit_battery_results(),
        output:
            cards=[report(card, caption="../report/audit_card.rst", category="Audit") for card in AUDIT_CARDS],
            **{fmt: report(path, caption="../report/audit_leaderboard.rst", category="Audit")
               if fmt == "html" else path for fmt, path in AUDIT_LEADERBOARD.items()},
            grids=[report(path, caption="../report/audit_grid.rst", category="Audit") if path.endswith(".png")
                   else path for path in AUDIT_GRIDS],
            **{f"mitigations_{fmt}": report(path, caption="../report/audit_mitigations.rst", category="Audit")
               if fmt == "html" else path for fmt, path in AUDIT_MITIGATIONS.items()},
        params:
            jobs=AUDIT_JOBS,  # the configured batteries only: one a model no longer runs leaves its files behind
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/audit/report.log",
        script:
            "../scripts/audit_report.py"
