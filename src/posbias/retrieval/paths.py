"""Where the retrieval stage's files go (rules/retrieval.smk and `posbias index`, `dense-index`, `retrieve`, `hybrid`,
`import-run`): Lucene and FAISS indexes, dense vectors, and each query set's candidates. The functions fill a
template's wildcards; the templates are what the rules match."""


def lucene_index(collection: str) -> str:
    return f"results/index/{collection}/lucene"


def dense_vectors(collection: str, retriever: str) -> str:
    return f"results/vectors/{collection}/{retriever}"


def dense_index(collection: str, retriever: str) -> str:
    return f"results/index/{collection}/dense/{retriever}"


def candidates(retriever: str, queryset: str, depth: int | str) -> str:
    """A query set's first-stage candidates (a TREC run) of one retriever at one depth."""
    return f"results/candidates/{retriever}/{queryset}/top{depth}.run"
