"""What a dense encoder is made of (`EncoderSettings`): the config's `encoder` section, checked, and the fields an
index must agree on with the encoder that queries it."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Mapping

from posbias.errors import InputError
from posbias.settings import from_section

POOLINGS = ("cls", "mean")
HEADS = ("none", "ance")  # what runs on the pooled vector; `ance`: ANCE's projection and LayerNorm


@dataclass(frozen=True)
class EncoderSettings:
    """What an encoder is made of; the config's `encoder` section maps onto these fields."""

    model: str
    pooling: str = "cls"
    query_prefix: str = ""
    passage_prefix: str = ""
    max_query_tokens: int = 64
    max_passage_tokens: int = 512
    batch_size: int = 64
    device: str = "auto"
    trust_remote_code: bool = False
    head: str = "none"
    normalize: bool = True  # L2-normalise (cosine); false: the raw pooled vector (dot product)

    # Fields that change the vectors; an index must be queried with an encoder agreeing on all of them.
    VECTOR_FIELDS = ("model", "pooling", "head", "query_prefix", "passage_prefix", "max_query_tokens",
                     "max_passage_tokens", "normalize")

    def __post_init__(self):
        if self.pooling not in POOLINGS:
            raise InputError(f"encoder settings: pooling must be one of {POOLINGS}, got {self.pooling!r}")
        if self.head not in HEADS:
            raise InputError(f"encoder settings: head must be one of {HEADS}, got {self.head!r}")
        if self.head == "ance" and self.pooling != "cls":
            raise InputError(f"encoder settings: head 'ance' projects the CLS vector, so pooling must be 'cls', "
                             f"got {self.pooling!r}")
        for key in ("max_query_tokens", "max_passage_tokens", "batch_size"):
            if not isinstance(getattr(self, key), int) or getattr(self, key) < 1:
                raise InputError(f"encoder settings: {key} must be a positive integer, got {getattr(self, key)!r}")
        if not isinstance(self.normalize, bool):
            raise InputError(f"encoder settings: normalize must be true or false, got {self.normalize!r}")

    @classmethod
    def from_config(cls, section: Mapping) -> "EncoderSettings":
        return from_section(cls, section, "encoder settings")

    def vector_identity(self) -> dict:
        return {key: getattr(self, key) for key in self.VECTOR_FIELDS}
