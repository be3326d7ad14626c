"""A ranker posbias builds, trained (a checkpoint) or as its pretrained weights give it, as a `Scorer`: the study's
reranking (`posbias.scoring.reranking`), the sweep's, the bias probes and the audit score with it alike.

Pairs are scored `batch_size` at a time in the order given: callers sort them by document length so that each batch
pads to similar lengths, and only chunks holding document text are encoded. Documents come as token ids (the
study's token stores) or as text, tokenised here once per distinct text. The backbone may run under autocast;
scores come out of an fp32 head (see `ChunkRanker.forward`). In fp32 on the CPU its linear layers run through
oneDNN for the call (`posbias.rankers.onednn`). `seconds` adds up how long scoring took (featurisation and forward
passes, the token ids already read): part of a run's description, for the efficiency figure (the study's Figure 3).
"""

from __future__ import annotations

import time
from typing import Mapping, Sequence

import numpy as np
import torch
from tqdm import tqdm

from posbias.data.token_store import encode_documents
from posbias.device import autocast, autocast_dtype, dtype_name, fp32_matmuls, pick_device
from posbias.rankers.base import ChunkRanker
from posbias.rankers.compilation import compiled_backbone
from posbias.rankers.onednn import onednn_available, onednn_linears
from posbias.rankers.packing import set_packing
from posbias.scoring.protocol import Pair, Scorer, distinct, tokens_in

TokenPair = tuple[Sequence[int], Sequence[int]]  # (query token ids, document token ids)


