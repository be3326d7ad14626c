# Where the first relevant passage sits (the long-document study's appendix B.4, Figures 1 and 7): one job per
# query set (sparse labels: relevant passages matched to the relevant documents and to each passage's BM25 top-k;
# dense labels: the positive documents' chunks judged by a language model, every answer in the response cache, and a
# sample judged again with its sentences reversed: the judges' own position consistency), then one report job: the
# table of shares, the judges' consistency table, Figures 7 and 1, and on the embedded collection the agreement of
# the estimates with the generator's known answer offsets.

include: "inputs/positions.smk"


if POSITIONS:

    rule positions_sparse:
        """`results/positions/{set}.tsv`, `{set}.json` (approximate passage matching; one job per set)

        By hand: `posbias positions locate`"""
        input:
            unpack(position_set_inputs),
        output:
            rows=position_paths.rows("{pset}"),
            summary=position_paths.summary("{pset}"),
        params:
            spec=lambda wc: CFG.positions.set_args(wc.pset)["spec"],
            settings=lambda wc: CFG.positions.set_args(wc.pset)["settings"],
            retriever=lambda wc: CFG.positions.set_args(wc.pset)["retriever"],
        wildcard_constraints:
            pset=alternatives(SPARSE_SETS),
        threads: 1
        benchmark:
            position_paths.benchmark("{pset}")
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/positions/{pset}.log",
        script:
            "../scripts/positions_sparse.py"

    rule positions_dense:
        """the same, `{set}.judgments.parquet` (a language model judging chunks) and `{set}.consistency.parquet` (the
        judges' order check)

        By hand: `posbias positions locate`"""
        input:
            unpack(position_set_inputs),
        output:
            rows=position_paths.rows("{pset}"),
            summary=position_paths.summary("{pset}"),
            judgments=position_paths.judgments("{pset}"),
            consistency=position_paths.consistency("{pset}"),
        params:
            spec=lambda wc: CFG.positions.set_args(wc.pset)["spec"],
            settings=lambda wc: CFG.positions.set_args(wc.pset)["settings"],
            judge=lambda wc: CFG.positions.set_args(wc.pset)["judge"],
            judge_name=lambda wc: CFG.positions.set_args(wc.pset)["judge_name"],
            cache=lambda wc: CFG.positions.set_args(wc.pset)["cache"],
            order_judges=lambda wc: CFG.positions.set_args(wc.pset)["order_judges"],
        wildcard_constraints:
            pset=alternatives(DENSE_SETS),
        threads: 1
        resources:
            gpu=lambda wc: gpu_for_language_models(  # the judge and the judges of the order check
                CFG.positions.set_args(wc.pset)["judge"], *CFG.positions.set_args(wc.pset)["order_judges"].values()),
        benchmark:
            position_paths.benchmark("{pset}")
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/positions/{pset}.log",
        script:
            "../scripts/positions_dense.py"

    rule positions_report:
        """`results/[{experiment}/]positions/positions.{tex,csv,md,html}`, `judges.{tex,csv,md,html}` (the judges'
        consistency), `agreement.csv`, `figures/figure{1,7}.{png,pdf}`

        By hand: `posbias positions report`"""
        localrule: True
        input:
            rows=[position_paths.rows(s) for s in POSITION_SETS],
            summaries=[position_paths.summary(s) for s in POSITION_SETS],
            truth=list(position_truth().values()),
        output:
            **position_report_outputs(),
        params:
            **CFG.positions.report_args(),
            truth_sets=list(position_truth()),
            tables=POSITION_TABLE,
            figures=POSITION_FIGURES,
            judge_tables=POSITION_JUDGES,
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/positions/report.log",
        script:
            "../scripts/positions_report.py"
