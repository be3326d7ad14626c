# The names, paths and input functions of rules/retrieval.smk (Snakemake's lint keeps functions out of a file
# with rules).

def expansions_input(wildcards):
    """The doc2query file as an input once it exists; until then the index job stops with a clear error,
    and the graph (a dry run) still builds."""
    path = COLLECTIONS.get(wildcards.collection, {}).get("expansions")
    return {"expansions": path} if path and Path(path).exists() else {}
