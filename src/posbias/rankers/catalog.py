"""The rankers of the long-document study, by registry name: views of their declarations
(`posbias.rankers.declarations`) for the config checks, the config schema and the docs.

This module imports nothing heavy, so the workflow can sort configured models and check each model's
arguments when it builds the graph, without loading torch.
"""

from __future__ import annotations

import json

from posbias.rankers.declaration import Chunking, RankerDeclaration
from posbias.rankers.declarations import DECLARATIONS
from posbias.rankers.declarations.base import CHUNK_ARGUMENTS as _CHUNK_ARGUMENTS
from posbias.rankers.declarations.base import PIPELINE_ARGUMENTS

BY_NAME: dict[str, RankerDeclaration] = {declaration.name: declaration for declaration in DECLARATIONS}

# Rankers that order a whole candidate list through the language-model layer (`posbias.llm`) instead of scoring
# with a torch module: never trained, their `args` name a language model and a sliding window
# (`posbias.rankers.rankgpt`).
LISTWISE = frozenset(name for name, declaration in BY_NAME.items() if declaration.listwise)
IMPLEMENTED = frozenset(BY_NAME) - LISTWISE  # the torch rankers (`posbias.rankers.registry`)
ALL = frozenset(BY_NAME)  # every ranker of the study (the schema's enum)

# The constructor arguments (`models.<name>.args`) every chunked cross-encoder takes; `arguments(ranker)` adds
# the ranker's own.
CHUNK_ARGUMENTS = frozenset(argument.name for argument in _CHUNK_ARGUMENTS)


def _chunking(kind: Chunking) -> frozenset[str]:
    return frozenset(name for name, declaration in BY_NAME.items() if declaration.chunking is kind)


# Rankers over greedy disjoint chunks, which refuse overlapping windows (stride must equal chunk_tokens):
# their heads read every document token once (`posbias.rankers.interaction`).
DISJOINT_CHUNKS = _chunking(Chunking.DISJOINT_CHUNKS)

# Rankers that read the document in one sequence (chunk_tokens = stride = max_doc_tokens); the FirstP twin of
# such a model (the same ranker at 477 tokens) may be a baseline.
ONE_SEQUENCE = _chunking(Chunking.ONE_SEQUENCE)


def arguments(ranker: str) -> frozenset[str]:
    """The constructor arguments of an implemented ranker."""
    return BY_NAME[ranker].argument_names


def _properties(declarations) -> dict[str, dict]:
    """The schema's `properties` of the arguments of `declarations`; an argument several rankers take must be
    declared alike by each (one schema entry stands for all), defaults aside."""
    properties: dict[str, dict] = {}
    for declaration in declarations:
        for argument in declaration.arguments:
            entry = properties.setdefault(argument.name, argument.json_schema())
            if entry != argument.json_schema():
                raise ValueError(f"ranker {declaration.name}: argument {argument.name!r} is declared unlike "
                                 f"another ranker's: {argument.json_schema()} != {entry}")
    return properties


def with_rankers(schema: dict) -> dict:
    """`schema` (the parsed config schema) with what the declarations say in place: the `ranker` enum,
    `$defs/ranker_args` (every torch ranker's arguments and the pipeline's; `posbias.config` checks which
    ranker takes which) and `$defs/<name>_args` of each listwise ranker."""
    models = schema["properties"]["models"]["additionalProperties"]["properties"]
    models["ranker"]["enum"] = list(BY_NAME)
    torch_rankers = [BY_NAME[name] for name in BY_NAME if name in IMPLEMENTED]
    ranker_args = schema["$defs"]["ranker_args"]
    ranker_args["required"] = [a.name for a in _CHUNK_ARGUMENTS
                               if all(a.name in d.argument_names and a.required for d in torch_rankers)]
    ranker_args["properties"] = {**_properties(torch_rankers),
                                 **{a.name: a.json_schema() for a in PIPELINE_ARGUMENTS}}
    for name in sorted(LISTWISE):
        declaration = BY_NAME[name]
        listwise_args = schema["$defs"][f"{name}_args"]
        listwise_args["required"] = [a.name for a in declaration.arguments if a.required]
        listwise_args["properties"] = _properties([declaration])
    return schema


def markdown_table() -> str:
    """The rankers' table of the docs: name, family, chunking, and each argument of the ranker's own with its
    default and description (the chunked cross-encoders' shared arguments get a table of their own:
    `markdown_chunk_arguments`)."""
    lines = ["| ranker | family | chunking | its own arguments |", "| --- | --- | --- | --- |"]
    for declaration in DECLARATIONS:
        own = [a for a in declaration.arguments if a not in _CHUNK_ARGUMENTS]
        cells = "<br>".join(_argument_cell(a) for a in own) or "-"
        lines.append(f"| `{declaration.name}` | {declaration.family} | {declaration.chunking.value} | {cells} |")
    return "\n".join(lines) + "\n"


def markdown_chunk_arguments() -> str:
    """The arguments every torch ranker takes (`ChunkRanker`) and the pipeline's, as a Markdown table."""
    lines = ["| argument | default | description |", "| --- | --- | --- |"]
    for argument in (*_CHUNK_ARGUMENTS, *PIPELINE_ARGUMENTS):
        lines.append(f"| `{argument.name}` | {_default(argument)} | {_escape(argument.description)} |")
    return "\n".join(lines) + "\n"


def _default(argument) -> str:
    return "required" if argument.required else f"`{json.dumps(argument.default)}`"  # as the config writes it


def _argument_cell(argument) -> str:
    text = f"`{argument.name}` ({_default(argument)})"
    return f"{text}: {_escape(argument.description)}" if argument.description else text


def _escape(text: str) -> str:
    return text.replace("|", "\\|")
