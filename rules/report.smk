# Tables (LaTeX with booktabs, CSV and Markdown twins) and figures.


rule table1:
    input:
        averaged=expand("results/eval/{qs}/seed_averaged.parquet", qs=table_querysets("table1")),
    output:
        tex="results/table1.tex",
        csv="results/table1.csv",
        md="results/table1.md",
    params:
        **table_params("table1"),
    conda:
        "../envs/posbias.yaml"
    log:
        "logs/report/table1.log",
    script:
        "../scripts/table1.py"


if "table4" in config["tables"]:

    rule table4:
        input:
            averaged=expand("results/eval/{qs}/seed_averaged.parquet", qs=table_querysets("table4")),
        output:
            tex="results/table4.tex",
            csv="results/table4.csv",
            md="results/table4.md",
        params:
            **table_params("table4"),
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/report/table4.log",
        script:
            "../scripts/table4.py"


    rule farrelevant_figure:
        input:
            per_seed=f"results/eval/{FAR_QUERYSET}/per_seed.parquet",
        output:
            png=FIGURES[0],
            pdf=FIGURES[1],
        params:
            models=config["tables"]["table4"]["models"],
            labels={m: s["label"] for m, s in config["models"].items()},
            metric=config["tables"]["table4"]["columns"][0]["metric"],
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/report/farrelevant_figure.log",
        script:
            "../scripts/farrelevant_figure.py"


if "first_stage" in config["tables"]:

    rule first_stage_table:
        input:
            values=expand("results/eval-first-stage/{r}/{qs}/top{depth}.parquet",
                          r=config["tables"]["first_stage"]["retrievers"],
                          qs=config["tables"]["first_stage"]["querysets"],
                          depth=config["tables"]["first_stage"]["depth"]),
        output:
            tex="results/first_stage.tex",
            csv="results/first_stage.csv",
            md="results/first_stage.md",
        params:
            spec=config["tables"]["first_stage"],
            querysets={q: {"alpha": s["alpha"]} for q, s in QUERYSETS.items()},
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/report/first_stage_table.log",
        script:
            "../scripts/first_stage_table.py"
