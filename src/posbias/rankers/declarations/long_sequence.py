"""LongP (`posbias.rankers.long_sequence`): the whole document in one sequence of a long-context backbone."""

from __future__ import annotations

from posbias.rankers.declaration import Chunking, InputTemplate, RankerDeclaration
from posbias.rankers.declarations.base import CHUNK_ARGUMENTS

RANKERS = (RankerDeclaration("longp", "long sequence", Chunking.ONE_SEQUENCE, CHUNK_ARGUMENTS,
                             "posbias.rankers.long_sequence:LongP", InputTemplate.PAIR),)
