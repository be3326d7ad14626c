# The names, paths and input functions of rules/data.smk (Snakemake's lint keeps functions out of a file
# with rules).

def docs_of(collection):
    """The documents the rankers read: truncated when the collection asks for it, de-biased for a de-biased copy
    (which the token store then caps at the rankers' budget)."""
    if collection in DEBIASED:
        return data_paths.docs(collection)
    if collection in COLLECTIONS and "truncate" in COLLECTIONS[collection]:
        return data_paths.truncated_docs(collection)
    return source_docs_of(collection)