class RankerScorer(Scorer):
    """A `ChunkRanker` with the tokenizer it reads with, on `device`; the backbone under autocast `precision`
    (auto, fp32, bf16, fp16: `posbias.device.autocast_dtype`). `tf32` lets a GPU's fp32 matrix products use TF32
    when scoring in fp32 (`posbias.device.fp32_matmuls`); `compile` compiles the backbone while it scores
    (`posbias.rankers.compilation`); `packing` packs the chunks' real tokens into one row (`posbias.rankers.packing`:
    auto on CUDA); `onednn` runs fp32 linear layers on a CPU through oneDNN (`posbias.rankers.onednn`: the same
    scores up to float rounding, about a fifth less CPU time on a long reranking).

    The study's reranking takes the defaults. The bias probes and the audit score a checkpoint as they always have,
    in full fp32 with the eager linear layers (`precision="fp32", tf32=False, onednn=False`): their scores do not
    move with a speed-up, and a scorer asked about one item at a time pays no oneDNN weight reorder per call."""

    def __init__(self, ranker: ChunkRanker, tokenizer, batch_size: int = 32, device: str = "auto",
                 precision: str = "auto", tf32: bool = True, compile: bool = False, packing: str | bool = "auto",
                 onednn: bool = True, progress: bool = True):
        self.ranker, self.tokenizer, self.precision = ranker, tokenizer, precision
        self.device = pick_device(device)
        self.dtype = autocast_dtype(self.device, precision)
        self.tf32, self.packing = tf32, packing
        self.matmuls, self.packed = self._prepare()
        self.chunker = ranker.featurizer(tokenizer)
        self.window = ranker.geometry.max_doc_tokens  # what its geometry reads of a document (FirstP: one chunk)
        self.batch_size, self.compile, self.progress = batch_size, compile, progress
        self.fused = onednn and not compile and onednn_available(self.device, self.dtype)
        self.seconds = 0.0
        self._ids: dict[str, list[int]] = {}  # token ids by document text: `score` and `truncated` share them

    def _prepare(self) -> tuple[str | None, bool]:
        """The ranker on its device in eval mode, chunk packing and the GPU's fp32 matrix products set as this scorer
        says: done again before each scoring, since the ranker (trained between two scorings, or read by another
        scorer) and torch's flags are shared. Returns the fp32 matrix product mode and whether chunks are packed."""
        matmuls = fp32_matmuls(self.device, self.dtype, self.tf32)
        packed = set_packing(self.ranker, self.packing, self.device)
        self.ranker.to(self.device).eval()
        return matmuls, packed

    @classmethod
    def from_checkpoint(cls, checkpoint: str, **settings) -> "RankerScorer":
        """The scorer of a checkpoint directory `posbias train` wrote (`posbias.rankers.checkpoint`), with the
        settings of `__init__` (by default the study's reranking: `precision` auto, bf16 autocast on a GPU)."""
        from posbias.rankers.checkpoint import load_checkpoint

        return cls(*load_checkpoint(checkpoint), **settings)

    def describe(self) -> dict:
        return {"ranker": self.ranker.registry_name, "backbone": self.ranker.backbone_name, "window": self.window}

    def run_info(self) -> dict:
        """How it scores, as a run's `<run>.json` records it: the device, the backbone's autocast dtype (or fp32), and
        on a GPU the fp32 matrix products and whether chunks are packed."""
        return {"device": str(self.device), "autocast": dtype_name(self.dtype),
                **({"fp32_matmul": self.matmuls} if self.matmuls else {}), **({"packed": True} if self.packed else {})}

    def count_tokens(self, text: str) -> int:
        return tokens_in(self.tokenizer, text)

    def truncated(self, documents: Sequence[str]) -> np.ndarray:
        return np.array([len(ids) > self.window for ids in self._document_ids(documents)], dtype=bool)

    def score(self, pairs: Sequence[Pair], metas: Sequence[Mapping] | None = None) -> np.ndarray:
        queries, query_rows = distinct([q for q, _ in pairs])
        query_ids = self.chunker.tokenize_queries(queries)
        doc_ids = [ids[:self.window] for ids in self._document_ids([d for _, d in pairs])]
        order = sorted(range(len(pairs)), key=lambda i: len(doc_ids[i]))  # similar lengths share a batch
        scores = np.empty(len(pairs), dtype=np.float64)
        scores[order] = self.score_token_pairs([(query_ids[query_rows[i]], doc_ids[i]) for i in order])
        return scores

    @torch.inference_mode()
    def score_token_pairs(self, pairs: Sequence[TokenPair]) -> np.ndarray:
        """The scores of (query token ids, document token ids) pairs, `batch_size` at a time in the order given. A
        pair is read from `pairs` only when its batch is scored, so a lazy sequence (documents read from a token
        store) keeps one batch in memory."""
        scores = np.empty(len(pairs), dtype=np.float64)
        if not pairs:
            return scores
        self._prepare()
        with compiled_backbone(self.ranker, self.compile), onednn_linears(self.ranker.encoder.backbone, self.fused):
            for start in tqdm(range(0, len(pairs), self.batch_size), desc=f"scoring with {self.ranker.registry_name}",
                              unit="batch", disable=not self.progress, mininterval=5):
                batch = [pairs[i] for i in range(start, min(start + self.batch_size, len(pairs)))]
                started = time.perf_counter()
                scores[start:start + len(batch)] = score_batch(self.ranker, self.chunker, batch, self.device,
                                                               self.dtype)
                self.seconds += time.perf_counter() - started
        return scores

    def _document_ids(self, documents: Sequence[str]) -> list[list[int]]:
        new = [text for text in dict.fromkeys(documents) if text not in self._ids]
        self._ids.update(zip(new, encode_documents(self.tokenizer, new)))
        return [self._ids[text] for text in documents]


@torch.inference_mode()
def score_batch(ranker: ChunkRanker, chunker, pairs: list[TokenPair], device: torch.device, dtype) -> list[float]:
    """The ranker's scores of one batch of (query token ids, document token ids) pairs, laid out by `chunker`
    (`ranker.featurizer(tokenizer)`); the backbone runs under autocast `dtype` (None: fp32)."""
    batch = chunker.batch(pairs)
    with autocast(device, dtype):
        return ranker(batch.to(device)).float().cpu().tolist()  # .cpu() waits for the device
