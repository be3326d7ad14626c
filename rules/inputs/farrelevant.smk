# The names, paths and input functions of rules/farrelevant.smk (Snakemake's lint keeps functions out of a file
# with rules).

def farrelevant_source_inputs():
    """A local import's files, so that replacing one rebuilds; ir_datasets reads (and downloads) in the job."""
    source = CFG.farrelevant.source
    if source["kind"] != "local":
        return {}
    documents = source["documents"] if isinstance(source["documents"], list) else [source["documents"]]
    sets = [source[s] for s in ("test", "train") if s in source]
    return {"documents": documents, "positions": source["positions"],
            "queries": [s["queries"] for s in sets], "qrels": [s["qrels"] for s in sets]}
