# FarRelevant from a real source (farrelevant.source): built from a passage collection through ir_datasets (the
# study's MS MARCO FarRelevant, shared/specs/longdoc.md section 4) or imported as the authors published it. It
# writes what rules/data.smk's build_farrelevant writes for the embedded collection (source kind synthetic).

include: "inputs/farrelevant.smk"


if "farrelevant" in config and CFG.farrelevant.source["kind"] != "synthetic":

    rule build_farrelevant_source:
        """`results/data/farrelevant/{docs.jsonl, queries/, qrels/, positions/}` from MS MARCO passages
        (`farrelevant.source`, the paper config)

        By hand: `posbias farrelevant-source`"""
        input:
            **farrelevant_source_inputs(),
        output:
            queries=expand(data_paths.queries("farrelevant", "{qs}"), qs=FAR_QUERYSETS),
            qrels=expand(data_paths.qrels("farrelevant", "{qs}"), qs=FAR_QUERYSETS),
            positions=expand(data_paths.positions("farrelevant", "{qs}"), qs=FAR_QUERYSETS),
            docs=data_paths.docs("farrelevant"),
        params:
            **CFG.farrelevant.build_params(),
        conda:
            "../envs/posbias.yaml"
        log:
            "logs/data/build_farrelevant_source.log",
        script:
            "../scripts/build_farrelevant_source.py"
