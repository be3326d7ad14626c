# Where the first relevant passage sits (the long-document study's appendix B.4, Figures 1 and 7): one job per
# query set (sparse labels: relevant passages matched to the relevant documents and to each passage's BM25 top-k;
# dense labels: the positive documents' chunks judged by a language model, every answer in the response cache),
# then one report job: the table of shares, Figures 7 and 1, and on the embedded collection the agreement of the
# estimates with the generator's known answer offsets.

if POSITIONS:

    rule positions_sparse:
        input:
            unpack(position_set_inputs),
        output:
            rows="results/positions/{pset}.tsv",
            summary="results/positions/{pset}.json",
        params:
            spec=lambda wc: canonical(POSITION_SETS[wc.pset]),
            settings=canonical({k: POSITIONS[k] for k in ("tokenizer", "bin_tokens", "matching")}),
            retriever=canonical({k: RETRIEVERS[POSITIONS["matching"]["retriever"]].get(k) for k in ("k1", "b")}
                                if POSITIONS["matching"]["bm25_depth"] else None),
        wildcard_constraints:
            pset=alternatives(SPARSE_SETS),
        threads: 1
        benchmark:
            "results/benchmarks/positions/{pset}.tsv"
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/positions/{pset}.log",
        script:
            "../scripts/positions_sparse.py"

    rule positions_dense:
        input:
            unpack(position_set_inputs),
        output:
            rows="results/positions/{pset}.tsv",
            summary="results/positions/{pset}.json",
            judgments="results/positions/{pset}.judgments.parquet",
        params:
            spec=lambda wc: canonical(POSITION_SETS[wc.pset]),
            settings=canonical({k: POSITIONS[k] for k in ("tokenizer", "bin_tokens", "dense")}),
            judge=lambda wc: CFG.llm.model(position_judge(wc.pset)),
            judge_name=lambda wc: position_judge(wc.pset),
            cache=CFG.llm.cache,
        wildcard_constraints:
            pset=alternatives(DENSE_SETS),
        threads: 1
        benchmark:
            "results/benchmarks/positions/{pset}.tsv"
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/positions/{pset}.log",
        script:
            "../scripts/positions_dense.py"

    rule positions_report:
        localrule: True
        input:
            rows=[f"results/positions/{s}.tsv" for s in POSITION_SETS],
            summaries=[f"results/positions/{s}.json" for s in POSITION_SETS],
            truth=list(position_truth().values()),
        output:
            **position_report_outputs(),
        params:
            sets=list(POSITION_SETS),
            truth_sets=list(position_truth()),
            settings=canonical({k: POSITIONS[k] for k in ("tokenizer", "bin_tokens", "max_bin", "dense")}),
            labels={s: spec.get("label", s) for s, spec in POSITION_SETS.items()},
            groups=canonical(POSITIONS["groups"]),
            group_order=list(POSITIONS["groups"]),
            figure1=position_figure1(),
            tables=POSITION_TABLE,
            figures=POSITION_FIGURES,
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/positions/report.log",
        script:
            "../scripts/positions_report.py"
