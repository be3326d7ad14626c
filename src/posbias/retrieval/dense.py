"""Dense encoder: a Hugging Face model that turns queries and passages into vectors.

Vectors are L2-normalised float32 by default, so an inner product is a cosine similarity; `normalize: false`
keeps the pooled vectors as the model makes them, for models scored by a raw dot product (the bias probes).
Texts are sorted by length into batches padded to the longest in the batch, and
returned in the caller's order: a text gets the same vector whatever its batch.
The network itself (plain backbone and pooling, ANCE head, or a sentence-transformers
model's own modules) comes from `posbias.retrieval.encoder_network`.
"""

from __future__ import annotations

import dataclasses
from typing import Mapping, Sequence

import numpy as np
import torch
from tqdm import tqdm

from posbias.device import autocast, autocast_dtype, dtype_name, pick_device
from posbias.errors import InputError
from posbias.retrieval.encoder_network import load_network
from posbias.retrieval.encoder_settings import EncoderSettings

SORT_BLOCK = 8192  # texts tokenised and sorted by length together: bounds the memory held by token ids


class DenseEncoder:
    """Encodes queries and passages into float32 vectors (one row per text), L2-normalised unless
    `normalize=False`."""

    def __init__(self, model: str, pooling: str = "cls", query_prefix: str = "", passage_prefix: str = "",
                 max_query_tokens: int = 64, max_passage_tokens: int = 512, batch_size: int = 64,
                 device: str = "auto", trust_remote_code: bool = False, head: str = "none", normalize: bool = True,
                 precision: str = "auto"):
        self.settings = EncoderSettings(model=model, pooling=pooling, query_prefix=query_prefix,
                                        passage_prefix=passage_prefix, max_query_tokens=max_query_tokens,
                                        max_passage_tokens=max_passage_tokens, batch_size=batch_size,
                                        device=device, trust_remote_code=trust_remote_code, head=head,
                                        normalize=normalize)
        self.device = pick_device(device)
        # auto: fp16 on CUDA only (an index's speed); on CPU, reduced precision is slow on most processors and changes
        # the vectors. fp32, fp16 and bf16 are explicit choices (the probes score in fp32, as their authors did).
        self.autocast_dtype = ((torch.float16 if self.device.type == "cuda" else None) if precision == "auto"
                               else autocast_dtype(self.device, precision))
        network = load_network(self.settings)
        self.tokenizer, self.dim, self._max_positions = network.tokenizer, network.dim, network.max_positions
        self.model = network.module.eval().to(self.device)
        self._check_lengths_fit()

    @classmethod
    def from_config(cls, section: Mapping) -> "DenseEncoder":
        """Build from a config section; unknown keys are an error that names them."""
        return cls(**dataclasses.asdict(EncoderSettings.from_config(section)))

    def numerics(self) -> dict:
        """Where and in which precision vectors are computed: the same text gets slightly different vectors in
        fp16 on a GPU and in fp32 on a CPU, so an index records it (a difference is worth a warning, no more)."""
        return {"device": self.device.type, "precision": dtype_name(self.autocast_dtype)}

    def encode_queries(self, texts: Sequence[str]) -> np.ndarray:
        prefix = self.settings.query_prefix
        return self._encode([prefix + text for text in texts], self.settings.max_query_tokens, progress=False)

    def encode_passages(self, texts: Sequence[str], progress: bool = True) -> np.ndarray:
        prefix = self.settings.passage_prefix
        return self._encode([prefix + text for text in texts], self.settings.max_passage_tokens, progress)

    def _check_lengths_fit(self) -> None:
        positions = self._max_positions
        for key in ("max_query_tokens", "max_passage_tokens"):
            if positions is not None and getattr(self.settings, key) > positions:
                raise InputError(f"encoder settings: {key}={getattr(self.settings, key)} exceeds the "
                                 f"{positions} positions of model {self.settings.model!r}")

    def _encode(self, texts: list[str], max_tokens: int, progress: bool) -> np.ndarray:
        vectors = np.empty((len(texts), self.dim), dtype=np.float32)
        with tqdm(total=len(texts), desc="encoding", unit="text", disable=not progress, mininterval=5) as bar:
            for start in range(0, len(texts), SORT_BLOCK):
                block = texts[start:start + SORT_BLOCK]
                vectors[start:start + len(block)] = self._encode_block(block, max_tokens, bar)
        return vectors

    def _encode_block(self, texts: list[str], max_tokens: int, bar: tqdm) -> np.ndarray:
        token_ids = self.tokenizer(texts, truncation=True, max_length=max_tokens, return_attention_mask=False,
                                   return_token_type_ids=False)["input_ids"]
        # Longest first: similar lengths share a batch (little padding), and memory trouble shows at once.
        order = sorted(range(len(texts)), key=lambda i: -len(token_ids[i]))
        vectors = np.empty((len(texts), self.dim), dtype=np.float32)
        for start in range(0, len(order), self.settings.batch_size):
            batch = order[start:start + self.settings.batch_size]
            vectors[batch] = self._encode_batch([token_ids[i] for i in batch])
            bar.update(len(batch))
        return vectors

    def _encode_batch(self, token_ids: list[list[int]]) -> np.ndarray:
        input_ids, attention_mask = self._pad(token_ids)
        with torch.inference_mode(), autocast(self.device, self.autocast_dtype):
            vectors = self.model(input_ids, attention_mask).float()
        if self.settings.normalize:
            vectors = torch.nn.functional.normalize(vectors, dim=-1)
        return vectors.cpu().numpy()

    def _pad(self, token_ids: list[list[int]]) -> tuple[torch.Tensor, torch.Tensor]:
        longest = max(len(ids) for ids in token_ids)
        pad_id = self.tokenizer.pad_token_id if self.tokenizer.pad_token_id is not None else 0  # masked anyway
        input_ids = torch.full((len(token_ids), longest), pad_id, dtype=torch.long)
        attention_mask = torch.zeros((len(token_ids), longest), dtype=torch.long)
        for row, ids in enumerate(token_ids):
            input_ids[row, :len(ids)] = torch.tensor(ids)
            attention_mask[row, :len(ids)] = 1
        return input_ids.to(self.device), attention_mask.to(self.device)
