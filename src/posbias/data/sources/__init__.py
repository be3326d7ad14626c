"""Where collections come from. Every source writes the same standard files
(documents JSONL, queries TSV, TREC qrels; see `posbias.io`):

- `irds`: any ir_datasets id (MS MARCO documents v1/v2, TREC DL, Robust04 and its folds, MS MARCO passages, BEIR);
- `hf`: Hugging Face `datasets` in the corpus/queries/qrels layout (LongEmbed needle and passkey);
- `local`: a user's own files (optionally compressed), with an optional run and doc2query expansions.

`SourceError` is raised for input that cannot be read; its message names the
dataset or file, and the record or line, that failed. It is an `InputError`.
"""

from posbias.errors import InputError


class SourceError(InputError):
    """A collection source could not be read; the message says which file or dataset, and where."""
