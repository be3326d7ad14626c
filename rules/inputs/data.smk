# The names, paths and input functions of rules/data.smk (Snakemake's lint keeps functions out of a file
# with rules).

def docs_of(collection):
    """The documents the rankers read: truncated when the collection asks for it, de-biased for a de-biased copy
    (which the token store then caps at the rankers' budget)."""
    if collection in DEBIASED:
        return f"results/data/{collection}/docs.jsonl"
    if collection in COLLECTIONS and "truncate" in COLLECTIONS[collection]:
        return f"results/data/{collection}/docs.truncated.jsonl"
    return source_docs_of(collection)
