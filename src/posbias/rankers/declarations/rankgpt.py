"""RankGPT (`posbias.rankers.rankgpt`): listwise permutations from a language model, never trained. Its
arguments are the settings of `RankGPTSettings` and the language model (`llm`); the config loader fills in
their defaults, because the pipeline reads them from the config."""

from __future__ import annotations

from posbias.rankers.declaration import Argument, Chunking, RankerDeclaration

POSITIVE_OR_NULL = {"type": ["integer", "null"], "minimum": 1}


def _setting(name: str, schema: dict, description: str = "", default=None, pretrained: bool = False) -> Argument:
    return Argument(name, schema, description, default, schema_default=True, pretrained=pretrained)


RANKERS = (RankerDeclaration("rankgpt", "listwise language model", Chunking.LISTWISE, (
    Argument("llm", {"type": "string"}, "a key of llm.models"),
    _setting("window", {"type": "integer", "minimum": 2}, default=20),
    _setting("step", {"type": "integer", "minimum": 1}, default=10),
    _setting("rank_end", {"type": "integer", "minimum": 1},
             "rerank the first-stage top rank_end; the rest keep their order below", default=100),
    _setting("max_words", POSITIVE_OR_NULL,
             "cut each passage to its first N words; null follows the paper's text (no truncation), 300 the "
             "authors' code"),
    _setting("first_tokens", POSITIVE_OR_NULL,
             "the FirstP variant: each document cut to its longest sentence prefix within this many tokens of "
             "first_tokenizer (the study: 512 bert-base-uncased tokens); null reads whole documents (LongP)"),
    _setting("first_tokenizer", {"type": ["string", "null"]}, pretrained=True),
    # no schema default: null means enough tokens for `window` ids (`RankGPTSettings`)
    Argument("max_new_tokens", {"type": "integer", "minimum": 1},
             "the permutation's token budget (default: enough for `window` ids)", default=None),
), "posbias.rankers.rankgpt:RankGPTSettings"),)
