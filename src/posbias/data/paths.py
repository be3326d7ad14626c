"""Where the data stage's files go (rules/data.smk and `posbias generate`, `fetch`, `truncate`, `tokenize`): each
collection's documents, query sets, judgments, folds and positions under `results/data/<collection>/`, and its token
stores under `results/tokens/`. The functions fill a template's wildcards; the templates are what the rules match."""

DATA = "results/data"
SYNTHETIC = f"{DATA}/synthetic"  # the embedded collection (train, dev, test)
PASSAGE_COLLECTION = "synthetic-passages"  # the generator's passage collection FarRelevant is built from
PASSAGE_QUERYSET = "farrelevant"  # its queries and judgments
SYNTHETIC_PASSAGES = f"{DATA}/{PASSAGE_COLLECTION}"
ANSWER_PASSAGES = f"{SYNTHETIC}/passages"  # the embedded generator's answering passages and their true offsets


def passage_negatives() -> str:
    """The generator's hard negatives, which join FarRelevant's corpus unjudged."""
    return f"{SYNTHETIC_PASSAGES}/negatives.jsonl"


def answer_passages_docs() -> str:
    """The embedded generator's answering passages (their qrels and positions: `qrels` and `positions` of the
    collection `synthetic/passages`)."""
    return f"{ANSWER_PASSAGES}/docs.jsonl"


def docs(collection: str) -> str:
    """A collection's documents as the rankers read them (JSONL)."""
    return f"{DATA}/{collection}/docs.jsonl"


def source_docs(collection: str) -> str:
    """A read collection's documents as its source gives them (before truncation)."""
    return f"{DATA}/{collection}/source/docs.jsonl"


def truncated_docs(collection: str) -> str:
    return f"{DATA}/{collection}/docs.truncated.jsonl"


def queries(collection: str, queryset: str) -> str:
    return f"{DATA}/{collection}/queries/{queryset}.tsv"


def qrels(collection: str, queryset: str) -> str:
    return f"{DATA}/{collection}/qrels/{queryset}.txt"


def positions(collection: str, queryset: str) -> str:
    """Where each query's relevant passage starts in its relevant document (generated collections)."""
    return f"{DATA}/{collection}/positions/{queryset}.tsv"


def folds(collection: str, queryset: str) -> str:
    """A cross-validated query set's folds (qid<TAB>fold)."""
    return f"{DATA}/{collection}/folds/{queryset}.tsv"


def tokens(collection: str, tokenizer: str) -> str:
    """A collection's token store for one tokenizer (`tokenizer`: its path key, `models.tokenizer_key`)."""
    return f"results/tokens/{collection}/{tokenizer}"
