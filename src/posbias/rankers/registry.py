"""The ranker registry: names from the config map to ranker classes, through their declarations
(`posbias.rankers.declarations`); a ranker's module is imported only when it is built.

A ranker's constructor arguments are its config (`models.<name>.args`), as its declaration lists them;
unknown or missing arguments are an error, never silently defaulted. Chunk geometry is always explicit,
so FirstP and MaxP cannot drift apart through a hidden default. `build_ranker` records the arguments it
checked, with the declared defaults it filled in, as `ranker.args`: a checkpoint rebuilds the ranker from them.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Mapping

from posbias.errors import InputError
from posbias.rankers import catalog
from posbias.rankers.declaration import RankerDeclaration

if TYPE_CHECKING:
    from posbias.rankers.base import ChunkRanker

# The torch rankers by registry name (the listwise ones are not built here: `posbias.rankers.rankgpt`).
RANKERS: dict[str, RankerDeclaration] = {name: declaration for name, declaration in catalog.BY_NAME.items()
                                         if name in catalog.IMPLEMENTED}


def build_ranker(name: str, args: dict) -> "ChunkRanker":
    """Construct a registered ranker from its config arguments, strictly; `ranker.args` records them
    with the defaults of the arguments left out (what a checkpoint needs to rebuild it)."""
    if name not in RANKERS:
        raise InputError(f"unknown ranker {name!r}; registered: {sorted(RANKERS)}")
    declaration = RANKERS[name]
    required = {argument.name for argument in declaration.arguments if argument.required}
    unknown, missing = sorted(set(args) - declaration.argument_names), sorted(required - set(args))
    if unknown or missing:
        raise InputError(f"ranker {name!r}: unknown arguments {unknown}, missing arguments {missing}")
    cls = declaration.load_class()
    cls.registry_name, cls.declaration = name, declaration  # read while the ranker is built (its geometry checks)
    ranker = cls(**args)
    ranker.args = {argument.name: args.get(argument.name, argument.default) for argument in declaration.arguments}
    return ranker


def pretrained_ranker(model: Mapping) -> tuple["ChunkRanker", object]:
    """The ranker of a `models.<name>` block as its pretrained weights give it (no training), and the tokenizer it
    reads with: what a zero-shot model scores with."""
    from posbias.backbones import load_tokenizer

    ranker = build_ranker(model["ranker"], {k: v for k, v in model["args"].items() if k != "tokenizer"})
    tokenizer = load_tokenizer(tokenizer_name(model["args"]), bool(model["args"].get("trust_remote_code")))
    return ranker.eval(), tokenizer


def tokenizer_name(args: Mapping) -> str:
    """The tokenizer a ranker reads with: its backbone's, unless `args.tokenizer` names another (MOSAIC BERT
    ships none of its own and reads bert-base-uncased tokens)."""
    return args.get("tokenizer", args["backbone"])
