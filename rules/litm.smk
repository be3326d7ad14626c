# Lost in the Middle (Liu et al., TACL 2024): reader accuracy as the answer-bearing document (QA) or the asked-for
# key (key-value retrieval) moves through the context. One job builds each task's data files; one job per (task,
# language model) asks every prompt of the task, so a local model is loaded once, and every answer goes through the
# response cache (llm.cache): rerunning after a change replays what was already asked. Scoring and the tables and
# figures read only the prediction files, in the authors' layout.

include: "inputs/litm.smk"


if "qa" in LITM_TASKS and LITM["qa"]["source"]["kind"] == "synthetic":

    rule litm_synthetic_qa:
        """`results/litm/data/qa/synthetic-retrieval.jsonl.gz` (Lost in the Middle's demo questions)

        By hand: `posbias litm build --task`"""
        priority: RUN_EARLY_PRIORITY
        output:
            litm_paths.SYNTHETIC_RETRIEVAL,
        params:
            generator=canonical(CFG.data["generator"]),
            n_questions=LITM["qa"]["source"]["n_questions"],
        threads: 1
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/litm/synthetic_qa.log",
        script:
            "../scripts/litm_synthetic_qa.py"


if "qa" in LITM_TASKS:

    rule litm_build_qa:
        """`results/litm/data/qa/{setting}.jsonl.gz` (`k5_gold_at_2`, `oracle`, ...)

        By hand: `posbias litm build --task`"""
        priority: RUN_EARLY_PRIORITY
        input:
            unpack(litm_qa_source),
        output:
            list(litm_data("qa").values()),
        params:
            section=canonical(LITM["qa"]),
            names=list(litm_data("qa")),
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/litm/build_qa.log",
        script:
            "../scripts/litm_build.py"


if "kv" in LITM_TASKS:

    rule litm_build_kv:
        """`results/litm/data/kv/{setting}.jsonl.gz` (`n8_gold_at_3`, ...)

        By hand: `posbias litm build --task`"""
        priority: RUN_EARLY_PRIORITY
        output:
            list(litm_data("kv").values()),
        params:
            section=canonical(LITM["kv"]),
            names=list(litm_data("kv")),
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/litm/build_kv.log",
        script:
            "../scripts/litm_build.py"


for _task in LITM_TASKS:

    rule:
        """`results/litm/predictions/{task}/{model}/{variant}/{setting}.jsonl.gz` (one job per model; task `qa` or
        `kv`)

        By hand: `posbias litm run`"""
        name:
            f"litm_predict_{_task}"
        input:
            list(litm_data(_task).values()),
        output:
            [litm_prediction(_task, "{model}", key) for key in litm_prediction_keys(_task)],
        params:
            task=_task,
            section=canonical(LITM[_task]),
            data=litm_data(_task),
            prediction_keys=litm_prediction_keys(_task),
            llm=lambda wc: CFG.llm.model(wc.model),
            cache=CFG.llm.cache,
            decoding=canonical(LITM["decoding"]),
        wildcard_constraints:
            model=alternatives(LITM_MODELS),
        threads: 1
        # A local decoder generating one token at a time reads all its weights per token, so two of them side by
        # side share the memory bandwidth (the demo's two SmolLM2 jobs: 454 s together, 329 s apart);
        # profiles/default caps this resource at 1. Models behind an API take none.
        resources:
            local_decoder=lambda wc: int(CFG.llm.model(wc.model)["backend"] in LOCAL_BACKENDS),
            gpu=lambda wc: gpu_for_language_models(CFG.llm.model(wc.model)),
        priority: RUN_EARLY_PRIORITY
        benchmark:
            litm_paths.benchmark(_task, "{model}")
        conda:
            "../envs/posbias.yaml"
        log:
            f"logs/litm/predict_{_task}/{{model}}.log",
        script:
            "../scripts/litm_predict.py"

    rule:
        """`results/litm/eval/{task}.parquet`

        By hand: `posbias litm evaluate`"""
        name:
            f"litm_score_{_task}"
        localrule: True
        input:
            [litm_prediction(_task, m, key) for m in LITM_MODELS for key in litm_prediction_keys(_task)],
        output:
            litm_paths.evaluation(_task),
        params:
            **CFG.litm.score_params(_task),
        conda:
            "../envs/posbias.yaml"
        log:
            f"logs/litm/score_{_task}.log",
        script:
            "../scripts/litm_score.py"


if LITM_TASKS:

    rule litm_report:
        """`results/[{experiment}/]litm/*.{tex,csv,md,html}` (each size's table, and `sensitivity.*`: every curve's
        PSI, drops and reach) and `figures/`

        By hand: `posbias litm report`"""
        localrule: True
        input:
            [litm_paths.evaluation(task) for task in LITM_TASKS],
        output:
            litm_report_outputs(),
        params:
            **LITM_REPORT,
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/litm/report.log",
        script:
            "../scripts/litm_report.py"
