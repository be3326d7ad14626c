"""What a ranker declares about itself: its name, its arguments, how it reads a document, and its class.

A declaration is plain data and imports nothing heavy: the workflow reads the declarations when it builds its
graph (config checks, the schema's `ranker` enum and `$defs/ranker_args`), without loading torch. Only
`load_class` imports the ranker's module, when a ranker is built (`posbias.rankers.registry`).
The declarations themselves are in `posbias.rankers.declarations`, one module per family of rankers, found by
their files.

The rule for a family's class: it must not be imported when its declaration is. Either it lives in a module of its
own (`cls="posbias.rankers.chunked:MaxP"`), or it sits in the declaration's module itself and is built on first
access by the module's `__getattr__` (PEP 562), which imports torch only then: `cls=f"{__name__}:MinP"` and

    def __getattr__(name):
        if name != "MinP":
            raise AttributeError(name)
        from posbias.rankers.base import ChunkRanker  # torch, from here on
        ...

That keeps a new family to one file (docs/extending.md shows one).
"""

from __future__ import annotations

import enum
from dataclasses import dataclass, replace
from typing import Any

from posbias.plugins import load


class Required:
    """The default of an argument that has none: a config must give it."""

    def __repr__(self) -> str:
        return "REQUIRED"


REQUIRED = Required()


@dataclass(frozen=True)
class Argument:
    """One constructor argument (`models.<name>.args.<name>`).

    `schema` holds its JSON-schema constraints (type, enum, bounds); `description` joins them in the config's
    schema. `default` is the constructor's; the schema writes it into the loaded config only where
    `schema_default` is set (RankGPT's settings are read from the config; a torch ranker records its defaults
    in its checkpoint instead, so its config stays as written). `pretrained`: its value names a pretrained model
    or tokenizer (a hub id, a directory), which `posbias stage` fetches before jobs run offline."""

    name: str
    schema: dict[str, Any]
    description: str = ""
    default: Any = REQUIRED
    schema_default: bool = False
    pretrained: bool = False

    @property
    def required(self) -> bool:
        return self.default is REQUIRED

    def json_schema(self) -> dict[str, Any]:
        """The argument's entry in the config schema's `properties`."""
        entry = dict(self.schema)
        if self.schema_default and not self.required:
            entry["default"] = self.default
        if self.description:
            entry["description"] = self.description
        return entry

    def with_default(self, default: Any) -> "Argument":
        """The same argument with another ranker's default (the bi-encoder pools by the mean)."""
        return replace(self, default=default)


class Chunking(enum.Enum):
    """How a ranker cuts a document into the inputs of its backbone (`posbias.rankers.geometry`)."""

    FIRST_WINDOW = "first window"  # FirstP: one window, the rest of the document is never read
    OVERLAPPING_WINDOWS = "overlapping windows"  # windows of chunk_tokens every stride tokens
    DISJOINT_CHUNKS = "disjoint chunks"  # stride == chunk_tokens: every token read once
    ONE_SEQUENCE = "one sequence"  # chunk_tokens == stride == max_doc_tokens
    LISTWISE = "whole candidate lists"  # a language model reads a window of passages

    def refusal(self, ranker: str, chunk_tokens: int, stride: int, max_doc_tokens: int) -> str | None:
        """Why a geometry (`models.<name>.args`) does not fit this way of reading a document, or None. The config
        check (`posbias.config`) and the ranker's constructor both ask here."""
        if self is Chunking.FIRST_WINDOW and max_doc_tokens != chunk_tokens:
            return (f"{ranker} reads one chunk: max_doc_tokens ({max_doc_tokens}) must equal chunk_tokens "
                    f"({chunk_tokens}), or chunks would be encoded and ignored")
        if self is Chunking.ONE_SEQUENCE and not chunk_tokens == stride == max_doc_tokens:
            return (f"{ranker} reads the document in one sequence: chunk_tokens ({chunk_tokens}), stride ({stride}) "
                    f"and max_doc_tokens ({max_doc_tokens}) must be equal")
        if self is Chunking.DISJOINT_CHUNKS and stride != chunk_tokens:
            return (f"{ranker} reads greedy disjoint chunks: stride ({stride}) must equal chunk_tokens "
                    f"({chunk_tokens}); overlapping windows would put a document token into its token interactions "
                    f"more than once")
        return None


class InputTemplate(enum.Enum):
    """How a ranker lays out the tokens of one backbone input (`posbias.rankers.geometry.longest_input` counts
    its positions)."""

    CHUNK = "[CLS] query [SEP] window [SEP]"  # the chunked cross-encoders (`posbias.rankers.features`)
    PAIR = "the tokenizer's pair template"  # query and document as the tokenizer pairs them (RoBERTa: 4 specials)
    SINGLE = "each text in the tokenizer's single-text template"  # a bi-encoder: query and document apart

    @property
    def from_tokenizer(self) -> bool:
        """Whether the special tokens come from the tokenizer (the graph check loads it to count them)."""
        return self is not InputTemplate.CHUNK


@dataclass(frozen=True)
class RankerDeclaration:
    """A ranker by its registry name: `cls` is "module:Class", imported only by `load_class`; `chunking` and
    `template` say how it reads a document and lays out an input (the geometry checks read both)."""

    name: str
    family: str
    chunking: Chunking
    arguments: tuple[Argument, ...]
    cls: str
    template: InputTemplate = InputTemplate.CHUNK

    @property
    def listwise(self) -> bool:
        """Orders whole candidate lists through the language-model layer (`posbias.llm`): never trained."""
        return self.chunking is Chunking.LISTWISE

    @property
    def argument_names(self) -> frozenset[str]:
        return frozenset(a.name for a in self.arguments)

    def load_class(self) -> type:
        """The ranker's class, its module imported now."""
        return load(self.cls)
