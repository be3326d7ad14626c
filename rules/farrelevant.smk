# The FarRelevant stage (posbias.farrelevant): the diagnostic set built from the embedded generator's passage
# collection (source kind synthetic), or from a real source (farrelevant.source): built from a passage collection
# through ir_datasets (the study's MS MARCO FarRelevant, shared/specs/longdoc.md section 4) or imported as the
# authors published it. Both write the same files.

include: "inputs/farrelevant.smk"


if "generator" in config and "farrelevant" in config and CFG.farrelevant.source["kind"] == "synthetic":

    rule build_farrelevant:
        """`results/data/farrelevant/` from the passage collection (the embedded FarRelevant)

        By hand: `posbias farrelevant`"""
        input:
            passages=data_paths.docs(data_paths.PASSAGE_COLLECTION),
            queries=data_paths.queries(data_paths.PASSAGE_COLLECTION, data_paths.PASSAGE_QUERYSET),
            qrels=data_paths.qrels(data_paths.PASSAGE_COLLECTION, data_paths.PASSAGE_QUERYSET),
            negatives=data_paths.passage_negatives(),
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
            "logs/data/build_farrelevant.log",
        script:
            "../scripts/build_farrelevant.py"


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
